"""Accounts on the web platform (issue 39, scope 1), in process (the ASGI app through httpx; the
upload checker and the job queue stubbed: what is tested is who may do what): the login wall,
participants who see only their own experiments, organisers who see all, the audit log,
quotas, throttled logins, sessions that end at logout, cookies' flags, and a store without
accounts served exactly as before."""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from conftest import run_cli
from kgqa.load import registry
from kgqa.store import Store, runner
from kgqa.store import accounts as store_accounts
from kgqa.store.accounts import Accounts
from kgqa.web.accounts import Throttle
from kgqa.web.app import Settings, create_app

DEMO = registry.PACKAGE_DIR / "demo" / "data"
PASSWORDS = {"org": "organiser secret 1", "alice": "alice's secret 1", "bob": "bob's secret 12"}


async def _no_check(job) -> None:
    return None


def _app(store: Store, **settings):
    app = create_app(store, Settings(resume=False, allowed_hosts=["testserver"], **settings))
    web = app.state.web
    web.checker.check = _no_check  # the upload is the demo's strong run: read elsewhere
    web.jobs.submit = lambda eid, **kw: web.submitted.append(eid)
    web.submitted = []
    return app


def _client(app, base: str = "http://testserver") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base)


def _csrf(text: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', text).group(1)


async def _login(c: httpx.AsyncClient, name: str, password: str | None = None, next_: str = "/") -> httpx.Response:
    csrf = _csrf((await c.get("/login")).text)
    return await c.post("/login", data={"csrf": csrf, "name": name, "password": password or PASSWORDS[name],
                                        "next": next_})


async def _submit(c: httpx.AsyncClient, name: str = "run") -> httpx.Response:
    csrf = _csrf((await c.get("/new")).text)
    return await c.post("/new", data={"csrf": csrf, "dataset": "demo", "profile": "kgqa", "run_name": name},
                        files={"run_file": ("strong.json", (DEMO / "runs" / "strong.json").read_bytes(),
                                            "application/json")})


@pytest.fixture(autouse=True)
def _cheap_hashes(monkeypatch):
    """argon2id at its cheapest (the tests' many logins; the parameters are argon2-cffi's own
    concern): a real ``kgqa web`` hashes with the library's defaults."""
    from argon2 import PasswordHasher

    monkeypatch.setattr(store_accounts, "HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))


@pytest.fixture
def store(tmp_path):
    st = Store(tmp_path / "exp.sqlite")
    acc = Accounts(st)
    acc.add("org", "organiser", PASSWORDS["org"])
    for name in ("alice", "bob"):
        acc.add(name, "participant", PASSWORDS[name])
    yield st
    st.close()


def _finished(st: Store, name: str, submitter: str) -> str:
    res = runner.evaluate_inputs(runner.ExperimentInputs(dataset="demo", run=str(DEMO / "runs" / f"{name}.json"),
                                                         run_name=name))
    sha = st.put_file((DEMO / "runs" / f"{name}.json").read_bytes())
    eid = st.create(dataset="demo", run_name=name, profile="kgqa", run_file=sha, run_filename=f"{name}.json",
                    submitter=submitter)
    st.finish(eid, res.evaluation, headline=res.headline)
    return eid


@pytest.mark.slow  # two evaluations and a leaderboard's tests: about 8 s
def test_participants_see_their_own_experiments_and_organisers_all(store):
    alice_e, bob_e = _finished(store, "strong", "alice"), _finished(store, "weak", "bob")
    app = _app(store)

    async def visit():
        async with _client(app) as anon, _client(app) as alice, _client(app) as bob, _client(app) as org:
            out = {"anon_home": await anon.get("/"), "anon_board": await anon.get("/leaderboard/demo/kgqa"),
                   "anon_post": await anon.post("/new", data={"csrf": "x"}),
                   "anon_e": await anon.get(f"/e/{alice_e}/status.json")}
            for c, name in ((alice, "alice"), (bob, "bob"), (org, "org")):
                out[f"{name}_login"] = await _login(c, name)
            out["alice_home"] = await alice.get("/")
            out["alice_own"] = await alice.get(f"/e/{alice_e}")
            for path in (f"/e/{bob_e}", f"/e/{bob_e}/status.json", f"/e/{bob_e}/download/json",
                         f"/e/{bob_e}/file/run", f"/e/{bob_e}/q/1", f"/e/{bob_e}/sections",
                         f"/compare?e={alice_e}&e={bob_e}", "/audit", "/accounts"):
                out["alice " + path] = await alice.get(path)
            out["alice_rerun_bob"] = await alice.post(f"/e/{bob_e}/rerun", data={"csrf": _csrf(out["alice_home"].text)})
            out["alice_board"] = await alice.get("/leaderboard/demo/kgqa")
            out["alice_compare"] = await alice.get("/compare")
            out["org_home"] = await org.get("/")
            out["org_bob"] = await org.get(f"/e/{bob_e}/download/json")
            out["org_audit"] = await org.get("/audit")
            return out

    r = asyncio.run(visit())
    # anonymous: the login page for anything but the leaderboards; a POST is refused outright
    assert r["anon_home"].status_code == 303 and r["anon_home"].headers["location"] == "/login?next=%2F"
    assert r["anon_board"].status_code == 200 and alice_e in r["anon_board"].text
    assert r["anon_post"].status_code == 401 and r["anon_e"].status_code == 303
    for name in ("alice", "bob", "org"):
        assert r[f"{name}_login"].status_code == 303
    # a participant: its own experiment, none of another's (404: as if absent), the public board
    assert alice_e in r["alice_home"].text and bob_e not in r["alice_home"].text
    assert r["alice_own"].status_code == 200 and 'id="whoami" data-role="participant"' in r["alice_own"].text
    for path in (f"/e/{bob_e}", f"/e/{bob_e}/status.json", f"/e/{bob_e}/download/json", f"/e/{bob_e}/file/run",
                 f"/e/{bob_e}/q/1", f"/e/{bob_e}/sections", f"/compare?e={alice_e}&e={bob_e}"):
        assert r["alice " + path].status_code == 404, path
    assert r["alice /audit"].status_code == 403 and r["alice /accounts"].status_code == 403
    assert r["alice_rerun_bob"].status_code == 404 and store.count() == 2
    assert alice_e in r["alice_board"].text and bob_e in r["alice_board"].text
    assert alice_e in r["alice_compare"].text and bob_e not in r["alice_compare"].text
    # an organiser: everything, and the audit log of the logins
    assert alice_e in r["org_home"].text and bob_e in r["org_home"].text and r["org_bob"].status_code == 200
    assert 'href="/audit"' in r["org_home"].text
    audit = r["org_audit"].text
    assert r["org_audit"].status_code == 200 and audit.count('data-action="login"') == 3


def test_submissions_belong_to_their_submitter_are_audited_and_quotas_hold(store):
    app = _app(store, quota_per_day=2)

    async def visit():
        async with _client(app) as alice, _client(app) as org:
            await _login(alice, "alice")
            await _login(org, "org")
            subs = [await _submit(alice, f"a{i}") for i in range(3)]
            rerun = await alice.post(subs[0].headers["location"] + "/rerun",
                                     data={"csrf": _csrf((await alice.get("/")).text)})
            form = await alice.get("/new")
            org_subs = [await _submit(org, f"o{i}") for i in range(3)]
            audit = await org.get("/audit")
            return subs, rerun, form, org_subs, audit

    subs, rerun, form, org_subs, audit = asyncio.run(visit())
    assert [s.status_code for s in subs] == [303, 303, 429]
    said = html.unescape(subs[2].text)
    assert "alice has used its 2 submissions of today (UTC); the quota resets at" in said
    assert rerun.status_code == 429 and "2 submissions of today" in html.unescape(rerun.text)
    assert "2 submissions of today" in html.unescape(form.text)  # said on the form before a file is chosen
    assert [s.status_code for s in org_subs] == [303] * 3  # organisers have no quota
    assert store.count(submitter="alice") == 2 and store.count(submitter="org") == 3
    assert len(app.state.web.submitted) == 5
    assert audit.text.count('data-action="submit"') == 5
    eid = subs[0].headers["location"].rsplit("/", 1)[1]
    assert store.get(eid).submitter == "alice" and f'href="/e/{eid}"' in audit.text


def test_quota_total(store):
    app = _app(store, quota_total=1)

    async def visit():
        async with _client(app) as bob:
            await _login(bob, "bob")
            return [await _submit(bob) for _ in range(2)]

    subs = asyncio.run(visit())
    assert [s.status_code for s in subs] == [303, 429]
    assert "bob has used all 1 submissions this challenge allows" in html.unescape(subs[1].text)


def test_logins_are_throttled_checked_for_csrf_and_end_at_logout(store, tmp_path):
    app = _app(store)
    app.state.web.throttle = Throttle(per_name=2, per_client=100)

    async def visit():
        async with _client(app) as c:
            no_csrf = await c.post("/login", data={"name": "alice", "password": PASSWORDS["alice"]})
            wrong = [await _login(c, "alice", "not the password") for _ in range(2)]
            locked = await _login(c, "alice")  # the right password, but too soon
            other = await _login(c, "bob", next_="//evil.example/x")  # another name: not locked; no open redirect
            cookie = other.headers["set-cookie"]
            token = re.search(r"kgqa_login_\w+=([^;]+)", cookie).group(1)
            home = await c.get("/")
            logout = await c.post("/logout", data={"csrf": _csrf(home.text)})
            after = await c.get("/")
        async with _client(app) as replay:  # the old session's cookie, replayed: ended
            replay.cookies.set(re.search(r"(kgqa_login_\w+)=", cookie).group(1), token)
            replayed = await replay.get("/")
        return no_csrf, wrong, locked, other, cookie, home, logout, after, replayed

    no_csrf, wrong, locked, other, cookie, home, logout, after, replayed = asyncio.run(visit())
    assert no_csrf.status_code == 403
    assert [w.status_code for w in wrong] == [401, 401] and "wrong name or password" in wrong[0].text
    assert "not the password" not in wrong[0].text
    assert locked.status_code == 429 and "too many failed logins" in locked.text and int(locked.headers["retry-after"]) > 0
    assert other.status_code == 303 and other.headers["location"] == "/"
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    assert home.status_code == 200 and 'id="whoami"' in home.text
    assert logout.status_code == 303 and "Max-Age=0" in logout.headers["set-cookie"]
    assert after.status_code == 303 and replayed.status_code == 303
    acc = Accounts(store)
    actions = [r["action"] for r in acc.log_page()]
    assert actions.count("login-failed") == 2 and actions[:2] == ["logout", "login"]
    # the password is never stored (argon2id hashes only) nor logged
    db = Path(store.url.split("///", 1)[1])
    data = b"".join(f.read_bytes() for f in db.parent.glob(db.name + "*"))  # the database and its WAL
    for p in PASSWORDS.values():
        assert p.encode() not in data
    with store.engine.connect() as conn:
        hashes = [h for (h,) in conn.execute(text("SELECT password FROM accounts"))]
    assert len(hashes) == 3 and all(h.startswith("$argon2id$") for h in hashes)


def test_the_login_cookie_is_secure_over_https(store):
    app = create_app(store, Settings(resume=False, allowed_hosts=["testserver"]))

    async def visit():
        async with _client(app, "https://testserver") as c:
            return await _login(c, "alice")

    r = asyncio.run(visit())
    assert r.status_code == 303 and "; Secure" in r.headers["set-cookie"]


def test_organisers_add_participants_freeze_leaderboards_and_publish_questions(store):
    eid = _finished(store, "strong", "carol")
    app = _app(store, hidden_gold={"demo": frozenset({"1"})})

    async def visit():
        async with _client(app) as org, _client(app) as carol:
            await _login(org, "org")
            csrf = _csrf((await org.get("/accounts")).text)
            short = await org.post("/accounts", data={"csrf": csrf, "name": "carol", "password": "short"})
            added = await org.post("/accounts", data={"csrf": csrf, "name": "carol", "password": "carol's secret"})
            carol_in = await _login(carol, "carol", "carol's secret")
            freeze = await org.post("/leaderboard/demo/kgqa/freeze", data={"csrf": csrf, "action": "freeze"})
            board = await carol.get("/leaderboard/demo/kgqa")
            carol_csrf = _csrf(board.text)
            carol_freeze = await carol.post("/leaderboard/demo/kgqa/freeze", data={"csrf": carol_csrf, "action": "unfreeze"})
            org_board = await org.get("/leaderboard/demo/kgqa")
            before = await carol.get(f"/e/{eid}/q/2")
            carol_publish = await carol.post("/datasets/demo/publish", data={"csrf": carol_csrf, "questions": "3"})
            typo = await org.post("/datasets/demo/publish", data={"csrf": csrf, "questions": "2, q9999"})
            publish = await org.post("/datasets/demo/publish", data={"csrf": csrf, "questions": "2, 2 1"})
            after = {q: await carol.get(f"/e/{eid}/q/{q}") for q in ("2", "3")}
            dataset = await carol.get("/datasets/demo")
            return short, added, carol_in, freeze, board, carol_freeze, org_board, before, carol_publish, publish, after, dataset, typo

    (short, added, carol_in, freeze, board, carol_freeze, org_board, before, carol_publish, publish, after,
     dataset, typo) = asyncio.run(visit())
    assert short.status_code == 400 and "at least 10 characters" in short.text
    assert added.status_code == 200 and 'data-account="carol"' in added.text
    assert carol_in.status_code == 303 and Accounts(store).get("carol").role == "participant"
    assert freeze.status_code == 303 and "demo" in Accounts(store).frozen()
    assert board.status_code == 200 and 'id="frozen"' in board.text and eid in board.text
    assert 'id="freeze-form"' not in board.text and carol_freeze.status_code == 403
    assert 'id="unfreeze"' in org_board.text
    # publishing a question's outcomes: organisers only; the participant then sees it, and only it
    assert before.status_code == 403 and carol_publish.status_code == 403 and publish.status_code == 303
    # an id the dataset lacks: refused, naming it (nothing of the form published)
    assert typo.status_code == 400 and "no question &#39;q9999&#39;" in typo.text, typo.text[-600:]
    assert after["2"].status_code == 200 and after["3"].status_code == 403
    assert Accounts(store).published("demo") == {"2"} and "1, 2." in dataset.text
    actions = {r["action"]: r for r in Accounts(store).log_page()}
    assert actions["freeze"]["account"] == "org" and actions["freeze"]["target"] == "demo"
    assert actions["publish"]["detail"] == "2" and actions["account-add"]["target"] == "carol"


def test_a_store_without_accounts_serves_one_local_user_as_before(tmp_path):
    st = Store(tmp_path / "exp.sqlite")
    eid = _finished(st, "strong", "")
    app = _app(st)

    async def visit():
        async with _client(app) as c:
            return {p: await c.get(p) for p in ("/", f"/e/{eid}", "/login", "/audit", "/accounts")}, await _submit(c)

    pages, sub = asyncio.run(visit())
    assert pages["/"].status_code == 200 and eid in pages["/"].text
    assert 'id="whoami"' not in pages["/"].text and "Log in" not in pages["/"].text
    assert pages[f"/e/{eid}"].status_code == 200
    assert all(pages[p].status_code == 404 for p in ("/login", "/audit", "/accounts"))
    assert sub.status_code == 303 and st.get(sub.headers["location"].rsplit("/", 1)[1]).submitter is None


def test_users_cli_adds_lists_and_refuses(tmp_path, capsys, monkeypatch):
    import io

    path = str(tmp_path / "s.sqlite")
    monkeypatch.setattr("sys.stdin", io.StringIO("a long enough password\n"))
    assert run_cli(capsys, "web", "users", "add", "org", "--role", "organiser", "--store", path,
                   "--password-stdin")[0] == 0
    code, generated, _ = run_cli(capsys, "web", "users", "add", "team1", "--store", path, "--generate")
    generated = generated.strip()
    code, listed, _ = run_cli(capsys, "web", "users", "list", "--store", path)
    assert code == 0 and "org\torganiser" in listed and "team1\tparticipant" in listed
    with Store(path) as st:
        acc = Accounts(st)
        assert acc.verify("team1", generated) is not None and acc.verify("org", "a long enough password").organiser
    for args, said in ((["web", "users", "add", "org", "--store", path, "--generate"], "exists already"),
                       (["web", "users", "add", "bad name", "--store", path, "--generate"], "account name"),
                       (["web", "users", "remove", "nobody", "--store", path], "no such account")):
        code, _, err = run_cli(capsys, *args)
        assert code == 2 and said in err


def test_participants_submit_live_systems_under_the_url_rules(store):
    app = _app(store, allow_system_urls=True, allowed_url_hosts=["127.0.0.1"])

    async def visit():
        async with _client(app) as alice:
            await _login(alice, "alice")
            csrf = _csrf((await alice.get("/new")).text)
            out = []
            for url in ("http://127.0.0.1:9/qa", "http://10.0.0.1/qa"):  # listed loopback; a private address
                out.append(await alice.post("/new", data={"csrf": csrf, "dataset": "demo", "profile": "kgqa",
                                                          "system_url": url, "system_protocol": "gerbil"}))
            page = await alice.get(out[0].headers["location"])
            return out, page

    (ok, private), page = asyncio.run(visit())
    assert ok.status_code == 303 and private.status_code == 400 and "10.0.0.1" in html.unescape(private.text)
    e = store.get(ok.headers["location"].rsplit("/", 1)[1])
    assert e.submitter == "alice" and e.system_url == "http://127.0.0.1:9/qa"
    assert 'id="submitter">alice<' in page.text


def test_a_server_reachable_from_other_machines_needs_a_token_or_accounts():
    from kgqa.model import InputError
    from kgqa.web.serve import check_binding, host_warning

    with pytest.raises(InputError, match="add accounts"):
        check_binding("0.0.0.0", None)
    check_binding("0.0.0.0", None, accounts=True)
    check_binding("127.0.0.1", None)
    assert "TLS" in host_warning("0.0.0.0", None, accounts=True)
    assert host_warning("127.0.0.1", None, accounts=True) is None
