"""Breakdowns by question characteristic on a synthetic GraphQuestions file, hand-computed."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgqa.analyze.breakdown import NONE, Cell, assign_bin, bin_labels, breakdown
from kgqa.analyze.stats import bootstrap_ci

_GQ = runpy.run_path(str((Path(__file__).parents[1] / "analyze_synthetic_gq.py")))
read_res = _GQ["read_res"]


def _by(field: str) -> tuple[dict, dict]:
    scores, chars = read_res()
    return scores, {q: c[field] for q, c in chars.items()}


def _summary(cells: list[Cell]) -> list[tuple]:
    return [(c.key, c.n, round(c.mean, 12)) for c in cells]


def test_by_edges_with_hand_computed_ci():
    scores, keys = _by("edges")
    cells = breakdown(scores, keys)
    # 1 edge: F1 1, .5, 0; 2 edges: 0, 1, .8; 3 edges: .4, .2, .6, 0
    assert _summary(cells) == [(1, 3, 0.5), (2, 3, 0.6), (3, 4, 0.3)]
    # three scores including a 0 and a 1: P(all three draws = 0) = P(all = 1) = 1/27 > 2.5%,
    # so the percentile interval is exactly [0, 1]
    assert (cells[0].low, cells[0].high) == (0.0, 1.0)
    assert (cells[1].low, cells[1].high) == (0.0, 1.0)
    ref = bootstrap_ci([0.4, 0.2, 0.6, 0.0], seed=0)
    assert (cells[2].low, cells[2].high) == (ref.low, ref.high)
    assert 0.0 < cells[2].low < 0.3 < cells[2].high < 0.6


def test_by_function_orders_strings():
    scores, keys = _by("function")
    cells = breakdown(scores, keys)
    assert _summary(cells) == [("comparative", 1, 0.8), ("count", 2, 0.5), ("none", 3, 0.5), ("superlative", 4, 0.3)]
    assert (cells[0].low, cells[0].high) == (0.8, 0.8)  # n = 1: degenerate


def test_commonness_bins_as_in_the_paper():
    scores, keys = _by("commonness")
    cells = breakdown(scores, keys, bins=[-40, -30, -20, -10, 0])
    assert _summary(cells) == [
        ("[-40, -30)", 4, 0.3),
        ("[-30, -20)", 2, 0.5),
        ("[-20, -10)", 3, 0.5),
        ("[-10, 0]", 1, 0.8),
    ]


def test_answer_cardinality_one_vs_many():
    scores, keys = _by("cardinality")
    cells = breakdown(scores, keys, bins=[1, 2, 10])
    # card 1: 252 (1, .5, 0) and 253 (0, 1); card > 1: 254 (.4, .2, .6, 0) and 255 (.8)
    assert _summary(cells) == [("[1, 2)", 5, 0.5), ("[2, 10]", 5, 0.4)]


def test_quantile_bins():
    scores, keys = _by("commonness")
    # commonness sorted: -35 x4, -25 x2, -12 x3, -5 -> quantiles 0, .5, 1 = -35, -25, -5
    cells = breakdown(scores, keys, bins=2, ci=False)
    assert _summary(cells) == [("[-35, -25)", 4, 0.3), ("[-25, -5]", 6, 0.55)]
    assert all(math.isnan(c.low) and math.isnan(c.high) for c in cells)


def test_multi_membership_and_none_cell():
    scores = {"q1": 1.0, "q2": 0.5, "q3": 0.0, "q4": 0.25, "q5": 0.75}
    keys = {"q1": ["x", "y"], "q2": ["y", "y"], "q3": [], "q4": None, "extra": "z"}
    cells = breakdown(scores, keys, ci=False)
    # q2's duplicate key counts once; q3 (empty list), q4 (None), q5 (absent) -> "(none)"
    assert _summary(cells) == [("x", 1, 1.0), ("y", 2, 0.75), (NONE, 3, round((0.0 + 0.25 + 0.75) / 3, 12))]


def test_mixed_keys_order_numbers_then_strings():
    scores = {i: float(i) / 10 for i in range(1, 7)}
    keys = {1: 10, 2: 2, 3: "b", 4: "a", 5: 2.5, 6: float("nan")}
    cells = breakdown(scores, keys, ci=False)
    assert [c.key for c in cells] == [2, 2.5, 10, "a", "b", NONE]
    assert [c.n for c in cells] == [1, 1, 1, 1, 1, 1]


def test_values_outside_the_edges_get_open_cells():
    scores = {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}
    keys = {"a": -1, "b": 0.5, "c": 1, "d": 2}
    cells = breakdown(scores, keys, bins=[0, 1], ci=False)
    assert _summary(cells) == [("(-inf, 0)", 1, 0.1), ("[0, 1]", 2, 0.25), ("(1, inf)", 1, 0.4)]


def test_bin_labels_and_assignment():
    assert bin_labels([0, 0.2, 0.4, 0.6]) == ["[0, 0.2)", "[0.2, 0.4)", "[0.4, 0.6]"]
    assert bin_labels([0.1, 0.10001, 0.2]) == ["[0.1, 0.10001)", "[0.10001, 0.2]"]
    edges = [0, 0.2, 0.4]
    assert [assign_bin(v, edges) for v in (-0.1, 0, 0.1999, 0.2, 0.4, 0.41)] == [-1, 0, 0, 1, 1, 2]


def test_binning_errors():
    with pytest.raises(ValueError, match="question 'q2'.*numeric.*'many'"):
        breakdown({"q1": 1.0, "q2": 0.0}, {"q1": 1, "q2": "many"}, bins=[0, 1, 2])
    with pytest.raises(ValueError, match="strictly increasing"):
        breakdown({"q1": 1.0}, {"q1": 1}, bins=[0, 2, 1])
    with pytest.raises(ValueError, match="at least two edges"):
        breakdown({"q1": 1.0}, {"q1": 1}, bins=[0])


def test_deterministic():
    scores, keys = _by("edges")
    assert breakdown(scores, keys, seed=3) == breakdown(scores, keys, seed=3)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.integers(0, 500),
        st.tuples(st.floats(0, 1), st.one_of(st.none(), st.integers(0, 4), st.lists(st.integers(0, 4), max_size=3))),
        max_size=40,
    )
)
def test_property_counts_and_ci(data):
    scores = {q: s for q, (s, _) in data.items()}
    keys = {q: k for q, (_, k) in data.items()}
    cells = breakdown(scores, keys, resamples=200)
    none = [c for c in cells if c.key == NONE]
    keyed = [c for c in cells if c.key != NONE]
    members = {q: set(k if isinstance(k, list) else [k]) - {None} for q, k in keys.items()}
    assert sum(c.n for c in keyed) == sum(len(m) for m in members.values())
    assert (none[0].n if none else 0) == sum(1 for m in members.values() if not m)
    assert [c.key for c in keyed] == sorted(c.key for c in keyed)
    for c in cells:
        assert c.low <= c.mean + 1e-12 and c.mean <= c.high + 1e-12
