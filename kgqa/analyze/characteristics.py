"""Per-question characteristics for breakdowns, and breakdowns / paraphrase curves over
evaluations.

A characteristic is a named value per question. Three sources (names are exact):

* **from the gold query** (:func:`kgqa.sparql.analyzer.analyze` of ``details["gold_sparql"]``;
  every name is ``None`` when the question has no gold query): ``triples`` (number of triple
  patterns), ``num_edges`` (the same number, GraphQuestions' name for it), ``variables``,
  ``hops`` (:func:`hops`), ``function`` (``count`` / ``superlative`` / ``comparative`` /
  ``none``, see :func:`function_class`), ``form`` (``SELECT``, ``ASK``, ...),
  booleans ``optional``, ``union``, ``minus``, ``filter``, ``group_by``, ``subquery``,
  ``property_path``, ``values``, ``service``, ``aggregation`` (an aggregate function occurs)
  and ``gold_valid`` (the gold query parses);
* **from the gold answer** (``details["gold_answer"]``, SPARQL results JSON; ``None`` when
  absent): ``num_answers`` = the number of distinct non-empty rows (1 for a boolean),
  ``answer_cardinality`` = ``"boolean"`` for an ASK answer, else ``"0"``, ``"1"`` or ``">1"``
  by ``num_answers`` (Su et al.'s "1 vs >1"), ``answer_kind`` = the kind of the answer's
  values: ``boolean``, ``resource`` (IRIs and blank nodes), ``number``, ``date`` (dates and
  dateTimes, recognised by value as in :class:`~kgqa.model.TermMatching`), ``string`` (other
  literals), ``mixed`` (several kinds) or ``empty``; ``answer_type`` = the dataset's own
  label (``details["answer_type"]``) when it has one, else ``answer_kind``;
* **from the dataset**: ``language`` (``metadata["language"]``, set for per-language scoring
  units) and every key of ``details["groups"]`` (``paraphrase``, ``template``, ...) and
  ``details["metadata"]``. ``groups.KEY`` and ``metadata.KEY`` name those sources
  explicitly; a bare name that is not a derived characteristic is looked up in ``groups``,
  then ``metadata``. ``function`` and ``num_edges`` are the dataset's own values when a
  question has them (``groups.function``; ``metadata.num_edge`` or ``metadata.num_edges``),
  else derived from the gold query; ``query_function`` / ``query_num_edges`` are always the
  derived ones.

Numeric characteristics can be binned (:data:`DEFAULT_BINS`, overridable per name): a list of
edges gives half-open bins ``[e0, e1) ... [e(k-1), ek]``, an integer ``q`` gives ``q`` quantile
bins (the rules of :func:`kgqa.analyze.breakdown.breakdown`).
"""

from __future__ import annotations

import functools
import json
import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgqa.model.answer import BooleanAnswer, TableAnswer, from_results_json
from kgqa.model.terms import BNode, IRI, TermMatching
from kgqa.score.evaluate import Evaluation, QuestionScore
from kgqa.sparql.analyzer import QueryInfo, analyze

__all__ = [
    "QUERY_CHARACTERISTICS", "ANSWER_CHARACTERISTICS", "DATASET_CHARACTERISTICS", "DEFAULT_BINS",
    "DEFAULT_BREAKDOWNS", "PARAPHRASE_KEYS",
    "hops", "function_class", "sparql_characteristics",
    "query_characteristics", "answer_characteristics", "question_characteristics",
    "characteristic_names", "values_of", "parse_bins", "headline_measure", "per_question_scores",
    "BreakdownTable", "breakdown_table", "ParaphraseTable", "paraphrase_key", "paraphrase_table",
]

QUERY_CHARACTERISTICS = (
    "triples", "num_edges", "variables", "hops", "function", "form", "optional", "union", "minus",
    "filter", "group_by", "subquery", "property_path", "values", "service", "aggregation", "gold_valid",
    "query_function", "query_num_edges",
)
ANSWER_CHARACTERISTICS = ("num_answers", "answer_cardinality", "answer_kind", "answer_type")
DATASET_CHARACTERISTICS = ("language",)

#: Bins used when a breakdown names one of these keys and gives no bins of its own.
#: ``commonness``: GraphQuestions' log10 query probability, in decades as in Su et al. (2016).
DEFAULT_BINS: dict[str, list[float]] = {"commonness": [-40.0, -30.0, -20.0, -10.0, 0.0]}

#: Breakdowns an HTML report shows when none are asked for (those with at least two cells).
DEFAULT_BREAKDOWNS = ("function", "hops", "triples", "form", "answer_cardinality", "answer_type")

#: Group keys that identify paraphrases of one logical form, in order of preference.
PARAPHRASE_KEYS = ("paraphrase", "template")

_MATCH = TermMatching()


# --------------------------------------------------------------------------- of one query


def hops(info: QueryInfo) -> int:
    """Hops from the projected variable: over the undirected *pattern graph* whose nodes
    are the subject/object terms of all ``info.triples`` (equal terms are one node) and whose
    edges are the triple patterns (a property path is one edge), the largest shortest-path
    distance from a projected variable to any node it reaches; the maximum over projected
    variables. Projected variables are those named in the projection, including those
    inside projection expressions (``?x`` in ``(COUNT(?x) AS ?c)``); with ``SELECT *`` all
    variables; for ASK/CONSTRUCT/DESCRIBE or when no projected variable occurs in a
    pattern, every node is a start (the largest eccentricity, i.e. the diameter of the
    largest component). 0 when there are no triple patterns."""
    adj: dict[Any, set] = {}
    for t in info.triples:
        s, o = t.subject, t.object
        adj.setdefault(s, set()).add(o)
        adj.setdefault(o, set()).add(s)
    if not adj:
        return 0
    if info.form == "SELECT" and not info.select_all:
        starts = [v for v in info.projected_in if v in adj]
    else:
        starts = []
    if not starts:
        starts = list(adj)
    best = 0
    for start in starts:
        dist = {start: 0}
        queue = deque([start])
        while queue:
            n = queue.popleft()
            for m in adj[n]:
                if m not in dist:
                    dist[m] = dist[n] + 1
                    queue.append(m)
        best = max(best, max(dist.values()))
    return best


def function_class(info: QueryInfo) -> str:
    """``count`` if a COUNT aggregate occurs; else ``superlative`` if ORDER BY together with
    LIMIT, or a MIN/MAX aggregate, occurs; else ``comparative`` if a FILTER (or HAVING)
    uses ``<``, ``>``, ``<=`` or ``>=``; else ``none``. The precedence is that order:
    ``SELECT (COUNT(?x) AS ?c) ... ORDER BY ... LIMIT 1`` is ``count``."""
    funcs = {a.function for a in info.aggregates}
    if "COUNT" in funcs:
        return "count"
    if (info.order_by and info.limit is not None) or funcs & {"MIN", "MAX"}:
        return "superlative"
    if "COMPARATIVE" in info.features:
        return "comparative"
    return "none"


def sparql_characteristics(info: QueryInfo) -> dict[str, Any]:
    """Derived characteristics of one analysed query (all keys always present):
    ``triples`` (number of triple patterns), ``variables`` (number of distinct variables
    anywhere in the query), ``hops`` (:func:`hops`), ``function`` (:func:`function_class`),
    ``form``, and booleans ``optional``, ``union``, ``minus``, ``filter``, ``group_by``,
    ``subquery``, ``property_path``, ``values``, ``service``, ``ask``, ``select``, ``valid``."""
    f = info.features
    return {
        "triples": len(info.triples),
        "variables": len(info.variables),
        "hops": hops(info),
        "function": function_class(info),
        "form": info.form,
        "optional": "OPTIONAL" in f,
        "union": "UNION" in f,
        "minus": "MINUS" in f,
        "filter": "FILTER" in f,
        "group_by": "GROUP BY" in f,
        "subquery": "SUBQUERY" in f,
        "property_path": "PROPERTY PATH" in f,
        "values": "VALUES" in f,
        "service": "SERVICE" in f,
        "ask": info.form == "ASK",
        "select": info.form == "SELECT",
        "valid": info.valid,
    }


# --------------------------------------------------------------------------- per question


#: Gold queries whose characteristics are kept (an entry is one tuple of small values, ~0.3 KB:
#: 2^18 entries hold the gold queries of large datasets, so that a breakdown by several
#: characteristics, one :func:`values_of` pass each, analyses each gold query once).
QUERY_CACHE_SIZE = 1 << 18

_QC_KEYS = (
    "triples", "num_edges", "variables", "hops", "function", "form", "optional", "union", "minus", "filter",
    "group_by", "subquery", "property_path", "values", "service", "aggregation", "gold_valid",
)


def query_characteristics(sparql: str | None) -> dict[str, Any]:
    """The query characteristics (see the module docstring) of a gold query; every value None
    when ``sparql`` is None or blank. A new dict on every call (cached as a tuple)."""
    if sparql is None or not sparql.strip():
        return {k: None for k in QUERY_CHARACTERISTICS}
    return dict(zip(_QC_KEYS, _query_characteristics(sparql)))


@functools.lru_cache(maxsize=QUERY_CACHE_SIZE)
def _query_characteristics(sparql: str) -> tuple[Any, ...]:
    info = analyze(sparql)
    c = sparql_characteristics(info)
    return (
        c["triples"], c["triples"], c["variables"], c["hops"], c["function"], c["form"], c["optional"],
        c["union"], c["minus"], c["filter"], c["group_by"], c["subquery"], c["property_path"], c["values"],
        c["service"], bool(info.aggregates), c["valid"],
    )


def _kind(term: Any) -> str:
    if isinstance(term, (IRI, BNode)):
        return "resource"
    key = _MATCH.key(term)
    tag = key[0] if isinstance(key, tuple) else "text"
    return {"num": "number", "date": "date", "dateTime": "date", "bool": "boolean"}.get(tag, "string")


def answer_characteristics(results: Mapping[str, Any] | None, answer_type: str | None = None) -> dict[str, Any]:
    """The answer characteristics (module docstring) of a gold answer given as SPARQL results
    JSON; ``answer_type`` is the dataset's own label, if any."""
    if results is None:
        return {"num_answers": None, "answer_cardinality": None, "answer_kind": None, "answer_type": answer_type}
    answer = from_results_json(dict(results))
    if isinstance(answer, BooleanAnswer):
        n, card, kind = 1, "boolean", "boolean"
    else:
        assert isinstance(answer, TableAnswer)
        rows = {tuple(_MATCH.key(c) for c in row) for row in answer.rows if any(c is not None for c in row)}
        n = len(rows)
        card = "0" if n == 0 else "1" if n == 1 else ">1"
        kinds = {_kind(c) for row in answer.rows for c in row if c is not None}
        kind = "empty" if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"
    return {"num_answers": n, "answer_cardinality": card, "answer_kind": kind, "answer_type": answer_type or kind}


def question_characteristics(q: QuestionScore) -> dict[str, Any]:
    """Every characteristic of one scored question: derived ones by their names, dataset
    fields as ``groups.KEY`` and ``metadata.KEY``, plus ``language``."""
    d = q.details or {}
    out: dict[str, Any] = dict(query_characteristics(d.get("gold_sparql")))
    out.update(answer_characteristics(d.get("gold_answer"), d.get("answer_type")))
    meta = d.get("metadata") or {}
    # `function` / `num_edges` prefer the dataset's own fields (GraphQuestions' function
    # category and num_edge, WebQSP's num_edges, KQA Pro's program function); the values
    # derived from the gold query stay available as query_function / query_num_edges
    out["query_function"], out["query_num_edges"] = out.get("function"), out.get("num_edges")
    own_function = (d.get("groups") or {}).get("function")
    if own_function is not None:
        out["function"] = own_function
    own_edges = meta.get("num_edge", meta.get("num_edges"))
    if isinstance(own_edges, int) and not isinstance(own_edges, bool):
        out["num_edges"] = own_edges
    out["language"] = meta.get("language")
    for k, v in (d.get("groups") or {}).items():
        out[f"groups.{k}"] = v
    for k, v in meta.items():
        out[f"metadata.{k}"] = v
    return out


def characteristic_names(evals: Sequence[Evaluation]) -> list[str]:
    """Every name :func:`values_of` accepts for these evaluations."""
    names = list(QUERY_CHARACTERISTICS + ANSWER_CHARACTERISTICS + DATASET_CHARACTERISTICS)
    extra: list[str] = []
    for e in evals:
        for q in e.questions:
            d = q.details or {}
            for src in ("groups", "metadata"):
                for k in d.get(src) or {}:
                    if f"{src}.{k}" not in extra:
                        extra.append(f"{src}.{k}")
    return names + sorted(extra)


def _resolve(name: str, evals: Sequence[Evaluation]) -> str:
    if name in QUERY_CHARACTERISTICS or name in ANSWER_CHARACTERISTICS or name in DATASET_CHARACTERISTICS:
        return name
    if name.startswith(("groups.", "metadata.")):
        return name
    for src in ("groups", "metadata"):
        if any(name in ((q.details or {}).get(src) or {}) for e in evals for q in e.questions):
            return f"{src}.{name}"
    known = ", ".join(characteristic_names(evals))
    raise ValueError(f"unknown characteristic {name!r}; known: {known}")


def values_of(name: str, evals: Evaluation | Sequence[Evaluation]) -> dict[str, Any]:
    """Question id -> value of characteristic ``name`` (module docstring) over the questions of
    ``evals`` (the first value seen for an id wins; the same dataset gives the same values).
    Raises ValueError naming the known characteristics when ``name`` is found nowhere."""
    evals = [evals] if isinstance(evals, Evaluation) else list(evals)
    key = _resolve(name, evals)
    out: dict[str, Any] = {}
    for e in evals:
        for q in e.questions:
            if q.id not in out:
                out[q.id] = question_characteristics(q).get(key)
    return out


def parse_bins(specs: Sequence[str]) -> dict[str, int | list[float]]:
    """``["commonness=-40,-30,-20,-10,0", "num_answers=4"]`` -> ``{name: edges or quantile
    count}``: a comma-separated list of at least two numbers is a list of edges, a single
    integer a number of quantile bins."""
    out: dict[str, int | list[float]] = {}
    for spec in specs:
        if "=" not in spec:
            raise ValueError(f"--bins {spec!r}: expected NAME=EDGES (e.g. commonness=-40,-30,-20,-10,0) or NAME=Q")
        name, text = (s.strip() for s in spec.split("=", 1))
        parts = [p.strip() for p in text.split(",") if p.strip()]
        try:
            if not parts:
                raise ValueError
            if len(parts) == 1:
                q = int(parts[0])
                if q < 1:
                    raise ValueError
                out[name] = q
            else:
                out[name] = [float(p) for p in parts]
        except ValueError:
            raise ValueError(f"--bins {spec!r}: expected a positive integer or at least two comma-separated numbers") from None
    return out


def per_question_scores(e: Evaluation, measure: str) -> dict[str, float]:
    """Question id -> defined (non-None, finite) per-question value of ``measure``."""
    out: dict[str, float] = {}
    for q in e.questions:
        v = q.scores.get(measure)
        if v is not None and math.isfinite(v):
            out[q.id] = float(v)
    return out


def comparable_measures(evals: Sequence[Evaluation]) -> tuple[list[str], list[str]]:
    """(labels with per-question values in every evaluation, the other labels), in first-seen
    order."""
    labels: list[str] = []
    for e in evals:
        for s in e.measures:
            if s.label not in labels:
                labels.append(s.label)
    per_q = [lab for lab in labels if all(any(lab in q.scores for q in e.questions) for e in evals)]
    return per_q, [lab for lab in labels if lab not in per_q]


def headline_measure(evals: Sequence[Evaluation]) -> str:
    """The measure breakdowns show by default: the label ``F1`` when every evaluation has
    per-question values for it, else the first label bound to the F1 measure (e.g.
    ``Average F1``), else the first label with per-question values in every evaluation."""
    scored, _ = comparable_measures(evals)
    if not scored:
        raise ValueError("no measure has per-question values in every evaluation (corpus-level measures only)")
    if "F1" in scored:
        return "F1"
    f1 = [s.label for e in evals for s in e.measures if s.label in scored and s.measure.name == "F1"]
    return f1[0] if f1 else scored[0]


def to_jsonable(v: Any) -> Any:
    """A characteristic value as JSON (bins and keys may be tuples or numpy numbers)."""
    if isinstance(v, float) and math.isnan(v):
        return None
    try:
        json.dumps(v)
        return v
    except TypeError:
        return str(v)
