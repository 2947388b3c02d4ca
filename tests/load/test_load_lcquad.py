"""LC-QuAD 1.0 and 2.0 loaders on fixtures copied from the released files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgqa.load import formats, load_dataset
from kgqa.load.lcquad import load_lcquad1, load_lcquad2
from kgqa.model import InputError

FIX = Path(__file__).parents[1] / "fixtures" / "lcquad"
V1 = FIX / "lcquad1-test.json"
V2 = FIX / "lcquad2-sample.json"


def test_lcquad1_items():
    ds = load_dataset(V1)
    assert ds.format == "lcquad"
    assert ds.ids == ["1701", "3293", "1136", "987", "4702", "285", "2079", "2717"]
    assert ds.problems == []
    it = ds["1701"]
    assert it.questions == {
        "en": "Which architect of Marine Corps Air Station Kaneohe Bay was also tenant of New Sanno hotel /'"
    }
    # the released query verbatim, surrounding blanks kept (query measures ignore them)
    assert it.sparql == (
        " SELECT DISTINCT ?uri WHERE { <http://dbpedia.org/resource/Marine_Corps_Air_Station_Kaneohe_Bay> "
        "<http://dbpedia.org/property/architect> ?uri. <http://dbpedia.org/resource/New_Sanno_Hotel> "
        "<http://dbpedia.org/ontology/tenant> ?uri} "
    )
    assert it.answer is None
    assert it.groups == {"template": "16"}
    assert it.metadata == {
        "intermediary_question": "What is the <architect> of the <Marine Corps Air Station Kaneohe Bay> "
        "and <tenant> of the <New Sanno Hotel>"
    }
    assert ds["987"].sparql.startswith("ASK WHERE { <http://dbpedia.org/resource/Peter_Piper_Pizza>")
    assert ds["987"].groups["template"] == "152"
    assert "Enrique_Jos\u00e9_Varona" in ds["2079"].sparql
    assert [ds[i].groups["template"] for i in ds.ids] == ["16", "305", "15", "152", "111", "2", "5", "3"]


def test_lcquad2_default_question_and_fallbacks():
    ds = load_dataset(V2)
    assert ds.format == "lcquad2"
    assert ds.ids == ["19719", "20258", "900001", "900002", "900003", "900004"]
    it = ds["19719"]
    assert it.questions == {"en": "What periodical literature does Delta Air Lines use as a moutpiece?"}
    assert it.sparql == " select distinct ?obj where { wd:Q188920 wdt:P2813 ?obj . ?obj wdt:P31 wd:Q1002697 } "
    assert it.answer is None
    assert it.groups == {"template": "1", "subgraph": "simple question right"}
    assert it.metadata["template_index"] == 65
    assert it.metadata["paraphrased_question"] == "What is Delta Air Line's periodical literature mouthpiece?"
    assert it.metadata["sparql_dbpedia18"].startswith("select distinct ?obj where { ?statement")
    assert it.metadata["NNQT_question"] == "What is the {periodical literature} for {mouthpiece} of {Delta Air Lines}"
    assert ds["20258"].groups == {"template": "2", "subgraph": "simple question left"}
    # null and "n/a" questions fall back to NNQT (braces removed) with a warning each
    assert ds["900001"].questions["en"] == "What is capital of Germany ?"
    assert ds["900002"].questions["en"] == "How many official language are for Switzerland ?"
    msgs = [(p.record, p.message, p.severity) for p in ds.problems]
    assert msgs == [
        ("record 3 (uid 900001)", "'question' is None; using 'NNQT_question' with its braces removed", "warning"),
        ("record 4 (uid 900002)", "'question' is 'n/a'; using 'NNQT_question' with its braces removed", "warning"),
    ]


def test_lcquad2_paraphrase_option_and_dbpedia_queries():
    ds = load_dataset(V2, question_field="paraphrased_question", kg="dbpedia18")
    assert ds["19719"].questions["en"] == "What is Delta Air Line's periodical literature mouthpiece?"
    assert ds["20258"].questions["en"] == "What country is Mahmoud Abbas the head of state of?"
    # paraphrase "[]" -> question "n/a" -> NNQT; paraphrase null -> question
    assert ds["900002"].questions["en"] == "How many official language are for Switzerland ?"
    assert ds["900003"].questions["en"] == "Is Berlin the capital of Germany?"
    assert ds["20258"].sparql.startswith("select distinct ?subj where { ?statement <http://www.w3.org/1999/02/22-rdf-syntax-ns#subject> ?subj")
    assert "sparql_wikidata" in ds["20258"].metadata
    # uid 900004 has an empty sparql_dbpedia18: skipped with an error
    assert "900004" not in ds
    errors = [p for p in ds.problems if p.severity == "error"]
    assert [(p.record, p.message) for p in errors] == [("record 6 (uid 900004)", "no 'sparql_dbpedia18' query; skipped")]
    warn = {p.record: p.message for p in ds.problems if p.severity == "warning"}
    assert warn["record 5 (uid 900003)"] == "'paraphrased_question' is None; using 'question'"
    assert warn["record 4 (uid 900002)"] == "'paraphrased_question' is '[]'; using 'NNQT_question' with its braces removed"


def test_lcquad2_bad_option():
    with pytest.raises(InputError, match="unknown LC-QuAD 2.0 question field 'paraphrase'"):
        load_lcquad2([V2], question_field="paraphrase")


def test_lcquad_truncated_json_names_line_and_column(tmp_path):
    bad = tmp_path / "train-data.json"
    bad.write_text(V1.read_text(encoding="utf-8")[:700], encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_lcquad1([bad])
    assert str(e.value).startswith(f"{bad}: malformed JSON at line ")
    assert "column" in str(e.value)


def test_lcquad_not_an_array(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"questions": []}', encoding="utf-8")
    with pytest.raises(InputError, match="expected a JSON array of question objects, got a JSON dict"):
        load_lcquad1([bad])


def test_lcquad1_missing_fields_and_duplicates(tmp_path):
    recs = json.loads(V1.read_text(encoding="utf-8"))[:3]
    recs.append({"_id": "9", "corrected_question": "n/a", "intermediary_question": "What is the <x> of <y>?",
                 "sparql_query": "SELECT ?x WHERE { ?x ?p ?o }", "sparql_template_id": 1})
    recs.append({"_id": "10", "corrected_question": "Who?", "sparql_template_id": 2})
    recs.append({"corrected_question": "No id", "sparql_query": "ASK {}"})
    recs.append(dict(recs[0], corrected_question="again"))
    recs.append("not an object")
    recs.append({"_id": "11", "corrected_question": None, "intermediary_question": "",
                 "sparql_query": "SELECT ?x WHERE { ?x ?p ?o }", "sparql_template_id": 1})
    p = tmp_path / "train-data.json"
    p.write_text(json.dumps(recs), encoding="utf-8")
    ds = load_lcquad1([p])
    assert ds.ids == ["1701", "3293", "1136", "9", "11"]  # 11: no question text, its query scores
    assert ds["9"].questions["en"] == "What is the <x> of <y>?" and ds["11"].questions == {}
    got = [(p_.record, p_.message, p_.severity) for p_ in ds.problems]
    assert got == [
        ("record 4 (_id 9)", "'corrected_question' is 'n/a'; using 'intermediary_question'", "warning"),
        ("record 5 (_id 10)", "no 'sparql_query'; skipped", "error"),
        ("record 6", "no '_id'; skipped", "error"),
        ("record 8", "expected a question object, got str; skipped", "error"),
        ("record 7 (_id 1701)", "duplicate id '1701' (first at record 1 (_id 1701)); skipped", "error"),
        (None, "1 record(s) without question text (the first: record 9 (_id 11)): kept and scored by id; "
               "measures that read the text skip them", "warning"),
    ]


def test_sniffers_do_not_confuse_versions():
    s1, s2 = formats.sample(V1), formats.sample(V2)
    assert formats.get("dataset", "lcquad").sniff(s2) == 0.0
    assert formats.get("dataset", "lcquad2").sniff(s1) == 0.0
    assert formats.detect([V1], "dataset").name == "lcquad"
    assert formats.detect([V2], "dataset").name == "lcquad2"
