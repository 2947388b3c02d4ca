"""RuBQ 1.0 dev/test."""

from __future__ import annotations

import json

import pytest

from kgqa.load import load_dataset
from kgqa.model import TableAnswer
from kgqa.model.terms import IRI, XSD, Literal


@pytest.mark.parametrize("rel,name,count,no_answer", [
    ("rubq-1.0/RuBQ_1.0_dev.json", "rubq-1.0-dev", 300, 60),
    ("rubq-1.0/RuBQ_1.0_test.json", "rubq-1.0-test", 1200, 240),
])
def test_counts_by_path_and_name(shared_data, rel, name, count, no_answer):
    ds = load_dataset(shared_data / rel)
    named = load_dataset(name)
    assert ds.format == "rubq" and len(ds) == count and len(named) == count
    assert ds.items == named.items and ds.problems == []
    assert sum(it.answer == TableAnswer(("answer",), ()) for it in ds) == no_answer
    assert sum(it.sparql is None for it in ds) == no_answer
    assert sum("no-answer" in it.metadata["tags"] for it in ds) == no_answer


def test_test_set_values(shared_data):
    ds = load_dataset(shared_data / "rubq-1.0/RuBQ_1.0_test.json")
    it = ds["0"]
    assert it.questions == {"ru": "Что может вызвать цунами?", "en": "What can cause a tsunami?"}
    assert it.sparql == "SELECT ?answer \nWHERE {\n  wd:Q8070 wdt:P828 ?answer\n}"
    assert it.metadata["undeclared_prefixes"] is True
    assert it.metadata["tags"] == ["1-hop"] and it.groups == {"tags": "1-hop"}
    assert it.metadata["answer_text"] == "Землетрясение"
    assert it.answer.column("answer")[0] == IRI("http://www.wikidata.org/entity/Q7944")
    assert len(it.answer) == 6
    terms = [c for i in ds for r in i.answer.rows for c in r]
    assert sum(isinstance(t, Literal) and t.language is not None for t in terms) == 50
    assert sum(isinstance(t, Literal) and t.datatype == XSD + "integer" for t in terms) == 11
    assert sum(isinstance(t, Literal) and t.datatype == XSD + "decimal" for t in terms) == 5
    assert sum(isinstance(t, IRI) for t in terms) == 1208
    multi = [i for i in ds if "," in i.groups.get("tags", "")]
    assert multi and all(i.groups["tags"] == ",".join(i.metadata["tags"]) for i in multi)


def test_broken_records(tmp_path):
    recs = [
        {"uid": 1, "question_text": "Кто?", "question_eng": "Who?", "query": "SELECT ?answer WHERE { wd:Q1 wdt:P1 ?answer }",
         "answers": [{"type": "uri", "value": "http://www.wikidata.org/entity/Q2", "label": "Q two"}], "tags": ["1-hop"]},
        {"uid": 1, "question_text": "дубль", "query": None, "answers": [], "tags": []},
        {"uid": 2, "question_text": "Что?", "query": "SELECT ...", "answers": [{"type": "entity", "value": "x"}]},
        {"question_text": "без uid"},
        {"uid": 3, "query": "ASK {}", "answers": []},
    ]
    p = tmp_path / "rubq.json"
    p.write_text(json.dumps(recs, ensure_ascii=False), encoding="utf-8")
    ds = load_dataset(p)
    assert ds.ids == ["1"]
    assert ds["1"].metadata["answer_labels"] == {"http://www.wikidata.org/entity/Q2": "Q two"}
    got = {p.record: p.message for p in ds.problems}
    assert "duplicate uid '1'" in got["uid 1"]
    assert "unknown binding type 'entity'" in got["uid 2"]
    assert "no 'uid'" in got["record 3"]
    assert "no question text" in got["uid 3"]
    assert all(p.severity == "error" for p in ds.problems)
