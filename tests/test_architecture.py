"""Data flows one way, checked on the syntax tree of every module of the package.

The one table below says which kgqa packages each package may import. Every way of reaching a
module counts:

- import statements in every spelling: ``import kgqa.x``, ``import kgqa.x.y as z``, ``from kgqa
  import x``, ``from kgqa.x.y import z``, relative imports (``from ..score import evaluate``,
  ``from . import x``), imports inside functions; a name that the package root re-exports lazily
  (``from kgqa import evaluate``) counts as the module behind it;
- attribute use through the package: ``import kgqa`` (or ``import kgqa as k``, or ``import
  kgqa.load``, which binds ``kgqa`` too) followed by ``kgqa.score.evaluate(...)``;
- ``importlib.import_module`` / ``__import__`` with a literal name, or one folded from literals
  (``"kgqa." + "report"``, an f-string of constants); a name computed at run time is refused,
  except in the modules of :data:`DYNAMIC_IMPORTS` (registries and plugin loaders), whose module
  names are literals elsewhere and are checked as such;
- a string literal that names a kgqa module (``"kgqa.score.query_measures"`` in
  ``MEASURE_MODULES``, ``FORMAT_MODULES``, ``COMMAND_MODULES``, a lazy-import table): a
  registry imports what its list names.

A new top-level package or module (``_``-prefixed ones included) fails until it is added to the
table.
"""

from __future__ import annotations

import ast
import functools
import re
import shutil
from pathlib import Path

import pytest

from conftest import REPO

SHARED = {"model", "sparql"}
FLOW = ["load", "execute", "score", "analyze", "report"]  # load(1) -> ... -> report(5)
BESIDE = ["make", "metaeval", "store", "service", "baselines"]
EVERYTHING = {"root", *SHARED, *FLOW, *BESIDE, "api", "web", "cli", "demo"}

#: package -> the kgqa packages it may import (itself and the lazy package root always allowed)
ALLOWED: dict[str, set[str]] = {
    "model": {"model"},
    "sparql": {"sparql", "model"},
    **{stage: {*SHARED, *FLOW[: i + 1]} for i, stage in enumerate(FLOW)},
    **{side: {*SHARED, *FLOW, "make", side} for side in BESIDE},
    "store": {*SHARED, *FLOW, "make", "api", "store"},  # an experiment is one call of the public pipeline
    "service": {*SHARED, *FLOW, "make", "baselines", "service"},  # --model serves a trained reference system
    "api": {*SHARED, *FLOW, "metaeval", "api"},  # kgqa degrade / sensitivity / axioms are one api call each
    "web": {*SHARED, *FLOW, "api", "store", "web"},
    "cli": EVERYTHING - set(FLOW),  # the command line reaches the stages through kgqa.api only
    "demo": EVERYTHING,
    "root": EVERYTHING,
}

#: Modules held to less than their package may import, and why.
MODULE_ALLOWED: dict[str, set[str]] = {
    # an experiment is one call of the public pipeline: the runner reaches the flow through kgqa.api only
    "store/runner.py": {*SHARED, "api", "store"},
}

#: Modules that may call ``importlib.import_module`` with a name computed at run time, and why.
DYNAMIC_IMPORTS = {
    "model/registry.py": "a registry imports the modules its list names (each list is a literal, checked)",
    "__init__.py": "the package root's lazy re-exports (_LAZY, a literal table, checked)",
    "api.py": "the API's lazy re-exports (_LAZY, a literal table, checked)",
    "cli/__init__.py": "the commands of COMMAND_MODULES (a literal list, checked)",
    "execute/cache.py": "code_fingerprint hashes the source of modules its callers name as literals",
    "service/sources.py": "a user's source module (--source module:object), not kgqa's",
    "make/generate/paraphrase.py": "a user's paraphraser (--paraphraser module:function), not kgqa's",
    "baselines/__init__.py": "the baseline kinds of KINDS (a literal table, checked); seq2seq only when torch is asked for",
}

#: Stage modules the command line imports while it is built, before any command runs, and why:
#: kgqa.api may not be imported then (building the CLI and printing help stay light,
#: tests/test_lazy_imports.py). An ``import`` or ``from ... import`` of exactly these modules.
CLI_BUILD_TIME = {
    "kgqa.score.profiles": "the --profile help names the built-in profiles (their files' names; nothing is parsed)",
}

_MODULE_NAME = re.compile(r"kgqa(\.[A-Za-z_][A-Za-z0-9_]*)+")


def _lazy_names(root: Path) -> dict[str, str]:
    """``kgqa._LAZY`` read from the syntax tree: name -> module it is imported from."""
    tree = ast.parse((root / "__init__.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


def _package_of(module: str) -> str | None:
    """The top-level kgqa package of a dotted module name (None: not kgqa)."""
    parts = module.split(".")
    if parts[0] != "kgqa":
        return None
    if len(parts) == 1:
        return "root"
    return parts[1]


def _is_module(root: Path, dotted: str) -> bool:
    """Whether ``dotted`` (``kgqa.x.y``) names a module or package under ``root``."""
    rel = Path(*dotted.split(".")[1:])
    return (root / rel).with_suffix(".py").is_file() or (root / rel / "__init__.py").is_file()


def _member(root: Path, name: str, lazy: dict[str, str]) -> str:
    """The package that ``kgqa.<name>`` reaches: a package or module, a lazy re-export's module,
    else the root itself."""
    if (root / name).is_dir() or (root / f"{name}.py").is_file():
        return name
    if name in lazy:
        return _package_of(lazy[name]) or "root"
    return "root"


def _folded(node: ast.AST) -> str | None:
    """A string expression built from literals only (``"a" + "b"``, ``f"kgqa.{'x'}"``), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _folded(node.left), _folded(node.right)
        return None if a is None or b is None else a + b
    if isinstance(node, ast.JoinedStr):
        parts = [_folded(v.value if isinstance(v, ast.FormattedValue) and v.conversion == -1 and v.format_spec is None
                         else v) for v in node.values]
        return None if any(p is None for p in parts) else "".join(parts)  # type: ignore[arg-type]
    return None


def _kgqa_names(nodes: list[ast.AST]) -> set[str]:
    """Names bound to the ``kgqa`` package itself (``import kgqa``, ``import kgqa.x``, ``import
    kgqa as k``)."""
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "kgqa" or (a.name.startswith("kgqa.") and a.asname is None):
                    out.add(a.asname or "kgqa")
    return out


def _may_import(node: ast.AST) -> bool:
    """Whether :func:`_targets` can find anything in ``node`` (the kinds of node it looks at)."""
    return (isinstance(node, (ast.Import, ast.ImportFrom, ast.Call))
            or (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name))
            or (isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(_MODULE_NAME.fullmatch(node.value))))


@functools.lru_cache(maxsize=None)
def _import_nodes(text: str, filename: str) -> tuple[set[str], list[ast.AST]]:
    """The names bound to ``kgqa`` and the nodes that may import, of one module's source: parsed
    once per text (the planted copies of the tree differ from it in a file or two)."""
    nodes = [n for n in ast.walk(ast.parse(text, filename=filename)) if _may_import(n)]
    return _kgqa_names(nodes), nodes


def _targets(node: ast.AST, module_parts: list[str], is_package: bool, root: Path,
             lazy: dict[str, str], kgqa_names: set[str]) -> list[str]:
    """Top-level kgqa packages reached by one AST node ("computed" for a dynamic import)."""
    out: list[str] = []
    if isinstance(node, ast.Import):
        for a in node.names:
            p = _package_of(a.name)
            if p:
                out.append(p)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module_parts if is_package else module_parts[:-1]
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        p = _package_of(mod)
        if p == "root":
            out += [_member(root, a.name, lazy) for a in node.names]
        elif p:
            out.append(p)
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in kgqa_names:
        out.append(_member(root, node.attr, lazy))
    elif isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name in ("import_module", "__import__") and node.args:
            text = _folded(node.args[0])
            if text is None:
                out.append("computed")
            elif _package_of(text):
                out.append(_package_of(text))  # type: ignore[arg-type]
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE_NAME.fullmatch(node.value) \
            and _is_module(root, node.value):
        out.append(_package_of(node.value))  # type: ignore[arg-type]
    return out


def _build_time(node: ast.AST) -> bool:
    """Whether ``node`` imports only modules of :data:`CLI_BUILD_TIME`."""
    if isinstance(node, ast.Import):
        return all(a.name in CLI_BUILD_TIME for a in node.names)
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        return node.module in CLI_BUILD_TIME or all(f"{node.module}.{a.name}" in CLI_BUILD_TIME for a in node.names)
    return False


def violations(root: Path) -> list[str]:
    """Every import of ``root`` (a kgqa package directory) the table forbids, every module
    imported by a computed name outside :data:`DYNAMIC_IMPORTS`, and every top-level package
    or module the table does not know."""
    lazy = _lazy_names(root)
    bad: list[str] = []
    for entry in sorted(root.iterdir()):
        name = entry.stem if entry.suffix == ".py" else entry.name
        if entry.name in ("__init__.py", "__main__.py", "__pycache__") or entry.name.startswith("."):
            continue
        if not (entry.is_dir() and (entry / "__init__.py").exists()) and entry.suffix != ".py":
            continue
        if name not in ALLOWED:
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
        allowed = MODULE_ALLOWED.get(rel.as_posix(), ALLOWED.get(pkg))
        if allowed is None:
            continue  # reported above
        kgqa_names, nodes = _import_nodes(path.read_text(encoding="utf-8"), f"kgqa/{rel.as_posix()}")
        for node in nodes:
            if pkg == "cli" and _build_time(node):
                continue
            for target in _targets(node, parts, is_package, root, lazy, kgqa_names):
                if target == "computed":
                    if rel.as_posix() not in DYNAMIC_IMPORTS:
                        bad.append(f"kgqa/{rel.as_posix()}:{node.lineno}: {pkg} imports a module by a computed "
                                   "name; use a literal (or add the module to DYNAMIC_IMPORTS with the reason)")
                elif target not in allowed and target != "root":
                    bad.append(f"kgqa/{rel.as_posix()}:{node.lineno}: {pkg} imports kgqa.{target}")
    return list(dict.fromkeys(bad))  # import_module("kgqa.x") is a call and a module-name literal: once


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
    _append(root / "make" / "levels.py", "from kgqa.cli.evaluate import parse_options")
    _append(root / "model" / "item.py", "def f():\n    import kgqa.score.evaluate as ev\n    return ev")
    _append(root / "score" / "rules.py", "from ..analyze import stats")
    _append(root / "execute" / "cache.py", "from .. import report")
    _append(root / "sparql" / "prefixes.py", "import importlib\nimportlib.import_module('kgqa.load')")
    _append(root / "analyze" / "stats.py", "from kgqa import evaluate")  # lazy re-export of kgqa.api
    _append(root / "report" / "latex.py", "from kgqa.metaeval.degrade import get")
    _append(root / "api.py", "from kgqa.cli import main")
    bad = violations(root)
    expected = [
        ("load/jsonio.py", "load imports kgqa.report"),
        ("make/levels.py", "make imports kgqa.cli"),
        ("model/item.py", "model imports kgqa.score"),
        ("score/rules.py", "score imports kgqa.analyze"),
        ("execute/cache.py", "execute imports kgqa.report"),
        ("sparql/prefixes.py", "sparql imports kgqa.load"),
        ("analyze/stats.py", "analyze imports kgqa.api"),
        ("report/latex.py", "report imports kgqa.metaeval"),
        ("api.py", "api imports kgqa.cli"),
    ]
    for where, what in expected:
        assert any(b.startswith(f"kgqa/{where}:") and b.endswith(what) for b in bad), (where, what, bad)
    assert len(bad) == len(expected), bad


#: The four spellings the first version of this checker missed, and the one it caught: each planted
#: in a fresh copy of the tree must be reported, exactly.
MISSED = {
    "a plain import": (
        lambda root: _append(root / "load" / "jsonio.py", "from kgqa.report import render"),
        [("load/jsonio.py", "load imports kgqa.report")]),
    "import kgqa, then kgqa.<stage>.x": (
        lambda root: (_append(root / "score" / "rules.py", "import kgqa\n\ndef f():\n    return kgqa.analyze.stats.x"),
                      _append(root / "model" / "item.py", "import kgqa.model as m\nimport kgqa.model.terms\n\n"
                                                          "def g():\n    return kgqa.load.registry")),
        [("score/rules.py", "score imports kgqa.analyze"), ("model/item.py", "model imports kgqa.load")]),
    "importlib.import_module with a computed or folded name": (
        lambda root: (_append(root / "load" / "formats.py",
                              "import importlib\n\ndef f(stage):\n    return importlib.import_module('kgqa.' + stage)"),
                      _append(root / "sparql" / "prefixes.py",
                              "import importlib\nimportlib.import_module('kgqa.' + 'report')")),
        [("load/formats.py", "load imports a module by a computed name; use a literal (or add the module to "
                             "DYNAMIC_IMPORTS with the reason)"),
         ("sparql/prefixes.py", "sparql imports kgqa.report")]),
    "a new _-prefixed top-level module": (
        lambda root: (root / "_helpers.py").write_text("X = 1\n", encoding="utf-8"),
        [("_helpers.py", "unknown package '_helpers'; add it to ALLOWED in tests/test_architecture.py "
                         "(and to the layering in GUIDE/COMMON)")]),
    "a CLI module importing a flow stage (it goes through kgqa.api)": (
        lambda root: (_append(root / "cli" / "analysis.py", "from kgqa.score.measures import parse_list"),
                      _append(root / "cli" / "evaluate.py", "def f():\n    from kgqa.score import profiles, measures"),
                      _append(root / "cli" / "datasets.py", "import kgqa.load.registry")),
        [("cli/analysis.py", "cli imports kgqa.score"), ("cli/datasets.py", "cli imports kgqa.load"),
         ("cli/evaluate.py", "cli imports kgqa.score")]),
    "the store's runner reaching a flow stage past kgqa.api": (
        lambda root: _append(root / "store" / "runner.py", "def f():\n    from kgqa.execute.live.client import secrets_of"),
        [("store/runner.py", "store imports kgqa.execute")]),
    "a module name added to a registry's list (MEASURE_MODULES)": (
        lambda root: _replace(root / "score" / "measures.py", '"kgqa.score.gerbil_subexperiments",',
                              '"kgqa.score.gerbil_subexperiments",\n    "kgqa.report.render",'),
        [("score/measures.py", "score imports kgqa.report")]),
}


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.mark.parametrize("case", list(MISSED))
def test_each_planted_violation_is_reported(tmp_path, case):
    root = _plant(tmp_path)
    plant, expected = MISSED[case]
    plant(root)
    bad = violations(root)
    assert len(bad) == len(expected), bad
    for (where, what), b in zip(sorted(expected), sorted(bad)):
        assert b.startswith(f"kgqa/{where}") and b.endswith(what), (b, where, what)


def test_an_unknown_package_fails_with_where_to_add_it(tmp_path):
    root = _plant(tmp_path)
    (root / "newstage").mkdir()
    (root / "newstage" / "__init__.py").write_text("", encoding="utf-8")
    bad = violations(root)
    assert len(bad) == 1 and "unknown package 'newstage'" in bad[0] and "tests/test_architecture.py" in bad[0]


def test_the_table_covers_every_package_named_in_the_guide():
    assert set(ALLOWED) == EVERYTHING
    assert not ALLOWED["cli"] & set(FLOW)  # the command line calls kgqa.api
    # a flow stage never imports a later stage or anything beside the flow
    for i, stage in enumerate(FLOW):
        assert not ALLOWED[stage] & {*FLOW[i + 1:], *BESIDE, "api", "web", "cli", "demo"}


#: Folder names that linters, drawing tools and ignore templates take for generated output.
GENERATED_NAMES = {"build", "dist", "out", "target", "site", "node_modules", "generated", "tmp", "venv", "env"}


def output_like_packages(root: Path) -> list[str]:
    """Every package under ``root`` whose folder name tools take for generated output."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("__init__.py")
                  if p.parent != root and p.parent.name.lower() in GENERATED_NAMES)


def test_no_package_is_named_like_generated_output(tmp_path):
    assert output_like_packages(REPO / "kgqa") == []
    root = _plant(tmp_path)
    (root / "make" / "build").mkdir()
    (root / "make" / "build" / "__init__.py").write_text("", encoding="utf-8")
    assert output_like_packages(root) == ["make/build/__init__.py"]
