"""A benchmark item and a dataset (a list of items with where they came from)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kgqa.model.answer import Answer
from kgqa.model.problems import Problem


@dataclass(slots=True)
class Item:
    """One question of a benchmark.

    ``questions`` maps a language code to the question text; ``keywords`` likewise to keyword
    lists. ``answer`` is the stored gold answer (None when the dataset has none, e.g. LC-QuAD,
    which must be executed). ``answer_type`` is the dataset's own label (resource, number,
    date, boolean, string, ...). ``groups`` holds grouping keys such as ``template`` or
    ``paraphrase``; ``metadata`` everything else the source file says about the item.
    ``qrels`` holds graded gold where the benchmark grades answers (Text2SPARQL): language ->
    {answer key: grade}; a grade above 0 is relevant.
    """

    id: str
    questions: dict[str, str] = field(default_factory=dict)
    sparql: str | None = None
    answer: Answer | None = None
    answer_type: str | None = None
    keywords: dict[str, list[str]] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    lang_ids: dict[str, str] = field(default_factory=dict)
    qrels: dict[str, dict[str, float]] | None = None

    def qrels_bag(self) -> dict[str, float] | None:
        """This question's graded gold (value -> grade): the bag of the item's language
        (``metadata["language"]`` of a scoring unit), else the only bag; None without graded gold."""
        if not self.qrels:
            return None
        lang = self.metadata.get("language")
        bag = self.qrels.get(lang) if lang in self.qrels else None
        if bag is None and len(self.qrels) == 1:
            bag = next(iter(self.qrels.values()))
        return bag

    def graded_gold(self) -> frozenset[str] | None:
        """The relevant keys (grade > 0) of :meth:`qrels_bag`; None without graded gold."""
        bag = self.qrels_bag()
        return None if bag is None else frozenset(k for k, g in bag.items() if g > 0)

    def units(self, langs: list[str] | None = None) -> list["Item"]:
        """This item's scoring units: itself, or with ``lang_ids`` one item per language (in
        ``langs``, or all when None) with that language's id and question."""
        if not self.lang_ids:
            return [self]
        out = []
        for lang, lid in self.lang_ids.items():
            if langs is not None and lang not in langs:
                continue
            q = {lang: self.questions[lang]} if lang in self.questions else {}
            kw = {lang: self.keywords[lang]} if lang in self.keywords else {}
            # "languages": every language of the item (a tuple: records leave it out), so that an
            # aggregate can tell one language's figure from the all-language one
            out.append(replace(self, id=lid, questions=q, keywords=kw, lang_ids={},
                               metadata={**self.metadata, "item": self.id, "language": lang,
                                         "languages": tuple(self.lang_ids)}))
        return out

    def question(self, lang: str = "en") -> str | None:
        if lang in self.questions:
            return self.questions[lang]
        return next(iter(self.questions.values()), None)


@dataclass
class Dataset:
    """Items in file order, keyed by id. ``problems`` lists what the loader skipped or repaired."""

    name: str
    items: list[Item]
    format: str = ""
    source: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_id = {it.id: it for it in self.items}

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def __getitem__(self, item_id: str) -> Item:
        return self._by_id[item_id]

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._by_id

    @property
    def ids(self) -> list[str]:
        return [it.id for it in self.items]

    def by_language(self, langs: list[str] | None = None) -> "Dataset":
        """The scoring units: an item with ``lang_ids`` becomes one item per language (in
        ``langs``, or all when None), with that language's id and question; other items are
        kept as they are. Item order is preserved (languages in the item's order)."""
        if not any(it.lang_ids for it in self.items):
            return self
        out: list[Item] = [u for it in self.items for u in it.units(langs)]
        return Dataset(self.name, out, self.format, self.source, self.problems, self.metadata)
