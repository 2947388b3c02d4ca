"""Shared draws (issue 17): the batched bootstrap and randomization of kgqa.analyze.stats give
the numbers of the code before the speed-up, bit for bit.

The ``old_*`` functions below are that code (commit 34dd749): every series drew its own seeded
indices / signs and took ``x[idx].mean(axis=1)`` / ``einsum`` per block. The new code shares
the draws and, with many series, finds most means with one BLAS product and recomputes exactly
only those that can matter (``_banded_means``); ``_DIRECT_MAX`` is patched to 0 to force that
path on small inputs. Series are chosen to stress it: non-dyadic fractions with many ties
(thirds, fifths), dyadic (0/1, halves), continuous, tiny n, resample counts that are not a
multiple of the 8-row draw calls, differences whose mean is 0 or near the p-value threshold."""

from __future__ import annotations

import numpy as np
import pytest

from kgqa.analyze import stats
from kgqa.analyze.stats import (
    CI,
    _as_pair,
    _as_scores,
    _degenerate,
    _generator,
    bootstrap_ci,
    compare_measures,
    compare_systems,
    paired_bootstrap,
    randomization_test,
)

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
        return degenerate, (1.0 if observed == 0.0 else 1.0 / (resamples + 1))
    means = old_bootstrap_means(d, int(resamples), _generator(seed))
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    threshold = abs(observed) - _TOL * max(1.0, abs(observed))
    count = int(np.count_nonzero(np.abs(means - observed) >= threshold))
    return CI(observed, float(low), float(high), int(d.size), confidence), (count + 1) / (resamples + 1)


def old_randomization_test(a, b, *, trials=10_000, seed=0):
    x, y = _as_pair(a, b)
    d = x - y
    n = d.size
    total = float(d.sum())
    if not np.any(d):
        return 1.0
    threshold = abs(total) - _TOL * max(1.0, float(np.abs(d).sum()))
    rng = _generator(seed)
    bytes_per_row = (n + 7) // 8
    rows = max(1, _BLOCK // n)
    count = 0
    for start in range(0, trials, rows):
        k = min(rows, trials - start)
        raw = np.frombuffer(rng.bytes(k * bytes_per_row), dtype=np.uint8).reshape(k, bytes_per_row)
        keep = np.unpackbits(raw, axis=1, count=n).astype(np.float64)
        s = np.abs(2.0 * np.einsum("ij,j->i", keep, d) - total)
        count += int(np.count_nonzero(s >= threshold))
    return (count + 1) / (trials + 1)


def series(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "binary":
        return (rng.random(n) < 0.3).astype(float)
    if kind == "halves":
        return rng.integers(0, 5, n) / 4
    if kind == "fractions":  # P/R/F1 of small answer sets: thirds, fifths, sevenths... many ties
        k, g = rng.integers(1, 6, n), rng.integers(1, 6, n)
        tp = np.minimum(rng.integers(0, 6, n), np.minimum(k, g))
        return np.where(rng.random(n) < 0.2, 0.0, 2 * tp / (k + g))
    if kind == "continuous":
        return rng.random(n)
    if kind == "scaled":
        return rng.random(n) * 1e3 - 400.0
    raise AssertionError(kind)


KINDS = ("binary", "halves", "fractions", "continuous", "scaled")


def systems(kind: str, n: int, count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    base = series(kind, n, rng)
    out = [base]
    for _ in range(count - 1):  # close systems: a few questions changed, so p-values are not tiny
        other = base.copy()
        changed = rng.random(n) < 0.3
        other[changed] = series(kind, int(changed.sum()), rng)
        out.append(other)
    return out


@pytest.fixture(params=["direct", "banded"])
def path(request, monkeypatch):
    if request.param == "banded":
        monkeypatch.setattr(stats, "_DIRECT_MAX", 0)
    return request.param


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n,resamples,seed", [(12, 2000, 0), (250, 3001, 7),
                                              pytest.param(3000, 1003, 3, marks=pytest.mark.slow),
                                              pytest.param(9000, 1500, 11, marks=pytest.mark.slow)])
def test_batched_bootstrap_equals_one_series_at_a_time(path, kind, n, resamples, seed):
    xs = systems(kind, n, 4, seed)
    requests, want = [], []
    for confidence in (0.95, 0.9):
        for x in xs:
            if _degenerate(x, confidence) is None:
                requests.append((x, confidence, False))
                c = old_bootstrap_ci(x, confidence=confidence, resamples=resamples, seed=seed)
                want.append((c.low, c.high, None))
        for i in range(len(xs)):
            for j in range(i + 1, len(xs)):
                d = xs[i] - xs[j]
                if _degenerate(d, confidence) is None:
                    requests.append((d, confidence, True))
                    c, p = old_paired_bootstrap(xs[i], xs[j], confidence=confidence, resamples=resamples, seed=seed)
                    want.append((c.low, c.high, round(p * (resamples + 1)) - 1))
    got = stats._bootstrap_many(requests, resamples, seed)
    assert got == want


@pytest.mark.parametrize("kind", KINDS)
def test_one_series_functions_are_unchanged(kind):
    a, b = systems(kind, 700, 2, 5)
    for seed in (0, 1):
        assert bootstrap_ci(a, resamples=2500, seed=seed) == old_bootstrap_ci(a, resamples=2500, seed=seed)
        new = paired_bootstrap(a, b, resamples=2500, seed=seed, confidence=0.9)
        assert (new.diff, new.p) == old_paired_bootstrap(a, b, resamples=2500, seed=seed, confidence=0.9)
        assert randomization_test(a, b, trials=2500, seed=seed) == old_randomization_test(a, b, trials=2500, seed=seed)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n,trials,seed", [(12, 3000, 0), (999, 2001, 4),
                                           pytest.param(20_000, 700, 9, marks=pytest.mark.slow)])
def test_batched_randomization_equals_one_pair_at_a_time(kind, n, trials, seed):
    xs = systems(kind, n, 4, seed)
    diffs, want = [], []
    for i in range(len(xs)):
        for j in range(len(xs)):
            if i != j:
                diffs.append(xs[i] - xs[j])
                want.append(old_randomization_test(xs[i], xs[j], trials=trials, seed=seed))
    diffs.append(np.zeros(n))
    want.append(1.0)
    assert stats._randomization_many(diffs, trials, seed) == want


def test_statistics_on_the_threshold_are_recomputed_exactly(path):
    """Vectors built so that some resamples / sign patterns land on the p-value threshold up to
    rounding: there the approximate sums must not decide, the exact ones must."""
    # randomization: d = (x, y, z1, -z1, z2, -z2, ...), threshold |x + y| - 1e-9 (sum|d| < 1); the
    # patterns that flip y alone and each z pair together give |x - y| = threshold when y = 5e-10
    diffs = []
    for x in (1 / 3, 2 / 7, 0.1, 5 / 11):
        for y in (5e-10, 5e-10 * (1 + 2e-16), 5e-10 * (1 - 2e-16), 5.000001e-10):
            zs = [z / 97 for z in (1 / 3, 1 / 7, 2 / 9, 1 / 11, 3 / 13)]
            diffs.append(np.array([x, y] + [v for z in zs for v in (z, -z)]))
    want = [old_randomization_test(d, np.zeros(d.size), trials=3000, seed=1) for d in diffs]
    assert stats._randomization_many(diffs, 3000, 1) == want
    # bootstrap: d = (1/3, -1/3, 3e-9): resamples with as many 1/3 as -1/3 and one 3e-9 have a
    # mean equal to the observed one up to rounding, and the threshold is 0 up to rounding
    requests, want = [], []
    for delta in (3e-9, 3.0000001e-9, 1e-9 / 7, 6e-9):
        for d in (np.array([1 / 3, -1 / 3, delta]), np.array([1 / 3, -1 / 3, delta, 0.0])):
            requests.append((d, 0.95, True))
            c, p = old_paired_bootstrap(d, np.zeros(d.size), resamples=3000, seed=4)
            want.append((c.low, c.high, round(p * 3001) - 1))
    assert stats._bootstrap_many(requests, 3000, 4) == want


def test_banded_path_recomputes_few_means(monkeypatch):
    """The banded path is exact because it recomputes the means near a quantile or the p-value
    threshold; it is fast because there are few of them (not a timing test: a count)."""
    xs = systems("fractions", 5000, 3, 1)
    items = [stats._Series(x, [(0.025, 0.975)]) for x in xs]
    seen = []
    real = np.random.PCG64

    def counting(*args, **kw):
        seen.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(np.random, "PCG64", counting)
    stats._banded_means(items, 4000, 0)
    assert len(seen) - 1 <= 3 * 2 * 8  # redraws: at most a few 8-row calls per quantile and series


def test_draws_split_freely_for_usual_lengths():
    assert all(stats._draws_split_freely(n) for n in (1, 2, 13, 10_000, 65_537))


@pytest.mark.parametrize("baseline", [None, "s1"])
def test_compare_measures_equals_compare_systems_and_bootstrap_ci(path, baseline):
    tables = []
    for m, kind in enumerate(("fractions", "binary", "continuous")):
        xs = systems(kind, 800, 3, m)
        scores = {f"s{i}": {f"q{j}": float(v) for j, v in enumerate(x)} for i, x in enumerate(xs)}
        tables.append((kind, scores, None))
    got = compare_measures(tables, baseline=baseline, seed=3, resamples=1200, trials=1100, confidence=0.9)
    for (kind, scores, _), (comps, cis) in zip(tables, got):
        assert comps == compare_systems(scores, baseline=baseline, measure=kind, seed=3, resamples=1200, trials=1100,
                                        confidence=0.9)
        ids = sorted(next(iter(scores.values())))
        for s, per in scores.items():
            assert cis[s] == old_bootstrap_ci([per[q] for q in ids], confidence=0.9, resamples=1200, seed=3)
        for c in comps:
            a = [scores[c.system_a][q] for q in ids]
            b = [scores[c.system_b][q] for q in ids]
            diff, p = old_paired_bootstrap(a, b, confidence=0.9, resamples=1200, seed=3)
            assert (c.diff, c.p["bootstrap"]) == (diff, p)
            assert c.p["randomization"] == old_randomization_test(a, b, trials=1100, seed=3)


def test_compare_measures_errors_and_degenerate_series():
    with pytest.raises(ValueError, match="confidence"):
        compare_measures([("m", {"a": {"q": 1.0}, "b": {"q": 0.0}}, None)], confidence=1.5)
    with pytest.raises(ValueError, match="trials"):
        compare_measures([("m", {"a": {"q": 1.0}, "b": {"q": 0.0}}, None)], trials=0)
    same = {"a": {"q1": 1.0, "q2": 1.0}, "b": {"q1": 1.0, "q2": 1.0}}
    (comps, cis), = compare_measures([("m", same, None)], resamples=50, trials=50)
    # n = 2: no test is computed (issue 34: "<0.0001" beside 0.5037), and the reason is given
    assert comps[0].p == {} and "n = 2 < 6" in comps[0].untested and not comps[0].significant
    assert cis["a"].reason and cis["a"].low == cis["a"].high == 1.0
    same6 = {s: {f"q{i}": 1.0 for i in range(6)} for s in ("a", "b")}
    (comps, _), = compare_measures([("m", same6, None)], resamples=50, trials=50)
    assert comps[0].p["bootstrap"] == 1.0 and not comps[0].untested  # identical: p = 1 is honest
    ahead = {"a": {f"q{i}": 1.0 for i in range(6)}, "b": {f"q{i}": 0.0 for i in range(6)}}
    (comps, _), = compare_measures([("m", ahead, None)], resamples=50, trials=50)
    assert "bootstrap" not in comps[0].p and comps[0].p["randomization"] < 0.05
    assert "same non-zero difference" in comps[0].untested


def test_banded_path_with_long_series_draws_fewer_rows_per_call(monkeypatch):
    """n = 400,000: fewer than 8 rows fit a block of two million draws (step 5 rows per call)."""
    monkeypatch.setattr(stats, "_DIRECT_MAX", 0)
    xs = systems("fractions", 400_000, 2, 8)
    d = xs[0] - xs[1]
    requests = [(xs[0], 0.95, False), (xs[1], 0.9, False), (d, 0.95, True)]
    want = []
    for x, confidence, paired in requests:
        if paired:
            c, p = old_paired_bootstrap(xs[0], xs[1], confidence=confidence, resamples=23, seed=6)
            want.append((c.low, c.high, round(p * 24) - 1))
        else:
            c = old_bootstrap_ci(x, confidence=confidence, resamples=23, seed=6)
            want.append((c.low, c.high, None))
    assert stats._bootstrap_many(requests, 23, 6) == want
