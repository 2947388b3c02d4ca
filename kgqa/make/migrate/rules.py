"""Predicate mapping rules (Azmy et al. 2018, section 4.4, Table 4), as YAML a human writes or
accepts from kgqa's proposal::

    rules:
      - source: http://rdf.freebase.com/ns/music.artist.track
        targets: [http://dbpedia.org/ontology/artist]   # alternatives (any of them)
        direction: backward                             # forward | backward
        constraint: http://dbpedia.org/ontology/MusicalWork   # optional rdf:type
        constraint_on: object       # the source triple's object (default: the answer of a
                                    # SimpleQuestions record) or subject
        support: 12                 # proposals only: how many pairs the mapping connected

A target is a predicate IRI or a property path written with full IRIs (``<p1>/^<p2>``: a
two-hop chain found by path enumeration). ``direction: backward`` walks the whole target
against the source triple's direction. ``constraint_on`` names a side of the *source* triple
(the paper puts the constraint on the answer entity; for complex queries either side can be
the one that needs it). Several rules for one source predicate are alternatives too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kgqa.load.jsonio import read_yaml, write_atomic
from kgqa.make.migrate.paths import PathT, invert, parse_path
from kgqa.model import InputError


@dataclass(frozen=True)
class Rule:
    source: str
    targets: tuple[str, ...]
    direction: str = "forward"
    constraint: str | None = None
    constraint_on: str = "object"
    support: int | None = None
    alternatives: tuple = ()

    def paths(self) -> list[PathT]:
        """Each target as a path in the source triple's direction (subject -> object)."""
        out = []
        for t in self.targets:
            p = parse_path(t)
            out.append(invert(p) if self.direction == "backward" else p)
        return out

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"source": self.source, "targets": list(self.targets), "direction": self.direction}
        if self.constraint:
            d["constraint"] = self.constraint
            d["constraint_on"] = self.constraint_on
        if self.support is not None:
            d["support"] = self.support
        if self.alternatives:
            d["alternatives"] = [dict(a) for a in self.alternatives]
        return d


@dataclass
class RuleSet:
    rules: list[Rule] = field(default_factory=list)
    path: str | None = None

    def for_predicate(self, source: str) -> list[Rule]:
        return [r for r in self.rules if r.source == source]

    def __contains__(self, source: str) -> bool:
        return any(r.source == source for r in self.rules)

    def __len__(self) -> int:
        return len(self.rules)


def _rule(raw: Any, where: str) -> Rule:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected a mapping with source, targets, direction")
    src = raw.get("source")
    if not isinstance(src, str) or not src.strip():
        raise ValueError(f"{where}: 'source' must be a predicate IRI")
    targets = raw.get("targets", raw.get("target"))
    if isinstance(targets, str):
        targets = [targets]
    if not isinstance(targets, list) or not targets or not all(isinstance(t, str) and t.strip() for t in targets):
        raise ValueError(f"{where}: 'targets' must be a non-empty list of predicate IRIs or paths")
    for t in targets:
        try:
            parse_path(t)
        except ValueError as e:
            raise ValueError(f"{where}: target {t!r}: {e}") from None
    direction = raw.get("direction", "forward")
    if direction not in ("forward", "backward"):
        raise ValueError(f"{where}: 'direction' must be forward or backward, got {direction!r}")
    constraint = raw.get("constraint")
    if constraint is not None and (not isinstance(constraint, str) or not constraint.strip()):
        raise ValueError(f"{where}: 'constraint' must be a class IRI or absent")
    on = raw.get("constraint_on", "object")
    if on not in ("subject", "object"):
        raise ValueError(f"{where}: 'constraint_on' must be subject or object, got {on!r}")
    support = raw.get("support")
    return Rule(src.strip(), tuple(t.strip() for t in targets), direction,
                constraint.strip() if constraint else None, on,
                support if isinstance(support, int) else None)


def load_rules(path: str | Path) -> RuleSet:
    """Rules from a YAML file (a ``rules:`` list, or a bare list); errors name the rule."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such rules file")
    doc = read_yaml(path)
    raw = doc.get("rules") if isinstance(doc, dict) else doc
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise InputError(path, "expected a list of rules under 'rules:'")
    rules = []
    for i, r in enumerate(raw, start=1):
        try:
            rules.append(_rule(r, f"rule {i}"))
        except ValueError as e:
            raise InputError(path, str(e)) from None
    return RuleSet(rules, str(path))


def write_rules(rules: RuleSet | list[Rule], path: str | Path, header: str = "") -> None:
    """Rules as YAML (atomically); ``header`` becomes leading comment lines."""
    items = rules.rules if isinstance(rules, RuleSet) else rules
    text = yaml.safe_dump({"rules": [r.to_json() for r in items]}, sort_keys=False, allow_unicode=True, width=120)
    lines = "".join(f"# {h}\n" if h else "#\n" for h in header.splitlines()) if header else ""
    write_atomic(Path(path), [lines, text])
