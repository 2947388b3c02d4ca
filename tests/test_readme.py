"""The README keeps its two set-up commands and its Python example (the measure and profile
reference moved to the documentation site, generated from the registries: tests/test_docs.py)."""

from __future__ import annotations

import re

from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_readme_opens_with_two_setup_commands():
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    assert blocks[0].strip().endswith("kgqa demo")
    assert "pytest" in blocks[1]
    ci = (REPO / ".ci" / "run").read_text()
    assert blocks[1].strip() in ci, ".ci/run must run the README's test command"
    # the README's command leaves out the slow tests; CI runs them after it, so it runs every test
    assert blocks[1].strip().endswith('-m "not slow"')
    slow = ci.index('.venv/bin/python -m pytest -n 2 --dist loadgroup -m slow\n')
    assert slow > ci.index(blocks[1].strip()) and "KGQA_REQUIRE_DATA=1" in ci[:slow]
    assert ".venv/bin/python -m pytest -n 2 --dist loadgroup -m slow" in README


def test_python_api_example_runs_and_prints_what_it_says(tmp_path, monkeypatch, capsys):
    """The example run in this process, as a notebook cell runs it, from the repository root with
    a fresh cache (``import kgqa`` staying cheap is tests/test_lazy_imports.py's claim)."""
    section = README[README.index("## Python API"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) == 5
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path))
    monkeypatch.chdir(REPO)
    program = code.rstrip().rsplit("\n", 1)
    program = program[0] + "\ndf = " + program[1] + "\nprint(df.shape, sorted(set(df.system)))\n"
    exec(compile(program, "README.md", "exec"), {"__name__": "__main__"})
    out = capsys.readouterr().out.split("\n")
    assert out[0] == "0.8556 30"
    assert out[1] == "(10, 8) ['strong', 'weak']"
