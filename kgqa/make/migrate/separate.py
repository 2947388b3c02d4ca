"""Mappings that separate (issue 37): a target relation that several source relations were
merged into (or that is more general than the source one) reaches more than the source
predicate says. The mapping is used only with a constraint that restores precision on the
evidence, chosen by *measuring* each candidate on the aligned facts:

- the facts: for the sampled source subjects, their objects on the source (forward), and for
  the sampled source objects (IRIs), their subjects (backward), both mapped to the target;
- a candidate: no constraint, the constraint proposed from instance counts, then a type on the
  object side or on the subject side (classes held by at least :data:`COVER` of the target
  nodes the facts have on that side, most general first), then a type that side must *not*
  have (classes held by at least :data:`COVER` of the nodes the path reaches beyond the facts
  and by none of the facts' nodes: the other relations of a merge);
- precision and recall of a candidate: what the constrained target path reaches from the
  facts' subjects (forward) and objects (backward) against the mapped facts, the lower of the
  two directions each (a merge shows in one direction only); and, with the source predicate's
  triple count, the share of the constrained path's triples on the whole target that count
  is (a merge of relations whose subjects and objects are disjoint shows on no sampled fact,
  only in the relation's size).

The first candidate with precision 1, no more triples than the source relation (within 5%) and
(almost) the recall of the unconstrained path wins; without one the unconstrained path when it
is precise on the facts (a target more complete than the source is not refused), else the most
precise candidate with its precision, and the caller never uses a mapping
below its precision threshold silently (the predicate is reported unmapped with the measures).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kgqa.make.migrate.kg import KG, TYPE_PATH, iri_ref
from kgqa.make.migrate.predicates import by_generality

COVER = 0.9  # share of a side's nodes a candidate class must hold
MAX_CLASSES = 8  # candidate classes per side
RECALL_SLACK = 0.05
SIZE_SLACK = 0.95  # a target relation up to ~5% larger than the source one needs no constraint


@dataclass
class Measure:
    """One candidate constraint and its measures on the evidence facts."""

    constraint: str | None
    side: str
    precision: float
    recall: float
    negated: bool = False
    #: source triples over the (constrained) target path's triples, at most 1 (None: not known)
    share: float | None = None
    #: nodes the path reaches beyond the facts, by side (the unconstrained measure only)
    extras: dict[str, set[str]] = field(default_factory=dict)

    def text(self) -> str:
        c = (f"{self.side} {'not ' if self.negated else ''}a <{self.constraint}>" if self.constraint
             else "no constraint")
        size = f", {self.share:.2f} of its triples are the source's" if self.share is not None else ""
        return f"{c}: precision {self.precision:.2f}, recall {self.recall:.2f}{size}"

    def fits(self) -> bool:
        """Precise on the facts and no larger than the source relation."""
        return self.precision >= 1.0 and (self.share is None or self.share >= SIZE_SLACK)


@dataclass
class Separation:
    """The chosen candidate and everything measured."""

    chosen: Measure
    tried: list[Measure] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"constraint": self.chosen.constraint, "constraint_on": self.chosen.side,
                "negated": self.chosen.negated,
                "precision": round(self.chosen.precision, 4), "recall": round(self.chosen.recall, 4),
                "tried": [m.text() for m in self.tried]}


def _pattern(path: str, constraint: str | None, side: str, negated: bool = False) -> str:
    pat = f"?s {path} ?o ."
    if constraint:
        test = f"{'?s' if side == 'subject' else '?o'} {TYPE_PATH} {iri_ref(constraint)}"
        pat += f" FILTER NOT EXISTS {{ {test} }}" if negated else f" {test} ."
    return pat


def measure(kg: KG, path: str, forward: dict[str, set], backward: dict[str, set], key: Callable,
            constraint: str | None = None, side: str = "object", negated: bool = False,
            source_count: int | None = None) -> Measure:
    """Precision and recall of ``path`` (with the constraint) on the facts, the lower of the
    two directions: ``forward`` maps target subjects to the keys of their expected objects,
    ``backward`` target objects (IRIs) to the keys of their expected subjects."""
    precision, recall = 1.0, 1.0
    extras: dict[str, set[str]] = {"object": set(), "subject": set()}
    for facts, fixed in ((forward, "?s"), (backward, "?o")):
        if not facts:
            continue
        vals = " ".join(iri_ref(x) for x in sorted(facts))
        r = kg.rows([f"SELECT ?s ?o WHERE {{ VALUES {fixed} {{ {vals} }} {_pattern(path, constraint, side, negated)} }}"])[0]
        if isinstance(r, str):
            return Measure(constraint, side, 0.0, 0.0, negated)
        got: dict[str, set] = {}
        for s, o in r:
            a, b = (s, o) if fixed == "?s" else (o, s)
            got.setdefault(a.value, set()).add(key(b))
            if key(b) not in facts.get(a.value, ()) and hasattr(b, "value") and type(b).__name__ == "IRI":
                extras["object" if fixed == "?s" else "subject"].add(b.value)
        tp = sum(len(facts[x] & got.get(x, set())) for x in facts)
        n_got = sum(len(v) for v in got.values())
        n_exp = sum(len(v) for v in facts.values())
        precision = min(precision, tp / n_got if n_got else 0.0)
        recall = min(recall, tp / n_exp if n_exp else 0.0)
    share = None
    if source_count:
        n = kg.count(_pattern(path, constraint, side, negated))
        share = min(1.0, source_count / n) if n else None
    return Measure(constraint, side, precision, recall, negated, share, extras)


def _count(kg: KG, nodes: set[str]) -> dict[str, int]:
    types = kg.types(sorted(nodes)) if nodes else {}
    count: dict[str, int] = {}
    for n in nodes:
        for c in types.get(n, ()):
            count[c] = count.get(c, 0) + 1
    return count


def _classes(kg: KG, nodes: set[str]) -> list[str]:
    """Classes held by at least :data:`COVER` of ``nodes``, most general first."""
    held = {c for c, k in _count(kg, nodes).items() if k >= COVER * len(nodes)}
    return by_generality(kg, held)[:MAX_CLASSES] if held else []


def _excluding(kg: KG, extras: set[str], own: set[str]) -> list[str]:
    """Classes held by at least :data:`COVER` of ``extras`` and by none of ``own``."""
    theirs = {c for c, k in _count(kg, extras).items() if k >= COVER * len(extras)}
    held = theirs - set(_count(kg, own))
    return by_generality(kg, held)[:MAX_CLASSES] if held else []


def separate(kg: KG, path: str, forward: dict[str, set], backward: dict[str, set], key: Callable,
             proposed: tuple[str, str] | None = None, source_count: int | None = None) -> Separation:
    """The constraint for ``path`` measured on the facts (module docstring); with
    ``source_count`` (the source predicate's triples) also on the whole relation."""
    base = measure(kg, path, forward, backward, key, source_count=source_count)
    tried = [base]
    if base.fits():
        return Separation(base, tried)
    cands: list[tuple[str, str, bool]] = [(*proposed, False)] if proposed else []
    own = {"object": set(backward), "subject": set(forward)}
    for side in ("object", "subject"):
        cands += [(c, side, False) for c in _classes(kg, own[side]) if (c, side, False) not in cands]
    for side in ("object", "subject"):
        cands += [(c, side, True) for c in _excluding(kg, base.extras.get(side, set()), own[side])]
    for c, side, neg in cands:
        m = measure(kg, path, forward, backward, key, c, side, neg, source_count)
        tried.append(m)
        if m.fits() and m.recall >= base.recall - RECALL_SLACK:
            return Separation(m, tried)
    if base.precision >= 1.0:  # larger than the source relation, but nothing separates it
        return Separation(base, tried)
    best = max(tried, key=lambda m: (m.precision, m.recall))
    return Separation(best, tried)


__all__ = ["Measure", "Separation", "measure", "separate", "COVER"]
