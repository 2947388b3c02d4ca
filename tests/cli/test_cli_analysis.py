"""`kgqa compare`, `kgqa report`, `kgqa show` and `kgqa evaluate --by/--bins/--save`."""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

import kgqa.cli as cli
from kgqa.demo import DATA
from kgqa.model import InputError

runner = CliRunner()
QUESTIONS = str(DATA / "questions.json")
RUNS = [str(DATA / "runs" / f"{r}.json") for r in ("strong", "medium", "weak")]


@pytest.fixture(scope="module", autouse=True)
def _registered():
    cli._register()


def invoke(*args):
    return runner.invoke(cli.app, [str(a) for a in args])


def fails(r, text):
    """The command stopped with an InputError (kgqa's main prints it and exits 2) saying ``text``."""
    assert isinstance(r.exception, InputError), r.output
    assert text in str(r.exception)
    return True


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("saved") / "demo.json"
    r = invoke("evaluate", QUESTIONS, *RUNS, "--save", path, "--by", "function", "--by", "num_answers",
               "--bins", "num_answers=1,2,10")
    assert r.exit_code == 0, r.output
    assert "F1 by function" in r.output and "F1 by num_answers" in r.output and "[2, 10]" in r.output
    return path


def test_compare_is_deterministic_and_complete():
    args = ("compare", QUESTIONS, *RUNS, "--seed", "3", "--resamples", "1000")
    one, two = invoke(*args), invoke(*args)
    assert one.exit_code == 0, one.output
    assert one.output == two.output
    for text in ("Mean [95% CI] per measure", "Paired tests (all pairs)", "Holm*", "BH*", "W/T/L", "p McNemar",
                 "strong (a)", "Corpus-level measures"):
        assert text in one.output
    assert "0.8556^bc" in one.output  # strong F1, significantly better than medium and weak


def test_compare_formats_and_baseline():
    r = invoke("compare", QUESTIONS, *RUNS, "--baseline", RUNS[2], "--format", "json", "--resamples", "500")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["baseline"] == "weak"
    f1 = next(m for m in doc["measures"] if m["measure"] == "F1")
    assert [(c["a"], c["b"]) for c in f1["comparisons"]] == [("strong", "weak"),
                                                              ("medium", "weak")]
    assert all(0 < c["p"]["randomization"] <= 1 for c in f1["comparisons"])
    r = invoke("compare", QUESTIONS, *RUNS[:2], "--format", "latex", "--resamples", "500")
    assert r.exit_code == 0 and r.output.count(r"\begin{tabular}") == 2
    r = invoke("compare", QUESTIONS, *RUNS[:2], "--format", "md", "--resamples", "500")
    assert r.exit_code == 0 and "| system | F1 |" not in r.output and "### Paired tests" in r.output
    # --format html: test_compare_html_to_a_file (slow: the report's figures)


@pytest.mark.slow  # the HTML report's figures (~2.5 s); quick: test_report_writes_report_html_by_default (the
# CLI writes an HTML report) and test_web_routes.py::test_leaderboard_compare_and_datasets (a comparison's report
# sections, figures included); the other compare formats: test_compare_formats_and_baseline
def test_compare_html_to_a_file(tmp_path):
    out = tmp_path / "c.html"
    r = invoke("compare", QUESTIONS, *RUNS[:2], "--format", "html", "-o", out, "--resamples", "300")
    assert r.exit_code == 0 and out.read_text().startswith("<!DOCTYPE html>")


def test_compare_errors():
    r = invoke("compare", QUESTIONS, RUNS[0])
    assert fails(r, "at least two runs")
    r = invoke("compare", QUESTIONS, *RUNS[:2], "--baseline", "nobody")
    assert fails(r, "nobody")


def test_compare_ck25_real_runs(shared_data):
    runs = [str(shared_data / "ck25-runs" / t / "ck25_system_result_set.json") for t in ("WSE", "INFAI", "AIFB")]
    one = invoke("compare", "ck25", *runs, "--resamples", "2000", "--allow-gold-copy")  # INFAI's is a copy of gold
    two = invoke("compare", "ck25", *runs, "--resamples", "2000", "--allow-gold-copy")
    assert one.exit_code == 0, one.output
    assert one.output == two.output
    assert "WSE/ck25_system_result_set (a)" in one.output and "0.3403" in one.output  # WSE macro F1 on the official result bags
    assert "Holm*" in one.output and "BH*" in one.output


@pytest.mark.parametrize("fmt,check", [
    ("md", lambda t: "## Comparison" in t and "### F1 by hops" in t and "### Error taxonomy" in t),
    ("latex", lambda t: t.count(r"\begin{table}") >= 3 and r"\toprule" in t),
    ("json", lambda t: {"runs", "comparison", "taxonomy", "breakdowns"} <= set(json.loads(t))),
    ("csv", lambda t: len(list(csv.DictReader(io.StringIO(t)))) == 90),
])
def test_report_formats(saved, tmp_path, fmt, check):
    out = tmp_path / f"r.{fmt}"
    r = invoke("report", saved, "--format", fmt, "-o", out, "--by", "hops", "--resamples", "500")
    assert r.exit_code == 0, r.output
    assert check(out.read_text())


def test_report_single_and_errors(saved, tmp_path):
    doc = json.loads(saved.read_text())
    single = tmp_path / "one.json"
    single.write_text(json.dumps(doc["runs"][0]))
    r = invoke("report", single, "--format", "md")
    assert r.exit_code == 0 and "## Comparison" not in r.output and "Error taxonomy" in r.output
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    r = invoke("report", bad, "--format", "md")
    assert fails(r, "not a saved kgqa evaluation") and "bad.json" in str(r.exception)
    r = invoke("report", saved, "--format", "md", "--by", "nonexistent")
    assert fails(r, "unknown characteristic")


def test_show(saved):
    r = invoke("show", saved, "--id", "2", "--run", "strong")
    assert r.exit_code == 0, r.output
    for text in ("Where was Ada Quenby born?", "gold SPARQL", "predicted SPARQL", "onto:residence",
                 "wrong_predicate", "answer_cardinality", "AnswerEM"):
        assert text in r.output
    r = invoke("show", QUESTIONS, RUNS[1], "--id", "6")
    assert r.exit_code == 0 and "parse_error" in r.output
    r = invoke("show", saved, "--id", "999")
    assert fails(r, "no question '999'")


def test_evaluate_by_needs_table_or_md():
    r = invoke("evaluate", QUESTIONS, RUNS[0], "--format", "json", "--by", "hops")
    assert fails(r, "--format table or md")


def test_report_writes_report_html_by_default(saved, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("report", saved, "--resamples", "200")
    assert r.exit_code == 0, r.output
    assert "<html" not in r.output
    page = (tmp_path / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<img ") >= 6 and 'id="taxonomy"' in page
    # the page on standard output: test_report_html_to_standard_output (slow)


@pytest.mark.slow  # a second HTML report (its figures: ~2.5 s); quick: test_report_writes_report_html_by_default
# (the HTML report) and test_cli_entry_points.py::test_evaluation_formats_are_the_cli_output (report -o -)
def test_report_html_to_standard_output(saved):
    r = invoke("report", saved, "--resamples", "200", "-o", "-")
    assert r.exit_code == 0 and r.output.lstrip().startswith("<!DOCTYPE html>")
