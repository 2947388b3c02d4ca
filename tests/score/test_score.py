"""Score stage: edge-case rules, measures, profiles, evaluator (unit and property tests)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from kgqa.model import BooleanAnswer, Dataset, IRI, Item, Literal, Prediction, Run, Status, TableAnswer
from kgqa.score import measures, profiles, rules
from kgqa.score.evaluate import evaluate
from kgqa.score.rules import Counts

XSD = "http://www.w3.org/2001/XMLSchema#"


def col(*values) -> TableAnswer:
    return TableAnswer.single_column([IRI(v) if v.startswith("http") else Literal(v) for v in values])


def run_of(answers: dict[str, object], name="sys") -> Run:
    preds = []
    for qid, a in answers.items():
        if isinstance(a, Status):
            preds.append(Prediction(qid, sparql="SELECT", status=a, message="boom"))
        else:
            preds.append(Prediction(qid, answer=a))
    return Run(name, preds)


def ds_of(golds: dict[str, object]) -> Dataset:
    return Dataset("t", [Item(qid, {"en": f"q{qid}"}, answer=a) for qid, a in golds.items()])


def score(golds, answers, profile="kgqa", measures_=None):
    prof = profiles.get(profile)
    if measures_:
        prof = prof.with_measures(measures.parse_list(measures_))
    return evaluate(ds_of(golds), run_of(answers), prof)


# ----------------------------------------------------------------- GERBIL rules by hand


@pytest.mark.parametrize(
    "tp,fp,fn,expected",
    [
        (0, 0, 0, (1.0, 1.0, 1.0)),  # nothing to find, nothing found
        (0, 2, 0, (0.0, 0.0, 0.0)),  # gold empty, system answered
        (0, 0, 3, (0.0, 0.0, 0.0)),  # system empty, gold not
        (0, 1, 1, (0.0, 0.0, 0.0)),
        (1, 1, 0, (0.5, 1.0, 2 / 3)),
        (2, 0, 2, (1.0, 0.5, 2 / 3)),
        (3, 1, 2, (0.75, 0.6, 2 * 0.75 * 0.6 / 1.35)),
    ],
)
def test_gerbil_rule_by_hand(tp, fp, fn, expected):
    c = Counts(tp, fp, fn, tp + fp, tp + fn, tp, tp)
    assert rules.gerbil_rule(c) == pytest.approx(expected)


def test_gerbil_profile_macro_micro_and_qald_f1():
    golds = {"1": col("a", "b"), "2": col("c"), "3": col(), "4": col("d", "e", "f")}
    answers = {"1": col("a"), "2": col(), "3": col(), "4": col("d", "x")}
    e = score(golds, answers, "gerbil")
    # per question (gerbil rule): 1: P1 R.5 F.667; 2: 0,0,0; 3: 1,1,1; 4: P.5 R.333 F.4
    assert e.aggregate["Macro Precision"] == pytest.approx((1 + 0 + 1 + 0.5) / 4)
    assert e.aggregate["Macro Recall"] == pytest.approx((0.5 + 0 + 1 + 1 / 3) / 4)
    assert e.aggregate["Macro F1 score"] == pytest.approx((2 / 3 + 0 + 1 + 0.4) / 4)
    # micro: TP=2, FP=1, FN=4
    assert e.aggregate["Micro Precision"] == pytest.approx(2 / 3)
    assert e.aggregate["Micro Recall"] == pytest.approx(2 / 6)
    assert e.aggregate["Micro F1 score"] == pytest.approx(2 * (2 / 3) * (1 / 3) / (1.0))
    # Macro F1 QALD: question 2 (empty system answer, gold not empty) counts P=1, R=0
    p = (1 + 1 + 1 + 0.5) / 4
    r = (0.5 + 0 + 1 + 1 / 3) / 4
    assert e.aggregate["Macro F1 QALD"] == pytest.approx(2 * p * r / (p + r))


def test_gerbil_qald_f1_guard_zero_over_zero():
    # every answer wrong and non-empty: P = R = 0 -> GERBIL prints NaN, kgqa 0.0
    e = score({"1": col("a")}, {"1": col("b")}, "gerbil")
    assert e.aggregate["Macro F1 QALD"] == 0.0


def test_failures_are_empty_answers_in_gerbil_but_zero_in_kgqa():
    golds = {"1": col(), "2": col("a")}
    answers = {"1": Status.EXEC_ERROR, "2": col("a")}
    g = score(golds, answers, "gerbil")
    assert g.aggregate["Macro F1 score"] == 1.0  # the error became an empty answer matching empty gold
    k = score(golds, answers, "kgqa")
    assert k.aggregate["F1"] == 0.5
    assert k.outcomes == {"exec_error": 1, "ok": 1}
    assert [q.outcome for q in k.questions] == ["exec_error", "ok"]


def test_qald_rules():
    golds = {"1": col(), "2": col(), "3": col("a"), "4": col("a", "b")}
    answers = {"1": col(), "2": col("x"), "3": col(), "4": col("a")}
    e = score(golds, answers, "qald")
    p, r = (1 + 0 + 1 + 1) / 4, (1 + 0 + 0 + 0.5) / 4
    assert e.aggregate["Macro Precision (all)"] == pytest.approx(p)
    assert e.aggregate["Macro Recall (all)"] == pytest.approx(r)
    # evaluation.rb's macro F1 is the F of the averaged P and R (fscore(macro_p, macro_r))
    assert e.aggregate["Macro F1 (all)"] == pytest.approx(2 * p * r / (p + r))
    # processed = present in the system file (empty answers included): all four here
    assert e.aggregate["Macro Precision (processed)"] == pytest.approx(p)
    # micro: correct 1, system rows 2 (x, a), gold rows 3
    assert e.aggregate["Micro Precision (all)"] == pytest.approx(1 / 2)
    assert e.aggregate["Micro Recall (all)"] == pytest.approx(1 / 3)
    assert e.aggregate["Micro Recall (processed)"] == pytest.approx(1 / 3)


def test_qald_omitted_question_scores_zero_and_is_not_processed():
    golds = {"1": col("a"), "2": col("b")}
    e = score(golds, {"1": col("a")}, "qald")
    assert e.aggregate["Macro Precision (all)"] == pytest.approx(0.5)
    assert e.aggregate["Macro Precision (processed)"] == pytest.approx(1.0)
    assert e.aggregate["Micro Recall (all)"] == pytest.approx(0.5)
    assert e.aggregate["Micro Recall (processed)"] == pytest.approx(1.0)


def test_pytrec_rule_both_empty_is_zero():
    assert rules.pytrec_rule(Counts(0, 0, 0, 0, 0, 0, 0)) == (0.0, 0.0, 0.0)
    assert rules.pytrec_rule(Counts(1, 1, 0, 2, 1, 1, 1)) == pytest.approx((0.5, 1.0, 2 / 3))


def test_graphquestions_lists_count_duplicates_and_empty_gold_is_skipped():
    golds = {"1": col("a", "b"), "2": col()}
    answers = {"1": col("a", "a", "c"), "2": col("x")}
    e = score(golds, answers, "graphquestions")
    # P = 2 of 3 predicted entries are in gold; R = 1 of 2 gold entries found
    q1 = e.questions[0].scores
    assert q1["Average Precision"] == pytest.approx(2 / 3)
    assert q1["Average Recall"] == pytest.approx(0.5)
    assert "Average F1" not in e.questions[1].scores  # undefined, not 0
    assert e.aggregate["Average F1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_typed_matching_numbers_dates_language_iri():
    gold = TableAnswer.single_column([
        Literal("8", XSD + "int"), Literal("2020-01-05", XSD + "date"), Literal("Berlin", language="en"),
        IRI("http://ex.org/a%40b"),
    ])
    system = TableAnswer.single_column([
        Literal("8.0", XSD + "decimal"), Literal("2020-01-05T00:00:00Z", XSD + "dateTime"), Literal("Berlin"),
        IRI("http://ex.org/a@b"),
    ])
    e = score({"1": gold}, {"1": system}, "kgqa")
    assert e.aggregate["F1"] == 1.0
    # lexically only "Berlin" (language tags are not part of the lexical form) agrees
    g = score({"1": gold}, {"1": system}, "gerbil")
    assert g.aggregate["Macro F1 score"] == pytest.approx(0.25)


def test_tuple_view_keeps_rows():
    gold = TableAnswer(("a", "b"), ((IRI("http://x/1"), IRI("http://x/2")), (IRI("http://x/3"), IRI("http://x/4"))))
    mixed = TableAnswer(("b", "a"), ((IRI("http://x/2"), IRI("http://x/3")), (IRI("http://x/4"), IRI("http://x/1"))))
    e = score({"1": gold}, {"1": mixed}, "kgqa")
    assert e.aggregate["F1"] == 0.0  # same values, wrong pairs
    e2 = score({"1": gold}, {"1": mixed}, "gerbil")
    assert e2.aggregate["Macro F1 score"] == 1.0  # flattened values agree


def test_booleans():
    e = score({"1": BooleanAnswer(True), "2": BooleanAnswer(False)}, {"1": BooleanAnswer(True), "2": BooleanAnswer(True)})
    assert [q.scores["F1"] for q in e.questions] == [1.0, 0.0]
    assert e.aggregate["AnswerEM"] == 0.5


def test_missing_and_unknown_ids_are_reported():
    e = score({"1": col("a"), "2": col("b")}, {"1": col("a"), "9": col("z")})
    assert e.missing_ids == ["2"]
    assert e.unknown_ids == ["9"]
    assert {"id": "9", "reason": "in the run but not in the dataset"} in e.skipped
    assert e.aggregate["F1"] == 0.5
    assert e.outcomes == {"missing": 1, "ok": 1}


def test_items_without_gold_are_skipped_with_reason():
    e = score({"1": col("a"), "2": None}, {"1": col("a"), "2": col("b")})
    assert len(e.questions) == 1
    assert e.skipped[0]["id"] == "2" and "no gold answer" in e.skipped[0]["reason"]


def test_hits_and_mrr_use_ranked_lists():
    ds = ds_of({"1": col("b"), "2": col("z")})
    run = Run("r", [
        Prediction("1", ranked=[Literal("a"), Literal("b"), Literal("c")]),
        Prediction("2", ranked=[Literal("a")]),
    ])
    prof = profiles.get("kgqa").with_measures(measures.parse_list("Hits(k=1),Hits(k=2),MRR"))
    e = evaluate(ds, run, prof)
    assert e.aggregate["Hits"] == 0.0
    assert e.aggregate["Hits(k=2)"] == 0.5
    assert e.aggregate["MRR"] == pytest.approx((0.5 + 0) / 2)


def test_measure_parsing_and_keys():
    m = measures.parse("F1(rule=gerbil,agg=micro)")
    assert m.key == "F1(rule=gerbil,agg=micro)"
    assert measures.parse("F1").key == "F1"
    assert measures.parse("Hits(k=5)").kwargs == {"k": 5}
    with pytest.raises(ValueError, match="unknown measure"):
        measures.parse("F2")
    with pytest.raises(ValueError, match="expected one of"):
        measures.parse("F1(rule=nope)")
    with pytest.raises(ValueError, match="no parameter"):
        measures.parse("F1(beta=2)")
    assert measures.split_list("P(rule=qald,agg=micro), R ,F1") == ["P(rule=qald,agg=micro)", "R", "F1"]


def test_signature_names_profile_and_settings():
    e = score({"1": col("a")}, {"1": col("a")}, "gerbil")
    assert e.signature.startswith("kgqa:")
    assert "profile:gerbil" in e.signature and "match:lexical" in e.signature and "fail:empty" in e.signature
    assert e.signature.endswith("n:1")


def test_every_builtin_profile_loads():
    assert set(profiles.names()) >= {"kgqa", "gerbil", "qald", "text2sparql", "graphquestions"}


# ----------------------------------------------------------------- properties

values = st.sampled_from(["a", "b", "c", "d", "http://x/1", "http://x/2", "1", "1.0", "2"])
answer_sets = st.lists(values, max_size=5)
ALL_PROFILES = ["kgqa", "gerbil", "qald", "text2sparql", "graphquestions"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(answer_sets, answer_sets), min_size=1, max_size=6), st.sampled_from(ALL_PROFILES))
def test_scores_in_unit_interval(pairs, profile):
    golds = {str(i): col(*g) for i, (g, _) in enumerate(pairs)}
    answers = {str(i): col(*s) for i, (_, s) in enumerate(pairs)}
    e = score(golds, answers, profile)
    for v in e.aggregate.values():
        assert math.isnan(v) or 0.0 <= v <= 1.0
    for q in e.questions:
        for v in q.scores.values():
            assert 0.0 <= v <= 1.0


@settings(max_examples=60, deadline=None)
@given(answer_sets, answer_sets, st.sampled_from(["kgqa", "gerbil", "text2sparql"]))
def test_precision_recall_swap_symmetry(g, s, profile):
    a = score({"1": col(*g)}, {"1": col(*s)}, profile)
    b = score({"1": col(*s)}, {"1": col(*g)}, profile)
    labels = {"kgqa": ("P", "R"), "gerbil": ("Macro Precision", "Macro Recall"), "text2sparql": ("set_P", "set_recall")}[profile]
    assert a.aggregate[labels[0]] == pytest.approx(b.aggregate[labels[1]])
    assert a.aggregate[labels[1]] == pytest.approx(b.aggregate[labels[0]])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(values, values), min_size=1, max_size=5), st.lists(st.tuples(values, values), max_size=5), st.randoms(), st.sampled_from(["kgqa", "gerbil", "qald"]))
def test_row_and_variable_permutation_invariance(gold_rows, sys_rows, rnd, profile):
    def table(rows, swap):
        vs = ("y", "x") if swap else ("x", "y")
        return TableAnswer(vs, tuple((Literal(b), Literal(a)) if swap else (Literal(a), Literal(b)) for a, b in rows))

    shuffled = list(sys_rows)
    rnd.shuffle(shuffled)
    a = score({"1": table(gold_rows, False)}, {"1": table(sys_rows, False)}, profile)
    b = score({"1": table(gold_rows, False)}, {"1": table(shuffled, True)}, profile)
    assert a.aggregate.keys() == b.aggregate.keys()
    for k in a.aggregate:  # NaN (nothing to average, e.g. no processed question) equals NaN
        assert a.aggregate[k] == b.aggregate[k] or (math.isnan(a.aggregate[k]) and math.isnan(b.aggregate[k]))


@settings(max_examples=30, deadline=None)
@given(answer_sets)
def test_both_empty_rules_as_documented(s):
    both_empty = {p: score({"1": col()}, {"1": col()}, p) for p in ALL_PROFILES}
    assert both_empty["kgqa"].aggregate["F1"] == 1.0
    assert both_empty["gerbil"].aggregate["Macro F1 score"] == 1.0
    assert both_empty["qald"].aggregate["Macro F1 (all)"] == 1.0  # evaluation.rb: empty gold, no row
    assert both_empty["text2sparql"].aggregate["set_F"] == 0.0
    assert math.isnan(both_empty["graphquestions"].aggregate["Average F1"])  # undefined, skipped
    assert both_empty["graphquestions"].questions[0].scores == {}


def test_qald_profile_reads_executed_gold_and_leaves_out_a_failed_gold_query():
    from kgqa.model import Dataset, Item, Outcome, Prediction, Run
    from kgqa.score.evaluate import evaluate as evaluate_scored

    ds = Dataset("d", [Item("1", {"en": "a?"}, "SELECT 1", col("a")), Item("2", {"en": "b?"}, "SELECT 2", col("b"))])
    run = Run("r", [Prediction("1", answer=col("z")), Prediction("2", answer=col("x"))])
    gold = {"1": Outcome.ok(col("z")), "2": Outcome(Status.EXEC_ERROR, None, "boom")}
    e = evaluate_scored(ds, run, profiles.get("qald"), gold=gold)
    assert e.aggregate["Macro Precision (all)"] == 1.0 and e.aggregate["Micro Recall (all)"] == 1.0
