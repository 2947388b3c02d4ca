"""Question annotation (Reyd & Zouaq 2023, Sect. 3.1): raw / tagged / tag-end."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import kgqa.cli as cli
from kgqa.make.annotate import (annotate_dataset, annotate_item, element_text, fetch_labels, kb_elements,
                                 label_mentions, template_mentions)
from kgqa.execute.embedded import EmbeddedEngine
from kgqa.load import load_dataset
from kgqa.model import IRI, Dataset, Item, Literal

DBR, DBP = "http://dbpedia.org/resource/", "http://dbpedia.org/property/"
COKE = IRI(DBR + "Richard_Coke")
OFFICE = IRI(DBP + "office")
QUESTION = "what is the office of richard coke ?"
QUERY = f"select distinct ?uri where {{ <{COKE.value}> <{OFFICE.value}> ?uri }}"
TAGGED = "what is the dbp:office of dbr:Richard_Coke ?"
TAG_END = "what is the office of richard coke ? <sep> dbr:Richard_Coke richard coke <sep> dbp:office office"


def test_richard_coke_from_templates():
    item = Item("1", {"en": QUESTION}, QUERY, metadata={
        "question_template": "what is the <1> of <2> ?", "query_template": "select distinct ?uri where { <2> <1> ?uri }"})
    a = annotate_item(item)
    assert a.annotated and a.missing == []
    assert a.variants == {"raw": QUESTION, "tagged": TAGGED, "tag-end": TAG_END}
    assert [(m.element, m.text, m.source) for m in a.mentions] == [(COKE, "richard coke", "template"),
                                                                  (OFFICE, "office", "template")]


@pytest.fixture(scope="module")
def coke_engine(tmp_path_factory):
    ttl = tmp_path_factory.mktemp("kg") / "coke.ttl"
    ttl.write_text(
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "@prefix foaf: <http://xmlns.com/foaf/0.1/> .\n"
        f"<{COKE.value}> rdfs:label \"Richard Coke\"@en , \"Richard Coke (Politiker)\"@de ; foaf:name \"R. Coke\" .\n"
        f"<{OFFICE.value}> rdfs:label \"office\"@en , \"Amt\"@de .\n"
        f"<{DBR}Texas> rdfs:label \"Texas\"@en .\n", encoding="utf-8")
    with EmbeddedEngine.from_files([ttl], workers=1) as eng:
        yield eng


def test_fetch_labels_through_engine(coke_engine):
    labels = fetch_labels(coke_engine, [COKE, OFFICE, IRI(DBR + "Nobody")])
    assert labels == {COKE: ["R. Coke", "Richard Coke"], OFFICE: ["office"]}
    assert fetch_labels(coke_engine, [OFFICE], lang=None) == {OFFICE: ["Amt", "office"]}


def test_richard_coke_from_kb_labels(coke_engine):
    ds = Dataset("coke", [Item("1", {"en": QUESTION}, QUERY)], "jsonl")
    (a,) = annotate_dataset(ds, coke_engine)
    assert a.variants == {"raw": QUESTION, "tagged": TAGGED, "tag-end": TAG_END}
    assert [(m.text, m.label, m.score) for m in a.mentions] == [("richard coke", "Richard Coke", 100.0),
                                                               ("office", "office", 100.0)]


def test_missing_mentions_are_reported_not_guessed(coke_engine):
    q = f"SELECT ?x WHERE {{ <{COKE.value}> <{OFFICE.value}> ?x . ?x <{DBP}state> <{DBR}Texas> }}"
    item = Item("2", {"en": "Which office did Coke hold?"}, q)
    (a,) = annotate_dataset(Dataset("d", [item], "jsonl"), coke_engine)
    # "Coke" alone is not "Richard Coke" (ratio 50 < 85), dbp:state has no label, Texas is not in the question
    assert not a.annotated and a.variants == {}
    assert a.missing == [COKE, IRI(DBP + "state"), IRI(DBR + "Texas")]
    assert a.reason == "no mention found for dbr:Richard_Coke, dbp:state, dbr:Texas"
    (b,) = annotate_dataset(Dataset("d", [item], "jsonl"), coke_engine, require="any")
    assert b.variants["tagged"] == "Which dbp:office did Coke hold?"
    assert b.variants["tag-end"] == "Which office did Coke hold? <sep> dbp:office office"
    assert b.missing == a.missing
    (c,) = annotate_dataset(Dataset("d", [item], "jsonl"), coke_engine, min_score=40)
    assert [m.text for m in c.mentions if m.element == COKE] == ["Coke"]


def test_fuzzy_match_snaps_to_words_and_resolves_overlaps():
    ny, york = IRI(DBR + "New_York"), IRI(DBR + "York")
    labels = {ny: ["New York"], york: ["York"]}
    ms = label_mentions("Who was born in new-york or New York?", labels, [york, ny])
    assert [(m.element, m.text) for m in ms] == [(ny, "New York")]  # "York" would overlap the longer span
    ms = label_mentions("Mayors of York, and of New York?", labels, [york, ny])
    assert [(m.element, m.text, m.start) for m in ms] == [(york, "York", 10), (ny, "New York", 23)]
    ms = label_mentions("who is resposible for it", {OFFICE: ["responsible for"]}, [OFFICE])
    assert ms[0].text == "resposible for" and 96 < ms[0].score < 97


def test_literals_are_elements_and_match_their_lexical_form():
    q = 'PREFIX dbo: <http://dbpedia.org/ontology/> SELECT ?x WHERE { ?x dbo:name "Marketing"@en ; a dbo:Company }'
    elements, prefixes = kb_elements(q)
    assert elements == [IRI("http://dbpedia.org/ontology/name"), Literal("Marketing", language="en"),
                        IRI("http://dbpedia.org/ontology/Company")]
    a = annotate_item(Item("1", {"en": "Which company is Marketing?"}, q), labels={}, require="any")
    assert a.variants["tagged"] == 'Which company is "Marketing"@en?'
    assert a.missing == [IRI("http://dbpedia.org/ontology/name"), IRI("http://dbpedia.org/ontology/Company")]


def test_element_text():
    assert element_text(COKE) == "dbr:Richard_Coke"
    assert element_text(IRI(DBR + "Coke_(politician)")) == f"<{DBR}Coke_(politician)>"
    assert element_text(IRI(DBR + "A.")) == f"<{DBR}A.>"  # a local name cannot end with '.'
    assert element_text(IRI("http://x.org/ns/a%40b")) == "<http://x.org/ns/a%40b>"
    assert element_text(IRI("http://x.org/ns/a%40b"), {"x": "http://x.org/ns/"}) == "x:a%40b"
    assert element_text(COKE, {"me": DBR}) == "me:Richard_Coke"  # given prefixes before the table
    assert element_text(Literal("5", "http://www.w3.org/2001/XMLSchema#integer")) == \
        '"5"^^<http://www.w3.org/2001/XMLSchema#integer>'


def test_templates_that_do_not_fit():
    assert template_mentions(QUESTION, QUERY, "who is the <1> of <2> ?", "select ?uri where { <2> <1> ?uri }") is None
    assert template_mentions(QUESTION, QUERY, "what is the <1> of <2> ?",
                             "select ?uri where { <2> <1> ?uri . ?uri a <3> }") is None
    # repeated placeholder must repeat the same text; literal placeholders work
    q = 'SELECT ?x WHERE { ?x <http://p/name> "Coke" . ?x <http://p/alias> "Coke" }'
    ms = template_mentions("coke or coke?", q, "<1> or <1>?", "SELECT ?x WHERE { ?x <http://p/name> <1> . ?x <http://p/alias> <1> }")
    assert [(m.element, m.text) for m in ms] == [(Literal("Coke"), "coke")]
    assert template_mentions("coke or pepsi?", q, "<1> or <1>?",
                             "SELECT ?x WHERE { ?x <http://p/name> <1> . ?x <http://p/alias> <1> }") is None


def test_items_without_query_or_elements():
    assert annotate_item(Item("1", {"en": "hi"})).reason == "no gold query"
    a = annotate_item(Item("2", {"en": "anything?"}, "SELECT * WHERE { ?s ?p ?o }"))
    assert not a.annotated and a.reason == "the query has no KB elements"


# --------------------------------------------------------------------------- CK25


@pytest.fixture(scope="module")
def ck25_engine(shared_data):
    with EmbeddedEngine.from_files([shared_data / "ck25" / "graphs" / "prod-inst.ttl"], workers=1) as eng:
        yield eng


def test_ck25(shared_data, ck25_engine):
    ds = load_dataset("ck25")
    strict = annotate_dataset(ds, ck25_engine, prefixes={"prodi": "http://ld.company.org/prod-instances/"})
    assert [a.id for a in strict if a.annotated] == ["ck25:40", "ck25:50"]
    by_id = {a.id: a for a in strict}
    assert by_id["ck25:40"].variants["tag-end"] == (
        "Which hardware items - list id and name - have no active product manager? <sep> pv:Hardware hardware "
        "<sep> pv:id id <sep> pv:name name <sep> pv:hasProductManager product manager")
    assert by_id["ck25:50"].variants["tagged"] == \
        "Which department is pv:responsibleFor the most product and how many product are this?"
    assert all(a.reason.startswith("no mention found for ") for a in strict if not a.annotated)
    loose = annotate_dataset(ds, ck25_engine, require="any", prefixes={"prodi": "http://ld.company.org/prod-instances/"})
    assert sum(a.annotated for a in loose) == 46
    assert sorted(a.id for a in loose if not a.annotated) == ["ck25:22", "ck25:36", "ck25:41", "ck25:43"]
    two = {a.id: a for a in loose}["ck25:2"]
    assert two.variants["tagged"] == "What is the telephone of prodi:empl-Baldwin.Dirksen%40company.org?"
    assert [element_text(e, two.prefixes) for e in two.missing] == ["pv:phone"]


def test_cli_annotate_ck25(shared_data, tmp_path):
    cli._register()
    out = tmp_path / "ck25-tag-end.jsonl"
    r = CliRunner().invoke(cli.app, ["annotate", "ck25", "--kg", str(shared_data / "ck25" / "graphs" / "prod-inst.ttl"),
                                     "--mode", "tag-end", "--require", "any", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "annotated 46/50 questions (tag-end, require any)" in r.output and "ck25:22: no mention found" in r.output
    ds = load_dataset(out)
    # the 4 that cannot be annotated are kept in their raw form (never silently dropped), and say why
    assert len(ds) == 50 and sum(" <sep> " in it.questions["en"] for it in ds) == 46
    assert ds["ck25:22"].metadata["annotation"] == "raw" and ds["ck25:22"].metadata["not_annotated"].startswith("no mention")
    assert " <sep> " not in ds["ck25:22"].questions["en"]
    assert ds["ck25:40"].metadata["raw_question"].startswith("Which hardware items")
    rep = json.loads((tmp_path / "ck25-tag-end.jsonl.report.json").read_text())
    assert rep["annotated"] == 46 and [s["id"] for s in rep["not_annotated"]] == ["ck25:22", "ck25:36", "ck25:41", "ck25:43"]
    assert rep["fallback_raw"] == 4
    r = CliRunner().invoke(cli.app, ["annotate", "ck25", "--kg", str(shared_data / "ck25" / "graphs" / "prod-inst.ttl"),
                                     "--mode", "tag-end", "--require", "any", "--unannotated", "drop", "-o", str(out)])
    assert r.exit_code == 0 and "left out (--unannotated drop)" in " ".join(r.output.split()) and len(load_dataset(out)) == 46
    r = CliRunner().invoke(cli.app, ["annotate", "ck25", "--mode", "raw", "-o", str(tmp_path / "raw.jsonl")])
    assert r.exit_code == 0 and len(load_dataset(tmp_path / "raw.jsonl")) == 50
