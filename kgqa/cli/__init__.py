"""The ``kgqa`` command line. Each command group lives in its own module and is added here."""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from kgqa.model import InputError

app = typer.Typer(
    name="kgqa",
    help="Benchmark question answering over knowledge graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)

#: Modules that add commands to ``app`` (each defines ``register(app)``).
COMMAND_MODULES: list[str] = [
    "kgqa.cli.datasets",
    "kgqa.cli.evaluate",
    "kgqa.cli.kg",
    "kgqa.cli.analysis",
    "kgqa.cli.build",
    "kgqa.cli.validation",
    "kgqa.cli.system",
    "kgqa.cli.web",
    "kgqa.cli.generate",
    "kgqa.cli.migrate",
    "kgqa.cli.baseline",
]


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


def _register() -> None:
    import importlib

    for mod in COMMAND_MODULES:
        importlib.import_module(mod).register(app)


def command():
    """The click command of the whole CLI, with typed metavars and examples (see helptext)."""
    from typer.main import get_command

    from kgqa.cli.helptext import polish

    _register()
    cmd = get_command(app)
    polish(cmd)
    return cmd


def main(argv: list[str] | None = None) -> None:
    for stream in (sys.stdout, sys.stderr):  # a lone surrogate read from JSON ("\\ud800") prints as
        if hasattr(stream, "reconfigure"):  # its escape instead of ending the command
            stream.reconfigure(errors="backslashreplace")
    cmd = command()
    try:
        cmd.main(args=argv, prog_name="kgqa", standalone_mode=True)
    except InputError as e:
        err.print(f"[bold red]error:[/] {e}", highlight=False)
        sys.exit(2)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted:[/] finished query executions are in the result cache; "
                  "run the same command again to resume", highlight=False)
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()
