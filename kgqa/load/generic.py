"""Generic datasets and runs: JSON Lines and CSV, with a lossless JSONL writer.

**JSONL dataset** (``--format jsonl``): one JSON object per non-blank line::

    {"id": "q1", "question": "Who wrote Hamlet?", "sparql": "SELECT ...",
     "answers": ["http://dbpedia.org/resource/William_Shakespeare"], "answer_type": "resource"}

Fields of a record, mapped to an :class:`~kgqa.model.Item`:

- ``id`` (required): a string or integer (integers become their decimal string);
- the question: ``questions`` (an object language -> text), and/or ``question_<lang>`` keys
  (``question_en``, ``question_de``, ...), and/or ``question`` (a string: English, or an
  object language -> text). At least one question text is required;
- ``sparql`` or ``query``: the gold SPARQL (a string);
- ``answers`` (or ``answer``): see :func:`parse_answer`;
- ``answer_type``: a string;
- ``keywords`` (object language -> list of strings), ``groups`` (object of strings),
  ``lang_ids`` (object language -> id) and ``metadata`` (object) are read into the item's
  fields of that name (the JSONL writer produces them);
- every other key goes to ``metadata`` unchanged.

A record that is not an object, lacks an id or a question, or has a malformed answer is
skipped and reported as a :class:`~kgqa.model.Problem` naming its line (``line 7``); a
duplicate id is reported and the later record skipped. A line that is not JSON at all is
such a problem too (the file stays loadable); a file that is not UTF-8 is an InputError.

**CSV dataset** (``--format csv``): a header row, then one item per row. Columns ``id``,
``question`` or ``question_<lang>``, ``sparql`` or ``query``, ``answers`` (or ``answer``),
``answer_type``; every other non-empty cell goes to ``metadata`` as a string. An ``answers``
cell holding a JSON list, object or boolean is parsed as JSON (see :func:`parse_answer`);
otherwise it is split on ``answer_separator`` (default ``"|"``), each part stripped and
typed with :func:`~kgqa.model.terms.guess_term`. An empty cell means "no stored answer".
Problems name the CSV line (``line 4``, the header being line 1).

**JSONL run** (kind ``run``, name ``jsonl``): one object per line::

    {"id": "q1", "query": "SELECT ...", "answer": <answer>, "ranked": [...],
     "elapsed": 0.42, "error": "timeout talking to the KG"}

- ``query`` (or ``sparql``): the predicted SPARQL; ``answer`` (or ``answers``): a predicted
  answer as in :func:`parse_answer`; ``ranked``: a list of terms (term objects or strings)
  in rank order; ``elapsed``: seconds (a non-negative number);
- ``error`` (a string): the system reports a failure: ``status`` becomes
  :attr:`~kgqa.model.Status.EXEC_ERROR` and the message is the error string. ``status``
  (one of the :class:`~kgqa.model.Status` values) and ``message`` may be given explicitly
  (the writer does this); ``metadata`` (an object) is read back; any other key goes to
  ``metadata``.
- A duplicate id is a problem: the first record is kept, later ones are skipped and reported.

**Writer**: :func:`write` writes a Dataset or a Run as JSONL, one object per item/prediction,
losslessly: answers as SPARQL 1.1 results objects (variables, rows, unbound cells and
booleans kept; terms as SPARQL-JSON term objects with datatype / language), questions as a
``questions`` object, and every other field under its own key. Reading the file back gives
equal items and predictions (metadata must be JSON-serialisable: the writer raises
TypeError otherwise).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from kgqa.load import jsonio
from kgqa.load import formats
from kgqa.load.jsonio import read_text, write_atomic, read_json
from kgqa.model import BooleanAnswer, Dataset, InputError, Item, Prediction, Problem, Run, Status, TableAnswer
from kgqa.model.answer import Answer, TextColumn, from_results_json, to_results_json
from kgqa.model.terms import FREEBASE_NS, IRI, XSD, Literal, Term, from_sparql_json, guess_term, guess_terms, to_sparql_json

# --------------------------------------------------------------------------- shared helpers


def parse_term(value: Any) -> Term:
    """One answer term: a SPARQL-JSON term object (``{"type": "uri", "value": ...}``), a
    GraftNet / NSM answer object (``{"kb_id": "m.01428y", "text": ...}``: a Freebase mid as its
    ``ns:`` IRI, another id as a literal) or a bare string typed with
    :func:`~kgqa.model.terms.guess_term`; a JSON integer becomes an
    ``xsd:integer`` literal, any other JSON number an ``xsd:decimal`` literal (a non-finite
    number is refused). Raises ValueError otherwise."""
    if isinstance(value, dict):
        if "kb_id" in value and "type" not in value:  # GraftNet / NSM answers: {"kb_id": "m.0x", "text": ...}
            return _kb_term(value)
        return from_sparql_json(value)
    if isinstance(value, str):
        return guess_term(value)
    if isinstance(value, bool):
        return Literal("true" if value else "false", XSD + "boolean")
    if isinstance(value, int):
        return Literal(str(value), XSD + "integer")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"answer value {value!r} is not a finite number")
        return Literal(repr(value), XSD + "decimal")
    raise ValueError(f"expected a term object or a string as an answer value, got {type(value).__name__} {value!r}")


FREEBASE_MID = re.compile(r"^[mg]\.[0-9a-z_]+$")


def freebase_term(arg: Any, entity: bool | None = None) -> Term:
    """A Freebase answer argument as a term: a mid (``m.0abc`` / ``g.1xyz``), or any argument
    of an answer typed as an entity, becomes ``ns:<mid>``; anything else a simple literal."""
    text = str(arg).strip()
    if entity is True or (entity is None and FREEBASE_MID.match(text)):
        return IRI(FREEBASE_NS + text)
    return Literal(text)


def _kb_term(value: dict) -> Term:
    """An answer of the GraftNet / NSM preprocessed WebQSP and CWQ files (``{"kb_id": "m.01428y",
    "text": "Jamaican English"}``): a Freebase mid as its ``ns:`` IRI, any other id (a value such
    as a year) as a simple literal of the id."""
    kb = value.get("kb_id")
    if not isinstance(kb, str) or not kb.strip():
        raise ValueError(f"answer {value!r}: 'kb_id' must be a non-empty string")
    return freebase_term(kb)


_STRS = frozenset({str})


def parse_answer(value: Any, variable: str = "answer") -> Answer | None:
    """An answer from its JSON form:

    - ``null``: no answer (None);
    - ``true`` / ``false``: a :class:`~kgqa.model.BooleanAnswer`;
    - an object: a SPARQL 1.1 results object (``{"head":..., "results":...}`` or
      ``{"head":..., "boolean":...}``);
    - a list: one term per element (term objects, strings typed with ``guess_term``, or
      numbers), as a one-column table over ``variable`` (order and duplicates kept).

    Raises ValueError with what was expected."""
    if value is None:
        return None
    if isinstance(value, bool):
        return BooleanAnswer(value)
    if isinstance(value, dict):
        return from_results_json(value)
    if isinstance(value, list):
        if _STRS.issuperset(map(type, value)):  # the common case: bare strings, typed on first use
            return TextColumn.of(list(value), variable)
        terms = []
        for i, v in enumerate(value):
            try:
                terms.append(parse_term(v))
            except ValueError as e:
                raise ValueError(f"answer element {i + 1}: {e}") from None
        return TableAnswer.single_column(terms, variable)
    raise ValueError(
        f"expected an answer as a list of terms, a SPARQL results object or a boolean, got {type(value).__name__} {value!r}"
    )


def text_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file, split on ``\\n`` only (a ``\\r`` before it is dropped;
    other Unicode line separators stay inside their line). A final newline does not start
    an extra line."""
    text = read_text(path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


#: bytes :func:`iter_text_lines` decodes at a time (then completed to the end of a line)
_BLOCK = 1 << 20


def iter_text_lines(path: Path) -> Iterator[str]:
    """:func:`text_lines`, read a block of lines at a time (memory does not grow with the file).
    A byte that is not UTF-8 raises the same :class:`InputError` as :func:`read_text`, naming its
    offset, line and column, once the lines before its line have been yielded."""
    for lines in iter_text_blocks(path):
        yield from lines


def iter_text_blocks(path: Path, start: int = 0, end: int | None = None) -> Iterator[list[str]]:
    """:func:`iter_text_lines` as lists of consecutive lines (about :data:`_BLOCK` bytes each);
    ``start``/``end``: only the lines between these byte offsets (each the start of a line, see
    :func:`line_start_near`; line numbers in messages then count from ``start``)."""
    try:
        fh = open(path, "rb")
    except OSError as e:
        raise InputError(path, f"cannot read file: {e.strerror or e}") from None
    with fh:
        offset, lines_before = start, 0  # of the block, in the file
        fh.seek(start)
        while True:
            block = fh.read(_BLOCK if end is None else min(_BLOCK, end - offset))
            if not block:
                return
            if not block.endswith(b"\n"):
                block += fh.readline()  # a block holds whole lines (no UTF-8 sequence holds a \n)
            bom = 3 if offset == 0 and block.startswith(jsonio.BOM) else 0
            try:
                text = block[bom:].decode("utf-8")
            except UnicodeDecodeError as e:
                at = bom + e.start
                line_start = block.rfind(b"\n", 0, at) + 1
                if line_start > bom:
                    yield _split_lines(block[bom:line_start].decode("utf-8"))
                line = lines_before + block.count(b"\n", 0, at) + 1
                raise jsonio.not_utf8(path, block[at], offset + at, line, at - line_start + 1) from None
            yield _split_lines(text) if text else [""]  # a file of a BOM alone is one empty line
            offset += len(block)
            lines_before += block.count(b"\n")


def line_start_near(path: Path, offset: int) -> int:
    """The offset of the first line of ``path`` that starts at ``offset`` or after (the file's
    size when there is none): where to split a file into byte ranges of whole lines."""
    with open(path, "rb") as fh:
        if offset <= 0:
            return 0
        fh.seek(offset - 1)
        fh.readline()  # to the end of the line holding offset - 1
        return fh.tell()


def _split_lines(text: str) -> list[str]:
    """The lines of ``text`` as :func:`text_lines` splits them."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines] if "\r" in text else lines


def load_record_array(paths: list[Path], parse: Callable[[Any, int, str, str, list[Problem]], Any], *,
                      format_name: str, what: str, id_key: str | None = None, id_label: str | None = None) -> Dataset:
    """A dataset from JSON files that are each an array of question objects (CWQ, Mintaka, KQA Pro,
    GraphQuestions, ...): ``parse(rec, index, file, record, problems)`` makes one item (ValueError:
    the record is skipped and listed); records are named ``record N (id_label ID)`` after
    ``id_key``; a later duplicate id is listed and skipped. ``what`` names the format in the error
    for a file that is not such an array."""

    problems: list[Problem] = []
    parsed = []
    for path in paths:
        file = str(path)
        doc = read_json(path)
        if not isinstance(doc, list):
            raise InputError(path, f"not {what}: expected an array of question objects, got a JSON {type(doc).__name__}")
        for i, rec in enumerate(doc):
            record = f"record {i + 1}"
            if id_key is not None and isinstance(rec, dict) and id_key in rec:
                record += f" ({id_label + ' ' if id_label else ''}{rec[id_key]})"
            try:
                parsed.append((file, record, parse(rec, i, file, record, problems)))
            except ValueError as e:
                problems.append(Problem(file, record, f"{e}; skipped"))
    return Dataset(Path(paths[0]).stem, unique(parsed, problems), format_name, list(paths), problems)


def load_prediction_array(paths: list[Path], parse: Callable[[dict], Prediction], *, format_name: str,
                          what: str, id_key: str, keep: str = "first") -> Run:
    """A run from JSON files that are each an array of prediction objects (the files WebQSP's and
    ComplexWebQuestions' official scripts read): ``parse(rec)`` makes the prediction of one object
    whose ``id_key`` is a string or an integer (ValueError: the record is skipped and listed); a
    later duplicate id is listed and skipped (``keep="last"``: it replaces the earlier one, as a
    script reading the file into a dict does; ``keep="all"``: it is left to ``parse``, which saw
    it, and not listed). ``what`` names the format in the error for a file
    that is not such an array."""

    problems: list[Problem] = []
    preds: list[Prediction] = []
    seen: set[str] = set()
    for path in paths:
        file = str(path)
        doc = read_json(path)
        if not isinstance(doc, list):
            raise InputError(path, f"not {what}: expected a JSON array of objects with {id_key!r}, "
                                   f"got a JSON {type(doc).__name__}")
        for i, rec in enumerate(doc):
            rid = rec.get(id_key) if isinstance(rec, dict) else None
            if not isinstance(rid, (str, int)) or isinstance(rid, bool) or not str(rid).strip():
                problems.append(Problem(file, f"[{i}]", f"expected an object with {id_key!r}; skipped"))
                continue
            record = f"[{i}] ({str(rid).strip()})"
            try:
                pred = parse(rec)
            except ValueError as e:
                problems.append(Problem(file, record, f"{e}; skipped"))
                continue
            if pred.id in seen:
                if keep == "all":  # the caller keeps every row (it has seen this one)
                    continue
                if keep == "last":
                    problems.append(Problem(file, record, f"duplicate {id_key} {pred.id!r}; this later record "
                                                          "replaces the earlier one (as the official script reads it)",
                                            "warning"))
                    preds[next(i for i, p in enumerate(preds) if p.id == pred.id)] = pred
                    continue
                problems.append(Problem(file, record, f"duplicate {id_key} {pred.id!r}; skipped"))
                continue
            seen.add(pred.id)
            preds.append(pred)
    return Run(Path(paths[0]).stem, preds, format_name, list(paths), problems)


#: the per-record note :func:`note_textless` gathers into one warning per file
TEXTLESS = "no question text"


def note_textless(problems: list[Problem]) -> list[Problem]:
    """``problems`` with the per-record :data:`TEXTLESS` warnings of a file replaced by one
    warning that counts them (a file of records without question text still scores on every
    measure that needs no text: ids and answers or queries are enough)."""
    by_file: dict[str, list[str]] = {}
    out = []
    for p in problems:
        if p.message == TEXTLESS and p.severity == "warning":
            by_file.setdefault(p.file, []).append(p.record or "")
        else:
            out.append(p)
    for file, records in by_file.items():
        out.append(Problem(file, None, f"{len(records)} record(s) without question text (the first: {records[0]}): "
                                       "kept and scored by id; measures that read the text skip them", "warning"))
    return out


def unique(records: Iterable[tuple[str, str, Any]], problems: list[Problem]) -> list[Any]:
    """Objects (anything with an ``id``) given as ``(file, record, obj)``, keeping the first
    of each id in order; a later duplicate is an error problem naming where the first one
    is, and is skipped."""
    return list(iter_unique(records, problems))


def iter_unique(records: Iterable[tuple[str, str, Any]], problems: list[Problem]) -> Iterator[Any]:
    """:func:`unique` as a generator."""
    first: dict[str, tuple[str, str]] = {}
    for file, record, obj in records:
        oid = obj.id
        if oid in first:
            problems.append(_duplicate(first[oid], file, record, oid))
            continue
        first[oid] = (file, record)
        yield obj


def record_name(record: str | int) -> str:
    """A record's name: an int N (a JSONL line number, see :func:`_jsonl_unique`) is ``line N``."""
    return record if record.__class__ is str else f"line {record}"


def _duplicate(where_first: tuple[str, str | int], file: str, record: str | int, oid: str) -> Problem:
    f0, r0 = where_first
    where = record_name(r0) if f0 == file else f"{f0}, {record_name(r0)}"
    return Problem(file, record_name(record), f"duplicate id {oid!r} (first at {where}); skipped")


def _id(value: Any) -> str:
    if value.__class__ is str:
        stripped = value.strip()
        if stripped:
            return stripped
    if isinstance(value, bool) or value is None:
        raise ValueError(f"expected an id (a string or an integer), got {value!r}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError(f"expected an id (a non-empty string or an integer), got {value!r}")


# --------------------------------------------------------------------------- JSONL reading


_SKIP = object()


def _parse_line(line: str, n: int, file: str, plain: Callable[[str], Any], problems: list[Problem]) -> Any:
    """The JSON value of JSONL line ``n``, or _SKIP for a blank line or one that is not JSON (a
    problem naming line and column)."""
    doc = plain(line)  # the common flat record, read as jsonio.loads would read it
    if doc is None:
        if not line.strip():
            return _SKIP
        try:
            doc = jsonio.loads(line)
        except json.JSONDecodeError as e:
            problems.append(Problem(file, f"line {n}", f"not valid JSON at column {e.colno}: {e.msg}; skipped"))
            return _SKIP
    return doc


_QUESTION_KEY = re.compile(r"^question_([A-Za-z]{2,3}(?:[-_][A-Za-z0-9]+)*)$")
_ITEM_KEYS = {"id", "question", "questions", "sparql", "query", "answers", "answer", "answer_type",
              "keywords", "groups", "lang_ids", "metadata"}


def _str_map(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError(f"'{what}' must be an object of strings, got {value!r}")
    return dict(value)


def item_from_record(rec: Any, default_lang: str = "en") -> Item:
    """An Item from one generic record (a JSON object or a CSV row as a dict); raises
    ValueError naming what is wrong."""
    if not isinstance(rec, dict):
        raise ValueError(f"expected a JSON object, got {type(rec).__name__}")
    if "id" not in rec:
        raise ValueError("no 'id'")
    item_id = _id(rec["id"])
    questions: dict[str, str] = {}
    q = rec.get("question")
    if isinstance(q, str):
        if q.strip():
            questions[default_lang] = q
    elif isinstance(q, dict):
        questions.update(_str_map(q, "question"))
    elif q is not None:
        raise ValueError(f"'question' must be a string or an object language -> text, got {q!r}")
    if rec.get("questions") is not None:
        questions.update(_str_map(rec["questions"], "questions"))
    metadata: dict[str, Any] = {}
    for k, v in rec.items():
        if k in _ITEM_KEYS:  # none of them is a question_<lang> key
            continue
        m = _QUESTION_KEY.match(k)
        if m and isinstance(v, str):
            if v.strip():
                questions[m.group(1)] = v
        elif k not in _ITEM_KEYS and not m:
            metadata[k] = v
    if not questions:
        raise ValueError("no question text ('question', 'questions' or 'question_<lang>')")
    sparql = rec.get("sparql", rec.get("query"))
    if sparql is not None and not isinstance(sparql, str):
        raise ValueError(f"'sparql' must be a string, got {type(sparql).__name__}")
    raw_answer = rec["answers"] if "answers" in rec else rec.get("answer")
    answer = parse_answer(raw_answer)
    answer_type = rec.get("answer_type")
    if answer_type is not None and not isinstance(answer_type, str):
        raise ValueError(f"'answer_type' must be a string, got {answer_type!r}")
    keywords: dict[str, list[str]] = {}
    if rec.get("keywords") is not None:
        kw = rec["keywords"]
        if not isinstance(kw, dict) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in kw.values()
        ):
            raise ValueError(f"'keywords' must be an object language -> list of strings, got {kw!r}")
        keywords = {k: list(v) for k, v in kw.items()}
    groups = _str_map(rec["groups"], "groups") if rec.get("groups") is not None else {}
    lang_ids = _str_map(rec["lang_ids"], "lang_ids") if rec.get("lang_ids") is not None else {}
    if rec.get("metadata") is not None:
        if not isinstance(rec["metadata"], dict):
            raise ValueError(f"'metadata' must be an object, got {rec['metadata']!r}")
        metadata = {**rec["metadata"], **metadata}
    return Item(item_id, questions, sparql, answer, answer_type, keywords, groups, metadata, lang_ids)


def load_jsonl_dataset(paths: list[Path], **options: Any) -> Dataset:
    """JSONL dataset file(s), concatenated; ids must be unique across them. Option ``lang``
    (default ``en``): the language of a plain-string ``question``."""
    problems: list[Problem] = []
    items = list(jsonl_items(paths, problems, options.get("lang", "en")))
    return Dataset(Path(paths[0]).stem, items, "jsonl", list(paths), problems)


def jsonl_items(paths: list[Path], problems: list[Problem], lang: str = "en") -> Iterator[Item]:
    """The item of every valid record of JSONL dataset file(s), one at a time, the first of each
    id; what is skipped goes to ``problems``. A line holding the common record (see
    :func:`_fast_item`) is read by the fast path, any other by :func:`item_from_record`."""
    return _jsonl_unique(paths, problems, Item, lambda rec, file, record: item_from_record(rec, lang), _fast_items, lang)


def _jsonl_unique(paths: list[Path], problems: list[Problem], kind: type, parse: Callable[[Any, str, str], Any],
                  fast: Callable[..., list], *fast_args: Any) -> Iterator[Any]:
    """The objects (``kind``: items or predictions) of JSONL file(s) one at a time, the first of
    each id, as :func:`iter_unique` keeps them; blank lines are skipped and a line that is not
    JSON is a problem naming line and column. ``fast(lines, *fast_args)`` makes the object of
    each line of a block that holds the common record (None for any other line); ``parse(rec,
    file, record)`` makes the others from their JSON value (ValueError: skipped, listed in
    ``problems``). One generator, no tuple per line: a streamed dataset's hot path."""
    first: dict[str, Any] = {}  # id -> its line, or (file, line) outside the first file
    first_file = str(paths[0]) if paths else ""
    plain = jsonio.plain_object
    for path in paths:
        file = str(path)
        n = 0
        for lines in iter_text_blocks(path):
            objs = fast(lines, *fast_args)  # the fast path, a block of lines at once
            try:  # every line the common record: ids checked for the whole block
                ids = [o.id for o in objs]
            except AttributeError:  # a line that is not (None): line by line below
                ids = None
            if ids is not None:
                if len(set(ids)) == len(ids) and first.keys().isdisjoint(ids):
                    first.update(zip(ids, range(n + 1, n + 1 + len(ids))) if file == first_file
                                 else ((i, (file, n + 1 + k)) for k, i in enumerate(ids)))
                    n += len(ids)
                    yield from objs
                    continue
            for line, obj in zip(lines, objs):
                n += 1
                if obj is None:
                    obj = _parse_line(line, n, file, plain, problems)
                    if obj is _SKIP:
                        continue
                    try:
                        obj = parse(obj, file, f"line {n}")
                    except ValueError as e:
                        problems.append(Problem(file, f"line {n}", f"{e}; skipped"))
                        continue
                oid = obj.id
                if oid in first:
                    where = first[oid]
                    problems.append(_duplicate(where if where.__class__ is tuple else (first_file, where), file, n, oid))
                    continue
                first[oid] = n if file == first_file else (file, n)
                yield obj


_ANSWER_VARIABLE = ("answer",)
_set_variables = TableAnswer.variables.__set__  # type: ignore[attr-defined]
_set_texts = TextColumn.texts.__set__  # type: ignore[attr-defined]
_FAST_ITEM_KEYS = frozenset({"id", "question", "answers", "sparql", "query"})
_FAST_RUN_KEYS = frozenset({"id", "answer", "query", "sparql"})


def _fast_item(line: str, lang: str) -> Item | None:
    """The item of a JSONL line holding the common record: an object with a non-blank string
    ``id``, a non-blank string ``question``, optionally ``answers`` (null or a list of strings)
    and ``sparql``/``query`` (strings or null), nothing else; None for any other line. The item
    is the one :func:`item_from_record` makes of it (tests compare the two)."""
    return _fast_items([line], lang)[0]


def _fast_prediction(line: str) -> Prediction | None:
    """The prediction of a JSONL run line holding the common record: an object with a
    non-blank string ``id``, optionally ``answer`` (null or a list of strings) and
    ``query``/``sparql`` (strings or null), nothing else; None for any other line. The
    prediction is the one :func:`prediction_from_record` makes of it (tests compare the two)."""
    return _fast_predictions([line])[0]


# The two block readers below are the fast paths' one definition: a loop over a block of lines
# with every check inline (a function call per line and per check cost as much as the parsing).
# orjson reads the line; the fast paths then accept strings, nulls and lists of strings only,
# which orjson and ``json`` read alike.


def _fast_items(lines: list[str], lang: str) -> list[Item | None]:
    """:func:`_fast_item` of each of ``lines``."""
    return _flat_records(lines, _FAST_ITEM_KEYS, "answers", _flat_item, lang)


def _fast_predictions(lines: list[str]) -> list[Prediction | None]:
    """:func:`_fast_prediction` of each of ``lines``."""
    return _flat_records(lines, _FAST_RUN_KEYS, "answer", _flat_prediction)


def _flat_records(lines: list[str], keys: frozenset[str], answer_key: str,
                  make: Callable[..., Any], *args: Any) -> list[Any]:
    """``make(rec, answer, *args)`` of each line holding a JSON object with no key outside
    ``keys`` whose ``answer_key`` is null or a list of strings (a bare-string column, its terms
    made on first use); None for any other line (or where ``make`` says None)."""
    out: list[Any] = []
    add = out.append
    loads, malformed, strs = orjson.loads, orjson.JSONDecodeError, _STRS
    new, set_variables, set_texts = object.__new__, _set_variables, _set_texts
    for line in lines:
        try:
            rec = loads(line)
        except malformed:
            add(None)
            continue
        if rec.__class__ is not dict or not keys.issuperset(rec):
            add(None)
            continue
        answer = rec.get(answer_key)
        if answer is not None:
            if answer.__class__ is not list or not strs.issuperset(map(type, answer)):
                add(None)
                continue
            column = new(TextColumn)  # TextColumn.of(answer), inline
            set_variables(column, _ANSWER_VARIABLE)
            set_texts(column, answer)
            answer = column
        add(make(rec, answer, *args))
    return out


def flat_answer_blocks(paths: list[Path], start: int = 0,
                       end: int | None = None) -> Iterator[tuple[list[str], list[list[str] | None]] | None]:
    """The ids and answers (a list of strings, or None) of JSONL dataset file(s) a block of lines
    at a time, for a lean scorer that needs nothing else: every line must hold the common record
    as :func:`_flat_item` reads it (the same checks; ids stripped); blank lines are skipped, as
    the general path skips them. At the first line that holds anything else (another key, a
    non-string answer, a line that is not JSON) ``None`` is yielded and the reading stops: the
    caller then reads the files by the general path, with its checks and problems. Ids are not
    checked for duplicates (the caller keeps the ids seen). ``start``/``end``: a byte range of
    one file (see :func:`iter_text_blocks`)."""
    loads, malformed, strs, keys = orjson.loads, orjson.JSONDecodeError, _STRS, _FAST_ITEM_KEYS
    for path in paths:
        for lines in iter_text_blocks(path, start, end):
            ids: list[str] = []
            answers: list[list[str] | None] = []
            for line in lines:
                try:
                    rec = loads(line)
                except malformed:
                    if not line.strip():
                        continue
                    yield None
                    return
                if rec.__class__ is not dict or not keys.issuperset(rec):
                    yield None
                    return
                answer, q, item_id = rec.get("answers"), rec.get("question"), rec.get("id")
                # id, question and answers alone (the common record) hold no query
                sparql = None if len(rec) == 3 and answer is not None else rec.get("sparql", rec.get("query"))
                if ((answer is not None and (answer.__class__ is not list or not strs.issuperset(map(type, answer))))
                        or q.__class__ is not str or item_id.__class__ is not str or not q.strip()
                        or not (item_id := item_id.strip()) or (sparql is not None and sparql.__class__ is not str)):
                    yield None
                    return
                ids.append(item_id)
                answers.append(answer)
            yield ids, answers


def _flat_item(rec: dict, answer: Any, lang: str) -> Item | None:
    q, item_id, sparql = rec.get("question"), rec.get("id"), rec.get("sparql", rec.get("query"))
    if (q.__class__ is not str or item_id.__class__ is not str or not q.strip() or not item_id.strip()
            or (sparql is not None and sparql.__class__ is not str)):
        return None
    return Item(item_id.strip(), {lang: q}, sparql, answer, None, {}, {}, {}, {})


def _flat_prediction(rec: dict, answer: Any, ok: Status = Status.OK) -> Prediction | None:
    pid, sparql = rec.get("id"), rec.get("query", rec.get("sparql"))
    if pid.__class__ is not str or not pid.strip() or (sparql is not None and sparql.__class__ is not str):
        return None
    return Prediction(pid.strip(), sparql, answer, None, None, ok, "", {})


# --------------------------------------------------------------------------- CSV


def _csv_answer(cell: str, sep: str) -> Answer | None:
    text = cell.strip()
    if not text:
        return None
    if text[0] in "[{" or text in ("true", "false"):
        try:
            value = jsonio.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"answers cell looks like JSON but is not valid JSON (column {e.colno}: {e.msg})") from None
        return parse_answer(value)
    parts = [p.strip() for p in text.split(sep)] if sep else [text]
    return TableAnswer.single_column([guess_term(p) for p in parts if p], "answer")


def load_csv_dataset(paths: list[Path], **options: Any) -> Dataset:
    """CSV dataset file(s) (comma-separated, RFC 4180 quoting, UTF-8)."""
    sep = options.get("answer_separator", "|")
    lang = options.get("lang", "en")
    problems: list[Problem] = []
    parsed: list[tuple[str, str, Item]] = []
    for path in paths:
        file = str(path)
        text = read_text(path)
        reader = csv.reader(io.StringIO(text, newline=""))
        try:
            header = next(reader)
        except StopIteration:
            raise InputError(path, "empty CSV file: expected a header row with at least 'id' and 'question'") from None
        except csv.Error as e:
            raise InputError(path, f"malformed CSV at line 1: {e}") from None
        header = [h.strip() for h in header]
        has_q = any(h == "question" or _QUESTION_KEY.match(h) for h in header)
        if "id" not in header or not has_q:
            raise InputError(path, f"CSV header must name an 'id' and a 'question' (or 'question_<lang>') column; got {header}")
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as e:
                raise InputError(path, f"malformed CSV at line {reader.line_num}: {e}") from None
            record = f"line {reader.line_num}"
            if not any(c.strip() for c in row):
                continue
            if len(row) != len(header):
                problems.append(Problem(file, record, f"{len(row)} cells for {len(header)} header columns; skipped"))
                continue
            rec: dict[str, Any] = {}
            answer_cell = None
            for h, c in zip(header, row):
                if h in ("answers", "answer"):
                    answer_cell = c
                elif c.strip() or h == "id":
                    rec[h] = c
            try:
                answer = _csv_answer(answer_cell, sep) if answer_cell is not None else None
                it = item_from_record(rec, lang)
            except ValueError as e:
                problems.append(Problem(file, record, f"{e}; skipped"))
                continue
            it.answer = answer
            parsed.append((file, record, it))
    return Dataset(Path(paths[0]).stem, unique(parsed, problems), "csv", list(paths), problems)


# --------------------------------------------------------------------------- JSONL runs

_RUN_KEYS = {"id", "query", "sparql", "answer", "answers", "ranked", "elapsed", "error", "status", "message", "metadata"}


def prediction_from_record(rec: Any, file: str, record: str, problems: list[Problem]) -> Prediction:
    """A Prediction from one JSONL run record; raises ValueError for a record to skip and
    appends warnings (kept record, field dropped) to ``problems``."""
    if not isinstance(rec, dict):
        raise ValueError(f"expected a JSON object, got {type(rec).__name__}")
    if "id" not in rec:
        raise ValueError("no 'id'")
    pid = _id(rec["id"])
    sparql = rec.get("query", rec.get("sparql"))
    if sparql is not None and not isinstance(sparql, str):
        raise ValueError(f"'query' must be a string, got {type(sparql).__name__}")
    answer = parse_answer(rec["answer"] if "answer" in rec else rec.get("answers"))
    ranked = None
    if rec.get("ranked") is not None:
        if not isinstance(rec["ranked"], list):
            raise ValueError(f"'ranked' must be a list of terms, got {type(rec['ranked']).__name__}")
        ranked = []
        for i, v in enumerate(rec["ranked"]):
            try:
                ranked.append(parse_term(v))
            except ValueError as e:
                raise ValueError(f"'ranked' element {i + 1}: {e}") from None
    elapsed = rec.get("elapsed")
    if elapsed is not None and (isinstance(elapsed, bool) or not isinstance(elapsed, (int, float))
                                or not math.isfinite(elapsed) or elapsed < 0):
        problems.append(Problem(file, record, f"'elapsed' must be a non-negative number of seconds, got {elapsed!r}; ignored", "warning"))
        elapsed = None
    status = Status.OK
    message = ""
    error = rec.get("error")
    if error is not None:
        if not isinstance(error, str):
            raise ValueError(f"'error' must be a string (the system's error message), got {error!r}")
        status, message = Status.EXEC_ERROR, error
    if rec.get("status") is not None:
        try:
            status = Status(rec["status"])
        except ValueError:
            raise ValueError(f"unknown status {rec['status']!r} (expected one of: {', '.join(s.value for s in Status)})") from None
    if rec.get("message") is not None:
        if not isinstance(rec["message"], str):
            raise ValueError(f"'message' must be a string, got {rec['message']!r}")
        message = rec["message"]
    metadata = {k: v for k, v in rec.items() if k not in _RUN_KEYS}
    if rec.get("metadata") is not None:
        if not isinstance(rec["metadata"], dict):
            raise ValueError(f"'metadata' must be an object, got {rec['metadata']!r}")
        metadata = {**rec["metadata"], **metadata}
    return Prediction(pid, sparql, answer, ranked, float(elapsed) if elapsed is not None else None,
                      status, message, metadata)


def load_jsonl_run(paths: list[Path], dataset: Dataset | None = None, **options: Any) -> Run:
    """JSONL run file(s), concatenated."""
    problems: list[Problem] = []

    def parse(rec: Any, file: str, record: str) -> Prediction:
        return prediction_from_record(rec, file, record, problems)

    preds = list(_jsonl_unique(paths, problems, Prediction, parse, _fast_predictions))
    return Run(Path(paths[0]).stem, preds, "jsonl", list(paths), problems)


# --------------------------------------------------------------------------- writer


def item_to_json(it: Item) -> dict[str, Any]:
    """The JSONL object of an item (the inverse of :func:`item_from_record`)."""
    out: dict[str, Any] = {"id": it.id, "questions": dict(it.questions)}
    if it.sparql is not None:
        out["sparql"] = it.sparql
    if it.answer is not None:
        out["answers"] = to_results_json(it.answer)
    if it.answer_type is not None:
        out["answer_type"] = it.answer_type
    if it.keywords:
        out["keywords"] = {k: list(v) for k, v in it.keywords.items()}
    if it.groups:
        out["groups"] = dict(it.groups)
    if it.lang_ids:
        out["lang_ids"] = dict(it.lang_ids)
    if it.metadata:
        out["metadata"] = dict(it.metadata)
    return out


def prediction_to_json(p: Prediction) -> dict[str, Any]:
    """The JSONL object of a prediction (the inverse of :func:`prediction_from_record`)."""
    out: dict[str, Any] = {"id": p.id}
    if p.sparql is not None:
        out["query"] = p.sparql
    if p.answer is not None:
        out["answer"] = to_results_json(p.answer)
    if p.ranked is not None:
        out["ranked"] = [to_sparql_json(t) for t in p.ranked]
    if p.elapsed is not None:
        out["elapsed"] = p.elapsed
    if p.status is not Status.OK:
        out["status"] = p.status.value
    if p.message:
        out["message"] = p.message
    if p.metadata:
        out["metadata"] = dict(p.metadata)
    return out


def write(obj: Dataset | Run, path: Path) -> None:
    """Write a Dataset or a Run as JSONL (UTF-8, one compact object per line), atomically."""
    if isinstance(obj, Dataset):
        rows = (item_to_json(it) for it in obj.items)
    elif isinstance(obj, Run):
        rows = (prediction_to_json(p) for p in obj.predictions)
    else:
        raise TypeError(f"cannot write {type(obj).__name__} as JSONL")
    write_atomic(path, (json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in rows))


# --------------------------------------------------------------------------- sniffing


def _first_object(sample: formats.Sample) -> dict[str, Any] | None:
    """The first non-blank line of the sample parsed as a JSON object (None otherwise)."""
    for line in sample.head.split("\n"):
        if not line.strip():
            continue
        if "\n" not in sample.head and sample.size > len(sample.head.encode("utf-8")):
            return None  # the first line is cut off: cannot tell
        try:
            value = jsonio.loads(line)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None
    return None


def _has_question(obj: dict[str, Any]) -> bool:
    return any(k in ("question", "questions") or _QUESTION_KEY.match(k) for k in obj)


def sniff_jsonl_dataset(sample: formats.Sample) -> float:
    obj = _first_object(sample)
    if obj is None or "id" not in obj or not _has_question(obj):
        return 0.0
    return 0.6 if sample.path.suffix.lower() in (".jsonl", ".ndjson") else 0.5


def sniff_jsonl_run(sample: formats.Sample) -> float:
    obj = _first_object(sample)
    if obj is None or "id" not in obj:
        return 0.0
    if not any(k in obj for k in ("query", "sparql", "answer", "answers", "ranked", "error", "status")):
        return 0.0
    return 0.6 if sample.path.suffix.lower() in (".jsonl", ".ndjson") else 0.5


def sniff_csv(sample: formats.Sample) -> float:
    if sample.path.suffix.lower() != ".csv":
        return 0.0
    first = sample.head.split("\n", 1)[0]
    try:
        header = [h.strip() for h in next(csv.reader([first]))]
    except (csv.Error, StopIteration):
        return 0.0
    if "id" in header and any(h == "question" or _QUESTION_KEY.match(h) for h in header):
        return 0.6
    return 0.0


JSONL_DATASET = formats.register(formats.Format(
    name="jsonl",
    kind="dataset",
    description="generic JSON Lines dataset: one {id, question(s), sparql, answers, ...} object per line",
    sniff=sniff_jsonl_dataset,
    load=load_jsonl_dataset,
    write=write,
    extensions=(".jsonl", ".ndjson"),
))

CSV_DATASET = formats.register(formats.Format(
    name="csv",
    kind="dataset",
    description="generic CSV dataset: columns id, question / question_<lang>, sparql, answers, ...",
    sniff=sniff_csv,
    load=load_csv_dataset,
    extensions=(".csv",),
))

JSONL_RUN = formats.register(formats.Format(
    name="jsonl",
    kind="run",
    description="generic JSON Lines run: one {id, query?, answer?, ranked?, elapsed?, error?} object per line",
    sniff=sniff_jsonl_run,
    load=load_jsonl_run,
    write=write,
    extensions=(".jsonl", ".ndjson"),
))
