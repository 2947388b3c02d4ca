"""The command line keeps three house rules (issue 38, items 2 and 6), checked on the syntax
tree of every module of ``kgqa/cli/``; each checker is also fed a planted violation, to show it
can fail.

(a) it uses only the public API: no ``kgqa.api`` name outside ``kgqa.api.__all__`` (rendering
    lives in ``kgqa.report`` and ``kgqa/cli``);
(b) each flag is declared once: a flag several commands take is in ``kgqa.cli.options.SHARED``
    and declared with ``option()``; any other flag is spelled in one ``typer.Option`` only;
(c) one error path: no module exits with a non-zero status (``typer.Exit(n)``, ``sys.exit(n)``,
    ``SystemExit(n)``) or prints its own ``error:`` line, but ``kgqa.cli.errors.exit_with``.
"""

from __future__ import annotations

import ast

import pytest

from conftest import REPO

CLI = REPO / "kgqa" / "cli"
#: the one place that prints the error line and exits non-zero: (module, function)
HANDLER = ("errors.py", "exit_with")


def cli_sources() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(CLI.glob("*.py"))}


# --------------------------------------------------------------------------- (a) public API only


def api_names(source: str) -> set[str]:
    """The ``kgqa.api`` names a module uses: ``from kgqa.api import X``, ``api.X`` after
    ``from kgqa import api`` (or ``import kgqa.api as api``), and ``kgqa.api.X``."""
    tree = ast.parse(source)
    aliases = {"api"} if "from kgqa import api" in source else set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "kgqa.api":
            used |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == "kgqa":
            aliases |= {a.asname or a.name for a in node.names if a.name == "api"}
        elif isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.name == "kgqa.api" and a.asname}
        elif isinstance(node, ast.Attribute):
            v = node.value
            if isinstance(v, ast.Name) and v.id in aliases:
                used.add(node.attr)
            elif isinstance(v, ast.Attribute) and v.attr == "api" and isinstance(v.value, ast.Name) \
                    and v.value.id == "kgqa":
                used.add(node.attr)
    return used


def private_api_uses(sources: dict[str, str], public: set[str]) -> list[str]:
    return [f"kgqa/cli/{name}: kgqa.api.{n} is not in kgqa.api.__all__"
            for name, src in sources.items() for n in sorted(api_names(src) - public)]


def test_the_cli_uses_only_the_public_api():
    from kgqa import api

    assert private_api_uses(cli_sources(), set(api.__all__)) == []


def test_a_private_api_name_is_found():
    planted = {"x.py": "from kgqa import api\nfrom kgqa.api import evaluate, SafeConsole\n"
                       "def f():\n    api.print_question()\n    import kgqa\n    kgqa.api.kg_stuff()\n",
               "y.py": "import kgqa.api as A\nA.clean('x')\n"}
    found = private_api_uses(planted, {"evaluate"})
    assert found == ["kgqa/cli/x.py: kgqa.api.SafeConsole is not in kgqa.api.__all__",
                     "kgqa/cli/x.py: kgqa.api.kg_stuff is not in kgqa.api.__all__",
                     "kgqa/cli/x.py: kgqa.api.print_question is not in kgqa.api.__all__",
                     "kgqa/cli/y.py: kgqa.api.clean is not in kgqa.api.__all__"]


# --------------------------------------------------------------------------- (b) each flag once


def _is_typer_option(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == "Option"
         and isinstance(node.func.value, ast.Name) and node.func.value.id == "typer")
        or (isinstance(node.func, ast.Name) and node.func.id == "Option"))


def shared_flags(options_source: str) -> set[str]:
    """The keys of ``SHARED`` in ``options.py``."""
    for node in ast.walk(ast.parse(options_source)):
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == "SHARED" and isinstance(node.value, ast.Dict):
            return {f for k in node.value.keys if isinstance(k, ast.Constant) for f in k.value.split("/")}
    return set()


def repeated_flags(sources: dict[str, str]) -> list[str]:
    """Flags declared in more than one place: spelled in two ``typer.Option`` calls, or in one
    while ``SHARED`` has them; and ``option()`` of a flag ``SHARED`` lacks."""
    shared = shared_flags(sources.get("options.py", ""))
    where: dict[str, list[str]] = {}
    bad: list[str] = []
    for name, src in sources.items():
        for node in ast.walk(ast.parse(src)):
            if _is_typer_option(node):
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        for flag in arg.value.split("/"):
                            if flag.startswith("--"):
                                where.setdefault(flag, []).append(f"{name}:{node.lineno}")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "option" \
                    and node.args and isinstance(node.args[0], ast.Constant) \
                    and not set(str(node.args[0].value).split("/")) <= shared:
                bad.append(f"kgqa/cli/{name}:{node.lineno}: option({node.args[0].value!r}) is not in SHARED")
    for flag, places in sorted(where.items()):
        if flag in shared:
            bad.append(f"{flag} is in kgqa.cli.options.SHARED and declared again at {', '.join(places)}: "
                       f"use option({flag!r}) or its alias")
        elif len(places) > 1:
            bad.append(f"{flag} is declared {len(places)} times ({', '.join(places)}): add it to "
                       "kgqa.cli.options.SHARED and use option()")
    return bad


def test_each_flag_is_declared_once():
    sources = cli_sources()
    assert {"--timeout", "--no-cache", "--kg", "--format", "--lang", "--profile", "--measures"} \
        <= shared_flags(sources["options.py"])
    assert repeated_flags(sources) == []


def test_a_flag_declared_twice_is_found():
    options = 'SHARED = {"--timeout": ((), "Per-query timeout in seconds.")}\n'
    planted = {
        "options.py": options,
        "a.py": 'import typer\ndef f(x: float = typer.Option(30.0, "--timeout"),\n'
                '      c: bool = typer.Option(False, "--no-cache"), s: bool = typer.Option(None, "--stream/--no-stream")):\n'
                '    pass\n',
        "b.py": 'import typer\nfrom typing import Annotated\n'
                'def g(c: Annotated[bool, typer.Option("--no-cache")] = False, k: Annotated[str, option("--kg")] = ""):\n'
                '    pass\n',
    }
    assert repeated_flags(planted) == [
        "kgqa/cli/b.py:3: option('--kg') is not in SHARED",
        "--no-cache is declared 2 times (a.py:3, b.py:3): add it to kgqa.cli.options.SHARED and use option()",
        "--timeout is in kgqa.cli.options.SHARED and declared again at a.py:2: use option('--timeout') or its alias",
    ]
    assert repeated_flags({"options.py": options, "a.py": planted["a.py"].replace('"--timeout"', '"--timeouts"')}) \
        == []  # one declaration of each is fine


# --------------------------------------------------------------------------- (c) one error path


def _exit_code(node: ast.Call) -> ast.AST | None:
    """The status a ``typer.Exit`` / ``sys.exit`` / ``SystemExit`` call gives (None: not one)."""
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
    if not ((name == "Exit" and owner in ("typer", "click", None)) or (name == "exit" and owner == "sys")
            or (name == "SystemExit" and owner is None) or (name == "_exit" and owner == "os")):
        return None
    code = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "code"), None)
    return code if code is not None else ast.Constant(0)


def own_exits(sources: dict[str, str], handler: tuple[str, str] = HANDLER) -> list[str]:
    """Non-zero exits and printed ``error:`` lines outside the handler function."""
    bad: list[str] = []
    for name, src in sources.items():
        tree = ast.parse(src)
        allowed: set[int] = set()
        for fn in ast.walk(tree):
            if name == handler[0] and isinstance(fn, ast.FunctionDef) and fn.name in (handler[1], "say_error"):
                allowed |= {id(n) for n in ast.walk(fn)}
        for node in ast.walk(tree):
            if id(node) in allowed:
                continue
            if isinstance(node, ast.Call):
                code = _exit_code(node)
                if code is not None and not (isinstance(code, ast.Constant) and code.value in (0, None)):
                    bad.append(f"kgqa/cli/{name}:{node.lineno}: exits with a status of its own: raise InputError "
                               "or kgqa.cli.errors.Failure instead")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "[bold red]error:" in node.value:
                bad.append(f"kgqa/cli/{name}:{node.lineno}: prints its own error line: raise InputError or Failure")
    return sorted(bad, key=lambda b: (b.split(":")[0], int(b.split(":")[1])))


def test_one_error_path():
    sources = cli_sources()
    assert "def exit_with" in sources["errors.py"] and "exit_with(" in sources["__init__.py"]
    assert own_exits(sources) == []


def test_an_exit_of_its_own_is_found():
    planted = {
        "a.py": 'import sys, typer\ndef f(e):\n    err.print(f"[bold red]error:[/] {e}")\n    raise typer.Exit(2)\n',
        "b.py": 'import sys\ndef g():\n    sys.exit(1)\ndef h():\n    raise typer.Exit(code=3)\ndef v():\n'
                '    raise typer.Exit()\ndef w():\n    raise SystemExit(n)\n',
        "errors.py": 'import sys\ndef exit_with(e):\n    sys.exit(2)\ndef other():\n    sys.exit(2)\n',
    }
    assert own_exits(planted) == [
        "kgqa/cli/a.py:3: prints its own error line: raise InputError or Failure",
        "kgqa/cli/a.py:4: exits with a status of its own: raise InputError or kgqa.cli.errors.Failure instead",
        "kgqa/cli/b.py:3: exits with a status of its own: raise InputError or kgqa.cli.errors.Failure instead",
        "kgqa/cli/b.py:5: exits with a status of its own: raise InputError or kgqa.cli.errors.Failure instead",
        "kgqa/cli/b.py:9: exits with a status of its own: raise InputError or kgqa.cli.errors.Failure instead",
        "kgqa/cli/errors.py:5: exits with a status of its own: raise InputError or kgqa.cli.errors.Failure instead",
    ]


# --------------------------------------------------------------------------- the path itself


@pytest.mark.parametrize("argv, code, said", [
    (["datasets", "info", "no-such-dataset.json"], 2, "error: no-such-dataset.json"),
    (["split", "no-such.json", "--by", "iid", "-o", "out"], 2, "error: no-such.json"),
    (["migrate", "ck25", "--target-kg", "t.nt", "--links", "l.nt", "-o", "m.json", "--propose-constraints", "x"], 2,
     "error: --propose-constraints: expected both, object or none, got 'x'"),
])
def test_input_errors_exit_2_with_their_message(argv, code, said, capsys, tmp_path, monkeypatch):
    from kgqa.cli import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == code
    assert said in " ".join(capsys.readouterr().err.split())


def test_a_failed_validation_exits_1_without_an_error_line(tmp_path, capsys):
    from kgqa.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text('{"questions": [{"id": "1"}, {"id": "1"}]}', encoding="utf-8")  # a duplicate id: an error
    with pytest.raises(SystemExit) as e:
        main(["datasets", "validate", str(bad)])
    out, err = capsys.readouterr()
    assert e.value.code == 1 and "duplicate id '1'" in out and "1 file(s): 1 error(s)" in out and err == ""


def test_a_shared_flag_reads_the_same_in_every_command():
    """``--timeout`` is one declaration: each command that takes it spells it alike and says
    what the flag means (its own wording only where it differs, as ``system ask``'s HTTP wait)."""
    from kgqa.cli import command

    cmd = command()
    seen = {}
    for path in (("evaluate",), ("compare",), ("audit",), ("degrade",), ("generate",), ("system", "ask")):
        sub = cmd
        for p in path:
            sub = sub.commands[p]
        opt = next(p for p in sub.params if "--timeout" in getattr(p, "opts", ()))
        seen[" ".join(path)] = (tuple(opt.opts), opt.help)
    assert {v[0] for v in seen.values()} == {("--timeout",)}
    assert seen["evaluate"][1] == seen["audit"][1] == seen["degrade"][1] == "Per-query timeout in seconds."
    assert seen["system ask"][1] == "Seconds to wait for one response."


def test_ctrl_c_while_asking_a_live_system_says_its_resume_command_once(capsys, monkeypatch, tmp_path):
    """The live system's own resume command (with its journal) and status 130, through the one
    exit path; not followed by the generic hint, which would not name the journal."""
    from kgqa import api
    from kgqa.cli import main

    journal = tmp_path / "j.jsonl"

    def interrupted(*a, **kw):
        raise api.AskInterrupted(journal, 3, 10)

    monkeypatch.setattr(api, "evaluate_many", interrupted)
    with pytest.raises(SystemExit) as e:
        main(["evaluate", "demo", "--system", "http://127.0.0.1:9/qa", "--journal", str(journal)])
    err = " ".join(capsys.readouterr().err.split())
    assert e.value.code == 130
    assert f"3 of 10 questions answered, kept in the journal {journal}" in err
    assert f"kgqa evaluate demo --system http://127.0.0.1:9/qa --journal {journal}" in err
    assert err.count("interrupted:") == 1 and "resume with:" not in err
