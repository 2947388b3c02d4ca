"""QALD JSON (QALD-3..10, QALD-9-plus) and GERBIL's extended QALD JSON: datasets, runs, writer.

File shape::

    {"dataset": {"id": ...},
     "questions": [{"id": "99", "answertype": "resource", "aggregation": false, ...,
                    "question": [{"language": "en", "string": "...", "keywords": "a, b"}],
                    "query": {"sparql": "..."},
                    "answers": [{"head": {...}, "results": {"bindings": [...]}}]}]}

Extended QALD (eQALD, as GERBIL writes it) moves ``answertype``/``aggregation``/... into a
``metadata`` object, spells the query ``query.SPARQL`` and may give answers as
``[{"bindings": [...], "confidence": ...}]`` (no ``results`` wrapper).

Mapping of one question object to an :class:`~kgqa.model.Item`:

- ``id``: the JSON ``id`` as a string (QALD-10 ids are integers);
- ``questions[lang]``: the first ``string`` given for ``lang``; further strings for the same
  language (QALD-9-plus paraphrases) go to ``metadata["paraphrases"][lang]`` (a list);
- ``keywords[lang]``: ``keywords`` split on commas, each stripped, empty ones dropped;
- ``sparql``: ``query.sparql`` (or ``query.SPARQL``); other query keys (``pseudo``,
  ``schemaless``) go to ``metadata["query"]``;
- ``answer``: every answer object converted with
  :func:`kgqa.model.answer.from_results_json` and merged with :func:`kgqa.model.answer.merge`;
  ``None`` when ``answers`` is absent; an empty list is an empty answer (as QALD XML's
  ``<answers/>``: QALD-5's out-of-scope questions, whose gold is "no answer");
- ``answer_type``: ``answertype``;
- ``metadata``: every other key of the question (and of an eQALD ``metadata`` object), e.g.
  ``aggregation``, ``onlydbo``, ``hybrid``; ``confidence`` values of eQALD answers go to
  ``metadata["confidence"]``. ``groups`` and ``lang_ids`` objects (written by kgqa) are read
  back into the item's fields of that name.

Older and variant layouts read by the same loader:

- **QALD-5 JSON**: the per-language entries are called ``body``, ``query`` is a plain string
  (``"OUT OF SCOPE"`` for questions without a query: ``sparql`` None and
  ``metadata["query"]["out_of_scope"]``), answers are ``[{"string": ...}]`` (absolute http(s)
  IRIs become IRIs, other strings simple literals; a single "true"/"false" with answer type
  boolean, or none, a boolean answer);
- **QALD-7 ``*-extended-json``**: every question is wrapped as ``{"question": {...}}``, the
  per-language entries (key ``language``) carry ``question`` text, ``keywords`` and their own
  ``SPARQL`` (the English one is taken), ``answers`` is one results object;
- **non-standard binding types** (``number``, ``text``, ``list``, ``string``, ``date``,
  ``boolean``, seen in QALD-6 hybrid and QALD-7/8 multilingual files) are read by
  :func:`kgqa.model.answer.tolerant_cells` (typed literals; a list becomes one row per element)
  and each reading is recorded as a warning: the question is kept.

A QALD JSON **run** (the GERBIL upload format) has the same shape; each question becomes a
:class:`~kgqa.model.Prediction` with ``sparql`` and ``answer``. A run question whose
``answers`` key is absent has answer ``None`` ("no answer"); an answer object with an empty
bindings list is an empty answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.jsonio import read_json, write_atomic
from kgqa.model import BooleanAnswer, Dataset, InputError, Item, Prediction, Problem, Run, Status, TableAnswer
from kgqa.model.answer import Answer, from_results_json, merge, to_results_json
from kgqa.model.terms import IRI, BNode, Literal, guess_term, to_sparql_json

#: answer types used by QALD, GERBIL and kgqa writers
KNOWN_ANSWER_TYPES = frozenset({"resource", "uri", "number", "date", "boolean", "string", "list", "literal"})

_TOP_KEYS = {"id", "question", "query", "answers", "answertype", "metadata", "groups", "lang_ids", "body", "language"}


# --------------------------------------------------------------------------- shared checks


def split_keywords(text: Any) -> list[str]:
    """QALD keywords string -> list: split on commas, strip, drop empty entries.
    A list is accepted as is (each entry stripped)."""
    if text is None:
        return []
    parts = text if isinstance(text, list) else str(text).split(",")
    return [p.strip() for p in (str(x) for x in parts) if p.strip()]


def answer_type_problem(answer: Answer | None, answer_type: str | None) -> str | None:
    """A message when ``answer`` contradicts ``answer_type`` (None when consistent):
    ``boolean`` with a table answer, any other type with a boolean answer, ``number`` or
    ``date`` with IRI cells. Unknown types are reported too."""
    if answer_type is None:
        return None
    t = answer_type.lower()
    if t not in KNOWN_ANSWER_TYPES:
        return f"unknown answer type {answer_type!r} (expected one of: {', '.join(sorted(KNOWN_ANSWER_TYPES))})"
    if answer is None:
        return None
    if t == "boolean" and not isinstance(answer, BooleanAnswer):
        return f"answer type is boolean but the answer is a table of {len(answer)} row(s)"
    if t != "boolean" and isinstance(answer, BooleanAnswer):
        return f"answer type is {answer_type} but the answer is a boolean"
    if t in ("number", "date") and isinstance(answer, TableAnswer):
        iris = [c for row in answer.rows for c in row if isinstance(c, (IRI, BNode))]
        if iris:
            return f"answer type is {answer_type} but the answer holds IRI {iris[0]}"
    return None


def string_answers(raw: list[Any], answer_type: Any) -> Answer:
    """QALD-5 JSON answers ``[{"string": "..."}, ...]``: a boolean answer when the answer type
    is boolean (or the only string is true/false), else one column of terms (absolute http(s)
    IRIs as IRIs, everything else simple literals)."""
    texts = [str(o["string"]) for o in raw]
    t = str(answer_type or "").lower()
    if len(texts) == 1 and texts[0].strip().lower() in ("true", "false") and t in ("boolean", ""):
        return BooleanAnswer(texts[0].strip().lower() == "true")
    if t == "boolean":
        raise ValueError(f"answer type is boolean but the answers are {texts[:3]!r}")
    return TableAnswer.single_column([guess_term(x) for x in texts], "string")


def parse_answers(raw: Any, where: str, notes: list[str] | None = None, answer_type: Any = None) -> tuple[Answer | None, list[Any]]:
    """Answer from a QALD ``answers`` value (list of SPARQL results objects, eQALD
    ``{"bindings": [...]}`` objects, or QALD-5's ``[{"string": ...}]``). ``notes`` collects
    how non-standard binding types were read. Raises ValueError with a precise message."""
    if raw is None:
        return None, []
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list):
        raise ValueError(f"'answers' must be a list of SPARQL results objects, got {type(raw).__name__}")
    if raw and all(isinstance(o, dict) and "string" in o and not ({"head", "results", "boolean", "bindings"} & set(o)) for o in raw):
        return string_answers(raw, answer_type), []
    parsed: list[Answer] = []
    confidence: list[Any] = []
    for i, obj in enumerate(raw):
        if not isinstance(obj, dict):
            raise ValueError(f"answers[{i}] is not an object")
        if "confidence" in obj:
            confidence.append(obj["confidence"])
        if "results" not in obj and "boolean" not in obj and "bindings" in obj:
            obj = {"head": obj.get("head") or {}, "results": {"bindings": obj["bindings"]}}
        try:
            parsed.append(from_results_json(obj, notes))
        except ValueError as e:
            raise ValueError(f"answers[{i}]: {e}") from None
    return merge(parsed), confidence


def _questions(raw: Any) -> tuple[dict[str, str], dict[str, list[str]], dict[str, list[str]]]:
    questions: dict[str, str] = {}
    keywords: dict[str, list[str]] = {}
    paraphrases: dict[str, list[str]] = {}
    if raw is None:
        return questions, keywords, paraphrases
    if isinstance(raw, dict):  # {"en": "..."} shorthand
        raw = [{"language": k, "string": v} for k, v in raw.items()]
    if not isinstance(raw, list):
        raise ValueError(f"'question' must be a list of {{language, string}} objects, got {type(raw).__name__}")
    for i, q in enumerate(raw):
        if not isinstance(q, dict):
            raise ValueError(f"question[{i}] is not an object")
        lang = q.get("language") or q.get("lang")
        text = q.get("string")
        if text is None and isinstance(q.get("question"), str):  # QALD-7 *-extended-json
            text = q.get("question")
        if not lang:
            raise ValueError(f"question[{i}] has no 'language'")
        if not isinstance(lang, str):
            raise ValueError(f"question[{i}].language must be a language tag (text), got {type(lang).__name__}")
        kw = split_keywords(q.get("keywords"))
        if kw and lang not in keywords:
            keywords[lang] = kw
        if text is None:
            continue
        text = str(text)
        if lang in questions:
            paraphrases.setdefault(lang, []).append(text)
        else:
            questions[lang] = text
    return questions, keywords, paraphrases


def _query(raw: Any) -> tuple[str | None, dict[str, Any]]:
    if raw is None:
        return None, {}
    if isinstance(raw, str):
        return (raw or None), {}
    if not isinstance(raw, dict):
        raise ValueError(f"'query' must be an object with 'sparql', got {type(raw).__name__}")
    rest = dict(raw)
    sparql = rest.pop("sparql", None)
    if sparql is None:
        sparql = rest.pop("SPARQL", None)
    else:
        rest.pop("SPARQL", None)
    if sparql is not None and not isinstance(sparql, str):
        raise ValueError("'query.sparql' is not a string")
    return (sparql if sparql and sparql.strip() else None), rest


def unwrap(q: Any) -> Any:
    """QALD-7 ``*-extended-json`` files wrap every question object: ``{"question": {"id":
    ..., "language": [...], "answers": {...}, "metadata": {...}}}``; return the inner object."""
    if isinstance(q, dict) and set(q) == {"question"} and isinstance(q["question"], dict) and "id" in q["question"]:
        return q["question"]
    return q


def _question_list(q: dict[str, Any]) -> Any:
    """The per-language question entries: ``question`` (QALD-3, 6-10), ``body`` (QALD-5 JSON)
    or ``language`` (QALD-7 extended JSON: ``{"language", "question", "keywords", "SPARQL"}``)."""
    for key in ("question", "body", "language"):
        v = q.get(key)
        if isinstance(v, (list, dict)):
            return v
    return None


def _language_sparql(raw: Any) -> str | None:
    """The query of a QALD-7 extended-JSON question: the English entry's ``SPARQL`` (they are
    the same in every language), else the first one given."""
    if not isinstance(raw, list):
        return None
    found = [(e.get("language"), e.get("SPARQL") or e.get("sparql")) for e in raw if isinstance(e, dict)]
    found = [(lang, qs) for lang, qs in found if isinstance(qs, str) and qs.strip()]
    for lang, qs in found:
        if lang == "en":
            return qs
    return found[0][1] if found else None


def _record_name(i: int, q: Any) -> str:
    q = unwrap(q)
    if isinstance(q, dict) and "id" in q and isinstance(q["id"], (str, int)) and not isinstance(q["id"], bool):
        return f"question id {q['id']}"
    return f"questions[{i}]"


def _document(path: Path) -> tuple[dict[str, Any], list[Any]]:
    doc = read_json(path)
    if isinstance(doc, list):  # a bare list of question objects
        doc = {"questions": doc}
    if not isinstance(doc, dict) or not isinstance(doc.get("questions"), list):
        raise InputError(path, "not QALD JSON: expected an object with a 'questions' list")
    return doc, doc["questions"]


# --------------------------------------------------------------------------- dataset


def parse_item(q: Any, file: str, record: str, problems: list[Problem]) -> Item | None:
    """One QALD question object -> Item; None (with an error in ``problems``) if broken."""
    if not isinstance(q, dict):
        problems.append(Problem(file, record, f"expected a question object, got {type(q).__name__}; skipped"))
        return None
    q = unwrap(q)
    if q.get("id") is None or str(q.get("id")).strip() == "":
        problems.append(Problem(file, record, "question has no 'id'; skipped"))
        return None
    meta_obj = q.get("metadata") if isinstance(q.get("metadata"), dict) else {}
    answer_type = q.get("answertype", meta_obj.get("answertype"))
    notes: list[str] = []
    try:
        questions, keywords, paraphrases = _questions(_question_list(q))
        sparql, query_rest = _query(q.get("query"))
        if sparql is None:
            sparql = _language_sparql(q.get("language"))
        answer, confidence = parse_answers(q.get("answers"), record, notes, answer_type)
    except ValueError as e:
        problems.append(Problem(file, record, f"{e}; skipped"))
        return None
    if answer is None and q.get("answers") == []:
        answer = TableAnswer((), ())  # an empty gold answer, as <answers/> in QALD XML
    for note in notes:
        problems.append(Problem(file, record, f"{note} (question kept)", "warning"))
    if sparql is not None and sparql.strip().upper() == "OUT OF SCOPE":  # QALD-5 marks these
        query_rest = {**query_rest, "out_of_scope": True}
        sparql = None
    metadata: dict[str, Any] = {k: v for k, v in meta_obj.items() if k not in ("answertype", "keywords")}
    if isinstance(meta_obj.get("keywords"), (str, list)) and not keywords:
        kw = split_keywords(meta_obj["keywords"])
        if kw:
            keywords["en"] = kw
    metadata.update({k: v for k, v in q.items() if k not in _TOP_KEYS})
    if "metadata" in q and not isinstance(q["metadata"], dict):
        metadata["metadata"] = q["metadata"]
    if paraphrases:
        metadata["paraphrases"] = paraphrases
    if query_rest:
        metadata["query"] = query_rest
    if confidence:
        metadata["confidence"] = confidence if len(confidence) > 1 else confidence[0]
    groups = q.get("groups") if isinstance(q.get("groups"), dict) else {}
    lang_ids = q.get("lang_ids") if isinstance(q.get("lang_ids"), dict) else {}
    item = Item(
        id=str(q["id"]),
        questions=questions,
        sparql=sparql,
        answer=answer,
        answer_type=None if answer_type is None else str(answer_type),
        keywords=keywords,
        groups={str(k): str(v) for k, v in groups.items()},
        metadata=metadata,
        lang_ids={str(k): str(v) for k, v in lang_ids.items()},
    )
    check_item(item, file, record, problems)
    return item


def check_item(item: Item, file: str, record: str, problems: list[Problem]) -> None:
    """Warnings for an item that is kept: no question text, neither query nor answer,
    unknown answer type, answer contradicting the answer type."""
    if not item.questions:
        problems.append(Problem(file, record, "no question text in any language", "warning"))
    if item.sparql is None and item.answer is None:
        problems.append(Problem(file, record, "neither a query nor answers", "warning"))
    msg = answer_type_problem(item.answer, item.answer_type)
    if msg:
        problems.append(Problem(file, record, msg, "warning"))


#: metadata key of the answer QALD's evaluation.rb reads for an id a file repeats (the last
#: record's, as SPARQL-results JSON: the script's hash keeps it); the ``qald`` profile scores it
LAST_ANSWER = "qald_script_answer"


def unique_items(items: Iterable[tuple[str, Item]], file: str, problems: list[Problem], seen: set[str]) -> list[Item]:
    """Items with ids not seen before; a duplicate id is an error and the later record is skipped
    (its answer is kept in the first one's ``metadata[LAST_ANSWER]`` for the ``qald`` profile)."""
    out = []
    kept: dict[str, Item] = {}
    for record, it in items:
        if it.id in seen:
            problems.append(Problem(file, record, f"duplicate id {it.id!r}; skipped (the first one is kept; "
                                                  "QALD's evaluation.rb reads the last)"))
            if it.id in kept:
                kept[it.id].metadata[LAST_ANSWER] = None if it.answer is None else to_results_json(it.answer)
            continue
        seen.add(it.id)
        kept[it.id] = it
        out.append(it)
    return out


def load_qald_json_dataset(paths: list[Path], **options: Any) -> Dataset:
    """QALD JSON dataset(s); several files are concatenated (ids must stay unique)."""
    items: list[Item] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    meta: dict[str, Any] = {}
    for path in paths:
        doc, questions = _document(path)
        file = str(path)
        parsed = []
        for i, q in enumerate(questions):
            rec = _record_name(i, q)
            it = parse_item(q, file, rec, problems)
            if it is not None:
                parsed.append((rec, it))
        items += unique_items(parsed, file, problems, seen)
        ds_obj = doc.get("dataset")
        if isinstance(ds_obj, dict):
            meta.update(ds_obj)
        meta.update({k: v for k, v in doc.items() if k not in ("dataset", "questions")})
    name = str(meta.get("id") or Path(paths[0]).stem)
    return Dataset(name, items, "qald-json", list(paths), problems, meta)


# --------------------------------------------------------------------------- run


def system_failure(block: Any) -> tuple[Status, str]:
    """The status of an entry written by ``kgqa system ask``, whose ``kgqa`` object records how
    asking the live system ended: a failed outcome (``http_error``, ``timeout``,
    ``malformed_response``, ``refused``) becomes the prediction's status with its message, so
    it is scored as that failure, not as a missing answer. OK when absent or ``ok``."""
    if isinstance(block, dict) and block.get("outcome") not in (None, "ok"):
        try:
            return Status(block["outcome"]), str(block.get("message") or "")
        except ValueError:
            pass
    return Status.OK, ""


def _keep_last(kept: Prediction | None, q: dict, rec: str) -> None:
    """A repeated run entry: its answer (what evaluation.rb reads) kept in the first one's
    ``metadata[LAST_ANSWER]`` (an unreadable one: no rows)."""
    if kept is None or kept.metadata is None:
        return
    try:
        answer = parse_answers(q.get("answers"), rec, [], q.get("answertype"))[0] if "answers" in q else None
    except ValueError:
        answer = None
    kept.metadata[LAST_ANSWER] = None if answer is None else to_results_json(answer)


def load_qald_json_run(paths: list[Path], dataset: Dataset | None = None, **options: Any) -> Run:
    """A GERBIL/QALD JSON run: one Prediction per question (id, sparql, answer)."""
    preds: list[Prediction] = []
    by_id: dict[str, Prediction] = {}
    problems: list[Problem] = []
    seen: set[str] = set()
    meta: dict[str, Any] = {}
    for path in paths:
        doc, questions = _document(path)
        file = str(path)
        for i, q in enumerate(questions):
            rec = _record_name(i, q)
            q = unwrap(q)
            if not isinstance(q, dict) or q.get("id") is None:
                problems.append(Problem(file, rec, "expected a question object with an 'id'; skipped"))
                continue
            pid = str(q["id"])
            if pid in seen:
                problems.append(Problem(file, rec, f"duplicate id {pid!r}; skipped (the first one is kept; "
                                                   "QALD's evaluation.rb reads the last)"))
                _keep_last(by_id.get(pid), q, rec)
                continue
            notes: list[str] = []
            try:
                sparql, query_rest = _query(q.get("query"))
                if sparql is None:
                    sparql = _language_sparql(q.get("language"))
                answer, confidence = parse_answers(q.get("answers"), rec, notes, q.get("answertype")) if "answers" in q else (None, [])
            except ValueError as e:
                problems.append(Problem(file, rec, f"{e}; skipped"))
                continue
            for note in notes:
                problems.append(Problem(file, rec, f"{note} (entry kept)", "warning"))
            if "answers" in q and answer is None:
                # an explicit empty answers list: the system answered nothing
                answer = TableAnswer((), ())
            seen.add(pid)
            md: dict[str, Any] = {}
            if confidence:
                md["confidence"] = confidence if len(confidence) > 1 else confidence[0]
            if query_rest:
                md["query"] = query_rest
            qlist = _question_list(q)
            try:
                questions_, _, _ = _questions(qlist) if qlist is not None else ({}, {}, {})
            except ValueError as e:  # question texts in a run are informational: keep the prediction
                problems.append(Problem(file, rec, f"{e}; question texts ignored", "warning"))
                questions_ = {}
            if questions_:
                md["questions"] = questions_
            status, message = system_failure(q.get("kgqa"))
            preds.append(Prediction(id=pid, sparql=sparql, answer=answer, status=status, message=message, metadata=md))
            by_id[pid] = preds[-1]
        ds_obj = doc.get("dataset")
        if isinstance(ds_obj, dict):
            meta.update(ds_obj)
    name = str(meta.get("id") or Path(paths[0]).stem)
    return Run(name, preds, "qald-json", list(paths), problems, meta)


# --------------------------------------------------------------------------- writer


def _item_json(it: Item) -> dict[str, Any]:
    out: dict[str, Any] = {"id": it.id}
    if it.answer_type is not None:
        out["answertype"] = it.answer_type
    extra = dict(it.metadata)
    extra.pop(LAST_ANSWER, None)
    paraphrases = extra.pop("paraphrases", {}) or {}
    query_rest = extra.pop("query", None)
    for k, v in extra.items():
        v = _plain(v)
        if k in _TOP_KEYS:
            k = f"{k}_"  # never shadow a QALD key (not expected in practice)
        out[k] = v
    qs = []
    langs = list(dict.fromkeys([*it.questions, *it.keywords]))
    for lang in langs:
        entry: dict[str, Any] = {"language": lang}
        if lang in it.questions:
            entry["string"] = it.questions[lang]
        if it.keywords.get(lang):
            entry["keywords"] = ", ".join(it.keywords[lang])
        qs.append(entry)
        for p in paraphrases.get(lang, []):
            qs.append({"language": lang, "string": p})
    out["question"] = qs
    query: dict[str, Any] = dict(query_rest) if isinstance(query_rest, dict) else {}
    if it.sparql is not None:
        query["sparql"] = it.sparql
    if query:
        out["query"] = query
    if it.answer is not None:
        out["answers"] = [to_results_json(it.answer)]
    if it.groups:
        out["groups"] = dict(it.groups)
    if it.lang_ids:
        out["lang_ids"] = dict(it.lang_ids)
    return out


def _prediction_json(p: Prediction) -> dict[str, Any]:
    out: dict[str, Any] = {"id": p.id}
    qs = p.metadata.get("questions") or {}
    out["question"] = [{"language": k, "string": v} for k, v in qs.items()]
    if p.sparql is not None:
        out["query"] = {"sparql": p.sparql}
    answer = p.answer
    if answer is None and p.ranked is not None:
        answer = TableAnswer.single_column(p.ranked)
    if answer is not None:
        out["answers"] = [to_results_json(answer)]
    return out


def to_json(obj: Dataset | Run) -> dict[str, Any]:
    """The QALD JSON document of a dataset or a run."""
    if isinstance(obj, Dataset):
        ds_meta = {k: v for k, v in obj.metadata.items() if _jsonable(v)}
        ds_meta["id"] = str(ds_meta.get("id") or obj.name)
        return {"dataset": ds_meta, "questions": [_item_json(it) for it in obj.items]}
    if isinstance(obj, Run):
        return {"dataset": {"id": obj.name}, "questions": [_prediction_json(p) for p in obj.predictions]}
    raise TypeError(f"cannot write {type(obj).__name__} as QALD JSON")


def _plain(v: Any) -> Any:
    """Metadata value with answers and terms replaced by their SPARQL-results JSON form."""
    if isinstance(v, (BooleanAnswer, TableAnswer)):
        return to_results_json(v)
    if isinstance(v, (IRI, Literal, BNode)):
        return to_sparql_json(v)
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v)
        return True
    except (TypeError, ValueError):
        return False


def write(obj: Dataset | Run, path: Path) -> None:
    """Write ``obj`` as QALD JSON (UTF-8, indented), atomically (temp file + rename).
    Item metadata must be JSON-serialisable; a value that is not raises TypeError."""
    doc = to_json(obj)
    write_atomic(Path(path), (json.dumps(doc, ensure_ascii=False, indent=2), "\n"))


# --------------------------------------------------------------------------- registration

_QUESTIONS = re.compile(r'"questions"\s*:\s*\[')
_QUESTION_LANG = re.compile(r'"question"\s*:\s*\[\s*\{\s*"(language|string|keywords)"')
_BODY_LANG = re.compile(r'"body"\s*:\s*\[\s*\{\s*"(language|string|keywords)"')
_WRAPPED = re.compile(r'"questions"\s*:\s*\[\s*\{\s*"question"\s*:\s*\{\s*"id"')


def sniff(sample: formats.Sample) -> float:
    head = sample.head.lstrip()
    if not head.startswith(("{", "[")):
        return 0.0
    if _QUESTIONS.search(head) and (_QUESTION_LANG.search(head) or _BODY_LANG.search(head) or _WRAPPED.search(head)):
        return 0.9
    if _QUESTIONS.search(head) and '"query"' in head:
        return 0.5
    if _QUESTIONS.search(head) and ('"answers"' in head or '"id"' in head):
        return 0.3  # e.g. a run whose first question starts with a long answers block
    return 0.0


DATASET = formats.register(formats.Format(
    name="qald-json",
    kind="dataset",
    description="QALD JSON (QALD-3..10, QALD-9-plus) and GERBIL extended QALD JSON",
    sniff=sniff,
    load=load_qald_json_dataset,
    write=write,
    extensions=(".json",),
    aliases=("qald", "eqald"),
))

RUN = formats.register(formats.Format(
    name="qald-json",
    kind="run",
    description="QALD JSON run (GERBIL upload format): questions with query.sparql and/or answers",
    sniff=sniff,
    load=load_qald_json_run,
    write=write,
    extensions=(".json",),
    aliases=("qald", "gerbil"),
))
