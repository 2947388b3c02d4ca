"""Generalization levels of test items relative to a training set (Gu et al., "Beyond I.I.D.:
Three Levels of Generalization for Question Answering on Knowledge Bases", WWW 2021; as
operationalised by Reyd & Zouaq 2023, Sect. 2).

Definitions (exact):

- **schema items** S(d) of an item: the IRIs of its gold query in predicate position (including
  every IRI inside a property path) and the classes (objects of ``rdf:type``), as found by
  :func:`kgqa.sparql.analyzer.analyze`, without ``rdf:type`` itself (it stays in the structure).
  Entities (other subject/object IRIs) and literals are *not* schema items — GrailQA's levels
  are about the KB schema, and with entities almost every test item would be zero-shot.
  ``include_entities=True`` adds the entity IRIs (then the levels describe "all URIs").
- **logical form** L(d): the pair (S(d), structure) where the structure is the analyzer's
  :func:`~kgqa.sparql.canonical.structure_template` (canonical query skeleton with
  IRIs and literals abstracted, which keeps operators, aggregates such as COUNT, FILTER
  comparisons, ORDER BY/LIMIT). With ``structure=False`` L(d) is S(d) alone.
- level of a test item d against train T:

  - ``zero-shot``: some s in S(d) occurs in no S(t), t in T;
  - ``iid``: else, some t in T has L(t) = L(d);
  - ``compositional``: else (every schema item was seen in training, never in this
    combination/structure);
  - ``unknown``: d has no gold query, or (with ``structure``) the analyzer finds it invalid, so
    it has no structure template.

Train items without a query contribute nothing; an invalid train query contributes its schema
items (the analyzer is tolerant) but no logical form.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from kgqa.model import Dataset, Item
from kgqa.model.terms import RDF
from kgqa.load import load_dataset
from kgqa.make.splits import dataset_writer
from kgqa.sparql.analyzer import analyze
from kgqa.sparql.canonical import structure_template

__all__ = ["LEVELS", "METADATA_KEY", "schema_items", "logical_form", "levels", "count_levels", "with_levels",
           "LevelReport", "level_datasets"]

LEVELS = ("iid", "compositional", "zero-shot", "unknown")
METADATA_KEY = "generalization_level"
_RDF_TYPE = RDF + "type"


def schema_items(item: Item, include_entities: bool = False) -> frozenset[str] | None:
    """S(d) as IRI strings; None when the item has no query."""
    if not item.sparql:
        return None

    info = analyze(item.sparql)
    out = {i.value for i in info.predicates} | {i.value for i in info.classes}
    if include_entities:
        out |= {i.value for i in info.entities}
    out.discard(_RDF_TYPE)
    return frozenset(out)


def logical_form(item: Item, include_entities: bool = False, structure: bool = True) -> tuple | None:
    """L(d); None when the item has no query or (with ``structure``) an invalid one."""
    s = schema_items(item, include_entities)
    if s is None:
        return None
    if not structure:
        return (s,)

    t = structure_template(analyze(item.sparql))
    return None if t is None else (s, t)


def levels(train: Iterable[Item], test: Iterable[Item], include_entities: bool = False,
           structure: bool = True) -> dict[str, str]:
    """Level of every test item (by id, test order): ``iid``, ``compositional``,
    ``zero-shot`` or ``unknown`` (module docstring)."""
    seen_items: set[str] = set()
    seen_forms: set[tuple] = set()
    for t in train:
        s = schema_items(t, include_entities)
        if s is None:
            continue
        seen_items |= s
        lf = logical_form(t, include_entities, structure)
        if lf is not None:
            seen_forms.add(lf)
    out: dict[str, str] = {}
    for d in test:
        lf = logical_form(d, include_entities, structure)
        if lf is None:
            out[d.id] = "unknown"
        elif not lf[0] <= seen_items:
            out[d.id] = "zero-shot"
        elif lf in seen_forms:
            out[d.id] = "iid"
        else:
            out[d.id] = "compositional"
    return out


def count_levels(labels: dict[str, str]) -> dict[str, int]:
    """Counts per level, every level present (in :data:`LEVELS` order)."""
    c = Counter(labels.values())
    return {lv: c.get(lv, 0) for lv in LEVELS}


def with_levels(test: Dataset, labels: dict[str, str], key: str = METADATA_KEY) -> Dataset:
    """A copy of ``test`` whose items carry their level in ``metadata[key]``, so evaluations
    break down by it (``metadata.generalization_level``)."""
    items = [replace(it, metadata={**it.metadata, key: labels.get(it.id, "unknown")}) for it in test.items]
    return Dataset(test.name, items, test.format, list(test.source), list(test.problems), dict(test.metadata))


@dataclass
class LevelReport:
    """``kgqa levels``: the level of every test item against a training set, counted."""

    train: Dataset
    test: Dataset
    labels: dict[str, str]  # test item id -> level

    @property
    def counts(self) -> dict[str, int]:
        return count_levels(self.labels)

    def write(self, output: str | Path) -> str:
        """Write the test set with each item's level in ``metadata.generalization_level``, in the
        test set's format when it has a writer (else JSONL); returns the format's name."""

        fmt = dataset_writer(self.test)
        fmt.write(with_levels(self.test, self.labels), Path(output))
        return fmt.name


def level_datasets(train: str | Path | Dataset, test: str | Path | Dataset, *, include_entities: bool = False,
                   structure: bool = True, format: str | None = None) -> LevelReport:
    """Load ``train`` and ``test`` (registered names, files or Datasets; ``format`` forces the
    format) and label every test item with its generalization level (:func:`levels`)."""

    tr = train if isinstance(train, Dataset) else load_dataset(train, format=format)
    te = test if isinstance(test, Dataset) else load_dataset(test, format=format)
    return LevelReport(tr, te, levels(tr.items, te.items, include_entities, structure))
