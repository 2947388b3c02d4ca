"""Attacks on a running ``kgqa web`` (issue 23), each returning what it observed: shared by the
browser tests (which assert on it) and the fault suite's web rows (``bench/faults_web.py``,
which tabulate it). Everything talks to 127.0.0.1 only; rebound names resolve to loopback
inside Chromium (``--host-resolver-rules``)."""

from __future__ import annotations

import re
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from waiting import wait_until
from webserver import PageServer

EVIL = "evil.example"


def form_token(client: httpx.Client) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', client.get("/new").text).group(1)


def count_experiments(store: Path) -> int:
    """Experiments in the server's store (read beside the server: SQLite allows it)."""
    from kgqa.store import Store

    with Store(store) as st:
        return len(st.list())


def rebinding(drv: Any, port: int) -> dict[str, Any]:
    """A rebound name (``evil.example`` -> 127.0.0.1) opened in Chromium: what the page shows,
    and what a script running in that origin gets for the listing, an uploaded run's file and
    a POST that would create an experiment."""
    drv.get(f"http://{EVIL}:{port}/")
    shown = drv.find_element("tag name", "h1").text
    listing = "<table" in drv.page_source and "/e/" in drv.page_source
    got = drv.execute_async_script(
        "var done=arguments[arguments.length-1];"
        "Promise.all([fetch('/').then(r=>r.status), fetch('/leaderboards').then(r=>r.status),"
        " fetch('/new',{method:'POST',body:new FormData()}).then(r=>r.status)])"
        ".then(done).catch(e=>done(String(e)));")
    return {"h1": shown, "listing_visible": listing, "statuses": got}


def cross_origin_csrf(drv: Any, srv_base: str, port: int, store: Path) -> dict[str, Any]:
    """An attacker's page on another loopback port: plants its own session cookie for the
    server's port (cookies are not port-scoped), then auto-submits the New-experiment form with
    the matching made-up token (the double-submit bypass) and a live-system URL."""
    forged = "A" * 43
    page = f"""<!DOCTYPE html><title>attack</title>
<form id="f" method="post" action="{srv_base}/new" enctype="multipart/form-data">
<input name="csrf" value="{forged}"><input name="dataset" value="demo"><input name="profile" value="kgqa">
<input name="system_url" value="http://127.0.0.1:9/qa"><input name="system_protocol" value="gerbil"></form>
<script>document.cookie = "kgqa_session_{port}={forged}; path=/";
document.getElementById("f").submit();</script>"""
    before = count_experiments(store)
    attacker = PageServer({"/attack.html": page})
    try:
        drv.get(f"http://127.0.0.1:{attacker.port}/attack.html")
        # the form posted itself: the server's answer (a page with its heading) is loaded
        wait_until(lambda: "/attack.html" not in drv.current_url
                   and drv.execute_script("return document.readyState") == "complete"
                   and drv.find_elements("tag name", "h1"), timeout=60, every=0.1, what="the forged form's answer")
        h1 = drv.find_element("tag name", "h1").text
        body = drv.find_element("tag name", "body").text
    finally:
        attacker.close()
    return {"h1": h1, "message": body[:300], "before": before, "after": count_experiments(store)}


def report_rendering(drv: Any, base: str, eid: str, tmp: Path, width: int = 900) -> dict[str, Any]:
    """The experiment's HTML report download opened in Chromium, against the same bytes opened
    as a local file: console errors, page widths, and whether the screenshots are the same."""
    import httpx as _h

    body = _h.get(f"{base}/e/{eid}/download/html", timeout=120).content
    local = tmp / f"report-{eid}.html"
    local.write_bytes(body)
    out: dict[str, Any] = {}
    drv.set_window_size(width, 1000)
    for name, url in (("served", f"{base}/e/{eid}/download/html"), ("file", local.as_uri())):
        drv.get_log("browser")  # drop what came before
        drv.get(url)
        time.sleep(0.3)
        logs = [e for e in drv.get_log("browser") if e.get("level") == "SEVERE"]
        height = drv.execute_script("return Math.min(document.documentElement.scrollHeight, 5000)")
        drv.set_window_size(width, int(height) + 120)
        shot = tmp / f"report-{eid}-{name}-{width}.png"
        drv.save_screenshot(str(shot))
        out[name] = {
            "errors": [e.get("message", "")[:200] for e in logs],
            "scroll_width": drv.execute_script("return document.documentElement.scrollWidth"),
            "styled": drv.execute_script("return getComputedStyle(document.body).fontFamily"),
            "filter_works": drv.execute_script(
                "var i=document.querySelector('.filters input');if(!i)return null;i.value='zzzz-no-match';"
                "i.dispatchEvent(new Event('input'));"
                "return Array.from(document.querySelectorAll('tr[data-outcome]'))"
                ".filter(t=>t.style.display!=='none').length;"),
            "screenshot": shot,
        }
        drv.set_window_size(width, 1000)
    out["same_pixels"] = _same_pixels(out["served"]["screenshot"], out["file"]["screenshot"])
    return out


def _same_pixels(a: Path, b: Path) -> bool:
    try:
        from PIL import Image, ImageChops
    except ImportError:
        return a.read_bytes() == b.read_bytes()
    with Image.open(a) as x, Image.open(b) as y:
        return x.size == y.size and ImageChops.difference(x.convert("RGB"), y.convert("RGB")).getbbox() is None


def upload_responsiveness(base: str, run: tuple[str, bytes], *, uploads: int = 20, poll: str = "/",
                          dataset: str = "demo", profile: str = "kgqa") -> dict[str, Any]:
    """``uploads`` New-experiment submissions at once (each its own session) while ``poll`` is
    fetched every 50 ms: the poll's latencies (ms) during the uploads, and the uploads'
    status codes."""
    sessions = []
    for _ in range(uploads):
        c = httpx.Client(base_url=base, timeout=300)
        c.csrf = form_token(c)
        sessions.append(c)
    codes: list[int] = []
    start = threading.Barrier(uploads + 1)

    def upload(c: httpx.Client) -> None:
        start.wait()
        r = c.post("/new", data={"csrf": c.csrf, "dataset": dataset, "profile": profile},
                   files={"run_file": (run[0], run[1], "application/json")})
        codes.append(r.status_code)

    threads = [threading.Thread(target=upload, args=(c,)) for c in sessions]
    for t in threads:
        t.start()
    lat: list[float] = []
    with httpx.Client(base_url=base, timeout=60) as poller:
        poller.get(poll)
        start.wait()
        while any(t.is_alive() for t in threads):
            t0 = time.perf_counter()
            r = poller.get(poll)
            lat.append((time.perf_counter() - t0) * 1000)
            assert r.status_code == 200, r.status_code
            time.sleep(0.05)
    for t in threads:
        t.join()
    for c in sessions:
        c.close()
    lat.sort()
    p95 = lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))] if lat else float("nan")
    return {"polls": len(lat), "p50": statistics.median(lat) if lat else float("nan"), "p95": p95,
            "max": lat[-1] if lat else float("nan"), "codes": sorted(codes)}
