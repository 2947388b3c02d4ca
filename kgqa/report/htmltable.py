"""HTML tables of reports: the escaping, the scrolling table and a
:class:`~kgqa.report.model.Report` as a table.

Apart from :mod:`kgqa.report.html` (the whole HTML report: figures, comparisons, breakdowns,
which import NumPy and the analysis stage) so that an evaluation's HTML table
(:mod:`kgqa.report.evaluation`, what ``kgqa evaluate`` renders) imports none of that.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from kgqa.report.model import Report, ReportCell

__all__ = ["Raw", "escape", "table", "cell", "report_table"]


def escape(x: Any) -> str:
    """``x`` as HTML text (None: empty), quotes escaped."""
    return html.escape("" if x is None else str(x), quote=True)


class Raw:
    """A table cell that is HTML already (not escaped again)."""

    def __init__(self, html_text: str):
        self.html = html_text


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric_from: int = 1,
          numeric_to: int | None = None, row_attrs: Sequence[str] | None = None) -> str:
    """A table in a horizontally scrolling box: numeric cells (columns ``numeric_from`` up to
    ``numeric_to``) never wrap, the first column (ids, names) does not either."""
    out = ['<div class="scroll"><table>', "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>"]
    for i, r in enumerate(rows):
        cells = []
        for j, c in enumerate(r):
            text = c.html if isinstance(c, Raw) else escape(c)
            cls = ' class="num"' if j >= numeric_from and (numeric_to is None or j < numeric_to) else \
                ' class="id"' if j == 0 else ""
            cells.append(f"<td{cls}>{text}</td>")
        attrs = f" {row_attrs[i]}" if row_attrs else ""
        out.append(f"<tr{attrs}>" + "".join(cells) + "</tr>")
    out.append("</table></div>")
    return "\n".join(out)


def cell(c: ReportCell) -> Any:
    """A report cell: the number (``<span class="best">`` when best), its letters
    (``<span class="sig">``) and its CI; text escaped."""
    if c.kind == "text":
        return c.text()
    num = escape(c.number())
    out = f'<span class="best">{num}</span>' if c.best else num
    if c.letters:
        out += f'<span class="sig">{escape(c.letters)}</span>'
    if c.low is not None:
        out += " " + escape(c.ci())
    return Raw(out)


def report_table(report: Report, *, row_notes: str | None = None) -> str:
    """A :class:`~kgqa.report.model.Report` as an HTML table; ``row_notes`` names a last column
    holding the report's one-line row notes (outcome counts)."""
    rows = [[cell(c) for c in r] + ([note] if row_notes else []) for r, note in
            zip(report.rows, report.row_notes or [""] * len(report.rows))]
    return table(report.header + ([row_notes] if row_notes else []), rows)
