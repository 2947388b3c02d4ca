"""Annotation from LC-QuAD's intermediary questions (issue 28, scope 0): the marked labels are
aligned with the query's KB elements and located in the corrected question, without a KG."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st
from typer.testing import CliRunner

import kgqa.cli as cli
from kgqa.make.annotate import (align_intermediary, annotate_item, element_text, intermediary_labels, kb_elements,
                                 stem_text, unmarked)
from kgqa.model import IRI, Item

DBO, DBR = "http://dbpedia.org/ontology/", "http://dbpedia.org/resource/"
KUBRICK = Item("1501", {"en": "How many movies did Stanley Kubrick direct?"},
               f"SELECT DISTINCT COUNT(?uri) WHERE {{?uri <{DBO}director> <{DBR}Stanley_Kubrick> . }}",
               metadata={"intermediary_question": "How many <movies> are there whose <director> is <Stanley Kubrick>?"})


def test_marked_labels_of_both_lcquad_versions():
    assert intermediary_labels("What is the <river> whose <river  mouth> is <Jacques Van't Hart>> ?") == \
        ["river", "river mouth", "Jacques Van't Hart"]
    assert intermediary_labels("What is the {country} for {head of state} of {Mahmoud Abbas}") == \
        ["country", "head of state", "Mahmoud Abbas"]
    assert unmarked("What is the <river> whose <river mouth> is <Dead Sea>>?") == "What is the river whose river mouth is Dead Sea?"


def test_freely_worded_corrected_question_is_tagged():
    a = annotate_item(KUBRICK)
    assert a.text_source == "question"
    assert a.variants["tagged"] == "How many movies did dbr:Stanley_Kubrick dbo:director?"
    assert [(m.text, m.source) for m in a.mentions] == [("direct", "intermediary"), ("Stanley Kubrick", "intermediary")]


def test_alignment_by_name_then_by_elimination():
    film, director = IRI(DBO + "Film"), IRI(DBO + "director")
    # "movies" shares no name with dbo:Film: it is the one label left for the one element left
    assert align_intermediary(["director", "movies"], [director, film]) == {director: "director", film: "movies"}
    # two labels left for one element: nothing is paired by elimination
    assert align_intermediary(["director", "movies", "films"], [director, IRI(DBO + "Book")]) == {director: "director"}


def test_intermediary_text_is_used_when_the_corrected_question_words_an_element_away():
    item = Item("x", {"en": "Starwood operates in which places?"},
                f"SELECT DISTINCT ?uri WHERE {{ ?x <{DBO}operator> <{DBR}Starwood_Hotels> . ?x <{DBO}address> ?uri . }}",
                metadata={"intermediary_question": "What is the <address> of the <hotels> whose <operator> is <Starwood Hotels>?"})
    a = annotate_item(item)
    assert a.text_source == "intermediary"
    assert a.variants["tagged"] == "What is the dbo:address of the hotels whose dbo:operator is dbr:Starwood_Hotels?"
    assert annotate_item(item, intermediary_fallback=False).annotated is False


def test_an_element_found_nowhere_is_listed_not_guessed():
    item = Item("y", {"en": "Who wrote it?"}, f"SELECT ?x WHERE {{ <{DBR}Some_Book> <{DBO}author> ?x }}",
                metadata={"intermediary_question": "What is the <author> of it?"})
    a = annotate_item(item)
    assert not a.annotated and a.reason == "no mention found for dbr:Some_Book"


@given(st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=12),
                max_size=6))
def test_stems_keep_one_lower_case_stem_per_word(words):
    s = stem_text(" ".join(words))
    assert len(s.split()) == len(words)
    assert s == s.lower() == stem_text(" ".join(w.swapcase() for w in words))
    assert all(len(st_) >= min(3, len(w)) and w.lower().startswith(st_) for st_, w in zip(s.split(), words))


@pytest.mark.slow  # the whole LC-QuAD 1.0 train set
def test_lcquad1_train_tagged_without_a_kg(shared_data, tmp_path):
    cli._register()
    out = tmp_path / "tagged.jsonl"
    res = CliRunner().invoke(cli.app, ["annotate", str(shared_data / "lcquad-1.0" / "train-data.json"),
                                             "--mode", "tagged", "-o", str(out)], terminal_width=200)
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    report = json.loads((tmp_path / "tagged.jsonl.report.json").read_text())
    assert report["items"] == 4000 and len(rows) == 4000 and report["annotated"] >= 3600
    assert report["fallback_raw"] == 4000 - report["annotated"]  # the others in their raw form
    rows = [r for r in rows if r["metadata"]["annotation"] == "tagged"]
    assert len(rows) == report["annotated"]
    for row in rows:  # every KB element of the query is in the tagged question
        elements, prefixes = kb_elements(row["sparql"])
        text = row["questions"]["en"] if "questions" in row else row["question"]
        assert all(element_text(e, prefixes) in text for e in elements), row
    assert all(s["reason"].startswith("no mention found for ") and s["missing"] for s in report["not_annotated"])
