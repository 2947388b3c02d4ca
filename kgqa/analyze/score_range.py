"""Exact score ranges over a choice of tied rows, solved as an optimisation (no sampling).

The legal answers of a query whose window cuts through tied solutions (``ORDER BY ... LIMIT``
with ties at the cut, ``LIMIT`` without ``ORDER BY``) are ``fixed`` rows plus, for each tied
group, any ``k`` of its ``pool`` rows (:class:`kgqa.execute.engine_findings.Choice`). Under a
set view (``values``: every bound cell; ``tuples``: every row) a measure that is a function of
the counts (TP, FP, FN) takes its extremes at a few of the (g, n) pairs the choice can reach,
g = how many gold items the chosen rows add to the fixed rows' items and n = how many non-gold
items they add (distinct items: rows may carry several values, and several rows the same one).

**Reachable pairs** (:func:`reachable`). Each pool row is reduced to the items it adds beyond
the fixed rows; rows adding nothing are *fillers*, rows adding the same item set form a
*class* (multiplicity m). The items a choice adds are the union of the classes it touches, and
a set S of classes can be chosen with exactly k rows iff ``|S| <= k <= sum(m of S) + fillers``.
An item only one class adds (*private*) counts once per class; the few items several classes
add (*shared*: at most :data:`MAX_SHARED`, e.g. a country column) are tracked one by one as
bits. Classes adding the same private (gold, non-gold) counts and the same shared items are
interchangeable except for their multiplicity, so the search runs over those *types*, taking
the j classes of largest m of a type (most room for rows): a dynamic programme over states
(g, n, |S|, shared) -> the largest sum(m), which is exact. Several groups combine by adding
their private counts and joining their shared bits. With more shared items, or where the
programme would exceed :data:`STATE_BUDGET`, a box that holds every reachable pair is used
instead (g up to the gold items the k rows richest in gold can add, n likewise): a *bound*.

**Extremes** (:func:`count_range`). For fixed TP and FN every count rule (``kgqa.score.rules``)
gives P, R, F and exact match values that depend on FP only through "FP = 0 or not" and then
fall (P, F) or stay (R) as FP grows, so for each reachable g the extremes over n are among the
smallest n, the smallest n with FP >= 1 and the largest n. Evaluating those points is exact.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

#: the most (g, n, |S|) states the programme keeps before it falls back to a bound
STATE_BUDGET = 400_000

Reach = dict[int, set[int]]  # g -> the reachable n


def reduce_pool(pool_items: Sequence[frozenset], fixed: frozenset) -> tuple[list[tuple[frozenset, int]], int]:
    """The classes (item set added beyond ``fixed``, multiplicity) of a pool and its filler count."""
    classes: dict[frozenset, int] = defaultdict(int)
    fillers = 0
    for items in pool_items:
        added = items - fixed
        if added:
            classes[added] += 1
        else:
            fillers += 1
    return list(classes.items()), fillers


#: the most items shared by several classes the programme tracks one by one (a bit each)
MAX_SHARED = 20


def _group_reach(classes: list[tuple[frozenset, int]], fillers: int, k: int, gold: frozenset,
                 bits: dict) -> set[tuple[int, int, int]] | None:
    """The exact reachable (g, n, shared) of choosing ``k`` rows of one group: g / n count the
    gold / non-gold items only this class adds (private), ``shared`` is the bit mask of the
    items several classes add that the choice covers (None when the programme outgrows
    :data:`STATE_BUDGET`)."""
    by_type: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for added, m in classes:
        mask = 0
        for x in added:
            if x in bits:
                mask |= bits[x]
        private = [x for x in added if x not in bits]
        g = sum(1 for x in private if x in gold)
        by_type[(g, len(private) - g, mask)].append(m)
    # (g, n, classes used, shared mask) -> the most rows those classes hold
    states: dict[tuple[int, int, int, int], int] = {(0, 0, 0, 0): 0}
    for (a, b, cmask), ms in by_type.items():
        ms.sort(reverse=True)
        prefix = [0]
        for m in ms:
            prefix.append(prefix[-1] + m)
        nxt: dict[tuple[int, int, int, int], int] = {}
        for (g, n, c, mask), cap in states.items():
            for j in range(0, min(len(ms), k - c) + 1):
                key = (g + j * a, n + j * b, c + j, mask | cmask if j else mask)
                room = min(k, cap + prefix[j])
                if nxt.get(key, -1) < room:
                    nxt[key] = room
            if len(nxt) > STATE_BUDGET:
                return None
        states = nxt
    return {(g, n, mask) for (g, n, c, mask), cap in states.items() if c <= k <= cap + fillers}


def _box(groups: Sequence[tuple[Sequence[frozenset], int]], fixed: frozenset, gold: frozenset) -> Reach:
    """Every (g, n) with g, n at most what any choice can add: a superset of the reachable pairs."""
    g_hi = n_hi = 0
    pooled: set = set()
    for pool_items, k in groups:
        adds = [items - fixed for items in pool_items]
        for a in adds:
            pooled |= a
        g_hi += sum(sorted((len(a & gold) for a in adds), reverse=True)[:k])
        n_hi += sum(sorted((len(a - gold) for a in adds), reverse=True)[:k])
    g_hi = min(g_hi, len(pooled & gold))
    n_hi = min(n_hi, len(pooled - gold))
    return {g: set(range(n_hi + 1)) for g in range(g_hi + 1)}


def reachable(groups: Sequence[tuple[Sequence[frozenset], int]], fixed: frozenset,
              gold: frozenset) -> tuple[Reach, bool]:
    """The (g, n) pairs a choice of ``k`` rows of each group (given as its rows' item sets)
    can add to the ``fixed`` items, and whether that is exact (False: a superset)."""
    reduced = [reduce_pool(pool, fixed) + (k,) for pool, k in groups]
    seen: dict = defaultdict(int)
    for classes, _f, _k in reduced:
        for added, _m in classes:
            for x in added:
                seen[x] += 1
    shared = [x for x, times in seen.items() if times > 1]
    if len(shared) > MAX_SHARED:
        return _box(groups, fixed, gold), False
    bits = {x: 1 << i for i, x in enumerate(shared)}
    gold_bits = sum(bit for x, bit in bits.items() if x in gold)
    total: set[tuple[int, int, int]] = {(0, 0, 0)}
    for classes, fillers, k in reduced:
        part = _group_reach(classes, fillers, k, gold, bits)
        if part is None or len(total) * len(part) > STATE_BUDGET:
            return _box(groups, fixed, gold), False
        total = {(g1 + g2, n1 + n2, m1 | m2) for g1, n1, m1 in total for g2, n2, m2 in part}
    reach: Reach = defaultdict(set)
    for g, n, mask in total:
        sg = (mask & gold_bits).bit_count()
        reach[g + sg].add(n + (mask & ~gold_bits).bit_count())
    return dict(reach), True


def count_range(reach: Reach, tp0: int, fp0: int, gold_size: int,
                value: Callable[[int, int, int], float | None]) -> tuple[float, float] | None:
    """[min, max] of ``value(tp, fp, fn)`` over the reachable pairs (see the module docstring);
    None when it is undefined at every one of them."""
    lo = hi = None
    for g, ns in reach.items():
        tp = tp0 + g
        fn = gold_size - tp
        ordered = sorted(ns)
        picks = {ordered[0], ordered[-1]}
        first_fp = next((n for n in ordered if fp0 + n >= 1), None)
        if first_fp is not None:
            picks.add(first_fp)
        for n in picks:
            v = value(tp, fp0 + n, fn)
            if v is None:
                continue
            lo = v if lo is None or v < lo else lo
            hi = v if hi is None or v > hi else hi
    return None if lo is None else (lo, hi)
