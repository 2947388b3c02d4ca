"""Output helpers shared by the command modules: consoles, writing text to a file or stdout,
printing rich renderables, saving evaluations and printing breakdowns."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

from rich.markup import escape

from kgqa.model import InputError
from kgqa.report.term import SafeConsole as Console

if TYPE_CHECKING:
    from kgqa.score.evaluate import Evaluation

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
        from kgqa.load.jsonio import write_atomic

        write_atomic(output, [text])
        err.print(f"wrote {output}", highlight=False)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def save_evaluations(evals: Sequence[Evaluation], path: Path) -> None:
    from kgqa.report.render import save_evaluations as save

    save(evals, path)
    err.print(f"saved {len(evals)} evaluation(s) to {path}", highlight=False)


def emit_breakdowns(evals: Sequence[Evaluation], by: Sequence[str], bin_specs: Sequence[str] | None, fmt: str,
                    output: Optional[Path], seed: int = 0) -> None:
    """``kgqa evaluate --by``: rich tables (``table``, stdout) or Markdown appended to ``output``."""
    from kgqa.report.render import breakdown_text, breakdowns, parse_bins

    rendered = breakdown_text(breakdowns(evals, by, parse_bins(bin_specs), seed=seed, paraphrase_curve=True),
                              "table" if fmt == "table" and output is None else fmt)
    if not isinstance(rendered, str):
        out.print(rendered)
    elif output is not None:
        from kgqa.load.jsonio import write_atomic

        before = output.read_text(encoding="utf-8") if output.exists() else ""
        write_atomic(output, [before, rendered])
    else:
        sys.stdout.write(rendered)


def print_or_write(rendered: object, output: Optional[Path], console: Console | None = None) -> None:
    """Text to ``output`` (or stdout); rich renderables (a list: one after the other) to the console."""
    from kgqa.report.render import Wide

    if isinstance(rendered, str):
        write_text(rendered, output)
        return
    from kgqa.report.evaluation import print_renderable

    for r in rendered if isinstance(rendered, list) else [rendered]:
        print_renderable(wide() if isinstance(r, Wide) else console or out, r)


def parse_options(pairs: list[str] | None, flag: str) -> dict[str, object]:
    """``["question_field=paraphrased_question", "expand=false"]`` -> loader keyword options."""
    out: dict[str, object] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise InputError(flag, f"expected KEY=VALUE, got {pair!r}")
        k, v = pair.split("=", 1)
        out[k.strip()] = {"true": True, "false": False}.get(v.strip().lower(), v.strip())
    return out


def record(store: str, dataset: str, runs: list[str], evals, **settings) -> None:
    """``kgqa evaluate ... --store``: record the evaluations of run files (``PATH`` or
    ``NAME=PATH``: the path is stored, the name is the run's) as finished experiments. A live
    system's evaluation (``--system``, after the files) has no run file to record and is named."""
    from kgqa.load.runspec import split_run_spec
    from kgqa.store.record import record_evaluations

    paths = [split_run_spec(r)[1] for r in runs]
    ids = record_evaluations(open_store(store), dataset, paths, list(evals)[:len(paths)], **settings)
    if ids:
        err.print(f"recorded experiment(s) {', '.join(ids)} in {store}", highlight=False)
    for e in list(evals)[len(paths):]:
        say(err, f"not recorded in {store}: {e.run} (a live system's answers have no run file to store)")


def serve_demo(port: int, host: str, store_path: Optional[str] = None) -> None:
    """``kgqa demo --web``: evaluate the demo runs into a fresh store and serve it."""
    from kgqa.web.app import Settings, default_kgs
    from kgqa.web.demo import demo_store
    from kgqa.web.serve import serve

    path = store_path or str(Path(tempfile.mkdtemp(prefix="kgqa-demo-")) / "experiments.sqlite")
    kgs = default_kgs()
    store, ids = demo_store(path, kgs)
    err.print(f"demo: {len(ids)} experiments in {path}", highlight=False)
    serve(store, Settings(kgs=kgs), host=host, port=port, say=lambda s: err.print(s, highlight=False, soft_wrap=True))


def open_store(store: Optional[str]):
    from kgqa.store import Store
    from kgqa.store.schema import SchemaError

    try:
        return Store(store)
    except SchemaError as e:
        raise InputError(store or "store", str(e)) from None
