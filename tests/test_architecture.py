"""Data flows one way, checked on the syntax tree of every module of the package.

The one table below says which kgqa packages each package may import. Every way of reaching a
module counts:

- import statements in every spelling: ``import kgqa.x``, ``import kgqa.x.y as z``, ``from kgqa
  import x``, ``from kgqa.x.y import z``, relative imports (``from ..score import evaluate``,
  ``from . import x``), imports inside functions; a name that the package root re-exports lazily
  (``from kgqa import evaluate``) counts as the module behind it;
- attribute use through the package: ``import kgqa`` (or ``import kgqa as k``, or ``import
  kgqa.load``, which binds ``kgqa`` too) followed by ``kgqa.score.evaluate(...)``;
- ``importlib.import_module`` / ``__import__`` / ``lazy.module`` (a kgqa module bound at a
  module's top and imported on first use) with a literal name, or one folded from literals
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

# one worker: the checks share the parsed modules (_tree), read once per process
pytestmark = pytest.mark.xdist_group("architecture")

SHARED = {"model", "sparql", "lazy"}  # kgqa.lazy: heavy libraries on first use, beside everything
FLOW = ["load", "execute", "score", "analyze", "report"]  # load(1) -> ... -> report(5)
BESIDE = ["make", "metaeval", "store", "service", "baselines"]
EVERYTHING = {"root", *SHARED, *FLOW, *BESIDE, "api", "web", "cli", "demo"}

#: package -> the kgqa packages it may import (itself and the lazy package root always allowed)
ALLOWED: dict[str, set[str]] = {
    "lazy": {"lazy"},
    "model": {"model", "lazy"},
    "sparql": {"sparql", "model", "lazy"},
    **{stage: {*SHARED, *FLOW[: i + 1]} for i, stage in enumerate(FLOW)},
    **{side: {*SHARED, *FLOW, "make", side} for side in BESIDE},
    "store": {*SHARED, *FLOW, "make", "api", "store"},  # an experiment is one call of the public pipeline
    "service": {*SHARED, *FLOW, "make", "baselines", "service"},  # --model serves a trained reference system
    "api": {*SHARED, *FLOW, "metaeval", "api"},  # kgqa degrade / sensitivity / axioms are one api call each
    "web": {*SHARED, *FLOW, "api", "store", "web"},
    # the command line reaches the stages through kgqa.api, and renders with kgqa.report (its console helpers)
    "cli": EVERYTHING - set(FLOW) | {"report"},
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
    "lazy.py": "lazy.module imports the kgqa module its caller names (a literal there, checked)",
    "api.py": "the API's lazy re-exports (_LAZY, a literal table, checked)",
    "cli/__init__.py": "the commands of COMMAND_MODULES (a literal list, checked)",
    "execute/cache.py": "code_fingerprint hashes the source of modules its callers name as literals",
    "service/sources.py": "a user's source module (--source module:object), not kgqa's",
    "make/generate/paraphraser.py": "a user's paraphraser (--paraphraser module:function), not kgqa's",
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


def _called(node: ast.Call) -> str:
    """The name a call calls (``f`` of ``f(...)`` and of ``x.f(...)``), "" for anything else."""
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _lazy_module_call(node: ast.AST) -> bool:
    """Whether ``node`` is ``lazy.module(...)`` (:func:`kgqa.lazy.module`: an import on first use)."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "module"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "lazy")


def _dynamic_import(node: ast.AST) -> bool:
    """``importlib.import_module(...)``, ``__import__(...)`` or ``lazy.module(...)``."""
    return isinstance(node, ast.Call) and (_called(node) in ("import_module", "__import__") or _lazy_module_call(node))


def _may_import(node: ast.AST) -> bool:
    """Whether :func:`_targets` can find anything in ``node`` (the kinds of node it looks at)."""
    return (isinstance(node, (ast.Import, ast.ImportFrom)) or _dynamic_import(node)
            or (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name))
            or (isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(_MODULE_NAME.fullmatch(node.value))))


@functools.lru_cache(maxsize=None)
def _tree(text: str, filename: str) -> ast.Module:
    """One module's syntax tree, parsed once per text: the checks below and the planted copies of
    the tree (which differ from it in a file or two) share it."""
    return ast.parse(text, filename=filename)


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SEEN = (ast.Import, ast.ImportFrom, ast.Call, ast.Attribute, ast.Constant, *_FUNCTIONS, ast.Lambda)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    """The fields of a node class that may hold nodes (all but the load/store context)."""
    if cls not in _CHILD_FIELDS:
        _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f != "ctx")
    return _CHILD_FIELDS[cls]


@functools.lru_cache(maxsize=None)
def _index(text: str, filename: str) -> tuple[list[ast.AST], list[ast.AST], list[ast.AST]]:
    """One walk (pre-order) of one module's syntax tree, shared by every check below: the nodes
    that may import (:func:`_may_import`), the function definitions, and the import statements
    (and ``lazy.module`` calls) inside a function or method body (nested ones and those under a
    lambda included). One walk of kgqa's 300,000 nodes instead of one per check (and a look only
    at the kinds of node the checks read) saves seconds a test run; parsing (``_tree``) is the
    rest."""
    may: list[ast.AST] = []
    functions: list[ast.AST] = []
    inner: list[ast.AST] = []
    stack: list[tuple[ast.AST, bool]] = [(_tree(text, filename), False)]
    while stack:
        node, in_function = stack.pop()
        cls = node.__class__
        below = in_function
        if cls in _SEEN:
            if _may_import(node):
                may.append(node)
                if in_function and (cls in (ast.Import, ast.ImportFrom) or _lazy_module_call(node)):
                    inner.append(node)
            if cls in _FUNCTIONS:
                functions.append(node)
            below = in_function or cls in _FUNCTIONS or cls is ast.Lambda
        for name in reversed(_child_fields(cls)):
            value = getattr(node, name, None)
            if value.__class__ is list:
                stack.extend((v, below) for v in reversed(value) if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append((value, below))
    return may, functions, inner


def _import_nodes(text: str, filename: str) -> tuple[set[str], list[ast.AST]]:
    """The names bound to ``kgqa`` and the nodes that may import, of one module's source."""
    nodes = _index(text, filename)[0]
    names = _kgqa_names(nodes)  # an attribute counts only on a name bound to kgqa
    return names, [n for n in nodes if not isinstance(n, ast.Attribute) or n.value.id in names]


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
        if _dynamic_import(node) and node.args:
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
    "lazy.module (imported on first use) with a forbidden or computed name": (
        lambda root: (_append(root / "load" / "jsonio.py", "from kgqa import lazy\n_html = lazy.module('kgqa.report.html')"),
                      _append(root / "score" / "rules.py", "from kgqa import lazy\n_x = lazy.module('kgqa.' + NAME)")),
        [("load/jsonio.py", "load imports kgqa.report"),
         ("score/rules.py", "score imports a module by a computed name; use a literal (or add the module to "
                            "DYNAMIC_IMPORTS with the reason)")]),
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
    assert ALLOWED["cli"] & set(FLOW) == {"report"}  # the command line calls kgqa.api, and renders
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


# --------------------------------------------------------------------------- import loops, private names

#: Import loops and ``_private`` imports across modules left in packages this check does not yet
#: hold to it, each with the reason (none left: every module of kgqa is held to both rules).
LOOPS_ALLOWED: dict[frozenset[str], str] = {}
#: Module prefixes whose ``_private`` imports are not yet held to the rule (none left).
PRIVATE_ALLOWED: dict[str, str] = {}


def _module_of(root: Path, dotted: str) -> str | None:
    """The file (relative to ``root``, posix) of the kgqa module ``dotted``, None when it is none."""
    rel = Path(*dotted.split(".")[1:])
    if (root / rel).with_suffix(".py").is_file():
        return rel.with_suffix(".py").as_posix()
    if (root / rel / "__init__.py").is_file():
        return (rel / "__init__.py").as_posix()
    return None


def _imported(node: ast.AST, parts: list[str], is_package: bool) -> list[tuple[str, str | None]]:
    """``(module, name)`` pairs one import statement reaches: ``import a.b`` -> ``("a.b", None)``,
    ``from a import b, c`` -> ``("a", "b"), ("a", "c")`` (relative imports resolved)."""
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = parts if is_package else parts[:-1]
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    return [(mod, a.name) for a in node.names]


def _modules(root: Path):
    """Every module of ``root``: (file relative to root, dotted parts, is a package, import nodes)."""
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        is_package = path.name == "__init__.py"
        parts = ["kgqa", *rel.with_suffix("").parts]
        if is_package:
            parts = parts[:-1]
        _, nodes = _import_nodes(path.read_text(encoding="utf-8"), f"kgqa/{rel.as_posix()}")  # parsed once per text
        yield rel.as_posix(), parts, is_package, [n for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))]


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the kgqa modules it imports, at module level or inside functions alike (``from
    kgqa.x import y``: the module ``kgqa.x.y`` when it is one, else ``kgqa.x``; a name the package
    root re-exports lazily: the module behind it). Importing a submodule also runs its package's
    ``__init__``, which is not counted: that is how packages work, not a loop."""
    lazy = _lazy_names(root)
    graph: dict[str, set[str]] = {}
    for rel, parts, is_package, nodes in _modules(root):
        out = graph.setdefault(rel, set())
        for node in nodes:
            for mod, name in _imported(node, parts, is_package):
                if not mod.startswith("kgqa"):
                    continue
                if mod == "kgqa" and name in lazy:
                    mod, name = lazy[name], None
                target = (_module_of(root, f"{mod}.{name}") if name else None) or _module_of(root, mod)
                if target and target != rel:
                    out.add(target)
    return graph


def import_loops(root: Path) -> list[list[str]]:
    """The import loops of ``root``: each strongly connected set of two or more modules of
    :func:`import_graph` (Tarjan), sorted."""
    graph = import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                loops.append(sorted(scc))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(loops)


def private_imports(root: Path) -> list[str]:
    """Every ``from x import _name`` of a kgqa module's private name into another module
    (``__dunder__`` names are not private)."""
    bad = []
    for rel, parts, is_package, nodes in _modules(root):
        for node in nodes:
            for mod, name in _imported(node, parts, is_package):
                if not mod.startswith("kgqa") or not name or not name.startswith("_") or name.startswith("__"):
                    continue
                if _module_of(root, f"{mod}.{name}"):  # a module (kgqa/x/_y.py) is not a private name
                    continue
                bad.append(f"kgqa/{rel}:{node.lineno}: imports the private name {name} of {mod}")
    return bad


def test_no_import_loops():
    found = import_loops(REPO / "kgqa")
    loops = [loop for loop in found if frozenset(loop) not in LOOPS_ALLOWED]
    assert not loops, "import loops (break each: move what both need into a third module):\n" + "\n".join(
        " <-> ".join(loop) for loop in loops)
    stale = [sorted(k) for k in LOOPS_ALLOWED if k not in {frozenset(loop) for loop in found}]
    assert not stale, f"allowed loops that are gone: remove them from LOOPS_ALLOWED: {stale}"


def test_no_private_names_imported_across_modules():
    bad = [b for b in private_imports(REPO / "kgqa")
           if not any(b.startswith(f"kgqa/{prefix}") for prefix in PRIVATE_ALLOWED)]
    assert not bad, "private names imported across modules (make them public or move them):\n" + "\n".join(bad)


def test_a_planted_import_loop_is_reported_through_a_function_level_import(tmp_path):
    root = _plant(tmp_path)
    before = import_loops(root)
    _append(root / "score" / "rules.py", "def f():\n    from kgqa.score.measures import parse_list\n    return parse_list")
    _append(root / "score" / "measures.py", "from kgqa.score import rules as _rules_again")
    _append(root / "report" / "fit.py", "def g():\n    from ..report import numbers\n    return numbers")
    _append(root / "report" / "numbers.py", "from . import fit")
    new = [loop for loop in import_loops(root) if loop not in before]
    assert ["report/fit.py", "report/numbers.py"] in new, new
    assert any({"score/measures.py", "score/rules.py"} <= set(loop) for loop in new), new


def test_a_planted_private_import_is_reported(tmp_path):
    root = _plant(tmp_path)
    before = set(private_imports(root))
    _append(root / "load" / "jsonio.py", "from kgqa.model.terms import _planted_private")
    _append(root / "score" / "rules.py", "def f():\n    from .measures import _also_private, __version__\n")
    _append(root / "report" / "fit.py", "from kgqa.report import numbers as _numbers  # a public name: fine")
    new = sorted(set(private_imports(root)) - before)
    assert len(new) == 2, new
    assert new[0].startswith("kgqa/load/jsonio.py:") and new[0].endswith("private name _planted_private of kgqa.model.terms")
    assert new[1].startswith("kgqa/score/rules.py:") and new[1].endswith(
        "private name _also_private of kgqa.score.measures")


#: Test modules about the whole house (layering, imports, docs, README, machine independence,
#: issue-wide fault lists) sit in tests/ itself; every other one sits in the folder that mirrors
#: the package it tests (tests/<package>/..., as kgqa/<package>/...).
HOUSE_TESTS = {"test_architecture", "test_lazy_imports", "test_machine_independence", "test_docs", "test_readme",
               "test_holes", "test_no_wrong_number"}


def misplaced_tests(tests: Path, package: Path) -> list[str]:
    """Test modules under ``tests`` whose folder mirrors no part of ``package``."""
    bad = []
    for p in sorted(tests.rglob("test_*.py")):
        rel = p.relative_to(tests).parent
        if rel == Path("."):
            ok = p.stem in HOUSE_TESTS
        else:
            ok = (package / rel).is_dir() or (package / rel).with_suffix(".py").is_file()
        if not ok:
            bad.append(p.relative_to(tests).as_posix())
    return bad


def test_tests_mirror_the_package(tmp_path):
    assert misplaced_tests(REPO / "tests", REPO / "kgqa") == []
    (tmp_path / "tests" / "nowhere").mkdir(parents=True)
    (tmp_path / "tests" / "nowhere" / "test_x.py").write_text("", encoding="utf-8")
    (tmp_path / "tests" / "test_loose.py").write_text("", encoding="utf-8")
    assert misplaced_tests(tmp_path / "tests", REPO / "kgqa") == ["nowhere/test_x.py", "test_loose.py"]


#: A function longer than this many lines says why, in a ``# long function: ...`` comment
#: right above it (issue 38: no monoliths without a reason).
MAX_FUNCTION_LINES = 80


def long_functions(root: Path) -> list[str]:
    """Every function of ``root`` over :data:`MAX_FUNCTION_LINES` lines without its reason."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        for node in _index(text, f"kgqa/{path.relative_to(root).as_posix()}")[1]:  # parsed and walked once
            if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                first = min([d.lineno for d in node.decorator_list] + [node.lineno]) - 1
                if first == 0 or "# long function: " not in lines[first - 1]:
                    bad.append(f"{path.relative_to(root).as_posix()}:{node.lineno} {node.name} "
                               f"({node.end_lineno - node.lineno + 1} lines)")
    return bad


def test_no_function_is_long_without_its_reason(tmp_path):
    assert long_functions(REPO / "kgqa") == []
    root = tmp_path / "kgqa"  # a small tree: the check reads every module's syntax, nothing else
    (root / "model").mkdir(parents=True)
    (root / "model" / "item.py").write_text("def short():\n    return 1\n", encoding="utf-8")
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    _append(root / "model" / "item.py", f"def monolith():\n{body}\n")
    (bad,) = long_functions(root)
    assert bad.startswith("model/item.py:") and bad.endswith(f" monolith ({MAX_FUNCTION_LINES + 1} lines)")
    _append(root / "model" / "item.py", "")  # a reason above it makes it pass
    text = (root / "model" / "item.py").read_text(encoding="utf-8").replace("def monolith", "# long function: a test\ndef monolith")
    (root / "model" / "item.py").write_text(text, encoding="utf-8")
    assert long_functions(root) == []


# --------------------------------------------------------------------------- imports at module top

#: Modules that may import inside a function, and why (issue 38: imports at module top, so a
#: module's dependencies are read from its first lines). ``kgqa/lazy.py`` and ``kgqa/cli/`` may
#: import anything there; a module added here may import only kgqa modules there. Everywhere else
#: a standard library is imported at the top, a heavy third-party library through a function of
#: :mod:`kgqa.lazy`, and a kgqa module a light path must not load (the API's later stages, the
#: registry behind a dataset name) is bound at the top with ``lazy.module("kgqa.x")``, imported on
#: its first use: a ``lazy.module`` call inside a function is reported like an import there.
FUNCTION_IMPORTS_ALLOWED: dict[str, str] = {
    "lazy.py": "the lazy-import module: one function per heavy library, which imports it on first use",
    "cli/": "the command line's start-up path: building it and printing help import no stage "
            "(tests/test_lazy_imports.py); each command imports what it runs",
}


def _allowance(rel: str, allowed: dict[str, str]) -> str | None:
    """The key of ``allowed`` that covers the module ``rel`` (a file, or a folder ending in /)."""
    return next((k for k in allowed if rel == k or (k.endswith("/") and rel.startswith(k))), None)


def function_imports(root: Path, allowed: dict[str, str] | None = None) -> list[str]:
    """Every import statement inside a function of ``root`` (a kgqa package directory) that
    ``allowed`` (default :data:`FUNCTION_IMPORTS_ALLOWED`) does not cover, and every entry of it
    that covers no such import any more (stale)."""
    allowed = FUNCTION_IMPORTS_ALLOWED if allowed is None else allowed
    bad: list[str] = []
    used: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        key = _allowance(rel, allowed)
        for node in _index(path.read_text(encoding="utf-8"), f"kgqa/{rel}")[2]:  # parsed and walked once
            internal = isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").split(".")[0] == "kgqa") \
                or isinstance(node, ast.Import) and all(a.name.split(".")[0] == "kgqa" for a in node.names)
            if key is not None and (key in ("lazy.py", "cli/") or internal):
                used.add(key)
                continue
            if isinstance(node, ast.Call):
                bad.append(f"kgqa/{rel}:{node.lineno}: `{ast.unparse(node)}` inside a function; bind it at the "
                           "module top (`_name = lazy.module(...)`: it is imported on first use all the same)")
                continue
            what = "a kgqa module" if internal else "a library: a heavy one through kgqa.lazy, any other"
            bad.append(f"kgqa/{rel}:{node.lineno}: `{ast.unparse(node)}` inside a function; import {what} at "
                       "the module top (or list the module in FUNCTION_IMPORTS_ALLOWED with the reason)")
    bad += [f"FUNCTION_IMPORTS_ALLOWED[{k!r}] covers no import inside a function any more: remove it"
            for k in allowed if k not in used and (root / k).exists()]
    return bad


def test_imports_sit_at_module_top():
    bad = function_imports(REPO / "kgqa")
    assert not bad, "\n".join(bad)


def test_a_planted_function_import_is_reported(tmp_path):
    root = tmp_path / "kgqa"  # a small tree: the check reads every module's syntax, nothing else
    files = {
        "lazy.py": "def numpy():\n    import numpy\n    return numpy\n",
        "cli/evaluate.py": "def run():\n    from kgqa import api\n    import json\n",
        "api.py": "import json\n\ndef ok():\n    from kgqa.execute import executor\n    from ..report import html\n\n"
                  "def heavy():\n    import pandas as pd\n",
        "model/item.py": "import re\n\nclass Item:\n    def method(self):\n        from kgqa.model.terms import IRI\n\n"
                         "async def fetch():\n    import httpx\n\ndef outer():\n    def inner():\n        import json\n",
        "load/rdf.py": "try:\n    import resource\nexcept ImportError:\n    resource = None\nimport sys\n",
        "load/formats.py": "from kgqa import lazy\n\n_registry = lazy.module('kgqa.load.registry')\n\n"
                           "def find(name):\n    return lazy.module('kgqa.load.registry').find(name)\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    allowed = {"lazy.py": "x", "cli/": "x", "api.py": "x", "score/evaluate.py": "x"}
    bad = function_imports(root, allowed)
    assert [b.split(":")[0] + ":" + b.split(":")[1] for b in bad if b.startswith("kgqa/")] == [
        "kgqa/api.py:8", "kgqa/load/formats.py:6", "kgqa/model/item.py:5", "kgqa/model/item.py:8",
        "kgqa/model/item.py:12"]
    assert "`import pandas as pd` inside a function; import a library: a heavy one through kgqa.lazy" in bad[0]
    assert "`lazy.module('kgqa.load.registry')` inside a function; bind it at the module top" in bad[1]
    assert "`from kgqa.model.terms import IRI` inside a function; import a kgqa module at the module top" in bad[2]
    assert bad[5:] == []  # score/evaluate.py is not in the tree: not reported as stale
    (root / "score").mkdir()
    (root / "score" / "evaluate.py").write_text("import json\n", encoding="utf-8")
    assert function_imports(root, allowed)[-1] == (
        "FUNCTION_IMPORTS_ALLOWED['score/evaluate.py'] covers no import inside a function any more: remove it")
    (root / "model" / "item.py").write_text("import re\n", encoding="utf-8")
    (root / "load" / "formats.py").write_text(files["load/formats.py"].split("\n\ndef")[0] + "\n", encoding="utf-8")
    (root / "api.py").write_text("def ok():\n    from kgqa.execute import executor\n", encoding="utf-8")
    (root / "score" / "evaluate.py").write_text("def f():\n    from kgqa.score import lean\n", encoding="utf-8")
    assert function_imports(root, allowed) == []
