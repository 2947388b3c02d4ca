"""The command line's start-up (issue 38: the quick suite starts kgqa about 300 times): a call
builds only the command it runs (kgqa.cli._only), and that command is the one the whole CLI
holds, with the same parameters and the same help; parameter values pass through
kgqa.cli.coercion exactly as typer's own (pydantic) coercion makes them. Not timed:
bench/bench_startup.py is."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from hypothesis import HealthCheck, given, settings, strategies as st
try:  # typer >= 0.29: its click, and the pydantic coercion kgqa.cli.coercion stands in for
    from typer._click import Context
    from typer._click.exceptions import BadParameter
    from typer._coercion import build_runtime_param
except ImportError:  # pragma: no cover - an older typer checks values without pydantic
    from click import Context
    from click.exceptions import BadParameter
    build_runtime_param = None

from conftest import REPO
from kgqa.cli import COMMAND_MODULES, command, main
from kgqa.cli.coercion import coerce


def _paths(cmd, prefix: tuple[str, ...] = ()):
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        yield (*prefix, name)
        yield from _paths(sub, (*prefix, name))


FULL = command()
PATHS = list(_paths(FULL))


def _find(cmd, path):
    for name in path:
        cmd = cmd.commands[name]
    return cmd


def _shape(cmd) -> list:
    """What a user sees of a command: its help and every parameter's names, kind, type, default,
    help and flags, and the same of its subcommands."""
    params = [(type(p).__name__, p.name, tuple(p.opts), tuple(p.secondary_opts), repr(p.default),
               getattr(p, "help", None), p.required, p.multiple, p.nargs, getattr(p, "is_flag", None),
               getattr(p, "hidden", None), repr(getattr(p, "type", None)),
               repr(getattr(getattr(p, "type_descriptor", None), "annotation", None)), p.metavar) for p in cmd.params]
    subs = {n: _shape(s) for n, s in (getattr(cmd, "commands", None) or {}).items()}
    return [cmd.name, cmd.help, cmd.short_help, cmd.epilog, getattr(cmd, "rich_help_panel", None), params, subs]


def _help(argv: list[str]) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        with pytest.raises(SystemExit) as e:
            main(argv)
    assert e.value.code == 0, buf.getvalue()
    return buf.getvalue()


def test_a_call_builds_only_its_command_and_it_is_the_whole_clis():
    assert len(FULL.commands) > 20 and len(PATHS) > 40
    for name in FULL.commands:
        only = command([name, "--help"])
        assert list(only.commands) == [name]
        assert _shape(only.commands[name]) == _shape(FULL.commands[name]), name
        assert [p.name for p in only.params] == [p.name for p in FULL.params]


def test_each_command_module_adds_the_commands_it_lists():
    """A call imports only the module COMMAND_MODULES names for its command: the names must be
    what the module's ``register`` adds, and all of them the whole CLI's."""
    listed = []
    for module, names in COMMAND_MODULES.items():
        probe = typer.Typer()
        importlib.import_module(module).register(probe)
        added = [c.name or c.callback.__name__ for c in probe.registered_commands] + \
                [g.name for g in probe.registered_groups]
        assert sorted(added) == sorted(names), module
        listed += names
    assert sorted(listed) == sorted(FULL.commands)


@pytest.mark.parametrize("argv", [[], ["--help"], ["--version"], ["-V"], ["evaluatee"], ["--help", "evaluate"]])
def test_no_command_named_builds_the_whole_cli(argv):
    assert list(command(argv).commands) == list(FULL.commands)


def test_every_help_reads_as_the_whole_cli_prints_it():
    """``kgqa PATH --help`` (one command built) prints what the whole CLI prints for it."""
    for path in [(), *PATHS]:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            with pytest.raises(SystemExit):
                FULL.main(args=[*path, "--help"], prog_name="kgqa", standalone_mode=True)
        assert _help([*path, "--help"]) == buf.getvalue(), path


def test_a_mistyped_command_still_gets_its_did_you_mean(capsys):
    with pytest.raises(SystemExit) as e:
        main(["evaluat"])
    assert e.value.code == 2
    assert "evaluate" in capsys.readouterr().err


# --------------------------------------------------------------------------- coercion without pydantic

typer_coerces_with_pydantic = pytest.mark.skipif(build_runtime_param is None,
                                                 reason="this typer (< 0.29) checks values without pydantic")

def _params():
    """A parameter of each kind among every command's (annotation, settings, default)."""
    out = {}
    for path in [(), *PATHS]:
        cmd = _find(FULL, path)
        for p in cmd.params:
            if hasattr(p, "type_descriptor"):
                i = p.type_descriptor.parameter_info
                key = (repr(p.type_descriptor.annotation), repr(p.default), p.multiple, p.nargs, i.parser, i.min, i.max,
                       i.clamp, i.case_sensitive, i.exists, i.file_okay, i.dir_okay, i.writable, i.readable,
                       i.resolve_path, i.allow_dash, i.path_type)
                out.setdefault(key, (cmd, p))
    return list(out.values())


PARAMS = _params()
VALUES = [None, "", "5", "-3", "0", "-0", "007", "+4", " 5", "5 ", "1_000", "1.5", "-2.25", "1e3", ".5", "5.",
          "nan", "inf", "abc", "-", "json", "JSON", "Json", "md", "table", "csv", "latex", "tsv", "x.json",
          "runs/a.json", "/tmp", "~/x", str(Path(__file__)), "True", "false", "yes", 0, 7, -1, 10**6, 0.5, 3.0,
          True, False, Path("x.json"), Path("/tmp")]


def _real(p):
    """typer's own coercion of ``p`` (pydantic), built afresh."""
    return build_runtime_param(p.type_descriptor)


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


def _check(cmd, p, value) -> bool:
    """Where kgqa's coercion answers, typer's gives the same value of the same type (else kgqa
    hands the value to typer: nothing to compare). True when kgqa answered."""
    ctx = Context(cmd)
    try:
        fast = coerce(p, value, ctx)
    except Exception:
        return False
    real = _real(p).coerce(value, param=p, ctx=ctx)
    assert _same(fast, real), (cmd.name, p.name, p.type_descriptor.annotation, value, fast, real)
    return True


@typer_coerces_with_pydantic
def test_kgqa_coerces_a_value_only_to_what_typer_makes_of_it():
    answered = 0
    for cmd, p in PARAMS:
        many = p.multiple or p.nargs == -1
        values = [p.default, *VALUES]
        if many:
            values += [tuple(v for v in VALUES[i:i + 3] if v is not None) for i in range(0, len(VALUES), 3)]
            values += [[v] for v in VALUES if v is not None] + [(), []]
        for v in values:
            answered += _check(cmd, p, v)
    assert len(PARAMS) > 20 and answered > 15 * len(PARAMS)  # most values never reach pydantic


@typer_coerces_with_pydantic
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(PARAMS), st.one_of(st.text(max_size=8), st.text("0123456789.-+e ", max_size=6),
                                          st.integers(), st.floats(), st.lists(st.text(max_size=4), max_size=3)))
def test_any_value_is_coerced_as_typer_coerces_it(param, value):
    _check(*param, value)


@typer_coerces_with_pydantic
def test_a_bad_value_gets_typers_own_error(capsys):
    """A value kgqa does not pass through goes to typer's coercion, and its message."""
    with pytest.raises(SystemExit) as e:
        main(["evaluate", "demo", "x.json", "--timeout", "soon"])
    assert e.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    cmd = FULL.commands["evaluate"]
    timeout = next(p for p in cmd.params if p.name == "timeout")
    with pytest.raises(BadParameter) as typers:
        _real(timeout).coerce("soon", param=timeout, ctx=Context(cmd))
    assert f"Invalid value for '--timeout': {' '.join(typers.value.message.split())}" in err


def test_running_a_command_imports_no_pydantic_httpx_or_numpy(tmp_path):
    """typer >= 0.29 checks parameters with pydantic (0.15-0.25 s a process): kgqa's own values
    never need it (kgqa.cli.coercion); a KG file needs no HTTP client, a table no NumPy."""
    code = ("import sys, io, contextlib\nfrom kgqa.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(['evaluate', 'kgqa/demo/data/questions.json', 'kgqa/demo/data/runs/strong.json',"
            " '-f', 'json', '--timeout', '5', '-o', sys.argv[1]])\n"
            "    except SystemExit as e:\n        assert not e.code, e.code\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'httpx', 'numpy')))")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out.json")], capture_output=True, text=True,
                          cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split("\n")[-2] == "[]"
    assert (tmp_path / "out.json").is_file()
