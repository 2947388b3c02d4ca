"""Paraphrase robustness: the rank curve of Su et al. (EMNLP 2016, GraphQuestions, sec. 7.4,
Figure 6(d)).

Definition (the paper: "For each system, we rank, in descending order, all the paraphrases
derived from the same graph query by their F1 score achieved by the system, and then compute
the average F1 score of each rank"; the authors' ``evaluate.py`` does exactly this with the
group key ``qid // 10**6``):

* the questions are partitioned into paraphrase groups by a group key (GraphQuestions:
  :func:`graphquestions_group`; or a template id, or any dataset field);
* each group's per-question scores (usually F1) are sorted in descending order, so ``s_g(k)``
  is the ``k``-th best score of group ``g`` (ties keep their values; order among equal scores
  is irrelevant);
* ``mean@k`` is the mean of ``s_g(k)`` over the groups with at least ``k`` members, and
  ``n_groups`` counts those groups; ranks run from 1 to the largest group size.

Ratio to rank 1 (the paper reports e.g. "on the fourth-ranked paraphrases, the F1 score of
SEMPRE ... [is] only 37.65% ... of their score on the top-1 paraphrases"):

* ``ratio="paper"`` (default) reads both numbers off the plotted curve:
  ``ratio(k) = mean@k / mean@1``, where ``mean@1`` is over *all* groups -- the quantity the
  paper's percentages are computed from;
* ``ratio="same_groups"`` compares like with like: ``ratio(k) = mean@k / mean_{g : |g| >= k}
  s_g(1)``, the rank-1 mean over the same groups that define ``mean@k``; it differs from the
  paper's when small groups have different rank-1 scores from large ones.

A ratio whose denominator is 0 is NaN. Questions with no group key raise ``ValueError`` by
default (``ungrouped="error"``); ``ungrouped="singleton"`` makes each its own group and
``ungrouped="skip"`` leaves them out -- both choices are explicit, never silent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Hashable, Mapping

if TYPE_CHECKING:  # NumPy through kgqa.lazy in the one function that computes with it
    import numpy as np

from kgqa import lazy
from kgqa.analyze.characteristics import PARAPHRASE_KEYS, headline_measure, per_question_scores
from kgqa.score.evaluate import Evaluation

__all__ = ["RankPoint", "rank_curve", "ParaphraseTable", "paraphrase_key", "paraphrase_table", "paraphrase_groups", "graphquestions_group"]


@dataclass(frozen=True)
class RankPoint:
    """Mean score of the ``rank``-th best paraphrase over the ``n_groups`` groups with at least
    ``rank`` members, and its ratio to rank 1 (definition chosen by ``rank_curve(ratio=...)``)."""

    rank: int
    mean: float
    n_groups: int
    ratio_to_rank1: float


def graphquestions_group(qid: Hashable) -> int:
    """GraphQuestions paraphrase group of a question id: ``int(qid) // 10**6``, as in the
    dataset's own ``evaluate.py``. The ids encode graph query, sentence-level paraphrase
    (hundreds) and entity-level paraphrase (units): 252000000, 252000001, 252000102 are all
    paraphrases of graph query 252."""
    try:
        return int(str(qid).strip()) // 10**6
    except ValueError:
        raise ValueError(f"GraphQuestions question id must be an integer, got {qid!r}") from None


def _group_of(groups: Mapping[Hashable, Hashable] | Callable[[Hashable], Hashable], qid: Hashable) -> Hashable | None:
    if callable(groups) and not isinstance(groups, Mapping):
        return groups(qid)
    return groups.get(qid)


def paraphrase_groups(
    scores: Mapping[Hashable, float],
    groups: Mapping[Hashable, Hashable] | Callable[[Hashable], Hashable],
    *,
    ungrouped: str = "error",
) -> dict[Hashable, list[float]]:
    """Group key -> that group's scores sorted in descending order. ``groups`` is a mapping
    question id -> group key or a function of the id (e.g. :func:`graphquestions_group`)."""
    if ungrouped not in ("error", "singleton", "skip"):
        raise ValueError(f"ungrouped must be 'error', 'singleton' or 'skip', got {ungrouped!r}")
    out: dict[Hashable, list[float]] = {}
    missing: list[Hashable] = []
    for qid, score in scores.items():
        s = float(score)
        if not math.isfinite(s):
            raise ValueError(f"question {qid!r}: score must be a finite number, got {score!r}")
        g = _group_of(groups, qid)
        if g is None:
            if ungrouped == "error":
                missing.append(qid)
                continue
            if ungrouped == "skip":
                continue
            g = ("(singleton)", qid)
        out.setdefault(g, []).append(s)
    if missing:
        shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise ValueError(
            f"{len(missing)} question(s) have no paraphrase group: {shown}; "
            "pass ungrouped='singleton' or ungrouped='skip' to decide explicitly"
        )
    for values in out.values():
        values.sort(reverse=True)
    return out


def rank_curve(
    scores: Mapping[Hashable, float],
    groups: Mapping[Hashable, Hashable] | Callable[[Hashable], Hashable],
    *,
    ratio: str = "paper",
    ungrouped: str = "error",
    max_rank: int | None = None,
) -> list[RankPoint]:
    """The paraphrase rank curve (see the module docstring): one :class:`RankPoint` per rank
    1..(largest group size, or ``max_rank``). ``ratio`` is ``"paper"`` (``mean@k / mean@1``,
    Su et al.) or ``"same_groups"`` (``mean@k`` over the rank-1 mean of the same groups)."""
    np = lazy.numpy()
    if ratio not in ("paper", "same_groups"):
        raise ValueError(f"ratio must be 'paper' or 'same_groups', got {ratio!r}")
    if max_rank is not None and max_rank < 1:
        raise ValueError(f"max_rank must be at least 1, got {max_rank!r}")
    grouped = paraphrase_groups(scores, groups, ungrouped=ungrouped)
    if not grouped:
        return []
    sizes = np.array([len(v) for v in grouped.values()])
    depth = int(sizes.max()) if max_rank is None else min(int(sizes.max()), int(max_rank))
    # matrix groups x ranks, NaN where a group has fewer members
    table = np.full((len(grouped), depth), np.nan)
    for i, values in enumerate(grouped.values()):
        k = min(len(values), depth)
        table[i, :k] = values[:k]
    top = table[:, 0]
    mean1 = float(top.mean())
    points: list[RankPoint] = []
    for k in range(depth):
        present = ~np.isnan(table[:, k])
        n = int(present.sum())
        mean_k = float(table[present, k].mean())
        denominator = mean1 if ratio == "paper" else float(top[present].mean())
        r = mean_k / denominator if denominator != 0 else float("nan")
        points.append(RankPoint(k + 1, mean_k, n, r))
    return points


# --------------------------------------------------------------------------- a table of rank curves


@dataclass(frozen=True)
class ParaphraseTable:
    """Paraphrase rank curves of ``measure`` per run, grouped by ``group_key``
    (:func:`kgqa.analyze.paraphrase.rank_curve`, ratio to rank 1 as in Su et al.)."""

    group_key: str
    measure: str
    runs: list[str]
    curves: dict[str, list[RankPoint]]
    ungrouped: dict[str, int] = field(default_factory=dict)


def paraphrase_key(evals: Sequence[Evaluation]) -> str | None:
    """The first of :data:`PARAPHRASE_KEYS` that some question has in ``details["groups"]``."""
    for k in PARAPHRASE_KEYS:
        if any(k in ((q.details or {}).get("groups") or {}) for e in evals for q in e.questions):
            return k
    return None


def paraphrase_table(
    evals: Sequence[Evaluation],
    *,
    measure: str | None = None,
    group_key: str | None = None,
    max_rank: int | None = None,
    ratio: str = "paper",
) -> ParaphraseTable | None:
    """Rank curves per run over the groups ``details["groups"][group_key]`` (default
    :func:`paraphrase_key`; None when the dataset has no such key). Questions without the key
    are left out and counted in ``ungrouped``."""
    group_key = group_key or paraphrase_key(evals)
    if group_key is None:
        return None
    measure = measure or headline_measure(evals)
    curves: dict[str, list[RankPoint]] = {}
    ungrouped: dict[str, int] = {}
    for e in evals:
        groups = {q.id: ((q.details or {}).get("groups") or {}).get(group_key) for q in e.questions}
        scores = per_question_scores(e, measure)
        ungrouped[e.run] = sum(1 for qid in scores if groups.get(qid) is None)
        curves[e.run] = rank_curve(scores, groups, ratio=ratio, ungrouped="skip", max_rank=max_rank)
    return ParaphraseTable(group_key, measure, [e.run for e in evals], curves, ungrouped)
