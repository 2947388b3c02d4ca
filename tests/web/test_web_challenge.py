"""Hidden test answers (issue 39, scope 2, first part): ``kgqa web --hidden-gold DATASET=ID,...``
shows experiments on the dataset with aggregate scores only, and per-question outcomes for the
published questions. A crawl of every route, as a participant sees the server, finds no gold
answer or gold query of an unpublished question."""

from __future__ import annotations

import html
import json
import re

import httpx
import pytest

from kgqa.load import registry
from kgqa.store import Store
from kgqa.store.export import FORMATS
from kgqa.web.views import Views
from waiting import wait_until
from webserver import WebServer

DEMO = registry.PACKAGE_DIR / "demo" / "data"


def _finished(c: httpx.Client, eid: str) -> dict:
    def ended() -> dict | None:
        s = c.get(f"/e/{eid}/status.json").json()
        return s if s["status"] in ("finished", "failed") else None

    return wait_until(ended, timeout=180, every=0.1, what=f"{eid} finished or failed")


def _gold(store_path, eid: str, published: set[str]) -> tuple[set[str], list[str]]:
    """The gold answers and queries of the unpublished questions (values of 5 characters or
    more but ``false``: a short number or a boolean occurs on any page), and every question id."""
    with Store(store_path) as st:
        e = st.get(eid)
        views = Views(st)
        qids = [q.id for q in e.evaluation().questions]
        shown, hidden = set(), set()
        for qid in qids:
            q = views.question(e, qid)
            values = {v for v in (q["gold_answer"] or []) if len(v) >= 5 and v != "false"}
            if q["gold_sparql"]:
                values.add(q["gold_sparql"].strip())
            (shown if qid in published else hidden).update(values)
    return hidden - shown, qids


@pytest.mark.slow
def test_no_route_shows_a_participant_a_hidden_gold_value(tmp_path):
    published = {"1"}
    with WebServer(tmp_path / "exp.sqlite", tmp_path, "--hidden-gold", "demo=" + ",".join(published)) as srv, \
            httpx.Client(base_url=srv.base, timeout=60) as c:
        csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/new").text).group(1)
        ids = []
        for name in ("strong", "weak"):
            r = c.post("/new", data={"csrf": csrf, "dataset": "demo", "profile": "kgqa", "kg": "demo", "reexecute": "1"},
                       files={"run_file": (f"{name}.json", (DEMO / "runs" / f"{name}.json").read_bytes(),
                                           "application/json")})
            assert r.status_code == 303, r.text[:500]
            ids.append(r.headers["location"].rsplit("/", 1)[1])
        assert all(_finished(c, eid)["status"] == "finished" for eid in ids)
        hidden, qids = _gold(srv.store, ids[0], published)
        assert len(hidden) > 20 and set(qids) > published
        routes = ["/", "/new", "/leaderboards", "/leaderboard/demo/kgqa", "/datasets", "/datasets/demo",
                  "/datasets/demo/audit", "/compare", f"/compare?e={ids[0]}&e={ids[1]}", "/nowhere"]
        for eid in ids:
            routes += [f"/e/{eid}", f"/e/{eid}/status.json", f"/e/{eid}/sections", f"/e/{eid}/file/dataset",
                       f"/e/{eid}/file/kg", f"/e/{eid}/q/nowhere"]
            routes += [f"/e/{eid}/download/{fmt}" for fmt in FORMATS]
            routes += [f"/e/{eid}/q/{qid}" for qid in qids]
        pages = {url: c.get(url) for url in routes}
    leaks = [(url, v[:60]) for url, r in pages.items() for v in hidden
             if v in r.text or html.escape(v) in r.text or json.dumps(v)[1:-1] in r.text]
    assert leaks == []
    # what a participant does see: aggregate scores, the published question, refusals that say why
    page = pages[f"/e/{ids[0]}"].text
    assert pages[f"/e/{ids[0]}"].status_code == 200 and 'data-measure="F1"' in page and "hidden on this server" in page
    assert pages[f"/e/{ids[0]}/q/1"].status_code == 200
    assert f'href="/e/{ids[0]}/q/2"' not in page
    for url in (f"/e/{ids[0]}/q/2", f"/e/{ids[0]}/sections", f"/e/{ids[0]}/download/json",
                f"/compare?e={ids[0]}&e={ids[1]}", "/datasets/demo/audit"):
        assert pages[url].status_code == 403 and "hidden on this server" in pages[url].text, url
    assert pages["/leaderboard/demo/kgqa"].status_code == 200 and ids[0] in pages["/leaderboard/demo/kgqa"].text


def test_hidden_gold_names_a_registry_dataset(tmp_path, capsys):
    from kgqa.cli import main

    with pytest.raises(SystemExit) as ex:
        main(["web", "--store", str(tmp_path / "s.sqlite"), "--hidden-gold", "no-such-set", "--port", "1"])
    assert ex.value.code == 2 and "registry dataset" in capsys.readouterr().err


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
