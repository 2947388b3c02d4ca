"""Safe exports: CSV formula injection neutralised (OWASP), Markdown cells escaped."""

from __future__ import annotations

import csv
import io

import pytest

from kgqa.report.safe import csv_cell, md_cell, md_table_cell

ATTACKS = ["=1+2", "=cmd|' /C calc'!A0", "@SUM(1+1)", "+1+1", "-2+3", "\t=1", "\r=1"]


@pytest.mark.parametrize("cell", ATTACKS)
def test_formula_cells_are_neutralised(cell):
    assert csv_cell(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["-0.25", "+3", "1e-5", "-1E+3", "plain", "", "a=b"])
def test_numbers_and_plain_text_are_unchanged(cell):
    assert csv_cell(cell) == cell


def test_opt_out(monkeypatch):
    assert csv_cell("=1+2", neutralise=False) == "=1+2"
    monkeypatch.setenv("KGQA_CSV_FORMULAS", "keep")
    assert csv_cell("=1+2") == "=1+2"


def test_markdown_cells_cannot_break_the_table():
    assert md_cell("a|b\nc") == "a\\|b c"
    assert md_cell("<script>*x*") == "\\<script\\>\\*x\\*"
    assert md_table_cell("**best|x**") == "**best\\|x**"


def test_evaluation_csv_and_markdown_are_safe(tmp_path):
    from kgqa.load import load_dataset, load_run
    from kgqa.report.evaluation import to_csv, to_markdown
    from kgqa.score import profiles
    from kgqa.score.evaluate import evaluate

    ds_path = tmp_path / "ds.jsonl"
    ds_path.write_text('{"id": "=1+2", "question": "q?", "answers": ["http://x/a"]}\n', encoding="utf-8")
    run_path = tmp_path / "run.jsonl"
    run_path.write_text('{"id": "=1+2", "answers": ["http://x/b"]}\n', encoding="utf-8")
    ds = load_dataset(ds_path, format="jsonl")
    run = load_run(run_path, format="jsonl", dataset=ds)
    run.name = "@SUM(1+1)|<b>"
    ev = evaluate(ds, run, profiles.get("kgqa"))
    rows = list(csv.reader(io.StringIO(to_csv([ev]))))
    assert rows[1][0] == "'@SUM(1+1)|<b>" and rows[1][1] == "'=1+2"
    assert list(csv.reader(io.StringIO(to_csv([ev], neutralise=False))))[1][1] == "=1+2"
    md = to_markdown([ev])
    assert "| \\@SUM(1+1)\\|\\<b\\> |" in md or "| @SUM(1+1)\\|\\<b\\> |" in md
