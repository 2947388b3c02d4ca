"""Statistics tables in the shape of the paper's Table 2 (initial mapping: one-hop / two-hop
kind x forward / backward; entity-mapping failures) and Table 3 (after refinement), plus the
per-predicate and per-item agreement tables of a SPARQL migration. Plain data (title, columns,
rows); rendering is the caller's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

KINDS = (("one-hop", "One hop"), ("disambiguation", "Two hop: disambiguation"),
         ("redirection", "Two hop: redirection"), ("complex", "Two hop: complex + missing"),
         ("not-mapped", "Not mapped predicates"))
ENTITY_ROWS_TRIPLES = (("only-answer", "Only answer entity mapped"), ("only-topic", "Only topic entity mapped"),
                       ("neither", "Both not mapped"))
ENTITY_ROWS_PAIRS = (("only-object", "Only object mapped"), ("only-subject", "Only subject mapped"),
                     ("neither", "Both not mapped"))


@dataclass
class MigrationTable:
    title: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"title": self.title, "columns": self.columns, "rows": self.rows}

    def markdown(self) -> str:
        lines = [f"**{self.title}**", "", "| " + " | ".join(self.columns) + " |",
                 "|" + "|".join("---" for _ in self.columns) + "|"]
        lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in self.rows]
        return "\n".join(lines)


@dataclass
class Tables:
    tables: list[MigrationTable] = field(default_factory=list)

    def to_json(self) -> list[dict]:
        return [t.to_json() for t in self.tables]

    def markdown(self) -> str:
        return "\n\n".join(t.markdown() for t in self.tables)

    def __getitem__(self, title_start: str) -> MigrationTable:
        for t in self.tables:
            if t.title.startswith(title_start):
                return t
        raise KeyError(title_start)


def _kind_table(title: str, counts: Counter, dirs: Counter, entity_rows: Sequence[tuple[str, str]],
                total_label: str) -> MigrationTable:
    t = MigrationTable(title, ["", "", "forward", "backward", "total"])
    sub = 0
    for key, label in KINDS:
        f, b = dirs[(key, "forward")], dirs[(key, "backward")]
        n = counts[key]
        sub += n
        group = "Mapped entities" if key == "one-hop" else ""
        t.rows.append([group, label, f if key not in ("complex", "not-mapped") else "-",
                       b if key not in ("complex", "not-mapped") else "-", n])
    t.rows.append(["", "Sub-total", "", "", sub])
    sub2 = 0
    for i, (key, label) in enumerate(entity_rows):
        sub2 += counts[key]
        t.rows.append(["Not mapped entities" if i == 0 else "", label, "", "", counts[key]])
    t.rows.append(["", "Sub-total", "", "", sub2])
    t.rows.append(["", total_label, "", "", sub + sub2])
    return t


def triple_tables(records: Sequence[dict], refined: bool) -> Tables:
    """Table 2 over all records (initial category, direction of the chosen path); with rules,
    Table 3 over the records kept after refinement (their initial category, rule direction)."""
    c2, d2 = Counter(), Counter()
    for r in records:
        c2[r["category"]] += 1
        ini = r.get("initial")
        if ini and ini.get("direction") in ("forward", "backward"):
            d2[(r["category"], ini["direction"])] += 1
    out = Tables([_kind_table("Table 2: initial mapping of entities and predicates", c2, d2,
                              ENTITY_ROWS_TRIPLES, "Total")])
    if refined:
        c3, d3 = Counter(), Counter()
        for r in records:
            if not r.get("kept"):
                continue
            c3[r["category"]] += 1
            rule = (r.get("mapping") or {}).get("rule") or [{}]
            d3[(r["category"], rule[0].get("direction"))] += 1
        out.tables.append(_kind_table("Table 3: after candidate refinement (rules)", c3, d3,
                                      ENTITY_ROWS_TRIPLES, "Total kept"))
    agreement = Counter(r.get("agreement", "not migrated") for r in records)
    out.tables.append(MigrationTable("Answer agreement on the target", ["agreement", "items"],
                            [[k, agreement[k]] for k in sorted(agreement)]))
    return out


def sparql_tables(records: Sequence[dict], evidence: Sequence[Any]) -> Tables:
    """Table 2 over the evidence pairs of every source predicate; the mapping chosen per
    predicate; and the items by agreement / failure category (the refined result)."""
    c, d = Counter(), Counter()
    for ev in evidence:
        c.update(ev.categories)
        d.update(ev.directions)
    t2 = _kind_table("Table 2: predicate evidence pairs by path kind", c, d, ENTITY_ROWS_PAIRS, "Total pairs")
    tp = MigrationTable("Predicate mappings", ["source predicate", "target", "direction", "support", "kinds"])
    used: dict[str, dict] = {}
    for r in records:
        for p in r["predicates"]:
            used.setdefault(p["source"], p)
    for src in sorted(used):
        p = used[src]
        if "rule" in p:
            rule = p["rule"][0]
            tgt = " | ".join(rule["targets"]) + (f" [{rule['constraint_on']} a {rule['constraint']}]"
                                                 if rule.get("constraint") else "")
            tp.rows.append([src, tgt, rule["direction"], "rule", ""])
        elif "path" in p:
            tgt = p["path"]
            if p.get("constraint"):
                tgt += f" [{p['constraint_on']} {'not ' if p.get('negated') else ''}a {p['constraint']}]"
            if p.get("scale") is not None:
                tgt += f" [x {p['scale']:g}]"
            support = f"{p['support']}/{p['of']}"
            if p.get("precision") is not None and p["precision"] < 1:
                support += f" p={p['precision']:.2f}"
            tp.rows.append([src, tgt, p["direction"], support, ",".join(sorted(p["kinds"]))])
        else:
            tp.rows.append([src, "-", "-", "0", p.get("unmapped", "")])
    cat = Counter(r["category"] for r in records)
    order = ["exact", "partial", "superset", "empty", "unverified", "unmapped-entity", "unmapped-predicate", "failed"]
    t3 = MigrationTable("Table 3: migrated queries by answer agreement on the target", ["category", "items"],
               [[k, cat[k]] for k in order if cat[k]] + [["Total", sum(cat.values())]])
    return Tables([t2, tp, t3])
