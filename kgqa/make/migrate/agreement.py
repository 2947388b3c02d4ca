"""Answer agreement between the mapped source answer and what the migrated query returns on
the target KG: ``exact``, ``partial`` (with F1 over answer rows; 0.0 when disjoint), ``superset`` (every mapped source row and
more), ``empty``
(the target returns nothing although the source answer is not empty), ``failed`` (the query
could not be built or did not run; with the reason), or ``unverified`` (no mapped source answer
to compare with, e.g. the answer entity has no target)."""

from __future__ import annotations

from dataclasses import dataclass

from kgqa.model import Answer, BooleanAnswer, IRI, Outcome, Status, TableAnswer, answer_items, is_empty
from kgqa.model.terms import TermMatching

MATCHING = TermMatching()  # typed: numbers and dates by value, IRIs percent-decoded
LABELS = ("exact", "partial", "superset", "empty", "failed", "unverified")
#: labels of items whose migrated query runs but whose answers differ from the mapped source
#: answers (or could not be compared): written apart from the verified output
UNVERIFIED = ("partial", "superset", "empty", "unverified")


@dataclass(frozen=True)
class Agreement:
    label: str
    f1: float | None = None
    reason: str = ""

    def to_json(self) -> dict:
        d = {"agreement": self.label}
        if self.f1 is not None:
            d["f1"] = round(self.f1, 6)
        if self.reason:
            d["reason"] = self.reason
        return d


def map_answer(answer: Answer | None, entities: dict[str, str | None]) -> tuple[Answer | None, list[str]]:
    """The source answer with its IRIs replaced by their targets (IRIs absent from
    ``entities`` are kept); and the IRIs that have no target (their rows are dropped)."""
    if not isinstance(answer, TableAnswer):
        return answer, []
    rows, lost = [], []
    for row in answer.rows:
        out, ok = [], True
        for c in row:
            if isinstance(c, IRI) and c.value in entities:
                t = entities[c.value]
                if t is None:
                    lost.append(c.value)
                    ok = False
                    break
                out.append(IRI(t))
            else:
                out.append(c)
        if ok:
            rows.append(tuple(out))
    return TableAnswer(answer.variables, tuple(rows)), sorted(set(lost))


def compare(expected: Answer | None, outcome: Outcome, view: str = "tuples") -> Agreement:
    if outcome.status is not Status.OK:
        return Agreement("failed", None, f"{outcome.status.value}: {outcome.message}".strip())
    got = outcome.answer
    if expected is None:
        return Agreement("unverified", None, "no mapped source answer to compare with")
    if isinstance(expected, BooleanAnswer) or isinstance(got, BooleanAnswer):
        same = isinstance(expected, BooleanAnswer) and isinstance(got, BooleanAnswer) and expected.value == got.value
        return Agreement("exact", 1.0) if same else Agreement("partial", 0.0, "boolean answer differs")
    if is_empty(got):
        if is_empty(expected):
            return Agreement("exact", 1.0, "both empty")
        return Agreement("empty", 0.0, f"the migrated query returns no rows on the target "
                                       f"(the mapped source answer has {len(expected.rows)})")
    e, g = answer_items(expected, MATCHING, view), answer_items(got, MATCHING, view)  # type: ignore[arg-type]
    if e == g:
        return Agreement("exact", 1.0)
    tp = len(e & g)
    p = tp / len(g) if g else 0.0
    r = tp / len(e) if e else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    reason = f"{tp} of {len(e)} source rows found, {len(g) - tp} extra"
    if not e:
        reason = "the mapped source answer is empty"
    elif tp == len(e):
        return Agreement("superset", f1, f"every source row found, and {len(g) - tp} extra")
    return Agreement("partial", f1, reason)
