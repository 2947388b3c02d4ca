"""Benchmark: the ``uri`` generalization split (issue 7) on synthetic datasets.

Synthetic dataset of n items (:func:`synthetic`): each item has 1-2 "schema" URIs drawn from a
Zipf(1.0)-distributed vocabulary of n/50 URIs and 1-3 "entity" URIs from a Zipf(0.8) vocabulary
of n URIs (P(rank r) proportional to 1/r^s) — the shape of real KGQA datasets, where a few URIs
(rdf:type, common properties) occur everywhere and most entities occur once. The items are built directly as integer characteristic sets
(:class:`kgqa.make.splits.Characteristics`), so what is timed is the split itself:

- ``split``: :func:`kgqa.make.splits.split_characteristics` with ``by="uri"``,
  ``rare_below=5``, ``tries=100``: document frequencies, rare URIs, connected components of
  "shares a rare URI" (scipy, bipartite item-URI graph), 100 seeded assignments, held-out
  division, and the gp check of both held-out parts. A try that hits the train share exactly
  ends the search (no later try can be better), so ``100 tries`` is also timed on its own:
  100 complete assignments of the same groups, none cut short;
- ``groups``: the grouping step alone (:func:`kgqa.make.splits.group_labels`);
- ``intern``: (10^6 only, reported separately) turning per-item lists of URI *strings* into the
  integer form (:meth:`Characteristics.from_sets`), what ``kgqa split`` does after analysing
  the queries (analysing a real query costs far more and is not part of this benchmark);
- ``naive``: the released code's approach at 30,000 items: compare every pair of items'
  rare-URI sets (O(n^2)) and join the pairs that share one (union-find), then the same
  assignment; compared with ``groups`` on the same data.

Goals: 10^6 items split in under 60 s; time growing linearly from 10^4 to 10^6.

Usage: ``python bench/bench_splits.py [--sizes 10000,100000,1000000] [--naive 30000]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kgqa.make.splits import Characteristics, _one_try, group_labels, split_characteristics


def synthetic(n: int, seed: int = 0) -> Characteristics:
    """n items: 1-2 "schema" URIs from a Zipf(1.0) vocabulary of max(10, n/50) URIs and 1-3
    "entity" URIs from a Zipf(0.8) vocabulary of n URIs (uniform counts), duplicates removed."""
    rng = np.random.default_rng(seed)

    def zipf(size: int, exponent: float, k: int) -> np.ndarray:
        p = 1.0 / np.arange(1, size + 1) ** exponent
        cdf = np.cumsum(p / p.sum())
        return np.minimum(np.searchsorted(cdf, rng.random(k)), size - 1)

    v_schema, v_entity = max(10, n // 50), n
    cs, ce = rng.integers(1, 3, size=n), rng.integers(1, 4, size=n)
    rows = np.concatenate([np.repeat(np.arange(n), cs), np.repeat(np.arange(n), ce)])
    ids = np.concatenate([zipf(v_schema, 1.0, int(cs.sum())), v_schema + zipf(v_entity, 0.8, int(ce.sum()))])
    order = np.lexsort((ids, rows))
    rows, ids = rows[order], ids[order]
    keep = np.ones(len(ids), dtype=bool)
    keep[1:] = (rows[1:] != rows[:-1]) | (ids[1:] != ids[:-1])
    rows, ids = rows[keep], ids[keep]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return Characteristics(indptr, ids.astype(np.int64), list(range(v_schema + v_entity)))


def naive_groups(ch: Characteristics, rare_below: int = 5) -> int:
    """Pairwise graph over the items that have a rare URI; returns the number of components."""
    df = np.bincount(ch.indices, minlength=len(ch.vocab))
    sets = []
    for i in range(ch.n):
        s = frozenset(j for j in ch.indices[ch.indptr[i]:ch.indptr[i + 1]].tolist() if df[j] < rare_below)
        if s:
            sets.append(s)
    parent = list(range(len(sets)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, a in enumerate(sets):
        for j in [j for j, b in enumerate(sets[i + 1:], i + 1) if not a.isdisjoint(b)]:
            ri, rj = find(i), find(j)
            if ri != rj:
                parent[ri] = rj
    return len({find(i) for i in range(len(sets))})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--naive", type=int, default=30000, help="items for the pairwise method (0: skip)")
    ap.add_argument("--tries", type=int, default=100)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    print(f"{'items':>9} {'occurrences':>12} {'rare URIs':>10} {'groups':>8} {'reserved':>9} "
          f"{'delta':>9} {'groups s':>9} {'split s':>8} {'us/item':>8}")
    split_characteristics(synthetic(1000), "uri")  # warm-up: imports, first scipy call
    per_item = []
    for n in sizes:
        ch = synthetic(n)
        t0 = time.perf_counter()
        labels, info = group_labels(ch, "uri", 5)
        t_groups = time.perf_counter() - t0
        t0 = time.perf_counter()
        sp = split_characteristics(ch, "uri", (0.8, 0.1, 0.1), 5, args.tries, seed=0)
        t_split = time.perf_counter() - t0
        r = sp.report
        assert all(r["gp"].values())
        per_item.append(t_split / n * 1e6)
        print(f"{n:>9} {len(ch.indices):>12} {r['rare']:>10} {r['groups']:>8} {r['reserved']:>9} "
              f"{r['delta']:>9.2e} {t_groups:>9.2f} {t_split:>8.2f} {per_item[-1]:>8.2f}", flush=True)
        if n == max(sizes):
            sizes_g = np.bincount(labels[labels >= 0])
            t0 = time.perf_counter()
            for t in range(args.tries):
                _one_try(sizes_g, r["reserved"], r["target_train"], n, np.random.default_rng([0, t]), False)
            t_tries = time.perf_counter() - t0
    print(f"{args.tries} complete assignment tries over the {max(sizes)}-item groups: {t_tries:.2f} s")
    if len(per_item) > 1:
        print(f"time per item, largest / smallest size: {per_item[-1] / per_item[0]:.2f} (1.00 = linear)")

    big = max(sizes)
    ch = synthetic(big)
    strings = [[f"http://example.org/resource/U{j}" for j in ch.indices[ch.indptr[i]:ch.indptr[i + 1]].tolist()]
               for i in range(ch.n)]
    t0 = time.perf_counter()
    Characteristics.from_sets(strings)
    print(f"intern {big} items' URI strings to integers: {time.perf_counter() - t0:.2f} s")
    del strings

    if args.naive:
        n = args.naive
        ch = synthetic(n)
        t0 = time.perf_counter()
        _, info = group_labels(ch, "uri", 5)
        t_fast = time.perf_counter() - t0
        t0 = time.perf_counter()
        comps = naive_groups(ch, 5)
        t_naive = time.perf_counter() - t0
        assert comps == info["groups"], (comps, info["groups"])
        print(f"grouping {n} items: connected components {t_fast:.3f} s, naive pairwise graph {t_naive:.1f} s "
              f"(same {comps} groups); ratio {t_naive / t_fast:.0f}x")


if __name__ == "__main__":
    main()
