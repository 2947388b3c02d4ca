"""The web platform's edge (issue 23), over HTTP against real ``kgqa web`` processes on free
loopback ports: the Host allow-list (DNS rebinding), origin checks and the server-signed CSRF
token, cookies per port, the token link, security headers on every response (errors too),
which URLs the server may ask, compression bombs, web wording and the escaped Markdown export.
(The HTML report's CSP: test_web_routes.py, on its server's demo experiment; the same attacks in
a real Chromium: test_web_browser_security.py.)"""

from __future__ import annotations

import gzip
import re
import socket
import sqlite3
from contextlib import contextmanager

import httpx
import pytest

from kgqa.load import registry
from kgqa.store import Store
from waiting import wait_until
from webserver import Listener, WebServer

pytestmark = pytest.mark.xdist_group("web-security")

DEMO = registry.PACKAGE_DIR / "demo" / "data"
HEADERS = ("x-content-type-options", "x-frame-options", "referrer-policy", "content-security-policy")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("websec")
    with WebServer(tmp / "exp.sqlite", tmp, "--allowed-host", "kgqa.example.org", "--allow-system-urls",
                   "--max-unpacked-mb", "5") as srv:
        yield srv


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """A second server with no flags (its own store and port), shared by the tests that need one."""
    tmp = tmp_path_factory.mktemp("websec-plain")
    with WebServer(tmp / "plain.sqlite", tmp) as srv:
        yield srv


@contextmanager
def session(srv):
    """A client with the session cookie and the form token of the server's own form."""
    with httpx.Client(base_url=srv.base, timeout=60) as c:
        c.csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/new").text).group(1)
        yield c


def run_file(name: str = "weak"):
    return {"run_file": (f"{name}.json", (DEMO / "runs" / f"{name}.json").read_bytes(), "application/json")}


def post_new(c, files=None, headers=None, **fields):
    data = {"csrf": c.csrf, "dataset": "demo", "profile": "kgqa", **fields}
    return c.post("/new", data=data, files=files if files is not None else run_file(), headers=headers or {})


def ended(c, page: str, timeout: float = 120.0) -> None:
    """Wait until the experiment at ``page`` has finished or failed."""
    wait_until(lambda: c.get(page + "/status.json").json()["status"] in ("finished", "failed"), timeout=timeout,
               every=0.1, what=f"{page} finished or failed")


def error_text(page: str) -> str:
    import html

    m = re.search(r'id="error"[^>]*>(.*?)</p>', page, re.S)
    assert m, page[:1500]
    return html.unescape(m.group(1))


def secured(r: httpx.Response) -> bool:
    return all(h in r.headers for h in HEADERS) and r.headers["x-frame-options"] == "DENY"


def n_experiments(srv) -> int:
    with Store(srv.store) as st:
        return len(st.list())




# --------------------------------------------------------------------------- Host allow-list


def test_host_allow_list_refuses_rebound_names(server):
    port = server.port
    with httpx.Client(base_url=server.base, timeout=30) as c:
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", f"localhost.:{port}x",
                     "", f"user@127.0.0.1:{port}"):
            r = c.get("/", headers={"Host": host})
            assert r.status_code == 421, (host, r.status_code)
            assert secured(r) and "DNS rebinding" in error_text(r.text)
            assert "<tr data-status" not in r.text
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "LOCALHOST", f"kgqa.example.org:{port}",
                     "kgqa.example.org"):
            assert c.get("/", headers={"Host": host}).status_code == 200, host
        # state-changing requests too, before anything is read
        r = c.post("/new", headers={"Host": f"evil.example:{port}"}, data={"csrf": "x"})
        assert r.status_code == 421


# --------------------------------------------------------------------------- CSRF and origins


def test_csrf_token_is_signed_by_the_server_and_bound_to_the_session(server):
    port = server.port
    with session(server) as c:
        sid = c.cookies.get(f"kgqa_session_{port}")
        assert sid and c.csrf != sid and len(c.csrf) >= 40
        before = n_experiments(server)
        # the old double-submit bypass: an attacker-chosen value in cookie and field
        forged = "A" * 43
        with httpx.Client(base_url=server.base, timeout=30, cookies={f"kgqa_session_{port}": forged}) as other:
            r = other.post("/new", data={"csrf": forged, "dataset": "demo", "profile": "kgqa"}, files=run_file())
            assert r.status_code == 403 and "CSRF" in error_text(r.text) and secured(r)
        # a real token of another session does not fit this session
        with session(server) as other:
            r = other.post("/new", data={"csrf": c.csrf, "dataset": "demo", "profile": "kgqa"}, files=run_file())
            assert r.status_code == 403
        # no cookie at all
        with httpx.Client(base_url=server.base, timeout=30) as bare:
            assert bare.post("/new", data={"csrf": c.csrf, "dataset": "demo"}, files=run_file()).status_code == 403
        assert n_experiments(server) == before
        # the right token from this session's own page works
        r = post_new(c, headers={"Origin": server.base, "Referer": server.base + "/new"})
        assert r.status_code == 303, r.text[:500]


def test_state_changing_requests_from_another_origin_are_refused(server):
    with session(server) as c:
        before = n_experiments(server)
        for headers in ({"Origin": "http://evil.example"}, {"Origin": f"http://127.0.0.1:{server.port + 1}"},
                        {"Origin": "null"}, {"Referer": "http://evil.example/attack.html"},
                        {"Origin": f"https://127.0.0.1:{server.port}"}):
            r = post_new(c, headers=headers)
            assert r.status_code == 403, headers
            assert "refused" in error_text(r.text) and secured(r)
        assert n_experiments(server) == before


def test_cookies_are_per_port_strict_and_http_only(server, plain):
    with httpx.Client(base_url=server.base, timeout=30) as c:
        cookie = c.get("/").headers["set-cookie"]
    assert cookie.startswith(f"kgqa_session_{server.port}=")
    assert "SameSite=Strict" in cookie and "HttpOnly" in cookie
    # a second server on the same host does not clobber the first one's session
    with session(server) as c:
        assert c.get(plain.base + "/").status_code == 200
        assert {k for k in c.cookies.keys()} >= {f"kgqa_session_{server.port}", f"kgqa_session_{plain.port}"}
        assert post_new(c).status_code == 303


# --------------------------------------------------------------------------- the token


@pytest.mark.slow  # two servers one after the other; the README's command keeps test_web_routes.py::test_token_guards_every_page (the token guards, the cookie carries the session and never holds the token) and the cookie tests here
def test_a_fresh_token_link_wins_and_the_cookie_never_holds_the_token(tmp_path):
    store = tmp_path / "exp.sqlite"
    srv = WebServer(store, tmp_path, "--token", "old-secret").start()
    try:
        with httpx.Client(base_url=srv.base, timeout=30) as c:
            r = c.get("/?token=old-secret")
            assert r.status_code == 200
            auth = c.cookies.get(f"kgqa_auth_{srv.port}")
            assert auth and "old-secret" not in auth and "old-secret" not in r.headers["set-cookie"]
            assert c.get("/leaderboards").status_code == 200  # the cookie carries the session
            r = c.get("/", params={"token": "wrong"})
            assert r.status_code == 401 and secured(r)
            srv.stop()
            srv = WebServer(store, tmp_path, "--token", "new-secret", port=srv.port).start()
            r = c.get("/leaderboards")  # the old cookie: a new server, a new secret
            assert r.status_code == 401 and secured(r)
            assert "token" in error_text(r.text)
            assert c.get("/?token=new-secret").status_code == 200  # the fresh link wins over the old cookie
            assert c.get("/leaderboards").status_code == 200
    finally:
        srv.stop()


# --------------------------------------------------------------------------- headers on errors


def test_every_response_carries_the_security_headers(server, tmp_path):
    with httpx.Client(base_url=server.base, timeout=30) as c:
        for path, status in (("/", 200), ("/nothing", 404), ("/e/0123456789", 404), ("/static/style.css", 200)):
            r = c.get(path)
            assert r.status_code == status and secured(r), path
    # a declared body above the cap: refused before anything is read
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(f"POST /new HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Length: {60 << 20}\r\n"
                  "Content-Type: multipart/form-data; boundary=b\r\n\r\n".encode())
        head = s.recv(65536).decode("latin-1").lower()
    assert head.startswith("http/1.1 413") and all(f"\r\n{h}:" in head for h in HEADERS)
    # a 503: the store loses its table under a running server
    with WebServer(tmp_path / "broken.sqlite", tmp_path) as srv, httpx.Client(base_url=srv.base, timeout=30) as c:
        assert c.get("/").status_code == 200
        con = sqlite3.connect(tmp_path / "broken.sqlite")
        con.execute("DROP TABLE experiments")
        con.commit()
        con.close()
        r = c.get("/")
        # a database error is the store's, said in one line (never SQLAlchemy's statement)
        assert r.status_code == 503 and secured(r)
        text = error_text(r.text)
        assert "the experiment store failed: database error: OperationalError: no such table" in text
        assert "SELECT" not in text and "Traceback" not in r.text


# --------------------------------------------------------------------------- URLs the server asks


def test_system_urls_need_the_flag_and_public_hosts(server, plain):
    listener = Listener()
    try:
        url = f"http://127.0.0.1:{listener.port}/qa"
        with session(server) as c:
            for u, needle in ((url, "loopback"), ("http://10.1.2.3/qa", "private"), ("http://169.254.169.254/", "link-local"),
                              (f"http://localhost:{listener.port}/qa", "loopback"), ("http://[::1]:9/", "loopback"),
                              ("http://u:pw@8.8.8.8/", "user name or password"), ("file:///etc/passwd", "http(s)")):
                r = post_new(c, files={}, system_url=u, system_protocol="gerbil")
                assert r.status_code == 400, u
                msg = error_text(r.text)
                assert needle in msg, (u, msg)
            assert "--allowed-url-host 127.0.0.1" in error_text(
                post_new(c, files={}, system_url=url, system_protocol="gerbil").text)
        with session(plain) as c:
            r = post_new(c, files={}, system_url=url, system_protocol="gerbil")
            assert r.status_code == 400 and "--allow-system-urls" in error_text(r.text)
            assert 'name="system_url"' not in c.get("/new").text
        assert listener.hits == 0
    finally:
        listener.close()


def test_live_system_with_a_bad_protocol_is_refused_clearly(server):
    with session(server) as c:
        r = post_new(c, files={}, system_url="http://127.0.0.1:9/qa", system_protocol="gerbil-qa")
        assert r.status_code == 400 and "expected one of gerbil, text2sparql" in error_text(r.text)


def test_stored_system_experiments_are_not_rerun_or_resumed_without_the_flag(tmp_path):
    listener = Listener()
    try:
        store_path = tmp_path / "exp.sqlite"
        st = Store(store_path)
        url = f"http://127.0.0.1:{listener.port}/qa"
        pending = st.create(dataset="demo", run_name="sys", profile="kgqa", system_url=url, system_protocol="gerbil")
        st.close()
        with WebServer(store_path, tmp_path) as srv, session(srv) as c:
            wait_until(lambda: c.get(f"/e/{pending}/status.json").json()["status"] == "failed", timeout=60,
                       every=0.1, what=f"experiment {pending} failed")
            s = c.get(f"/e/{pending}/status.json").json()
            assert s["status"] == "failed" and "--allow-system-urls" in s["error"]
            r = c.post(f"/e/{pending}/rerun", data={"csrf": c.csrf})
            assert r.status_code == 403 and "--allow-system-urls" in error_text(r.text)
        assert listener.hits == 0
    finally:
        listener.close()


# --------------------------------------------------------------------------- uploads


def test_compression_bombs_and_compressed_runs_get_a_clear_message(server):
    bomb = gzip.compress(b"\0" * (64 << 20))  # 64 MiB of zeros in ~64 KB; the server allows 5 MB unpacked
    with session(server) as c:
        r = post_new(c, files={**run_file(), "kg_file": ("kg.nt.gz", bomb, "application/gzip")})
        assert r.status_code == 400
        msg = error_text(r.text)
        assert "kg.nt.gz" in msg and "decompression bomb" in msg and "5 MB" in msg
        assert "MemoryError" not in r.text and "internal error" not in msg
        r = post_new(c, files={"run_file": ("run.json.gz", gzip.compress(b"{}"), "application/gzip")})
        assert r.status_code == 400 and "gzip-compressed: upload the uncompressed file" in error_text(r.text)
        ok = gzip.compress((DEMO / "kg.ttl").read_bytes())
        r = post_new(c, files={**run_file(), "kg_file": ("kg.ttl.gz", ok, "application/gzip")})
        assert r.status_code == 303, error_text(r.text)


def test_upload_errors_name_form_fields_not_cli_flags(server):
    with session(server) as c:
        r = post_new(c, files={"run_file": ("run.txt", b"hello world, not a run\n", "text/plain")})
        assert r.status_code == 400
        msg = error_text(r.text)
        assert "run.txt" in msg and "“Run format” field" in msg and "--" not in msg
        r = post_new(c, run_format="nope")
        assert r.status_code == 400 and "unknown run format 'nope'" in error_text(r.text)


def test_markdown_export_has_no_raw_html_from_run_names(server):
    evil = '<img src=x onerror=alert(1)> | **bold** <script>alert(2)</script>'
    with session(server) as c:
        r = post_new(c, run_name=evil)
        assert r.status_code == 303
        url = r.headers["location"]
        ended(c, url)
        md = c.get(url + "/download/md").text
    assert "<img" not in md and "<script" not in md
    assert md.startswith("# &lt;img src=x onerror=alert(1)&gt; \\| \\*\\*bold\\*\\*")


@pytest.mark.slow  # a whole live-system experiment in the web app; the CLI's credential test (test_system_trust) runs in the README's command
def test_a_system_urls_credentials_reach_the_system_but_no_page_log_or_export(tmp_path):
    """A system URL with a credential-like query value (the form refuses userinfo): the system
    gets it; the experiment page, its status, the home page, the JSON export, the server's log
    and the store's file show it as ``***``; re-running it is refused, saying why."""
    import json

    from kgqa import api
    from systemprocs import faulty, requests_log

    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"question": it.question("en"), "query": it.sparql}
                                   for it in api.load_dataset("demo").items]), encoding="utf-8")
    secret = "S3CRETtoken42"
    with faulty(answers) as system, WebServer(tmp_path / "exp.sqlite", tmp_path, "--allow-system-urls",
                                              "--allowed-url-host", "127.0.0.1") as srv, session(srv) as c:
        url = f"http://127.0.0.1:{system.port}/?access_token={secret}"
        r = post_new(c, files={}, system_url=url, system_protocol="gerbil", kg="demo")
        assert r.status_code == 303, error_text(r.text)
        page = r.headers["location"]
        ended(c, page)
        status = c.get(page + "/status.json").json()
        assert status["status"] == "finished", status
        log = requests_log(system)
        texts = [c.get(page).text, json.dumps(status), c.get("/").text, c.get(page + "/download/json").text,
                 c.get(page + "/download/csv").text]
        rerun = c.post(page + "/rerun", data={"csrf": c.csrf})
        texts.append(rerun.text)
    assert log and all(f"access_token={secret}" in x["path"] for x in log)
    assert rerun.status_code == 403 and "not kept in the store" in error_text(rerun.text)
    texts += [srv.output()] + [p.read_bytes().decode("latin-1") for p in tmp_path.glob("exp.sqlite*")]
    assert not [t for t in texts if secret in t]
    assert f"127.0.0.1:{system.port}/?access_token=***" in texts[0]
