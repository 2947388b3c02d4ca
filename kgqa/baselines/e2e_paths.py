"""Graph candidates of two edges for the ``e2e`` baseline (:mod:`kgqa.baselines.e2e`): queries read
off the KG around the entities a question names, for relations no generated question asked in
that combination.

- **Two hops from one entity** (:func:`two_hop_candidates`): ``E p ?y . ?y q ?x`` in each of the
  four directions, every predicate pair the KG has there (``Compensators <-hasCategory- ?y
  -hasSupplier-> ?x``: *which suppliers deliver Compensators*). The question must name the
  last relation ``q`` or a class of the answer; the first one may go unsaid.
- **Two named things** (:func:`star_candidates`): ``E1 p ?x . E2 q ?x`` in each direction, the
  answers both are related to (*the Network expert from the Marketing department*), scored by
  the better named of the two relations: one may go unsaid (*the Sensor products E manages*).

Each candidate is ``(score, query)``: ``base`` plus ``weight`` times the mean of its relation
scores (``relevance`` of each predicate, and 1 for a named class the answer is typed with).
Typed variants (``?x a C``) are made only for classes the answers of that pair have.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kgqa.model import IRI, TableAnswer

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_SKIP = frozenset({RDF_TYPE, "http://www.w3.org/2000/01/rdf-schema#subClassOf",
                   "http://www.w3.org/2000/01/rdf-schema#isDefinedBy"})
Relevance = Callable[[str], float]  # an <IRI> -> how far the question names it (0 to 1)


def _rows(executor: Any, query: str) -> list:
    oc = executor.execute(query)
    return oc.answer.rows if not oc.status.failed and isinstance(oc.answer, TableAnswer) else []


def _pairs(executor: Any, pattern: str, limit: int) -> dict[tuple[str, str], set[str]]:
    """``(p, q)`` -> the classes of ``?x`` (``""``: none) over the bindings of ``pattern``."""
    out: dict[tuple[str, str], set[str]] = {}
    for p, q, c in _rows(executor, f"SELECT DISTINCT ?p ?q ?c WHERE {{ {pattern} OPTIONAL {{ ?x a ?c }} }} "
                                   f"LIMIT {limit}"):
        if isinstance(p, IRI) and isinstance(q, IRI) and p.value not in _SKIP and q.value not in _SKIP:
            out.setdefault((p.value, q.value), set()).add(c.value if isinstance(c, IRI) else "")
    return out


def _singles(executor: Any, pattern: str, limit: int) -> dict[str, set[str]]:
    """``p`` -> the classes of ``?x`` (``""``: none) over the bindings of ``pattern``."""
    out: dict[str, set[str]] = {}
    for p, c in _rows(executor, f"SELECT DISTINCT ?p ?c WHERE {{ {pattern} OPTIONAL {{ ?x a ?c }} }} LIMIT {limit}"):
        if isinstance(p, IRI) and p.value != RDF_TYPE:
            out.setdefault(p.value, set()).add(c.value if isinstance(c, IRI) else "")
    return out


def _typed(score: float, body: str, classes: set[str], named: Sequence[str], rels: list[float],
           base: float, weight: float, mismatch: float = 0.0) -> list[tuple[float, str]]:
    """The candidate, and one typed with each named class its answers have (ahead of the
    untyped one: a named class is the reading the question asked for); the untyped one
    costs ``mismatch`` where the question names classes and none is a class of its answers
    (*which departments* answered with employees)."""
    off = mismatch if named and not any(c[1:-1] in classes for c in named) else 0.0
    out = [(score - off, f"SELECT DISTINCT ?x WHERE {{ {body} }}")]
    for c in named:
        if c[1:-1] in classes:
            out.append((max(base + weight * sum([*rels, 1.0]) / (len(rels) + 1), score + 0.01),
                        f"SELECT DISTINCT ?x WHERE {{ {body} ?x a {c} . }}"))
    return out


def one_edge_candidates(entity: str | None, value: str | None, executor: Any, relevance: Relevance,
                        named: Sequence[str], base: float, weight: float, mismatch: float = 0.0,
                        limit: int = 2000) -> list[tuple[float, str]]:
    """``entity p ?x`` / ``?x p entity`` over every predicate the KG has there (no entity: ``?x p
    value``), where the question names ``p`` (a value's predicate may go unsaid: *suppliers in
    Toulouse*) or, typed only, a class of its answers (*which employees report to E*)."""
    shapes = ((f"{entity} ?p ?x .", "{e} <{p}> ?x ."), (f"?x ?p {entity} .", "?x <{p}> {e} .")) if entity else \
        ((f"?x ?p {value} .", "?x <{p}> {e} ."),) if value else ()
    out: list[tuple[float, str]] = []
    for pattern, form in shapes:
        for p, classes in _singles(executor, pattern, limit).items():
            r = relevance(f"<{p}>")
            body = form.format(e=entity or value, p=p)
            if r > 0 or entity is None:
                out += _typed(base + weight * r, body, classes, named, [r], base, weight, mismatch)
            elif any(c[1:-1] in classes for c in named):  # the relation unsaid, the answer's class named
                out += _typed(base, body, classes, named, [r], base, weight, mismatch)[1:]
    return out


def two_hop_candidates(entity: str, executor: Any, relevance: Relevance, named: Sequence[str], base: float,
                       weight: float, mismatch: float = 0.0, limit: int = 2000) -> list[tuple[float, str]]:
    """``entity p ?y . ?y q ?x`` (all four directions), where the question names ``q`` or a class
    of ``?x`` (``named``: the classes it names, ``<IRI>``)."""
    shapes = ((f"{entity} ?p ?y . ?y ?q ?x .", "{e} <{p}> ?y . ?y <{q}> ?x ."),
              (f"{entity} ?p ?y . ?x ?q ?y .", "{e} <{p}> ?y . ?x <{q}> ?y ."),
              (f"?y ?p {entity} . ?y ?q ?x .", "?y <{p}> {e} . ?y <{q}> ?x ."),
              (f"?y ?p {entity} . ?x ?q ?y .", "?y <{p}> {e} . ?x <{q}> ?y ."))
    out: list[tuple[float, str]] = []
    for pattern, form in shapes:
        for (p, q), classes in _pairs(executor, f"{pattern} FILTER(?x != {entity})", limit).items():
            rp, rq = relevance(f"<{p}>"), relevance(f"<{q}>")
            typed = any(c[1:-1] in classes for c in named)
            if rq <= 0 and not typed:
                continue
            body = form.format(e=entity, p=p, q=q) + f" FILTER(?x != {entity})"
            out += _typed(base + weight * (rp + rq) / 2, body, classes, named, [rp, rq], base, weight, mismatch)
    return out


def star_candidates(first: str, second: str, executor: Any, relevance: Relevance, named: Sequence[str],
                    base: float, weight: float, mismatch: float = 0.0, limit: int = 2000) -> list[tuple[float, str]]:
    """``first p ?x . second q ?x`` (either direction for each): what both named things are
    related to."""
    out: list[tuple[float, str]] = []
    for a in (f"{first} ?p ?x .", f"?x ?p {first} ."):
        for b in (f"{second} ?q ?x .", f"?x ?q {second} ."):
            pairs = _pairs(executor, f"{a} {b} FILTER(?x != {first} && ?x != {second})", limit)
            for (p, q), classes in pairs.items():
                body = f"{a.replace('?p', f'<{p}>')} {b.replace('?q', f'<{q}>')} FILTER(?x != {first} && ?x != {second})"
                rels = [max(relevance(f"<{p}>"), relevance(f"<{q}>"))]  # one relation may go unsaid (Sensor products)
                out += _typed(base + weight * rels[0], body, classes, named, rels, base, weight, mismatch)
    return out


def superlative_candidates(entity: str, way: str, executor: Any, relevance: Relevance, base: float, weight: float,
                           limit: int = 500) -> list[tuple[float, str]]:
    """The largest or smallest (``way``: ``DESC``/``ASC``) of the things related to ``entity``
    by a number of theirs, one or two edges away (*the cheapest Oscillator*: ``?x hasCategory
    Oscillator . ?x price ?z . ?z amount ?v`` by ``?v``); the relation to the entity may go
    unsaid, the measure's must be named."""
    num = "FILTER(isLiteral(?v) && isNumeric(?v))"
    out: list[tuple[float, str]] = []
    for link in (f"?x ?p {entity} .", f"{entity} ?p ?x ."):
        for p, q in _rows(executor, f"SELECT DISTINCT ?p ?q WHERE {{ {link} ?x ?q ?v . {num} }} LIMIT {limit}"):
            if isinstance(p, IRI) and isinstance(q, IRI) and p.value not in _SKIP and relevance(f"<{q.value}>") > 0:
                body = f"{link.replace('?p', f'<{p.value}>')} ?x <{q.value}> ?v ."
                out.append((base + weight * relevance(f"<{q.value}>"),
                            f"SELECT DISTINCT ?x WHERE {{ {body} }} ORDER BY {way}(?v) LIMIT 1"))
        rows = _rows(executor, f"SELECT DISTINCT ?p ?q ?r WHERE {{ {link} ?x ?q ?z . ?z ?r ?v . {num} }} LIMIT {limit}")
        for p, q, r in rows:
            if not all(isinstance(t, IRI) for t in (p, q, r)) or p.value in _SKIP:
                continue
            rels = [relevance(f"<{q.value}>"), relevance(f"<{r.value}>")]
            if max(rels) > 0:
                body = f"{link.replace('?p', f'<{p.value}>')} ?x <{q.value}> ?z . ?z <{r.value}> ?v ."
                out.append((base + weight * sum(rels) / 2, f"SELECT DISTINCT ?x WHERE {{ {body} }} ORDER BY {way}(?v) LIMIT 1"))
    return out
