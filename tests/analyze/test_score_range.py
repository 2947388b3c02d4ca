"""Exact score ranges over a choice of tied rows (issue 25, part 1): the optimisation of
kgqa.analyze.score_range against brute force over every choice, and the ranges annotate()
reports against every legal answer scored by the evaluator itself."""

from __future__ import annotations

from itertools import combinations, product

import pytest
from hypothesis import given, settings, strategies as st

from kgqa.analyze import engine_dependence as ed
from kgqa.analyze.score_range import count_range, reachable
from kgqa.execute.engine_findings import Choice, Finding, QueryAssessment
from kgqa.model import Dataset, Item, Outcome, Prediction, Run, TableAnswer
from kgqa.model.terms import IRI
from kgqa.score import profiles
from kgqa.score.evaluate import evaluate
from kgqa.score.rules import RULES, Counts
from conftest import examples

VALUES = [IRI(f"http://ex.org/v{i}") for i in range(7)]


def _prf(rule: str, i: int):
    def value(tp: int, fp: int, fn: int):
        r = RULES[rule](Counts(tp, fp, fn, tp + fp, tp + fn, tp, tp))
        return None if r is None else r[i]
    return value


def _em(tp: int, fp: int, fn: int) -> float:
    return 1.0 if fp == 0 and fn == 0 else 0.0


MEASURES = {f"{rule}:{i}": _prf(rule, i) for rule in RULES for i in range(3)} | {"em": _em}

@st.composite
def tables(draw):
    width = draw(st.integers(1, 2))
    row = st.tuples(*[st.sampled_from(VALUES)] * width)
    fixed = draw(st.lists(row, max_size=3))
    groups = []
    for _ in range(draw(st.integers(1, 2))):
        pool = draw(st.lists(row, min_size=1, max_size=6))
        groups.append((pool, draw(st.integers(0, len(pool)))))
    gold = frozenset(draw(st.sets(st.sampled_from(VALUES), max_size=5)))
    view = draw(st.sampled_from(["values", "tuples"]))
    return width, fixed, groups, gold, view


def _items(rows, view: str) -> frozenset:
    if view == "values":
        return frozenset(c for r in rows for c in r)
    return frozenset(tuple(sorted(r, key=repr)) if len(r) > 1 else r for r in rows)


@examples(400)
def test_range_equals_brute_force_over_every_choice(examples):
    @settings(max_examples=examples, deadline=None)
    @given(tables())
    def check(table):
        width, fixed, groups, gold, view = table
        if view == "tuples":
            gold = frozenset(_items([(g,) * width for g in gold], view))
        fixed_items = _items(fixed, view)
        reach, exact = reachable([([_items([r], view) for r in pool], k) for pool, k in groups], fixed_items, gold)
        tp0 = len(fixed_items & gold)
        fp0 = len(fixed_items) - tp0
        choices = product(*(combinations(range(len(pool)), k) for pool, k in groups))
        truth: dict[str, list[float]] = {}
        for picks in choices:
            rows = list(fixed) + [groups[g][0][i] for g, pick in enumerate(picks) for i in pick]
            s = _items(rows, view)
            tp = len(s & gold)
            for name, fn in MEASURES.items():
                v = fn(tp, len(s) - tp, len(gold) - tp)
                if v is not None:
                    truth.setdefault(name, []).append(v)
        for name, fn in MEASURES.items():
            got = count_range(reach, tp0, fp0, len(gold), fn)
            want = (min(truth[name]), max(truth[name])) if name in truth else None
            if exact:
                assert got == want, (name, got, want)
            elif want is not None:
                assert got[0] <= want[0] and want[1] <= got[1], (name, got, want)

    check()


def test_one_value_a_row_is_always_exact():
    # 100 tied rows, 10 kept: which gold values the 10 add decides set_F (the CK25 case)
    gold = frozenset(f"g{i}" for i in range(20))
    pool = [frozenset({f"g{i}"}) for i in range(15)] + [frozenset({f"x{i}"}) for i in range(85)]
    fixed = frozenset({f"g{i}" for i in range(15, 19)} | {"y1", "y2", "y3"})
    reach, exact = reachable([(pool, 10)], fixed, gold)
    assert exact and set(reach) == set(range(11)) and reach[0] == {10} and reach[10] == {0}
    lo, hi = count_range(reach, 4, 3, 20, _prf("pytrec", 2))
    assert lo == pytest.approx(2 * 4 / (17 + 20)) and hi == pytest.approx(2 * 14 / (17 + 20))


def test_values_shared_by_rows_are_tracked_exactly():
    # rows (person, country) sharing countries: choosing p1 and p2 adds c once
    pool = [frozenset({"p1", "c"}), frozenset({"p2", "c"}), frozenset({"p3", "d"})]
    reach, exact = reachable([(pool, 2)], frozenset(), frozenset({"p1", "c"}))
    # {p1, c, p2}: 2 gold, 1 other; {p1, c, p3, d}: 2 and 2; {p2, c, p3, d}: 1 and 3
    assert exact and reach == {2: {1, 2}, 1: {3}}


def test_too_many_shared_values_give_a_sound_bound():
    # every row shares a value with the next: more shared values than the programme tracks
    from kgqa.analyze.score_range import MAX_SHARED

    n = MAX_SHARED + 5
    pool = [frozenset({f"v{i}", f"v{i + 1}"}) for i in range(n)]
    gold = frozenset(f"v{i}" for i in range(0, n, 3))
    reach, exact = reachable([(pool, 3)], frozenset(), gold)
    assert not exact
    truth = set()
    for pick in combinations(pool, 3):
        s = frozenset().union(*pick)
        truth.add((len(s & gold), len(s - gold)))
    assert all(nn in reach.get(g, ()) for g, nn in truth)


# --------------------------------------------------------------- through annotate()

@examples(60)
def test_annotated_range_is_exact_and_holds_the_engines_answer(examples):
    @settings(max_examples=examples, deadline=None)
    @given(tables(), st.sampled_from(["kgqa", "text2sparql", "gerbil", "qald"]), st.randoms(use_true_random=False))
    def check(table, profile_name, rnd):
        _check_annotated_range_is_exact_and_holds_the_engines_answer(table, profile_name, rnd)

    check()


def _check_annotated_range_is_exact_and_holds_the_engines_answer(table, profile_name, rnd):
    width, fixed, groups, gold_values, _view = table
    profile = profiles.get(profile_name)
    variables = ("x", "y")[:width]
    choice = Choice(variables, tuple(fixed), tuple((tuple(pool), k) for pool, k in groups))
    legal = choice.answers(10_000)
    engine_answer = legal[rnd.randrange(len(legal))]  # the one the engine gave
    gold = TableAnswer(("x",), tuple((v,) for v in sorted(gold_values, key=str)))
    ds = Dataset("t", [Item("q", {"en": "?"}, answer=gold, sparql="SELECT * {}")])
    run = Run("r", [Prediction("q", sparql="SELECT ...", answer=engine_answer)])
    outcomes = {"q": Outcome.ok(engine_answer)}
    a = QueryAssessment("SELECT ...", [Finding("order-limit", "ties")], True, "ties", choice=choice)
    truth: dict[str, list[float]] = {}
    for x in legal:
        e1 = evaluate(ds, Run("alt", [Prediction("q", answer=x)]), profile)
        for label, v in e1.questions[0].scores.items():
            if v is not None:
                truth.setdefault(label, []).append(v)
    for bound in (10_000, 1):  # every answer scored / the optimisation (bound 1: too many to list)
        e = evaluate(ds, run, profile, predicted=outcomes)
        ed.annotate(e, ds, run, profile, predicted={"q": a}, predicted_outcomes=outcomes, bound=bound)
        d = e.questions[0].details
        rng, kind = d["score_range"], d["score_range_kind"]
        for label, v in e.questions[0].scores.items():
            if v is not None:
                assert rng[label][0] <= v <= rng[label][1]
        for label, vs in truth.items():
            spec = next(s for s in profile.measures if s.label == label)
            # small tables: the optimisation is exact for the count measures
            if kind == "exact" or spec.measure.name in ed.COUNT_MEASURES:
                assert rng[label] == pytest.approx([min(vs), max(vs)]), (label, bound, kind)
            else:
                assert rng[label][0] <= min(vs) and max(vs) <= rng[label][1]
        if bound == 10_000:
            assert kind == "exact"


def test_open_legal_answers_give_a_sound_bound_and_keep_query_measures():
    # SAMPLE: which value the engine samples is not listed; the answer measures get [0, 1],
    # a measure of the query text keeps its value (no answer can change it)
    v = VALUES
    profile = profiles.get("kgqa").select("F1,AnswerEM,QueryEM")
    gold = TableAnswer(("x",), ((v[0],),))
    ds = Dataset("t", [Item("q", {"en": "?"}, answer=gold, sparql="SELECT ?x { ?x ?p ?o }")])
    answer = TableAnswer(("x",), ((v[0],),))
    run = Run("r", [Prediction("q", sparql="SELECT (SAMPLE(?x) AS ?s) { ?x ?p ?o }", answer=answer)])
    outcomes = {"q": Outcome.ok(answer)}
    a = QueryAssessment("...", [Finding("sample", "SAMPLE returns any value of its group")], None, "sample", open=["sample"])
    e = evaluate(ds, run, profile, predicted=outcomes)
    ed.annotate(e, ds, run, profile, predicted={"q": a}, predicted_outcomes=outcomes)
    d = e.questions[0].details
    assert d["score_range_kind"] == "bound"
    assert d["score_range"] == {"F1": [0.0, 1.0], "AnswerEM": [0.0, 1.0], "QueryEM": [0.0, 0.0]}
    assert e.engine_dependence["with_range"] == 1 and e.engine_dependence["with_bound"] == 1
    assert e.engine_dependence["aggregate_range"]["F1"] == [0.0, 1.0]
