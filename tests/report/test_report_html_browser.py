"""The CK25 3-run HTML report as a reader sees it: under 1 MB, and no number split across lines
at 1400 and 900 px in a real (headless) Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from conftest import CHROMIUM_OFFLINE_FLAGS

from kgqa.report.html import html_report

# a CK25 evaluation and Chromium: the slow part (.ci/run runs it)
pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")

# Marks every numeric or id cell whose text (superscript letters aside) lies on more than one line.
_CHECK = """<script>window.addEventListener('load',function(){var bad=[];
document.querySelectorAll('td.num, td.id').forEach(function(td){var tops=new Set();
var w=document.createTreeWalker(td,NodeFilter.SHOW_TEXT);var n;while((n=w.nextNode())){
if(n.parentElement.closest('.sig'))continue;var r=document.createRange();r.selectNodeContents(n);
for(const x of r.getClientRects()){if(x.width>0)tops.add(Math.round(x.top));}}
if(tops.size>1)bad.push(td.textContent);});
document.body.setAttribute('data-wrapped',JSON.stringify(bad));
document.body.setAttribute('data-cells',String(document.querySelectorAll('td.num').length));});</script>"""


@pytest.fixture(scope="module")
def ck25_report(shared_data, tmp_path_factory):
    import os

    os.environ.setdefault("KGQA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    from kgqa.api import evaluate_many as run_evaluations

    runs = shared_data / "ck25-runs"
    kg = str(shared_data / "ck25" / "graphs" / "prod-inst.ttl")
    evals = run_evaluations("ck25", [str(runs / t / "ck25_answers.json") for t in ("INFAI", "WSE", "AIFB")],
                            profile="text2sparql", kg=kg)
    return html_report(evals, resamples=500, full_json="results.json")


def test_ck25_report_is_under_one_megabyte(ck25_report):
    assert len(ck25_report.encode("utf-8")) < 1_000_000
    # answers are cut with a count, not dropped
    assert re.search(r"… [\d,]+ more row\(s\) \(every row in <a href=\"results.json\">", ck25_report)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (apt-get install chromium)")
@pytest.mark.parametrize("width", [1400, 900])
def test_no_number_wraps_in_chromium(ck25_report, tmp_path, width):
    page = tmp_path / "report.html"
    page.write_text(ck25_report.replace("</body>", _CHECK + "</body>"), encoding="utf-8")
    shot = tmp_path / f"report-{width}.png"
    subprocess.run([CHROMIUM, *CHROMIUM_OFFLINE_FLAGS, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--window-size={width},1600", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120, check=False)
    dom = subprocess.run([CHROMIUM, *CHROMIUM_OFFLINE_FLAGS, "--headless", "--no-sandbox", "--disable-gpu", f"--window-size={width},1600",
                          "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
                         capture_output=True, timeout=120, text=True, check=False).stdout
    m = re.search(r'data-wrapped="([^"]*)"', dom)
    cells = re.search(r'data-cells="(\d+)"', dom)
    assert m and cells, "the check script did not run"
    assert int(cells.group(1)) > 100
    wrapped = json.loads(m.group(1).replace("&quot;", '"'))
    assert wrapped == []
    assert shot.exists() and shot.stat().st_size > 10_000
