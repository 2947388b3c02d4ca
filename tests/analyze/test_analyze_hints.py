"""Hints (kgqa.analyze.hints) on the demo: a system that answers with the gold IRI plus its
label is told about ``--view values``. The quick twin of tests/analyze/test_taxonomy_ck25.py's
hint tests, which run on INFAI's real CK25 answers executed on the CK25 KG (slow)."""

from __future__ import annotations

import json

import pytest

import kgqa
from kgqa.analyze.hints import extra_column_ids, hints
from kgqa.analyze.taxonomy import classify
from kgqa.demo import DATA

R = "http://demo.kgqa.org/resource/"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Question 1 answered by its gold IRI plus a label column, question 2 by a wrong IRI."""
    path = tmp_path_factory.mktemp("hints") / "run.jsonl"
    wide = {"head": {"vars": ["uri", "label"]}, "results": {"bindings": [
        {"uri": {"type": "uri", "value": R + "Aldport"}, "label": {"type": "literal", "value": "Aldport"}}]}}
    path.write_text(json.dumps({"id": "1", "answer": wide}) + "\n"
                    + json.dumps({"id": "2", "answer": ["http://x/wrong"]}) + "\n", encoding="utf-8")
    return path


def test_tuple_view_hint_names_the_fix(run):
    e = kgqa.evaluate(DATA / "questions.json", run)
    (line,) = hints([e])
    assert "1 question(s) (1)" in line and "--view values" in line


def test_the_hints_prefilter_finds_what_classifying_every_question_finds(run, tmp_path):
    def everyone(e):
        return [q.id for q in e.questions if q.scores and classify(q).label == "extra_columns"]

    e = kgqa.evaluate(DATA / "questions.json", run)
    assert extra_column_ids(e) == everyone(e) == ["1"]
    kgqa.save_evaluations(e, tmp_path / "e.json")
    (back,) = kgqa.load_evaluations(tmp_path / "e.json")
    assert extra_column_ids(back) == everyone(back) == ["1"]


def test_view_values_scores_the_extra_column_answers(run):
    tuples = kgqa.evaluate(DATA / "questions.json", run)
    values = kgqa.evaluate(DATA / "questions.json", run, view="values")
    assert "view:values" in values.signature and hints([values]) == []
    q1 = next(q for q in values.questions if q.id == "1")
    assert 0 < q1.scores["F1"] < 1  # the label is an extra value, the IRI is right
    assert values.aggregate["F1"] > tuples.aggregate["F1"]
