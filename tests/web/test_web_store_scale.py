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


def test_next_links_walk_every_experiment_once_while_experiments_arrive(server):
    """Following the pager's links (keyset: after the page's last experiment) lists every
    experiment once although new ones, sorting among those already seen and those still to
    come, are added between page loads; the previous link goes back to the page before."""
    import html

    added: list[str] = []
    with httpx.Client(base_url=server.base, timeout=60) as c, Store(server.store) as st:
        at_start = {e.id for e in st.list()}
        seen: list[str] = []
        url: str | None = "/?sort=run&dir=asc"
        pages = []
        try:
            while url:
                r = c.get(url)
                assert r.status_code == 200
                ids = re.findall(r'<a href="/e/([0-9a-f]+)"><code>', r.text)
                lo, hi = map(int, re.search(r'id="page-info">(\d+)–(\d+) of', r.text).groups())
                assert ids and hi - lo + 1 == len(ids) and lo >= len(seen) + 1  # arrivals before it count
                pages.append((url, ids))
                seen += ids
                for k in range(2):  # "sys017b" sorts right after "sys017": before and after the cursor
                    added.append(st.create(dataset="demo", run_name=f"sys{(len(pages) * 29 + k * 50) % 105:03d}b",
                                           profile="kgqa", system_url="http://x"))
                nxt = re.search(r'<a href="([^"]+)" rel="next"', r.text)
                url = "/" + html.unescape(nxt.group(1)) if nxt else None
            assert len(seen) == len(set(seen)) and at_start <= set(seen)
            assert len(pages) >= 3
            prev = re.search(r'<a href="([^"]+)" rel="prev"', c.get(pages[2][0]).text)
            back = c.get("/" + html.unescape(prev.group(1)))
            assert re.findall(r'<a href="/e/([0-9a-f]+)"><code>', back.text)[-1] == pages[1][1][-1]
            # a cursor that names no experiment falls back to the numbered page, never a 500
            r = c.get("/", params={"after": "00000000ff", "page": 2})
            assert r.status_code == 200 and "51–100 of" in r.text
        finally:
            for eid in added:
                st.delete(eid)
