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

A grounded cast value (``?s <validFrom> ?via0_v . FILTER(xsd:date(?via0_v) = "1960-01-01"^^xsd:date)``:
a date the KG writes as a plain string) is compared on every value of its predicate, cast one
by one: the engine reads the whole relation for each such query (fso-hgde: 1,900 checks, 21 of
its 51 engine seconds). Before reordering, :func:`bind_casts` writes the one value the KG
stores that casts to it into the triple pattern (``?s <validFrom> "1960-01-01" .``, the FILTER
then true and gone), an index lookup; the stored values are looked up once per predicate,
datatype and value (:func:`cast_lookups`, :func:`lookup_query`: by the engine's own cast and
``=``), and a value that several stored values (or none) cast to is left as written. The same
solutions: the variable is read by that pattern and that FILTER alone, never returned.
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
#: a grounded cast value compared (:func:`~kgqa.make.generate.graphquery.edge_patterns`):
#: ``FILTER(<cast>(?via{tag}_v) = value)``
_CAST_EQ = re.compile(r"^\s*FILTER\((<[^<>\s]*>)\((\?via\w*_v)\) = (.+)\)$")


@dataclass
class JoinStats:
    """Per predicate: triples, distinct subjects, distinct objects; per class: instances."""

    predicates: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    classes: dict[str, int] = field(default_factory=dict)
    #: per predicate and end (0: subject, 1: object): the sum of the squares of its nodes'
    #: degrees and the largest degree (:func:`solutions`: skew; empty: not read)
    degrees: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)

    QUERIES = ("SELECT ?p (COUNT(*) AS ?n) (COUNT(DISTINCT ?s) AS ?ns) (COUNT(DISTINCT ?o) AS ?no) "
               "WHERE { ?s ?p ?o } GROUP BY ?p",
               f"SELECT ?c (COUNT(*) AS ?n) WHERE {{ ?s <{_RDF_TYPE}> ?c }} GROUP BY ?c")
    #: per predicate, of its subjects' and of its objects' degrees: the sum of squares, the largest
    DEGREE_QUERIES = tuple(f"SELECT ?p (SUM(?k * ?k) AS ?q) (MAX(?k) AS ?m) WHERE {{ SELECT ?p ?{end} "
                           f"(COUNT(*) AS ?k) WHERE {{ ?s ?p ?o }} GROUP BY ?p ?{end} }} GROUP BY ?p"
                           for end in ("s", "o"))

    @classmethod
    def from_rows(cls, predicates, classes, *degrees, base: "JoinStats | None" = None) -> "JoinStats":
        """From the rows of :attr:`QUERIES` (predicate, n, ns, no) and (class, n), and of
        :attr:`DEGREE_QUERIES` (predicate, sum of squares, largest) where they were read;
        ``base``: stats these rows are added to (a copy)."""
        out = cls(dict(base.predicates), dict(base.classes), dict(base.degrees)) if base is not None else cls()
        for p, n, ns, no in predicates:
            if p is not None and n is not None:
                out.predicates[p.value] = (int(n.value), int(ns.value), int(no.value))
        for c, n in classes:
            if c is not None and n is not None:
                out.classes[c.value] = int(n.value)
        for end, rows in enumerate(degrees):
            for p, q, m in rows:
                if p is not None and q is not None and m is not None:
                    out.degrees[(p.value, end)] = (int(q.value), int(m.value))
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


def _fanout(prev: tuple[float, float, float], cur: tuple[float, float, float]) -> float:
    """Rows of pattern ``cur`` that each row of a pattern ``prev`` meets on their shared node:
    at most ``cur``'s largest degree there, and on average at most (Cauchy-Schwarz) the square
    root of the product of both patterns' sums of squared degrees, over ``prev``'s triples.
    Each is (triples, sum of squared degrees at the shared end, largest degree there)."""
    n, q, _ = prev
    _, q2, m2 = cur
    return min(m2, (q * q2) ** 0.5 / max(1.0, n))


def _triple_runs(query: str) -> list[list[tuple[str, str, str]]]:
    """The (subject, predicate, object) of each run of one-line triple patterns of ``query``
    (runs as :func:`reorder` sees them: ``FILTER`` and ``BIND`` lines inside a run do not end it)."""
    runs, run = [], []
    for line in query.split("\n") + [""]:
        m = _TRIPLE.match(line)
        if m:
            run.append((m.group(2), m.group(3), m.group(4)))
        elif not (_CALL.match(line) and _balanced(line)) and run:
            runs, run = runs + [run], []
    return runs


def _ends(stats: JoinStats, s: str, p: str, o: str) -> tuple[float, dict[str, tuple[float, float, float]]]:
    """One pattern's rows when it is read alone, and per variable end its (triples, sum of squared
    degrees, largest degree) at that end. A pattern with a constant end meets each value of its
    variable end at most once (``?y hasPart <c>``); one without, as its predicate's degrees say."""
    n, ns, no = stats.size(p, o)
    iri = _RDF_TYPE if p == "a" else p[1:-1]
    var = [(end, t[1:]) for end, t in enumerate((s, o)) if t.startswith("?")]
    if len(var) == 2:
        return n, {v: (n, *(float(x) for x in stats.degrees.get((iri, end), (n * n / max(1.0, d), n / max(1.0, d)))))
                   for (end, v), d in zip(var, (ns, no))}
    rows = n if p == "a" and o.startswith("<") else n / max(1.0, no if var and var[0][0] == 0 else ns)
    if not var:
        return min(1.0, rows), {}
    return rows, {var[0][1]: (rows, rows, 1.0)}


def _rows(order: list[int], run: list[tuple[float, dict]], strict: bool = True) -> float | None:
    """:func:`solutions` of one run joined in ``order`` (None, when ``strict``: a pattern sharing
    no variable is joined while one that does waits)."""
    rows, bound = 1.0, {}
    for pos, k in enumerate(order):
        alone, ends = run[k]
        shared = [_fanout(bound[v], e) for v, e in ends.items() if v in bound]
        if strict and pos and not shared and any(v in bound for j in order[pos + 1:] for v in run[j][1]):
            return None
        rows *= min(shared) if shared else alone
        for v, e in ends.items():
            bound.setdefault(v, e)
    return rows


def solutions(query: str, stats: JoinStats | None, above: float = 0.0) -> float:
    """An estimate of the solutions of the largest run of one-line triple patterns of ``query``,
    counting skew: joined in the order that gives the fewest (of up to :data:`EXHAUSTIVE`
    patterns; more: as written), each pattern after the first multiplying the rows by its
    :func:`_fanout` on the shared variable that bounds them most (one sharing none: by its
    rows); ``FILTER``s are not counted. Deterministic from the KG's counts (:class:`JoinStats`;
    without its ``degrees``, as if every node of a predicate had its average degree); 0
    without stats or patterns. A run estimated at most ``above`` joined as written is not
    joined in other orders (fewer still: the caller only asks whether it is over ``above``)."""
    if stats is None or not stats.predicates:
        return 0.0
    best = 0.0
    for triples in _triple_runs(query):
        run = [_ends(stats, *t) for t in triples]
        written = _rows(list(range(len(run))), run, strict=False) or 0.0
        if written > above and len(run) <= EXHAUSTIVE:
            got = [r for o in itertools.permutations(range(len(run))) if (r := _rows(list(o), run)) is not None]
            written = min(got) if got else written
        best = max(best, written)
    return best


def reads_every_solution(query: str) -> bool:
    """Whether the engine must read every solution of ``query``'s patterns before it answers: no
    ``LIMIT`` (an aggregate, a ``DISTINCT`` list), or one ``LIMIT`` after an ``ORDER BY`` of a
    query without subqueries (the order is known once every solution is)."""
    n = query.count("LIMIT")
    return n == 0 or (n == 1 and "ORDER BY" in query and query.count("SELECT") == 1)


def count_query(query: str) -> str | None:
    """A query (on one line) that counts the solutions of ``query``'s triple patterns, their
    ``FILTER``s and ``BIND``s left out, without listing them: grouped counts joined from the
    leaves of the patterns' tree towards its root, each pattern read once (the largest check
    of fso-hgde, 27 million solutions past the 30 s timeout, is counted in 1 s). None unless
    the query has one run of patterns (:func:`reorder`'s) whose variables form a tree (no
    cycle, no pattern without a variable or with one variable at both ends)."""
    runs = _triple_runs(query)
    if len(runs) != 1:
        return None
    pats = runs[0]
    ends = [[t[1:] for t in (s, o) if t.startswith("?")] for s, _, o in pats]
    if any(not e or (len(e) == 2 and e[0] == e[1]) for e in ends):
        return None
    seen: set[str] = set()
    todo = [ends[0][0]]
    used: set[int] = set()
    while todo:  # the patterns must form a tree over the variables
        v = todo.pop()
        if v in seen:
            return None
        seen.add(v)
        for k, e in enumerate(ends):
            if v in e and k not in used:
                used.add(k)
                todo += [w for w in e if w != v]
    if len(used) != len(pats):
        return None
    names = itertools.count()

    def subtree(v: str, parent: int | None) -> tuple[str, str]:
        """A group with one row per value of ``?v`` and the variable that holds the solutions
        of the patterns below it (all but ``parent``'s side)."""
        terms, ks = [], []
        for k, e in enumerate(ends):
            if k == parent or v not in e:
                continue
            s, p, o = pats[k]
            ks.append(f"?kgqa_k{next(names)}")
            w = next((x for x in e if x != v), None)
            leaf = w is None or not any(w in f for j, f in enumerate(ends) if j != k)
            below, c = ("", "") if leaf else subtree(w, k)
            agg = "COUNT(*)" if leaf else f"SUM({c})"
            terms.append(f"{{ SELECT ?{v} ({agg} AS {ks[-1]}) WHERE {{ {s} {p} {o} . {below} }} GROUP BY ?{v} }}")
        c = f"?kgqa_c{next(names)}"
        return f"{{ SELECT ?{v} ({' * '.join(ks)} AS {c}) WHERE {{ {' '.join(terms)} }} }}", c

    root, c = subtree(ends[0][0], None)
    return f"SELECT (SUM({c}) AS ?n) WHERE {{ {root} }}"


def _cast_sites(query: str) -> list[tuple[int, int, tuple[str, str, str]]]:
    """Per grounded cast value of ``query`` whose variable is read by one triple pattern (as
    its object) and its FILTER alone, both in one group (no brace between them): the pattern's
    line, the FILTER's line and the lookup key (predicate, cast datatype, value as written)."""
    lines = query.split("\n")
    out = []
    for k, line in enumerate(lines):
        m = _CAST_EQ.match(line)
        if not m:
            continue
        cast, var, value = m.groups()
        if len(re.findall(re.escape(var) + r"\b", query)) != 2:
            continue
        at = [j for j, x in enumerate(lines) if (t := _TRIPLE.match(x)) and t.group(4) == var and t.group(3) != "a"]
        if len(at) == 1 and not any(c in x for x in lines[min(at[0], k) + 1:max(at[0], k)] for c in "{}"):
            out.append((at[0], k, (_TRIPLE.match(lines[at[0]]).group(3), cast, value)))
    return out


def cast_lookups(query: str) -> list[tuple[str, str, str]]:
    """The (predicate, cast datatype, value) of each grounded cast value :func:`bind_casts` may
    write as stored (module docstring), each to be looked up with :func:`lookup_query`."""
    return [key for _, _, key in _cast_sites(query)]


def lookup_query(key: tuple[str, str, str]) -> str:
    """The stored values of ``key``'s predicate that cast to its value (at most two read: one
    is all :func:`bind_casts` uses)."""
    p, cast, value = key
    return f"SELECT DISTINCT ?v WHERE {{ ?s {p} ?v . FILTER({cast}(?v) = {value}) }} LIMIT 2"


def bind_casts(query: str, stored: dict) -> str:
    """``query`` with each grounded cast value whose key has one stored value in ``stored``
    ({key: its n3 text, or None: none or several}) written as that value in its triple pattern,
    its FILTER dropped (module docstring); the text as it was where there is none."""
    sites = [(t, f, stored.get(key)) for t, f, key in _cast_sites(query)]
    sites = [s for s in sites if s[2] is not None]
    if not sites:
        return query
    lines = query.split("\n")
    for t, f, value in sites:
        m = _TRIPLE.match(lines[t])
        lines[t] = f"{m.group(1)}{m.group(2)} {m.group(3)} {value} ."
        lines[f] = None
    return "\n".join(x for x in lines if x is not None)
