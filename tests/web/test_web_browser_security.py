"""Issue 23's web attacks in a real Chromium against a real ``kgqa web``: DNS rebinding (a name
that resolves to 127.0.0.1), a cross-origin form post from an attacker's page on another
loopback port (with a planted cookie), and the HTML report download rendering exactly as the
file does with zero console errors. Screenshots go to the test's temp dir."""

from __future__ import annotations

import re

import httpx
import pytest

from kgqa.load import registry
from webattacks import count_experiments, cross_origin_csrf, rebinding, report_rendering
from waiting import wait_until
from webserver import WebServer, chromium

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web-browser")]  # Chromium: the slow part (.ci/run)

DEMO = registry.PACKAGE_DIR / "demo" / "data"


@pytest.fixture(scope="module")
def drv():
    d = chromium(resolve={"evil.example": "127.0.0.1"}, console=True)
    if d is None:
        pytest.skip("Chromium, chromium-driver or selenium is not installed (.ci/chromium.sh installs them)")
    yield d
    d.quit()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("webbrowsersec")
    with WebServer(tmp / "exp.sqlite", tmp, "--allow-system-urls", "--allowed-url-host", "127.0.0.1") as srv:
        yield srv


@pytest.fixture(scope="module")
def finished(server):
    with httpx.Client(base_url=server.base, timeout=60) as c:
        token = re.search(r'name="csrf" value="([^"]+)"', c.get("/new").text).group(1)
        r = c.post("/new", data={"csrf": token, "dataset": "demo", "profile": "kgqa", "kg": "demo", "reexecute": "1"},
                   files={"run_file": ("strong.json", (DEMO / "runs" / "strong.json").read_bytes(), "application/json")})
        assert r.status_code == 303, r.text[:300]
        eid = r.headers["location"].rsplit("/", 1)[1]
        wait_until(lambda: c.get(f"/e/{eid}/status.json").json()["status"] == "finished", timeout=120, every=0.1,
                   what=f"experiment {eid} finished")
    return eid


def test_a_rebound_name_gets_nothing(drv, server, finished, tmp_path):
    seen = rebinding(drv, server.port)
    drv.save_screenshot(str(tmp_path / "rebinding.png"))
    assert seen["h1"] == "421"
    assert not seen["listing_visible"]
    assert seen["statuses"] == [421, 421, 421]
    # the same browser, through the server's own name, sees the experiment
    drv.get(server.base + "/")
    assert finished in drv.page_source


def test_a_cross_origin_form_post_with_a_planted_cookie_is_refused(drv, server, tmp_path):
    seen = cross_origin_csrf(drv, server.base, server.port, server.store)
    drv.save_screenshot(str(tmp_path / "csrf.png"))
    assert seen["h1"] == "403", seen
    assert "another origin" in seen["message"]
    assert seen["after"] == seen["before"]
    assert count_experiments(server.store) == seen["before"]


def test_the_html_report_renders_as_the_file_does_without_console_errors(drv, server, finished, tmp_path):
    seen = report_rendering(drv, server.base, finished, tmp_path)
    for name in ("served", "file"):
        assert seen[name]["errors"] == [], (name, seen[name]["errors"])
    assert seen["served"]["styled"] == seen["file"]["styled"] and "serif" in seen["served"]["styled"]
    assert seen["served"]["scroll_width"] == seen["file"]["scroll_width"] <= 900
    assert seen["served"]["filter_works"] == seen["file"]["filter_works"] == 0  # the inline handler ran
    assert seen["same_pixels"]
