"""Answer measures: precision, recall, F1, exact match, accuracy, QALD macro F1, Hits@k,
MRR and coverage, each with its edge-case rule as an explicit parameter."""

from __future__ import annotations

import math
from collections.abc import Sequence

from kgqa.model import Item, Status
from kgqa.score.measures import Columns, Inputs, ItemContext, MeasureDef, Param, register
from kgqa.score.rules import DEFINED, RULES, CountsColumn, micro, prf_column

RULE = Param("rule", "kgqa", tuple(RULES), "per-question edge-case rule (see kgqa.score.rules)")
AGG = Param("agg", "macro", ("macro", "micro"), "macro: mean of per-question values; micro: from summed counts")


def _prf(ctx: ItemContext, rule: str) -> tuple[float, float, float] | None:
    if ctx.failed:
        return 0.0, 0.0, 0.0
    return RULES[rule](ctx.counts)


_FAILED = (0.0, 0.0, 0.0)
_CHUNK = 1 << 16


def prf_columns(q: Columns, rule: str) -> tuple[list, list, list]:
    """:func:`_prf` of every question of ``q`` as three columns (P, R, F; None where the rule
    leaves a question undefined), computed once per rule for the measures sharing ``q``."""
    cols = q.shared.get(("prf", rule))
    if cols is None and q.counts.__class__ is CountsColumn and not any(q.failed):  # a column at a time
        cols = prf_column(q.counts, rule)
        if cols is not None:
            q.shared[("prf", rule)] = cols
    if cols is None:
        fn = RULES[rule]
        cols = ([], [], [])
        for at in range(0, len(q), _CHUNK):  # a chunk of (P, R, F) tuples at a time: no tuple kept
            triples = [_FAILED if f else fn(c) for c, f in zip(q.counts[at:at + _CHUNK], q.failed[at:at + _CHUNK])]
            parts = [[None if v is None else v[i] for v in triples] for i in range(3)] if None in triples \
                else zip(*triples)
            for col, part in zip(cols, parts):
                col += part
        q.shared[("prf", rule)] = cols
    return cols


def _component(index: int):
    def item(ctx: ItemContext, rule: str, agg: str) -> float | None:
        if agg == "micro":
            return None
        v = _prf(ctx, rule)
        return None if v is None else v[index]

    def aggregate(folds: Sequence[tuple | None], values: Sequence[float | None], rule: str, agg: str) -> float:
        if agg == "micro":
            # failed items contribute as an empty system answer (their counts already are)
            if rule in DEFINED:  # no question is undefined under the rule: none is left out
                return micro([c for c, _ in folds], rule)[index]
            return micro([c for c, failed in folds if RULES[rule](c) is not None or failed], rule)[index]
        vals = [v for v in values if v is not None]
        return math.fsum(vals) / len(vals) if vals else float("nan")

    def vector(q: Columns, rule: str, agg: str) -> tuple[list, list]:
        if agg == "micro":
            return [None] * len(q), list(zip(q.counts, q.failed))
        return prf_columns(q, rule)[index], [None] * len(q)

    return item, aggregate, vector


def _counts_fold(ctx: ItemContext, rule: str, agg: str) -> tuple | None:
    """What the micro average reads of a question: its counts and whether it failed."""
    return (ctx.counts, ctx.failed) if agg == "micro" else None


for _i, (_name, _what) in enumerate((("P", "precision"), ("R", "recall"), ("F1", "F1"))):
    _item, _agg, _vector = _component(_i)
    register(MeasureDef(
        name=_name,
        definition=(
            f"Answer {_what} over the compared answer collections (the profile's view: flattened "
            f"values or rows). agg=macro: mean of per-question {_what}; agg=micro: {_what} of the "
            "summed TP/FP/FN. Edge cases by `rule`: kgqa (both empty 1, one empty 0), gerbil "
            "(TP=0: 1 if FP=FN=0 else 0), gerbil-qald (empty system: P=1,R=0), qald (empty gold: 1 "
            "iff system empty; empty system: P=1,R=0), pytrec (0 whenever a denominator is 0), "
            "graphquestions (lists; empty gold undefined; empty system P=1,R=0). A failed query "
            "scores 0 when the profile says failures=zero."
        ),
        convention="answer",
        item=_item,
        aggregate=_agg,
        params=(RULE, AGG),
        fold=_counts_fold,
        vector=_vector,
    ))


def _qald_f1_item(ctx: ItemContext, rule: str) -> float | None:
    return None  # corpus-level only


def _qald_f1_agg(folds: Sequence[tuple | None], values: Sequence[float | None], rule: str) -> float:
    return f1_of_means(folds)


def f1_of_means(folds: Sequence[tuple | None]) -> float:
    """The F1 of the mean P and mean R over the questions' (P, R, ...) folds (None: left out);
    0.0 where both means are 0 (GERBIL prints NaN there); NaN without a question."""
    per = [v for v in folds if v is not None]  # per-question (P, R, F) by the rule
    if not per:
        return float("nan")
    p = math.fsum(v[0] for v in per) / len(per)
    r = math.fsum(v[1] for v in per) / len(per)
    # GERBIL prints NaN when P+R = 0; kgqa reports 0.0 (the F of a system that got nothing)
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


register(MeasureDef(
    name="QALDF1",
    definition=(
        "QALD macro F1: the F1 of the macro-averaged precision and recall, F = 2·mean(P)·mean(R) / "
        "(mean(P)+mean(R)), with per-question P and R from `rule` (default gerbil-qald: an empty "
        "system answer counts as P=1, R=0). 0/0 gives 0.0 (GERBIL prints NaN)."
    ),
    convention="answer",
    item=_qald_f1_item,
    aggregate=_qald_f1_agg,
    params=(Param("rule", "gerbil-qald", tuple(RULES), "per-question P/R rule"),),
    fold=_prf,
    vector=lambda q, rule: ([None] * len(q), [None if p is None else (p, r, f) for p, r, f in zip(*prf_columns(q, rule))]),
))


def _em(ctx: ItemContext) -> float:
    if ctx.failed:
        return 0.0
    return 1.0 if ctx.gold_items == ctx.sys_items else 0.0


def _em_vector(q: Columns) -> tuple[list, list]:
    return [0.0 if f else 1.0 if e else 0.0 for f, e in zip(q.failed, q.equal)], [None] * len(q)


register(MeasureDef(
    name="AnswerEM",
    definition=(
        "Answer exact match: 1 if the system's answer collection equals the gold one under the "
        "profile's term matching and view (both empty counts as equal; a boolean must match the "
        "boolean), else 0; a failed query scores 0."
    ),
    convention="answer",
    item=lambda ctx: _em(ctx),
    binary=True,
    vector=_em_vector,
))

register(MeasureDef(
    name="Accuracy",
    definition=(
        "Accuracy as simple-QA papers report it: the fraction of questions answered exactly right "
        "(per question identical to AnswerEM)."
    ),
    convention="answer",
    item=lambda ctx: _em(ctx),
    binary=True,
    vector=_em_vector,
))


def _hits(ctx: ItemContext, k: int) -> float | None:
    if ctx.failed:
        return 0.0
    if not ctx.gold_values:
        return None  # nothing to hit: undefined, left out of the mean
    return 1.0 if any(x in ctx.gold_values for x in ctx.ranked[:k]) else 0.0


register(MeasureDef(
    name="Hits",
    definition=(
        "Hits@k: 1 if any of the system's first k ranked answers is in the gold answer, else 0. "
        "The ranking is the run's `ranked` list, else the order of the answer rows. Undefined (left "
        "out of the mean) for an empty gold answer."
    ),
    convention="ranking",
    item=_hits,
    params=(Param("k", 1, None, "cut-off"),),
    binary=True,
    inputs=Inputs(ranked=True),
))


def _rr(ctx: ItemContext) -> float | None:
    if ctx.failed:
        return 0.0
    if not ctx.gold_values:
        return None
    for i, x in enumerate(ctx.ranked, 1):
        if x in ctx.gold_values:
            return 1.0 / i
    return 0.0


register(MeasureDef(
    name="MRR",
    definition=(
        "Mean reciprocal rank: 1/rank of the first ranked system answer found in the gold answer "
        "(0 if none), averaged over questions with a non-empty gold answer."
    ),
    convention="ranking",
    item=_rr,
    inputs=Inputs(ranked=True),
))


def _coverage(ctx: ItemContext) -> float:
    if ctx.outcome.status is not Status.OK:
        return 0.0
    return 0.0 if ctx.outcome.label == "empty" else 1.0


register(MeasureDef(
    name="Coverage",
    definition=(
        "Coverage: the fraction of questions the system answered (an OK outcome with a non-empty "
        "answer; a boolean counts as answered)."
    ),
    convention="answer",
    item=_coverage,
    binary=True,
    # an OK outcome with a non-empty answer is exactly the label "ok"
    vector=lambda q: ([1.0 if label == "ok" else 0.0 for label in q.labels], [None] * len(q)),
))


# --------------------------------------------------------------------------- Text2SPARQL ndcg

from kgqa.score import qrels as _qrels  # noqa: E402


def _flagged(ctx: ItemContext) -> bool:
    return item_flagged(ctx.item)


def item_flagged(item: Item) -> bool:
    features = item.metadata.get("features")
    return features is not None and _qrels.order_matters(features)


def _grades(ctx: ItemContext) -> dict:
    """Gold grades: the stored qrels bag of the question's language when the gold answer is
    the stored one, else grade 1 for every relevant gold item."""
    bag = ctx.item.qrels_bag() if ctx.gold_outcome is None else None
    if bag is not None:
        return {k: g for k, g in bag.items() if isinstance(g, (int, float))}
    return {k: 1 for k in ctx.gold_items}


def _ndcg_value(ctx: ItemContext, rank: str) -> float:
    if ctx.failed:
        return 0.0
    if rank == "trec":
        ranking = _qrels.trec_ranking(ctx.sys_items)
    else:
        ranking = list(dict.fromkeys(ctx.ranked)) or _qrels.trec_ranking(ctx.sys_items)
    return _qrels.ndcg(ranking, _grades(ctx))


ORDER = Param("order", "flagged", ("flagged", "all"),
              "flagged: only questions whose features list RESULT_ORDER_MATTERS (else undefined); all: every question")
RANK = Param("rank", "trec", ("trec", "system"),
             "trec: every answer has the same score, ties broken by value descending (what the "
             "Text2SPARQL client gets from pytrec_eval); system: the order of the system's answer")


def _ndcg_item(ctx: ItemContext, order: str, rank: str) -> float | None:
    if order == "flagged" and not _flagged(ctx):
        return None
    return _ndcg_value(ctx, rank)


register(MeasureDef(
    name="NDCG",
    definition=(
        "trec_eval / pytrec_eval ndcg (no cut-off) of the system's answer values against the gold "
        "grades (stored Text2SPARQL bag grades, else 1 per gold value): DCG = sum gain/log2(rank+1), "
        "divided by the ideal DCG (0 when there is nothing relevant). rank=trec (default): every value "
        "has the same score, so trec_eval ranks them by value in descending byte order and the system's "
        "order is ignored, as in the Text2SPARQL'25 client; rank=system: the system's answer order. "
        "order=flagged (default): defined only for questions whose features list RESULT_ORDER_MATTERS, "
        "as the client scores them. A failed query scores 0 when the profile says failures=zero."
    ),
    convention="answer",
    item=_ndcg_item,
    params=(ORDER, RANK),
    # undefined on every question not flagged (order=flagged): only those are scored one by one
    vector=lambda q, order, rank: ([None] * len(q), [None] * len(q)),
    gate=item_flagged,
    vectorized=lambda order, rank: order == "flagged",
))


def _f_ndcg_fold(ctx: ItemContext, rule: str, rank: str) -> tuple:
    """(flagged, value): ndcg for a question flagged RESULT_ORDER_MATTERS, else F1 by the rule
    (None where the rule leaves it undefined); a flagged question's fold also carries its
    language and its item's languages (what :func:`_one_language` reads)."""
    if _flagged(ctx):
        meta = ctx.item.metadata if ctx.item is not None else {}
        return True, _ndcg_value(ctx, rank), meta.get("language"), meta.get("languages", ())
    prf = _prf(ctx, rule)
    return False, None if prf is None else prf[2]


def _one_language(folds: Sequence[tuple]) -> bool:
    """True when the questions are some of the languages of per-language items (``--lang en``
    of an en+es dataset): a per-language figure, not the all-language one. Read from the
    flagged questions' folds (the others may come from the vector form, without a language)."""
    scored = {f[2] for f in folds if len(f) > 2}
    every = {lang for f in folds if len(f) > 3 for lang in f[3]}
    return bool(scored) and None not in scored and scored < every


def _f_ndcg_agg(folds: Sequence[tuple], values: Sequence[float | None], rule: str, rank: str) -> float:
    # every flagged question's ndcg and every other question's F1 where defined, in order
    per: list[float] = [f[1] for f in folds if f[0] or f[1] is not None]
    flagged: list[float] = [f[1] for f in folds if f[0]]
    # the client's results dict also holds its "average" entry, carrying mean ndcg (the
    # all-language figure); the leaderboard's per-language figure is the plain mean
    if flagged and not _one_language(folds):
        per.append(math.fsum(flagged) / len(flagged))
    return math.fsum(per) / len(per) if per else float("nan")


register(MeasureDef(
    name="FNDCG",
    definition=(
        "Text2SPARQL'25 set_F_ndcg (text2sparql-client utils/order_matters.py combine_metrics): the mean "
        "of ndcg (rank as in NDCG) on questions flagged RESULT_ORDER_MATTERS and F1 (rule, default "
        "pytrec) on the others, where the client's mean also takes in its 'average' entry, i.e. the mean "
        "ndcg of the flagged questions, as one more value (n+1 values). Without flagged questions it is "
        "the mean F1 (the client then omits it). Scored on some of the languages of a per-language "
        "dataset (--lang en of DB25) it is the plain mean over those questions, as the official "
        "per-language figures (set_F_ndcg-en) are. Corpus-level only."
    ),
    convention="answer",
    item=lambda ctx, rule, rank: None,
    aggregate=_f_ndcg_agg,
    params=(Param("rule", "pytrec", tuple(RULES), "per-question F1 rule"), RANK),
    fold=_f_ndcg_fold,
    # a question not flagged keeps (False, F1 by the rule); the flagged ones are scored one by one
    # (their folds carry the language: flags are per question, so every scored language has them)
    vector=lambda q, rule, rank: ([None] * len(q), [(False, f) for f in prf_columns(q, rule)[2]]),
    gate=item_flagged,
))
