"""Problems found in input files: a clear message naming file, record and what was expected."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    """One problem in an input file. ``record`` names the record (question id, list index,
    line number); ``severity`` is ``error`` (the record was skipped) or ``warning`` (it was
    kept, possibly repaired)."""

    file: str
    record: str | None
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        where = self.file if self.record is None else f"{self.file}, {self.record}"
        return f"{where}: {self.message}"


class InputError(Exception):
    """An input that cannot be loaded at all (unreadable, malformed, unknown format).
    The CLI prints it as one line and exits with status 2."""

    def __init__(self, file: str | Path, message: str, record: str | None = None):
        self.problem = Problem(str(file), record, message)
        super().__init__(str(self.problem))
