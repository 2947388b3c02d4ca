"""Breakdown of per-question scores by a question characteristic (number of edges, function,
answer cardinality, commonness bins, template id, language, any metadata key).

``breakdown(scores, keys)`` groups the scores by key and reports, per cell, the number of
questions ``n`` and the mean with a percentile bootstrap confidence interval
(:func:`kgqa.analyze.stats.bootstrap_ci`). Membership rules:

* a question whose key is a list/tuple/set belongs to every distinct key in it (so cells may
  overlap and their ``n`` may add up to more than the number of questions);
* a question absent from ``keys``, or whose key is ``None``, NaN, the string ``"(none)"`` or an
  empty list, goes to the cell ``"(none)"`` (``NONE``), which is always last; nothing is dropped;
* ids present in ``keys`` but not in ``scores`` are not part of the population and are ignored.

Numeric binning (``bins``): a list of increasing edges ``[e0, e1, ..., ek]`` gives the cells
``[e0, e1)``, ``[e1, e2)``, ..., ``[e(k-1), ek]`` (half-open like Su et al.'s commonness bins
``-40 <= c < -30``; the last bin is closed as in ``numpy.histogram``); values below ``e0`` go to
``(-inf, e0)`` and values above ``ek`` to ``(ek, inf)`` (those cells appear only when used). An
integer ``bins = q`` uses ``q`` quantile bins: edges ``numpy.quantile(values, [0, 1/q, ..., 1])``
over the keyed questions, with duplicate edges merged. A cell's ``key`` is then its label,
e.g. ``"[0.2, 0.4)"``; edges are printed with the fewest significant digits (at least 4) that
keep all edge labels distinct, while membership always uses the exact edges.

Ordering is deterministic: bins in increasing order; otherwise numeric keys numerically, then
strings lexicographically, then any other keys by ``repr``; ``"(none)"`` last.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Hashable, Mapping, Sequence

import numpy as np

from kgqa.analyze.characteristics import DEFAULT_BINS, headline_measure, per_question_scores, values_of
from kgqa.analyze.stats import bootstrap_ci
from kgqa.score.evaluate import Evaluation, require_items

__all__ = ["Cell", "NONE", "breakdown", "BreakdownTable", "breakdown_table", "bin_edges", "bin_labels", "assign_bin"]

NONE = "(none)"


@dataclass(frozen=True)
class Cell:
    """One group: its ``key`` (or bin label), question count ``n`` and mean score with a
    bootstrap CI ``[low, high]`` (NaN when ``ci=False``; degenerate when ``n == 1``)."""

    key: Hashable
    n: int
    mean: float
    low: float
    high: float


def _is_number(v: object) -> bool:
    return isinstance(v, (Real, np.number)) and not isinstance(v, (bool, np.bool_))


def _is_missing(v: object) -> bool:
    if isinstance(v, str):
        return v == NONE
    return v is None or (_is_number(v) and math.isnan(float(v)))


def _members(value: object) -> list[Hashable]:
    """The distinct, non-missing keys a question belongs to (in first-seen order)."""
    items = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
    if isinstance(value, (set, frozenset)):
        items = sorted(items, key=_sort_key)
    out: list[Hashable] = []
    for v in items:
        if _is_missing(v):
            continue
        if v not in out:
            out.append(v)
    return out


def _sort_key(k: Hashable) -> tuple:
    if k == NONE and isinstance(k, str):
        return (3, 0, "")
    if isinstance(k, (bool, np.bool_)):
        return (0, int(k), "")
    if _is_number(k):
        return (0, float(k), "")
    if isinstance(k, str):
        return (1, 0, k)
    return (2, 0, repr(k))


def _fmt(x: float, digits: int) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.{digits}g}"


def bin_labels(edges: Sequence[float]) -> list[str]:
    """Labels ``"[e0, e1)"``, ..., ``"[e(k-1), ek]"`` for consecutive edges (last bin closed)."""
    e = [float(v) for v in edges]
    if len(e) < 2:
        raise ValueError(f"bins need at least two edges, got {list(edges)!r}")
    for digits in range(4, 18):
        texts = [_fmt(v, digits) for v in e]
        if len(set(texts)) == len(texts):
            break
    labels = [f"[{texts[i]}, {texts[i + 1]})" for i in range(len(e) - 2)]
    labels.append(f"[{texts[-2]}, {texts[-1]}]")
    return labels


def _outside_labels(edges: Sequence[float]) -> tuple[str, str]:
    for digits in range(4, 18):
        texts = [_fmt(float(v), digits) for v in edges]
        if len(set(texts)) == len(texts):
            break
    return f"(-inf, {texts[0]})", f"({texts[-1]}, inf)"


def bin_edges(values: Sequence[float], bins: int | Sequence[float]) -> list[float]:
    """Explicit edges (validated: at least two, finite, strictly increasing) or, for an
    integer ``q``, the ``q``-quantile edges of ``values`` with duplicates merged."""
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if bins < 1:
            raise ValueError(f"number of quantile bins must be at least 1, got {bins}")
        v = np.asarray(values, dtype=np.float64)
        if v.size == 0:
            return []
        edges = np.unique(np.quantile(v, np.linspace(0.0, 1.0, int(bins) + 1)))
        if edges.size == 1:  # all values equal: one closed bin [v, v]
            return [float(edges[0]), float(edges[0])]
        return [float(x) for x in edges]
    edges_list = [float(x) for x in bins]
    if len(edges_list) < 2:
        raise ValueError(f"bins need at least two edges, got {list(bins)!r}")
    if not all(math.isfinite(x) for x in edges_list):
        raise ValueError(f"bin edges must be finite numbers, got {edges_list!r}")
    if any(b <= a for a, b in zip(edges_list, edges_list[1:])):
        raise ValueError(f"bin edges must be strictly increasing, got {edges_list!r}")
    return edges_list


def assign_bin(value: float, edges: Sequence[float]) -> int:
    """Index of the bin holding ``value``: ``-1`` below ``e0``, ``len(edges) - 1`` above the
    last edge, else ``i`` for ``[e_i, e_(i+1))`` (the last bin closed)."""
    if value < edges[0]:
        return -1
    if value > edges[-1]:
        return len(edges) - 1
    if value == edges[-1]:
        return len(edges) - 2
    return int(np.searchsorted(np.asarray(edges), value, side="right")) - 1


def breakdown(
    scores: Mapping[Hashable, float],
    keys: Mapping[Hashable, Hashable | list],
    *,
    bins: int | Sequence[float] | None = None,
    ci: bool = True,
    seed: int = 0,
    confidence: float = 0.95,
    resamples: int = 10_000,
) -> list[Cell]:
    """Group ``scores`` (question id -> score) by ``keys`` (question id -> key or list of keys)
    and return one :class:`Cell` per key with ``n``, the mean and a ``confidence`` percentile
    bootstrap CI (``resamples`` resamples, ``seed``); see the module docstring for membership,
    binning, labels and ordering. Non-numeric keys with ``bins`` raise ``ValueError`` naming
    the question."""
    groups: dict[Hashable, list[float]] = {}
    none: list[float] = []
    members: dict[Hashable, list[Hashable]] = {}
    for qid, score in scores.items():
        m = _members(keys.get(qid)) if qid in keys else []
        if not m:
            none.append(score)
        members[qid] = m

    order: list[Hashable]
    if bins is not None:
        for qid, m in members.items():
            for v in m:
                if not _is_number(v):
                    raise ValueError(
                        f"question {qid!r}: binning needs numeric keys, got {v!r} ({type(v).__name__})"
                    )
        values = [float(v) for m in members.values() for v in m]
        edges = bin_edges(values, bins)
        if edges:
            labels = bin_labels(edges)
            below, above = _outside_labels(edges)
            slots = [below] + labels + [above]  # slot i+1 holds bin index i
            for qid, m in members.items():
                seen: set[str] = set()
                for v in m:
                    label = slots[assign_bin(float(v), edges) + 1]
                    if label not in seen:
                        seen.add(label)
                        groups.setdefault(label, []).append(scores[qid])
            order = [s for s in slots if s in groups]
        else:
            order = []
    else:
        for qid, m in members.items():
            for v in m:
                groups.setdefault(v, []).append(scores[qid])
        order = sorted(groups, key=_sort_key)

    cells = [_cell(k, groups[k], ci, seed, confidence, resamples) for k in order]
    if none:
        cells.append(_cell(NONE, none, ci, seed, confidence, resamples))
    return cells


def _cell(key: Hashable, values: list[float], ci: bool, seed: int, confidence: float, resamples: int) -> Cell:
    if ci:
        c = bootstrap_ci(values, confidence=confidence, resamples=resamples, seed=seed)
        return Cell(key, len(values), c.mean, c.low, c.high)
    arr = np.asarray(values, dtype=np.float64)
    nan = float("nan")
    return Cell(key, len(values), float(arr.mean()) if arr.size else nan, nan, nan)


# --------------------------------------------------------------------------- a table of breakdowns


@dataclass(frozen=True)
class BreakdownTable:
    """A breakdown of ``measure`` by characteristic ``key``: per run, the cells of
    :func:`kgqa.analyze.breakdown.breakdown` (n, mean, bootstrap CI); ``keys`` are the cell
    keys in order (union over runs); ``bins`` the binning used, if any."""

    key: str
    measure: str
    runs: list[str]
    keys: list[Hashable]
    cells: dict[str, dict[Hashable, Cell]]
    bins: int | list[float] | None = None
    confidence: float = 0.95


def breakdown_table(
    evals: Sequence[Evaluation],
    key: str,
    *,
    measure: str | None = None,
    bins: Mapping[str, int | list[float]] | None = None,
    seed: int = 0,
    confidence: float = 0.95,
    resamples: int = 10_000,
) -> BreakdownTable:
    """Breakdown of ``measure`` (default :func:`headline_measure`) by characteristic ``key`` for
    each evaluation. Bins come from ``bins[key]``, else :data:`DEFAULT_BINS`; a numeric
    characteristic without bins is grouped by distinct value. Every question is in some cell
    (``"(none)"`` when it has no value)."""
    require_items(evals, f"a breakdown by {key}")
    measure = measure or headline_measure(evals)
    b = (bins or {}).get(key, DEFAULT_BINS.get(key))
    values = values_of(key, evals)
    cells: dict[str, dict[Hashable, Cell]] = {}
    order: list[Hashable] = []
    for e in evals:
        scores = per_question_scores(e, measure)
        got = breakdown(scores, values, bins=b, seed=seed, confidence=confidence, resamples=resamples)
        cells[e.run] = {c.key: c for c in got}
        for c in got:
            if c.key not in order:
                order.append(c.key)
    # keep (none) last after the union
    order = [k for k in order if k != NONE] + ([NONE] if NONE in order else [])
    return BreakdownTable(key, measure, [e.run for e in evals], order, cells, b, confidence)
