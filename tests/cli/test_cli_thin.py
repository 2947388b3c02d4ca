"""The command line is thin: every function in kgqa/cli parses, makes one library call and
renders. Measured on the syntax tree: no function body over MAX_LINES lines (the non-blank,
non-comment lines of its body, its own docstring excluded; a nested function's body counts in the
function around it, its decorators and parameter list do not: option declarations aside, a
command defined inside ``register()`` counts in ``register()``), and command modules do not
import each other (shared helpers live in kgqa/cli/_output.py, kgqa/cli/options.py and
kgqa/cli/errors.py)."""

from __future__ import annotations

import ast
import io
import tokenize

from conftest import REPO

MAX_LINES = 40
CLI = REPO / "kgqa" / "cli"
#: the modules every command module may import
SHARED_MODULES = {"kgqa.cli._output", "kgqa.cli.options", "kgqa.cli.errors"}
_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def code_lines(source: str) -> set[int]:
    """The numbers of the lines of ``source`` that hold code (not blank, not only a comment)."""
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in _NOT_CODE:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines


def _is_docstring(st: ast.stmt) -> bool:
    return isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)


def body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef, code: set[int]) -> int:
    """The lines of ``fn``'s body that :data:`MAX_LINES` bounds (``code``: :func:`code_lines`
    of its file)."""
    body = fn.body[1:] if _is_docstring(fn.body[0]) else fn.body
    if not body:
        return 0
    lines = set(range(body[0].lineno, (body[-1].end_lineno or body[-1].lineno) + 1))
    for st in body:
        for sub in ast.walk(st):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):  # its decorators and parameters
                start = min([sub.lineno, *(d.lineno for d in sub.decorator_list)])
                lines -= set(range(start, sub.body[0].lineno))
    return len(lines & code)


def measured(source: str) -> dict[str, int]:
    """:func:`body_lines` of every function of ``source``, by name."""
    code = code_lines(source)
    return {fn.name: body_lines(fn, code) for fn in ast.walk(ast.parse(source))
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))}


def cli_measures() -> dict[str, int]:
    """``path:function`` -> lines, for every function in kgqa/cli."""
    return {f"{path.relative_to(REPO).as_posix()}:{name}": n for path in sorted(CLI.rglob("*.py"))
            for name, n in measured(path.read_text(encoding="utf-8")).items()}


def test_no_cli_function_is_long():
    long = {f: n for f, n in cli_measures().items() if n > MAX_LINES}
    assert not long, long


NESTED = '''\
def f(a,
      b):
    """doc
    doc"""
    x = 1  # a comment after code counts

    # a comment line does not
    @app.command("g")
    def g(
        y: int = typer.Option(1, "--y",
                              help="option declarations aside"),
    ) -> None:
        """a nested docstring counts"""
        return [y,
                2]
    return x
'''


def test_the_measure_counts_what_it_should():
    assert measured(NESTED) == {"f": 5, "g": 2}  # g's own docstring is not counted in g


def test_the_measure_fails_a_long_register():
    body = "".join(f"        v{i} = {i}\n" for i in range(MAX_LINES))
    src = f"def register(app):\n    @app.command('x')\n    def x_cmd(\n        a: int = 1,\n    ):\n{body}"
    assert measured(src) == {"register": MAX_LINES, "x_cmd": MAX_LINES}
    assert measured(src + "        return v0\n")["register"] == MAX_LINES + 1


def test_command_modules_do_not_import_each_other():
    bad = []
    for path in sorted(CLI.glob("*.py")):
        if path.name == "__init__.py" or f"kgqa.cli.{path.stem}" in SHARED_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for m in mods:
                if m.startswith("kgqa.cli.") and m not in SHARED_MODULES:
                    bad.append(f"{path.name} imports {m}")
    assert not bad, bad
