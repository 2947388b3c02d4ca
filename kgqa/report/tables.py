"""Terminal tables of the listing commands (``kgqa datasets list``, ``kgqa experiments
list|show``) that fit any width: names a user must type are never wrapped or cut (their column
does not wrap; other text wraps at word boundaries), and every cell taken from data is shown
as text (no rich markup, control characters escaped)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from kgqa.load import registry
from kgqa.report import numbers
from kgqa.report.fit import Grid
from kgqa.report.term import clean, wrap


def _t(value: Any) -> str:
    """A data value as a Grid cell: markup escaped, control characters escaped, one line."""
    return escape(clean("" if value is None else str(value), newlines=False))


class DatasetsList:
    """``kgqa datasets list`` at any width: one line per dataset (name, items, format, where its
    files resolve) with the description wrapped at words under it. Names are printed in full
    (their column is as wide as the longest), whatever the width and when piped."""

    def __init__(self, entries: Iterable[Any], where: Any):
        self.rows = [(clean(e.name), "" if e.items is None else str(e.items), clean(e.format), clean(where(e)),
                      clean(e.description, newlines=False)) for e in entries]

    def __rich_console__(self, console: Any, options: Any):
        heads = ("name", "items", "format", "where")
        w = [max([len(h)] + [len(r[i]) for r in self.rows]) for i, h in enumerate(heads)]

        def line(cells: tuple[str, ...]) -> str:
            return "  ".join([cells[0].ljust(w[0]), cells[1].rjust(w[1]), cells[2].ljust(w[2]), cells[3]])

        yield Text(f"kgqa datasets ({len(self.rows)})", style="bold")
        yield Text(line(heads), style="bold")
        for r in self.rows:
            yield Text(line(r[:4]))
            if r[4]:
                yield Text(wrap(r[4], options.max_width, indent="    ", first="    "), style="dim")


def datasets_table(entries: Iterable[Any], where: Any) -> DatasetsList:
    return DatasetsList(entries, where)


def registry_table() -> DatasetsList:
    """``kgqa datasets list``: the registered datasets (name, items, format, where their files
    resolve, description)."""
    return datasets_table(registry.entries(), registry.where)


def experiments_grid(rows: Iterable[Any]) -> Grid:
    """``kgqa experiments list``: one row per experiment; the id (what ``show``, ``export`` and
    ``delete`` take) is the key column repeated in every block when the table is split."""
    rows = list(rows)
    cells = []
    for e in rows:
        hv = f"{e.headline} {numbers.score(e.headline_value)}" if e.headline_value is not None else (e.headline or "")
        cells.append([_t(e.id), _t(e.run_name), _t(e.dataset), _t(e.profile), _t(e.kg or "-"), _t(e.status),
                      _t(hv), _t(e.created)])
    return Grid(f"kgqa experiments ({len(rows)})", ["id"],
                ["run", "dataset", "profile", "KG", "status", "headline", "created"], cells,
                numeric={"status", "headline", "created"}, transpose=False)


def experiment_table(doc: Mapping[str, Any]) -> Table:
    """``kgqa experiments show``: one key per row, values wrapped (folded) to the width."""
    t = Table(title=f"experiment {clean(str(doc.get('id')))}", show_header=False, title_justify="left")
    t.add_column("key", style="bold", no_wrap=True)
    t.add_column("value", overflow="fold", ratio=1)
    for k, v in doc.items():
        if k in ("aggregate", "outcomes", "options"):
            v = ", ".join(f"{a} {numbers.value(b)}" for a, b in (v or {}).items())
        t.add_row(k, Text(clean("" if v is None else str(v))))
    return t
