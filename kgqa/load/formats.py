"""The registry of file formats kgqa reads (datasets and runs) and writes.

Each format module calls :func:`register` at import time with a :class:`Format`. A format
knows how to recognise a file (``sniff``), load it, and optionally write it. Detection asks
every format of the wanted kind to sniff the file and takes the most confident answer;
``--format NAME`` skips detection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
import json

from kgqa.model.problems import InputError
from kgqa.model.registry import Registry
from kgqa.model.suggest import did_you_mean

Kind = Literal["dataset", "run"]

#: Modules that register formats. Each module registers its own; keep one line per module.
FORMAT_MODULES: list[str] = [
    "kgqa.load.qald_json",
    "kgqa.load.qald_xml",
    "kgqa.load.text2sparql",
    "kgqa.load.rubq",
    "kgqa.load.lcquad",
    "kgqa.load.simpledbpediaqa",
    "kgqa.load.graphquestions",
    "kgqa.load.nspm",
    "kgqa.load.webqsp",
    "kgqa.load.cwq",
    "kgqa.load.mintaka",
    "kgqa.load.kqapro",
    "kgqa.load.generic",
]

MAX_SNIFF_BYTES = 64 * 1024


@dataclass(frozen=True)
class Sample:
    """What a sniffer sees of a file: its path, its first bytes decoded leniently as text,
    and (lazily, for JSON files) the parsed document when it is small enough."""

    path: Path
    head: str
    size: int


@dataclass(frozen=True)
class Format:
    """A file format.

    ``sniff(sample) -> float`` returns a confidence in [0, 1] (0: not this format).
    ``load(paths, **options)`` returns a :class:`~kgqa.model.Dataset` (kind ``dataset``) or a
    :class:`~kgqa.model.Run` (kind ``run``); it raises :class:`~kgqa.model.InputError` for a
    file it cannot read at all and records per-record problems in the result's ``problems``.
    ``write(obj, path)`` writes the object in this format (writers are optional).
    """

    name: str
    kind: Kind
    description: str
    sniff: Callable[[Sample], float]
    load: Callable[..., Any]
    write: Callable[[Any, Path], None] | None = None
    extensions: tuple[str, ...] = ()
    aliases: tuple[str, ...] = field(default_factory=tuple)


#: Every format by ``kind:name`` (aliases too; loads FORMAT_MODULES on first use).
_FORMATS: Registry[Format] = Registry("format", modules=FORMAT_MODULES)


def register(fmt: Format) -> Format:
    return _FORMATS.register(f"{fmt.kind}:{fmt.name}", fmt, aliases=[f"{fmt.kind}:{a}" for a in fmt.aliases])


def formats(kind: Kind | None = None) -> list[Format]:
    return sorted((f for f in _FORMATS.values() if kind is None or f.kind == kind), key=lambda f: (f.kind, f.name))


def get(kind: Kind, name: str) -> Format:
    fmt = _FORMATS.find(f"{kind}:{name}")
    if fmt is None:
        names = ", ".join(f.name for f in formats(kind))

        near = did_you_mean(name, [f.name for f in formats(kind)])
        raise InputError(f"--{kind}-format", f"unknown {kind} format {name!r}{near}; known: {names}")
    return fmt


def sample(path: Path) -> Sample:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SNIFF_BYTES)
        size = path.stat().st_size
    except OSError as e:
        raise InputError(path, f"cannot read file: {e.strerror or e}") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return Sample(path, raw.decode("utf-8", errors="replace"), size)


def _raise_if_malformed_json(s: Sample, kind: Kind) -> None:
    """A file that no format recognises because it is broken JSON (truncated, a stray comma) is
    said as such, with the place: ``malformed JSON at line L, column C``, not as an unknown format.
    JSON Lines whose every line parses are not malformed."""

    text = s.head.lstrip()
    if not text.startswith(("{", "[")) or s.size > MAX_SNIFF_BYTES:
        return
    try:
        json.loads(s.head)
        return
    except json.JSONDecodeError as e:
        error = e
    except (ValueError, RecursionError):
        return
    try:
        for line in s.head.splitlines():
            if line.strip():
                json.loads(line)
        return  # JSON Lines, each line whole
    except (ValueError, RecursionError):
        pass
    raise InputError(s.path, f"malformed JSON at line {error.lineno}, column {error.colno}: {error.msg} (the {kind} "
                             "file is cut short or broken; check how it was written)")


class UnknownFormat(InputError):
    """A file whose format no sniffer of the kind asked for recognises (it may be another kind's)."""


def detect(paths: Sequence[Path], kind: Kind) -> Format:
    """The most confident format of ``kind`` for the first path."""
    s = sample(paths[0])
    if not s.head.strip() and s.size <= MAX_SNIFF_BYTES:  # said as it is, not as an unknown format
        what = "empty (0 bytes)" if s.size == 0 else "empty (only white space)"
        raise InputError(paths[0], f"the {kind} file is {what}: nothing to load")
    best: tuple[float, Format | None] = (0.0, None)
    for f in formats(kind):
        try:
            c = f.sniff(s)
        except Exception:  # a sniffer must never break detection
            c = 0.0
        if c > best[0]:
            best = (c, f)
    if best[1] is None:
        _raise_if_malformed_json(s, kind)
        names = ", ".join(f.name for f in formats(kind))
        option = "--run-format" if kind == "run" else "--dataset-format (--format in kgqa datasets / split / levels)"
        raise UnknownFormat(paths[0], f"cannot tell which {kind} format this is; pass {option} (one of: {names})")
    return best[1]
