"""Error taxonomy for query-producing systems: one label per scored question.

Inputs per question (all in :class:`~kgqa.score.evaluate.QuestionScore`): the outcome label,
the answer counts, and the typed ``record`` (gold and predicted SPARQL, gold and predicted
answers). *Answer-equal* means: the outcome is ``ok`` or ``empty`` and the compared
answer collections are equal under the profile's term matching and answer view, i.e. no
false positive and no false negative (``counts.fp == counts.fn == 0``; without counts,
``AnswerEM == 1`` or else ``F1 == 1``). Queries are compared with the analyzer
(:func:`kgqa.sparql.analyzer.analyze`) and :func:`kgqa.sparql.canonical.canonical_equal`.

Labels, decided in this order (the first that applies):

1. ``missing``: the run has no entry (and no query) for the question, or has a query that was
   never executed and parses (the reason says so);
2. ``parse_error``: the outcome is ``parse_error``, or the question was not executed and the
   predicted query does not parse;
3. ``exec_error``, ``timeout``, ``refused``: the outcome of that name;
4. ``correct``: answer-equal, and the predicted query (when both queries are known) is
   canonical-equal to the gold query, or an *equivalent rewrite* of it (flag ``rewrite``): the
   queries differ, but the answer carries enough information that a coincidence is unlikely
   (anything but a boolean or a single number), or the predicted query uses no resource,
   literal or predicate the gold query lacks;
5. ``right_answer_wrong_reason``: answer-equal, the queries differ, the answer is a boolean or a
   single number (easily matched by chance), and the predicted query uses a resource, literal or
   predicate the gold query does not;
6. ``wrong_form``: one of the two queries is an ASK and the other is not (from the queries; when
   either query is unknown, from the answers: one boolean and the other a table); or one counts
   (its only projection is a COUNT) and the other lists;
7. ``extra_columns``: some column of the predicted table holds exactly the gold answer's
   values and the other columns add more (labels, names, ...): right under the ``values`` view,
   wrong under ``tuples`` (the reason names the fix);
8. ``empty_answer``: the outcome is ``empty`` (the gold answer is not, or it is too but the
   profile scores the question 0: a question scored 0 is never ``correct``);
9. ``wrong_entity``: both queries known, and the sets of *resources* (IRIs in subject or object
   position that are not classes, plus IRIs in VALUES) or of literals in triple patterns
   (compared by lexical form) differ;
10. ``wrong_predicate``: same resources and literals, different predicates (IRIs in predicate
   position, including inside property paths) or classes (objects of ``rdf:type``);
11. ``wrong_structure``: the same IRIs and literals, but the queries are not canonical-equal
    (wrong direction, hop, projection, modifier, filter, ...): "wrong structure with right URIs";
12. ``same_query_wrong_answer``: the queries are canonical-equal but the answers differ (ties
    under LIMIT, a gold answer from another KG version, ...);
13. ``wrong_answer``: a wrong answer with no query to diagnose (answer-only runs, or no gold
    query).

``flags`` additionally lists, for every wrong or empty answer with both queries known, each of
``entity``, ``predicate``, ``structure`` that differs, so an ``empty_answer`` caused by a
misspelt predicate still says ``predicate``.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kgqa.model import BooleanAnswer
from kgqa.score.evaluate import Evaluation, QuestionScore, require_items
from kgqa.model.answer import to_results_json
from kgqa.sparql.analyzer import analyze
from kgqa.sparql.canonical import canonical_equal

__all__ = ["LABELS", "ErrorLabel", "classify", "classify_evaluation", "taxonomy_counts"]

LABELS = (
    "correct", "right_answer_wrong_reason", "missing", "parse_error", "exec_error", "timeout", "refused",
    "http_error", "malformed_response",
    "wrong_form", "extra_columns", "empty_answer", "wrong_entity", "wrong_predicate", "wrong_structure",
    "same_query_wrong_answer", "wrong_answer",
)

_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


@dataclass(frozen=True)
class ErrorLabel:
    """The taxonomy label of one question, why, and the secondary ``flags``."""

    id: str
    label: str
    reason: str
    flags: tuple[str, ...] = ()


@functools.lru_cache(maxsize=8192)
def _info(sparql: str):
    return analyze(sparql)


@functools.lru_cache(maxsize=8192)
def _canonical_equal(a: str, b: str) -> bool:
    return bool(canonical_equal(_info(a), _info(b)))


def _type_path_objects(info) -> set[str]:
    """IRIs in object position of a property path that starts with rdf:type
    (``?x rdf:type/rdfs:subClassOf* <C>``): classes, though not written with a plain ``a``."""
    out = set()
    for t in info.triples:
        pred = t.predicate
        text = getattr(pred, "text", None)
        if text is not None and text.lstrip("(").startswith(f"<{_RDF_TYPE}>"):
            value = getattr(t.object, "value", None)
            if isinstance(value, str) and type(t.object).__name__ == "IRI":
                out.add(value)
    return out


def _vocabulary(info) -> tuple[frozenset, frozenset, frozenset]:
    classes = {c.value for c in info.classes} | _type_path_objects(info)
    resources = frozenset(e.value for e in info.entities if e.value not in classes)
    literals = frozenset(lit.value for lit in info.literals)
    schema = frozenset({p.value for p in info.predicates if p.value != _RDF_TYPE} | {f"class:{c}" for c in classes})
    return resources | frozenset(f"literal:{v}" for v in literals), schema, frozenset(classes)


#: Per-question answer measures: a question one of them scores 0 is never labelled correct.
_ANSWER_MEASURES = ("AnswerEM", "F1", "set_F")


def _scored_zero(q: QuestionScore) -> bool:
    """The profile scores the question 0 although no answer differs (both answers empty under
    a profile such as text2sparql's, which gives an empty answer 0 whatever the gold)."""
    return any(q.scores.get(m) == 0.0 for m in _ANSWER_MEASURES)


def _answer_equal(q: QuestionScore) -> bool:
    if q.outcome not in ("ok", "empty") or _scored_zero(q):
        return False
    if q.counts is not None:
        return q.counts.fp == 0 and q.counts.fn == 0
    for m in ("AnswerEM", "F1"):
        v = q.scores.get(m)
        if v is not None:
            return v == 1.0
    return False


def _json(answer: Any) -> Any:
    return to_results_json(answer) if answer is not None else None


def _counts(info) -> bool:
    """The query's only projection is a COUNT aggregate (and it does not group)."""
    if not info.is_select or info.group_by or len(info.projection) != 1:
        return False
    expr = (info.projection[0].expression or "").lstrip().upper()
    return expr.startswith("COUNT")


def _low_information(results: Any) -> bool:
    """A boolean, or a table of one row with one numeric cell: answers a wrong query can
    match by chance."""
    if not isinstance(results, dict):
        return False
    if "boolean" in results:
        return True
    rows = (results.get("results") or {}).get("bindings") or []
    if len(rows) != 1 or not isinstance(rows[0], dict) or len(rows[0]) != 1:
        return False
    cell = next(iter(rows[0].values()))
    if not isinstance(cell, dict) or cell.get("type") not in ("literal", "typed-literal"):
        return False
    try:
        float(str(cell.get("value", "")).strip())
    except ValueError:
        return False
    return True


def _columns(results: Any) -> dict[str, set[str]] | None:
    """Variable -> set of values (lexical) of a SELECT result, None for anything else."""
    if not isinstance(results, dict) or "boolean" in results:
        return None
    rows = (results.get("results") or {}).get("bindings")
    if not isinstance(rows, list):
        return None
    cols: dict[str, set[str]] = {}
    for row in rows:
        if not isinstance(row, dict):
            return None
        for var, cell in row.items():
            if isinstance(cell, dict) and "value" in cell:
                cols.setdefault(str(var), set()).add(str(cell["value"]))
    return cols


def _extra_columns(gold: Any, pred: Any) -> tuple[str, list[str]] | None:
    """(the predicted column equal to the gold values, the other columns) when the predicted
    table is the gold answer plus extra columns."""
    g, p = _columns(gold), _columns(pred)
    if not g or not p or len(p) < 2:
        return None
    gold_values = set().union(*g.values())
    if len(g) != 1 or not gold_values:
        return None
    for var, values in p.items():
        if values == gold_values:
            return var, sorted(v for v in p if v != var)
    return None


def _is_boolean(answer: Any) -> bool | None:
    """True for a boolean answer, False for a table, None for no answer."""
    if answer is None:
        return None
    return isinstance(answer, BooleanAnswer)


def _text(s: Any) -> str | None:
    return s if isinstance(s, str) and s.strip() else None


# long function: the taxonomy's decision list, in the paper's order (one branch per label)
def classify(q: QuestionScore) -> ErrorLabel:
    """The taxonomy label of one question (see the module docstring)."""
    r = q.record
    # results JSON of the answers, for the column and chance checks
    d = {"gold_answer": _json(r.gold_answer) if r is not None else None,
         "predicted_answer": _json(r.predicted_answer) if r is not None else None}
    gold_q, pred_q = (_text(r.gold_sparql), _text(r.predicted_sparql)) if r is not None else (None, None)
    gi = _info(gold_q) if gold_q else None
    pi = _info(pred_q) if pred_q else None

    if q.outcome == "missing":
        if pi is None:
            return ErrorLabel(q.id, "missing", q.message or "no entry in the run")
        if not pi.valid:
            return ErrorLabel(q.id, "parse_error", f"predicted query does not parse: {pi.error}")
        return ErrorLabel(q.id, "missing", "the predicted query parses but was not executed (use --kg)")
    if q.outcome == "parse_error":
        why = q.message or (pi.error if pi is not None and pi.error else "")
        return ErrorLabel(q.id, "parse_error", why or "the predicted query does not parse")
    if q.outcome in ("exec_error", "timeout", "refused", "http_error", "malformed_response"):
        return ErrorLabel(q.id, q.outcome, q.message or q.outcome.replace("_", " "))

    both = gi is not None and pi is not None and gi.valid and pi.valid
    if _answer_equal(q):
        if both and not _canonical_equal(gold_q, pred_q):
            g_res, g_schema, _ = _vocabulary(gi)
            p_res, p_schema, _ = _vocabulary(pi)
            # A type constraint only narrows the answer: it is never the "wrong reason".
            foreign = sorted((p_res - g_res) | {x for x in p_schema - g_schema if not x.startswith("class:")})
            if foreign and _low_information(d.get("gold_answer")):
                return ErrorLabel(q.id, "right_answer_wrong_reason",
                                  f"the {'boolean' if _is_boolean(r.gold_answer) else 'number'} answer matches, "
                                  f"but the query uses {_short(foreign[0])}"
                                  + (f" and {len(foreign) - 1} more element(s)" if len(foreign) > 1 else "")
                                  + " that the gold query does not", ("entity",) if p_res - g_res else ("predicate",))
            return ErrorLabel(q.id, "correct", "the answer equals the gold answer; the query is an equivalent "
                              "rewrite of the gold query", ("rewrite",))
        return ErrorLabel(q.id, "correct", "the answer equals the gold answer"
                          + (" and the query is canonical-equal to the gold query" if both else ""))

    flags: list[str] = []
    same_vocab = False
    if both:
        g_res, g_schema, _ = _vocabulary(gi)
        p_res, p_schema, _ = _vocabulary(pi)
        if g_res != p_res:
            flags.append("entity")
        if g_schema != p_schema:
            flags.append("predicate")
        same_vocab = not flags
        if not _canonical_equal(gold_q, pred_q):
            flags.append("structure")

    if gi is not None and pi is not None:
        if gi.is_ask != pi.is_ask:
            return ErrorLabel(q.id, "wrong_form", f"gold query is {gi.form}, predicted query is {pi.form}", tuple(flags))
        if gi.valid and pi.valid and _counts(gi) != _counts(pi):
            what = "gold query counts, predicted query lists" if _counts(gi) else "gold query lists, predicted query counts"
            return ErrorLabel(q.id, "wrong_form", what, tuple(flags))
    else:
        gb = _is_boolean(r.gold_answer) if r is not None else None
        pb = _is_boolean(r.predicted_answer) if r is not None else None
        if gb is not None and pb is not None and gb != pb:
            kinds = {True: "a boolean (ASK)", False: "a table (SELECT)"}
            return ErrorLabel(q.id, "wrong_form", f"gold answer is {kinds[gb]}, predicted answer is {kinds[pb]}")

    extra = _extra_columns(d.get("gold_answer"), d.get("predicted_answer"))
    if extra is not None:
        col, others = extra
        return ErrorLabel(q.id, "extra_columns",
                          f"column ?{col} holds exactly the gold answer; the extra column(s) "
                          f"{', '.join('?' + o for o in others)} add values the gold answer lacks (under the tuple view no row matches) "
                          "(score with --view values or the benchmark's official profile)", tuple(flags))
    if q.outcome == "empty":
        if _scored_zero(q) and q.counts is not None and q.counts.fp == 0 and q.counts.fn == 0:
            return ErrorLabel(q.id, "empty_answer", "both answers are empty, and the profile scores an empty answer 0 "
                              "even when the gold answer is empty too", tuple(flags))
        return ErrorLabel(q.id, "empty_answer", "the predicted query returned no answer", tuple(flags))
    if both:
        if "entity" in flags:
            return ErrorLabel(q.id, "wrong_entity", "the queries use different resources or literals", tuple(flags))
        if "predicate" in flags:
            return ErrorLabel(q.id, "wrong_predicate", "same resources, different predicates or classes", tuple(flags))
        if "structure" in flags and same_vocab:
            return ErrorLabel(q.id, "wrong_structure", "same IRIs and literals, different query structure", tuple(flags))
        return ErrorLabel(q.id, "same_query_wrong_answer",
                          "the queries are canonical-equal but the answers differ", tuple(flags))
    missing = "predicted" if pi is None else "gold" if gi is None else "valid"
    return ErrorLabel(q.id, "wrong_answer", f"the answer differs from the gold answer (no {missing} query to diagnose)")


def _short(x: str) -> str:
    x = x.removeprefix("literal:").removeprefix("class:")
    return x if len(x) <= 60 else x[:57] + "..."


def classify_evaluation(e: Evaluation) -> dict[str, ErrorLabel]:
    """Question id -> :class:`ErrorLabel` for every scored question of ``e``."""
    require_items([e], "the error taxonomy")
    return {q.id: classify(q) for q in e.questions}


def taxonomy_counts(evals: Sequence[Evaluation]) -> dict[str, dict[str, int]]:
    """Run -> label -> number of questions, labels in :data:`LABELS` order, zeros left out. A
    streamed evaluation (whose records lack the gold side) is left out rather than misclassified."""
    out: dict[str, dict[str, int]] = {}
    for e in evals:
        if getattr(e, "streamed", False):
            continue
        c = Counter(lab.label for lab in classify_evaluation(e).values())
        out[e.run] = {k: c[k] for k in LABELS if c[k]}
    return out


def taxonomy_left_out(evals: Sequence[Evaluation]) -> list[str]:
    """The runs :func:`taxonomy_counts` leaves out: streamed evaluations, whose records lack the
    gold side the labels read. Renderers name them, so a missing column is never silent."""
    return [e.run for e in evals if getattr(e, "streamed", False)]
