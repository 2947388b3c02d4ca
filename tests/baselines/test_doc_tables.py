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


def test_every_kept_table_in_the_docs_is_its_report_s_table():
    found = [m["src"] for _, m in doc_tables.blocks()]
    assert "bench/experiments/results/reyd-zouaq-quick.md" in found
    assert doc_tables.check() == []


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
