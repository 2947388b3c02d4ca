"""GERBIL QA sub-experiments: C2KB, P2KB, RE2KB, AT and AIT2KB.

GERBIL (dice-group/gerbil ``QAUtils.deriveMarkingsFromSparqlQuery``) derives "markings" from a
question's SPARQL query, for the gold standard and for the system's answer alike, and scores
each kind of marking as a set per question with ``FMeasureCalculator`` (the
:func:`kgqa.score.rules.gerbil_rule`: TP=0 gives 1 if FP=FN=0 else 0; macro = mean of the
per-question values, micro = P/R/F of the summed TP/FP/FN). Walking the triple patterns of
the query (all groups: OPTIONAL, UNION, MINUS, subqueries, GRAPH, FILTER EXISTS):

- **C2KB** resources: the subject when it is an IRI, and the object when it is an IRI and the
  predicate is not ``rdf:type`` (GERBIL adds no resource for a class; see AIT2KB).
- **P2KB** properties: IRI predicates other than ``rdf:type``. A variable predicate or a
  property path adds nothing (GERBIL's Jena walk has no URI for them).
- **RE2KB** relations: ``(s, p, o)`` with a variable (or blank node) position as "a variable"
  whatever its name (variables match by position), IRIs as IRIs, ``rdf:type`` kept as the
  predicate, a literal object by value (numbers and dates by value, language tag ignored), a
  property path by its text.
- **AIT2KB** answer item types: ``source=query`` (GERBIL's code): the IRI objects of
  ``rdf:type`` patterns whose subject is a projected variable (SELECT; all variables for
  ``SELECT *``); ``source=kg``: the rdf:type classes of the answer items looked up in the KG,
  read from ``ctx.extra["answer_types"] = {"gold": [class IRIs], "system": [class IRIs]}``
  (the executor fills it; without it the question is undefined).
- **AT** answer type, one of date / number / string / boolean / resource (QALD-6), per side a
  set of at most one type: see :func:`answer_type`.

``parse=strict`` (default, as GERBIL whose Jena parse failure yields no markings): a query
the analyzer finds invalid contributes nothing (standard prefixes may be undeclared);
``parse=tolerant``: the tolerant analyzer's patterns of a broken query are used.

Differences from GERBIL, by design: IRIs are compared exactly after prefix expansion (GERBIL
can also match via owl:sameAs, its "meaning matching"); GERBIL stops collecting at a variable
predicate or a path (an exception ends its walk), kgqa skips just that pattern.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kgqa.model import BooleanAnswer, IRI, BNode, Literal, Status, TableAnswer
from kgqa.model.answer import Answer
from kgqa.model.terms import DATE_TYPES, NUMERIC_TYPES, XSD_BOOLEAN, TermMatching
from kgqa.score.measures import QUERY, Inputs, ItemContext, MeasureDef, Param, register
from kgqa.score.rules import Counts, gerbil_rule, micro
from kgqa.score.query_measures import feature, feature_comparison, feature_extractor, question_memo
from kgqa.sparql.analyzer import RDF_TYPE, Path, QueryInfo, Var

__all__ = ["c2kb", "p2kb", "re2kb", "ait_query", "answer_type", "ANSWER_TYPES", "sub_counts"]

ANSWER_TYPES = ("date", "number", "string", "boolean", "resource")
_VALUE = TermMatching(language="ignore")
_TYPED = TermMatching()
_VAR = ("var",)


@feature_extractor("gerbil_c2kb")
def _c2kb(info: QueryInfo) -> frozenset:
    out = set()
    for t in info.triples:
        if isinstance(t.subject, IRI):
            out.add(t.subject)
        if isinstance(t.object, IRI) and t.predicate != RDF_TYPE:
            out.add(t.object)
    return frozenset(out)


@feature_extractor("gerbil_p2kb")
def _p2kb(info: QueryInfo) -> frozenset:
    return frozenset(t.predicate for t in info.triples if isinstance(t.predicate, IRI) and t.predicate != RDF_TYPE)


def _rel_node(x: Any) -> Any:
    if isinstance(x, (Var, BNode)):
        return _VAR
    if isinstance(x, Literal):
        return ("literal", _VALUE.key(x))
    if isinstance(x, Path):
        return ("path", x.text)
    return x


@feature_extractor("gerbil_re2kb")
def _re2kb(info: QueryInfo) -> frozenset:
    return frozenset((_rel_node(t.subject), _rel_node(t.predicate), _rel_node(t.object)) for t in info.triples)


@feature_extractor("gerbil_ait")
def _ait(info: QueryInfo) -> frozenset:
    if info.form != "SELECT":
        return frozenset()
    projected = set(info.variables) if info.select_all else set(info.projected_variables)
    return frozenset(
        t.object for t in info.triples
        if t.predicate == RDF_TYPE and isinstance(t.subject, Var) and t.subject in projected and isinstance(t.object, IRI)
    )


@feature_extractor("gerbil_at_form")
def _at_form(info: QueryInfo) -> str | None:
    """The answer type the query alone implies: boolean for ASK, number for a COUNT."""
    if info.form == "ASK":
        return "boolean"
    if info.form == "SELECT" and any(a.function == "COUNT" for a in info.aggregates):
        return "number"
    return None


feature_extractor("valid")(lambda info: info.valid)


def _markings(name: str):
    def get(query: str | None, parse: str = "strict") -> frozenset:
        if query is None or not query.strip():
            return frozenset()
        if parse == "strict" and not feature(query, "valid"):
            return frozenset()
        return feature(query, name)

    get.__name__ = name.removeprefix("gerbil_")
    get.__doc__ = f"The {get.__name__.upper()} markings of a query (empty for an invalid one when parse=strict)."
    return get


c2kb = _markings("gerbil_c2kb")
p2kb = _markings("gerbil_p2kb")
re2kb = _markings("gerbil_re2kb")
ait_query = _markings("gerbil_ait")


# --------------------------------------------------------------------------- answer type


def _cell_type(c: Any) -> str:
    if isinstance(c, (IRI, BNode)):
        return "resource"
    dt = c.datatype
    if dt == XSD_BOOLEAN:
        return "boolean"
    if dt in NUMERIC_TYPES:
        return "number"
    if dt in DATE_TYPES:
        return "date"
    if dt is None and c.language is None:
        kind = _TYPED.key(c)[0]
        if kind == "num":
            return "number"
        if kind in ("date", "dateTime"):
            return "date"
    return "string"


def answer_type(answer: Answer | None, query: str | None = None) -> str | None:
    """The QALD-6 answer type of an answer: ``boolean`` for a boolean answer; else over the
    bound cells: ``resource`` (IRI or blank node), ``number`` (numeric datatype, or an untyped
    literal that reads as a number), ``date`` (xsd:date/dateTime/gYear..., or an untyped literal
    that reads as a date), ``boolean`` (xsd:boolean), else ``string``; when the cells disagree,
    ``resource`` if any is a resource, else ``string``. With no bound cell the query decides:
    ``boolean`` for ASK, ``number`` for a projected COUNT; otherwise None (no type)."""
    if isinstance(answer, BooleanAnswer):
        return "boolean"
    types: set[str] = set()
    if isinstance(answer, TableAnswer):
        for row in answer.rows:
            for c in row:
                if c is not None:
                    types.add(_cell_type(c))
    if len(types) == 1:
        return types.pop()
    if types:
        return "resource" if "resource" in types else "string"
    if query and query.strip():
        return feature(query, "gerbil_at_form")
    return None


_LABELS = {
    "resource": "resource", "uri": "resource", "list": "resource", "listofresource": "resource",
    "entity": "resource", "number": "number", "numeric": "number", "count": "number",
    "date": "date", "boolean": "boolean", "bool": "boolean", "string": "string", "literal": "string",
}


def _gold_answer(ctx: ItemContext) -> Answer | None:
    g = ctx.gold_outcome
    if g is not None and g.status is Status.OK:
        return g.answer
    return ctx.item.answer


def _at_sets(ctx: ItemContext, gold: str) -> tuple[frozenset, frozenset]:
    gt = None
    if gold == "label" and ctx.item.answer_type:
        gt = _LABELS.get(ctx.item.answer_type.strip().lower().replace(" ", ""))
    if gt is None:
        gt = answer_type(_gold_answer(ctx), ctx.item.sparql)
    st = None
    if ctx.outcome.status is Status.OK:
        st = answer_type(ctx.outcome.answer, ctx.prediction.sparql if ctx.prediction else None)
    return frozenset([gt] if gt else []), frozenset([st] if st else [])


# --------------------------------------------------------------------------- measures


def _pred(ctx: ItemContext) -> str | None:
    p = ctx.prediction
    return p.sparql if p is not None else None


def _query_sets(fn: Callable[[str, str], frozenset]):
    def sets(ctx: ItemContext, parse: str, **_: Any) -> tuple[frozenset, frozenset] | None:
        g = ctx.item.sparql
        if g is None or not g.strip():
            return None
        p = _pred(ctx)
        return fn(g, parse), (fn(p, parse) if p is not None else frozenset())

    return sets


def _query_counts(name: str):
    """``sub_counts(_query_sets(markings of name)(ctx, parse))``, from the question's feature
    comparison (:func:`kgqa.score.query_measures.feature_comparison`: each query analysed once
    per question, sizes kept instead of sets)."""

    def counts(ctx: ItemContext, parse: str, **_: Any) -> Counts | None:
        fc = feature_comparison(ctx, name)
        if fc is None:  # no gold query
            return None
        n_sys, n_gold, tp = fc.sizes(name)
        if parse == "strict":
            sys_valid, gold_valid = fc.values("valid")
            if not sys_valid:
                n_sys = tp = 0
            if not gold_valid:
                n_gold = tp = 0
        return Counts(tp, n_sys - tp, n_gold - tp, n_sys, n_gold, tp, tp)

    return counts


def _ait_counts(ctx: ItemContext, parse: str, source: str, **kw: Any) -> Counts | None:
    if source == "kg":
        return sub_counts(_ait_sets(ctx, parse, source))
    return _query_counts("gerbil_ait")(ctx, parse)


def _ait_sets(ctx: ItemContext, parse: str, source: str, **_: Any) -> tuple[frozenset, frozenset] | None:
    if source == "kg":
        at = ctx.extra.get("answer_types")
        if not isinstance(at, dict) or "gold" not in at:
            return None
        sys_types = at.get("system") if ctx.outcome.status is Status.OK else None
        return frozenset(_iris(at["gold"])), frozenset(_iris(sys_types or ()))
    return _query_sets(ait_query)(ctx, parse)


def _iris(xs: Iterable[Any]) -> Iterable[IRI]:
    return (x if isinstance(x, IRI) else IRI(str(x)) for x in xs)


def sub_counts(sets: tuple[frozenset, frozenset] | None) -> Counts | None:
    if sets is None:
        return None
    gold, system = sets
    return Counts.from_sets(gold, system)


_PART = {"P": 0, "R": 1, "F1": 2}
AGG = Param("agg", "macro", ("macro", "micro"), "macro: mean of per-question values; micro: from summed counts")
PART = Param("part", "F1", ("P", "R", "F1"), "precision, recall or F1")
PARSE = Param("parse", "strict", ("strict", "tolerant"),
              "strict: an invalid query yields nothing (GERBIL); tolerant: the analyzer's patterns of a broken query")


def _make(counts_fn):
    """Item and aggregate functions of a sub-experiment whose per-question :class:`Counts` are
    ``counts_fn(ctx, **params)`` (None: undefined)."""

    def item(ctx: ItemContext, agg: str, part: str, **kw: Any) -> float | None:
        if agg == "micro":
            return None
        c = counts_fn(ctx, **kw)
        return None if c is None else gerbil_rule(c)[_PART[part]]

    def aggregate(ctxs: Sequence[ItemContext], values: Sequence[float | None], agg: str, part: str, **kw: Any) -> float:
        if agg == "micro":
            counts = [c for c in (counts_fn(x, **kw) for x in ctxs) if c is not None]
            return micro(counts, "gerbil")[_PART[part]] if counts else float("nan")
        vals = [v for v in values if v is not None]
        return math.fsum(vals) / len(vals) if vals else float("nan")

    return item, aggregate


_COMMON = (
    " as sets per question, gold vs predicted query; GERBIL's P/R/F1 (TP=0: 1 if FP=FN=0 else 0), "
    "agg=macro (mean) or micro (summed counts), part=P|R|F1; parse=strict: an invalid query gives "
    "an empty set. No gold query: undefined."
)

def _ait_inputs(source: str = "query", **_: Any) -> Inputs:
    # source=kg reads the classes of the gold and system answer items from the KG
    return Inputs(answers=True, kg_types=True) if source == "kg" else QUERY


_DEFS = [
    ("C2KB", _query_counts("gerbil_c2kb"), (AGG, PART, PARSE),
     "GERBIL QA C2KB (resources): IRI subjects and IRI objects of non-rdf:type patterns, "
     "prefixes expanded (classes excluded, as in GERBIL),"),
    ("P2KB", _query_counts("gerbil_p2kb"), (AGG, PART, PARSE),
     "GERBIL QA P2KB (properties): IRI predicates except rdf:type (variable predicates and paths "
     "add nothing),"),
    ("RE2KB", _query_counts("gerbil_re2kb"), (AGG, PART, PARSE),
     "GERBIL QA RE2KB (relations): (s,p,o) patterns; a variable matches any variable at the same "
     "position, IRIs exactly, literals by value,"),
    ("AIT2KB", _ait_counts, (AGG, PART, PARSE, Param("source", "query", ("query", "kg"),
                                                 "query: rdf:type classes of projected variables "
                                                 "(GERBIL); kg: classes of answer items from ctx.extra")),
     "GERBIL QA AIT2KB (answer item types): source=query: classes in rdf:type patterns of a "
     "projected variable (GERBIL's code); source=kg: KG classes of answer items (else undefined),"),
]

for _name, _fn, _params, _what in _DEFS:
    _item, _agg = _make(_fn)
    register(MeasureDef(
        name=_name, definition=_what + _COMMON, convention="gerbil-sub", item=_item, aggregate=_agg,
        params=_params, inputs=_ait_inputs if _name == "AIT2KB" else QUERY,
    ))


def _at(ctx: ItemContext, gold: str, **_: Any) -> Counts | None:
    memo = question_memo(ctx)
    key = ("AT", gold)
    c = memo.get(key)
    if c is None:
        c = memo[key] = sub_counts(_at_sets(ctx, gold))
    return c


_at_item, _at_agg = _make(_at)
register(MeasureDef(
    name="AT",
    definition=(
        "GERBIL QA AT (answer type): gold type (gold=derived: from gold answer and query; label: the "
        "dataset's answertype) vs the type of the system answer and query, each one of date/number/"
        "string/boolean/resource or none (boolean/ASK; IRIs; numeric, date literals; else string; "
        "mixed: resource if any IRI; empty with COUNT: number); failed query: none. GERBIL P/R/F1, "
        "agg, part as C2KB."
    ),
    convention="gerbil-sub",
    item=_at_item,
    aggregate=_at_agg,
    params=(AGG, PART, Param("gold", "derived", ("derived", "label"), "where the gold answer type comes from")),
))
