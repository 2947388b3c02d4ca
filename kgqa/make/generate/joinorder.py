"""Join order for the generator's queries on the embedded engine.

pyoxigraph joins a basic graph pattern's triple patterns with hash joins whose build side is
the patterns joined so far, in an order taken from the text where its estimates tie, and a
``BIND`` ends the pattern it follows (the patterns after it are joined only once the cast
relation was read whole). The generator writes patterns in the order of a graph query's
edges, often the worst: on fso-hgde ``?y1 inScheme ?y2 . ?y2 validFrom ?b`` (8,513 rows
hashed on 11 schemes) took 4.8 s, the same two patterns the other way round 0.06 s.

:func:`reorder` rewrites the text a query is sent as (never the text stored in a dataset):
within each run of one-line triple patterns, ``FILTER`` lines and ``BIND`` lines, the triple patterns
in the order of least estimated cost (:func:`_cost`, from per-predicate counts read once per
KG: :class:`JoinStats`), each after the first sharing a variable with one placed already;
then the ``BIND`` lines, then the ``FILTER`` lines. A run whose written order is estimated cheap
(:data:`CHEAP`) is left as written. The solutions are the same: a basic graph pattern's order
does not change its solutions, a ``FILTER`` applies to its whole group wherever it is
written, and a ``BIND`` moves only when no triple pattern of the run uses its variable and
every variable it reads is bound by the patterns before it. Row order may differ, so only
queries whose result does not depend on which rows come first (no ``LIMIT`` that cuts an
unordered result whose rows matter, no list whose rows are kept in the engine's order) are
rewritten: callers opt in (:meth:`KGAccess.select_many` ``reorder``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
#: a triple pattern on one line: subject, predicate (an IRI or ``a``), object, `` .``
_TRIPLE = re.compile(r"^(\s*)(\?\w+|<[^<>\s]*>) (<[^<>\s]*>|a) (\?\w+|<[^<>\s]*>|\".*) \.$")
_CALL = re.compile(r"^\s*(FILTER|BIND)\(.*\)$")
_VAR = re.compile(r"\?(\w+)")


@dataclass
class JoinStats:
    """Per predicate: triples, distinct subjects, distinct objects; per class: instances."""

    predicates: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    classes: dict[str, int] = field(default_factory=dict)

    QUERIES = ("SELECT ?p (COUNT(*) AS ?n) (COUNT(DISTINCT ?s) AS ?ns) (COUNT(DISTINCT ?o) AS ?no) "
               "WHERE { ?s ?p ?o } GROUP BY ?p",
               f"SELECT ?c (COUNT(*) AS ?n) WHERE {{ ?s <{_RDF_TYPE}> ?c }} GROUP BY ?c")

    @classmethod
    def from_rows(cls, predicates, classes) -> "JoinStats":
        """From the rows of :attr:`QUERIES` (predicate, n, ns, no) and (class, n)."""
        out = cls()
        for p, n, ns, no in predicates:
            if p is not None and n is not None:
                out.predicates[p.value] = (int(n.value), int(ns.value), int(no.value))
        for c, n in classes:
            if c is not None and n is not None:
                out.classes[c.value] = int(n.value)
        return out

    def size(self, p: str, o: str) -> tuple[float, float, float]:
        """Triples, distinct subjects and distinct objects of predicate ``p`` (as written: an
        IRI in angle brackets or ``a``); of a class's instances for ``a <Class>``."""
        p = _RDF_TYPE if p == "a" else p[1:-1]
        if p == _RDF_TYPE and o.startswith("<"):
            k = self.classes.get(o[1:-1], 0)
            return float(k), float(k), 1.0
        n, ns, no = self.predicates.get(p, (0, 0, 0))
        return float(n), float(ns), float(no)


#: patterns of one run ordered by trying every order (more: greedily)
EXHAUSTIVE = 6
#: a run whose written order is estimated to cost less than this is left as written (most
#: of a small KG's queries: searching would cost more than it saves)
CHEAP = 20_000.0


def _cost(order: list[int], triples: list[tuple[str, str, str, str]], stats: JoinStats) -> float | None:
    """The estimated work of joining ``triples`` in ``order`` (None: an order that joins a pattern
    sharing no variable with those before it while one that does waits). Each join's left side
    is hashed on the shared variables: pyoxigraph's cost grows with the left rows per distinct
    key value squared (``?y1 inScheme ?y2 . ?y2 validFrom ?b`` on fso-hgde: 8,513 rows on 11
    schemes, 4.8 s; the other way round 0.06 s)."""
    rows, distinct, total = 1.0, {}, 0.0
    for pos, k in enumerate(order):
        _, s, p, o = triples[k]
        n, ns, no = stats.size(p, o)
        ends = [(t[1:], d) for t, d in ((s, ns), (o, no)) if t.startswith("?")]
        shared = [(v, d) for v, d in ends if v in distinct]
        if pos and not shared and any(_shares(triples[j], distinct) for j in order[pos + 1:]):
            return None
        size = n / max(1, ns) if not s.startswith("?") else n / max(1, no) if not o.startswith("?") else n
        if not s.startswith("?") and not o.startswith("?"):
            size = 1.0
        out = rows * size
        key = 1.0
        for v, d in shared:
            out /= max(1.0, distinct[v], d)
            key = max(key, distinct[v])
        total += (rows * rows / key if pos else 0.0) + size + out
        for v, d in ends:
            distinct[v] = max(1.0, min(distinct.get(v, d), d, out))
        rows = max(out, 1e-3)
    return total


def _shares(triple: tuple[str, str, str, str], bound: dict) -> bool:
    return any(t.startswith("?") and t[1:] in bound for t in (triple[1], triple[3]))


def _order(triples: list[tuple[str, str, str, str]], stats: JoinStats) -> list[int]:
    """The order of ``triples`` ((line, s, p, o)) of least estimated cost (:func:`_cost`); ties
    keep the written order."""
    n = len(triples)
    if n <= EXHAUSTIVE:
        best, best_cost = list(range(n)), _cost(list(range(n)), triples, stats)
        for perm in itertools.permutations(range(n)):
            c = _cost(list(perm), triples, stats)
            if c is not None and (best_cost is None or c < best_cost * 0.999):
                best, best_cost = list(perm), c
        return best
    order: list[int] = []
    while len(order) < n:  # greedily: the next pattern that costs least
        left = [k for k in range(n) if k not in order]
        scored = [(c, k) for k in left if (c := _cost(order + [k], triples, stats)) is not None]
        order.append(min(scored)[1] if scored else left[0])
    return order


def _run_lines(run: list[str], stats: JoinStats) -> list[str]:
    """One run of triple/FILTER/BIND lines, reordered (module docstring), or as it was."""
    triples, binds, filters = [], [], []
    seen: set[str] = set()  # variables of the triple patterns before the current line
    for k, line in enumerate(run):
        m = _TRIPLE.match(line)
        if m:
            triples.append((line, m.group(2), m.group(3), m.group(4)))
            seen |= {t[1:] for t in (m.group(2), m.group(4)) if t.startswith("?")}
        elif line.lstrip().startswith("BIND("):
            target = line.rsplit(" AS ?", 1)[-1].rstrip(")")
            reads = set(_VAR.findall(line.rsplit(" AS ?", 1)[0]))
            later = {v for rest in run[k + 1:] if (t := _TRIPLE.match(rest))
                     for v in _VAR.findall(t.group(2) + " " + t.group(4))}
            if target in seen or target in later or not reads <= seen or reads & later - seen:
                return run
            binds.append(line)
        else:
            filters.append(line)
    if len(triples) < 2 and not binds:
        return run
    written = _cost(list(range(len(triples))), triples, stats)
    if not binds and written is not None and written < CHEAP:
        return run
    order = _order(triples, stats) if written is None or written >= CHEAP else list(range(len(triples)))
    return [triples[k][0] for k in order] + binds + filters


def _balanced(line: str) -> bool:
    return line.count("(") == line.count(")") and line.count("{") == line.count("}")


def reorder(query: str, stats: JoinStats | None) -> str:
    """``query`` with each run of one-line triple patterns, FILTERs and BINDs reordered
    (module docstring); the text as it was where there is nothing to reorder."""
    if stats is None or not stats.predicates:
        return query
    lines = query.split("\n")
    out: list[str] = []
    run: list[str] = []
    for line in lines + [None]:
        if line is not None and (_TRIPLE.match(line) or (_CALL.match(line) and _balanced(line))):
            run.append(line)
            continue
        if run:
            out += _run_lines(run, stats) if any(_TRIPLE.match(x) for x in run) else run
            run = []
        if line is not None:
            out.append(line)
    return "\n".join(out)
