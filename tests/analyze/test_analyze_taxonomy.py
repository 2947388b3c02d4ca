"""Error taxonomy: one hand-built question per label, plus the demo runs' documented errors."""

from __future__ import annotations

import pytest

from kgqa.analyze.taxonomy import LABELS, classify, taxonomy_counts
from kgqa.score.evaluate import QuestionScore
from kgqa.score.rules import Counts

P = "PREFIX : <http://ex.org/> "
GOLD = P + "SELECT ?x WHERE { :Alice :birthPlace ?c . ?c :country ?x }"
ASK = P + "ASK { :Alice :birthPlace :Aldport }"


def rows(*values):
    return {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": v}} for v in values]}}


def q(outcome="ok", pred=None, gold=GOLD, tp=0, fp=1, fn=1, pred_answer=None, gold_answer=None, message="", counts=True):
    details = {"gold_sparql": gold, "predicted_sparql": pred,
               "gold_answer": gold_answer if gold_answer is not None else rows("http://ex.org/Norland"),
               "predicted_answer": pred_answer}
    c = Counts(tp, fp, fn, tp + fp, tp + fn, tp, tp) if counts else None
    return QuestionScore("q1", outcome, {"F1": 1.0 if fp == fn == 0 else 0.0}, message, c, details)


COUNT3 = {"head": {"vars": ["n"]}, "results": {"bindings": [{"n": {"type": "literal", "value": "3",
                                                               "datatype": "http://www.w3.org/2001/XMLSchema#integer"}}]}}
LABELLED = {"head": {"vars": ["x", "l"]}, "results": {"bindings": [
    {"x": {"type": "uri", "value": "http://ex.org/Norland"}, "l": {"type": "literal", "value": "Norland"}}]}}

CASES = [
    # label, question
    ("missing", q(outcome="missing", pred=None)),
    ("missing", q(outcome="missing", pred=GOLD)),  # parses, never executed
    ("parse_error", q(outcome="missing", pred=P + "SELECT ?x WHERE { :Alice :birthPlace ?x")),
    ("parse_error", q(outcome="parse_error", pred="SELEKT", message="syntax error")),
    ("exec_error", q(outcome="exec_error", pred=GOLD, message="boom")),
    ("timeout", q(outcome="timeout", pred=GOLD)),
    ("refused", q(outcome="refused", pred=P + "DELETE WHERE { ?s ?p ?o }")),
    # a live system (kgqa system ask) that failed: no query, the outcome says why
    ("http_error", q(outcome="http_error", pred=None, message="HTTP 500")),
    ("malformed_response", q(outcome="malformed_response", pred=None, message="not JSON")),
    # variables renamed and patterns reordered: canonical-equal
    ("correct", q(pred=P + "SELECT ?y WHERE { ?k :country ?y . :Alice :birthPlace ?k }", tp=1, fp=0, fn=0)),
    ("correct", q(pred=None, tp=1, fp=0, fn=0)),  # answer-only run
    # a property path gives the same answer but is not the same query: an equivalent rewrite
    ("correct", q(pred=P + "SELECT ?x WHERE { :Alice :birthPlace/:country ?x }", tp=1, fp=0, fn=0)),
    # a count matched by chance with another entity: a number is easily matched
    ("right_answer_wrong_reason", q(gold=P + "SELECT (COUNT(?c) AS ?n) WHERE { :Alice :child ?c }",
                                    pred=P + "SELECT (COUNT(?c) AS ?n) WHERE { :Bob :child ?c }",
                                    gold_answer=COUNT3, pred_answer=COUNT3, tp=1, fp=0, fn=0)),
    # the gold values plus a label column
    ("extra_columns", q(pred=P + "SELECT ?x ?l WHERE { :Alice :birthPlace ?c . ?c :country ?x . ?x :label ?l }",
                        pred_answer=LABELLED)),
    ("wrong_form", q(gold=P + "SELECT (COUNT(?c) AS ?n) WHERE { :Alice :child ?c }",
                     pred=P + "SELECT ?c WHERE { :Alice :child ?c }", gold_answer=COUNT3, pred_answer=rows("http://ex.org/C1"))),
    ("wrong_form", q(pred=P + "SELECT ?x WHERE { :Alice :birthPlace ?x }", gold=ASK,
                     gold_answer={"head": {}, "boolean": True})),
    ("wrong_form", q(pred=None, gold=None, gold_answer={"head": {}, "boolean": True},
                     pred_answer=rows("http://ex.org/Aldport"))),
    ("empty_answer", q(outcome="empty", pred=P + "SELECT ?x WHERE { :Alice :birthplace ?c . ?c :country ?x }", fp=0)),
    ("wrong_entity", q(pred=P + "SELECT ?x WHERE { :Bob :birthPlace ?c . ?c :country ?x }")),
    ("wrong_predicate", q(pred=P + "SELECT ?x WHERE { :Alice :residence ?c . ?c :country ?x }")),
    # same IRIs, direction reversed
    ("wrong_structure", q(pred=P + "SELECT ?x WHERE { ?c :birthPlace :Alice . ?c :country ?x }")),
    ("same_query_wrong_answer", q(pred=GOLD)),
    ("wrong_answer", q(pred=None)),
]


@pytest.mark.parametrize("label,question", CASES, ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)])
def test_each_label(label, question):
    assert classify(question).label == label


def test_every_label_is_covered():
    assert {c[0] for c in CASES} == set(LABELS)


def test_flags_explain_an_empty_answer():
    lab = classify(q(outcome="empty", pred=P + "SELECT ?x WHERE { :Alice :birthplace ?c . ?c :country ?x }", fp=0))
    assert lab.flags == ("predicate", "structure")
    lab = classify(q(pred=P + "SELECT ?x WHERE { :Bob :residence ?c . ?c :country ?x }"))
    assert lab.label == "wrong_entity" and lab.flags == ("entity", "predicate", "structure")


def test_answer_equality_without_counts_uses_scores():
    assert classify(q(pred=None, counts=False, fp=0, fn=0)).label == "correct"
    assert classify(q(pred=None, counts=False)).label == "wrong_answer"


def test_demo_runs_documented_errors():
    import kgqa
    from kgqa.demo import DATA
    from kgqa.analyze.taxonomy import classify_evaluation

    evs = kgqa.evaluate_many(str(DATA / "questions.json"), [str(DATA / "runs" / f"{r}.json") for r in ("strong", "medium", "weak")])
    labels = {e.run.rsplit("-", 1)[-1]: {k: v.label for k, v in classify_evaluation(e).items()} for e in evs}
    # from kgqa/demo/data/README.md, "Deliberate errors"
    assert labels["strong"]["2"] == "wrong_predicate"
    assert labels["strong"]["29"] == "wrong_entity"
    assert labels["strong"]["1"] == "correct"
    assert labels["medium"]["6"] == "parse_error"
    assert labels["medium"]["28"] == "missing"
    assert labels["medium"]["9"] == "wrong_structure"  # ORDER direction
    assert labels["weak"]["15"] == "wrong_form"  # ASK answered as SELECT
    assert labels["weak"]["2"] == "empty_answer"
    counts = taxonomy_counts(evs)
    assert sum(counts[evs[0].run].values()) == 30


def test_rewrites_and_chance_matches_are_told_apart():
    rewrite = classify(q(pred=P + "SELECT ?x WHERE { :Alice :birthPlace/:country ?x }", tp=1, fp=0, fn=0))
    assert rewrite.flags == ("rewrite",) and "equivalent rewrite" in rewrite.reason
    chance = classify(CASES[[c[0] for c in CASES].index("right_answer_wrong_reason")][1])
    assert "http://ex.org/Bob" in chance.reason and chance.flags == ("entity",)
    extra = classify(CASES[[c[0] for c in CASES].index("extra_columns")][1])
    assert "?x" in extra.reason and "?l" in extra.reason and "--view values" in extra.reason
