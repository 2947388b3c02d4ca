"""The ``kgqa`` command line. Each command group lives in its own module and is added here."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer
from rich.markup import escape

from kgqa.cli._output import Console
from kgqa.cli.coercion import defer_coercion
from kgqa.cli.errors import Failure, InputError, exit_with

app = typer.Typer(
    name="kgqa",
    help="Benchmark question answering over knowledge graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)

#: Modules that add commands to ``app`` (each defines ``register(app)``), with the names of the
#: commands and command groups each adds: a call imports the module of the command it runs only
#: (tests/cli/test_cli_startup.py checks the names against what each module registers).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "kgqa.cli.datasets": ("datasets",),
    "kgqa.cli.evaluate": ("evaluate", "measures", "profiles", "demo"),
    "kgqa.cli.kg": ("kg", "cache", "audit"),
    "kgqa.cli.analysis": ("compare", "report", "show"),
    "kgqa.cli.make": ("split", "levels", "annotate"),
    "kgqa.cli.metaeval": ("degrade", "sensitivity", "axioms"),
    "kgqa.cli.system": ("system",),
    "kgqa.cli.web": ("web", "worker", "experiments"),
    "kgqa.cli.generate": ("generate", "paraphrases"),
    "kgqa.cli.migrate": ("migrate",),
    "kgqa.cli.baseline": ("baseline",),
}


def _version(value: bool) -> None:
    if value:
        from kgqa import __version__

        print(f"kgqa {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", "-V", help="Print kgqa's version and exit.",
                                 callback=_version, is_eager=True),
) -> None:
    """Benchmark question answering over knowledge graphs: load benchmarks and runs, execute SPARQL
    on a KG, score with every convention, analyze, report.

    Start with `kgqa demo`; then `kgqa evaluate DATASET RUN...`, `kgqa compare DATASET RUN RUN...`.
    """


_registered = False


def _register() -> None:
    """Add every command module's commands to ``app``, once per process: a second call (each
    build of the whole CLI calls it) adds nothing, so ``app`` never holds a command twice and
    building the CLI costs the same on the hundredth call as on the first. A call that runs one
    command registers its module into a copy instead (:func:`_only`), so ``app`` keeps the order
    of :data:`COMMAND_MODULES` whatever ran before in the process."""
    global _registered
    import importlib

    if _registered:
        return
    for mod in COMMAND_MODULES:
        importlib.import_module(mod).register(app)
    _registered = True


def _name(info) -> str | None:
    """The name typer gives a registered command or sub-app (None: typer derives it some other way)."""
    from typer.main import get_command_name

    name = getattr(info, "name", None)
    if isinstance(name, str):
        return name
    callback = getattr(info, "callback", None)
    if name is None and callback is not None and not hasattr(info, "typer_instance"):
        return get_command_name(callback.__name__)
    return None


def _only(name: str | None) -> typer.Typer:
    """A copy of ``app`` with only the command or command group ``name`` (a call's first argument)
    when that names one, else all of ``app``: typer turns every parameter of every command into a
    click parameter when it builds a group (about 5 ms a command, 34 commands), and a call of one
    command needs only its own (and only its module imported). ``kgqa``, ``kgqa --help``,
    ``--version``, shell completion and a mistyped name (its "did you mean") get the whole group."""
    import copy
    import importlib

    module = next((m for m, names in COMMAND_MODULES.items() if name in names), None)
    if module is not None:
        only = copy.copy(app)
        for guard in [k for k in vars(only) if k.startswith("_kgqa_")]:  # a module's "registered once" mark
            delattr(only, guard)
        only.registered_commands, only.registered_groups = [], []
        importlib.import_module(module).register(only)
        commands = [c for c in only.registered_commands if _name(c) == name]
        groups = [g for g in only.registered_groups if _name(g) == name]
        if len(commands) + len(groups) == 1:
            only.registered_commands, only.registered_groups = commands, groups
            return only
    _register()
    return app


def command(argv: Sequence[str] | None = None):
    """The click command of the whole CLI, with typed metavars and examples (see helptext); with
    ``argv`` (the arguments of one call), a group that holds only the command that ``argv`` runs
    (see :func:`_only`), which prints, parses and runs it exactly as the whole group does."""
    from typer.main import get_command

    from kgqa.cli.helptext import polish

    cmd = get_command(_only(argv[0] if argv else None))
    polish(cmd)
    defer_coercion(cmd)
    return cmd


class Interrupted(Exception):
    """Ctrl-C (or an error raised while Ctrl-C unwound, such as SQLite's "cannot rollback")."""


def _interrupted(e: BaseException) -> bool:
    """Whether ``e`` is, or was raised while handling, a KeyboardInterrupt."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def _guard(cmd) -> None:
    """Make Ctrl-C reach :func:`main` (typer turns it into a silent exit 130) and keep the
    error raised while it unwound from becoming a traceback."""
    invoke = cmd.invoke

    def guarded(ctx):
        try:
            return invoke(ctx)
        except Failure:  # said by the command (a live system's Ctrl-C prints its own resume command)
            raise
        except Exception as e:
            if _interrupted(e):
                raise Interrupted() from e
            raise
        except KeyboardInterrupt as e:
            raise Interrupted() from e

    cmd.invoke = guarded


def resume_hint(argv: list[str] | None) -> str:
    """What Ctrl-C prints: finished work is kept, and the exact command that resumes."""
    import shlex

    args = sys.argv[1:] if argv is None else argv
    return ("interrupted: finished query executions are in the result cache (and a live system's answers in "
            "its journal); resume with: " + shlex.join(["kgqa", *args]))


def main(argv: list[str] | None = None) -> None:
    for stream in (sys.stdout, sys.stderr):  # a lone surrogate read from JSON ("\\ud800") prints as
        if hasattr(stream, "reconfigure"):  # its escape instead of ending the command
            stream.reconfigure(errors="backslashreplace")
    cmd = command(sys.argv[1:] if argv is None else argv)
    _guard(cmd)
    try:
        cmd.main(args=argv, prog_name="kgqa", standalone_mode=True)
    except (InputError, Failure, OSError) as e:  # the one error path (kgqa.cli.errors)
        exit_with(e)
    except (Interrupted, KeyboardInterrupt):
        err.print(f"[yellow]interrupted:[/] {escape(resume_hint(argv).removeprefix('interrupted: '))}",
                  highlight=False, soft_wrap=not err.is_terminal)
        exit_with(Failure(None, 130))


if __name__ == "__main__":  # pragma: no cover
    main()
