"""SimpleDBpediaQA loader: gold SPARQL built from subject, predicate list, direction, constraint."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgqa.load import formats, load_dataset
from kgqa.load.simpledbpediaqa import build_sparql, iri_ref, load_simpledbpediaqa_dataset as load
from kgqa.model import InputError, IRI, Literal

FIX = Path(__file__).parents[1] / "fixtures" / "simpledbpediaqa"
VALID = FIX / "valid.json"
OLD = FIX / "impavidity-test.json"
R = "http://dbpedia.org/resource/"
O = "http://dbpedia.org/ontology/"
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


def test_forward_single_predicate():
    ds = load_dataset(VALID)
    assert ds.format == "simpledbpediaqa"
    assert ds.name == "SimpleDBpediaQA-VALID"
    assert ds.metadata == {"DatasetName": "SimpleDBpediaQA-VALID"}
    assert ds.ids == ["00002", "00009", "00020", "00022", "00033", "00042", "00078", "00087", "00100"]
    assert ds.problems == []
    it = ds["00002"]
    assert it.questions == {"en": "where was sasha vuja\u010di\u0107 born"}
    assert it.sparql == f"SELECT DISTINCT ?x WHERE {{ <{R}Sasha_Vuja\u010di\u0107> <{O}birthPlace> ?x . }}"
    assert it.answer is None
    assert it.groups == {"predicate": O + "birthPlace"}
    assert it.metadata["freebase_predicate"] == "www.freebase.com/people/person/place_of_birth"
    assert it.metadata["subject"] == R + "Sasha_Vuja\u010di\u0107"


def test_backward_with_type_constraint():
    it = load_dataset(VALID)["00020"]
    assert it.questions["en"] == "what is a song by john rutter?"
    assert it.sparql == f"SELECT DISTINCT ?x WHERE {{ ?x <{O}artist> <{R}John_Rutter> . ?x {TYPE} <{O}MusicalWork> . }}"


def test_forward_with_type_constraint():
    it = load_dataset(VALID)["00078"]
    assert it.sparql == f"SELECT DISTINCT ?x WHERE {{ <{R}Peter_Hlinka> <{O}birthPlace> ?x . ?x {TYPE} <{O}Country> . }}"


def test_alternatives_become_union_in_list_order():
    ds = load_dataset(VALID)
    assert ds["00087"].sparql == (
        "SELECT DISTINCT ?x WHERE {\n"
        f"  {{ <{R}Ivesdale,_Illinois> <{O}country> ?x . }}\n  UNION\n"
        f"  {{ <{R}Ivesdale,_Illinois> <{O}region> ?x . }}\n  UNION\n"
        f"  {{ <{R}Ivesdale,_Illinois> <{O}state> ?x . }}\n}}"
    )
    assert ds["00022"].sparql == (
        "SELECT DISTINCT ?x WHERE {\n"
        f"  {{ ?x <http://purl.org/linguistics/gold/hypernym> <{R}Album> . ?x {TYPE} <{O}Album> . }}\n  UNION\n"
        f"  {{ ?x <{O}type> <{R}Album> . ?x {TYPE} <{O}Album> . }}\n}}"
    )
    assert ds["00100"].sparql.count("UNION") == 1
    assert f"?x <http://dbpedia.org/property/birthPlace> <{R}Murfreesboro,_Tennessee> ." in ds["00100"].sparql


def test_built_queries_parse_and_answer_on_a_tiny_graph():
    """The built queries are valid SPARQL and mean what the paper says (run on a toy graph)."""
    ds = load_dataset(VALID)
    store = ox.Store()
    ttl = f"""
    <{R}Marcy_Rae> <http://purl.org/linguistics/gold/hypernym> <{R}Singer> ; <{O}occupation> <{R}Actress> .
    <{R}Song_A> <{O}artist> <{R}John_Rutter> ; a <{O}MusicalWork> .
    <{R}Album_B> <{O}artist> <{R}John_Rutter> ; a <{O}Album> .
    """
    store.load(ttl.encode(), ox.RdfFormat.TURTLE)
    for it in ds:
        store.query(it.sparql)  # every built query parses
    got = {str(s["x"].value) for s in store.query(ds["00033"].sparql)}
    assert got == {R + "Singer", R + "Actress"}
    assert {str(s["x"].value) for s in store.query(ds["00020"].sparql)} == {R + "Song_A"}


def test_old_release_key_spellings():
    ds = load_dataset(OLD)
    assert ds.name == "SimpleDBpediaQA"
    assert ds.ids == ["00001", "00004", "00007", "00013", "00053"]
    assert ds["00004"].sparql == (
        f"SELECT DISTINCT ?x WHERE {{ ?x <{O}writer> <{R}Phil_Hay_(screenwriter)> . ?x {TYPE} <{O}Film> . }}"
    )
    assert ds["00013"].sparql == f"SELECT DISTINCT ?x WHERE {{ <{R}Engelbert_Zaschka> <http://xmlns.com/foaf/0.1/gender> ?x . }}"
    assert ds["00053"].sparql.count("UNION") == 2
    assert ds["00001"].metadata["freebase_predicate"] == "www.freebase.com/music/album/genre"


def test_revised_file_subjects_and_object_list(tmp_path):
    doc = {"DatasetName": "rev", "Questions": [{
        "ID": "00020", "Query": "what is a song by john rutter?",
        "Subject": [R + "John_Rutter", R + "John_Milford_Rutter"],
        "FreebasePredicate": "www.freebase.com/music/artist/track",
        "PredicateList": [{"Predicate": O + "artist", "Direction": "backward", "Constraint": None}],
        "ObjectList": [{"Objects": [R + "Song_A", R + "Song_B"], "Subject": R + "John_Rutter", "Predicate": O + "artist"},
                       {"Objects": [R + "Song_B", "1977"], "Subject": R + "John_Milford_Rutter", "Predicate": O + "artist"}],
        "SimpleQuestionsID": "train-1234"}]}
    p = tmp_path / "revised.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    it = load([p])["00020"]
    assert it.sparql == (
        "SELECT DISTINCT ?x WHERE {\n"
        f"  {{ ?x <{O}artist> <{R}John_Rutter> . }}\n  UNION\n"
        f"  {{ ?x <{O}artist> <{R}John_Milford_Rutter> . }}\n}}"
    )
    assert it.answer.variables == ("x",)
    assert it.answer.column("x") == [IRI(R + "Song_A"), IRI(R + "Song_B"), Literal("1977")]
    assert it.metadata["SimpleQuestionsID"] == "train-1234"


def test_iri_escaping():
    assert iri_ref(R + 'Say_"Hi"_{x}') == f"<{R}Say_%22Hi%22_%7Bx%7D>"
    assert build_sparql([R + "A B"], [(O + "p", "forward", None)]) == f"SELECT DISTINCT ?x WHERE {{ <{R}A%20B> <{O}p> ?x . }}"


def test_malformed_records(tmp_path):
    good = json.loads(VALID.read_text(encoding="utf-8"))["Questions"][0]
    bad_dir = dict(good, ID="1", PredicateList=[{"Predicate": O + "p", "Direction": "sideways", "Constraint": None}])
    no_list = {k: v for k, v in good.items() if k != "PredicateList"}
    no_list["ID"] = "2"
    no_query = dict(good, ID="3", Query="")
    dup = dict(good)
    p = tmp_path / "test.json"
    p.write_text(json.dumps({"DatasetName": "t", "Questions": [good, bad_dir, no_list, no_query, dup]}), encoding="utf-8")
    ds = load([p])
    assert ds.ids == ["00002"]
    assert [(x.record, x.message) for x in ds.problems] == [
        ("question 2 (ID 1)", "PredicateList entry 1: 'Direction' must be 'forward' or 'backward', got 'sideways'; skipped"),
        ("question 3 (ID 2)", "'PredicateList' must be a non-empty list; skipped"),
        ("question 4 (ID 3)", "no question text in 'Query'; skipped"),
        ("question 5 (ID 00002)", "duplicate id '00002' (first at question 1 (ID 00002)); skipped"),
    ]


def test_truncated_file(tmp_path):
    p = tmp_path / "valid.json"
    p.write_text(VALID.read_text(encoding="utf-8")[:400], encoding="utf-8")
    with pytest.raises(InputError, match=r"malformed JSON at line \d+, column \d+"):
        load([p])


def test_detect():
    assert formats.detect([VALID], "dataset").name == "simpledbpediaqa"
    assert formats.detect([OLD], "dataset").name == "simpledbpediaqa"
