"""The two web-service contracts of live QA systems: what a request carries and how a response
is read (client side), and what a response looks like (adapter side, :mod:`kgqa.service`).

**GERBIL QA** (GERBIL QA wiki, "Web service interface"): one ``POST`` per question, body
``application/x-www-form-urlencoded`` in UTF-8 with ``query=<question text>&lang=<ISO 639-1>``.
The system answers QALD JSON ``{"questions": [{"id", "question": [{"language", "string"}],
"query": {"sparql"}, "answers": [<SPARQL 1.1 results JSON>]}]}``; eQALD is accepted too
(``query.SPARQL``, answers as ``[{"bindings": [...], "confidence": ...}]``, a ``metadata``
object with ``answertype`` / ``answeritemtype``). A response with a query but no ``answers``
key is a query-only answer: kgqa executes it with ``--kg`` (as GERBIL does). An explicit
``"answers": []`` is an empty answer.

Reading a GERBIL response (:func:`parse_gerbil`):

- not JSON, not an object, no ``questions`` list, or an empty one -> ``malformed_response``;
- one entry: it is the answer to the question asked, whatever its ``id`` (the contract never
  tells the system the dataset's ids; a differing id is kept as a warning); but if the entry
  echoes a question string in the asked language that differs from the question asked, the
  response is for another question -> ``malformed_response``;
- several entries: the one whose question string (asked language) equals the question asked,
  else the one whose id equals the asked id, else ``malformed_response``;
- ``query`` that is neither a string nor an object with a string ``sparql``/``SPARQL``, or
  ``answers`` that are not SPARQL results -> ``malformed_response`` (with the reason).

**Text2SPARQL** (the text2sparql-client ``ask`` command): one ``GET`` per question with URL
parameters ``question=<text>&dataset=<dataset IRI>``; the system answers ``{"dataset",
"question", "query"}``; the organisers then execute ``query`` on the KG. Reading
(:func:`parse_text2sparql`): not JSON / not an object / no string ``query`` ->
``malformed_response``; an echoed ``question`` that differs from the one asked ->
``malformed_response`` (the answer belongs to another question); an echoed ``dataset`` that
differs is kept as a warning. An empty query string is an answer without a query (scored as the
profile scores a missing query).

Echoed question texts are compared ignoring case, whitespace and punctuation
(:func:`same_text`: a lower-cased echo, or one without the "?", is the same question);
``echo_check=False`` ignores the echo altogether (as GERBIL and the official Text2SPARQL client
do). A GERBIL entry with an explicitly empty query and no answers is, like an empty
Text2SPARQL query, an answer without a query (scored as the profile scores a missing query).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from kgqa.load.qald_json import parse_answers
from kgqa.model.answer import Answer, TableAnswer, to_results_json

PROTOCOLS = ("gerbil", "text2sparql")

#: The per-question outcomes of asking a live system.
OUTCOMES = ("ok", "http_error", "timeout", "malformed_response", "refused")


def check_protocol(protocol: str) -> str:
    p = (protocol or "").strip().lower()
    if p not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; expected one of: {', '.join(PROTOCOLS)}")
    return p


_WS = re.compile(r"\s+")


def norm_text(text: str) -> str:
    return _WS.sub(" ", text).strip()


def loose_text(text: str) -> str:
    """``text`` case-folded, without whitespace or punctuation (Unicode categories P*), in NFKC:
    what two echoes of one question share."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in text if not c.isspace() and not unicodedata.category(c).startswith("P"))


def same_text(a: str, b: str) -> bool:
    """Whether an echoed question is the question asked (case, whitespace and punctuation
    ignored)."""
    return loose_text(a) == loose_text(b)


@dataclass(frozen=True)
class Question:
    """One request to make: ``id`` is the scoring id of the run (e.g. ``ck25:1-en``), ``item``
    the dataset item it belongs to, ``lang`` the ISO 639-1 code of ``text``."""

    id: str
    lang: str
    text: str
    item: str


@dataclass
class Parsed:
    """What a 2xx response said: ``outcome`` is ``ok`` or ``malformed_response``."""

    outcome: str
    sparql: str | None = None
    answer: Answer | None = None
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


def _bad(message: str) -> Parsed:
    return Parsed("malformed_response", message=message)


def _json(body: bytes) -> tuple[Any, str | None]:
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return None, f"response is not UTF-8 (byte 0x{body[e.start]:02x} at offset {e.start})"
    if not text.strip():
        return None, "empty response body (expected JSON)"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as e:
        return None, f"response is not JSON: {e.msg} at line {e.lineno}, column {e.colno}"


# --------------------------------------------------------------------------- GERBIL QA


def gerbil_request(q: Question) -> dict[str, str]:
    """The form fields of a GERBIL QA request."""
    return {"query": q.text, "lang": q.lang}


def _entry_strings(entry: dict, lang: str) -> list[str]:
    qs = entry.get("question")
    out: list[str] = []
    if isinstance(qs, list):
        for x in qs:
            if isinstance(x, dict) and (x.get("language") or x.get("lang")) == lang and isinstance(x.get("string"), str):
                out.append(x["string"])
    elif isinstance(qs, dict) and isinstance(qs.get(lang), str):
        out.append(qs[lang])
    return out


def _gerbil_answers(raw: Any) -> tuple[Answer | None, list[Any]]:
    """A GERBIL reply's ``answers`` read as a QALD file's are (:func:`kgqa.load.qald_json.parse_answers`);
    an empty list is the system's empty answer, not a missing one."""
    answer, confidence = parse_answers(raw, "answers")
    if answer is None and raw is not None:
        answer = TableAnswer((), ())
    return answer, confidence


def parse_gerbil(body: bytes, q: Question, *, echo_check: bool = True) -> Parsed:
    """Read a GERBIL QA (QALD JSON / eQALD) response to question ``q`` (module docstring)."""
    doc, err = _json(body)
    if err:
        return _bad(err)
    if not isinstance(doc, dict):
        return _bad(f"expected a QALD JSON object {{\"questions\": [...]}}, got a JSON {type(doc).__name__}")
    entries = doc.get("questions")
    if not isinstance(entries, list) or not entries:
        return _bad("QALD JSON response has no non-empty 'questions' list")
    if not all(isinstance(e, dict) for e in entries):
        return _bad("an entry of 'questions' is not an object")
    warnings: list[str] = []
    if len(entries) == 1:
        entry = entries[0]
        echoed = _entry_strings(entry, q.lang)
        if echo_check and echoed and not any(same_text(s, q.text) for s in echoed):
            return _bad(f"response is for another question: asked {q.text!r}, the response's question is {echoed[0]!r}")
    else:
        by_text = [e for e in entries if any(same_text(s, q.text) for s in _entry_strings(e, q.lang))]
        by_id = [e for e in entries if str(e.get("id")) == q.item or str(e.get("id")) == q.id]
        pick = by_text or by_id
        if not pick:
            return _bad(f"response holds {len(entries)} questions and none is the one asked "
                        f"(neither question string nor id matches)")
        entry = pick[0]
        warnings.append(f"response holds {len(entries)} questions; used the one matching the asked "
                        f"{'question string' if by_text else 'id'}")
    if "id" in entry and str(entry["id"]) not in (q.id, q.item):
        warnings.append(f"response id {entry['id']!r} is not the asked id {q.item!r} (ignored: the GERBIL "
                        "contract does not send ids)")
    query = entry.get("query")
    sparql: str | None = None
    if isinstance(query, str):
        sparql = query
    elif isinstance(query, dict):
        s = query.get("sparql", query.get("SPARQL"))
        if s is not None and not isinstance(s, str):
            return _bad(f"query.sparql must be a string, got {type(s).__name__}")
        sparql = s
    elif query is not None:
        return _bad(f"'query' must be an object {{\"sparql\": ...}} or a string, got {type(query).__name__}")
    if sparql is not None and not sparql.strip():
        sparql = None
    metadata: dict[str, Any] = {}
    answer: Answer | None = None
    if "answers" in entry:
        try:
            answer, confidence = _gerbil_answers(entry["answers"])
        except ValueError as e:
            return _bad(f"answers are not SPARQL 1.1 results JSON: {e}")
        if confidence:
            metadata["confidence"] = confidence if len(confidence) > 1 else confidence[0]
    md = entry.get("metadata") if isinstance(entry.get("metadata"), dict) else {}
    for key in ("answertype", "answeritemtype"):  # eQALD keeps them in "metadata"
        if key in entry:
            metadata[key] = entry[key]
        elif key in md:
            metadata[key] = md[key]
    if sparql is None and answer is None:
        if query is not None:  # an explicitly empty query: the system has no query for it
            return Parsed("ok", None, None, "", [*warnings, "empty query"], metadata)
        return Parsed("malformed_response", message="response entry has neither a query nor answers",
                      warnings=warnings)
    return Parsed("ok", sparql, answer, "", warnings, metadata)


def gerbil_response(item_id: str, question: str, lang: str | None, sparql: str | None,
                    answer: Answer | None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The QALD JSON a GERBIL QA system returns for one question (``answers`` only when an
    answer is known: a query-only response lets the caller execute the query; with neither,
    an explicitly empty query ``{"sparql": ""}``: the system has no answer)."""
    entry: dict[str, Any] = {"id": item_id, "question": [{"language": lang or "en", "string": question}]}
    if sparql is not None or answer is None:  # neither: an explicitly empty query (no answer known)
        entry["query"] = {"sparql": sparql or ""}
    if answer is not None:
        entry["answers"] = [to_results_json(answer)]
    for k, v in (extra or {}).items():
        entry.setdefault(k, v)
    return {"questions": [entry]}


# --------------------------------------------------------------------------- Text2SPARQL


def text2sparql_request(q: Question, dataset: str) -> dict[str, str]:
    """The URL parameters of a Text2SPARQL request."""
    return {"question": q.text, "dataset": dataset}


def parse_text2sparql(body: bytes, q: Question, dataset: str, *, echo_check: bool = True) -> Parsed:
    """Read a Text2SPARQL ``{"dataset", "question", "query"}`` response (module docstring)."""
    doc, err = _json(body)
    if err:
        return _bad(err)
    if not isinstance(doc, dict):
        return _bad(f"expected a JSON object {{\"dataset\", \"question\", \"query\"}}, got a JSON {type(doc).__name__}")
    if "query" not in doc:
        return _bad("response has no 'query'")
    query = doc["query"]
    if not isinstance(query, str):
        return _bad(f"'query' must be a string, got {type(query).__name__}")
    warnings: list[str] = []
    echoed = doc.get("question")
    if echo_check and isinstance(echoed, str) and not same_text(echoed, q.text):
        return _bad(f"response is for another question: asked {q.text!r}, the response's question is {echoed!r}")
    if isinstance(doc.get("dataset"), str) and doc["dataset"] != dataset:
        warnings.append(f"response names dataset {doc['dataset']!r}, asked {dataset!r}")
    sparql = query if query.strip() else None
    if sparql is None:
        warnings.append("empty query")
    return Parsed("ok", sparql, None, "", warnings, {})


def text2sparql_response(dataset: str, question: str, sparql: str | None) -> dict[str, Any]:
    return {"dataset": dataset, "question": question, "query": sparql if sparql is not None else ""}
