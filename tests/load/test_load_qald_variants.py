"""QALD-5 JSON, QALD-7 extended JSON and non-standard binding types (issue 12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgqa.load import formats, load_dataset, load_run
from kgqa.model import BooleanAnswer, TableAnswer
from kgqa.model.answer import from_results_json, tolerant_cells
from kgqa.model.terms import IRI, XSD, Literal

FIX = Path(__file__).parents[1] / "fixtures" / "qald"


def test_qald5_json_loads_every_record_with_text_query_and_answers():
    path = FIX / "qald5_sample.json"
    assert formats.detect([path], "dataset").name == "qald-json"
    ds = load_dataset(path)
    assert ds.ids == ["1", "10", "100", "104", "900001"]
    assert [p for p in ds.problems if p.severity == "error"] == []
    one = ds["1"]
    assert one.questions == {"en": "Give me all cosmonauts.", "de": "Gib mir alle Kosmonauten."}
    assert one.keywords["en"] == ["cosmonauts"]
    assert one.sparql.strip().startswith("PREFIX rdf:")
    assert one.answer == TableAnswer(("string",), ((IRI("http://dbpedia.org/resource/Mikhail_Korniyenko"),),
                                                    (IRI("http://dbpedia.org/resource/Anatoli_Ivanishin"),)))
    assert one.answer_type == "resource" and one.metadata["onlydbo"] == "true"
    assert ds["104"].answer == TableAnswer.single_column([Literal("22730")], "string")
    assert ds["900001"].answer == BooleanAnswer(True)
    out = ds["100"]
    assert out.sparql is None and out.metadata["query"] == {"out_of_scope": True}
    assert out.answer == TableAnswer((), ())  # empty answers list: an empty gold answer, as <answers/>
    assert "body" not in out.metadata


def test_qald7_extended_json_unwraps_questions():
    path = FIX / "qald7_extended_sample.json"
    assert formats.detect([path], "dataset").name == "qald-json"
    ds = load_dataset(path)
    assert ds.ids == ["0", "2"]
    g = ds["0"]
    assert g.questions == {"en": "When was the Battle of Gettysburg?", "de": "Wann fand die Schlacht von Gettysburg statt?"}
    assert g.keywords["de"] == ["Schlacht von Gettysburg"]
    assert "res:Battle_of_Gettysburg dbo:date ?date" in g.sparql
    assert g.answer == TableAnswer(("date",), ((Literal("1863-07-03"),),))
    assert g.answer_type == "date" and g.metadata["onlydbo"] is True
    assert "language" not in g.metadata
    assert ds["2"].sparql.startswith("SELECT DISTINCT ?num") and ds["2"].question("en") == "How high is the lighthouse in Colombo?"
    # the same file read as a run
    run = load_run(path, format="qald-json")
    assert [p.id for p in run] == ["0", "2"] and run.get("0").sparql == g.sparql and run.get("0").answer == g.answer


def test_odd_binding_types_keep_the_question_with_a_note():
    ds = load_dataset(FIX / "qald_odd_bindings.json")
    assert ds.ids == ["6", "18", "67", "56"]  # 99 (unknown type) skipped
    assert ds["6"].answer == TableAnswer(("n",), ((Literal("2", XSD + "integer"),),))
    assert ds["18"].answer == TableAnswer(("s",), ((Literal("Liberté, égalité, fraternité"),),))
    assert ds["67"].answer == TableAnswer(("uri",), ((IRI("http://dbpedia.org/resource/Rhine"),), (IRI("http://dbpedia.org/resource/Sieg"),)))
    assert ds["56"].answer == TableAnswer(("h",), ((Literal("3.0e2", XSD + "double"),),))
    warnings = {(p.record, p.message) for p in ds.problems if p.severity == "warning"}
    assert ("question id 6", "binding type 'number' read as xsd:integer (question kept)") in warnings
    assert ("question id 18", "binding type 'text' read as a simple literal (question kept)") in warnings
    assert ("question id 67", "binding type 'list' read as 2 value(s), one row each (question kept)") in warnings
    errors = [p for p in ds.problems if p.severity == "error"]
    assert len(errors) == 1 and errors[0].record == "question id 99" and "martian" in errors[0].message


def test_strict_results_json_still_refuses_nonstandard_types():
    doc = {"head": {"vars": ["n"]}, "results": {"bindings": [{"n": {"type": "number", "value": "2"}}]}}
    with pytest.raises(ValueError, match="unknown binding type 'number'"):
        from_results_json(doc)
    notes: list[str] = []
    assert from_results_json(doc, notes) == TableAnswer(("n",), ((Literal("2", XSD + "integer"),),))
    assert notes == ["binding type 'number' read as xsd:integer"]


@pytest.mark.parametrize("cell,terms", [
    ({"type": "number", "value": "-12"}, [Literal("-12", XSD + "integer")]),
    ({"type": "number", "value": "1.5"}, [Literal("1.5", XSD + "decimal")]),
    ({"type": "number", "value": "about 3"}, [Literal("about 3")]),
    ({"type": "list", "value": "a; http://x.org/b"}, [Literal("a"), IRI("http://x.org/b")]),
    ({"type": "list", "value": []}, []),
    ({"type": "date", "value": "2001-02-03"}, [Literal("2001-02-03", XSD + "date")]),
    ({"type": "boolean", "value": True}, [Literal("true", XSD + "boolean")]),
])
def test_tolerant_cells(cell, terms):
    assert tolerant_cells(cell)[0] == terms


def test_list_cell_multiplies_rows_keeping_other_cells():
    doc = {"head": {"vars": ["a", "b"]}, "results": {"bindings": [
        {"a": {"type": "uri", "value": "http://x/1"}, "b": {"type": "list", "value": ["p", "q"]}}]}}
    ans = from_results_json(doc, [])
    assert ans.rows == ((IRI("http://x/1"), Literal("p")), (IRI("http://x/1"), Literal("q")))
