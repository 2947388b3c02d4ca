"""kgqa's one progress bar: a transient rich bar on stderr, shown only on a terminal.

Every long step draws its bar with :func:`progress_bar` (downloads, KG loading, query batches,
asking a live system, migration, generation), so they look alike and none prints blank lines
into a pipe or a log::

    with progress_bar(len(queries), "executing", enabled=show) as bar:
        for chunk in chunks:
            ...
            bar(len(chunk))

A bar is a callable ``bar(n, **fields)``: advance by ``n`` and set fields (``description``, or
``status`` for a bar made with ``status=True``). A bar that is not shown is false and calling it
does nothing, so a loop ticks it without asking. Code that reports progress without a terminal
(the web platform's live progress) takes a ``(done, total)`` callback instead, e.g.
:class:`kgqa.execute.executor.Executor`'s ``on_progress``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

from kgqa import lazy

T = TypeVar("T")


class Bar:
    """A started bar: calling it advances the bar's one task (a bar not shown: nothing)."""

    def __init__(self, progress: Any = None, task: Any = None):
        self._progress, self._task = progress, task

    def __call__(self, n: int = 1, **fields: Any) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=n, **fields)

    def __bool__(self) -> bool:
        return self._progress is not None


def ticked(items: Iterable[T], bar: Bar, every: int) -> Iterable[T]:
    """``items``, advancing ``bar`` by ``every`` each time that many have been yielded (for loops
    too fast to tick once per item); a bar not shown gets ``items`` back untouched."""
    if not bar:
        return items
    return _ticking(items, bar, every)


def _ticking(items: Iterable[T], bar: Bar, every: int) -> Iterator[T]:
    for n, item in enumerate(items, 1):
        if n % every == 0:
            bar(every)
        yield item


@contextmanager
def progress_bar(total: int | None, label: str, *, enabled: bool = True, unit: Literal["count", "bytes"] = "count",
                 status: bool = False, console: Any = None) -> Iterator[Bar]:
    """A transient bar of ``total`` steps (None: unknown) headed ``label``; a bar not shown
    (false, a no-op) when disabled, when ``total`` is 0, or when the console (default: stderr)
    is not a terminal.
    ``unit="bytes"`` shows sizes, speed and time left; ``status=True`` adds a ``status`` field
    column after the counts."""
    console = console if console is not None else lazy.rich_console().Console(stderr=True)
    if not enabled or total == 0 or not console.is_terminal:  # no bar, no blank lines when piped
        yield Bar()
        return
    rp = lazy.rich_progress()  # rich's progress module only when a bar is shown
    counts = ((rp.DownloadColumn(), rp.TransferSpeedColumn(), rp.TimeRemainingColumn()) if unit == "bytes"
              else (rp.MofNCompleteColumn(), rp.TimeElapsedColumn()))
    extra = (rp.TextColumn("{task.fields[status]}"),) if status else ()
    with rp.Progress(rp.TextColumn("[bold]{task.description}[/]"), rp.BarColumn(), *counts, *extra, console=console,
                     transient=True) as progress:
        yield Bar(progress, progress.add_task(label, total=total, status=""))
