"""GERBIL QA sub-experiments C2KB, P2KB, RE2KB, AT, AIT2KB: hand-computed cases."""

from __future__ import annotations

import pytest

from kgqa.model import BooleanAnswer, Dataset, IRI, Item, Literal, Outcome, Prediction, Run, Status, TableAnswer
from kgqa.model.terms import XSD
from kgqa.score import measures, profiles
from kgqa.score.evaluate import evaluate
from kgqa.score.gerbil_subexperiments import ait_query, answer_type, c2kb, p2kb, re2kb
from kgqa.score.measures import ItemContext
from kgqa.score.rules import Counts

DBO, DBR = "http://dbpedia.org/ontology/", "http://dbpedia.org/resource/"
RDF_TYPE = IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
V = ("var",)

G1 = ("SELECT DISTINCT ?uri WHERE { ?uri rdf:type dbo:City . ?uri dbo:country dbr:Germany . "
      "?uri dbo:populationTotal ?p . FILTER(?p > 250000) }")
P1 = "SELECT ?x WHERE { ?x a dbo:Town . ?x dbo:country dbr:Germany . dbr:Germany dbo:capital ?x }"
G2 = 'ASK { dbr:X dbo:height "1.80"^^xsd:decimal }'
P2 = "ASK { dbr:X dbo:height 1.8 }"

CITIES = TableAnswer.single_column([IRI(DBR + "Berlin"), IRI(DBR + "Hamburg")])


def test_markings_derived_from_a_query():
    assert c2kb(G1) == {IRI(DBR + "Germany")}  # the class is no C2KB resource
    assert p2kb(G1) == {IRI(DBO + "country"), IRI(DBO + "populationTotal")}
    assert re2kb(G1) == {(V, RDF_TYPE, IRI(DBO + "City")), (V, IRI(DBO + "country"), IRI(DBR + "Germany")),
                         (V, IRI(DBO + "populationTotal"), V)}
    assert ait_query(G1) == {IRI(DBO + "City")}
    assert ait_query("SELECT ?n WHERE { ?x a dbo:City ; rdfs:label ?n }") == frozenset()  # ?x not projected
    assert ait_query("SELECT * WHERE { ?x a dbo:City }") == {IRI(DBO + "City")}
    assert ait_query("ASK { ?x a dbo:City }") == frozenset()
    assert re2kb(G2) == re2kb(P2)  # literal by value: "1.80"^^xsd:decimal = 1.8
    assert re2kb('ASK { dbr:X rdfs:label "Berlin"@de }') == re2kb('ASK { dbr:X rdfs:label "Berlin" }')
    assert p2kb("SELECT ?p WHERE { dbr:X ?p ?o . dbr:X dbo:a/dbo:b ?o }") == frozenset()


def test_strict_parse_yields_nothing_for_a_broken_query_tolerant_reads_it():
    broken = P1[: P1.rindex("}")] + " FILTER("
    assert c2kb(broken) == frozenset()
    assert c2kb(broken, "tolerant") == {IRI(DBR + "Germany")}


def _eval(spec, cases, profile="gerbil"):
    items, preds, outs = [], [], {}
    for i, (gq, ga, pq, out) in enumerate(cases):
        qid = str(i + 1)
        items.append(Item(qid, sparql=gq, answer=ga))
        preds.append(Prediction(qid, sparql=pq))
        outs[qid] = out
    prof = profiles.get(profile).with_measures(measures.parse_list(spec))
    return evaluate(Dataset("t", items), Run("r", preds), prof, predicted=outs)


def test_macro_and_micro_scores_by_hand():
    nums = TableAnswer.single_column([Literal("3", XSD + "integer")])
    e = _eval(
        "C2KB,P2KB,P2KB(agg=micro,part=P),RE2KB,RE2KB(part=P),RE2KB(agg=micro),AIT2KB,AIT2KB(agg=micro,part=R),AT,AT(agg=micro)",
        [(G1, CITIES, P1, Outcome.ok(nums)), (G2, BooleanAnswer(True), P2, Outcome.ok(BooleanAnswer(False)))],
    )
    q1, q2 = (q.scores for q in e.questions)
    assert q1["C2KB"] == 1.0 and q2["C2KB"] == 1.0
    assert q1["P2KB"] == pytest.approx(0.5) and q2["P2KB"] == 1.0
    assert q1["RE2KB"] == pytest.approx(1 / 3) and q1["RE2KB(part=P)"] == pytest.approx(1 / 3)
    assert q2["RE2KB"] == 1.0
    assert q1["AIT2KB"] == 0.0 and q2["AIT2KB"] == 1.0  # City vs Town; both empty -> 1 (GERBIL rule)
    assert q1["AT"] == 0.0 and q2["AT"] == 1.0  # resource vs number; boolean vs boolean
    agg = e.aggregate
    assert agg["P2KB"] == pytest.approx(0.75)
    # micro P2KB: TP = 1 + 1, FP = 1 + 0 -> P = 2/3
    assert agg["P2KB(agg=micro,part=P)"] == pytest.approx(2 / 3)
    # micro RE2KB: TP = 1 + 1, FP = 2, FN = 2 -> P = R = F = 1/2
    assert agg["RE2KB(agg=micro)"] == pytest.approx(0.5)
    # micro AIT2KB recall: TP = 0, FN = 1 -> 0 (the empty second question adds nothing)
    assert agg["AIT2KB(agg=micro,part=R)"] == 0.0
    assert agg["AT(agg=micro)"] == pytest.approx(0.5)
    assert "AT(agg=micro)" not in q1  # micro has no per-question value


def test_failed_query_has_no_answer_type_and_missing_gold_query_is_undefined():
    e = _eval("AT,C2KB", [(G1, CITIES, P1, Outcome(Status.TIMEOUT)), (None, CITIES, P1, Outcome.ok(CITIES))])
    q1, q2 = (q.scores for q in e.questions)
    assert q1["AT"] == 0.0 and q1["C2KB"] == 1.0  # markings come from the query, not the execution
    assert q2 == {"AT": 1.0}


def test_answer_types():
    col = TableAnswer.single_column
    assert answer_type(BooleanAnswer(False)) == "boolean"
    assert answer_type(col([IRI("http://x/a")])) == "resource"
    assert answer_type(col([Literal("12")])) == "number"  # untyped number (Text2SPARQL bags)
    assert answer_type(col([Literal("1.5e3", XSD + "double")])) == "number"
    assert answer_type(col([Literal("1990-05-01", XSD + "date")])) == "date"
    assert answer_type(col([Literal("1990", XSD + "gYear")])) == "date"
    assert answer_type(col([Literal("2001-01-01")])) == "date"
    assert answer_type(col([Literal("Berlin", language="en")])) == "string"
    assert answer_type(col([Literal("true", XSD + "boolean")])) == "boolean"
    assert answer_type(col([IRI("http://x/a"), Literal("x")])) == "resource"
    assert answer_type(col([Literal("3"), Literal("x")])) == "string"
    assert answer_type(col([]), "SELECT (COUNT(?x) AS ?c) { ?x a dbo:City }") == "number"
    assert answer_type(col([]), "ASK { ?x a dbo:City }") == "boolean"
    assert answer_type(col([]), "SELECT ?x { ?x a dbo:City }") is None


def test_at_gold_label_option():
    e = _eval("AT,AT(gold=label)", [(G1, CITIES, P1, Outcome.ok(TableAnswer.single_column([Literal("3")])))])
    assert e.questions[0].scores["AT"] == 0.0
    ds = Dataset("t", [Item("1", sparql=G1, answer=CITIES, answer_type="number")])
    prof = profiles.get("gerbil").with_measures(measures.parse_list("AT,AT(gold=label)"))
    ev = evaluate(ds, Run("r", [Prediction("1", sparql=P1)]), prof,
                  predicted={"1": Outcome.ok(TableAnswer.single_column([Literal("3")]))})
    assert ev.questions[0].scores == {"AT": 0.0, "AT(gold=label)": 1.0}


def test_ait2kb_from_the_kg_reads_extra_and_is_undefined_without_it():
    m = measures.parse("AIT2KB(source=kg)")
    base = dict(id="1", item=Item("1", sparql=G1, answer=CITIES), outcome=Outcome.ok(CITIES),
                gold_items=frozenset(), sys_items=frozenset(), counts=Counts(0, 0, 0, 0, 0, 0, 0), failed=False,
                prediction=Prediction("1", sparql=P1))
    assert m.item_value(ItemContext(**base)) is None
    ctx = ItemContext(**base, extra={"answer_types": {"gold": [DBO + "City", DBO + "Place"], "system": [DBO + "City"]}})
    assert m.item_value(ctx) == pytest.approx(2 / 3)
    failed = ItemContext(**{**base, "outcome": Outcome(Status.EXEC_ERROR)},
                         extra={"answer_types": {"gold": [DBO + "City"], "system": [DBO + "City"]}})
    assert m.item_value(failed) == 0.0


def test_gerbil_profile_lists_every_sub_experiment_with_macro_and_micro_prf():
    labels = [s.label for s in profiles.get("gerbil").measures]
    assert labels[:7] == ["Micro Precision", "Micro Recall", "Micro F1 score", "Macro Precision", "Macro Recall",
                          "Macro F1 score", "Macro F1 QALD"]
    for sub in ("C2KB", "P2KB", "RE2KB", "AT", "AIT2KB"):
        for agg in ("Micro", "Macro"):
            for part in ("Precision", "Recall", "F1 score"):
                assert f"{sub} {agg} {part}" in labels
