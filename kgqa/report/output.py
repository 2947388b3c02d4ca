"""Rendered output written to a file: whole or not at all.

Apart from :mod:`kgqa.report.console` (which brings every renderer: comparisons, breakdowns,
audits, and with them NumPy and the SPARQL parser), so that ``kgqa evaluate -o FILE`` imports none
of that to write its text.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kgqa.load.jsonio import write_atomic

__all__ = ["write_output"]


def write_output(path: str | Path, chunks: Iterable[str]) -> None:
    """Write rendered output (text, in chunks) to ``path`` whole or not at all: a reader never
    sees half a report, and a file that cannot be written is an error naming it and the fix
    (the previous file, if any, is left as it was)."""
    write_atomic(Path(path), chunks)
