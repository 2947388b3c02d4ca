"""Text2SPARQL'25 datasets (CK25, DB25) and runs (answers and result sets)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from kgqa.load import load_dataset, load_run
from kgqa.load.text2sparql import bag_answer, find_gold
from kgqa.model import BooleanAnswer, InputError, TableAnswer
from kgqa.model.terms import IRI, Literal

FIX = Path(__file__).parents[1] / "fixtures" / "text2sparql"


def test_ck25_by_path_and_name(shared_data):
    path = shared_data / "ck25" / "questions.yml"
    gold = shared_data / "ck25" / "official-gold" / "ck25_true_result_set.json"
    before = [(p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in (path, gold)]
    ds = load_dataset(path)
    named = load_dataset("ck25")
    assert len(ds) == 50 and len(named) == 50 and ds.items == named.items
    assert ds.format == "text2sparql" and ds.problems == []
    assert ds.source == [path, gold]  # gold found in official-gold/
    it = ds["ck25:1"]
    assert it.questions == {"en": "In which department is Ms. Brant?"}
    assert it.lang_ids == {"en": "ck25:1-en"}
    assert it.answer == TableAnswer(("result",), ((IRI("http://ld.company.org/prod-instances/dept-73191"),),))
    assert it.metadata["features"] == ["SELECT"] and it.metadata["properties"] == [":memberOf"]
    assert ds["ck25:2"].answer.rows == ((Literal("+49-6200-33069465"),),)
    # ASK convention: {"true": 0} is false (question 33), {"true": 1} true
    assert ds["ck25:33"].answer == BooleanAnswer(False) and ds["ck25:33"].answer_type == "boolean"
    assert ds["ck25:33"].qrels == {"en": {"true": 0}}
    assert ds["ck25:16"].answer == BooleanAnswer(True)
    assert ds["ck25:25"].answer == TableAnswer(("result",), ())  # {} is an empty table
    assert sum(isinstance(i.answer, BooleanAnswer) for i in ds) == 3
    assert len(ds.by_language()) == 50 and ds.by_language().ids[0] == "ck25:1-en"
    assert [(p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in (path, gold)] == before


def test_db25_two_languages(shared_data):
    ds = load_dataset(shared_data / "db25" / "questions_db25.yaml")
    named = load_dataset("db25")
    assert len(ds) == 100 and len(named) == 100
    assert all(set(it.questions) == {"en", "es"} for it in ds)
    units = ds.by_language()
    assert len(units) == 200 and units.ids[:2] == ["db25:1-en", "db25:1-es"]
    one = ds["db25:1"]
    assert one.questions["es"] == "¿Cuántos autores únicos han escrito novelas de ciencia ficción?"
    assert one.answer.rows == ((Literal("2892"),),)
    assert one.qrels == {"en": {"2892": 1}, "es": {"2892": 1}}
    assert "answers_by_language" not in one.metadata
    assert ds["db25:93"].answer == BooleanAnswer(False)
    assert ds["db25:3"].answer.rows == ((IRI("http://dbpedia.org/resource/Beirut"),),)
    assert sum(isinstance(i.answer, BooleanAnswer) for i in ds) == 10
    assert [p for p in ds.problems] == []


def test_fixture_grades_languages_and_extra_bags():
    ds = load_dataset(FIX / "questions.yml")
    assert ds.name == "tx" and ds.ids == ["tx:1", "tx:2", "tx:3", "tx:4", "tx:5"]
    four = ds["tx:4"]
    # grade 0 is not relevant: left out of the answer, kept in the qrels
    assert four.answer == TableAnswer(("result",), ((Literal("2873000"),), (IRI("http://dbpedia.org/resource/Roberto_Gualtieri"),)))
    assert four.qrels["en"]["http://dbpedia.org/resource/Virginia_Raggi"] == 0
    assert "http://dbpedia.org/resource/Virginia_Raggi" not in four.qrels["es"]
    assert set(four.metadata["answers_by_language"]) == {"en", "es"}
    assert ds["tx:2"].answer == BooleanAnswer(True) and ds["tx:5"].answer == BooleanAnswer(False)
    assert ds["tx:3"].answer == TableAnswer(("result",), ())
    msgs = [(p.record, p.severity, p.message) for p in ds.problems]
    assert ("tx:4", "warning") in [(r, s) for r, s, _ in msgs]
    assert any("1 gold bag(s) match no question: tx:9-en" in m for _, _, m in msgs)


def test_gold_option_and_explicit_json_path(tmp_path):
    y = tmp_path / "questions.yml"
    y.write_bytes((FIX / "questions.yml").read_bytes())
    ds = load_dataset(y)  # no gold beside it
    assert all(it.answer is None for it in ds)
    assert any("no gold result set" in p.message for p in ds.problems)
    with_opt = load_dataset(y, gold=FIX / "tx_true_result_set.json")
    both = load_dataset([y, FIX / "tx_true_result_set.json"])
    assert with_opt.items == both.items and with_opt["tx:2"].answer == BooleanAnswer(True)
    assert find_gold(FIX / "questions.yml", "tx") == FIX / "tx_true_result_set.json"


def test_bad_grade_and_bad_yaml(tmp_path):
    y = tmp_path / "q.yml"
    y.write_text("dataset: {prefix: b}\nquestions:\n  - id: 1\n    question: {en: hi}\n    query:\n      sparql: ASK {}\n",
                 encoding="utf-8")
    (tmp_path / "b_true_result_set.json").write_text('{"b:1-en": {"true": "yes"}}', encoding="utf-8")
    ds = load_dataset(y)
    [p] = [p for p in ds.problems if p.severity == "error"]
    assert p.record == "b:1-en" and "grade of 'true' must be a number" in p.message
    assert ds["b:1"].answer is None
    bad = tmp_path / "bad.yml"
    bad.write_text("questions:\n  - id: 1\n    query: [unclosed\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"malformed YAML at line \d+, column \d+"):
        load_dataset(bad, format="text2sparql")


def test_bag_answer_rules():
    assert bag_answer({"true": 1}) == BooleanAnswer(True)
    assert bag_answer({"true": 0}) == BooleanAnswer(False)
    assert bag_answer({"true": 1, "false": 1}) == TableAnswer(("result",), ((Literal("true"),), (Literal("false"),)))
    assert bag_answer({}) == TableAnswer(("result",), ())
    assert bag_answer({"a": 0, "b": 2}).rows == ((Literal("b"),),)


@pytest.mark.parametrize("team", ["AIFB", "INFAI", "WSE"])
def test_ck25_runs(shared_data, team):
    answers = load_run(shared_data / "ck25-runs" / team / "ck25_answers.json")
    assert answers.format == "text2sparql-answers" and len(answers) == 50 and answers.name == team
    p = answers.get("ck25:1-en")
    assert p.answer is None and p.sparql and p.metadata["question"] == "In which department is Ms. Brant?"
    results = load_run(shared_data / "ck25-runs" / team / "ck25_system_result_set.json")
    assert results.format == "text2sparql-results" and len(results) == 50
    assert results.get("ck25:2-en").bag == {"+49-6200-33069465": 1}
    assert results.get("ck25:2-en").answer.rows == ((Literal("+49-6200-33069465"),),)
    assert answers.problems == [] and results.problems == []


def test_wse_result_set_values(shared_data):
    run = load_run(shared_data / "ck25-runs" / "WSE" / "ck25_system_result_set.json")
    assert run.get("ck25:1-en").answer == TableAnswer(("result",), ())
    assert run.get("ck25:3-en").answer.rows == ((IRI("http://ld.company.org/prod-instances/empl-Waldtraud.Kuttner%40company.org"),),)
