"""Mintaka (Sen, Aji & Saffari, COLING 2022): the dataset (``mintaka_{train,dev,test}.json``)
and its prediction format (``{id: answer}`` JSON, read by the release's evaluate/evaluate.py).

Dataset shape (amazon-science/mintaka README; see tests/fixtures/mintaka/SOURCE.txt)::

    [{"id": "a9011ddf", "question": "What is the seventh tallest mountain in North America?",
      "translations": {"ar": "...", "de": "...", ...},
      "questionEntity": [{"name": "Q49", "entityType": "entity", "label": "North America",
                          "mention": "North America", "span": [40, 53]}, ...],
      "answer": {"answerType": "entity",
                 "answer": [{"name": "Q1153188", "label": {"en": "Mount Lucania", "de": ...}}],
                 "mention": "Mount Lucania"},
      "category": "geography", "complexityType": "ordinal"}, ...]

- ``id``: ``id``; ``questions``: ``{"en": question}`` plus every ``translations`` entry;
- ``answer`` by ``answerType``: ``entity``: one row per entity, the IRI
  ``http://www.wikidata.org/entity/<Q-code>`` (labels to ``metadata["answer_labels"]``);
  ``boolean``: a boolean answer; ``numerical``/``number``: literals typed ``xsd:integer`` or
  ``xsd:decimal``; ``date``: ``xsd:date`` / ``xsd:dateTime`` when the text is one, else a simple
  literal; ``string``: simple literals. An ``answer`` list that is null or missing leaves the
  answer None (warning); ``answer_type`` is the ``answerType``;
- ``groups["complexityType"]``, ``groups["category"]``; ``metadata``: ``mention``,
  ``questionEntity``, ``supportingEnt`` / ``supportingNum`` and every other key; there is no
  SPARQL.

**Run** (``{"fae46b21": "Mark Twain", "bc8713cc": 1, "e343ad26": false, "b41ae115": null,
"4367c74a": ["Q106182", "Q219776"]}``): a string that is a Q-code becomes the Wikidata IRI
(KG mode), other strings simple literals (text mode); ``true``/``false`` a boolean answer (so
does the string "True"/"False"/"yes"/"no" when the dataset's answer for that id is a boolean);
numbers typed literals; a list one row per element; ``null`` an empty answer (the system gave
none). The value as written is kept in ``metadata["mintaka_pred"]`` (the official rules, ``-p mintaka``
and ``-p mintaka-kg``, read it: :mod:`kgqa.score.mintaka`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.generic import load_record_array
from kgqa.load.jsonio import read_json
from kgqa.model import BooleanAnswer, Dataset, InputError, Item, Prediction, Problem, Run, TableAnswer
from kgqa.model.answer import Answer
from kgqa.model.terms import IRI, XSD, Literal, Term, DATE_PATTERN, DATETIME_PATTERN

WIKIDATA_ENTITY = "http://www.wikidata.org/entity/"
_QCODE = re.compile(r"^Q[1-9]\d*$")
_OWN = ("id", "question", "translations", "answer", "category", "complexityType")


def _number(v: Any) -> Literal:
    if isinstance(v, bool):
        raise ValueError(f"expected a number, got {v!r}")
    if isinstance(v, int):
        return Literal(str(v), XSD + "integer")
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError(f"expected a finite number, got {v!r}")
        return Literal(repr(v), XSD + ("double" if "e" in repr(v) else "decimal"))
    text = str(v).strip()
    if re.fullmatch(r"[+-]?\d+", text):
        return Literal(text, XSD + "integer")
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+)", text):
        return Literal(text, XSD + "decimal")
    raise ValueError(f"expected a number, got {v!r}")


def _number_or_text(v: Any) -> Literal:
    """A numerical answer: a typed number, or, for a text the release gives as a number
    (``6'2"``, ``3,255 mi²``, ``1.1 million``), a simple literal of that text (the official
    evaluate.py compares the text as released)."""
    try:
        return _number(v)
    except ValueError:
        if isinstance(v, str):
            return Literal(v)
        raise


def _date(v: Any) -> Literal:
    text = str(v).strip()
    if DATE_PATTERN.match(text):
        return Literal(text, XSD + "date")
    if DATETIME_PATTERN.match(text):
        return Literal(text, XSD + "dateTime")
    return Literal(text)


def _value_term(v: Any) -> Term:
    if isinstance(v, str):
        t = v.strip()
        return IRI(WIKIDATA_ENTITY + t) if _QCODE.match(t) else Literal(v)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return _number(v)
    raise ValueError(f"cannot read {v!r} as an answer value")


def _gold(ans: Any) -> tuple[Answer | None, str | None, dict[str, Any]]:
    """(answer, answerType, extra metadata) from a Mintaka ``answer`` object."""
    if not isinstance(ans, dict):
        raise ValueError(f"'answer' must be an object with 'answerType' and 'answer', got {type(ans).__name__}")
    kind = ans.get("answerType")
    if not isinstance(kind, str):
        raise ValueError("'answer' has no 'answerType'")
    kind_l = kind.lower()
    values = ans.get("answer")
    meta = {k: v for k, v in ans.items() if k not in ("answerType", "answer")}
    if values is None:
        return None, kind, meta
    if not isinstance(values, list):
        values = [values]
    if kind_l == "entity":
        terms: list[Term] = []
        labels = []
        for i, e in enumerate(values):
            name = e.get("name") if isinstance(e, dict) else e
            if not isinstance(name, str) or not _QCODE.match(name.strip()):
                raise ValueError(f"answer[{i}] of an entity answer must have a Wikidata Q-code 'name', got {name!r}")
            terms.append(IRI(WIKIDATA_ENTITY + name.strip()))
            labels.append(e.get("label") if isinstance(e, dict) else None)
        if any(lb is not None for lb in labels):
            meta["answer_labels"] = labels
        return TableAnswer.single_column(terms, "answer"), kind, meta
    if kind_l == "boolean":
        if len(values) != 1 or not isinstance(values[0], bool):
            raise ValueError(f"a boolean answer must be one true/false, got {values!r}")
        return BooleanAnswer(values[0]), kind, meta
    if kind_l in ("numerical", "number"):
        return TableAnswer.single_column([_number_or_text(v) for v in values], "answer"), kind, meta
    if kind_l == "date":
        return TableAnswer.single_column([_date(v) for v in values], "answer"), kind, meta
    if kind_l == "string":
        return TableAnswer.single_column([Literal(str(v)) for v in values], "answer"), kind, meta
    raise ValueError(f"unknown answerType {kind!r} (expected entity, boolean, numerical, date or string)")


def parse_record(rec: Any, file: str, record: str, problems: list[Problem]) -> Item:
    if not isinstance(rec, dict):
        raise ValueError(f"expected a question object, got {type(rec).__name__}")
    rid = rec.get("id")
    if not isinstance(rid, (str, int)) or isinstance(rid, bool) or not str(rid).strip():
        raise ValueError("no 'id'")
    questions: dict[str, str] = {}
    if isinstance(rec.get("question"), str) and rec["question"].strip():
        questions["en"] = rec["question"].strip()
    tr = rec.get("translations")
    if isinstance(tr, dict):
        questions.update({str(k): v.strip() for k, v in tr.items() if isinstance(v, str) and v.strip()})
    if not questions:
        problems.append(Problem(file, record, "no question text", "warning"))
    answer, kind, ameta = _gold(rec.get("answer"))
    if answer is None:
        problems.append(Problem(file, record, "the answer list is null: no gold answer", "warning"))
    metadata = {k: v for k, v in rec.items() if k not in _OWN}
    metadata.update(ameta)
    if isinstance(rec.get("answer"), dict):
        metadata["mintaka_answer"] = rec["answer"]  # as released, for the official rules (-p mintaka)
    groups = {k: rec[k] for k in ("complexityType", "category") if isinstance(rec.get(k), str)}
    return Item(str(rid).strip(), questions, None, answer, kind, {}, groups, metadata)


def load_mintaka_dataset(paths: list[Path], **options: Any) -> Dataset:
    ds = load_record_array(paths, lambda rec, i, file, record, problems: parse_record(rec, file, record, problems),
                           format_name="mintaka", what="Mintaka JSON", id_key="id", id_label="id")
    v10 = [it.id for it in ds.items if _string_labels(it.metadata.get("mintaka_answer"))]
    if v10:
        ds.problems.append(Problem(str(paths[0]), None, (
            f"{len(v10)} entity answer(s) have v1.0 labels (one English string, not an object by language; the "
            f"first: {v10[0]}): the official evaluate.py --mode text stops on them (TypeError); kgqa reads the "
            "string as the label in every language"), "warning"))
    return ds


def _string_labels(raw: Any) -> bool:
    if not isinstance(raw, dict) or raw.get("answerType") != "entity" or not isinstance(raw.get("answer"), list):
        return False
    return any(isinstance(e, dict) and isinstance(e.get("label"), str) for e in raw["answer"])


# --------------------------------------------------------------------------- run

_BOOL_TEXT = {"true": True, "false": False, "yes": True, "no": False}


def prediction_answer(value: Any, gold: Answer | None = None) -> Answer:
    """The answer a Mintaka prediction value stands for (see the module docstring)."""
    if value is None:
        return TableAnswer(("answer",), ())
    if isinstance(value, bool):
        return BooleanAnswer(value)
    if isinstance(value, str) and isinstance(gold, BooleanAnswer) and value.strip().lower() in _BOOL_TEXT:
        return BooleanAnswer(_BOOL_TEXT[value.strip().lower()])
    if isinstance(value, list):
        if len(value) == 1 and isinstance(value[0], bool):  # [true]: the release's own boolean shape
            return BooleanAnswer(value[0])
        terms = []
        for i, v in enumerate(value):
            if v is None:
                continue
            if isinstance(v, (list, dict)):
                raise ValueError(f"list element {i} must be a string, a number or a boolean, got {v!r}")
            terms.append(Literal("true" if v else "false", XSD + "boolean") if isinstance(v, bool) else _value_term(v))
        return TableAnswer.single_column(terms, "answer")
    if isinstance(value, dict):
        raise ValueError("expected a string, number, boolean, list or null, got an object")
    return TableAnswer.single_column([_value_term(value)], "answer")


def load_mintaka_run(paths: list[Path], dataset: Dataset | None = None, **options: Any) -> Run:
    problems: list[Problem] = []
    preds: list[Prediction] = []
    seen: set[str] = set()
    for path in paths:
        file = str(path)
        doc = read_json(path)
        if not isinstance(doc, dict):
            raise InputError(path, f"not a Mintaka prediction file: expected an object {{id: answer}}, got a JSON {type(doc).__name__}")
        for qid, value in doc.items():
            if qid in seen:
                problems.append(Problem(file, qid, f"duplicate id {qid!r}; skipped"))
                continue
            gold = dataset[qid].answer if dataset is not None and qid in dataset else None
            try:
                answer = prediction_answer(value, gold)
            except ValueError as e:
                problems.append(Problem(file, qid, f"{e}; skipped"))
                continue
            seen.add(qid)
            meta = {"raw": value} if isinstance(value, (str, int, float)) else {}
            preds.append(Prediction(qid, answer=answer, metadata={**meta, "mintaka_pred": value}))
    as_pandas(preds)
    if dataset is not None:
        problems += script_refusals(dataset, {p.id for p in preds}, str(paths[0]))
    return Run(Path(paths[0]).stem, preds, "mintaka-run", list(paths), problems)


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def as_pandas(preds: list[Prediction]) -> None:
    """``metadata["mintaka_pred"]`` as evaluate.py's ``pd.DataFrame(json.load(f).items())`` holds
    it (pandas 1.x/2.x inference of the ``pred`` column): when every value is a number or null
    and some is a float or a null, the column is float64: integers become floats (text mode then
    reads ``4`` as ``"4.0"``) and null becomes NaN (scored as a prediction, ``"nan"``)."""
    vals = [p.metadata["mintaka_pred"] for p in preds]
    if not vals or not all(v is None or _numeric(v) for v in vals) or all(v is None for v in vals):
        return
    if all(isinstance(v, int) for v in vals):
        return  # int64: the integers as they are
    for p in preds:
        v = p.metadata["mintaka_pred"]
        p.metadata["mintaka_pred"] = float("nan") if v is None else float(v)


def script_refusals(dataset: Dataset, predicted: set[str], file: str) -> list[Problem]:
    """Warnings naming the questions on which the official evaluate.py stops: a question without
    a prediction whose gold answer is not empty (the left merge gives NaN: ``Counter(NaN)`` in KG
    mode, ``unicodedata.normalize(NaN)`` in text mode raise). kgqa scores them 0."""
    missing = [it.id for it in dataset.items if it.id not in predicted
               and _gold_not_empty(it.metadata.get("mintaka_answer"))]
    if not missing:
        return []
    return [Problem(file, None, f"{len(missing)} question(s) have no prediction (the first: {missing[0]}): the official "
                                "evaluate.py stops on them (TypeError on NaN); kgqa scores them 0", "warning")]


def _gold_not_empty(raw: Any) -> bool:
    if not isinstance(raw, dict):
        return False
    values = raw.get("answer")
    if raw.get("answerType") == "entity" and values is None:
        return bool(raw.get("mention"))  # text mode reads the mention (KG mode: None, no crash)
    return bool(values)


_KEY = re.compile(r'^\{\s*"([0-9a-f]{8})"\s*:\s*(["\[\dtfn-])')


def sniff_dataset(sample: formats.Sample) -> float:
    h = sample.head.lstrip()
    if not h.startswith("["):
        return 0.0
    if '"complexityType"' in h and '"answerType"' in h:
        return 0.95
    if '"questionEntity"' in h and '"translations"' in h:
        return 0.9
    return 0.0


def sniff_run(sample: formats.Sample) -> float:
    return 0.7 if _KEY.match(sample.head.lstrip()) else 0.0


DATASET = formats.register(formats.Format(
    name="mintaka",
    kind="dataset",
    description="Mintaka JSON (id, question, translations, answer {answerType, answer}, complexityType, category)",
    sniff=sniff_dataset,
    load=load_mintaka_dataset,
    extensions=(".json",),
))

RUN = formats.register(formats.Format(
    name="mintaka-run",
    kind="run",
    description="Mintaka predictions {id: answer} (text or KG mode: strings, Q-codes, numbers, booleans, lists, null)",
    sniff=sniff_run,
    load=load_mintaka_run,
    extensions=(".json",),
    aliases=("mintaka",),
))
