"""Output helpers shared by the command modules: consoles, writing text to a file or stdout,
printing rich renderables, saving evaluations and printing breakdowns; and the live-system
options shared by ``kgqa evaluate --system`` and ``kgqa system ask`` (headers, the command that
resumes after Ctrl-C)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

from rich.markup import escape

from kgqa.cli.errors import Failure
from kgqa.model import InputError
from kgqa.report.term import SafeConsole

if TYPE_CHECKING:
    from kgqa.api import Evaluation


class Console:
    """The command line's console: a :class:`kgqa.report.term.SafeConsole` (it never prints a
    control character taken from data) made on first use."""

    #: every console of the command line (each command module makes its own ``out``/``err``)
    _made: "weakref.WeakSet[Console]" = weakref.WeakSet()

    def __init__(self, **options: Any):
        self._options = options
        self._console: Any = None
        Console._made.add(self)

    def __getattr__(self, name: str) -> Any:  # everything but the two fields above
        if name.startswith("_"):
            raise AttributeError(name)
        if self._console is None:
            self._console = SafeConsole(**self._options)
        return getattr(self._console, name)

    @classmethod
    def reset_all(cls) -> None:
        """Forget every console made so far: each reads the terminal (``COLUMNS``) again at its
        next use. One process is one command, so only a caller of :func:`kgqa.cli.main` that runs
        several commands at different widths in one process (the tests) needs it."""
        for c in list(cls._made):
            c._console = None


out = Console()
err = Console(stderr=True)


def wide() -> Console:
    """The console, at least 130 columns wide: legible tables (and identical output) when piped."""
    return Console(width=max(out.width, 130)) if out.width < 130 else out


def say(console: Console, text: str, label: str = "") -> None:
    """One message (``label`` is markup, ``text`` is shown as written): wrapped at word
    boundaries in a terminal, kept on one line when piped (one greppable line per message)."""
    console.print(f"{label}{escape(text)}", highlight=False, soft_wrap=not console.is_terminal)


def write_text(text: str, output: Optional[Path]) -> None:
    if output is not None:
        from kgqa.report.output import write_output

        write_output(output, [text])
        err.print(f"wrote {output}", highlight=False)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def save_evaluations(evals: Sequence[Evaluation], path: Path) -> None:
    from kgqa.api import save_evaluations as save

    save(evals, path)
    err.print(f"saved {len(evals)} evaluation(s) to {path}", highlight=False)


def emit_breakdowns(evals: Sequence[Evaluation], by: Sequence[str], bin_specs: Sequence[str] | None, fmt: str,
                    output: Optional[Path], seed: int = 0) -> None:
    """``kgqa evaluate --by``: rich tables (``table``, stdout) or Markdown appended to ``output``."""
    from kgqa.report.console import breakdown_report

    rendered = breakdown_report(evals, by, bin_specs, "table" if fmt == "table" and output is None else fmt, seed=seed)
    if not isinstance(rendered, str):
        out.print(rendered)
    elif output is not None:
        from kgqa.report.output import write_output

        before = output.read_text(encoding="utf-8") if output.exists() else ""
        write_output(output, [before, rendered])
    else:
        sys.stdout.write(rendered)


def print_or_write(rendered: object, output: Optional[Path], console: Console | None = None) -> None:
    """Text to ``output`` (or stdout); rich renderables (a list: one after the other) to the console."""
    if isinstance(rendered, str):
        write_text(rendered, output)
        return
    from kgqa.report.console import print_rendered

    print_rendered(console or out, rendered, wide)


def record(store: str, dataset: str, runs: list[str], evals, **settings) -> None:
    """``kgqa evaluate ... --store``: record the evaluations of run files (``PATH`` or
    ``NAME=PATH``: the path is stored, the name is the run's) as finished experiments. A live
    system's evaluation (``--system``, after the files) has no run file to record and is named."""
    from kgqa.store.record import record_evaluations

    ids = record_evaluations(open_store(store), dataset, runs, list(evals)[:len(runs)], **settings)
    if ids:
        err.print(f"recorded experiment(s) {', '.join(ids)} in {store}", highlight=False)
    for e in list(evals)[len(runs):]:
        say(err, f"not recorded in {store}: {e.run} (a live system's answers have no run file to store)")


def serve_demo(port: int, host: str, store_path: Optional[str] = None) -> None:
    """``kgqa demo --web``: evaluate the demo runs into a fresh store and serve it."""
    from kgqa.web.app import Settings, default_kgs
    from kgqa.web.demo import demo_store
    from kgqa.web.serve import serve

    made = None if store_path else tempfile.mkdtemp(prefix="kgqa-demo-")  # removed when the server stops
    path = store_path or str(Path(made) / "experiments.sqlite")
    try:
        kgs = default_kgs()
        store, ids = demo_store(path, kgs)
        err.print(f"demo: {len(ids)} experiments in {path}" + (" (a temporary folder, removed on exit)" if made else ""),
                  highlight=False)
        try:
            serve(store, Settings(kgs=kgs), host=host, port=port,
                  say=lambda s: err.print(s, highlight=False, soft_wrap=True))
        finally:
            store.close()
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


def open_store(store: Optional[str]):
    from kgqa.store import Store
    from kgqa.store.schema import SchemaError

    try:
        return Store(store)
    except SchemaError as e:
        raise InputError(store or "store", str(e)) from None


# --------------------------------------------------------------------------- live systems

#: environment variable with headers for every live-system request, one NAME:VALUE per line
HEADERS_ENV = "KGQA_SYSTEM_HEADERS"
HEADER_HELP = (f"With a live system: send this header with every request (repeatable; also {HEADERS_ENV}, one "
               "NAME:VALUE per line). Values are never written.")


def system_headers(values: list[str] | None) -> dict[str, str]:
    """``--header NAME:VALUE`` options over the lines of ``$KGQA_SYSTEM_HEADERS``."""
    items = [x for x in os.environ.get(HEADERS_ENV, "").splitlines() if x.strip()] + list(values or [])
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise InputError("--header", "expected NAME:VALUE, got one without a name and a colon (not shown: it "
                                         "may be a secret)")
        out[name.strip()] = value.strip()
    return out


def _current_context() -> Any:
    """The running command's click context (typer >= 0.2x vendors its own click: duck-typed)."""
    import importlib

    for load in (lambda: importlib.import_module("typer._click.globals"),
                 lambda: importlib.import_module("click.globals")):
        try:
            ctx = load().get_current_context(silent=True)
        except (ImportError, AttributeError):
            continue
        if ctx is not None:
            return ctx
    return None


def resume_command(ctx: Any, add: tuple[str, ...] = ()) -> str:
    """The command line that reruns this command (``--fresh`` left out), with credentials in
    the URL and ``--header`` values shown as ``***``."""
    from kgqa.api import display_url

    parts = ctx.command_path.split()
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        is_arg = getattr(param, "param_type_name", "") == "argument"
        if param.name == "fresh" or value is None or (not is_arg and value == param.default):
            continue
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        values = [v.value if isinstance(v, Enum) else v for v in values]
        if param.name in ("url", "system"):
            values = [display_url(str(v)) for v in values]
        if param.name == "header":
            values = [f"{str(v).partition(':')[0]}:***" for v in values]
        if is_arg:
            parts += [str(v) for v in values]
        elif getattr(param, "is_flag", False):
            parts.append(param.opts[0] if value else param.secondary_opts[0])
        else:
            for v in values:
                parts += [param.opts[0], str(v)]
    return shlex.join([*parts, *add])


@contextmanager
def resumable() -> Iterator[None]:
    """Ctrl-C while asking a live system: say what is kept and print the exact command that
    resumes; exit status 130."""
    try:
        yield
    except KeyboardInterrupt as e:
        # imported only now: importing it up front would load the HTTP client for every evaluation
        from kgqa.api import AskInterrupted

        if not isinstance(e, AskInterrupted):
            raise
        ctx = _current_context()
        if ctx is None:  # not run from the command line: nothing to print a command for
            raise
        if e.journal is not None:
            err.print(f"[yellow]interrupted:[/] {e.answered} of {e.total} questions answered, kept in the journal "
                      f"{e.journal}; resume (asks only the rest) with:", highlight=False, soft_wrap=True)
            err.print(f"  {resume_command(ctx)}", highlight=False, soft_wrap=True, markup=False)
        else:
            err.print("[yellow]interrupted:[/] nothing was journalled (no --journal), so a rerun asks every question "
                      "again; to make the next run resumable:", highlight=False, soft_wrap=True)
            err.print(f"  {resume_command(ctx, ('--journal', 'system.journal.jsonl'))}", highlight=False,
                      soft_wrap=True, markup=False)
        if "***" in resume_command(ctx):
            err.print("  (credentials are shown as ***: give them again)", highlight=False, soft_wrap=True)
        raise Failure(None, 130) from None  # said above; the one exit path (kgqa.cli.errors)
