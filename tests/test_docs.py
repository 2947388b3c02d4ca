"""The documentation site (issue 27): it builds with ``mkdocs build --strict``, every page is in
the navigation, its examples run (``python`` blocks, and ``sh`` blocks command by command, from
the repository root), and the measure/profile reference is generated from the registries."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, run_cli

DOCS = REPO / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md"))
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.S | re.M)

sys.path.insert(0, str(REPO / "tools"))
import docs_hooks  # noqa: E402


def _blocks(lang: str) -> list[tuple[str, str]]:
    return [(str(p.relative_to(REPO)), m.group(2)) for p in PAGES
            for m in FENCE.finditer(p.read_text(encoding="utf-8")) if m.group(1) == lang]


#: pages whose examples the README's test command runs; CI's slow run runs every page's
QUICK_PAGES = ("docs/index.md", "docs/cli.md")


def _examples(lang: str) -> list:
    return [pytest.param(where, code, id=where, marks=() if where in QUICK_PAGES else pytest.mark.slow)
            for where, code in _blocks(lang)]


def _nav_pages(nav) -> list[str]:
    out = []
    for entry in nav:
        for v in (entry.values() if isinstance(entry, dict) else [entry]):
            out += _nav_pages(v) if isinstance(v, list) else [v]
    return out


def _env(tmp_path: Path) -> dict:
    return {**os.environ, "KGQA_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "100", "NO_COLOR": "1"}


def test_every_page_is_in_the_navigation_and_every_nav_entry_exists():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:", lambda *a: None)  # mkdocs.yml's !!python tags, if any
    nav = _nav_pages(yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)["nav"])
    pages = {str(p.relative_to(DOCS)) for p in PAGES}
    assert pages - set(nav) == set(), "pages missing from mkdocs.yml's nav"
    assert set(nav) - pages == set(), "nav entries without a page"


@pytest.mark.slow  # .ci/run builds the site strictly again after the tests
def test_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra (mkdocs) is not installed")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                       cwd=REPO, capture_output=True, text=True, env={**_env(tmp_path), "NO_MKDOCS_2_WARNING": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    measures = (tmp_path / "site" / "reference" / "measures" / "index.html").read_text(encoding="utf-8")
    assert "<code>GEK3</code>" in measures and "kgqa:measures" not in measures
    api = (tmp_path / "site" / "reference" / "python-api" / "index.html").read_text(encoding="utf-8")
    assert 'id="kgqa.api.evaluate"' in api and 'id="kgqa.api.Evaluator"' in api


def test_measure_and_profile_reference_come_from_the_registries():
    from kgqa.score import measures, profiles

    table = docs_hooks.measures_table()
    names = [d.name for d in measures.all_measures()]
    rows = table.splitlines()[2:]
    assert [r.split("|")[1].strip().strip("`") for r in rows] == names
    assert all(r.count(" | ") >= 4 and not r.rstrip(" |").endswith("|") for r in rows)
    ptable = docs_hooks.profiles_table()
    assert [r.split("|")[1].split("`")[1] for r in ptable.splitlines()[2:]] == profiles.names()
    assert "set_F_ndcg" in ptable and "Macro F1 QALD" in ptable


@pytest.mark.parametrize("where,code", _examples("python"))
def test_python_examples_run(where, code, tmp_path):
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=_env(tmp_path))
    assert r.returncode == 0, f"{where}:\n{code}\n{r.stderr[-3000:]}"


def _commands(block: str) -> list[str]:
    return [c.strip() for c in block.replace("\\\n", " ").splitlines() if c.strip() and not c.lstrip().startswith("#")]


@pytest.mark.parametrize("where,block", _examples("sh"))
def test_sh_examples_run(where, block, tmp_path, monkeypatch, capsys):
    """Each command of the block, from the repository root, through the ``main`` the ``kgqa``
    command calls, in this process (the kgqa process itself is tested in tests/cli/)."""
    monkeypatch.chdir(REPO)
    env = _env(tmp_path)
    for k in ("KGQA_CACHE_DIR", "COLUMNS", "NO_COLOR"):
        monkeypatch.setenv(k, env[k])
    for cmd in _commands(block):
        argv = shlex.split(cmd, comments=True)
        assert argv[0] == "kgqa", f"{where}: sh blocks run kgqa commands only: {cmd}"
        code, out, err = run_cli(capsys, *argv[1:])
        assert code == 0, f"{where}: {cmd}\n{out[-2000:]}\n{err[-2000:]}"
        assert out.strip(), f"{where}: {cmd} printed nothing"


def test_docs_have_runnable_examples():
    assert len(_blocks("python")) >= 3 and len(_blocks("sh")) >= 2
    quick = [where for where, _ in _blocks("python") + _blocks("sh") if where in QUICK_PAGES]
    assert {"docs/index.md"} <= set(quick), "the README's command runs no documentation example"


def test_readme_is_a_front_page_whose_links_exist():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < 250
    links = re.findall(r"\]\((docs/[^)#]+)\)", text)
    assert len(links) >= 10
    assert [link for link in links if not (REPO / link).is_file()] == []
