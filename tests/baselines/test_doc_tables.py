"""Documentation tables that cannot go stale (issue 40.4): each table a script keeps in docs/
is the table of the report that script writes; the quick-preset ones are regenerated here."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO
from systemprocs import env

sys.path.insert(0, str(REPO / "bench" / "experiments"))
import doc_tables  # noqa: E402


KEPT = ["reyd-zouaq-quick.md", "reyd-zouaq-cpu.md", "reyd-zouaq-retrieval.md", "reyd-zouaq-grid.md", "reyd-zouaq-default.md",
        "ictir-table4.md",
        "graphquestions-breakdown.md"]


def test_every_kept_table_in_the_docs_is_its_report_s_table():
    found = [m["src"] for _, m in doc_tables.blocks()]
    assert sorted(found) == sorted(f"bench/experiments/results/{name}" for name in KEPT)
    assert doc_tables.check() == []


def test_every_table_of_the_seed_papers_shapes_is_kept_by_its_script():
    """No hand-written result table is left in docs/baselines.md's seed-paper sections: every
    table there with a measure column sits in a block a script writes."""
    text = (REPO / "docs" / "baselines.md").read_text(encoding="utf-8")
    section = text[text.index("## Reproducing the seed papers' table shapes"):]
    outside = doc_tables.BLOCK.sub("", section)
    assert not [ln for ln in outside.splitlines() if ln.startswith("| ") and ("BLEU" in ln or "F1" in ln)]


def test_a_stale_table_is_named(tmp_path):
    (tmp_path / "reyd-zouaq-quick.md").write_text("# t\n\n| a |\n|---|\n| 1 |\n", encoding="utf-8")
    bad = doc_tables.check(results=tmp_path)
    assert any("reyd-zouaq-quick.md differs from what its script wrote" in b for b in bad), bad


@pytest.mark.slow  # annotates LC-QuAD 1.0 and runs the retrieval rows of the Reyd & Zouaq table
def test_the_quick_preset_tables_are_what_the_code_produces_now(shared_data, tmp_path):
    run = lambda *a: subprocess.run([*a], capture_output=True, text=True, env=env(), cwd=REPO, check=True)  # noqa: E731
    run(sys.executable, "-c", "from kgqa.cli import main; main()", "split",
        str(shared_data / "lcquad-1.0" / "train-data.json"), "--by", "iid", "--ratios", "0.8,0.2", "--seed", "0",
        "-o", str(tmp_path / "pair"))
    run(sys.executable, "bench/experiments/reyd_zouaq.py", "--train", str(tmp_path / "pair" / "train.json"),
        "--test", str(tmp_path / "pair" / "test.json"), "--systems", "retrieval", "--no-times", "--no-progress",
        "--out", str(tmp_path / "results" / "reyd-zouaq-quick.md"))
    assert [b for b in doc_tables.check(results=tmp_path / "results") if "reyd-zouaq-quick" in b] == []
    # seed 001's CPU-preset table (about 20 CPU-minutes of training) is not rerun: the table
    # rebuilt from the committed rows its runs wrote (keyed by the given files' contents, so
    # this folder's copy of the same split finds them) is the documented one, and its
    # retrieval rows are what the code produces now on the same 2,000 training items
    rows = REPO / "bench" / "experiments" / "results" / "reyd-zouaq-cpu.rows.jsonl"
    pair = ("--train", str(tmp_path / "pair" / "train.json"), "--test", str(tmp_path / "pair" / "test.json"))
    run(sys.executable, "bench/experiments/reyd_zouaq.py", *pair, "--cpu", "--threads", "1", "--table-only",
        "--rows", str(rows), "--out", str(tmp_path / "results" / "reyd-zouaq-cpu.md"))
    assert [b for b in doc_tables.check(results=tmp_path / "results") if "reyd-zouaq-cpu" in b] == []
    cpu = _table_rows(tmp_path / "results" / "reyd-zouaq-cpu.md")
    assert len(cpu) == 3 * 8  # 3 splits x (retrieval: 3 inputs, seq2seq: 3, seq2seq + copy: tagged, tag-end)
    run(sys.executable, "bench/experiments/reyd_zouaq.py", *pair, "--cpu", "--systems", "retrieval", "--no-progress",
        "--out", str(tmp_path / "results" / "cpu-retrieval.md"))
    fresh = {tuple(r[:3]): r[3:7] for r in _table_rows(tmp_path / "results" / "cpu-retrieval.md")}
    assert fresh == {tuple(r[:3]): r[3:7] for r in cpu if r[1] == "retrieval"}


def _rerun(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env(), cwd=REPO, check=True)


@pytest.mark.slow  # generates 540 CK25 questions, trains retrieval and simple four times (3-4 min on 2 cores)
def test_the_ictir_table_is_what_its_script_produces_now(shared_data, tmp_path):
    _rerun("bench/experiments/ictir_table4.py", "--data", str(shared_data), "--n", "400", "--systems", "retrieval,simple",
           "--no-times", "--out", str(tmp_path / "ictir-table4.md"))
    assert [b for b in doc_tables.check(results=tmp_path) if "ictir-table4" in b] == []


@pytest.mark.slow  # generates CK25 questions from 800 graph queries, trains retrieval and simple (several minutes)
def test_the_graphquestions_table_is_what_its_script_produces_now(shared_data, tmp_path):
    _rerun("bench/experiments/graphquestions_breakdown.py", "--data", str(shared_data), "--n", "800", "--seed", "0",
           "--systems", "retrieval,simple", "--commonness-bins", "3", "--no-times",
           "--out", str(tmp_path / "graphquestions-breakdown.md"))
    assert [b for b in doc_tables.check(results=tmp_path) if "graphquestions-breakdown" in b] == []


@pytest.mark.slow  # annotates LC-QuAD 1.0 and answers the retrieval rows of three splits
def test_the_retrieval_rows_of_the_reyd_zouaq_tables_are_what_the_code_produces_now(shared_data, tmp_path):
    """The retrieval table is rerun whole; the seq2seq grid (56 minutes of training) is not: its
    table is rebuilt from the committed rows file its runs wrote, and its retrieval rows are
    the retrieval table's."""
    _rerun("bench/experiments/reyd_zouaq.py", "--data", str(shared_data), "--systems", "retrieval",
           "--splits", "iid,uri,template", "--inputs", "raw,tagged", "--no-times", "--no-progress", "--work", str(tmp_path),
           "--out", str(tmp_path / "reyd-zouaq-retrieval.md"))
    assert [b for b in doc_tables.check(results=tmp_path) if "reyd-zouaq-retrieval" in b] == []
    rows = REPO / "bench" / "experiments" / "results" / "reyd-zouaq-grid.rows.jsonl"
    _rerun("bench/experiments/reyd_zouaq.py", "--data", str(shared_data), "--table-only", "--epochs", "6", "--seed", "0",
           "--threads", "1", "--preset", "small", "--splits", "iid,uri,template",
           "--systems", "retrieval,seq2seq,seq2seq+copy", "--inputs", "raw,tagged", "--set", "d_model=64",
           "--set", "ff=128", "--set", "max_len=32", "--work", str(tmp_path), "--rows", str(rows),
           "--out", str(tmp_path / "reyd-zouaq-grid.md"))
    assert [b for b in doc_tables.check(results=tmp_path) if "reyd-zouaq-grid" in b] == []
    kept = {tuple(r[:3]): r[3:] for r in _table_rows(tmp_path / "reyd-zouaq-grid.md") if r[1] == "retrieval"}
    fresh = {tuple(r[:3]): r[3:] for r in _table_rows(tmp_path / "reyd-zouaq-retrieval.md")}
    assert kept and all(fresh[k] == v[: len(fresh[k])] for k, v in kept.items()), (kept, fresh)


def _table_rows(path):
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in doc_tables.table_lines(path.read_text(encoding="utf-8"))[2:]]
