"""Terminal tables that fit any width without breaking a number.

A wide table is never squeezed: numeric cells are rendered ``no_wrap`` at their full width. When
the columns do not fit the console, the table is first *transposed* (measures as rows, runs as
columns) if that is narrower, and otherwise split into *blocks* of columns with the key columns
(run name, n, ...) repeated in every block. A label longer than the console is the only thing that
may wrap.

Cells arrive as text: numbers are formatted by :mod:`kgqa.report.numbers` (one format for every
report), which this module never changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table
from rich.text import Text

# Space rich adds around every cell (one space either side) plus one border character.
_CELL_PAD = 3
# The outer border of a table.
_EDGE = 1


@dataclass
class Grid:
    """A table as plain data: ``keys`` columns repeat in every block, ``columns`` may be split.

    ``cells[r]`` holds the key cells followed by the column cells of row ``r`` (rich markup
    allowed in cells; it does not count towards their width). ``numeric`` names the columns
    (keys included) whose cells must never wrap.
    """

    title: str | None
    keys: list[str]
    columns: list[str]
    cells: list[list[str]]
    numeric: set[str] = field(default_factory=set)
    row_styles: list[str | None] | None = None
    transpose: bool = True
    corner: str = "measure"

    def __rich_console__(self, console, options):
        """A Grid is a rich renderable: it fits itself to the width it is printed at."""
        for t in fit(self, options.max_width, transpose=self.transpose, corner=self.corner):
            # the title on its own line: a narrow table would wrap it to the table's width
            if t.title:
                yield Text.from_markup(f"[bold]{t.title}[/]")
                t.title = None
            yield t

    def transposed(self, corner: str = "measure") -> "Grid":
        """Columns become rows: the first key column's values become the new columns; the
        other key columns become rows too."""
        # the key cells as they are (markup, escaped where they hold data): through rich's Text
        # a run named "x\x07[red]y" lost its BEL (Text drops control codes) and, as a header,
        # its brackets (tests/cli/test_cli_loud.py, on a console too narrow for the table)
        heads = [r[0] for r in self.cells]
        new_rows: list[list[str]] = []
        for j, name in enumerate(self.keys[1:] + self.columns, start=1):
            new_rows.append([name] + [r[j] for r in self.cells])
        return Grid(self.title, [corner], heads, new_rows, numeric=set(heads), transpose=False, corner=corner)


def _width(s: str) -> int:
    return Text.from_markup(s).cell_len if "[" in s else len(s)


def _col_widths(grid: Grid) -> list[int]:
    names = grid.keys + grid.columns
    widths = []
    for j, name in enumerate(names):
        w = max([len(name)] + [_width(r[j]) for r in grid.cells]) if grid.cells else len(name)
        widths.append(w)
    return widths


def _blocks(grid: Grid, width: int) -> list[list[int]]:
    """Indices of the non-key columns of each block, greedily packed to fit ``width``."""
    widths = _col_widths(grid)
    nk = len(grid.keys)
    base = _EDGE + sum(w + _CELL_PAD for w in widths[:nk])
    blocks: list[list[int]] = [[]]
    used = base
    for j in range(nk, nk + len(grid.columns)):
        need = widths[j] + _CELL_PAD
        if blocks[-1] and used + need > width:
            blocks.append([])
            used = base
        blocks[-1].append(j)
        used += need
    return [b for b in blocks if b] or [[]]


def total_width(grid: Grid) -> int:
    return _EDGE + sum(w + _CELL_PAD for w in _col_widths(grid))


def _table(grid: Grid, cols: list[int], title: str | None) -> Table:
    t = Table(title=title, title_justify="left")
    names = grid.keys + grid.columns
    for j in list(range(len(grid.keys))) + cols:
        name = names[j]
        num = name in grid.numeric
        first = j == 0
        t.add_column(
            name,
            justify="left" if first or not num else "right",
            no_wrap=num or first,
            style="bold" if first else None,
            overflow="fold" if not num else "ignore",
            min_width=len(name) if num else None,
        )
    for i, r in enumerate(grid.cells):
        style = grid.row_styles[i] if grid.row_styles else None
        t.add_row(*(r[j] for j in list(range(len(grid.keys))) + cols), style=style)
    return t


def fit(grid: Grid, width: int, *, transpose: bool = True, corner: str = "measure") -> list[Table]:
    """The tables to print for ``grid`` on a console ``width`` columns wide (see module doc)."""
    if total_width(grid) <= width:
        return [_table(grid, list(range(len(grid.keys), len(grid.keys) + len(grid.columns))), grid.title)]
    if transpose and len(grid.cells) >= 1:
        tg = grid.transposed(corner)
        if total_width(tg) <= width or len(_blocks(tg, width)) < len(_blocks(grid, width)):
            grid = tg
    blocks = _blocks(grid, width)
    out = []
    for b, cols in enumerate(blocks):
        title = grid.title if b == 0 else None
        if len(blocks) > 1:
            title = f"{grid.title or ''} ({b + 1}/{len(blocks)})".strip()
        out.append(_table(grid, cols, title))
    return out


def print_grid(console: Console, grid: Grid, *, transpose: bool = True, corner: str = "measure") -> None:
    grid.transpose, grid.corner = transpose, corner
    console.print(grid)
