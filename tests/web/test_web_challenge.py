"""Hidden test answers (issue 39, scope 2, first part): ``kgqa web --hidden-gold DATASET=ID,...``
shows experiments on the dataset with aggregate scores only, and per-question outcomes for the
published questions. A crawl of every route, as a participant sees the server (a server
without accounts, and one with accounts, logged in as a participant), finds no gold answer or
gold query of an unpublished question."""

from __future__ import annotations

import html
import re

import httpx
import pytest

from kgqa.model import InputError

from kgqa.load import registry
from kgqa.store import Store
from kgqa.store.accounts import Accounts
from webcrawl import csrf_of, experiment_routes, finished, gold_values, leaks, login, site_routes
from webserver import WebServer

DEMO = registry.PACKAGE_DIR / "demo" / "data"


PASSWORDS = {"org": "organiser secret 1", "p1": "participant one 1", "p2": "participant two 2"}


def _accounts(store_path) -> None:
    with Store(store_path) as st:
        acc = Accounts(st)
        acc.add("org", "organiser", PASSWORDS["org"])
        for name in ("p1", "p2"):
            acc.add(name, "participant", PASSWORDS[name])


def _submit(c: httpx.Client, name: str) -> str:
    r = c.post("/new", data={"csrf": csrf_of(c.get("/new").text), "dataset": "demo", "profile": "kgqa", "kg": "demo",
                             "reexecute": "1"},
               files={"run_file": (f"{name}.json", (DEMO / "runs" / f"{name}.json").read_bytes(), "application/json")})
    assert r.status_code == 303, r.text[:500]
    return r.headers["location"].rsplit("/", 1)[1]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["local", "participant"])
def test_no_route_shows_a_participant_a_hidden_gold_value(tmp_path, mode):
    """``local``: a server without accounts, as anyone reaching it sees it; ``participant``: a
    server with accounts, crawled logged in as a participant (every GET route, the other
    participant's experiments, the organisers' pages and the POST routes it may try)."""
    published = {"1"}
    if mode == "participant":
        _accounts(tmp_path / "exp.sqlite")
    with WebServer(tmp_path / "exp.sqlite", tmp_path, "--hidden-gold", "demo=" + ",".join(published)) as srv, \
            httpx.Client(base_url=srv.base, timeout=60) as c, httpx.Client(base_url=srv.base, timeout=60) as other:
        if mode == "participant":
            login(c, "p1", PASSWORDS["p1"])
            login(other, "p2", PASSWORDS["p2"])
        ids = [_submit(c, name) for name in ("strong", "weak")]
        others = [_submit(other, "strong")] if mode == "participant" else []
        assert all(finished(c, eid)["status"] == "finished" for eid in ids)
        assert all(finished(other, eid)["status"] == "finished" for eid in others)
        hidden, qids = gold_values(srv.store, ids[0], published)
        assert len(hidden) > 20 and set(qids) > published
        routes = site_routes("demo", "kgqa", ids) + [f"/compare?e={ids[0]}&e={e}" for e in others]
        for eid in ids + others:
            routes += experiment_routes(eid, qids)
        pages = {url: c.get(url) for url in routes}
        csrf = csrf_of(pages["/new"].text)
        posts = {"/login": {"name": "p1", "password": "not the password"}, "/accounts": {"name": "p3", "password": "x" * 12},
                 "/leaderboard/demo/kgqa/freeze": {"action": "freeze"}, "/new": {"dataset": "demo"},
                 "/datasets/demo/publish": {"questions": "2"}}
        posts.update({f"/e/{eid}/rerun": {} for eid in others})
        for url, data in posts.items():
            pages["POST " + url] = c.post(url, data={"csrf": csrf, **data})
    assert leaks(pages, hidden) == []
    # what a participant does see: aggregate scores, the published question, refusals that say why
    page = pages[f"/e/{ids[0]}"].text
    assert pages[f"/e/{ids[0]}"].status_code == 200 and 'data-measure="F1"' in page and "hidden on this server" in page
    assert pages[f"/e/{ids[0]}/q/1"].status_code == 200
    assert f'href="/e/{ids[0]}/q/2"' not in page
    for url in (f"/e/{ids[0]}/q/2", f"/e/{ids[0]}/sections", f"/e/{ids[0]}/download/json",
                f"/compare?e={ids[0]}&e={ids[1]}", "/datasets/demo/audit"):
        assert pages[url].status_code == 403 and "hidden on this server" in pages[url].text, url
    board = pages["/leaderboard/demo/kgqa"]
    assert board.status_code == 200 and all(eid in board.text for eid in ids + others)
    if mode == "participant":  # another participant's experiments: as if absent; the organisers' pages: refused
        assert all(pages[u].status_code == 404 for e in others for u in experiment_routes(e, qids) if "/rerun" not in u)
        assert pages["POST " + f"/e/{others[0]}/rerun"].status_code == 404 and others[0] not in pages["/"].text
        assert pages["/audit"].status_code == 403 and pages["/accounts"].status_code == 403
        assert all(pages["POST " + u].status_code == 403 for u in ("/accounts", "/leaderboard/demo/kgqa/freeze",
                                                                    "/datasets/demo/publish"))
        assert pages["POST /login"].status_code == 401 and 'id="whoami"' in pages["/"].text


def test_hidden_gold_names_a_registry_dataset(tmp_path, capsys):
    from kgqa.cli import main

    with pytest.raises(SystemExit) as ex:
        main(["web", "--store", str(tmp_path / "s.sqlite"), "--hidden-gold", "no-such-set", "--port", "1"])
    assert ex.value.code == 2 and "registry dataset" in capsys.readouterr().err


def test_hidden_gold_ids_are_checked_and_a_question_publishes_its_every_unit(tmp_path, capsys):
    """A published id the dataset lacks (CK25's questions are ``ck25:1``, not ``1``) is refused
    with the id it may mean, instead of publishing nothing; a question's id publishes the ids
    of its scoring units (``ck25:1-en``), which the per-question tables list."""
    from kgqa.cli import main
    from kgqa.web.hidden import published_ids

    with pytest.raises(SystemExit) as ex:
        main(["web", "--store", str(tmp_path / "s.sqlite"), "--hidden-gold", "ck25=1", "--port", "1"])
    err = " ".join(capsys.readouterr().err.split())
    assert ex.value.code == 2 and "no question '1'" in err and "'ck25:1'" in err, err
    assert published_ids("ck25", ["ck25:1", " ck25:2-en ", ""]) == {"ck25:1-en", "ck25:2-en"}
    multilingual = published_ids("qald-9-test", ["99"])
    assert multilingual == {"99"}  # a dataset without per-language ids: the question is its unit
    with pytest.raises(InputError, match="no question 'ck25:9999'"):
        published_ids("ck25", ["ck25:9999"], "questions")


def test_a_frozen_leaderboard_ranks_what_came_before_and_closed_submissions_are_refused(tmp_path):
    """In process (the ASGI app through httpx): the board of a frozen dataset ranks the
    experiments created up to the freeze; a closed dataset takes no new experiment nor re-run."""
    import asyncio

    from sqlalchemy import text

    from kgqa.store import runner
    from kgqa.web.app import Settings, create_app

    st = Store(tmp_path / "exp.sqlite")
    ids = {}
    for name, created in (("strong", "2026-01-01T00:00:00+00:00"), ("weak", "2026-03-01T00:00:00+00:00")):
        res = runner.evaluate_inputs(runner.ExperimentInputs(dataset="demo", run=str(DEMO / "runs" / f"{name}.json"),
                                                             run_name=name))
        sha = st.put_file((DEMO / "runs" / f"{name}.json").read_bytes())
        eid = ids[name] = st.create(dataset="demo", run_name=name, profile="kgqa", run_file=sha,
                                    run_filename=f"{name}.json")
        st.finish(eid, res.evaluation, headline=res.headline)
        with st.engine.begin() as c:
            c.execute(text("UPDATE experiments SET created = :t WHERE id = :i"), {"t": created, "i": eid})
    settings = Settings(resume=False, allowed_hosts=["testserver"], frozen={"demo": "2026-02-01T00:00:00+00:00"},
                        closed={"demo": "2026-02-01T00:00:00+00:00"})
    app = create_app(st, settings)

    async def visit():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as c:
            board = await c.get("/leaderboard/demo/kgqa")
            csrf = re.search(r'name="csrf" value="([^"]+)"', (await c.get("/new")).text).group(1)
            new = await c.post("/new", data={"csrf": csrf, "dataset": "demo", "profile": "kgqa"},
                               files={"run_file": ("strong.json", (DEMO / "runs" / "strong.json").read_bytes(),
                                                   "application/json")})
            rerun = await c.post(f"/e/{ids['weak']}/rerun", data={"csrf": csrf})
            return board, new, rerun

    board, new, rerun = asyncio.run(visit())
    assert board.status_code == 200 and "Frozen at 2026-02-01T00:00:00+00:00" in board.text
    assert f"/e/{ids['strong']}" in board.text and f"/e/{ids['weak']}" not in board.text
    assert new.status_code == 400 and "submissions on demo closed at 2026-02-01T00:00:00+00:00" in html.unescape(new.text)
    assert rerun.status_code == 403 and "submissions on demo closed" in html.unescape(rerun.text)
    assert st.count() == 2
