"""What ``kgqa datasets info`` shows of a dataset: counts per language, answer kinds and types,
items with a query / a gold answer, scoring units, problems, and the registry entry if any."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgqa.model import BooleanAnswer, Dataset
from kgqa.load import load_dataset, registry


@dataclass
class DatasetSummary:
    dataset: Dataset
    entry: Any = None  # kgqa.load.registry.Entry when loaded by name
    languages: Counter = field(default_factory=Counter)
    answer_types: Counter = field(default_factory=Counter)
    answer_kinds: Counter = field(default_factory=Counter)
    with_sparql: int = 0
    with_answer: int = 0
    scoring_units: int | None = None  # per-language datasets only
    errors: int = 0
    warnings: int = 0


def summarize(spec: str | Path | Dataset, format: str | None = None) -> DatasetSummary:
    """Load ``spec`` (a registry name, a path or a Dataset) and count what ``datasets info`` shows."""

    ds = spec if isinstance(spec, Dataset) else load_dataset(spec, format=format)
    entry = registry.find(str(spec)) if isinstance(spec, str) and not Path(spec).exists() else None
    errors = sum(p.severity == "error" for p in ds.problems)
    return DatasetSummary(
        dataset=ds, entry=entry,
        languages=Counter(lang for it in ds for lang in it.questions),
        answer_types=Counter(it.answer_type or "-" for it in ds),
        answer_kinds=Counter("none" if it.answer is None else "boolean" if isinstance(it.answer, BooleanAnswer)
                             else "empty" if len(it.answer) == 0 else "table" for it in ds),
        with_sparql=sum(it.sparql is not None for it in ds),
        with_answer=sum(it.answer is not None for it in ds),
        scoring_units=len(ds.by_language()) if any(it.lang_ids for it in ds) else None,
        errors=errors, warnings=len(ds.problems) - errors,
    )
