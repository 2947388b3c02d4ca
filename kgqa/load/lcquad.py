"""LC-QuAD 1.0 and LC-QuAD 2.0 datasets (JSON arrays of question objects, no stored answers).

**LC-QuAD 1.0** (Trivedi et al. 2017; AskNowQA/LC-QuAD ``train-data.json`` /
``test-data.json``, DBpedia 2016-04)::

    [{"_id": "1701", "corrected_question": "...", "intermediary_question": "...",
      "sparql_query": " SELECT DISTINCT ?uri WHERE {...} ", "sparql_template_id": 16}, ...]

- ``id``: ``_id`` as a string; ``questions["en"]``: ``corrected_question`` (when it is
  missing, empty or ``"n/a"``, ``intermediary_question`` is used and a warning recorded);
- ``sparql``: ``sparql_query`` (the README's older key ``query`` is accepted), stripped of
  surrounding blanks;
- ``groups["template"]``: ``sparql_template_id`` as a string;
- ``metadata``: every other key (``intermediary_question``, ...);
- ``answer``: None: LC-QuAD stores no answers, the gold query must be executed.

**LC-QuAD 2.0** (Dubey et al. 2019; Wikidata and DBpedia 2018 queries)::

    [{"uid": 20258, "NNQT_question": "What is the {country} for {head of state} of {Mahmoud Abbas}",
      "question": "...", "paraphrased_question": "...", "sparql_wikidata": "...",
      "sparql_dbpedia18": "...", "template_id": 2, "template_index": 604,
      "subgraph": "simple question left", "template": "<?S P O ; ?S InstanceOf Type>",
      "answer": []}, ...]

- ``id``: ``uid`` as a string;
- ``questions["en"]``: the field named by option ``question_field`` (default ``question``;
  ``paraphrased_question`` or ``NNQT_question`` may be chosen). When that field is null,
  empty, ``"n/a"`` or ``"[]"`` (all occur in the released files), the loader falls back to
  ``question`` and then to ``NNQT_question`` and records a warning naming the fallback. A
  question taken from ``NNQT_question`` has its annotation braces removed
  (``{Mahmoud Abbas}`` -> ``Mahmoud Abbas``; the raw text stays in metadata);
- ``sparql``: ``sparql_wikidata`` (option ``kg="dbpedia18"`` takes ``sparql_dbpedia18``),
  stripped. The other query is kept in metadata;
- ``groups["template"]``: ``template_id`` as a string (``template`` text when there is no
  id); ``groups["subgraph"]``: ``subgraph``;
- ``metadata``: every other key, including all question variants and ``template_index``;
- ``answer``: None (the ``answer`` lists in the release are empty; a non-empty one is kept
  in metadata).

A record that is not an object, has no id or no query is skipped and reported; duplicate ids
are reported and the later record skipped. A record without usable question text is kept (its
query scores without it) and one warning per file counts such records.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.generic import TEXTLESS, note_textless, unique
from kgqa.load.jsonio import read_json
from kgqa.model import Dataset, InputError, Item, Problem

_MISSING = {"", "n/a", "na", "none", "null", "[]"}


def _usable(v: Any) -> bool:
    return isinstance(v, str) and v.strip().lower() not in _MISSING


def _records(path: Path) -> list[Any]:
    doc = read_json(path)
    if not isinstance(doc, list):
        raise InputError(path, f"expected a JSON array of question objects, got a JSON {type(doc).__name__}")
    return doc


def _rec_name(i: int, rec: Any, key: str) -> str:
    if isinstance(rec, dict) and rec.get(key) is not None:
        return f"record {i + 1} ({key} {rec[key]})"
    return f"record {i + 1}"


def _as_id(v: Any) -> str | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str) and v.strip():
        return v.strip()
    return None


# --------------------------------------------------------------------------- LC-QuAD 1.0


def parse_lcquad1(rec: Any, file: str, record: str, problems: list[Problem]) -> Item | None:
    if not isinstance(rec, dict):
        problems.append(Problem(file, record, f"expected a question object, got {type(rec).__name__}; skipped"))
        return None
    item_id = _as_id(rec.get("_id"))
    if item_id is None:
        problems.append(Problem(file, record, "no '_id'; skipped"))
        return None
    q = rec.get("corrected_question")
    if not _usable(q):
        alt = rec.get("intermediary_question")
        if not _usable(alt):
            # the query is scored without it (query measures need no text): kept, counted once
            problems.append(Problem(file, record, TEXTLESS, "warning"))
            q = ""
        else:
            problems.append(Problem(file, record, f"'corrected_question' is {q!r}; using 'intermediary_question'", "warning"))
            q = alt
    sparql = rec.get("sparql_query", rec.get("query"))
    if not _usable(sparql):
        problems.append(Problem(file, record, "no 'sparql_query'; skipped"))
        return None
    groups = {}
    template = rec.get("sparql_template_id")
    if template is not None:
        groups["template"] = str(template)
    metadata = {k: v for k, v in rec.items() if k not in ("_id", "corrected_question", "sparql_query", "query", "sparql_template_id")}
    # the query as upstream writes it (query measures ignore surrounding whitespace)
    return Item(item_id, {"en": q.strip()} if q.strip() else {}, sparql, None, None, {}, groups, metadata)


def load_lcquad1(paths: list[Path], **options: Any) -> Dataset:
    problems: list[Problem] = []
    parsed = []
    for path in paths:
        file = str(path)
        for i, rec in enumerate(_records(path)):
            record = _rec_name(i, rec, "_id")
            it = parse_lcquad1(rec, file, record, problems)
            if it is not None:
                parsed.append((file, record, it))
    items = unique(parsed, problems)
    return Dataset(Path(paths[0]).stem, items, "lcquad", list(paths), note_textless(problems))


# --------------------------------------------------------------------------- LC-QuAD 2.0

QUESTION_FIELDS = ("question", "paraphrased_question", "NNQT_question")
_BRACES = re.compile(r"[{}]")


def parse_lcquad2(rec: Any, file: str, record: str, problems: list[Problem],
                  question_field: str = "question", kg: str = "wikidata") -> Item | None:
    if not isinstance(rec, dict):
        problems.append(Problem(file, record, f"expected a question object, got {type(rec).__name__}; skipped"))
        return None
    item_id = _as_id(rec.get("uid"))
    if item_id is None:
        problems.append(Problem(file, record, "no 'uid'; skipped"))
        return None
    order = [question_field] + [f for f in ("question", "NNQT_question") if f != question_field]
    question = None
    for field in order:
        v = rec.get(field)
        if _usable(v):
            question = v.strip()
            if field == "NNQT_question":
                question = " ".join(_BRACES.sub("", question).split())
            if field != question_field:
                problems.append(Problem(
                    file, record,
                    f"'{question_field}' is {rec.get(question_field)!r}; using '{field}'"
                    + (" with its braces removed" if field == "NNQT_question" else ""),
                    "warning"))
            break
    if question is None:  # the query is scored without it: kept, counted once per file
        problems.append(Problem(file, record, TEXTLESS, "warning"))
    key = "sparql_dbpedia18" if kg == "dbpedia18" else "sparql_wikidata"
    sparql = rec.get(key)
    if not _usable(sparql):
        problems.append(Problem(file, record, f"no '{key}' query; skipped"))
        return None
    groups = {}
    if rec.get("template_id") is not None:
        groups["template"] = str(rec["template_id"])
    elif _usable(rec.get("template")):
        groups["template"] = rec["template"].strip()
    if _usable(rec.get("subgraph")):
        groups["subgraph"] = rec["subgraph"].strip()
    metadata = {k: v for k, v in rec.items() if k not in ("uid", key)}
    if metadata.get("answer") == []:
        del metadata["answer"]
    return Item(item_id, {"en": question} if question else {}, sparql, None, None, {}, groups, metadata)


def load_lcquad2(paths: list[Path], **options: Any) -> Dataset:
    """Options: ``question_field`` (``question`` | ``paraphrased_question`` |
    ``NNQT_question``), ``kg`` (``wikidata`` | ``dbpedia18``)."""
    question_field = options.get("question_field") or "question"
    if question_field not in QUESTION_FIELDS:
        raise InputError("--question-field", f"unknown LC-QuAD 2.0 question field {question_field!r}; expected one of {', '.join(QUESTION_FIELDS)}")
    kg = options.get("kg") or "wikidata"
    if kg not in ("wikidata", "dbpedia18"):
        raise InputError("--kg", f"LC-QuAD 2.0 has queries for 'wikidata' and 'dbpedia18', not {kg!r}")
    problems: list[Problem] = []
    parsed = []
    for path in paths:
        file = str(path)
        for i, rec in enumerate(_records(path)):
            record = _rec_name(i, rec, "uid")
            it = parse_lcquad2(rec, file, record, problems, question_field, kg)
            if it is not None:
                parsed.append((file, record, it))
    meta = {"question_field": question_field, "kg": kg}
    items = unique(parsed, problems)
    return Dataset(Path(paths[0]).stem, items, "lcquad2", list(paths), note_textless(problems), meta)


# --------------------------------------------------------------------------- registration


def _json_array(sample: formats.Sample) -> bool:
    return sample.head.lstrip().startswith("[")


def sniff_lcquad1(sample: formats.Sample) -> float:
    if not _json_array(sample):
        return 0.0
    h = sample.head
    if '"corrected_question"' in h and ('"sparql_query"' in h or '"intermediary_question"' in h):
        return 0.95
    return 0.0


def sniff_lcquad2(sample: formats.Sample) -> float:
    if not _json_array(sample):
        return 0.0
    h = sample.head
    if '"NNQT_question"' in h or ('"sparql_wikidata"' in h and '"uid"' in h):
        return 0.95
    return 0.0


LCQUAD1 = formats.register(formats.Format(
    name="lcquad",
    kind="dataset",
    description="LC-QuAD 1.0 JSON (AskNowQA/LC-QuAD train-data.json, test-data.json)",
    sniff=sniff_lcquad1,
    load=load_lcquad1,
    extensions=(".json",),
    aliases=("lcquad1", "lc-quad"),
))

LCQUAD2 = formats.register(formats.Format(
    name="lcquad2",
    kind="dataset",
    description="LC-QuAD 2.0 JSON (train.json, test.json); options question_field, kg",
    sniff=sniff_lcquad2,
    load=load_lcquad2,
    extensions=(".json",),
    aliases=("lc-quad-2",),
))
