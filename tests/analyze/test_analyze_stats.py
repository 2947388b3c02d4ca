"""Statistics of the analyze stage: textbook cases, agreement with scipy, properties."""

from __future__ import annotations

import math
import warnings
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples

from kgqa.analyze.stats import (
    CI,
    benjamini_hochberg,
    bootstrap_ci,
    common_ids,
    compare_systems,
    holm,
    is_binary,
    mcnemar_exact,
    paired_bootstrap,
    randomization_test,
    significance_letters,
    system_letters,
    wilcoxon,
    win_tie_loss,
)


class _Scipy:
    """``scipy.stats``, imported by the first test that uses it (not by collection, on every worker)."""

    def __getattr__(self, name):
        if name.startswith("_"):  # pytest's collection asks for __test__ and the like: no import for that
            raise AttributeError(name)
        from scipy import stats

        return getattr(stats, name)


sps = _Scipy()

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
pairs = st.integers(min_value=1, max_value=40).flatmap(
    lambda n: st.tuples(st.lists(unit, min_size=n, max_size=n), st.lists(unit, min_size=n, max_size=n))
)
binary_pairs = st.integers(min_value=1, max_value=60).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n),
        st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n),
    )
)


# ----------------------------------------------------------------------------- bootstrap_ci


def test_bootstrap_empty_is_nan_with_reason():
    ci = bootstrap_ci([])
    assert ci.n == 0
    assert math.isnan(ci.mean) and math.isnan(ci.low) and math.isnan(ci.high)
    assert "no scores" in ci.reason


def test_bootstrap_single_score_is_degenerate():
    ci = bootstrap_ci([0.4])
    assert (ci.mean, ci.low, ci.high, ci.n) == (0.4, 0.4, 0.4, 1)
    assert "single" in ci.reason


def test_bootstrap_constant_scores_exactly_degenerate():
    ci = bootstrap_ci([0.1] * 7)
    assert (ci.mean, ci.low, ci.high) == (0.1, 0.1, 0.1)
    assert ci.reason is not None


def test_bootstrap_two_values_hand_computed():
    # resample means of [0, 1]: 0 (p=1/4), 0.5 (1/2), 1 (1/4) -> 2.5% quantile 0, 97.5% quantile 1
    assert bootstrap_ci([0.0, 1.0]) == CI(0.5, 0.0, 1.0, 2, 0.95)


def test_bootstrap_three_values_hand_computed():
    # [0, 0, 1]: resample mean k/3, k ~ Binomial(3, 1/3): P(k=0) = 8/27 > 2.5%, so low = 0;
    # P(k <= 2) = 26/27 = 0.963 < 97.5%, so high = 1.
    ci = bootstrap_ci([0.0, 0.0, 1.0])
    assert ci.mean == pytest.approx(1 / 3)
    assert (ci.low, ci.high) == (0.0, 1.0)


def test_bootstrap_agrees_with_scipy_percentile():
    rng = np.random.default_rng(7)
    x = rng.beta(2, 3, size=200)
    ours = bootstrap_ci(x, confidence=0.9, resamples=20_000, seed=3)
    ref = sps.bootstrap((x,), np.mean, method="percentile", confidence_level=0.9, n_resamples=20_000, random_state=11)
    assert ours.mean == pytest.approx(float(x.mean()), abs=1e-15)
    # Monte Carlo tolerance: the standard error of the mean is ~0.014; quantile noise ~0.0005
    assert ours.low == pytest.approx(float(ref.confidence_interval.low), abs=0.003)
    assert ours.high == pytest.approx(float(ref.confidence_interval.high), abs=0.003)
    # and the normal-theory interval as a sanity anchor
    se = float(x.std(ddof=0) / np.sqrt(x.size))
    assert ours.low == pytest.approx(x.mean() - 1.6449 * se, abs=0.004)


def test_bootstrap_deterministic_and_seed_sensitive():
    x = np.random.default_rng(0).random(500)
    assert bootstrap_ci(x, seed=5) == bootstrap_ci(x, seed=5)
    assert bootstrap_ci(list(x), seed=5) == bootstrap_ci(x, seed=5)
    assert bootstrap_ci(x, seed=5) != bootstrap_ci(x, seed=6)


def test_bootstrap_rejects_bad_input():
    with pytest.raises(ValueError, match="finite"):
        bootstrap_ci([0.1, float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([0.1, 0.2], confidence=95)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_ci([0.1, 0.2], resamples=0)


@settings(max_examples=60, deadline=None)
@given(st.lists(unit, min_size=1, max_size=60), st.integers(min_value=0, max_value=2**32))
def test_property_ci_contains_mean(xs, seed):
    ci = bootstrap_ci(xs, resamples=300, seed=seed)
    assert ci.low <= ci.mean + 1e-12
    assert ci.mean <= ci.high + 1e-12
    assert min(xs) <= ci.low and ci.high <= max(xs)


# ----------------------------------------------------------------------------- paired bootstrap


def test_paired_bootstrap_ci_is_bootstrap_of_differences():
    rng = np.random.default_rng(2)
    a, b = rng.random(300), rng.random(300)
    pb = paired_bootstrap(a, b, seed=9)
    assert pb.diff == bootstrap_ci(a - b, seed=9)


def test_paired_bootstrap_identical_systems():
    a = [0.2, 0.5, 1.0, 0.0]
    pb = paired_bootstrap(a, a)
    assert pb.p == 1.0
    assert (pb.diff.mean, pb.diff.low, pb.diff.high) == (0.0, 0.0, 0.0)


def test_paired_bootstrap_clear_difference_hand_computed():
    # d = [1, 1, 1, 1, 0]: mean 0.8; |d* - 0.8| >= 0.8 only if all five draws are the 0
    # (probability 5^-5 = 0.00032), so p is about (0.0003 * B + 1) / (B + 1).
    pb = paired_bootstrap([1, 1, 1, 1, 0], [0, 0, 0, 0, 0], resamples=10_000)
    assert pb.diff.mean == pytest.approx(0.8)
    assert 1 / 10_001 <= pb.p < 0.002
    assert pb.diff.low == pytest.approx(0.4) and pb.diff.high == 1.0


@pytest.mark.parametrize(
    "a, expected",
    [
        # d = [1, 0]: mean 0.5; resample means 0, .5, 1 with prob 1/4, 1/2, 1/4;
        # |d* - 0.5| >= 0.5 for d* in {0, 1} -> p = 1/2
        ([1, 0], 0.5),
        # d = [1, 1, 0]: mean 2/3; |d* - 2/3| >= 2/3 only for d* = 0 (prob 1/27) or d* >= 4/3
        ([1, 1, 0], 1 / 27),
        # d = [1, 0, 0]: mean 1/3; |d* - 1/3| >= 1/3 for d* = 0 (8/27), 2/3 (6/27), 1 (1/27)
        ([1, 0, 0], 15 / 27),
    ],
)
def test_paired_bootstrap_p_hand_computed(a, expected):
    pb = paired_bootstrap(a, [0] * len(a), resamples=20_000, seed=1)
    assert pb.p == pytest.approx(expected, abs=0.012)


def test_paired_bootstrap_length_mismatch():
    with pytest.raises(ValueError, match="same length"):
        paired_bootstrap([1, 0], [1])
    with pytest.raises(ValueError, match="at least one pair"):
        paired_bootstrap([], [])


# ----------------------------------------------------------------------------- randomization


def test_randomization_matches_exact_enumeration():
    # d = [1, 2, 3]: of the 8 sign patterns only +++ and --- reach |sum| = 6 -> exact p = 1/4
    p = randomization_test([1, 2, 3], [0, 0, 0], trials=20_000, seed=1)
    assert p == pytest.approx(0.25, abs=0.012)


def test_randomization_agrees_with_scipy_exact_permutation_test():
    rng = np.random.default_rng(4)
    a = rng.random(10)
    b = a - rng.normal(0.15, 0.2, 10)
    ref = sps.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=np.inf,
    ).pvalue
    # brute force over all 2^10 sign patterns as a second reference
    d = a - b
    stats = [abs(np.dot(s, d)) for s in product([1, -1], repeat=10)]
    exact = sum(v >= abs(d.sum()) - 1e-12 for v in stats) / len(stats)
    assert ref == pytest.approx(exact)
    assert randomization_test(a, b, trials=20_000, seed=2) == pytest.approx(exact, abs=0.01)


def test_randomization_identical_is_one_and_extreme_never_zero():
    assert randomization_test([0.3, 0.3], [0.3, 0.3]) == 1.0
    p = randomization_test([1.0] * 200, [0.0] * 200, trials=1000)
    assert p == 1 / 1001


def test_randomization_deterministic():
    rng = np.random.default_rng(5)
    a, b = rng.random(1000), rng.random(1000)
    assert randomization_test(a, b, seed=3) == randomization_test(a, b, seed=3)


@examples(80)
def test_property_randomization_p_in_open_closed_unit(examples):
    @settings(max_examples=examples, deadline=None)
    @given(pairs, st.integers(min_value=1, max_value=200), st.integers(min_value=0, max_value=2**32))
    def check(ab, trials, seed):
        _check_property_randomization_p_in_open_closed_unit(ab, trials, seed)

    check()


def _check_property_randomization_p_in_open_closed_unit(ab, trials, seed):
    a, b = ab
    p = randomization_test(a, b, trials=trials, seed=seed)
    assert 1 / (trials + 1) <= p <= 1.0
    assert p > 0


# ----------------------------------------------------------------------------- McNemar


def _discordant(n01: int, n10: int, concordant: int = 3) -> tuple[list[int], list[int]]:
    a = [1] * n01 + [0] * n10 + [1] * concordant + [0] * concordant
    b = [0] * n01 + [1] * n10 + [1] * concordant + [0] * concordant
    return a, b


@pytest.mark.parametrize(
    "n01, n10, expected",
    [
        (1, 7, 2 * (1 + 8) / 2**8),  # 0.0703125
        (0, 5, 2 / 2**5),  # 0.0625
        (2, 8, 2 * (1 + 10 + 45) / 2**10),  # 0.109375
        (3, 3, 1.0),  # 2 * 42/64 > 1 -> capped
        (0, 0, 1.0),  # no discordant pairs
    ],
)
def test_mcnemar_textbook(n01, n10, expected):
    a, b = _discordant(n01, n10)
    assert mcnemar_exact(a, b) == pytest.approx(expected, rel=1e-12)
    assert mcnemar_exact(b, a) == pytest.approx(expected, rel=1e-12)


@examples(80)
def test_mcnemar_agrees_with_binomtest(examples):
    @settings(max_examples=examples, deadline=None)
    @given(binary_pairs)
    def check(ab):
        _check_mcnemar_agrees_with_binomtest(ab)

    check()


def _check_mcnemar_agrees_with_binomtest(ab):
    a, b = ab
    x, y = np.array(a, bool), np.array(b, bool)
    n01, n10 = int((x & ~y).sum()), int((~x & y).sum())
    p = mcnemar_exact(a, b)
    expected = 1.0 if n01 + n10 == 0 else sps.binomtest(n01, n01 + n10, 0.5).pvalue
    assert p == pytest.approx(expected, rel=1e-9)
    assert 0 < p <= 1


def test_mcnemar_accepts_bools_and_rejects_non_binary():
    assert mcnemar_exact([True, False], [False, False]) == 1.0
    with pytest.raises(ValueError, match="binary.*0.5.*position 1"):
        mcnemar_exact([1, 0.5], [0, 1])


# ----------------------------------------------------------------------------- Wilcoxon


def test_wilcoxon_textbook_exact():
    # d = [1, 2, 3, -4, 5, 6]: W- = 4; 7 of the 64 sign subsets have rank sum <= 4 -> p = 14/64
    assert wilcoxon([1, 2, 3, -4, 5, 6], [0] * 6) == pytest.approx(14 / 64)


def test_wilcoxon_agrees_with_scipy_and_discards_zeros():
    rng = np.random.default_rng(8)
    a = rng.random(120)
    b = np.where(rng.random(120) < 0.3, a, rng.random(120))  # 30% zero differences
    assert wilcoxon(a, b) == pytest.approx(sps.wilcoxon(a - b, zero_method="wilcox").pvalue)
    nz = (a - b) != 0
    assert wilcoxon(a, b) == pytest.approx(sps.wilcoxon(a[nz] - b[nz]).pvalue)


@pytest.mark.parametrize("rounds", [15, pytest.param(60, marks=pytest.mark.slow)])
def test_wilcoxon_small_samples_with_ties_match_scipy_permutation(rounds):
    # n <= 13 with ties or zeros: scipy enumerates all sign patterns (seconds each at n = 13, so
    # the thorough rounds and n = 13 run in CI's slow run); we use an exact DP
    rng = np.random.default_rng(21)
    checked = 0
    for _ in range(rounds):
        n = int(rng.integers(2, 10))
        a = rng.integers(0, 4, n) / 4
        b = np.where(rng.random(n) < 0.3, a, rng.integers(0, 4, n) / 4)
        if not np.any(a - b):
            continue
        assert wilcoxon(a, b) == pytest.approx(float(sps.wilcoxon(a - b).pvalue), rel=1e-12)
        checked += 1
    assert checked > rounds * 2 // 3
    # hand-computed: d = [1, 1, -2, 0]: zero dropped, midranks 1.5, 1.5, 3; T+ = 3 takes values
    # 0, 1.5, 1.5, 3, 3, 4.5, 4.5, 6 -> P(T+ <= 3) = 5/8, P(T+ >= 3) = 5/8 -> p = 1
    assert wilcoxon([1, 1, 0, 5], [0, 0, 2, 5]) == 1.0
    # d = [2, 2, 2]: T+ = 6 is the maximum, P = 1/8 -> p = 1/4
    assert wilcoxon([2, 2, 2], [0, 0, 0]) == pytest.approx(0.25)
    # n = 13 with ties: exact distribution computed directly (scipy enumerates 2^13 patterns)
    if rounds < 60:
        return
    assert wilcoxon(np.arange(13) % 3, np.zeros(13)) == pytest.approx(
        float(sps.wilcoxon(np.arange(13) % 3, np.zeros(13), zero_method="wilcox").pvalue), rel=1e-9)


def test_wilcoxon_all_zero_differences_is_one_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert wilcoxon([0.5, 1.0, 0.0], [0.5, 1.0, 0.0]) == 1.0


# ----------------------------------------------------------------------------- corrections


def test_holm_textbook():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([]) == []


def test_bh_textbook_and_scipy():
    # sorted: 0.005*4/1 = 0.02, 0.01*4/2 = 0.02, 0.03*4/3 = 0.04, 0.04*4/4 = 0.04
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    ps = np.random.default_rng(3).random(50) ** 3
    assert benjamini_hochberg(ps) == pytest.approx(list(sps.false_discovery_control(ps, method="bh")))


def test_corrections_reject_invalid_p():
    with pytest.raises(ValueError, match="position 1"):
        holm([0.1, 1.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        benjamini_hochberg([float("nan")])


@examples(150)
def test_property_adjusted_at_least_raw_monotone_capped(examples):
    @settings(max_examples=examples, deadline=None)
    @given(st.lists(st.floats(min_value=1e-300, max_value=1.0), min_size=1, max_size=30))
    def check(ps):
        _check_property_adjusted_at_least_raw_monotone_capped(ps)

    check()


def _check_property_adjusted_at_least_raw_monotone_capped(ps):
    for adjust in (holm, benjamini_hochberg):
        adj = adjust(ps)
        assert all(r <= q <= 1.0 for r, q in zip(ps, adj))
        assert all(q > 0 for q in adj)
        for i in range(len(ps)):
            for j in range(len(ps)):
                if ps[i] <= ps[j]:
                    assert adj[i] <= adj[j]
    assert benjamini_hochberg(ps) == pytest.approx(list(sps.false_discovery_control(ps, method="bh")), rel=1e-12)
    # Holm is never less conservative than BH
    assert all(h >= b - 1e-15 for h, b in zip(holm(ps), benjamini_hochberg(ps)))


@settings(max_examples=40, deadline=None)
@given(pairs)
def test_property_all_p_in_unit_interval(ab):
    a, b = ab
    ps = [
        paired_bootstrap(a, b, resamples=200).p,
        randomization_test(a, b, trials=200),
        wilcoxon(a, b),
    ]
    if is_binary(a) and is_binary(b):
        ps.append(mcnemar_exact(a, b))
    assert all(0 < p <= 1 for p in ps)


# ----------------------------------------------------------------------------- win/tie/loss


def test_win_tie_loss():
    wtl = win_tie_loss([1, 0.5, 0.2, 0.3 + 1e-15], [0, 0.5, 0.4, 0.3])
    assert (wtl.wins, wtl.ties, wtl.losses, wtl.n) == (1, 2, 1, 4)


# ----------------------------------------------------------------------------- compare_systems


def _three_systems():
    # A: all 60 right, B: all but q0 right, C: all wrong; C has an extra question, A lacks q59
    a = {f"q{i}": 1.0 for i in range(59)}
    b = {f"q{i}": (0.0 if i == 0 else 1.0) for i in range(60)}
    c = {f"q{i}": 0.0 for i in range(61)}
    return {"A": a, "B": b, "C": c}


def test_compare_intersection_and_dropped_counts():
    comps = compare_systems(_three_systems(), measure="em")
    assert [(c.system_a, c.system_b) for c in comps] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert all(c.n == 59 for c in comps)
    dropped = {(c.system_a, c.system_b): (c.dropped_a, c.dropped_b) for c in comps}
    assert dropped == {("A", "B"): (0, 1), ("A", "C"): (0, 2), ("B", "C"): (1, 2)}
    ids, per_system = common_ids(_three_systems())
    assert len(ids) == 59 and per_system == {"A": 0, "B": 1, "C": 2}


def test_compare_binary_tests_corrections_and_letters():
    comps = compare_systems(_three_systems(), measure="em", seed=1)
    ab, ac, bc = comps
    assert all(c.primary == "mcnemar" for c in comps)
    # A vs C differ by 1 on every question: a bootstrap without variance gives no p-value (issue 34)
    assert set(ab.p) == set(bc.p) == {"bootstrap", "randomization", "wilcoxon", "mcnemar"}
    assert set(ac.p) == {"randomization", "wilcoxon", "mcnemar"} and "same non-zero difference" in ac.untested
    # A vs B: one discordant pair -> McNemar p = 1; A vs C: 59 discordant -> 2 / 2^59
    assert ab.p["mcnemar"] == 1.0
    assert ac.p["mcnemar"] == pytest.approx(2 / 2**59)
    assert bc.p["mcnemar"] == pytest.approx(2 / 2**58)
    assert ab.mean_a == 1.0 and ab.mean_b == pytest.approx(58 / 59)
    assert (ac.wtl.wins, ac.wtl.ties, ac.wtl.losses) == (59, 0, 0)
    for t in ab.p:  # each test's family: the comparisons that have it
        have = [c for c in comps if t in c.p]
        raw = [c.p[t] for c in have]
        assert [c.p_holm[t] for c in have] == holm(raw)
        assert [c.p_bh[t] for c in have] == benjamini_hochberg(raw)
    assert ac.p_holm["mcnemar"] == pytest.approx(3 * 2 / 2**59)
    assert (ab.significant, ab.better) == (False, None)
    assert (ac.significant, ac.better) == (True, "A")
    assert (bc.significant, bc.better) == (True, "B")
    assert significance_letters(comps, ["A", "B", "C"]) == {"A": "c", "B": "c", "C": ""}


def test_compare_significance_uses_corrected_p():
    # A vs B: 6 discordant pairs all for A -> raw McNemar p = 2/64 = 0.03125 < 0.05, but
    # Holm over the three comparisons: 3 * 0.03125 = 0.09375 -> not significant
    # A vs C and B vs C: 3 discordant pairs each way -> raw p = 2/8 = 0.25
    a = {f"q{i}": 1.0 for i in range(20)}
    b = {f"q{i}": (0.0 if i < 6 else 1.0) for i in range(20)}
    c = {f"q{i}": (0.0 if 3 <= i < 6 else 1.0) for i in range(20)}
    ab, ac, bc = compare_systems({"A": a, "B": b, "C": c}, measure="em")
    assert [x.p["mcnemar"] for x in (ab, ac, bc)] == pytest.approx([0.03125, 0.25, 0.25])
    assert [x.p_holm["mcnemar"] for x in (ab, ac, bc)] == pytest.approx([0.09375, 0.5, 0.5])
    assert [x.p_bh["mcnemar"] for x in (ab, ac, bc)] == pytest.approx([0.09375, 0.25, 0.25])
    assert not any(x.significant for x in (ab, ac, bc))
    assert significance_letters([ab, ac, bc], ["A", "B", "C"]) == {"A": "", "B": "", "C": ""}
    # compared alone, the same pair is significant
    (only,) = compare_systems({"A": a, "B": b}, measure="em")
    assert only.p_holm["mcnemar"] == pytest.approx(0.03125) and only.better == "A"


def test_compare_with_baseline_orientation():
    comps = compare_systems(_three_systems(), baseline="C", measure="em")
    assert [(c.system_a, c.system_b) for c in comps] == [("A", "C"), ("B", "C")]
    assert all(c.diff.mean > 0 for c in comps)
    assert significance_letters(comps, ["A", "B", "C"]) == {"A": "c", "B": "c", "C": ""}


def test_compare_non_binary_uses_randomization_and_is_deterministic():
    rng = np.random.default_rng(12)
    base = rng.random(200)
    scores = {
        "x": {i: float(v) for i, v in enumerate(base)},
        "y": {i: float(min(1.0, v + 0.1)) for i, v in enumerate(base)},
        "z": {i: float(v) for i, v in enumerate(rng.random(200))},
    }
    first = compare_systems(scores, measure="f1", seed=4)
    again = compare_systems(scores, measure="f1", seed=4)
    assert first == again
    assert all("mcnemar" not in c.p and c.primary == "randomization" for c in first)
    xy = first[0]
    assert (xy.system_a, xy.system_b, xy.better) == ("x", "y", "y")
    assert xy.p["randomization"] == pytest.approx(1 / 10_001)
    assert significance_letters(first, ["x", "y", "z"])["y"].startswith("a")
    with pytest.raises(ValueError, match="binary"):
        compare_systems(scores, binary=True)


def test_compare_errors():
    with pytest.raises(ValueError, match="at least two"):
        compare_systems({"A": {"q": 1.0}})
    with pytest.raises(ValueError, match="baseline 'Z'"):
        compare_systems({"A": {"q": 1.0}, "B": {"q": 0.0}}, baseline="Z")
    with pytest.raises(ValueError, match="no question id"):
        compare_systems({"A": {"q": 1.0}, "B": {"r": 0.0}})
    with pytest.raises(ValueError, match="'B'.*finite"):
        compare_systems({"A": {"q": 1.0}, "B": {"q": float("nan")}})


def test_system_letters():
    letters = system_letters([f"s{i}" for i in range(28)])
    assert letters["s0"] == "a" and letters["s25"] == "z" and letters["s26"] == "aa" and letters["s27"] == "ab"


# ---------------------------------------------------------------- library vs hand-written (issue 10)


def test_mcnemar_and_bh_are_scipy():
    from scipy import stats as st

    from kgqa.analyze.stats import benjamini_hochberg, mcnemar_exact

    a = [1] * 12 + [0] * 5 + [1] * 3
    b = [0] * 12 + [1] * 5 + [1] * 3
    assert mcnemar_exact(a, b) == st.binomtest(12, 17, 0.5).pvalue
    p = [0.01, 0.04, 0.03, 0.2, 0.04]
    assert benjamini_hochberg(p) == list(st.false_discovery_control(p, method="bh"))


def test_scipy_bootstrap_differs_from_the_hand_written_one_with_the_same_seed():
    """Why bootstrap_ci stays hand-written (its docstring): same seed, another interval."""
    import numpy as np
    from scipy import stats as st

    from kgqa.analyze.stats import bootstrap_ci

    x = np.random.default_rng(3).random(200)
    ours = bootstrap_ci(x, resamples=2000, seed=0)
    res = st.bootstrap((x,), np.mean, n_resamples=2000, method="percentile",
                       random_state=np.random.Generator(np.random.PCG64(0)))
    theirs = res.confidence_interval
    assert (ours.low, ours.high) != (theirs.low, theirs.high)
    assert abs(ours.low - theirs.low) < 0.02 and abs(ours.high - theirs.high) < 0.02  # Monte Carlo error


def test_scipy_permutation_test_differs_from_the_randomization_test():
    """Why randomization_test stays hand-written (its docstring): another p-value convention."""
    import numpy as np
    from scipy import stats as st

    from kgqa.analyze.stats import randomization_test

    rng = np.random.default_rng(5)
    a, b = rng.random(40), rng.random(40) * 0.9
    ours = randomization_test(a, b, trials=999, seed=0)
    theirs = st.permutation_test((a, b), lambda x, y: np.mean(x - y), permutation_type="samples",
                                 n_resamples=999, random_state=np.random.Generator(np.random.PCG64(0))).pvalue
    assert ours != theirs
    assert abs(ours - theirs) < 0.1
