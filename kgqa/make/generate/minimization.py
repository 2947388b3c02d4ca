"""Query minimization (Su et al. 2016, Sec. 5.1).

A component is redundant iff removing it leaves the answer on the KG unchanged. Components are
the edges (removing one also removes the nodes, and a function on them, that are no longer
connected to the question node, as in the paper) and the question node's class constraint.
:func:`minimize` examines every component once, in order (edges first, then the class
constraint), and removes it when redundant; the paper proves the result minimal (no sub-query
has the same answer). :func:`redundant_components` lists the redundant components of a query
without changing it (for queries kept redundant on purpose, and for checking).

A removal is refused when it would leave no edge, or take the function with it (a
different question). An argmax/argmin whose reduced query has a tie at the top is not comparable (its LIMIT 1 picks
arbitrarily), so such a removal is refused.
"""

from __future__ import annotations

from dataclasses import replace

from kgqa.make.generate.graphquery import GraphQuery
from kgqa.make.generate.grounding import Answered, answer_key, validate_many
from kgqa.make.generate.kg import KGAccess, QueryFailed


def _reductions(q: GraphQuery) -> list[tuple[str, GraphQuery]]:
    out = []
    for i, e in enumerate(q.edges):
        r = q.without_edge(i)
        out.append((f"edge:{e.src}-{e.rel}-{e.dst}", r))
    qn = q.qnode
    if q.typed and not qn.literal and qn.cls:
        out.append((f"class:{qn.cls}", replace(q, typed=False)))
    return out


def _comparable(reduced: GraphQuery, answered: Answered) -> bool:
    # a graph query keeps at least one edge (a bare class is not a question), and a removal
    # that takes the function with it makes a different question
    return bool(reduced.edges) and reduced.function.name == answered.query.function.name


def _size(answered: Answered) -> int | None:
    """The number of distinct question-node values behind ``answered`` (its rows, or its count),
    or None for a function whose answer is not a monotone set (superlatives, comparatives)."""
    fn = answered.query.function.name
    if fn == "none":
        return len({r for r in answered.answer.rows})
    if fn == "count" and answered.answer.rows:
        try:
            return int(answered.answer.rows[0][0].value)
        except (AttributeError, TypeError, ValueError):
            return None
    return None


def _same_many(kg: KGAccess, reduced: list[GraphQuery], answered: Answered) -> list[Answered | None]:
    """For each reduced query: its answered form when its answer equals ``answered``'s, else None.

    Without a function (or with a count), a removal only widens the answer set (fewer
    patterns and filters), so it is unchanged iff it still has as many values: each reduced
    query is asked for at most one value more than the original has (``LIMIT n+1``, which
    stops early where a removal lets thousands of answers in) instead of its whole answer."""
    todo = [r for r in reduced if _comparable(r, answered)]
    n = _size(answered)
    out: list[Answered | None] = []
    if n is not None:
        texts = [f"{r.sparql(function=False)}\nLIMIT {n + 1}" for r in todo]
        got = iter(kg.select_many(texts, reorder=True))  # how many rows, not which first
        for r in reduced:
            if not _comparable(r, answered):
                out.append(None)
                continue
            res = next(got)
            if isinstance(res, QueryFailed):
                out.append(None)
                continue
            rows = {row for row in res.rows if any(c is not None for c in row)}
            out.append(Answered(r, r.sparql(), answered.answer) if len(rows) == n else None)
        return out
    got = iter(validate_many(kg, todo))
    want = answer_key(answered.answer)
    for r in reduced:
        if not _comparable(r, answered):
            out.append(None)
            continue
        a, _why = next(got)
        out.append(a if a is not None and answer_key(a.answer) == want else None)
    return out


def minimize(kg: KGAccess, answered: Answered) -> tuple[Answered, list[str]]:
    """The minimal query with the same answer, and the components removed. Components are
    examined in order; the reductions still to examine are executed as one batch per round,
    and the first redundant one is removed (the same result as examining them one by one)."""
    cur = answered
    removed: list[str] = []
    i = 0
    while True:
        reds = _reductions(cur.query)[i:]
        if not reds:
            break
        same = _same_many(kg, [r for _, r in reds], cur)
        hit = next((j for j, a in enumerate(same) if a is not None), None)
        if hit is None:
            break
        removed.append(reds[hit][0])
        cur = same[hit]
        i += hit  # the component list shrank: the next one now sits at this position
    return cur, removed


def redundant_components(kg: KGAccess, answered: Answered) -> list[str]:
    """Names of the components whose removal alone leaves the answer unchanged."""
    reds = _reductions(answered.query)
    return [name for (name, _), a in zip(reds, _same_many(kg, [r for _, r in reds], answered)) if a is not None]
