"""Validate benchmark or run files: list every problem, one :class:`~kgqa.model.Problem` each.

For each path, :func:`validate` picks the format (``format`` names a dataset or run format;
otherwise the most confident dataset sniffer, then run sniffer) and loads the file with it.
Reported:

- a file that cannot be read at all: malformed JSON / YAML / XML with line and column,
  non-UTF-8 bytes with the byte offset, wrong top-level shape (one error for the file);
- per record (what the loaders record in ``problems``): duplicate ids, missing ids, missing
  question text, bindings of unknown type, unknown answer elements (errors: the record is
  skipped on load); neither query nor answers, unknown answer types, answers that
  contradict the answer type (warnings: the record is kept).

Input files are only read, never modified.
"""

from __future__ import annotations

from pathlib import Path

from kgqa.load import formats, jsonio
from kgqa.model import InputError, Problem


def _pick(path: Path, format: str | None) -> formats.Format:
    if format:
        try:
            return formats.get("dataset", format)
        except InputError:
            return formats.get("run", format)
    try:
        return formats.detect([path], "dataset")
    except InputError:
        return formats.detect([path], "run")


def validate(paths: list[str | Path], format: str | None = None) -> list[Problem]:
    """Every problem found in ``paths`` (empty list: all files are valid)."""
    out: list[Problem] = []
    for p in paths:
        path = Path(p)
        if not path.is_file():
            out.append(Problem(str(path), None, "no such file"))
            continue
        try:
            fmt = _pick(path, format)
        except InputError as e:
            out.append(_syntax_problem(path) or e.problem)
            continue
        try:
            obj = fmt.load([path])
        except InputError as e:
            out.append(e.problem)
            continue
        out.extend(obj.problems)
    return out


def _syntax_problem(path: Path) -> Problem | None:
    """When no format recognises a file, a syntax/encoding error explains it better."""

    reader = {".json": jsonio.read_json, ".yml": jsonio.read_yaml, ".yaml": jsonio.read_yaml,
              ".xml": jsonio.read_xml}.get(path.suffix.lower(), jsonio.read_text)
    try:
        reader(path)
    except InputError as e:
        return e.problem
    return None


def has_errors(problems: list[Problem]) -> bool:
    return any(p.severity == "error" for p in problems)
