"""HTML report structure: self-contained (no external resources), tables and embedded PNGs."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import pytest
from analysis_synthetic import evaluation

from kgqa.report.html import html_report

# one worker runs the module: the two evaluations and the page are made once, not once per worker
pytestmark = pytest.mark.xdist_group("report-html")


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: dict[str, int] = {}
        self.attrs: list[tuple[str, str, str]] = []
        self.stack: list[str] = []
        self.unbalanced = 0

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for k, v in attrs:
            self.attrs.append((tag, k, v or ""))
        if tag not in ("img", "meta", "br", "input"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.unbalanced += 1


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gq")
    a = evaluation(folder, "alpha")
    b = evaluation(folder, "beta")
    # make beta different: drop the first question's score to 0
    b.questions[0].scores["Average F1"] = 0.0
    return html_report([a, b], by=["num_edge", "commonness"], resamples=300)


def test_structure_and_self_contained(page):
    p = _Collect()
    p.feed(page)
    assert page.startswith("<!DOCTYPE html>")
    assert p.unbalanced == 0 and not p.stack
    assert p.tags.get("table", 0) >= 8
    for tag in ("link", "iframe", "object"):
        assert tag not in p.tags
    # one inline script (the per-question filter), nothing loaded from elsewhere
    assert p.tags.get("script") == 1
    assert not [1 for t, k, v in p.attrs if t == "script" and k == "src"]
    srcs = [v for t, k, v in p.attrs if k == "src"]
    hrefs = [v for t, k, v in p.attrs if k == "href"]
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert all(h.startswith("#") for h in hrefs)
    assert not re.search(r"url\(", page)
    # each embedded image is a real PNG
    for s in srcs:
        assert base64.b64decode(s.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_sections_and_figures(page):
    for section in ("scores", "comparison", "outcomes", "distribution", "breakdowns", "paraphrase", "taxonomy", "questions"):
        assert f'id="{section}"' in page
    alts = re.findall(r'<img alt="([^"]+)"', page)
    assert "Average F1 by num_edge" in alts and "Average F1 by commonness" in alts
    assert "paraphrase rank curve" in alts and "distribution of Average F1" in alts
    assert "outcomes" in alts and "error taxonomy" in alts and "comparison of Average F1" in alts
    # breakdown table cell computed by hand: num_edge 2 -> 4 questions, mean 13/24
    assert "0.5417 [" in page
    # paraphrase rank-2 ratio 7/18
    assert "0.389" in page


def test_text_is_escaped(tmp_path):
    e = evaluation(tmp_path, "<b>run & co</b>")
    page = html_report([e], resamples=100, per_question=False)
    assert "<b>run & co</b>" not in page and "&lt;b&gt;run &amp; co&lt;/b&gt;" in page
