"""RuBQ 1.0 (Korablinov & Braslavski, ISWC 2020): Russian questions over Wikidata.

A file is a JSON list of objects ``{uid, question_text (ru), question_eng, query, answers,
answer_text, question_uris, question_props, tags}``; ``answers`` is a list of
``{type, value, datatype?, xml:lang?, label?}``; ``query`` is null for the unanswerable
questions (tag ``no-answer``).

Mapping to :class:`~kgqa.model.Item`:

- ``id = str(uid)``; ``questions = {"ru": question_text, "en": question_eng}`` (missing
  texts left out);
- ``sparql``: the query exactly as stored. Its ``wd:``/``wdt:``/``p:``... prefixes are not
  declared; adding them is the executor's job, so ``metadata["undeclared_prefixes"]`` is True
  whenever the query has no ``PREFIX`` declaration;
- ``answer``: a single-column table (variable ``answer``) of the answer terms in file order:
  ``type: uri`` -> :class:`IRI`, ``type: literal`` -> :class:`Literal` with its ``datatype``
  or ``xml:lang``. A question with an empty ``answers`` list has an empty table;
- ``metadata``: ``answer_text``, ``question_uris``, ``question_props``, ``tags`` (list) and
  ``answer_labels`` (``{value: label}``, when labels are given);
- ``groups["tags"]``: the tags joined with ``,`` in file order (e.g. ``multi-hop,reverse``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.jsonio import read_json
from kgqa.model import Dataset, InputError, Item, Problem, TableAnswer
from kgqa.model.terms import from_sparql_json

_PREFIX_DECL = re.compile(r"^\s*PREFIX\s", re.I | re.M)


def parse_record(rec: Any, file: str, where: str, problems: list[Problem]) -> Item | None:
    if not isinstance(rec, dict):
        problems.append(Problem(file, where, f"expected an object, got {type(rec).__name__}; skipped"))
        return None
    if rec.get("uid") is None:
        problems.append(Problem(file, where, "record has no 'uid'; skipped"))
        return None
    questions = {lang: str(rec[key]).strip() for lang, key in (("ru", "question_text"), ("en", "question_eng"))
                 if rec.get(key)}
    if not questions:
        problems.append(Problem(file, where, "no question text (question_text / question_eng); skipped"))
        return None
    raw_answers = rec.get("answers")
    if raw_answers is None:
        raw_answers = []
    if not isinstance(raw_answers, list):
        problems.append(Problem(file, where, "'answers' is not a list; skipped"))
        return None
    terms = []
    labels: dict[str, str] = {}
    for j, a in enumerate(raw_answers):
        try:
            terms.append(from_sparql_json(a))
        except ValueError as e:
            problems.append(Problem(file, where, f"answers[{j}]: {e}; skipped"))
            return None
        if a.get("label") is not None:
            labels[str(a["value"])] = str(a["label"])
    query = rec.get("query")
    if query is not None and not isinstance(query, str):
        problems.append(Problem(file, where, "'query' is not a string; skipped"))
        return None
    sparql = query if query and query.strip() else None
    raw_tags = rec.get("tags")
    if raw_tags is None:
        tags = []
    elif isinstance(raw_tags, str):
        tags = [raw_tags]
    elif isinstance(raw_tags, list):
        tags = [str(t) for t in raw_tags if isinstance(t, (str, int, float)) and not isinstance(t, bool)]
        if len(tags) != len(raw_tags):
            problems.append(Problem(file, where, "'tags' holds values that are not text; those were ignored",
                                    "warning"))
    else:
        problems.append(Problem(file, where, f"'tags' must be a list of strings, got {type(raw_tags).__name__}; "
                                             "ignored", "warning"))
        tags = []
    metadata: dict[str, Any] = {k: rec[k] for k in ("answer_text", "question_uris", "question_props") if k in rec}
    metadata["tags"] = tags
    if labels:
        metadata["answer_labels"] = labels
    if sparql is not None and not _PREFIX_DECL.search(sparql):
        metadata["undeclared_prefixes"] = True
    for k, v in rec.items():
        if k not in ("uid", "question_text", "question_eng", "query", "answers", "tags") and k not in metadata:
            metadata[k] = v
    item = Item(
        id=str(rec["uid"]),
        questions=questions,
        sparql=sparql,
        answer=TableAnswer.single_column(terms, "answer"),
        metadata=metadata,
        groups={"tags": ",".join(tags)} if tags else {},
    )
    if sparql is None and terms:
        problems.append(Problem(file, where, "answers but no query", "warning"))
    return item


def load_rubq_dataset(paths: list[Path], **options: Any) -> Dataset:
    items: list[Item] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for path in paths:
        doc = read_json(path)
        if not isinstance(doc, list):
            raise InputError(path, "not RuBQ: expected a JSON list of question objects")
        file = str(path)
        for i, rec in enumerate(doc):
            where = f"uid {rec['uid']}" if isinstance(rec, dict) and "uid" in rec else f"record {i}"
            it = parse_record(rec, file, where, problems)
            if it is None:
                continue
            if it.id in seen:
                problems.append(Problem(file, where, f"duplicate uid {it.id!r}; skipped (the first one is kept)"))
                continue
            seen.add(it.id)
            items.append(it)
    name = Path(paths[0]).stem
    return Dataset(name, items, "rubq", list(paths), problems, {})


def sniff(sample: formats.Sample) -> float:
    head = sample.head.lstrip()
    if head.startswith("[") and '"uid"' in head and '"question_text"' in head:
        return 0.9
    return 0.0


DATASET = formats.register(formats.Format(
    name="rubq",
    kind="dataset",
    description="RuBQ 1.0 / 2.0 JSON (Russian questions over Wikidata, with English translations)",
    sniff=sniff,
    load=load_rubq_dataset,
    extensions=(".json",),
))
