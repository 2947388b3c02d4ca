"""Listing pages of a larger store (issue 29, store at scale): home, leaderboard and the
compare picker page and sort in SQL, against a real ``kgqa web`` process."""

from __future__ import annotations

import re

import httpx
import pytest

from kgqa.load import registry
from kgqa.store import Store
from webserver import WebServer

pytestmark = pytest.mark.xdist_group("web-scale")

DEMO = registry.PACKAGE_DIR / "demo" / "data"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from kgqa.api import Evaluator

    tmp = tmp_path_factory.mktemp("webscale")
    path = tmp / "exp.sqlite"
    with Evaluator("demo", "kgqa") as ev:
        evaluation = ev.evaluate(str(DEMO / "runs" / "medium.json"), name="medium")
    st = Store(path)
    for i in range(105):
        eid = st.create(dataset="demo", run_name=f"sys{i:03d}", profile="kgqa", system_url="http://x")
        st.start(eid)
        st.finish(eid, evaluation, headline="F1")
    for i in range(20):
        st.create(dataset="demo", run_name=f"pending{i:02d}", profile="kgqa", system_url="http://x")
    st.close()
    with WebServer(path, tmp, "--workers", "1") as srv:  # the pending ones fail at once: no --allow-system-urls
        yield srv


def test_home_pages_and_sorts(server):
    with httpx.Client(base_url=server.base, timeout=60) as c:
        r = c.get("/")
        assert r.status_code == 200
        assert "1–50 of 125" in r.text and "page 1 of 3" in r.text
        assert len(re.findall(r'<a href="/e/[0-9a-f]+"><code>', r.text)) == 50
        last = c.get("/", params={"page": 3})
        assert "101–125 of 125" in last.text and len(re.findall(r'<a href="/e/[0-9a-f]+"><code>', last.text)) == 25
        assert 'id="page-next"' not in last.text and 'id="page-prev"' in last.text
        runs = re.findall(r"<td>(sys\d+|pending\d+)</td>", c.get("/", params={"sort": "run", "dir": "asc"}).text)
        assert runs == sorted(runs) and runs[0] == "pending00" and len(runs) == 50
        runs = re.findall(r"<td>(sys\d+|pending\d+)</td>", c.get("/", params={"sort": "run", "dir": "desc"}).text)
        assert runs[0] == "sys104"
        # nonsense falls back to the defaults, never a 500
        for q in ({"page": "x"}, {"page": "-3"}, {"page": "99999"}, {"sort": "evaluation"}, {"sort": "id;drop"}):
            assert c.get("/", params=q).status_code == 200, q


def test_leaderboard_and_compare_picker_page(server):
    with httpx.Client(base_url=server.base, timeout=60) as c:
        r = c.get("/leaderboard/demo/kgqa")
        assert r.status_code == 200 and "1–100 of 105" in r.text
        assert len(re.findall(r"<tr data-system=", r.text)) == 100
        assert "top 12 of 105" in r.text
        r2 = c.get("/leaderboard/demo/kgqa", params={"page": 2})
        ranks = re.findall(r'<td class="num">(\d+)</td>\s*<td class="system">', r2.text)
        assert ranks == ["101", "102", "103", "104", "105"]
        picker = c.get("/compare")
        assert "1–50 of 105" in picker.text
        assert len(re.findall(r'name="e" value="[0-9a-f]+"', picker.text)) == 50
