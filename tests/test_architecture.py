"""Data flows one way, checked on the syntax tree of every module of the package.

The one table below says which kgqa packages each package may import. Every import spelling
counts: ``import kgqa.x``, ``import kgqa.x.y as z``, ``from kgqa import x``, ``from kgqa.x.y
import z``, relative imports (``from ..score import evaluate``, ``from . import x``), imports
inside functions, and ``importlib.import_module("kgqa.x")`` with a literal name. A name that the
package root re-exports lazily (``from kgqa import evaluate``) counts as the module behind it.
A new top-level package or module fails until it is added to the table.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from conftest import REPO

SHARED = {"model", "sparql"}
FLOW = ["load", "execute", "score", "analyze", "report"]  # load(1) -> ... -> report(5)
BESIDE = ["build", "validate", "generate", "migrate", "store", "service", "systems"]
EVERYTHING = {"root", *SHARED, *FLOW, *BESIDE, "api", "web", "cli", "demo"}

#: package -> the kgqa packages it may import (itself and the lazy package root always allowed)
ALLOWED: dict[str, set[str]] = {
    "model": {"model"},
    "sparql": {"sparql", "model"},
    **{stage: {*SHARED, *FLOW[: i + 1]} for i, stage in enumerate(FLOW)},
    **{side: {*SHARED, *FLOW, "build", side} for side in BESIDE},
    "store": {*SHARED, *FLOW, "build", "api", "store"},  # an experiment is one call of the public pipeline
    "service": {*SHARED, *FLOW, "build", "systems", "service"},  # --model serves a trained reference system
    "api": {*SHARED, *FLOW, "api"},
    "web": {*SHARED, *FLOW, "api", "store", "web"},
    "cli": EVERYTHING,
    "demo": EVERYTHING,
    "root": EVERYTHING,
}


def _lazy_names(root: Path) -> dict[str, str]:
    """``kgqa._LAZY`` read from the syntax tree: name -> module it is imported from."""
    tree = ast.parse((root / "__init__.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


def _package_of(module: str, root: Path, lazy: dict[str, str]) -> str | None:
    """The top-level kgqa package of a dotted module name (None: not kgqa)."""
    parts = module.split(".")
    if parts[0] != "kgqa":
        return None
    if len(parts) == 1:
        return "root"
    return parts[1]


def _targets(node: ast.AST, module_parts: list[str], is_package: bool, root: Path,
             lazy: dict[str, str]) -> list[str]:
    """Top-level kgqa packages imported by one AST node."""
    out: list[str] = []
    if isinstance(node, ast.Import):
        for a in node.names:
            p = _package_of(a.name, root, lazy)
            if p:
                out.append(p)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module_parts if is_package else module_parts[:-1]
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        p = _package_of(mod, root, lazy)
        if p == "root":
            for a in node.names:
                if (root / a.name).is_dir() or (root / f"{a.name}.py").is_file():
                    out.append(a.name)
                elif a.name in lazy:
                    out.append(_package_of(lazy[a.name], root, lazy) or "root")
                else:
                    out.append("root")
        elif p:
            out.append(p)
    elif isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            p = _package_of(node.args[0].value, root, lazy)
            if p:
                out.append(p)
    return out


def violations(root: Path) -> list[str]:
    """Every import of ``root`` (a kgqa package directory) the table forbids, and every
    top-level package the table does not know."""
    lazy = _lazy_names(root)
    bad: list[str] = []
    for entry in sorted(root.iterdir()):
        name = entry.stem if entry.suffix == ".py" else entry.name
        if entry.name == "__init__.py" or entry.name.startswith(("_", ".")) and entry.name != "__main__.py":
            continue
        if not (entry.is_dir() and (entry / "__init__.py").exists()) and entry.suffix != ".py":
            continue
        if name not in ALLOWED and name != "__main__":
            bad.append(f"kgqa/{entry.name}: unknown package {name!r}; add it to ALLOWED in "
                       "tests/test_architecture.py (and to the layering in GUIDE/COMMON)")
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        is_package = path.name == "__init__.py"
        parts = ["kgqa", *rel.with_suffix("").parts]
        if is_package:
            parts = parts[:-1]
        pkg = "root" if len(parts) == 1 else parts[1]
        if pkg == "__main__":
            pkg = "cli"
        allowed = ALLOWED.get(pkg)
        if allowed is None:
            continue  # reported above
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for target in _targets(node, parts, is_package, root, lazy):
                if target not in allowed and target != "root":
                    bad.append(f"kgqa/{rel.as_posix()}:{node.lineno}: {pkg} imports kgqa.{target}")
    return bad


def test_every_import_follows_the_layering():
    bad = violations(REPO / "kgqa")
    assert not bad, "\n".join(bad)


def _plant(tmp_path: Path) -> Path:
    root = tmp_path / "kgqa"
    shutil.copytree(REPO / "kgqa", root, ignore=shutil.ignore_patterns("__pycache__", "data"))
    return root


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n" + text + "\n", encoding="utf-8")


def test_planted_forbidden_imports_are_caught_in_every_spelling(tmp_path):
    root = _plant(tmp_path)
    assert violations(root) == []
    _append(root / "load" / "jsonio.py", "from kgqa import report")
    _append(root / "build" / "levels.py", "from kgqa.cli.evaluate import parse_options")
    _append(root / "model" / "item.py", "def f():\n    import kgqa.score.evaluate as ev\n    return ev")
    _append(root / "score" / "rules.py", "from ..analyze import stats")
    _append(root / "execute" / "cache.py", "from .. import report")
    _append(root / "sparql" / "prefixes.py", "import importlib\nimportlib.import_module('kgqa.load')")
    _append(root / "analyze" / "stats.py", "from kgqa import evaluate")  # lazy re-export of kgqa.api
    _append(root / "report" / "latex.py", "from kgqa.validate.degrade import get")
    _append(root / "api.py", "from kgqa.cli import main")
    bad = violations(root)
    expected = [
        ("load/jsonio.py", "load imports kgqa.report"),
        ("build/levels.py", "build imports kgqa.cli"),
        ("model/item.py", "model imports kgqa.score"),
        ("score/rules.py", "score imports kgqa.analyze"),
        ("execute/cache.py", "execute imports kgqa.report"),
        ("sparql/prefixes.py", "sparql imports kgqa.load"),
        ("analyze/stats.py", "analyze imports kgqa.api"),
        ("report/latex.py", "report imports kgqa.validate"),
        ("api.py", "api imports kgqa.cli"),
    ]
    for where, what in expected:
        assert any(b.startswith(f"kgqa/{where}:") and b.endswith(what) for b in bad), (where, what, bad)
    assert len(bad) == len(expected), bad


def test_an_unknown_package_fails_with_where_to_add_it(tmp_path):
    root = _plant(tmp_path)
    (root / "newstage").mkdir()
    (root / "newstage" / "__init__.py").write_text("", encoding="utf-8")
    bad = violations(root)
    assert len(bad) == 1 and "unknown package 'newstage'" in bad[0] and "tests/test_architecture.py" in bad[0]


def test_the_table_covers_every_package_named_in_the_guide():
    assert set(ALLOWED) == EVERYTHING
    # a flow stage never imports a later stage or anything beside the flow
    for i, stage in enumerate(FLOW):
        assert not ALLOWED[stage] & {*FLOW[i + 1:], *BESIDE, "api", "web", "cli", "demo"}
