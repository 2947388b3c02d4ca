"""One number format (kgqa.report.numbers) and one report table model (kgqa.report.model): the
same score prints the same digits in the terminal, Markdown, HTML, LaTeX and the web page."""

from __future__ import annotations

import html
import io
import math
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from kgqa.model import InputError
from kgqa.report import numbers
from kgqa.report.model import ReportCell, comparison_report, evaluation_report

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from compare_synthetic import synthetic_evals  # noqa: E402

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


@given(v=finite)
def test_score_is_four_decimals(v):
    assert numbers.score(v) == f"{v:.4f}"
    assert numbers.diff(v) == f"{v:+.4f}"
    assert numbers.score(int(v)) == f"{int(v):.4f}"  # an int score prints like a float one


@given(lo=finite, hi=finite)
def test_ci_is_two_scores(lo, hi):
    assert numbers.ci(lo, hi) == f"[{numbers.score(lo)}, {numbers.score(hi)}]"


@given(p=st.floats(min_value=0, max_value=1))
def test_pvalue(p):
    text = numbers.pvalue(p)
    if p < 1e-4:
        assert text == "<0.0001"
    else:
        assert text == f"{p:.4f}" and float(text) == pytest.approx(p, abs=5e-5)


def test_undefined_values():
    nan = float("nan")
    assert [numbers.score(None), numbers.score(nan), numbers.score(nan, missing="--")] == ["n/a", "n/a", "--"]
    assert [numbers.ci(None, 1.0), numbers.ci(0.1, nan, missing="--")] == ["", "--"]
    assert [numbers.pvalue(None), numbers.pvalue(nan, missing="n/a"), numbers.diff(None)] == ["-", "n/a", "n/a"]
    assert [numbers.score(math.inf), numbers.score(-math.inf), numbers.diff(math.inf)] == ["inf", "-inf", "+inf"]
    assert [numbers.count(3), numbers.count(None), numbers.value(True), numbers.value(2), numbers.value(0.5)] == [
        "3", "", "true", "2", "0.5000"]


def test_digits_setting(monkeypatch):
    monkeypatch.setenv("KGQA_DIGITS", "2")
    assert (numbers.score(0.12345), numbers.ci(0.1, 0.256), numbers.pvalue(0.001), numbers.pvalue(0.0421)) == (
        "0.12", "[0.10, 0.26]", "<0.01", "0.04")
    monkeypatch.setenv("KGQA_DIGITS", "6")
    assert numbers.score(1 / 3) == "0.333333" and numbers.pvalue(1e-5) == "0.000010"
    for bad in ("x", "-1", "99", "2.5"):
        monkeypatch.setenv("KGQA_DIGITS", bad)
        with pytest.raises(InputError, match="KGQA_DIGITS.*0 to 15"):
            numbers.score(0.5)


def test_docstring_examples():
    import doctest

    from kgqa.report import model

    for module in (numbers, model):
        result = doctest.testmod(module)
        assert result.attempted >= 1 and result.failed == 0, module.__name__


def test_cell_text():
    assert ReportCell(0.5, "score", low=0.25, high=0.75, letters="b").text() == "0.5000^b [0.2500, 0.7500]"
    assert ReportCell(None, "score").text() == "n/a"
    assert ReportCell(-0.0123, "diff", low=-0.05, high=0.01).text() == "-0.0123 [-0.0500, 0.0100]"
    assert ReportCell(3e-6, "p").text() == "<0.0001" and ReportCell("a|b").text() == "a|b"


# --------------------------------------------------------------------------- the same digits everywhere


@pytest.fixture(scope="module")
def evals():
    return synthetic_evals(n=80, systems=3, seed=2, missing=3)


@pytest.fixture(scope="module")
def comparison(evals):
    import kgqa

    return kgqa.compare(evals, seed=1, resamples=300)


def _terminal(renderables, width=200) -> str:
    con = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    for r in renderables:
        con.print(r)
    return con.export_text()


def _formats(evals, comparison) -> dict[str, str]:
    from kgqa.report import evaluation as E
    from kgqa.report.html import html_report
    from kgqa.report.latex import comparison_latex, evaluations_latex

    return {
        "terminal": _terminal(E.renderables(evals)) + comparison.to_table(width=200),
        "markdown": E.to_markdown(evals) + comparison.to_markdown(),
        "html": html.unescape(html_report(evals, comparison=comparison.result, per_question=False)),
        "notebook": html.unescape(E.to_html(evals)),
        "latex": evaluations_latex(evals) + comparison_latex(comparison.result),
    }


def _expected(evals, comparison) -> tuple[list[str], list[str], list[str]]:
    """(the aggregates every format shows, the comparison's means and CIs, its p-values and
    differences)."""
    aggregates = [numbers.score(e.aggregate.get(lab)) for e in evals for lab in e.aggregate]
    scores = []
    for m in comparison.result.measures:
        for s in comparison.result.systems:
            c = m.ci[s]
            scores += [numbers.score(c.mean), numbers.ci(c.low, c.high)]
    ps = [numbers.pvalue(c.p_holm.get(c.primary)) for m in comparison.result.measures for c in m.comparisons]
    ps += [numbers.diff(c.diff.mean) for m in comparison.result.measures for c in m.comparisons]
    return aggregates, scores, ps


def _latex_plain(tex: str) -> str:
    return tex.replace(r"\textless{}", "<")


def test_same_digits_in_every_format(evals, comparison):
    out = _formats(evals, comparison)
    out["latex"] = _latex_plain(out["latex"])
    aggregates, scores, ps = _expected(evals, comparison)
    assert len(aggregates) == 18 and len(scores) == 30 and len(ps) == 30
    for fmt, text in out.items():
        expect = aggregates + ([] if fmt == "notebook" else scores + ps)
        missing = [s for s in expect if s not in text]
        assert not missing, (fmt, missing[:5])


def test_digits_setting_reaches_every_format(evals, comparison, monkeypatch):
    monkeypatch.setenv("KGQA_DIGITS", "2")
    out = _formats(evals, comparison)
    out["latex"] = _latex_plain(out["latex"])
    aggregates, scores, ps = _expected(evals, comparison)
    assert all(re.fullmatch(r"<?[+-]?\d+\.\d\d|\[-?\d+\.\d\d, -?\d+\.\d\d\]", s) for s in aggregates + scores + ps)
    for fmt, text in out.items():
        expect = aggregates + ([] if fmt == "notebook" else scores + ps)
        assert all(s in text for s in expect), fmt
        # no score with 4 decimals is left anywhere (p-values of 2 digits included)
        four = re.findall(r"(?<![\d.])\d\.\d{4}(?!\d)", text)
        assert not four, (fmt, four[:5])


@pytest.mark.parametrize("digits", [None, "3"])
def test_web_page_prints_the_reports_digits(evals, tmp_path, monkeypatch, digits):
    """The experiment page of the web platform shows each aggregate exactly as the terminal does
    (with the default digits and with ``KGQA_DIGITS``)."""
    if digits:
        monkeypatch.setenv("KGQA_DIGITS", digits)
    import asyncio

    import httpx

    from kgqa.store import Store
    from kgqa.web.app import Settings, create_app

    store = Store(tmp_path / "exp.sqlite")
    e = evals[0]
    eid = store.create(dataset="synthetic", run_name=e.run, profile="kgqa", system_url="http://x")
    store.finish(eid, e, headline="F1")
    app = create_app(store, Settings(resume=False, allowed_hosts=["testserver"]))

    async def get(url: str) -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
            return await client.get(url)

    page = asyncio.run(get(f"/e/{eid}"))
    assert page.status_code == 200, page.text[:500]
    cells = re.findall(r'data-measure="([^"]+)">([^<]*)</td>', page.text)
    assert cells, page.text[:2000]
    terminal = _terminal([evaluation_report([e]).to_grid()])
    for label, shown in cells:
        assert shown == numbers.score(e.aggregate.get(label)), (label, shown)
        assert shown in terminal and len(shown.split(".")[1]) == int(digits or 4)


def test_report_model_is_built_once_and_rendered(evals, comparison):
    rep = evaluation_report(evals)
    assert rep.keys == ["run", "n"] and rep.columns == list(evals[0].aggregate)
    for j, lab in enumerate(rep.columns, start=2):
        values = [e.aggregate[lab] for e in evals]
        assert [r[j].best for r in rep.rows] == [v == max(values) for v in values]
    d = rep.to_dict()
    assert d["rows"][0]["F1"]["value"] == evals[0].aggregate["F1"]  # unrounded
    lines = rep.to_csv().splitlines()
    assert lines[0].split(",")[:3] == ["run", "n", "P"] and lines[1].split(",")[2] == repr(evals[0].aggregate["P"])
    cr = comparison_report(comparison.result)
    assert [r[0].text() for r in cr.summary.rows] == comparison.systems
    for m, j in zip(comparison.result.measures, range(1, len(cr.summary.columns) + 1)):
        cells = [r[j] for r in cr.summary.rows]
        assert [c.best for c in cells] == [s == m.best() for s in comparison.systems]
        assert [c.letters for c in cells] == [m.letters[s] for s in comparison.systems]
        assert [c.low for c in cells] == [m.ci[s].low for s in comparison.systems]
    assert len(cr.pairs.rows) == sum(len(m.comparisons) for m in comparison.result.measures)


def test_a_comparison_builds_its_report_once(evals, monkeypatch):
    import kgqa
    from kgqa.report import model

    calls = []
    real = model.comparison_report
    monkeypatch.setattr(model, "comparison_report", lambda cmp: calls.append(cmp) or real(cmp))
    c = kgqa.compare(evals[:2], seed=3, resamples=100)
    texts = [c.to_table(), c.to_markdown(), c.to_latex()]
    assert len(calls) == 1 and c.report is c.report
    cell = c.report.summary.rows[0][1]
    assert all(cell.number() in t for t in texts) and all(cell.ci() in t for t in texts)
