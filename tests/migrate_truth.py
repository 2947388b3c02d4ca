"""The truth of a migrated item on a derived KG pair: the source answers with every IRI
renamed as the derivation renamed it, and the values of a unit-changed predicate scaled."""

from __future__ import annotations

from kgqa.make.migrate.agreement import MATCHING
from kgqa.make.migrate.scale import object_vars, scale_answer, scaled_columns
from kgqa.model import IRI, TableAnswer, answer_items
from kgqa.sparql.analyzer import analyze


def renamer(spec: dict):
    rename = sorted(spec.get("rename", {}).items(), key=lambda kv: -len(kv[0]))

    def ren(iri: str) -> str:
        for a, b in rename:
            if iri.startswith(a):
                return b + iri[len(a):]
        return iri
    return ren


def true_answer(spec: dict, query: str, answer):
    """The answer the migrated query must return on the target."""
    if not isinstance(answer, TableAnswer):
        return answer
    ren = renamer(spec)
    rows = tuple(tuple(IRI(ren(c.value)) if isinstance(c, IRI) else c for c in row) for row in answer.rows)
    out = TableAnswer(answer.variables, rows)
    for p, (_, factor) in spec.get("unit_change", {}).items():
        names = object_vars(analyze(query).triples, p)
        if names:
            out, _ = scale_answer(out, scaled_columns(query, names), factor)
    return out


def same(a, b) -> bool:
    return answer_items(a, MATCHING, "tuples") == answer_items(b, MATCHING, "tuples")
