"""Benchmark: the statistics of ``kgqa compare`` (issue 17) on synthetic runs.

``--systems`` evaluations (default 3) of the same ``--n`` questions (default 10,000), built by
tests/compare_synthetic.py (seeded): per-question P, R, F1 (the small-denominator fractions set
answers give), binary AnswerEM and Coverage -- kgqa's default profile, so 5 measures are
compared, each with a bootstrap CI per system and, per pair, the paired bootstrap, approximate
randomization, Wilcoxon and (binary measures) McNemar, Holm/BH and letters.

Timed in one process on the same evaluations:

- ``old``: a faithful copy (below) of the code before issue 17, which drew the seeded bootstrap
  indices again for every series (each system's CI and each pair's differences, per measure)
  and the randomization signs again for every pair, although they are the same draws;
- ``new``: :func:`kgqa.analyze.comparison.compare_evaluations` as it is now (draws shared by
  every series of the same length, see kgqa/analyze/stats.py "shared draws").

Both outputs must be identical -- ``MultiComparison.to_json()`` (every number, every letter)
and the rendered terminal table -- or the bench fails. Target: new >= 5x faster than old. Wall
and CPU (process) time are printed; each figure is the best of ``--repeat`` runs.

Usage: ``python bench/bench_compare.py [--n 10000] [--systems 3] [--resamples 10000] [--repeat 2]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from itertools import combinations
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from compare_synthetic import synthetic_evals  # noqa: E402

from kgqa.analyze import stats  # noqa: E402
from kgqa.analyze.characteristics import per_question_scores  # noqa: E402
from kgqa.analyze.comparison import (  # noqa: E402
    MeasureComparison,
    MultiComparison,
    _adjust_all,
    _binary,
    system_names,
    comparable_measures,
    compare_evaluations,
)
from kgqa.analyze.stats import (  # noqa: E402
    CI,
    TESTS,
    PairedComparison,
    PairedBootstrap,
    _as_pair,
    _as_scores,
    _degenerate,
    _generator,
    benjamini_hochberg,
    common_ids,
    holm,
    is_binary,
    mcnemar_exact,
    wilcoxon,
    win_tie_loss,
)

# --------------------------------------------------------------------------- the code before issue 17
# (kgqa/analyze/stats.py and comparison.py at commit 34dd749, argument checks left out)

_BLOCK = 2_000_000
_TOL = 1e-9


def old_bootstrap_means(x, resamples, rng):
    n = x.size
    out = np.empty(resamples, dtype=np.float64)
    rows = max(1, _BLOCK // n)
    for start in range(0, resamples, rows):
        k = min(rows, resamples - start)
        idx = rng.integers(0, n, size=(k, n))
        out[start : start + k] = x[idx].mean(axis=1)
    return np.clip(out, x.min(), x.max(), out=out)


def old_bootstrap_ci(scores, *, confidence=0.95, resamples=10_000, seed=0):
    x = _as_scores(scores)
    degenerate = _degenerate(x, confidence)
    if degenerate is not None:
        return degenerate
    means = old_bootstrap_means(x, int(resamples), _generator(seed))
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return CI(float(x.mean()), float(low), float(high), int(x.size), confidence)


def old_paired_bootstrap(a, b, *, confidence=0.95, resamples=10_000, seed=0):
    x, y = _as_pair(a, b)
    d = x - y
    degenerate = _degenerate(d, confidence)
    observed = float(d.mean())
    if degenerate is not None:
        p = 1.0 if observed == 0.0 else 1.0 / (resamples + 1)
        return PairedBootstrap(degenerate, p, int(resamples))
    means = old_bootstrap_means(d, int(resamples), _generator(seed))
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    threshold = abs(observed) - _TOL * max(1.0, abs(observed))
    count = int(np.count_nonzero(np.abs(means - observed) >= threshold))
    p = (count + 1) / (resamples + 1)
    return PairedBootstrap(CI(observed, float(low), float(high), int(d.size), confidence), p, int(resamples))


def old_randomization_test(a, b, *, trials=10_000, seed=0):
    x, y = _as_pair(a, b)
    d = x - y
    n = d.size
    total = float(d.sum())
    observed = abs(total)
    if not np.any(d):
        return 1.0
    threshold = observed - _TOL * max(1.0, float(np.abs(d).sum()))
    rng = _generator(seed)
    bytes_per_row = (n + 7) // 8
    rows = max(1, _BLOCK // n)
    count = 0
    for start in range(0, trials, rows):
        k = min(rows, trials - start)
        raw = np.frombuffer(rng.bytes(k * bytes_per_row), dtype=np.uint8).reshape(k, bytes_per_row)
        keep = np.unpackbits(raw, axis=1, count=n).astype(np.float64)
        stats_ = np.abs(2.0 * np.einsum("ij,j->i", keep, d) - total)
        count += int(np.count_nonzero(stats_ >= threshold))
    return (count + 1) / (trials + 1)


def old_compare_systems(scores, *, baseline=None, measure="", binary=None, seed=0, alpha=0.05, confidence=0.95,
                        resamples=10_000, trials=10_000, primary=None):
    systems = list(scores)
    ids, dropped = common_ids(scores)
    arrays = {s: _as_scores([scores[s][q] for q in ids], f"scores of {s!r}") for s in systems}
    if binary is None:
        binary = all(is_binary(v) for v in arrays.values())
    if primary is None:
        primary = "mcnemar" if binary else "randomization"
    assert primary in TESTS
    pairs = [(s, baseline) for s in systems if s != baseline] if baseline is not None else list(combinations(systems, 2))
    raw = []
    for sa, sb in pairs:
        a, b = arrays[sa], arrays[sb]
        boot = old_paired_bootstrap(a, b, confidence=confidence, resamples=resamples, seed=seed)
        p = {
            "bootstrap": boot.p,
            "randomization": old_randomization_test(a, b, trials=trials, seed=seed),
            "wilcoxon": wilcoxon(a, b),
        }
        if binary:
            p["mcnemar"] = mcnemar_exact(a, b)
        raw.append((sa, sb, boot, win_tie_loss(a, b), p))
    tests = list(raw[0][4])
    adj_holm = {t: holm([r[4][t] for r in raw]) for t in tests}
    adj_bh = {t: benjamini_hochberg([r[4][t] for r in raw]) for t in tests}
    out = []
    for i, (sa, sb, boot, wtl, p) in enumerate(raw):
        ph = {t: adj_holm[t][i] for t in tests}
        pb = {t: adj_bh[t][i] for t in tests}
        mean_a, mean_b = float(arrays[sa].mean()), float(arrays[sb].mean())
        significant = ph[primary] < alpha and mean_a != mean_b
        better = (sa if mean_a > mean_b else sb) if significant else None
        out.append(PairedComparison(measure=measure, system_a=sa, system_b=sb, n=len(ids), dropped_a=dropped[sa],
                              dropped_b=dropped[sb], mean_a=mean_a, mean_b=mean_b, diff=boot.diff, wtl=wtl, p=p,
                              p_holm=ph, p_bh=pb, primary=primary, alpha=alpha, significant=significant,
                              better=better))
    return out


def old_compare_evaluations(evals, *, baseline=None, seed=0, alpha=0.05, confidence=0.95, resamples=10_000,
                            trials=10_000, family="measure"):
    systems = system_names(evals)
    per_q, corpus_only = comparable_measures(evals)
    results = []
    for label in per_q:
        scores = {s: per_question_scores(e, label) for s, e in zip(systems, evals)}
        ids, dropped = common_ids(scores)
        if not ids:
            continue
        binary = _binary(evals, label)
        if binary and not all(is_binary([scores[s][q] for q in ids]) for s in systems):
            binary = False
        comps = old_compare_systems(scores, baseline=baseline, measure=label, binary=binary, seed=seed, alpha=alpha,
                                    confidence=confidence, resamples=resamples, trials=trials)
        ci = {s: old_bootstrap_ci([scores[s][q] for q in ids], confidence=confidence, resamples=resamples, seed=seed)
              for s in systems}
        results.append(MeasureComparison(label, binary, len(ids), dropped, ci, comps, {}))
    if family == "all":
        results = _adjust_all(results, alpha)
    results = [replace(m, letters=stats.significance_letters(m.comparisons, systems)) for m in results]
    return MultiComparison(systems=systems, baseline=baseline, seed=seed, alpha=alpha, confidence=confidence,
                           family=family, measures=results, corpus_only=corpus_only,
                           aggregates={s: dict(e.aggregate) for s, e in zip(systems, evals)})


# --------------------------------------------------------------------------- bench


def timed(fn, repeat: int):
    best_wall = best_cpu = float("inf")
    result = None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        result = fn()
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    return result, best_wall, best_cpu


def table(evals, result) -> str:
    from kgqa.api import PairedComparison as ApiComparison

    return ApiComparison(evals, result).to_table()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--systems", type=int, default=3)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0, help="seed of the comparison (the data are seeded 0)")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()

    evals = synthetic_evals(n=args.n, systems=args.systems, seed=0)
    opts = dict(seed=args.seed, resamples=args.resamples, trials=args.resamples)
    n_measures = len(comparable_measures(evals)[0])
    pairs = args.systems * (args.systems - 1) // 2
    print(f"kgqa compare statistics: {args.systems} runs x {args.n:,} questions, {n_measures} measures, "
          f"{pairs} pairs, {args.resamples:,} resamples/trials, best of {args.repeat}")

    old, old_wall, old_cpu = timed(lambda: old_compare_evaluations(evals, **opts), args.repeat)
    new, new_wall, new_cpu = timed(lambda: compare_evaluations(evals, **opts), args.repeat)

    same_json = json.dumps(old.to_json(), sort_keys=True) == json.dumps(new.to_json(), sort_keys=True)
    same_table = table(evals, old) == table(evals, new)
    print(f"  old (draws per series) : {old_wall:7.2f} s wall  {old_cpu:7.2f} s cpu")
    print(f"  new (draws shared)     : {new_wall:7.2f} s wall  {new_cpu:7.2f} s cpu")
    ratio_wall, ratio_cpu = old_wall / new_wall, old_cpu / new_cpu
    print(f"  speed-up               : {ratio_wall:7.1f}x wall  {ratio_cpu:7.1f}x cpu   (target >= 5x: "
          f"{'met' if min(ratio_wall, ratio_cpu) >= 5 else 'NOT met'})")
    print(f"  identical output       : JSON {'yes' if same_json else 'NO'}, table {'yes' if same_table else 'NO'}")
    if not (same_json and same_table):
        raise SystemExit("the new statistics differ from the old ones")


if __name__ == "__main__":
    main()
