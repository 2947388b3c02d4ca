"""The fault suite's web rows (issue 23): every attack of the issue's web half against a real
``kgqa web`` process on a free loopback port, in a real Chromium where the attack needs one
(a rebound name, a cross-origin page on another port, the HTML report's console). Called by
``bench/faults.py`` (``--only web``); rows go through the ``row`` function it passes.

Run alone: ``python bench/faults.py --only web``.
"""

from __future__ import annotations

import gzip
import html
import json
import re
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for p in (str(REPO), str(REPO / "tests")):
    if p not in sys.path:
        sys.path.insert(0, p)

import httpx  # noqa: E402

from kgqa.load import registry  # noqa: E402
from webattacks import (  # noqa: E402
    count_experiments, cross_origin_csrf, form_token, rebinding, report_rendering, upload_responsiveness,
)
from webserver import Listener, WebServer, chromium  # noqa: E402
from clijson import run_json  # noqa: E402

Row = Callable[[str, str, str, str, bool], None]
DEMO = registry.PACKAGE_DIR / "demo" / "data"
HEADERS = ("x-content-type-options", "x-frame-options", "referrer-policy", "content-security-policy")


def _error(page: str) -> str:
    m = re.search(r'id="error"[^>]*>(.*?)</p>', page, re.S)
    return html.unescape(m.group(1)) if m else page[:120]


def _secured(headers) -> bool:
    return all(h in headers for h in HEADERS)


def _wait(c: httpx.Client, eid: str, timeout: float = 180.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = c.get(f"/e/{eid}/status.json").json()
        if s["status"] in ("finished", "failed"):
            return s
        time.sleep(0.2)
    return {"status": "timeout"}


def web_rows(row: Row, tmp: Path, data: Path) -> None:
    tmp = Path(tmp) / "web"
    tmp.mkdir(parents=True, exist_ok=True)
    store = tmp / "exp.sqlite"
    srv = WebServer(store, tmp, "--allowed-host", "kgqa.example.org", "--max-unpacked-mb", "16").start()
    drv = None
    try:
        with httpx.Client(base_url=srv.base, timeout=120) as c:
            c.csrf = form_token(c)
            _http_rows(row, srv, c, tmp, data)
            drv = chromium(resolve={"evil.example": "127.0.0.1"}, console=True)
            if drv is None:
                row("web", "browser attacks", "run in Chromium", "skipped: chromium/chromedriver/selenium missing",
                    False)
            else:
                _browser_rows(row, srv, c, drv, tmp)
        _responsiveness_row(row, srv, data)
    finally:
        if drv is not None:
            drv.quit()
        srv.stop()
    _token_rows(row, tmp)
    _system_url_rows(row, tmp)
    _error_header_rows(row, tmp)
    _library_rows(row, data, tmp)


# --------------------------------------------------------------------------- over HTTP


def _post(c: httpx.Client, files=None, headers=None, **fields) -> httpx.Response:
    data = {"csrf": c.csrf, "dataset": "demo", "profile": "kgqa", **fields}
    if files is None:
        files = {"run_file": ("weak.json", (DEMO / "runs" / "weak.json").read_bytes(), "application/json")}
    return c.post("/new", data=data, files=files, headers=headers or {})


def _http_rows(row: Row, srv: WebServer, c: httpx.Client, tmp: Path, data: Path) -> None:
    port = srv.port
    r = c.get("/", headers={"Host": f"evil.example:{port}"})
    ok = c.get("/", headers={"Host": f"localhost:{port}"}).status_code == 200
    row("web", f"DNS rebinding: GET / with Host: evil.example:{port} (curl)", "421, nothing listed, headers set",
        f"{r.status_code}; localhost {'200' if ok else 'refused'}; headers {'set' if _secured(r.headers) else 'MISSING'}",
        r.status_code == 421 and ok and _secured(r.headers) and "<table" not in r.text)
    before = count_experiments(srv.store)
    forged = "A" * 43
    with httpx.Client(base_url=srv.base, timeout=60, cookies={f"kgqa_session_{port}": forged}) as other:
        r = other.post("/new", data={"csrf": forged, "dataset": "demo", "profile": "kgqa"},
                       files={"run_file": ("weak.json", (DEMO / "runs" / "weak.json").read_bytes())})
    row("web", "CSRF: attacker-chosen token, same value in cookie and field (no Origin)", "403, no experiment",
        f"{r.status_code}; experiments {before} -> {count_experiments(srv.store)}",
        r.status_code == 403 and count_experiments(srv.store) == before)
    with httpx.Client(base_url=srv.base, timeout=60) as other:
        form_token(other)  # a session of its own
        r = other.post("/new", data={"csrf": c.csrf, "dataset": "demo", "profile": "kgqa"},
                       files={"run_file": ("weak.json", (DEMO / "runs" / "weak.json").read_bytes())})
    row("web", "CSRF: a real token of another session", "403", str(r.status_code), r.status_code == 403)
    codes = [_post(c, headers=h).status_code for h in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                                                         {"Referer": "http://evil.example/x.html"},
                                                         {"Origin": f"http://127.0.0.1:{port + 1}"})]
    row("web", "state-changing POST with a foreign Origin / Origin: null / foreign Referer / other port",
        "403 each (the right token notwithstanding)", " ".join(map(str, codes)), codes == [403] * 4)
    with httpx.Client(base_url=srv.base, timeout=30) as fresh:
        cookie = fresh.get("/").headers.get("set-cookie", "")
    row("web", "session cookie scope", f"named per port (kgqa_session_{port}), SameSite=Strict, HttpOnly",
        cookie.split(";")[0].split("=")[0] + "; " + "; ".join(x.strip() for x in cookie.split(";")[1:]),
        cookie.startswith(f"kgqa_session_{port}=") and "SameSite=Strict" in cookie and "HttpOnly" in cookie)
    # uploads: a gzip bomb, a compressed run, web wording, markdown
    bomb = gzip.compress(b"\0" * (256 << 20))
    r = _post(c, files={"run_file": ("weak.json", (DEMO / "runs" / "weak.json").read_bytes()),
                        "kg_file": ("kg.nt.gz", bomb, "application/gzip")})
    msg = _error(r.text)
    row("web", f"gzip bomb as RDF upload ({len(bomb) // 1024} KB -> 256 MiB)", "400, 'decompression bomb', no MemoryError",
        f"{r.status_code}: {msg[:90]}", r.status_code == 400 and "decompression bomb" in msg and "MemoryError" not in r.text)
    r = _post(c, files={"run_file": ("run.txt", b"hello, not a run\n", "text/plain")})
    msg = _error(r.text)
    row("web", "upload in an undetectable format", "names the form's Run format field, no CLI flag",
        f"{r.status_code}: {msg[-80:]}", r.status_code == 400 and "Run format" in msg and "--run-format" not in msg)
    r = _post(c, measures="F1,XYZLONGNAMEOFAMEASURE")
    msg = _error(r.text)
    row("web", "unknown long measure name in the form", "no 'did you mean R'", f"{r.status_code}: {msg[:70]}",
        r.status_code == 400 and "did you mean 'R'" not in msg and "XYZLONGNAMEOFAMEASURE" in msg)
    evil = '<img src=x onerror=alert(1)><script>alert(2)</script>'
    r = _post(c, run_name=evil)
    md = ""
    if r.status_code == 303:
        eid = r.headers["location"].rsplit("/", 1)[1]
        _wait(c, eid)
        md = c.get(f"/e/{eid}/download/md").text
    row("web", "run name with HTML, Markdown export", "no raw HTML in the .md", md.splitlines()[0][:70] if md else str(r.status_code),
        bool(md) and "<img" not in md and "<script" not in md)


# --------------------------------------------------------------------------- in Chromium


def _browser_rows(row: Row, srv: WebServer, c: httpx.Client, drv, tmp: Path) -> None:
    seen = rebinding(drv, srv.port)
    drv.save_screenshot(str(tmp / "rebinding.png"))
    row("web", "DNS rebinding in Chromium: evil.example -> 127.0.0.1, page + scripts in that origin",
        "421 page; GET /, GET /leaderboards, POST /new all 421",
        f"h1 {seen['h1']}; statuses {seen['statuses']}; listing {'visible' if seen['listing_visible'] else 'hidden'}",
        seen["h1"] == "421" and seen["statuses"] == [421, 421, 421] and not seen["listing_visible"])
    seen = cross_origin_csrf(drv, srv.base, srv.port, srv.store)
    row("web", "CSRF in Chromium: page on another port plants a session cookie, auto-submits with its token",
        "403, no experiment", f"h1 {seen['h1']}; experiments {seen['before']} -> {seen['after']}",
        seen["h1"] == "403" and seen["before"] == seen["after"])
    r = _post(c, files={"run_file": ("strong.json", (DEMO / "runs" / "strong.json").read_bytes())}, kg="demo",
              reexecute="1")
    eid = r.headers.get("location", "/x").rsplit("/", 1)[1]
    _wait(c, eid)
    t0 = time.perf_counter()
    c.get(f"/e/{eid}/download/html")
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    c.get(f"/e/{eid}/download/html")
    second = time.perf_counter() - t0
    seen = report_rendering(drv, srv.base, eid, tmp)
    served, local = seen["served"], seen["file"]
    row("web", "HTML report download in Chromium at 900 px vs the same file opened locally",
        "0 console errors; same pixels; no sideways scroll",
        f"errors {len(served['errors'])}/{len(local['errors'])}; width {served['scroll_width']}/{local['scroll_width']}; "
        f"pixels {'same' if seen['same_pixels'] else 'DIFFER'}",
        not served["errors"] and not local["errors"] and seen["same_pixels"] and served["scroll_width"] <= 900)
    row("web", "HTML report download, second request", "cached per experiment",
        f"{first * 1000:.0f} ms first, {second * 1000:.0f} ms second", second < max(0.1, first / 2))


def _responsiveness_row(row: Row, srv: WebServer, data: Path) -> None:
    run = data / "ck25-runs" / "WSE" / "ck25_system_result_set.json"
    if run.is_file():
        payload, ds, prof = (run.name, run.read_bytes()), "ck25", "text2sparql"
    else:
        payload, ds, prof = ("weak.json", (DEMO / "runs" / "weak.json").read_bytes()), "demo", "kgqa"
    res = upload_responsiveness(srv.base, payload, uploads=20, poll="/", dataset=ds, profile=prof)
    row("web", f"20 concurrent uploads ({len(payload[1]) // 1024} KB {ds} run) while / is polled every 50 ms",
        "p95 <= 200 ms; uploads 303 (or 503 busy)",
        f"p50 {res['p50']:.0f} ms, p95 {res['p95']:.0f} ms, max {res['max']:.0f} ms over {res['polls']} polls; "
        f"codes {sorted(set(res['codes']))}",
        res["p95"] <= 200 and set(res["codes"]) <= {303, 503} and 303 in res["codes"])


# --------------------------------------------------------------------------- further servers


def _token_rows(row: Row, tmp: Path) -> None:
    store = tmp / "token.sqlite"
    srv = WebServer(store, tmp, "--token", "old-secret").start()
    try:
        with httpx.Client(base_url=srv.base, timeout=30) as c:
            c.get("/?token=old-secret")
            cookie = c.cookies.get(f"kgqa_auth_{srv.port}") or ""
            r401 = c.get("/", params={"token": "wrong"})
            srv.stop()
            srv = WebServer(store, tmp, "--token", "new-secret", port=srv.port).start()
            old = c.get("/leaderboards").status_code
            fresh = c.get("/?token=new-secret").status_code
        row("web", "token: the cookie after ?token=", "not the token itself (a per-server HMAC)",
            f"cookie {'holds' if 'old-secret' in cookie else 'does not hold'} the token", bool(cookie) and "old-secret" not in cookie)
        row("web", "token: old cookie, then a fresh ?token= link after a restart", "old cookie 401, fresh link 200",
            f"{old}, {fresh}; 401 page headers {'set' if _secured(r401.headers) else 'MISSING'}",
            old == 401 and fresh == 200 and _secured(r401.headers))
    finally:
        srv.stop()


def _system_url_rows(row: Row, tmp: Path) -> None:
    listener = Listener()
    try:
        url = f"http://127.0.0.1:{listener.port}/qa"
        results = []
        for args in ((), ("--allow-system-urls",)):
            with WebServer(tmp / f"sys{len(args)}.sqlite", tmp, *args) as srv, \
                    httpx.Client(base_url=srv.base, timeout=60) as c:
                c.csrf = form_token(c)
                r = _post(c, files={}, system_url=url, system_protocol="gerbil")
                results.append((r.status_code, _error(r.text)))
        time.sleep(0.5)
        (s1, m1), (s2, m2) = results
        row("web", "system URL on 127.0.0.1 without --allow-system-urls", "400 naming the flag; 0 requests",
            f"{s1}; listener got {listener.hits}", s1 == 400 and "--allow-system-urls" in m1 and listener.hits == 0)
        row("web", "system URL on 127.0.0.1 with --allow-system-urls (not listed)",
            "400 naming --allowed-url-host; 0 requests", f"{s2}: {m2[:60]}; listener got {listener.hits}",
            s2 == 400 and "--allowed-url-host" in m2 and listener.hits == 0)
    finally:
        listener.close()


def _error_header_rows(row: Row, tmp: Path) -> None:
    store = tmp / "broken.sqlite"
    with WebServer(store, tmp) as srv, httpx.Client(base_url=srv.base, timeout=30) as c:
        c.get("/")
        r404 = c.get("/nothing")
        with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
            s.sendall(f"POST /new HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nContent-Length: {1 << 30}\r\n"
                      "Content-Type: multipart/form-data; boundary=b\r\n\r\n".encode())
            head413 = s.recv(65536).decode("latin-1").lower()
        con = sqlite3.connect(store)
        con.execute("DROP TABLE experiments")
        con.commit()
        con.close()
        r500 = c.get("/")
    ok413 = head413.startswith("http/1.1 413") and all(f"\r\n{h}:" in head413 for h in HEADERS)
    row("web", "security headers on error responses (404, 413, 500 after the store lost its table)",
        "every header on each; 500 or 503 (the store failed) page without traceback",
        f"404 {'ok' if _secured(r404.headers) else 'MISSING'}, 413 {'ok' if ok413 else 'MISSING'}, "
        f"{r500.status_code} {'ok' if _secured(r500.headers) else 'MISSING'}",
        _secured(r404.headers) and ok413 and r500.status_code in (500, 503) and _secured(r500.headers)
        and "Traceback" not in r500.text)


# --------------------------------------------------------------------------- labels, KG names


def _library_rows(row: Row, data: Path, tmp: Path) -> None:
    wse = data / "ck25-runs" / "WSE" / "ck25_system_result_set.json"
    if not wse.is_file():
        row("web", "labels of questions scored 0", "never 'correct'", "skipped: no CK25 data", False)
        return
    from kgqa.analyze.taxonomy import classify
    from kgqa.store import runner

    res = runner.evaluate_inputs(runner.ExperimentInputs(dataset="ck25", run=str(wse), run_name="WSE", profile="text2sparql"))
    wrong = [(q.id, classify(q).label) for q in res.evaluation.questions
             if q.scores.get("set_F") == 0.0 and classify(q).label == "correct"]
    q25 = next((classify(q).label for q in res.evaluation.questions if q.id == "ck25:25-en"), "?")
    row("web", "CK25 WSE (text2sparql): labels of questions with set_F 0.0000", "none labelled correct",
        f"{len(wrong)} labelled correct; ck25:25-en -> {q25}", not wrong)
    kgs = registry.available_kgs()
    env = {**__import__("os").environ, "KGQA_DATA_DIR": str(data), "COLUMNS": "200"}
    r = subprocess.run([sys.executable, "-c", "from kgqa.cli import main; main()", "evaluate", "ck25",
                        str(data / "ck25-runs" / "INFAI" / "ck25_answers.json"), "--kg", "ck25", "-f", "json"],
                       env=env, capture_output=True, text=True, timeout=600, cwd=str(tmp))
    agg = ""
    if r.returncode == 0:
        try:
            agg = f"set_F {run_json(r.stdout)['aggregate'].get('set_F', 0):.4f}"
        except (ValueError, KeyError):
            agg = "unreadable output"
    row("web", "`kgqa evaluate ck25 RUN --kg ck25` (a KG name the web offers)",
        "resolves the registry KG (registry.resolve_kg), exit 0",
        f"web offers {sorted(kgs)}; CLI exit {r.returncode} {agg or r.stderr.strip().splitlines()[-1][:70] if r.stderr.strip() else agg}",
        "ck25" in kgs and r.returncode == 0)
