"""Candidate predicate mappings: path-enumeration support aggregated per source predicate,
the chosen mapping, and proposed rules (with type constraints where the target predicate is
more general than the source one).

Choice among candidates of one source predicate (deterministic): highest support; ties go to
the same IRI as the source, then to the preferred kind (one-hop, disambiguation, redirection,
complex), then to the most similar local name (difflib ratio), then to the path text.

A candidate is only chosen with sufficient support (:meth:`PredicateEvidence.required`):
at least ``min_share`` (default 50%) of the evidence pairs with both ends mapped and at least
``min_support`` (default 5) of them (with fewer mapped pairs than that, three quarters of
them), so that a path
connecting 3 of 20 sampled facts by chance is refused (reported unmapped, with its support).
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace as _replace
from typing import Any
import math

from kgqa.make.migrate.kg import KG, TYPE_PATH, iri_ref
from kgqa.make.migrate.paths import KIND_ORDER, PairPaths, PathT, direction, invert, path_text
from kgqa.make.migrate.rules import Rule


DEFAULT_MIN_SUPPORT = 5
DEFAULT_MIN_SHARE = 0.5


def local_name(iri: str) -> str:
    return iri.rstrip("/#").replace("#", "/").rsplit("/", 1)[-1].lower()


@dataclass
class Candidate:
    path: PathT
    support: int = 0
    kinds: Counter = field(default_factory=Counter)
    precision: float | None = None  # from verification (see verify)
    recall: float | None = None

    @property
    def f1(self) -> float | None:
        if self.precision is None or self.recall is None:
            return None
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_json(self) -> dict:
        d = {"path": path_text(self.path), "direction": direction(self.path), "support": self.support,
             "kinds": dict(sorted(self.kinds.items()))}
        if self.f1 is not None:
            d.update(precision=round(self.precision, 4), recall=round(self.recall, 4))
        return d


@dataclass
class PredicateEvidence:
    """What path enumeration found for one source predicate over its evidence pairs."""

    source: str
    pairs: int = 0  # evidence pairs looked at
    mapped_pairs: int = 0  # with both ends mapped
    categories: Counter = field(default_factory=Counter)  # pair category -> count
    directions: Counter = field(default_factory=Counter)  # (category, forward|backward|chain) -> count
    candidates: dict[PathT, Candidate] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    source_count: int | None = None  # triples of the source predicate on the source KG (when known)
    subject_ends: dict[PathT, set[str]] = field(default_factory=dict)  # target subjects per path
    object_ends: dict[PathT, set[str]] = field(default_factory=dict)
    min_support: int = DEFAULT_MIN_SUPPORT
    min_share: float = DEFAULT_MIN_SHARE
    #: the target predicate holding the values times a factor (a unit change, see
    #: :func:`kgqa.make.migrate.align.value_transform`): a :class:`~kgqa.make.migrate.scale.Scale`
    transformed: Any = None
    #: the best candidate's constraint measured on the facts (see kgqa.make.migrate.separate)
    separation: Any = None

    def add(self, pp: PairPaths, topic: str | None, answer: str | None) -> None:
        self.mapped_pairs += 1
        kind = pp.kind
        self.categories[kind] += 1
        self.errors.extend(pp.errors)
        paths = {}
        for f in pp.of_kind():
            paths.setdefault(f.path, f)
        if not paths:
            return
        self.directions[(kind, direction(sorted(paths, key=path_text)[0]))] += 1
        for path, f in paths.items():
            c = self.candidates.setdefault(path, Candidate(path))
            c.support += 1
            c.kinds[kind] += 1
            s = f.topic or topic
            o = f.answer or answer
            if s:
                self.subject_ends.setdefault(path, set()).add(s)
            if o:
                self.object_ends.setdefault(path, set()).add(o)

    def ranked(self) -> list[Candidate]:
        def key(c: Candidate):
            identity = len(c.path) == 1 and c.path[0][0] == self.source and not c.path[0][1]
            kind = min(KIND_ORDER.index(k) for k in c.kinds) if c.kinds else len(KIND_ORDER)
            sim = difflib.SequenceMatcher(None, local_name(self.source), local_name(c.path[0][0])).ratio()
            f1 = -round(c.f1, 6) if c.f1 is not None else 0.0
            return (f1, -c.support, not identity, kind, -round(sim, 6), path_text(c.path))

        return sorted(self.candidates.values(), key=key)

    def required(self, min_support: int | None = None, min_share: float | None = None) -> int:
        """The support a candidate needs: ``min_share`` of the mapped evidence pairs and
        ``min_support`` of them (three quarters of them when fewer were found); at least 1."""

        ms = self.min_support if min_support is None else min_support
        sh = self.min_share if min_share is None else min_share
        n = self.mapped_pairs
        return max(1, math.ceil(sh * n), min(ms, math.ceil(0.75 * n)))

    def best(self, min_support: int | None = None, min_share: float | None = None) -> Candidate | None:
        """The top candidate when it has the required support (:meth:`required`), else None."""
        r = self.ranked()
        return r[0] if r and r[0].support >= self.required(min_support, min_share) else None

    def to_json(self) -> dict:
        best = self.best()
        return {"source": self.source, "pairs": self.pairs, "mapped_pairs": self.mapped_pairs,
                "required_support": self.required(),
                **({"transformed": self.transformed.text()} if self.transformed else {}),
                **({"separation": self.separation.to_json()} if self.separation else {}),
                "categories": dict(sorted(self.categories.items())),
                "best": best.to_json() if best else None,
                "candidates": [c.to_json() for c in self.ranked()],
                **({"errors": sorted(set(self.errors))[:5]} if self.errors else {})}


def verify(ev: PredicateEvidence, candidates: Sequence[Candidate], expected: dict[str, set],
           target: KG, key) -> None:
    """Set precision and recall of each candidate: from the sampled subjects (target IRIs, the
    keys of ``expected``), what the candidate path reaches on the target vs the mapped source
    objects of the source predicate (``expected``, compared by ``key``). A candidate that
    connects the sampled pairs but reaches much more (e.g. a city's country for a country's
    capital) is semantic drift and loses to a precise one."""
    subjects = sorted(expected)
    if not subjects:
        return
    vals = " ".join(iri_ref(x) for x in subjects)
    for c in candidates:
        r = target.rows([f"SELECT ?s ?o WHERE {{ VALUES ?s {{ {vals} }} ?s {path_text(c.path)} ?o }}"])[0]
        if isinstance(r, str):
            continue
        got: dict[str, set] = {}
        for s_, o in r:
            got.setdefault(s_.value, set()).add(key(o))
        tp = sum(len(expected[x] & got.get(x, set())) for x in subjects)
        n_got = sum(len(v) for v in got.values())
        n_exp = sum(len(v) for v in expected.values())
        c.precision = tp / n_got if n_got else 0.0
        c.recall = tp / n_exp if n_exp else 0.0


def by_generality(kg: KG, classes: set[str]) -> list[str]:
    """Classes, most instances first (ties by IRI)."""
    vals = " ".join(iri_ref(c) for c in sorted(classes))
    r = kg.rows([f"SELECT ?c (COUNT(DISTINCT ?x) AS ?n) WHERE {{ VALUES ?c {{ {vals} }} ?x {TYPE_PATH} ?c }} GROUP BY ?c"])[0]
    counts = {} if isinstance(r, str) else {c.value: int(n.value) for c, n in r}
    return sorted(classes, key=lambda c: (-counts.get(c, 0), c))


def type_constraint(kg: KG, path: PathT, ends: set[str], side: str, anchors: set[str] | None = None,
                    max_classes: int = 20, source_count: int | None = None) -> str | None:
    """A type constraint for the ``side`` (subject / object) of ``path``, chosen among the
    classes every one of ``ends`` (target nodes seen at that side) has, most general first.

    With ``source_count`` (the number of source triples of the source predicate): only when the
    target path has more triples than that (it is more general), the most general class that
    brings it down to at most ``source_count``. Without it (no source KG): the most general
    class that still changes answers, i.e. the path also reaches nodes outside it (from
    ``anchors`` at the other side when given, else anywhere). None when nothing qualifies."""
    if not ends:
        return None
    p = path_text(path)
    if source_count is not None:
        total = kg.count(f"?x {p} ?y")
        if total is None or total <= source_count:
            return None
    types = kg.types(sorted(ends))
    common = set.intersection(*(types[e] for e in ends))
    if not common:
        return None
    for cls in by_generality(kg, common)[:max_classes]:
        if source_count is not None:
            var = "?x" if side == "subject" else "?y"
            n = kg.count(f"?x {p} ?y . {var} {TYPE_PATH} {iri_ref(cls)}")
            if n is not None and n <= source_count:
                return cls
            continue
        if side == "subject":
            pat = f"?x {p} ?y FILTER NOT EXISTS {{ ?x {TYPE_PATH} {iri_ref(cls)} }}"
        else:
            pat = f"?y {p} ?x FILTER NOT EXISTS {{ ?x {TYPE_PATH} {iri_ref(cls)} }}"
        if anchors:
            vals = " ".join(iri_ref(a) for a in sorted(anchors)[:200])
            pat = f"VALUES ?y {{ {vals} }} " + pat
        r = kg.rows([f"SELECT ?x WHERE {{ {pat} }} LIMIT 1"])[0]
        if not isinstance(r, str) and r:
            return cls
    return None


def propose(evidence: Sequence[PredicateEvidence], kg: KG, *, min_support: int | None = None,
            constraints: str = "both", max_alternatives: int = 5) -> list[Rule]:
    """One proposed rule per source predicate with a candidate of the required support
    (:meth:`PredicateEvidence.required`; ``min_support`` overrides the evidence's own):
    the best candidate as the target (a one-step path as predicate + direction, a longer one
    as a path), other candidates as ``alternatives`` with their support, and a type constraint
    when one is needed (``constraints``: ``object`` only, as the paper's answer constraint,
    ``both`` sides, or ``none``)."""
    rules = []
    for ev in sorted(evidence, key=lambda e: e.source):
        best = ev.best(min_support)
        if best is None or ev.transformed:
            continue
        path = best.path
        if len(path) == 1:
            target, dirn = path[0][0], ("backward" if path[0][1] else "forward")
        else:
            target, dirn = path_text(path), "forward"
        constraint, on = None, "object"
        if constraints != "none":
            sides = ("object", "subject") if constraints == "both" else ("object",)
            for side in sides:
                ends = (ev.object_ends if side == "object" else ev.subject_ends).get(path, set())
                other = (ev.subject_ends if side == "object" else ev.object_ends).get(path, set())
                c = type_constraint(kg, path, ends, side, other if side == "object" else None,
                                    source_count=ev.source_count)
                if c:
                    constraint, on = c, side
                    break
        alts = tuple((("path", path_text(c.path)), ("support", c.support))
                     for c in ev.ranked()[1:1 + max_alternatives])
        rules.append(Rule(ev.source, (target,), dirn, constraint, on, best.support, alts))
    if constraints != "none":
        rules = _constrain_merges(rules, {ev.source: ev for ev in evidence}, kg)
    return rules


def _constrain_merges(rules: list[Rule], evidence: dict[str, PredicateEvidence], kg: KG) -> list[Rule]:
    """Every side of a merge gets its type constraint: when several source predicates map to
    the same target path, one without a constraint gets the most general class (either side)
    that keeps it apart from the others (the target path reaches nodes outside it)."""

    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rules):
        groups.setdefault(tuple(r.paths()), []).append(i)
    for idx in groups.values():
        if len(idx) < 2:
            continue
        for i in idx:
            r = rules[i]
            if r.constraint:
                continue
            ev = evidence[r.source]
            path = r.paths()[0]
            for side in ("object", "subject"):
                ends = (ev.object_ends if side == "object" else ev.subject_ends).get(path, set())
                other = (ev.subject_ends if side == "object" else ev.object_ends).get(path, set())
                c = type_constraint(kg, path, ends, side, other if side == "object" else None)
                if c:
                    rules[i] = _replace(r, constraint=c, constraint_on=side)
                    break
    return rules


def rule_for(path: PathT) -> tuple[str, str]:
    """(target text, direction) of a path as a rule writes it."""
    if len(path) == 1:
        return path[0][0], ("backward" if path[0][1] else "forward")
    return path_text(path), "forward"


__all__ = ["Candidate", "PredicateEvidence", "propose", "type_constraint", "rule_for", "invert", "DEFAULT_MIN_SUPPORT",
           "DEFAULT_MIN_SHARE"]
