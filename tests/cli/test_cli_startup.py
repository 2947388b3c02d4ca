"""The command line's start-up (issue 38: the quick suite starts kgqa about 300 times): a call
builds only the command it runs (kgqa.cli._only), and that command is the one the whole CLI
holds, with the same parameters and the same help. Not timed: bench/bench_startup.py is."""

from __future__ import annotations

import contextlib
import io

import pytest

from kgqa.cli import command, main


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
