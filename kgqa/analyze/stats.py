"""Statistics over per-question scores: bootstrap confidence intervals, paired significance
tests, multiple-comparison corrections and the multi-system comparison behind `kgqa compare`.

Every function takes plain numbers (sequences or numpy arrays of per-question scores; for paired
tests two arrays aligned question by question) and is deterministic given ``seed``: random
draws come from ``numpy.random.Generator(PCG64(seed))`` and are consumed in an order that
depends only on the input sizes, so the same inputs and seed give bit-identical floats.
Resampling is vectorised in blocks of about two million draws, so 10,000 resamples of 10,000
questions take well under a second; series of the same length compared in one call share their
draws (:func:`compare_measures`, "shared draws" below).

Definitions (``n`` questions, scores ``x_1..x_n``; for paired tests ``d_i = a_i - b_i``):

* percentile bootstrap CI of the mean: draw ``B`` resamples of size ``n`` with replacement,
  take each resample's mean, and report the ``(1-c)/2`` and ``(1+c)/2`` quantiles of those
  ``B`` means (linear interpolation, ``numpy.quantile``'s default), ``c`` the confidence;
* paired bootstrap: the same on ``d`` (resampling questions, keeping pairs together); its
  two-sided p-value is the shifted-null bootstrap test (Efron & Tibshirani 1993, sec. 16.4;
  Berg-Kirkpatrick et al. 2012): ``p = (#{b : |mean(d*_b) - mean(d)| >= |mean(d)|} + 1) / (B + 1)``;
* approximate randomization (paired sign flipping, Noreen 1989): ``p = (c + 1) / (T + 1)`` with
  ``c = #{t : |mean(s_t * d)| >= |mean(d)|}`` over ``T`` trials of independent fair signs
  ``s_t in {-1, +1}^n``;
* McNemar's exact test: two-sided exact binomial test of ``n01`` against ``Binomial(n01 + n10,
  1/2)`` where ``n01 = #{a_i = 1, b_i = 0}`` and ``n10 = #{a_i = 0, b_i = 1}``
  (``scipy.stats.binomtest``);
* Wilcoxon signed-rank: ``scipy.stats.wilcoxon`` on ``d`` with ``zero_method="wilcox"``
  (zero differences are discarded) and ``method="auto"``;
* Holm (1979) step-down (scipy has none) and Benjamini-Hochberg (1995) step-up adjusted p-values
  (``scipy.stats.false_discovery_control``).

All p-values returned lie in (0, 1] (an analytic p-value that underflows to 0 is reported as
the smallest positive double). Comparisons "at or beyond the observed statistic" use a
relative tolerance of 1e-9 (``_TOL``) so that floating-point summation order never decides
whether the identity permutation counts.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from kgqa import lazy
from kgqa.analyze.letters import system_letters

__all__ = [
    "CI",
    "PairedBootstrap",
    "WinTieLoss",
    "PairedComparison",
    "bootstrap_ci",
    "paired_bootstrap",
    "randomization_test",
    "mcnemar_exact",
    "wilcoxon",
    "holm",
    "benjamini_hochberg",
    "win_tie_loss",
    "is_binary",
    "common_ids",
    "system_letters",
    "significance_letters",
    "compare_systems",
    "compare_measures",
]

_BLOCK = 2_000_000  # random draws per vectorised block (bounded memory, ~16 MB of int64)
_TOL = 1e-9
_TINY = math.ulp(0.0)  # the smallest positive float (numpy.nextafter(0.0, 1.0))


def _generator(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _as_scores(values: Sequence[float] | np.ndarray, what: str = "scores") -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected a one-dimensional sequence of numbers, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{what}: expected finite numbers, position {i} is {arr[i]!r}")
    return arr


def _as_pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    x = _as_scores(a, "a")
    y = _as_scores(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired scores must have the same length: a has {x.size}, b has {y.size}")
    if x.size == 0:
        raise ValueError("paired test needs at least one pair of scores, got none")
    return x, y


def _floor(p: float) -> float:
    """Clip an analytic p-value into (0, 1]: underflow to 0 becomes the smallest positive double."""
    return float(min(1.0, max(p, _TINY)))


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")


def _check_count(value: int, what: str) -> None:
    if int(value) != value or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")


# --------------------------------------------------------------------------- bootstrap


@dataclass(frozen=True)
class CI:
    """A mean with a confidence interval ``[low, high]``.

    ``n`` is the number of scores; ``reason`` explains a degenerate interval (``n == 0``: all
    fields NaN; ``n == 1`` or constant scores: ``low == high == mean``)."""

    mean: float
    low: float
    high: float
    n: int = 0
    confidence: float = 0.95
    reason: str | None = None

    @property
    def width(self) -> float:
        return self.high - self.low


def _blocks(n: int, count: int) -> list[tuple[int, int]]:
    """(start, rows) of the blocks in which ``count`` resamples of size ``n`` are drawn: the draw
    calls, hence the random stream, depend on these sizes only."""
    rows = max(1, _BLOCK // n)
    return [(start, min(rows, count - start)) for start in range(0, count, rows)]


def _exact_means(series: Sequence[np.ndarray], resamples: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Means of ``resamples`` resamples drawn with replacement (in blocks) of each series, all of
    one length, on the *same* draws: each block of indices is drawn once and gathered from every
    series."""
    n = series[0].size
    outs = [np.empty(resamples, dtype=np.float64) for _ in series]
    blocks = _blocks(n, resamples)
    buf = np.empty((blocks[0][1], n), dtype=np.float64)
    for start, k in blocks:
        idx = rng.integers(0, n, size=(k, n))
        for x, out in zip(series, outs):
            # take(mode="clip") copies exactly x[idx] (every index is in range) into a reused buffer
            out[start : start + k] = np.take(x, idx, out=buf[:k], mode="clip").mean(axis=1)
    # a mean lies within [min, max]; clip the last-bit rounding of e.g. (v + v + v) / 3
    return [np.clip(out, x.min(), x.max(), out=out) for x, out in zip(series, outs)]


def _degenerate(x: np.ndarray, confidence: float) -> CI | None:
    n = x.size
    if n == 0:
        nan = float("nan")
        return CI(nan, nan, nan, 0, confidence, "no scores: mean and interval are undefined")
    if n == 1:
        v = float(x[0])
        return CI(v, v, v, 1, confidence, "a single score: the interval is degenerate")
    if np.all(x == x[0]):
        v = float(x[0])
        return CI(v, v, v, n, confidence, "all scores are equal: the interval is degenerate")
    return None


def bootstrap_ci(
    scores: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> CI:
    """Percentile bootstrap confidence interval of the mean of ``scores``.

    Draws ``resamples`` resamples of size ``n`` with replacement (``Generator(PCG64(seed))``),
    computes each resample's mean, and returns ``CI(mean, low, high)`` where ``mean`` is the
    sample mean and ``low``/``high`` are the ``(1-confidence)/2`` and ``(1+confidence)/2``
    quantiles of the resample means (``numpy.quantile``, linear interpolation) -- the same
    interval as ``scipy.stats.bootstrap(..., method="percentile")`` up to Monte Carlo error.

    Hand-written rather than ``scipy.stats.bootstrap``: scipy draws its resamples in another
    order, so the same seed gives a different interval (tests/analyze/test_analyze_stats.py shows it),
    and the paired bootstrap p-value below needs the resample means scipy does not return; this
    implementation also shares one vectorised resampler with :func:`paired_bootstrap`.

    ``n == 0`` gives NaNs with a ``reason``; ``n == 1`` and constant scores give the degenerate
    interval ``[mean, mean]`` with a ``reason``. Non-finite scores raise ``ValueError``."""
    _check_confidence(confidence)
    _check_count(resamples, "resamples")
    x = _as_scores(scores)
    degenerate = _degenerate(x, confidence)
    if degenerate is not None:
        return degenerate
    low, high, _ = _bootstrap_many([(x, confidence, False)], int(resamples), seed)[0]
    return CI(float(x.mean()), low, high, int(x.size), confidence)


@dataclass(frozen=True)
class PairedBootstrap:
    """Paired bootstrap of ``mean(a - b)``: its percentile CI (``diff``) and the two-sided
    shifted-null bootstrap p-value (see the module docstring)."""

    diff: CI
    p: float
    resamples: int


def paired_bootstrap(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> PairedBootstrap:
    """Paired bootstrap of the mean difference ``mean(a - b)`` (questions resampled with their
    pair kept together).

    ``diff`` is the percentile CI of the mean difference (as :func:`bootstrap_ci` on ``a - b``
    with the same seed). ``p`` is two-sided: the bootstrap distribution is shifted to mean 0
    (the null) and ``p = (#{|mean(d*) - mean(d)| >= |mean(d)|} + 1) / (resamples + 1)``;
    identical systems (all differences 0) give ``p = 1``."""
    _check_confidence(confidence)
    _check_count(resamples, "resamples")
    x, y = _as_pair(a, b)
    d = x - y
    degenerate = _paired_degenerate(d, confidence, resamples)
    if degenerate is not None:
        return degenerate
    return _paired_result(d, confidence, resamples, _bootstrap_many([(d, confidence, True)], int(resamples), seed)[0])


def _paired_degenerate(d: np.ndarray, confidence: float, resamples: int) -> PairedBootstrap | None:
    degenerate = _degenerate(d, confidence)
    if degenerate is None:
        return None
    # n == 1 or constant differences: every resample equals the observed mean.
    p = 1.0 if float(d.mean()) == 0.0 else 1.0 / (resamples + 1)
    return PairedBootstrap(degenerate, p, int(resamples))


def _paired_result(d: np.ndarray, confidence: float, resamples: int,
                   summary: tuple[float, float, int | None]) -> PairedBootstrap:
    low, high, count = summary
    assert count is not None
    p = (count + 1) / (resamples + 1)
    return PairedBootstrap(CI(float(d.mean()), low, high, int(d.size), confidence), p, int(resamples))


# --------------------------------------------------------------------------- paired tests


def randomization_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    trials: int = 10_000,
    seed: int = 0,
) -> float:
    """Approximate randomization test (paired sign flipping), two-sided on ``|mean(a - b)|``.

    Each trial swaps the two systems' scores on each question independently with probability
    1/2, i.e. multiplies ``d_i = a_i - b_i`` by a fair random sign. With ``c`` the number of
    trials whose ``|mean(s * d)|`` is at least the observed ``|mean(d)|`` (relative tolerance
    1e-9), ``p = (c + 1) / (trials + 1)``: never 0, and 1 when all differences are 0.

    Hand-written rather than ``scipy.stats.permutation_test(permutation_type="samples")``: scipy
    counts differently (two-sided as twice the smaller one-sided p, and may enumerate every sign
    pattern for small n), so its p-value is not this one (tests/analyze/test_analyze_stats.py shows
    it); this is the convention of the IR/NLP significance-testing literature kgqa follows."""
    _check_count(trials, "trials")
    x, y = _as_pair(a, b)
    return _randomization_many([x - y], int(trials), seed)[0]


# --------------------------------------------------------------------------- shared draws
#
# Every bootstrap of one call with the same (n, seed, resamples) draws the *same* indices, and
# every randomization test with the same (n, seed, trials) the same signs: a comparison of S
# systems on M measures used to redraw them S + S(S-1)/2 times per measure. The functions below
# draw each block once for all the series that share it and return what the one-series
# functions above return, bit for bit (tests/analyze/test_compare_reference.py, tests/analyze/test_analyze_stats_shared.py).
#
# With many series, the means of every resample are first computed for all of them at once as
# ``counts @ X / n`` (counts: how often each question is drawn in each resample; one BLAS
# product instead of one gather per series). That sum is taken in another order than numpy's
# pairwise ``mean``, so it can differ from the exact mean in the last bits, by at most
# ``eps = 8 (n + 2) u max|x|`` (u = 2^-53; any summation order of n terms errs by at most
# ``gamma_n * sum|terms|``, Higham 2002, sec. 3.1; 8 is a safety factor). Only a few resamples
# can change a result: the neighbours of the quantiles' order statistics and the resamples whose
# shifted mean is within ``3 eps`` of the p-value threshold. Those are redrawn (indices are drawn
# 8 rows per call and the generator state before each call is kept) and their means computed
# exactly as before; every other resample lies more than ``eps`` away from where it could
# matter, so its approximate mean gives the same order statistics and the same count. Series whose values are multiples of
# 2^-e with ``n * max|x| * 2^e < 2^53`` (0/1 outcomes, halves...) are summed exactly in any
# order and need no second look.

_DIRECT_MAX = 6  # up to this many distinct series of one length, gather each resample directly
_U = 2.0 ** -53


@dataclass
class _Series:
    """One distinct series to resample and what will be asked of its resample means: the
    quantile pairs ``(alpha/2, 1 - alpha/2)`` and the shifted-null boundaries ``(observed,
    threshold)``."""

    x: np.ndarray
    quantiles: list[tuple[float, float]] = field(default_factory=list)
    boundaries: list[tuple[float, float]] = field(default_factory=list)


def _quantile_positions(q: float, count: int) -> list[int]:
    """Sorted positions numpy's linear-interpolation quantile may read (its floor and the next
    one, widened by one on each side against the rounding of ``q * (count - 1)``)."""
    v = int(np.floor(q * (count - 1)))
    return [p for p in range(v - 1, v + 3) if 0 <= p < count]


def _dyadic(x: np.ndarray) -> bool:
    """True when every sum of ``n`` values of ``x`` is exact in any order: all values are
    multiples of ``2^-e`` for some ``e <= 30`` and ``n * max|x| * 2^e < 2^53``."""
    top = float(np.abs(x).max()) * x.size
    for e in range(31):
        scaled = x * 2.0**e
        if np.array_equal(scaled, np.floor(scaled)):
            return top * 2.0**e < 2.0**53
    return False


def _scipy_stats():
    """``scipy.stats``, imported when a test first needs it (a second or more to import: the
    bootstrap intervals of an evaluation, a report or a web page never do)."""
    return lazy.scipy_stats()


_ROWS = 8  # at most this many resamples drawn per call in the banded path (state kept before each call)


@lru_cache(maxsize=None)
def _draws_split_freely(n: int) -> bool:
    """True when drawing resamples of size ``n`` a few rows per call gives the same indices as
    one call per block (numpy's bounded integers keep no state between calls but the bit
    generator's: checked once per length, else the banded path is not used)."""
    whole = _generator(20_250_917).integers(0, n, size=(3, n))
    rng = _generator(20_250_917)
    parts = [rng.integers(0, n, size=(1, n)), rng.integers(0, n, size=(2, n))]
    return bool(np.array_equal(whole, np.concatenate(parts)))


def _one_blas_thread() -> contextlib.AbstractContextManager:
    """The BLAS products of the shared draws are thin (one column per series): extra BLAS threads
    save little there and, on a busy machine, wait for each other far longer (measured: twice
    the wall time of the whole comparison on 2 loaded cores), so they run on one thread when
    threadpoolctl is installed. Results never depend on it: the products only decide which
    means are recomputed exactly, with a bound that holds for any summation order."""
    try:
        threadpool_limits = lazy.threadpoolctl().threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _banded_means(items: list[_Series], resamples: int, seed: int) -> list[np.ndarray]:
    """Resample means of every series, exact wherever a quantile or a p-value of the series
    can depend on them (see the comment above); elsewhere within ``eps`` of the exact mean."""
    n = items[0].x.size
    X = np.stack([it.x for it in items], axis=1)
    approx = np.empty((resamples, len(items)), dtype=np.float64)
    rng = _generator(seed)
    # drawn `step` rows per call (the same indices as the blocks of _exact_means: _draws_split_freely);
    # the state before call i (rows step*i ...) is kept to redraw those rows later
    step = max(1, min(_ROWS, _BLOCK // n))
    states: list[dict] = []
    chunk = min(resamples, max(step, _BLOCK // n // step * step))
    counts = np.empty((chunk, n), dtype=np.float64)
    offsets = (np.arange(step) * n)[:, None]
    with _one_blas_thread():
        for start in range(0, resamples, chunk):
            k = min(chunk, resamples - start)
            c = counts[:k]
            for sub in range(0, k, step):
                states.append(rng.bit_generator.state)
                rows = min(step, k - sub)
                idx = rng.integers(0, n, size=(rows, n))
                c[sub : sub + rows] = np.bincount((idx + offsets[:rows]).ravel(), minlength=rows * n).reshape(rows, n)
            np.matmul(c, X, out=approx[start : start + k])
    approx /= n

    means: list[np.ndarray] = []
    redraw: dict[int, list[tuple[int, np.ndarray]]] = {}  # call -> (series, rows)
    for j, it in enumerate(items):
        m = np.clip(approx[:, j], it.x.min(), it.x.max())
        means.append(m)
        if _dyadic(it.x):
            continue
        eps = 8.0 * (n + 2) * _U * float(np.abs(it.x).max())
        band = np.zeros(resamples, dtype=bool)
        for qs in it.quantiles:
            for q in qs:
                pos = _quantile_positions(q, resamples)
                part = np.partition(m, pos)
                band |= (m >= part[pos[0]] - 3 * eps) & (m <= part[pos[-1]] + 3 * eps)
        for observed, threshold in it.boundaries:
            band |= np.abs(np.abs(m - observed) - threshold) <= 3 * eps
        rows = np.flatnonzero(band)
        calls = rows // step
        for call in np.unique(calls):
            redraw.setdefault(int(call), []).append((j, rows[calls == call]))
    for call, asks in sorted(redraw.items()):
        bitgen = np.random.PCG64()
        bitgen.state = states[call]
        first = call * step
        idx = np.random.Generator(bitgen).integers(0, n, size=(min(step, resamples - first), n))
        for j, rows in asks:
            x = items[j].x
            exact = x[idx[rows - first]].mean(axis=1)  # a row's mean does not depend on the other rows
            means[j][rows] = np.clip(exact, x.min(), x.max())
    return means


def _resample_many(items: list[_Series], resamples: int, seed: int) -> list[np.ndarray]:
    if len(items) <= _DIRECT_MAX or not _draws_split_freely(items[0].x.size):
        return _exact_means([it.x for it in items], resamples, _generator(seed))
    return _banded_means(items, resamples, seed)


def _bootstrap_many(
    requests: Sequence[tuple[np.ndarray, float, bool]], resamples: int, seed: int
) -> list[tuple[float, float, int | None]]:
    """For each ``(x, confidence, paired)`` (``x`` non-degenerate: two or more values, not all
    equal) the percentile interval ``(low, high)`` of :func:`bootstrap_ci` and, when ``paired``,
    the shifted-null count of :func:`paired_bootstrap` (``x`` the differences), all resampled
    with ``seed`` -- the same numbers as one call per series, with each block of draws shared
    by every series of its length."""
    out: list[tuple[float, float, int | None]] = [(0.0, 0.0, None)] * len(requests)
    by_length: dict[int, list[int]] = {}
    for i, (x, _, _) in enumerate(requests):
        by_length.setdefault(x.size, []).append(i)
    for members in by_length.values():
        items: list[_Series] = []
        slot: dict[bytes, int] = {}
        which: list[int] = []
        for i in members:
            x, confidence, paired = requests[i]
            key = x.tobytes()
            if key not in slot:
                slot[key] = len(items)
                items.append(_Series(x))
            it = items[slot[key]]
            alpha = 1.0 - confidence
            it.quantiles.append((alpha / 2, 1 - alpha / 2))
            if paired:
                observed = float(x.mean())
                it.boundaries.append((observed, abs(observed) - _TOL * max(1.0, abs(observed))))
            which.append(slot[key])
        means = _resample_many(items, resamples, seed)
        for i, j in zip(members, which):
            x, confidence, paired = requests[i]
            alpha = 1.0 - confidence
            low, high = np.quantile(means[j], [alpha / 2, 1 - alpha / 2])
            count = None
            if paired:
                observed = float(x.mean())
                threshold = abs(observed) - _TOL * max(1.0, abs(observed))
                count = int(np.count_nonzero(np.abs(means[j] - observed) >= threshold))
            out[i] = (float(low), float(high), count)
    return out


def _randomization_many(diffs: Sequence[np.ndarray], trials: int, seed: int) -> list[float]:
    """:func:`randomization_test` p-values of several difference vectors, the same bit for bit.

    Each block of signs is drawn once per length. With several vectors, ``keep @ D`` for all of
    them is one BLAS product per block; where a statistic of a vector lies within ``8 eps`` of
    its threshold (``eps = 8 (n + 2) u sum|d|``, see "shared draws" above), that vector's block is
    recomputed with the one-vector code; vectors of multiples of ``2^-e`` (binary measures) are
    summed exactly in any order."""
    out = [1.0] * len(diffs)
    by_length: dict[int, list[int]] = {}
    for i, d in enumerate(diffs):
        if np.any(d):
            by_length.setdefault(d.size, []).append(i)
    for n, members in by_length.items():
        uniq: dict[bytes, int] = {}
        vectors: list[np.ndarray] = []
        which: list[int] = []
        for i in members:
            key = diffs[i].tobytes()
            if key not in uniq:
                uniq[key] = len(vectors)
                vectors.append(diffs[i])
            which.append(uniq[key])
        counts = _sign_flip_counts(vectors, trials, seed)
        for i, u in zip(members, which):
            out[i] = (counts[u] + 1) / (trials + 1)
    return out


def _sign_flip_counts(vectors: list[np.ndarray], trials: int, seed: int) -> list[int]:
    n = vectors[0].size
    totals = [float(d.sum()) for d in vectors]
    thresholds = [abs(t) - _TOL * max(1.0, float(np.abs(d).sum())) for d, t in zip(vectors, totals)]
    banded = len(vectors) > 1
    if banded:
        D = np.stack(vectors, axis=1)
        eps = [0.0 if _dyadic(d) else 8.0 * (n + 2) * _U * float(np.abs(d).sum()) for d in vectors]
    counts = [0] * len(vectors)
    rng = _generator(seed)
    bytes_per_row = (n + 7) // 8
    with _one_blas_thread():
        for start, k in _blocks(n, trials):
            raw = np.frombuffer(rng.bytes(k * bytes_per_row), dtype=np.uint8).reshape(k, bytes_per_row)
            keep = np.unpackbits(raw, axis=1, count=n).astype(np.float64)  # 1 = sign +1, 0 = sign -1
            if banded:
                approx = keep @ D
            for u, d in enumerate(vectors):
                if banded:
                    stats = np.abs(2.0 * approx[:, u] - totals[u])
                    if eps[u] == 0.0 or not np.any(np.abs(stats - thresholds[u]) <= 8 * eps[u]):
                        counts[u] += int(np.count_nonzero(stats >= thresholds[u]))
                        continue
                # sum(s * d) with s = 2*keep - 1 equals 2 * (keep @ d) - sum(d)
                stats = np.abs(2.0 * np.einsum("ij,j->i", keep, d) - totals[u])  # no BLAS threads
                counts[u] += int(np.count_nonzero(stats >= thresholds[u]))
    return counts


def is_binary(values: Sequence[float] | np.ndarray) -> bool:
    """True when every value is 0 or 1 (booleans and floats 0.0 / 1.0 included)."""
    arr = np.asarray(values, dtype=np.float64)
    return bool(np.all((arr == 0.0) | (arr == 1.0)))


def _as_binary(values, what: str) -> np.ndarray:
    arr = _as_scores(values, what)
    bad = ~((arr == 0.0) | (arr == 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"McNemar's test needs binary outcomes (0/1, e.g. exact match or accuracy); "
            f"{what} has {arr[i]!r} at position {i}"
        )
    return arr.astype(bool)


def mcnemar_exact(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """McNemar's exact test for paired binary outcomes (two-sided).

    With ``n01`` the questions ``a`` gets right and ``b`` wrong and ``n10`` the reverse, returns
    the two-sided exact binomial p-value of ``n01`` successes in ``n01 + n10`` trials with
    probability 1/2, i.e. ``min(1, 2 * P(X <= min(n01, n10)))`` for ``X ~ Binomial(n01 + n10, 1/2)``,
    computed by ``scipy.stats.binomtest(n01, n01 + n10).pvalue``. No discordant pairs gives
    ``p = 1``. Values other than 0/1 raise ``ValueError``."""
    x = _as_binary(a, "a")
    y = _as_binary(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired outcomes must have the same length: a has {x.size}, b has {y.size}")
    n01 = int(np.count_nonzero(x & ~y))
    n10 = int(np.count_nonzero(~x & y))
    n = n01 + n10
    if n == 0:
        return 1.0
    return _floor(float(_scipy_stats().binomtest(n01, n, 0.5).pvalue))


def _signed_rank_exact(d: np.ndarray) -> float:
    """Two-sided p of the signed-rank sum ``T+`` under its exact permutation distribution
    (each non-zero difference positive or negative with probability 1/2, midranks for ties):
    ``min(1, 2 * min(P(T+ <= t), P(T+ >= t)))``, as ``scipy.stats.permutation_test`` computes
    it when enumerating all sign patterns."""
    ranks2 = np.rint(2 * _scipy_stats().rankdata(np.abs(d))).astype(np.int64)  # midranks are multiples of 1/2
    t = int(ranks2[d > 0].sum())
    counts = np.zeros(int(ranks2.sum()) + 1, dtype=np.float64)
    counts[0] = 1.0
    for r in ranks2:
        shifted = np.zeros_like(counts)
        shifted[r:] = counts[: counts.size - r]
        counts = counts + shifted
    total = counts.sum()
    less = counts[: t + 1].sum() / total
    greater = counts[t:].sum() / total
    return min(1.0, 2.0 * min(less, greater))


def wilcoxon(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank test on ``d = a - b`` via ``scipy.stats.wilcoxon``.

    Zero differences are discarded (``zero_method="wilcox"``, Wilcoxon's original convention);
    ``method="auto"`` (scipy: exact null distribution for up to 50 differences without ties or
    zeros, exhaustive permutation for up to 13 with ties/zeros, normal approximation with tie
    correction otherwise -- all deterministic). The exhaustive case is computed here by dynamic
    programming over the signed-rank sums (same p-value as scipy, milliseconds instead of
    seconds). When every difference is 0 the systems are
    indistinguishable and ``p = 1`` (scipy would return NaN with a warning)."""
    x, y = _as_pair(a, b)
    d = x - y
    if not np.any(d):
        return 1.0
    nonzero = d[d != 0]
    if d.size <= 13 and (nonzero.size < d.size or np.unique(np.abs(nonzero)).size < nonzero.size):
        # scipy's "auto" runs an exhaustive permutation test here (seconds for n = 13);
        # the same exact distribution by dynamic programming gives the same p-value.
        return _floor(_signed_rank_exact(nonzero))
    p = float(_scipy_stats().wilcoxon(d, zero_method="wilcox", method="auto").pvalue)
    if not np.isfinite(p):  # defensive: scipy gives NaN only for all-zero input, handled above
        return 1.0
    return _floor(p)


# --------------------------------------------------------------------------- corrections


def _as_pvalues(pvalues: Iterable[float]) -> np.ndarray:
    p = np.asarray(list(pvalues), dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p-values: expected a flat sequence, got shape {p.shape}")
    bad = ~((p >= 0.0) & (p <= 1.0))  # also catches NaN
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"p-values must lie in [0, 1]; position {i} is {p[i]!r}")
    return p


def holm(pvalues: Iterable[float]) -> list[float]:
    """Holm (1979) step-down adjusted p-values, in the input order.

    With ``p_(1) <= ... <= p_(m)`` sorted ascending, ``adj_(i) = max_{j <= i} min(1, (m - j + 1)
    * p_(j))``: monotone in the raw p-values, never below the raw value, capped at 1. Reject at
    level alpha exactly where ``adj < alpha`` (equivalently ``<=``)."""
    p = _as_pvalues(pvalues)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.maximum.accumulate(scaled)
    out = np.empty(m)
    out[order] = adjusted
    return [float(v) for v in out]


def benjamini_hochberg(pvalues: Iterable[float]) -> list[float]:
    """Benjamini-Hochberg (1995) step-up adjusted p-values ("q-values"), in the input order.

    With ``p_(1) <= ... <= p_(m)`` sorted ascending, ``adj_(i) = min_{j >= i} min(1, m / j *
    p_(j))``: monotone, never below the raw value, capped at 1; computed by
    ``scipy.stats.false_discovery_control(p, method="bh")`` (the input checked here first, and
    the result floored at the raw p-value should rounding ever put it one ulp below)."""
    p = _as_pvalues(pvalues)
    if p.size == 0:
        return []
    out = np.maximum(_scipy_stats().false_discovery_control(p, method="bh"), p)
    return [float(v) for v in out]


# --------------------------------------------------------------------------- win / tie / loss


@dataclass(frozen=True)
class WinTieLoss:
    """Questions where ``a`` beats ``b`` (``a - b > eps``), ties (``|a - b| <= eps``), losses."""

    wins: int
    ties: int
    losses: int

    @property
    def n(self) -> int:
        return self.wins + self.ties + self.losses


def win_tie_loss(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, eps: float = 1e-12
) -> WinTieLoss:
    """Count per-question wins, ties and losses of ``a`` against ``b`` (tie when ``|a-b| <= eps``)."""
    x = _as_scores(a, "a")
    y = _as_scores(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired scores must have the same length: a has {x.size}, b has {y.size}")
    d = x - y
    wins = int(np.count_nonzero(d > eps))
    losses = int(np.count_nonzero(d < -eps))
    return WinTieLoss(wins, int(d.size) - wins - losses, losses)


# --------------------------------------------------------------------------- comparison of systems

TESTS = ("bootstrap", "randomization", "wilcoxon", "mcnemar")


@dataclass(frozen=True)
class PairedComparison:
    """One paired comparison of ``system_a`` against ``system_b`` on one measure.

    ``diff`` is the paired-bootstrap CI of ``mean(a - b)`` over the ``n`` common questions;
    ``dropped_a``/``dropped_b`` count each system's question ids left out because they are not
    scored for every compared system. ``p`` holds the raw two-sided p-values per test
    (``"bootstrap"``, ``"randomization"``, ``"wilcoxon"`` and, for binary measures,
    ``"mcnemar"``); ``p_holm`` and ``p_bh`` the same tests adjusted across all comparisons of
    the call (one family per test). ``primary`` names the test that decides ``significant``
    (Holm-adjusted p < ``alpha``) and ``better`` the significantly better system, if any."""

    measure: str
    system_a: str
    system_b: str
    n: int
    dropped_a: int
    dropped_b: int
    mean_a: float
    mean_b: float
    diff: CI
    wtl: WinTieLoss
    p: dict[str, float]
    p_holm: dict[str, float] = field(default_factory=dict)
    p_bh: dict[str, float] = field(default_factory=dict)
    primary: str = "randomization"
    alpha: float = 0.05
    significant: bool = False
    better: str | None = None
    #: why some tests are not in ``p`` (:func:`untested_reason`); "" when every test ran
    untested: str = ""


#: Fewest paired questions for a significance test: below 6, no exact two-sided paired test (sign
#: flips: smallest p = 2 / 2**n) can reach p < 0.05, and a bootstrap p-value is an artefact of
#: resampling a handful of values (n = 2 gave bootstrap "<0.0001" beside randomization 0.5037).
MIN_TEST_N = 6


def untested_reason(d: np.ndarray) -> tuple[str, tuple[str, ...]]:
    """Why tests of the paired differences ``d`` cannot be computed honestly, and which: every
    test for fewer than :data:`MIN_TEST_N` questions; the bootstrap when every difference is the
    same non-zero value (one side constant against the other: every resample equals the observed
    mean, so its "p-value" is 1 / (resamples + 1) whatever n is). Identical series keep p = 1. ``("", ())`` when every test can run."""
    if d.size < MIN_TEST_N:
        return (f"n = {d.size} < {MIN_TEST_N}: too few questions for a significance test (no exact paired test "
                "can reach p < 0.05)", TESTS)
    if d[0] != 0 and np.all(d == d[0]):
        return ("every question has the same non-zero difference: the bootstrap has no variance, so its p-value "
                "would only be the resampling floor (the randomization and Wilcoxon tests are given)", ("bootstrap",))
    return "", ()


def common_ids(scores: Mapping[str, Mapping[str, float]]) -> tuple[list[str], dict[str, int]]:
    """Question ids scored for every system (sorted by ``str``), and per system how many of its
    ids are not in that intersection (so they are dropped from paired tests)."""
    if not scores:
        return [], {}
    sets = {system: set(per) for system, per in scores.items()}
    common = set.intersection(*sets.values())
    if all(type(q) is str for q in common):  # the usual case: the key below reduces to the id itself
        ids = sorted(common)
    else:
        ids = sorted(common, key=lambda q: (str(type(q).__name__), str(q)))
    return ids, {system: len(s - common) for system, s in sets.items()}


def significance_letters(
    comparisons: Sequence[PairedComparison], systems: Sequence[str]
) -> dict[str, str]:
    """Superscript letters per system, as ranx does: system ``i`` (in the order of ``systems``)
    gets letter ``a``, ``b``, ``c``...; a system's cell carries, in letter order, the letters of
    the systems it significantly beats, i.e. every comparison where it has the higher mean and
    the ``primary`` test's Holm-adjusted p-value is below ``alpha`` (``PairedComparison.better``).
    Systems that beat nobody get the empty string."""
    letters = system_letters(systems)
    beaten: dict[str, set[str]] = {s: set() for s in systems}
    for c in comparisons:
        if c.better is None:
            continue
        loser = c.system_b if c.better == c.system_a else c.system_a
        beaten.setdefault(c.better, set()).add(loser)
    return {s: "".join(letters[x] for x in systems if x in beaten.get(s, ())) for s in systems}


def compare_systems(
    scores: Mapping[str, Mapping[str, float]],
    *,
    baseline: str | None = None,
    measure: str = "",
    binary: bool | None = None,
    seed: int = 0,
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    trials: int = 10_000,
    primary: str | None = None,
) -> list[PairedComparison]:
    """Paired comparisons of systems on one measure.

    ``scores`` maps system -> question id -> per-question score. Tests run on the questions
    scored for every system (:func:`common_ids`); the number of ids dropped for each system is
    reported in every comparison (``dropped_a``/``dropped_b``), never silently ignored. With
    ``baseline`` each other system is compared with it (``system_a`` = the other system,
    ``system_b`` = baseline, so positive differences favour the other system); without it,
    every pair ``(i, j)``, ``i < j`` in the order of ``scores``.

    Each comparison runs the paired bootstrap, approximate randomization and Wilcoxon, plus
    McNemar's exact test when the measure is binary (``binary=None`` detects it: every score 0
    or 1). Each test's p-values are Holm- and BH-adjusted across all comparisons of this call.
    Every comparison uses the same ``seed`` so a pair's result does not depend on which other
    systems are compared. ``primary`` (default: ``"mcnemar"`` for binary measures, else
    ``"randomization"``) decides ``significant`` (Holm-adjusted p < ``alpha``) and ``better``."""
    return compare_measures(
        [(measure, scores, binary)], baseline=baseline, seed=seed, alpha=alpha, confidence=confidence,
        resamples=resamples, trials=trials, primary=primary, cis=False,
    )[0][0]


@dataclass
class _Plan:
    """One measure's comparison before any resampling: the aligned arrays and the pairs."""

    measure: str
    systems: list[str]
    n: int
    dropped: dict[str, int]
    arrays: dict[str, np.ndarray]
    binary: bool
    primary: str
    pairs: list[tuple[str, str]]


def _plan(scores: Mapping[str, Mapping[str, float]], baseline: str | None, measure: str, binary: bool | None,
          primary: str | None) -> _Plan:
    if not scores:
        raise ValueError("compare_systems needs at least two systems, got none")
    systems = list(scores)
    if len(systems) < 2:
        raise ValueError(f"compare_systems needs at least two systems, got only {systems[0]!r}")
    if baseline is not None and baseline not in scores:
        raise ValueError(f"baseline {baseline!r} is not among the systems {systems}")
    ids, dropped = common_ids(scores)
    if not ids:
        raise ValueError(f"no question id is scored for every system ({', '.join(map(str, systems))})")
    arrays = {s: _as_scores([scores[s][q] for q in ids], f"scores of {s!r}") for s in systems}
    if binary is None:
        binary = all(is_binary(v) for v in arrays.values())
    if primary is None:
        primary = "mcnemar" if binary else "randomization"
    if primary not in TESTS or (primary == "mcnemar" and not binary):
        raise ValueError(f"primary test must be one of {TESTS[:3] + (('mcnemar',) if binary else ())}, got {primary!r}")
    if baseline is not None:
        pairs = [(s, baseline) for s in systems if s != baseline]
    else:
        pairs = list(combinations(systems, 2))
    return _Plan(measure, systems, len(ids), dropped, arrays, binary, primary, pairs)


def compare_measures(
    tables: Sequence[tuple[str, Mapping[str, Mapping[str, float]], bool | None]],
    *,
    baseline: str | None = None,
    seed: int = 0,
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    trials: int = 10_000,
    primary: str | None = None,
    cis: bool = True,
) -> list[tuple[list[PairedComparison], dict[str, CI]]]:
    """:func:`compare_systems` on several measures at once: ``tables`` holds ``(measure, scores,
    binary)`` per measure; returns per measure its comparisons and (``cis``) each system's
    :func:`bootstrap_ci` over the questions scored for every system (else ``{}``).

    The numbers are exactly those of one :func:`compare_systems` call per measure and one
    :func:`bootstrap_ci` call per system and measure (Holm/BH within each measure); but every
    series of the same length is resampled on one shared set of draws -- they were the same
    seeded draws anyway -- instead of drawing them again for each series (see "shared draws"
    above), which makes comparing many systems on many measures several times faster."""
    plans = [_plan(scores, baseline, measure, binary, primary) for measure, scores, binary in tables]
    _check_confidence(confidence)
    _check_count(resamples, "resamples")
    _check_count(trials, "trials")
    resamples, trials = int(resamples), int(trials)

    requests: list[tuple[np.ndarray, float, bool]] = []
    where: dict[tuple, int] = {}
    diffs: list[np.ndarray] = []
    for i, pl in enumerate(plans):
        for j, (sa, sb) in enumerate(pl.pairs):
            d = pl.arrays[sa] - pl.arrays[sb]
            diffs.append(d)
            if _degenerate(d, confidence) is None:
                where[("pair", i, j)] = len(requests)
                requests.append((d, confidence, True))
        if cis:
            for s in pl.systems:
                if _degenerate(pl.arrays[s], confidence) is None:
                    where[("ci", i, s)] = len(requests)
                    requests.append((pl.arrays[s], confidence, False))
    summaries = _bootstrap_many(requests, resamples, seed)
    randomization = iter(_randomization_many(diffs, trials, seed))
    diff_iter = iter(diffs)

    out: list[tuple[list[PairedComparison], dict[str, CI]]] = []
    for i, pl in enumerate(plans):
        raw: list[tuple[str, str, PairedBootstrap, WinTieLoss, dict[str, float], str]] = []
        for j, (sa, sb) in enumerate(pl.pairs):
            a, b, d = pl.arrays[sa], pl.arrays[sb], next(diff_iter)
            boot = _paired_degenerate(d, confidence, resamples)
            if boot is None:
                boot = _paired_result(d, confidence, resamples, summaries[where[("pair", i, j)]])
            p = {"bootstrap": boot.p, "randomization": next(randomization), "wilcoxon": wilcoxon(a, b)}
            if pl.binary:
                p["mcnemar"] = mcnemar_exact(a, b)
            why, withheld = untested_reason(d)
            p = {t: v for t, v in p.items() if t not in withheld}  # never printed where not honest
            raw.append((sa, sb, boot, win_tie_loss(a, b), p, why))
        ci: dict[str, CI] = {}
        if cis:
            for s in pl.systems:
                x = pl.arrays[s]
                degenerate = _degenerate(x, confidence)
                if degenerate is not None:
                    ci[s] = degenerate
                else:
                    low, high, _ = summaries[where[("ci", i, s)]]
                    ci[s] = CI(float(x.mean()), low, high, int(x.size), confidence)
        out.append((_adjusted(pl, raw, alpha), ci))
    return out


def _adjust_present(raw_p: list[dict[str, float]], adjust: Callable[[list[float]], list[float]]) -> list[dict[str, float]]:
    """Each test's p-values adjusted over the comparisons that have it (a test left out of a
    comparison, :func:`untested_reason`, stays out of its family)."""
    out: list[dict[str, float]] = [{} for _ in raw_p]
    for t in dict.fromkeys(t for p in raw_p for t in p):
        members = [i for i, p in enumerate(raw_p) if t in p]
        for i, v in zip(members, adjust([raw_p[i][t] for i in members])):
            out[i][t] = v
    return out


def _adjusted(pl: _Plan, raw: list[tuple[str, str, PairedBootstrap, WinTieLoss, dict[str, float], str]],
              alpha: float) -> list[PairedComparison]:
    """The comparisons of one measure, Holm- and BH-adjusted per test over its pairs."""
    adj_holm = _adjust_present([r[4] for r in raw], holm)
    adj_bh = _adjust_present([r[4] for r in raw], benjamini_hochberg)
    out: list[PairedComparison] = []
    for i, (sa, sb, boot, wtl, p, why) in enumerate(raw):
        ph, pb = adj_holm[i], adj_bh[i]
        mean_a, mean_b = float(pl.arrays[sa].mean()), float(pl.arrays[sb].mean())
        significant = ph.get(pl.primary, 1.0) < alpha and mean_a != mean_b
        better = (sa if mean_a > mean_b else sb) if significant else None
        out.append(
            PairedComparison(
                measure=pl.measure,
                system_a=sa,
                system_b=sb,
                n=pl.n,
                dropped_a=pl.dropped[sa],
                dropped_b=pl.dropped[sb],
                mean_a=mean_a,
                mean_b=mean_b,
                diff=boot.diff,
                wtl=wtl,
                p=p,
                p_holm=ph,
                p_bh=pb,
                primary=pl.primary,
                alpha=alpha,
                significant=significant,
                better=better,
                untested=why,
            )
        )
    return out
