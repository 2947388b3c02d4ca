"""Predicate mapping by path enumeration (Azmy et al. 2018, sections 4.2-4.3).

Between a mapped topic entity ``T`` and a mapped answer ``A`` (an IRI, or a literal that is
the same value on both KGs) on the *target* KG:

- **one-hop**: ``T p A`` (forward: same direction as the source triple) or ``A p T``
  (backward);
- **two-hop** (only looked for when there is no one-hop path), ``T -p1- ?m -p2- A`` with each
  hop in either direction, classified as

  - **disambiguation**: ``T <disambiguates> ?m`` and ``?m -p2- A`` (or ``A <disambiguates>
    ?m`` and ``T -p1- ?m``): the mapped entity was an ambiguous page; the path is *compressed*
    to the one-hop ``p2`` (``p1``) and the entity replaced by ``?m``;
  - **redirection**: likewise through the redirect predicate;
  - **complex** (the paper's "complex + missing", which cannot be told apart automatically):
    any other chain; the mapping is the two-step path.

Paths are tuples of steps ``(predicate IRI, inverse)``; ``inverse`` means the step is walked
against the triple direction. Their SPARQL text is a property path (``<p>``, ``^<p>``,
``<p1>/^<p2>``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgqa.make.migrate.kg import KG, iri_ref, term_sparql
from kgqa.model import IRI, Literal
from kgqa.model.terms import Term

DBO = "http://dbpedia.org/ontology/"
DEFAULT_DISAMBIGUATION = (DBO + "wikiPageDisambiguates",)
DEFAULT_REDIRECT = (DBO + "wikiPageRedirects",)

Step = tuple[str, bool]
PathT = tuple[Step, ...]

#: preference when several kinds connect one pair (the paper's Table 2 is exclusive)
KIND_ORDER = ("one-hop", "disambiguation", "redirection", "complex")
TWO_HOP_LIMIT = 2000
ONE_HOP_BATCH = 100


def path_text(path: PathT) -> str:
    """SPARQL property path text of a path."""
    return "/".join(("^" if inv else "") + iri_ref(p) for p, inv in path)


def parse_path(text: str) -> PathT:
    """The inverse of :func:`path_text` (``<a>/^<b>``; a bare IRI is one forward step)."""
    text = text.strip()
    if not text.startswith(("<", "^")):
        return ((text, False),)
    steps = []
    for part in _split_path(text):
        inv = part.startswith("^")
        body = part[1:] if inv else part
        if not (body.startswith("<") and body.endswith(">")):
            raise ValueError(f"path step {part!r}: expected <IRI> or ^<IRI>")
        steps.append((body[1:-1], inv))
    return tuple(steps)


def _split_path(text: str) -> list[str]:
    parts, cur, depth = [], [], 0
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "/" and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def invert(path: PathT) -> PathT:
    return tuple((p, not inv) for p, inv in reversed(path))


def direction(path: PathT) -> str:
    """``forward`` / ``backward`` for a one-step path; ``chain`` for longer ones."""
    if len(path) == 1:
        return "backward" if path[0][1] else "forward"
    return "chain"


@dataclass(frozen=True)
class Found:
    """One path found between a pair: its kind, the (compressed) path, and for compressed kinds
    the node that replaces the topic (``topic``) or the answer (``answer``)."""

    kind: str
    path: PathT
    topic: str | None = None
    answer: str | None = None
    via: str | None = None  # the disambiguation / redirect node's role: "topic" or "answer"


@dataclass
class PairPaths:
    """All paths found for one (topic, answer) pair, the chosen ``kind`` (by KIND_ORDER) and
    the query failures met on the way."""

    found: list[Found] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        kinds = {f.kind for f in self.found}
        for k in KIND_ORDER:
            if k in kinds:
                return k
        return "not-mapped"

    def of_kind(self, kind: str | None = None) -> list[Found]:
        kind = kind or self.kind
        return [f for f in self.found if f.kind == kind]


def _one_hop_query(t: Term, a: Term) -> str:
    T, A = term_sparql(t), term_sparql(a)
    if isinstance(a, Literal):
        return f'SELECT DISTINCT ?p ?d WHERE {{ {T} ?p {A} BIND("f" AS ?d) }}'
    return (f'SELECT DISTINCT ?p ?d WHERE {{ {{ {T} ?p {A} BIND("f" AS ?d) }} UNION '
            f'{{ {A} ?p {T} BIND("b" AS ?d) }} }}')


def _one_hop_batch(chunk: Sequence[tuple[int, tuple[Term, Term]]]) -> str:
    """One query for many pairs: ``?i`` is the pair's index."""
    rows = " ".join(f"({i} {term_sparql(t)} {term_sparql(a)})" for i, (t, a) in chunk)
    return (f'SELECT DISTINCT ?i ?p ?d WHERE {{ VALUES (?i ?t ?a) {{ {rows} }} '
            f'{{ ?t ?p ?a BIND("f" AS ?d) }} UNION {{ ?a ?p ?t FILTER(!isLITERAL(?a)) BIND("b" AS ?d) }} }}')


def _two_hop_query(t: Term, a: Term) -> str:
    T, A = term_sparql(t), term_sparql(a)
    first = f'{{ {T} ?p1 ?m BIND("f" AS ?d1) }} UNION {{ ?m ?p1 {T} BIND("b" AS ?d1) }}'
    if isinstance(a, Literal):
        second = f'?m ?p2 {A} BIND("f" AS ?d2)'
        filt = f"FILTER(?m != {T})"
    else:
        second = f'{{ ?m ?p2 {A} BIND("f" AS ?d2) }} UNION {{ {A} ?p2 ?m BIND("b" AS ?d2) }}'
        filt = f"FILTER(?m != {T} && ?m != {A})"
    return (f"SELECT DISTINCT ?p1 ?d1 ?m ?p2 ?d2 WHERE {{ {{ {first} }} {{ {second} }} "
            f"FILTER(!isLITERAL(?m)) {filt} }} LIMIT {TWO_HOP_LIMIT}")


class PathFinder:
    """Enumerates and classifies paths on ``kg``; the disambiguation and redirect predicates
    are configurable (DBpedia's by default)."""

    def __init__(self, kg: KG, disambiguation: Sequence[str] = DEFAULT_DISAMBIGUATION,
                 redirect: Sequence[str] = DEFAULT_REDIRECT, two_hop: bool = True):
        self.kg = kg
        self.disambiguation = set(disambiguation)
        self.redirect = set(redirect)
        self.two_hop = two_hop
        self.special = self.disambiguation | self.redirect

    def find_many(self, pairs: Sequence[tuple[Term, Term]], all_two_hop: bool = False) -> list[PairPaths]:
        """Paths for each (topic, answer) pair (target terms), batched. Two-hop paths are
        enumerated for pairs without a one-hop path, or for every pair with ``all_two_hop``."""
        results = [PairPaths() for _ in pairs]
        for start in range(0, len(pairs), ONE_HOP_BATCH):
            chunk = list(enumerate(pairs[start:start + ONE_HOP_BATCH], start))
            r = self.kg.rows([_one_hop_batch(chunk)])[0]
            if isinstance(r, str):  # the batch failed: ask pair by pair, to keep the others
                for (i, (t, a)), ri in zip(chunk, self.kg.rows([_one_hop_query(t, a) for _, (t, a) in chunk])):
                    if isinstance(ri, str):
                        results[i].errors.append(ri)
                    else:
                        self._one_hop(results[i], ri)
                continue
            for i, p, d in r:
                self._one_hop(results[int(i.value)], [(p, d)])
        need_two = [i for i, res in enumerate(results) if (not res.found or all_two_hop) and not res.errors]
        if self.two_hop and need_two:
            two = self.kg.rows([_two_hop_query(*pairs[i]) for i in need_two])
            for i, r in zip(need_two, two):
                if isinstance(r, str):
                    results[i].errors.append(r)
                    continue
                seen = set()
                for p1, d1, m, p2, d2 in r:
                    f = self.classify(p1.value, d1.value == "b", m, p2.value, d2.value == "b")
                    if f is not None and f not in seen:
                        seen.add(f)
                        results[i].found.append(f)
        for res in results:
            res.found.sort(key=lambda f: (KIND_ORDER.index(f.kind), path_text(f.path), f.topic or "", f.answer or ""))
        return results

    def _one_hop(self, res: PairPaths, rows) -> None:
        for p, d in rows:
            if isinstance(p, IRI) and p.value not in self.special:
                f = Found("one-hop", ((p.value, d.value == "b"),))
                if f not in res.found:
                    res.found.append(f)

    def classify(self, p1: str, inv1: bool, m: Term, p2: str, inv2: bool) -> Found | None:
        mid = m.value if isinstance(m, IRI) else None
        if p1 in self.special and not inv1 and p2 not in self.special:
            kind = "disambiguation" if p1 in self.disambiguation else "redirection"
            return Found(kind, ((p2, inv2),), topic=mid, via="topic") if mid else None
        if p2 in self.special and inv2 and p1 not in self.special:
            kind = "disambiguation" if p2 in self.disambiguation else "redirection"
            return Found(kind, ((p1, inv1),), answer=mid, via="answer") if mid else None
        if p1 in self.special or p2 in self.special:
            return None  # walks through two special links, or against them: not a fact
        return Found("complex", ((p1, inv1), (p2, inv2)))


def support(paths_per_pair: Sequence[PairPaths]) -> Counter:
    """How many pairs each path connects, counting each pair once per path (the kind the pair
    was classified as)."""
    c: Counter = Counter()
    for pp in paths_per_pair:
        for path in {f.path for f in pp.of_kind()}:
            c[path] += 1
    return c
