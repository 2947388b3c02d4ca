"""The README documents every registered measure and profile and keeps its two commands."""

from __future__ import annotations

import re

from kgqa.score import measures, profiles
from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_every_measure_is_in_the_readme_table():
    missing = [d.name for d in measures.all_measures() if f"| `{d.name}` |" not in README]
    assert not missing, f"README measure table lacks {missing}"


def test_every_profile_is_in_the_readme_table():
    missing = [n for n in profiles.names() if not re.search(rf"\| `{re.escape(n)}`( \(default\))? \|", README)]
    assert not missing, f"README profile table lacks {missing}"


def test_readme_opens_with_two_setup_commands():
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    assert blocks[0].strip().endswith("kgqa demo")
    assert "pytest" in blocks[1]
    ci = (REPO / ".ci" / "run").read_text()
    assert blocks[1].strip() in ci, ".ci/run must run the README's test command"
