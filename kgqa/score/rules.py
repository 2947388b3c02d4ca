"""Per-question precision / recall / F1 under each convention's edge-case rules.

Every rule is a pure function of the counts of one question (see :class:`Counts`) and returns
``(P, R, F)``, or None when the convention leaves the question undefined (GraphQuestions'
script raises on an empty gold list). The rules are data-selected by profiles and named in
score signatures; the README's measure table documents each one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple


class Counts(NamedTuple):
    """What one question's comparison produced.

    ``tp``/``fp``/``fn`` are set counts (|S∩G|, |S−G|, |G−S|). ``sys_size``/``gold_size`` are
    the sizes of the system and gold collections (for list views they count duplicates, and
    ``sys_hits`` counts system entries found in gold, ``gold_hits`` gold entries found in the
    system answer, as GraphQuestions' list-based script does). A named tuple: one is made per
    question, and a tuple is made several times faster than a frozen dataclass."""

    tp: int
    fp: int
    fn: int
    sys_size: int
    gold_size: int
    sys_hits: int
    gold_hits: int

    @classmethod
    def from_sets(cls, gold: frozenset, system: frozenset) -> "Counts":
        tp = len(gold & system)
        ns, ng = len(system), len(gold)
        return _new_tuple(cls, (tp, ns - tp, ng - tp, ns, ng, tp, tp))  # cls(...) without its __new__'s call

    @classmethod
    def from_lists(cls, gold: list, system: list) -> "Counts":
        g, s = set(gold), set(system)
        tp = len(g & s)
        return cls(
            tp, len(s) - tp, len(g) - tp, len(system), len(gold),
            sum(1 for x in system if x in g), sum(1 for x in gold if x in s),
        )


_new_tuple = tuple.__new__


class CountsColumn(Sequence):
    """The :class:`Counts` of questions compared as sets, held as three integer columns (|S∩G|,
    |S|, |G|) rather than one tuple per question: ``column[i]`` is the question's ``Counts``
    (``Counts.from_sets``' values), made when read. :func:`prf_column` reads the columns."""

    __slots__ = ("tp", "sys_size", "gold_size")

    def __init__(self, tp: Sequence[int], sys_size: Sequence[int], gold_size: Sequence[int]):
        self.tp, self.sys_size, self.gold_size = tp, sys_size, gold_size

    def __len__(self) -> int:
        return len(self.tp)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [_new_tuple(Counts, (t, s - t, g - t, s, g, t, t))
                    for t, s, g in zip(self.tp[i], self.sys_size[i], self.gold_size[i])]
        t, s, g = self.tp[i], self.sys_size[i], self.gold_size[i]
        return _new_tuple(Counts, (t, s - t, g - t, s, g, t, t))

    def __iter__(self) -> Iterator[Counts]:
        for t, s, g in zip(self.tp, self.sys_size, self.gold_size):
            yield _new_tuple(Counts, (t, s - t, g - t, s, g, t, t))

PRF = tuple[float, float, float]


def _f(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def _standard(c: Counts) -> PRF:
    p = c.tp / (c.tp + c.fp)
    r = c.tp / (c.tp + c.fn)
    return p, r, _f(p, r)


def kgqa_rule(c: Counts) -> PRF:
    """kgqa: both empty -> 1,1,1; exactly one empty -> 0,0,0; else standard P, R, F."""
    if c.gold_size == 0 and c.sys_size == 0:
        return 1.0, 1.0, 1.0
    if c.gold_size == 0 or c.sys_size == 0:
        return 0.0, 0.0, 0.0
    return _standard(c)


def gerbil_rule(c: Counts) -> PRF:
    """GERBIL FMeasureCalculator.calculateMeasures: TP=0 -> 1,1,1 if FP=FN=0 else 0,0,0;
    otherwise P=TP/(TP+FP), R=TP/(TP+FN), F=2PR/(P+R)."""
    if c.tp == 0:
        return (1.0, 1.0, 1.0) if c.fp == 0 and c.fn == 0 else (0.0, 0.0, 0.0)
    return _standard(c)


def gerbil_qald_rule(c: Counts) -> PRF:
    """GERBIL's "Macro F1 QALD" per-question values: an empty system answer to a non-empty
    gold gives P=1, R=0 (the system is taken to abstain, not to be wrong); everything else as
    :func:`gerbil_rule` (both empty stays 1,1,1)."""
    if c.sys_size == 0 and c.gold_size > 0:
        return 1.0, 0.0, 0.0
    return gerbil_rule(c)


def qald_rule(c: Counts) -> PRF:
    """QALD evaluation.rb: empty gold -> 1,1,1 only if the system answer is empty too, else
    0,0,0; empty system answer (non-empty gold) -> P=1, R=0, F=0; else standard (F=0 when
    P+R=0)."""
    if c.gold_size == 0:
        return (1.0, 1.0, 1.0) if c.sys_size == 0 else (0.0, 0.0, 0.0)
    if c.sys_size == 0:
        return 1.0, 0.0, 0.0
    return _standard(c)


def pytrec_rule(c: Counts) -> PRF:
    """trec_eval / pytrec_eval set_P, set_recall, set_F (beta=1): P = rel_ret/ret (0 if
    nothing retrieved), R = rel_ret/rel (0 if nothing relevant), F = 2PR/(P+R) (0 if P+R=0).
    Both empty scores 0: trec_eval has nothing to reward there."""
    p = c.tp / c.sys_size if c.sys_size else 0.0
    r = c.tp / c.gold_size if c.gold_size else 0.0
    return p, r, _f(p, r)


def graphquestions_rule(c: Counts) -> PRF | None:
    """GraphQuestions / WebQuestions evaluate.py computeF1 over answer *lists*: empty gold is
    undefined (the script raises); empty prediction -> P=1, R=0, F=0; else P = (#predicted
    entries found in gold)/len(predicted), R = (#gold entries found in predicted)/len(gold),
    F = 2PR/(P+R) (0 if P+R=0)."""
    if c.gold_size == 0:
        return None
    if c.sys_size == 0:
        return 1.0, 0.0, 0.0
    p = c.sys_hits / c.sys_size
    r = c.gold_hits / c.gold_size
    return p, r, _f(p, r)


RULES: dict[str, Callable[[Counts], PRF | None]] = {
    "kgqa": kgqa_rule,
    "gerbil": gerbil_rule,
    "gerbil-qald": gerbil_qald_rule,
    "qald": qald_rule,
    "pytrec": pytrec_rule,
    "graphquestions": graphquestions_rule,
}


def _pytrec_columns(tp: Sequence[int], ns: Sequence[int], ng: Sequence[int]) -> tuple[list, list, list]:
    p = [t / s if s else 0.0 for t, s in zip(tp, ns)]
    r = [t / g if g else 0.0 for t, g in zip(tp, ng)]
    return p, r, [2 * a * b / (a + b) if a + b > 0 else 0.0 for a, b in zip(p, r)]


#: rules computed a column at a time from (tp, |S|, |G|) columns, each value by the same
#: arithmetic as the rule (tests hold the two equal)
RULE_COLUMNS: dict[str, Callable[[Sequence[int], Sequence[int], Sequence[int]], tuple[list, list, list]]] = {
    "pytrec": _pytrec_columns,
}


def prf_column(counts: CountsColumn, rule: str) -> tuple[list, list, list] | None:
    """(P, R, F) columns of ``counts`` under ``rule`` computed a column at a time, or None when
    the rule has no column form (apply it question by question)."""
    fn = RULE_COLUMNS.get(rule)
    return fn(counts.tp, counts.sys_size, counts.gold_size) if fn is not None else None


#: the rules that give every question (P, R, F), never None
DEFINED = frozenset({"kgqa", "gerbil", "gerbil-qald", "qald", "pytrec"})


def micro(counts: list[Counts], rule: str) -> PRF:
    """Micro P/R/F: the rule applied to the summed counts (GERBIL calculateMicroFMeasure).
    With rule ``qald`` / ``kgqa`` / ``pytrec`` the sums go through the same function."""
    tot = Counts(
        sum(c.tp for c in counts), sum(c.fp for c in counts), sum(c.fn for c in counts),
        sum(c.sys_size for c in counts), sum(c.gold_size for c in counts),
        sum(c.sys_hits for c in counts), sum(c.gold_hits for c in counts),
    )
    out = RULES[rule](tot)
    return out if out is not None else (0.0, 0.0, 0.0)
