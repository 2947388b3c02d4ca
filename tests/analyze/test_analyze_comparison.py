"""Multi-run comparison on hand-built evaluations: means, W/T/L and tests equal the stats
functions on the aligned scores; family='all' re-adjusts; determinism; errors."""

from __future__ import annotations

import json

import pytest
from analysis_evals import make_eval

from kgqa.analyze import stats
from kgqa.analyze.comparison import compare_evaluations, load_evaluations
from kgqa.model import InputError

IDS = [f"q{i}" for i in range(12)]
A = dict(zip(IDS, [1, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.5, 0, 1.0]))
B = dict(zip(IDS, [1, 0, 0, 0, 1, 0, 0, 0, 0.5, 0, 0, 0.0]))
C = dict(zip(IDS, [1, 1, 0, 1, 1, 0, 1, 0, 0.5, 0.5, 0, 1.0]))


@pytest.fixture(scope="module")
def cmp():
    return compare_evaluations([make_eval("A", A), make_eval("B", B), make_eval("C", C)], resamples=2000, trials=2000)


def test_measures_and_corpus_only(cmp):
    assert [m.measure for m in cmp.measures] == ["F1", "AnswerEM"]
    assert cmp.corpus_only == ["microF1"]
    f1, em = cmp.measures
    assert f1.binary is False and em.binary is True
    assert f1.ci["A"].mean == pytest.approx(10 / 12)  # 8 ones + .5 + .5 + 0 + 1
    assert f1.ci["B"].mean == pytest.approx(2.5 / 12)
    assert f1.n == 12 and f1.dropped == {"A": 0, "B": 0, "C": 0}


def test_pairs_match_stats_functions(cmp):
    f1 = cmp.measures[0]
    ab = next(c for c in f1.comparisons if (c.system_a, c.system_b) == ("A", "B"))
    a = [A[k] for k in sorted(IDS)]
    b = [B[k] for k in sorted(IDS)]
    # hand count: A > B on q1,q2,q3,q5,q6,q7,q9,q11 (8); equal on q0,q4,q8,q10 (4)
    assert (ab.wtl.wins, ab.wtl.ties, ab.wtl.losses) == (8, 4, 0)
    assert ab.diff.mean == pytest.approx((10 - 2.5) / 12)
    assert ab.p["randomization"] == stats.randomization_test(a, b, trials=2000, seed=0)
    assert ab.p["wilcoxon"] == stats.wilcoxon(a, b)
    assert "mcnemar" not in ab.p
    em = cmp.measures[1]
    ab_em = next(c for c in em.comparisons if (c.system_a, c.system_b) == ("A", "B"))
    assert ab_em.p["mcnemar"] == stats.mcnemar_exact([float(x == 1) for x in a], [float(x == 1) for x in b])
    # Holm over the three pairs of F1, randomization
    raw = [c.p["randomization"] for c in f1.comparisons]
    assert [c.p_holm["randomization"] for c in f1.comparisons] == stats.holm(raw)
    assert [c.p_bh["randomization"] for c in f1.comparisons] == stats.benjamini_hochberg(raw)


def test_letters_follow_significance(cmp):
    f1 = cmp.measures[0]
    for s in cmp.systems:
        beaten = {c.system_b if c.better == c.system_a else c.system_a for c in f1.comparisons if c.better == s}
        assert f1.letters[s] == "".join(stats.system_letters(cmp.systems)[x] for x in cmp.systems if x in beaten)
    assert f1.best() == "A"


def test_family_all_adjusts_over_every_comparison():
    evs = [make_eval("A", A), make_eval("B", B), make_eval("C", C)]
    allc = compare_evaluations(evs, family="all", resamples=500, trials=500)
    flat = [c for m in allc.measures for c in m.comparisons]
    raw = [c.p["randomization"] for c in flat]
    assert [c.p_holm["randomization"] for c in flat] == stats.holm(raw)
    mc = [c for c in flat if "mcnemar" in c.p]
    assert [c.p_holm["mcnemar"] for c in mc] == stats.holm([c.p["mcnemar"] for c in mc])


def test_baseline_and_determinism():
    evs = [make_eval("A", A), make_eval("B", B), make_eval("C", C)]
    one = compare_evaluations(evs, baseline="B", seed=7, resamples=500, trials=500)
    two = compare_evaluations(evs, baseline="B", seed=7, resamples=500, trials=500)
    assert json.dumps(one.to_json()) == json.dumps(two.to_json())
    assert [(c.system_a, c.system_b) for c in one.measures[0].comparisons] == [("A", "B"), ("C", "B")]


def test_dropped_ids_are_reported():
    short = {k: v for k, v in B.items() if k != "q0"}
    c = compare_evaluations([make_eval("A", A), make_eval("B", short)], resamples=200, trials=200)
    assert c.measures[0].n == 11 and c.measures[0].dropped == {"A": 1, "B": 0}


def test_errors():
    with pytest.raises(ValueError, match="at least two"):
        compare_evaluations([make_eval("A", A)])
    with pytest.raises(ValueError, match="baseline 'Z'"):
        compare_evaluations([make_eval("A", A), make_eval("B", B)], baseline="Z")
    with pytest.raises(ValueError, match="different datasets"):
        compare_evaluations([make_eval("A", A), make_eval("B", B, dataset="other")])
    with pytest.raises(ValueError, match="microF1"):
        compare_evaluations([make_eval("A", A), make_eval("B", B)], measures=["microF1"])


def test_duplicate_run_names_get_suffixes():
    c = compare_evaluations([make_eval("A", A), make_eval("A", B)], resamples=200, trials=200)
    assert c.systems == ["A", "A#2"]


def test_load_evaluations_round_trip_and_errors(tmp_path):
    e = make_eval("A", A)
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"runs": [e.to_json(), make_eval("B", B).to_json()]}))
    got = load_evaluations([p])
    assert [x.run for x in got] == ["A", "B"]
    assert {q.id: q.scores["F1"] for q in got[0].questions} == A
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": 1}')
    with pytest.raises(InputError, match="bad.json.*not a saved kgqa evaluation"):
        load_evaluations([bad])
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(InputError, match="broken.json: not JSON"):
        load_evaluations([broken])


def test_one_call_for_all_measures_gives_the_per_measure_results():
    """compare_evaluations resamples every measure in one call (shared draws, issue 17): the
    result is what one compare_systems and one bootstrap_ci call per measure and system give."""
    from kgqa.analyze.characteristics import per_question_scores

    evs = [make_eval("A", A), make_eval("B", B), make_eval("C", C)]
    for baseline in (None, "C"):
        got = compare_evaluations(evs, baseline=baseline, seed=4, resamples=700, trials=600, confidence=0.9)
        for m in got.measures:
            scores = {s: per_question_scores(e, m.measure) for s, e in zip(got.systems, evs)}
            assert m.comparisons == stats.compare_systems(scores, baseline=baseline, measure=m.measure, binary=m.binary,
                                                          seed=4, resamples=700, trials=600, confidence=0.9)
            for s in got.systems:
                assert m.ci[s] == stats.bootstrap_ci([scores[s][q] for q in sorted(IDS)], confidence=0.9,
                                                     resamples=700, seed=4)
