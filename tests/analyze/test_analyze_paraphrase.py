"""Paraphrase rank curve (Su et al. 2016, GraphQuestions) on hand-computed examples."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgqa.analyze.paraphrase import graphquestions_group, paraphrase_groups, rank_curve

_GQ = runpy.run_path(str((Path(__file__).parents[1] / "analyze_synthetic_gq.py")))
EXPECTED_F1, read_res = _GQ["EXPECTED_F1"], _GQ["read_res"]


def test_synthetic_res_f1():
    scores, _ = read_res()
    assert scores == pytest.approx(EXPECTED_F1)


def test_graphquestions_group():
    assert graphquestions_group("252000102") == 252
    assert graphquestions_group(1000000) == 1
    assert graphquestions_group(" 999999 ") == 0
    with pytest.raises(ValueError, match="integer"):
        graphquestions_group("q1")


def test_rank_curve_synthetic_graphquestions_paper_ratio():
    scores, _ = read_res()
    # groups sorted descending: 252 [1, .5, 0]; 253 [1, 0]; 254 [.6, .4, .2, 0]; 255 [.8]
    curve = rank_curve(scores, graphquestions_group)
    assert [(p.rank, p.n_groups) for p in curve] == [(1, 4), (2, 3), (3, 2), (4, 1)]
    # mean@1 = (1 + 1 + .6 + .8)/4 = .85; @2 = (.5 + 0 + .4)/3 = .3; @3 = (0 + .2)/2 = .1; @4 = 0
    assert [p.mean for p in curve] == pytest.approx([0.85, 0.3, 0.1, 0.0])
    # paper: ratio to the plotted rank-1 value over all groups
    assert [p.ratio_to_rank1 for p in curve] == pytest.approx([1.0, 0.3 / 0.85, 0.1 / 0.85, 0.0])


def test_rank_curve_same_groups_ratio():
    scores, _ = read_res()
    curve = rank_curve(scores, graphquestions_group, ratio="same_groups")
    # rank 2 over 252, 253, 254 whose rank-1 mean is (1 + 1 + .6)/3; rank 3 over 252, 254: .8;
    # rank 4 over 254: .6
    assert [p.ratio_to_rank1 for p in curve] == pytest.approx([1.0, 0.3 / (2.6 / 3), 0.1 / 0.8, 0.0])
    assert [p.mean for p in curve] == pytest.approx([0.85, 0.3, 0.1, 0.0])


def test_rank_curve_matches_reference_script_algorithm():
    """The authors' evaluate.py loop, transcribed, on the same data."""
    scores, _ = read_res()
    pmap: dict[int, list[float]] = {}
    for qid, f1 in scores.items():
        pmap.setdefault(int(qid) // 1000000, []).append(f1)
    for v in pmap.values():
        v.sort(reverse=True)
    expected = []
    for i in range(max(len(v) for v in pmap.values())):
        vals = [v[i] for v in pmap.values() if len(v) > i]
        expected.append((i + 1, len(vals), sum(vals) / len(vals)))
    curve = rank_curve(scores, graphquestions_group)
    assert [(p.rank, p.n_groups) for p in curve] == [e[:2] for e in expected]
    assert [p.mean for p in curve] == pytest.approx([e[2] for e in expected])


def test_rank_curve_with_mapping_and_max_rank():
    scores = {"a": 0.2, "b": 0.9, "c": 0.0, "d": 0.4}
    groups = {"a": "t1", "b": "t1", "c": "t2", "d": "t2"}
    curve = rank_curve(scores, groups, max_rank=1)
    assert len(curve) == 1
    assert curve[0].mean == pytest.approx((0.9 + 0.4) / 2) and curve[0].n_groups == 2
    assert paraphrase_groups(scores, groups) == {"t1": [0.9, 0.2], "t2": [0.4, 0.0]}


def test_zero_rank1_gives_nan_ratio():
    curve = rank_curve({"a": 0.0, "b": 0.0}, {"a": 1, "b": 1})
    assert [p.mean for p in curve] == [0.0, 0.0]
    assert all(math.isnan(p.ratio_to_rank1) for p in curve)


def test_ungrouped_questions_are_an_explicit_choice():
    scores = {"a": 1.0, "b": 0.5, "c": 0.25}
    groups = {"a": "g", "b": "g"}
    with pytest.raises(ValueError, match="1 question\\(s\\) have no paraphrase group: 'c'"):
        rank_curve(scores, groups)
    skip = rank_curve(scores, groups, ungrouped="skip")
    assert [(p.rank, p.mean, p.n_groups) for p in skip] == [(1, 1.0, 1), (2, 0.5, 1)]
    single = rank_curve(scores, groups, ungrouped="singleton")
    assert [(p.rank, p.n_groups) for p in single] == [(1, 2), (2, 1)]
    assert single[0].mean == pytest.approx((1.0 + 0.25) / 2)


def test_bad_arguments():
    with pytest.raises(ValueError, match="ratio"):
        rank_curve({"a": 1.0}, {"a": 1}, ratio="other")
    with pytest.raises(ValueError, match="finite"):
        rank_curve({"a": float("nan")}, {"a": 1})
    assert rank_curve({}, {}) == []


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.integers(0, 10**4), st.floats(0, 1), min_size=1, max_size=60), st.integers(1, 6))
def test_property_curve_shape(scores, n_groups):
    groups = {q: q % n_groups for q in scores}
    curve = rank_curve(scores, groups)
    # group counts are non-increasing, rank 1 covers every group, ratio at rank 1 is 1
    assert curve[0].n_groups == len(set(groups.values()))
    assert all(a.n_groups >= b.n_groups for a, b in zip(curve, curve[1:]))
    assert sum(p.n_groups for p in curve) == len(scores)
    if curve[0].mean > 0:
        assert curve[0].ratio_to_rank1 == pytest.approx(1.0)
    same = rank_curve(scores, groups, ratio="same_groups")
    # within the same groups the k-th best never beats the best
    assert all(p.ratio_to_rank1 <= 1 + 1e-12 for p in same if not math.isnan(p.ratio_to_rank1))
