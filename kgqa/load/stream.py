"""A dataset read one question at a time: for evaluations whose dataset does not fit (or should
not be held) in memory.

:class:`DatasetStream` reads JSONL dataset file(s) afresh on every iteration, with the same
checks, problems and first-of-each-id rule as :func:`kgqa.load.load_dataset`, and yields the
scoring units (per-language items expanded, as :meth:`Dataset.by_language` does). Scoring a
run against it (``kgqa.evaluate(..., stream=True)``) keeps no item: per question only its id,
outcome, counts and scores stay (see :class:`kgqa.score.evaluate.QuestionList`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.generic import jsonl_items
from kgqa.model import InputError, Item, Problem
from kgqa.model.progress import progress_bar, ticked


class DatasetStream:
    """JSONL dataset file(s) as an iterable of items (read again on each iteration).

    ``langs``: the languages whose units to yield for per-language items (None: all).
    ``problems`` holds what the last complete iteration skipped; ``languages`` the question
    languages seen, ``unit_languages`` those of per-language items (``lang_ids``); ``count``
    how many units it yielded. ``progress``: an iteration counts the units it yields on a
    progress bar (stderr, a terminal only; :func:`kgqa.model.progress.progress_bar`), shown
    while it runs and gone when it ends."""

    #: units between two ticks of the progress bar
    TICK = 4096

    format = "jsonl"

    def __init__(self, paths: Sequence[str | Path], *, langs: list[str] | None = None, lang: str = "en",
                 progress: bool = False):
        self.source = [Path(p) for p in paths]
        for p in self.source:
            if not p.exists():
                raise InputError(p, "no such file (streaming reads dataset files, not registry names)")
        self.name = self.source[0].stem
        self.langs = langs
        self._lang = lang
        self.problems: list[Problem] = []
        self.languages: list[str] = []
        self.unit_languages: list[str] = []
        self.count = 0
        self.metadata: dict[str, Any] = {}
        self.progress = progress

    def __iter__(self) -> Iterator[Item]:
        with progress_bar(None, f"reading {self.name}", enabled=self.progress) as bar:
            yield from ticked(self._units(), bar, self.TICK)

    def _units(self) -> Iterator[Item]:
        problems: list[Problem] = []
        languages: dict[str, None] = {}
        unit_languages: dict[str, None] = {}
        count = 0
        for item in jsonl_items(self.source, problems, self._lang):
            for lang in item.questions:
                languages.setdefault(lang, None)
            if not item.lang_ids:  # its own one scoring unit (Item.units)
                count += 1
                yield item
                continue
            for lang in item.lang_ids:
                languages.setdefault(lang, None)
                unit_languages.setdefault(lang, None)
            for unit in item.units(self.langs):
                count += 1
                yield unit
        self.problems, self.languages, self.count = problems, list(languages), count
        self.unit_languages = list(unit_languages)

    def __repr__(self) -> str:
        return f"DatasetStream({', '.join(map(str, self.source))})"


def open_stream(spec: str | Path | Sequence[str | Path], *, format: str | None = None,
                langs: list[str] | None = None, progress: bool = False, **options: Any) -> DatasetStream:
    """A :class:`DatasetStream` of dataset file(s) in the JSONL format (the one format read
    line by line); anything else is an :class:`InputError` saying so."""
    unknown = set(options) - {"lang"}
    if unknown:
        raise InputError("dataset_options", f"not used by a streamed JSONL dataset: {', '.join(sorted(unknown))}")
    stream = DatasetStream(spec if isinstance(spec, (list, tuple)) else [spec], langs=langs,
                           lang=options.get("lang", "en"), progress=progress)
    fmt = formats.get("dataset", format).name if format else formats.detect(stream.source, "dataset").name
    if fmt != "jsonl":
        raise InputError(stream.source[0], f"a {fmt} dataset cannot be streamed: only JSONL datasets are read one "
                                           "question at a time (convert it to JSONL, one question per line as the "
                                           "README's dataset format says, or drop --stream)")
    return stream
