"""Query commonness (Su et al. 2016, Sec. 5.2, Eq. 1):

    p(q) = prod_{i in I_q} p(i) * prod_{c in C_q} p(c) * prod_{r in R_q} p(r)

over the multisets of the query's individuals (grounded entities and literals), classes (of
every node: entity classes, and the datatype of a literal node) and relations (one per edge);
functions are omitted, as in the paper. kgqa records ``log10 p(q)``.

Estimates (add-one smoothed, so every probability is positive and log10 p(q) finite):

- from KG frequencies (default): p(e) = (degree(e) + 1) / (sum of entity degrees + #entities);
  p(literal) = (#triples with that object + 1) / (#literal triples + #distinct literals);
  p(c) = (|c| + 1) / (sum of class sizes + #classes); p(datatype) = (#literals of it + 1) /
  (#literal triples + #datatypes); p(r) = (#triples of r + 1) / (#triples + #relations);
- from a frequency table (``--frequencies FILE``, TSV ``IRI<TAB>count``, e.g. entity mention
  counts from an entity-linking corpus as FACC1 in the paper): for each kind (individuals,
  classes, relations) with at least one IRI in the table, p(x) = (n(x) + 1) / (N + V + 1) with
  N the kind's total count and V its number of table entries; kinds absent from the table, and
  literals, keep the KG estimate.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from pathlib import Path

from kgqa.make.generate.graphquery import GraphQuery
from kgqa.make.generate.kg import KGAccess, QueryFailed
from kgqa.make.generate.schema import UNTYPED, Schema, name_words
from kgqa.model.problems import InputError
from kgqa.model.terms import IRI, NUMERIC_TYPES, Literal, Term


def read_frequencies(path: str | Path) -> dict[str, float]:
    """A TSV of ``IRI<TAB>count`` (a header line whose count is not a number is skipped; ``#``
    comments and blank lines too). A bad line is an error naming the file and line."""
    p = Path(path)
    out: dict[str, float] = {}
    try:
        with p.open(encoding="utf-8", newline="") as fh:
            for i, row in enumerate(csv.reader(fh, delimiter="\t"), 1):
                if not row or not row[0].strip() or row[0].startswith("#"):
                    continue
                if len(row) < 2:
                    raise InputError(str(p), f"line {i}: expected IRI<TAB>count, got {row!r}")
                try:
                    n = float(row[1])
                except ValueError:
                    if i == 1:
                        continue
                    raise InputError(str(p), f"line {i}: count {row[1]!r} is not a number") from None
                if n < 0 or math.isnan(n):
                    raise InputError(str(p), f"line {i}: count {row[1]!r} must be >= 0")
                iri = row[0].strip().strip("<>")
                out[iri] = out.get(iri, 0.0) + n
    except OSError as e:
        raise InputError(str(p), f"cannot read the frequency table: {e}") from e
    return out


#: topics whose labels have more words than this are ranked down (half an order of magnitude a word)
LONG_LABEL_WORDS = 3


def subsumed_relations(kg: KGAccess, schema: Schema) -> dict[str, str]:
    """Relations between IRIs each of whose triples is also a triple of another relation of
    ``schema``, read the same way or the other way round (``skos:topConceptOf`` when every top
    concept is also ``skos:inScheme`` its scheme): {dropped relation: the relation kept}. A
    reader would ask by the broader relation; the narrower one only adds a second, more
    technical way to ask the same. Two relations that hold (nearly: 10%) the same pairs say the
    same thing: the one with the shorter name is kept ("in scheme" over "has top concept").
    One aggregate query per relation."""
    rels = {k: r for k, r in schema.relations.items() if r.range and not r.datatypes}
    inside: dict[str, list[str]] = {}
    for p, r in sorted(rels.items()):
        q = (f"SELECT ?q ?dir (COUNT(*) AS ?n) WHERE {{ ?s <{p}> ?o . FILTER(isIRI(?o)) "
             f"{{ ?s ?q ?o . BIND(1 AS ?dir) }} UNION {{ ?o ?q ?s . BIND(-1 AS ?dir) }} "
             f"FILTER(?q != <{p}>) }} GROUP BY ?q ?dir")
        try:
            rows = kg.select(q).rows
        except QueryFailed:
            continue
        inside[p] = sorted({o.value for o, _, n in rows if isinstance(o, IRI) and o.value in rels
                            and isinstance(n, Literal) and int(n.value) >= r.count})
    out: dict[str, str] = {}

    def plainness(iri: str) -> tuple:
        words = name_words(iri)
        return (len(words), len("".join(words)), iri)

    for p in sorted(inside):
        for q in inside[p]:
            if p in out or q in out:
                continue
            if rels[q].count > 1.1 * rels[p].count or plainness(q) < plainness(p):
                out[p] = q  # narrower, or the same pairs under a longer name
            else:
                out[q] = p
    return out


def structural_relations(kg: KGAccess, schema: Schema, labels: Iterable[str]) -> set[str]:
    """Relations that are one to one (each subject one object, each object one subject) from
    subjects that have a label to objects none of which has one (``labels``: the label
    predicates): the object is the subject's own structure, modelled apart (an organ's
    "instrument whole", a record's "parthood") and named by nothing, so a question says its
    relations of the subject, as it says a path through blank nodes. One count query per
    candidate relation."""
    lp = ", ".join(f"<{p}>" for p in labels)
    out: set[str] = set()
    for p, r in sorted(schema.relations.items()):
        if not r.range or r.datatypes or not r.count or not (r.count == r.subjects == r.objects) or not lp:
            continue
        q = (f"SELECT (SUM(IF(EXISTS {{ ?o ?l ?x . FILTER(?l IN ({lp})) }}, 1, 0)) AS ?no) "
             f"(SUM(IF(EXISTS {{ ?s ?l ?x . FILTER(?l IN ({lp})) }}, 1, 0)) AS ?ns) WHERE {{ ?s <{p}> ?o }}")
        try:
            rows = kg.select(q).rows
        except QueryFailed:
            continue
        no, ns = (int(t.value) if isinstance(t, Literal) else 0 for t in rows[0]) if rows else (1, 0)
        if no == 0 and 2 * ns > r.count:
            out.add(p)
    return out


class Commonness:
    """Computes log10 p(q) for graph queries on one KG (entity degrees are queried, batched)."""

    def __init__(self, kg: KGAccess, schema: Schema, table: dict[str, float] | None = None):
        self.kg = kg
        self.schema = schema
        self.table = table or {}
        self._degree: dict[Term, int] = {}
        s = schema.stats
        self.classes_total = sum(schema.classes.values())
        self.rel_total = s.get("triples", 0)
        self.n_rel = max(1, len(schema.relations))
        dts: dict[str, int] = {}
        for r in schema.relations.values():
            for d, n in r.datatypes.items():
                dts[d] = dts.get(d, 0) + n
        self.datatypes = dts
        self.kinds: dict[str, tuple[float, int]] = {}
        if self.table:
            groups = {"class": [], "relation": [], "individual": []}
            for iri, n in self.table.items():
                kind = "class" if iri in schema.classes else "relation" if iri in schema.relations else "individual"
                groups[kind].append(n)
            self.kinds = {k: (sum(v), len(v)) for k, v in groups.items() if v}

    def _table_p(self, kind: str, iri: str) -> float | None:
        if kind not in self.kinds:
            return None
        total, v = self.kinds[kind]
        return (self.table.get(iri, 0.0) + 1.0) / (total + v + 1.0)

    def prefetch(self, terms: Iterable[Term]) -> None:
        todo = sorted({t for t in terms if t not in self._degree and isinstance(t, (IRI, Literal))},
                      key=lambda t: (isinstance(t, Literal), t.n3()))
        for i in range(0, len(todo), 100):
            chunk = todo[i:i + 100]
            ents = [t for t in chunk if isinstance(t, IRI)]
            lits = [t for t in chunk if isinstance(t, Literal)]
            for t in chunk:
                self._degree[t] = 0
            if ents:
                vals = " ".join(t.n3() for t in ents)
                q = (f"SELECT ?e (COUNT(*) AS ?n) WHERE {{ VALUES ?e {{ {vals} }} "
                     "{ ?e ?p ?o } UNION { ?s ?p ?e } } GROUP BY ?e")
                for e, n in self.kg.select(q).rows:
                    if e is not None:
                        self._degree[e] = int(n.value)
            for t in lits:  # literals one by one: VALUES with literals is matched by term
                q = f"SELECT (COUNT(*) AS ?n) WHERE {{ ?s ?p {t.n3()} }}"
                rows = self.kg.select(q).rows
                self._degree[t] = int(rows[0][0].value) if rows and rows[0][0] is not None else 0

    def individual(self, t: Term) -> float:
        if isinstance(t, IRI):
            p = self._table_p("individual", t.value)
            if p is not None:
                return p
        if t not in self._degree:
            self.prefetch([t])
        s = self.schema.stats
        if isinstance(t, Literal):
            return (self._degree[t] + 1) / (s.get("literal_triples", 0) + max(1, s.get("literals", 0)))
        return (self._degree[t] + 1) / (s.get("entity_degree", 0) + max(1, s.get("entities", 0)))

    def klass(self, cls: str, literal: bool) -> float | None:
        if literal:
            total = sum(self.datatypes.values())
            return (self.datatypes.get(cls, 0) + 1) / (total + max(1, len(self.datatypes)))
        if cls == UNTYPED:
            return None
        p = self._table_p("class", cls)
        if p is not None:
            return p
        return (self.schema.classes.get(cls, 0) + 1) / (self.classes_total + max(1, len(self.schema.classes)))

    def relation(self, rel: str) -> float:
        p = self._table_p("relation", rel)
        if p is not None:
            return p
        r = self.schema.relations.get(rel)
        return ((r.count if r else 0) + 1) / (self.rel_total + self.n_rel)

    def rank_candidates(self, cands: list[dict[str, Term]], lex=None) -> list[dict[str, Term]]:
        """Grounding candidates, the ones people would ask about first: entities by degree
        (p(e), as Eq. 1), an entity without a label (``lex``) or a number as topic (a lookup
        by statistic: "Which country has a population of 44.4?") last, an entity with a long
        label (more than :data:`LONG_LABEL_WORDS` words) after shorter ones; the seeded order
        breaks ties."""
        self.prefetch(t for c in cands for t in c.values())
        if lex is not None:
            lex.fetch([t.value for c in cands for t in c.values() if isinstance(t, IRI)])

        def score(c: dict[str, Term]) -> float:
            total = 0.0
            for t in c.values():
                if isinstance(t, IRI):
                    total += math.log10(self.individual(t))
                    if lex is not None and t.value in lex.unlabelled:
                        total -= 3.0
                    elif lex is not None:  # a long label makes a clumsy topic: shorter ones first
                        total -= 0.5 * max(0, len(lex.label(t.value).split()) - LONG_LABEL_WORDS)
                elif isinstance(t, Literal) and t.datatype in NUMERIC_TYPES:
                    total -= 3.0
            return total

        order = sorted(range(len(cands)), key=lambda i: (-score(cands[i]), i))
        return [cands[i] for i in order]

    def log10(self, q: GraphQuery) -> float:
        """log10 p(q) by Eq. 1."""
        total = 0.0
        for n in q.nodes:
            if n.value is not None:
                total += math.log10(self.individual(n.value))
            pc = self.klass(n.cls, n.literal)
            if pc is not None:
                total += math.log10(pc)
        for e in q.edges:
            total += math.log10(self.relation(e.rel))
        return total
