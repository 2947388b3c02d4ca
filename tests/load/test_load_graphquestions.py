"""GraphQuestions dataset JSON and the .res run format of the official evaluate.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgqa.load import formats, load_dataset, load_run
from kgqa.load.graphquestions import load_graphquestions_dataset as load_gq, load_graphquestions_run as load_res, parse_res_line
from kgqa.model import InputError, IRI, Literal, TableAnswer

FIX = Path(__file__).parents[1] / "fixtures" / "graphquestions"
DATA = FIX / "graphquestions-sample.json"
RES = FIX / "sempre.res"


def test_dataset_items():
    ds = load_dataset(DATA)
    assert ds.format == "graphquestions"
    assert ds.ids == ["100000000", "100000100", "100000102", "213000000", "213000101", "305000000", "305000201", "402000000"]
    assert ds.problems == []
    it = ds["100000102"]
    assert it.questions == {"en": "who did nine eleven?"}
    assert it.answer == TableAnswer(("answer",), ((Literal("al-Qaeda"),),))
    assert it.groups == {"paraphrase": "100", "function": "none"}
    assert it.metadata["sentence_paraphrase"] == 1
    assert it.metadata["entity_paraphrase"] == 2
    assert it.metadata["function"] == "none"
    assert it.metadata["commonness"] == pytest.approx(-16.670291709217)
    assert (it.metadata["num_node"], it.metadata["num_edge"]) == (2, 1)
    assert it.metadata["graph_query"]["edges"][0]["relation"] == "terrorism.terrorist_attack.perpetrators"
    assert it.sparql.startswith("PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT DISTINCT ?x0")


def test_paraphrase_groups_and_function_categories():
    ds = load_dataset(DATA)
    groups: dict[str, list[str]] = {}
    for it in ds:
        groups.setdefault(it.groups["paraphrase"], []).append(it.id)
    assert groups == {
        "100": ["100000000", "100000100", "100000102"],
        "213": ["213000000", "213000101"],
        "305": ["305000000", "305000201"],
        "402": ["402000000"],
    }
    assert [ds[i].groups["function"] for i in ("213000000", "305000000", "402000000")] == ["count", "comparative", "superlative"]
    assert ds["305000000"].metadata["function"] == ">"
    # names, not IRIs; numbers stay simple literals (compared by value by default matching)
    assert ds["213000000"].answer.column("answer") == [Literal("3")]
    assert len(ds["305000000"].answer) == 7


def test_grailqa_style_answers_and_duplicates(tmp_path):
    recs = [
        {"qid": 5000000, "question": "q", "answer": [
            {"answer_type": "Entity", "answer_argument": "m.0d0vp3", "entity_name": "September 11 attacks"},
            {"answer_type": "Value", "answer_argument": "2001"}], "function": "none",
         "commonness": -9.5, "num_node": 2, "num_edge": 1},
        {"qid": 6000000, "question": "r", "answer": ["A", "B", "A"], "function": "none"},
    ]
    p = tmp_path / "g.json"
    p.write_text(json.dumps(recs), encoding="utf-8")
    ds = load_gq([p])
    assert ds["5000000"].answer.column("answer") == [IRI("http://rdf.freebase.com/ns/m.0d0vp3"), Literal("2001")]
    assert ds["5000000"].metadata["answer_names"] == ["September 11 attacks", "2001"]
    assert ds["6000000"].answer.column("answer") == [Literal("A"), Literal("B"), Literal("A")]


def test_dataset_problems(tmp_path):
    recs = [
        {"qid": "abc", "question": "q", "answer": ["x"]},
        {"qid": 7000000, "answer": ["x"]},
        {"qid": 8000000, "question": "q", "answer": "x"},
        {"qid": 9000000, "question": "q", "answer": [], "function": "median"},
        {"qid": 9000000, "question": "q2", "answer": ["y"]},
    ]
    p = tmp_path / "g.json"
    p.write_text(json.dumps(recs), encoding="utf-8")
    ds = load_gq([p])
    assert ds.ids == ["7000000", "9000000"]  # no question text: kept (scoring needs ids and answers)
    assert [(x.record, x.message, x.severity) for x in ds.problems] == [
        ("record 1 (qid abc)", "'qid' must be an integer, got 'abc'; skipped", "error"),
        ("record 3 (qid 8000000)", "'answer' must be a list, got str; skipped", "error"),
        ("record 4 (qid 9000000)", "empty 'answer' list (the official evaluate.py refuses an empty gold list)", "warning"),
        ("record 4 (qid 9000000)", "unknown function 'median' (expected one of: none, count, max, min, argmax, argmin, >, >=, <, <=)", "warning"),
        ("record 5 (qid 9000000)", "duplicate id '9000000' (first at record 4 (qid 9000000)); skipped", "error"),
        (None, "1 record(s) without question text (the first: record 2 (qid 7000000)): kept and scored by id; "
               "measures that read the text skip them", "warning"),
    ]


def test_records_without_question_text_score_as_with_it(tmp_path):
    """evaluate.py never reads the text: a file without it scores the same, with one warning."""
    import kgqa

    recs = json.loads(DATA.read_text(encoding="utf-8"))
    p = tmp_path / "graphquestions.testing.json"
    p.write_text(json.dumps([{k: v for k, v in r.items() if k != "question"} for r in recs]), encoding="utf-8")
    ds = load_gq([p])
    assert len(ds) == len(recs) == 8 and all(not it.questions for it in ds)
    assert [x.message.split(" (")[0] for x in ds.problems] == ["8 record(s) without question text"]
    run = tmp_path / "run.jsonl"  # answers with the last one left out
    run.write_text("".join(json.dumps({"id": str(r["qid"]), "answer": r["answer"][:-1] or r["answer"]}) + "\n"
                           for r in recs), encoding="utf-8")
    with_text = kgqa.evaluate(DATA, run, profile="graphquestions")
    without = kgqa.evaluate(p, run, profile="graphquestions")
    assert len(without.questions) == len(with_text.questions) > 0
    assert without.aggregate == with_text.aggregate
    assert any("without question text" in x for x in without.problems)


def test_truncated_dataset(tmp_path):
    p = tmp_path / "graphquestions.testing.json"
    p.write_text(DATA.read_text(encoding="utf-8")[:500], encoding="utf-8")
    with pytest.raises(InputError, match=r"malformed JSON at line \d+, column \d+"):
        load_gq([p])


def test_res_run():
    run = load_run(RES)
    assert run.format == "graphquestions-res"
    assert [p.id for p in run] == ["251000000", "251000100", "251000200", "252000000", "252000002",
                                   "253000000", "253000001", "255000000", "255000001", "258000200"]
    assert run.problems == []
    p = run.get("251000100")
    assert p.answer == TableAnswer(("answer",), ((Literal("Xtracycle"),), (Literal("Longtail"),)))
    assert p.elapsed == 0.0
    assert p.metadata == {"num_node": 2, "num_edge": 1, "function": "none", "answer_cardinality": 1,
                          "commonness": pytest.approx(-19.635822428214723), "gold": ["Longtail"]}
    assert run.get("252000000").answer == TableAnswer(("answer",), ())
    assert run.get("252000002").answer.column("answer")[1] == Literal("Niall Kennedy's Weblog")
    assert run.get("255000001").answer.column("answer") == [Literal("Jan Tschichold"), Literal("Paul C\u00e9zanne")]
    assert run.get("253000000").metadata["gold"] == ["Irv Higginbotham", "John George", "Irv Higginbotham"]
    assert run.get("251000000").elapsed == 12.0


def test_res_lines_the_official_script_skips(tmp_path):
    lines = [
        "# a comment",
        "1000000\t1.0\t[\"a\"]\t[\"a\"]\t2,1\tnone\t1\t-3.5",
        "x1000100\t1.0\t[\"a\"]\t[\"a\"]\t2,1\tnone\t1\t-3.5",
        "1000200\t1.0\t[\"a\"\t[\"a\"]\t2,1\tnone\t1\t-3.5",
        "1000300\t1.0\t[\"a\"]\t[\"a\"]\t2\tnone\t1\t-3.5",
        "1000400\t1.0\t[\"a\"]\t\"a\"\t2,1\tnone\t1\t-3.5",
        "1000500\t1.0\t[\"a\"]",
        "1000000\t2.0\t[\"a\"]\t[]\t2,1\tnone\t1\t-3.5",
    ]
    p = tmp_path / "mine.res"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = load_res([p])
    assert [x.id for x in run] == ["1000000"]
    assert run.get("1000000").elapsed == 1.0
    got = [(x.record, x.message) for x in run.problems]
    assert got[0] == ("line 3", "column 1 (qid) 'x1000100': invalid literal for int() with base 10: 'x1000100'; skipped (as the official evaluate.py does)")
    assert got[1][0] == "line 4" and got[1][1].startswith("column 3 (answers) '[\"a\"': ")
    assert got[2][0] == "line 5" and got[2][1].startswith("column 5 (structure) '2': list index out of range")
    assert got[3] == ("line 6", "column 4 (predictions) must be a JSON list, got str; skipped (as the official evaluate.py does)")
    assert got[4] == ("line 7", "3 tab-separated columns, expected 8 (qid, time, answers, predictions, structure, function, answer_cardinality, commonness); skipped (as the official evaluate.py does)")
    assert got[5] == ("line 8", "duplicate id '1000000' (first at line 2); skipped")


def test_parse_res_line_fields():
    f = parse_res_line("253000001\t53.0\t[\"John George\"]\t[\"2001 -1 -1\"]\t3,2\tcount\t1\t-10.0\n")
    assert f == {"qid": 253000001, "time": 53.0, "answers": ["John George"], "predictions": ["2001 -1 -1"],
                 "num_edge": 2, "num_node": 3, "function": "count", "answer_cardinality": 1, "commonness": -10.0}


def test_detect():
    assert formats.detect([DATA], "dataset").name == "graphquestions"
    assert formats.detect([RES], "run").name == "graphquestions-res"
    # headerless .res content is recognised too
    s = formats.sample(RES)
    body = formats.Sample(Path("x.res"), s.head.split("\n", 1)[1], s.size)
    assert formats.get("run", "graphquestions-res").sniff(body) == 0.85
