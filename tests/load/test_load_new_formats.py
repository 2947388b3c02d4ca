"""WebQSP, ComplexWebQuestions, Mintaka (dataset and run) and KQA Pro loaders (issue 12):
every record of each fixture accounted for (loaded, or skipped with a reason), auto-detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from kgqa.load import formats, load_dataset, load_run
from kgqa.load.mintaka import prediction_answer
from kgqa.model import BooleanAnswer, TableAnswer
from kgqa.model.terms import IRI, XSD, Literal
from kgqa.score import profiles
from kgqa.score.evaluate import evaluate

FIX = Path(__file__).parents[1] / "fixtures"
FB = "http://rdf.freebase.com/ns/"
WD = "http://www.wikidata.org/entity/"


def _accounted(ds, n_records: int) -> list[str]:
    skipped = [p.record for p in ds.problems if p.severity == "error"]
    assert len(ds) + len(skipped) == n_records, (ds.ids, skipped)
    return skipped


@pytest.mark.parametrize("rel,fmt", [
    ("webqsp/WebQSP.test.sample.json", "webqsp"),
    ("cwq/ComplexWebQuestions_dev.sample.json", "cwq"),
    ("mintaka/mintaka_test.sample.json", "mintaka"),
    ("kqapro/train.sample.json", "kqapro"),
    ("qald/qald5_sample.json", "qald-json"),
    ("qald/qald7_extended_sample.json", "qald-json"),
])
def test_detected(rel, fmt):
    assert formats.detect([FIX / rel], "dataset").name == fmt
    assert load_dataset(FIX / rel).format == fmt


def test_run_formats_detected():
    assert formats.detect([FIX / "mintaka" / "predictions_kg.json"], "run").name == "mintaka-run"
    assert formats.detect([FIX / "mintaka" / "predictions_text.json"], "run").name == "mintaka-run"


def test_webqsp():
    ds = load_dataset(FIX / "webqsp" / "WebQSP.test.sample.json")
    skipped = _accounted(ds, 5)
    assert skipped == ["Questions[3] (WebQTest-900003)"]
    assert ds.ids == ["WebQTest-0", "WebQTest-900001", "WebQTest-900002", "WebQTest-900004"]
    q = ds["WebQTest-0"]
    assert q.question() == "what does jamaican people speak?"
    assert q.answer == TableAnswer(("answer",), ((IRI(FB + "m.01428y"),), (IRI(FB + "m.04ygk0"),)))
    assert "ns:location.country.languages_spoken" in q.sparql
    assert q.metadata["answer_names"] == ["Jamaican English", "Jamaican Creole English Language"]
    assert q.metadata["inferential_chain"] == ["location.country.languages_spoken"] and q.metadata["num_edges"] == 1
    assert q.metadata["topic_entity"] == {"mid": "m.03_r3", "name": "Jamaica", "mention": "jamaican"}
    two = ds["WebQTest-900001"]
    assert two.answer == TableAnswer(("answer",), ())  # first parse: empty gold answer
    assert two.metadata["constraints"][0]["Argument"] == "m.05zppz"
    assert two.metadata["parses"] == [{"id": "WebQTest-900001.P1", "sparql": two.metadata["parses"][0]["sparql"],
                                       "answers": [FB + "m.0n1xkq3"]}]
    assert ds["WebQTest-900002"].answer == TableAnswer.single_column([Literal("2008")], "answer")
    assert ds["WebQTest-900002"].metadata["num_edges"] == 2 and ds["WebQTest-900002"].metadata["order"]["SortOrder"] == "Descending"
    assert ds["WebQTest-900004"].answer is None and ds["WebQTest-900004"].sparql is None
    assert any(p.record == "Questions[4] (WebQTest-900004)" and p.severity == "warning" for p in ds.problems)


def test_cwq():
    ds = load_dataset(FIX / "cwq" / "ComplexWebQuestions_dev.sample.json")
    skipped = _accounted(ds, 4)
    assert len(skipped) == 1 and "WebQTrn-900003_0000" in skipped[0]
    q = ds["WebQTrn-230_b1c1de2ea2a2a8c10ba9d2a9c0b22b88"]
    assert q.answer == TableAnswer.single_column([IRI(FB + "m.012x1l")], "answer")
    assert q.groups == {"compositionality_type": "composition", "webqsp": "WebQTrn-230"}
    assert q.metadata["answer_aliases"] == [["Massoud", "Ahmad Shah Masood"]]
    assert q.metadata["machine_question"].startswith("who was the leader")
    lit = ds["WebQTrn-900001_0000"]
    assert lit.answer == TableAnswer.single_column([Literal("1945")], "answer")
    assert lit.question() == "what year did the team that won the earliest title win it"  # machine_question fallback
    assert ds["WebQTest-900002_0000"].answer is None and ds["WebQTest-900002_0000"].sparql


def test_mintaka_dataset():
    ds = load_dataset(FIX / "mintaka" / "mintaka_test.sample.json")
    skipped = _accounted(ds, 7)
    assert len(skipped) == 1 and "deadbeef" in skipped[0]
    m = ds["a9011ddf"]
    assert m.questions["en"].startswith("What is the seventh") and m.questions["de"].startswith("Wie heißt")
    assert m.answer == TableAnswer.single_column([IRI(WD + "Q1153188")], "answer")
    assert m.answer_type == "entity" and m.groups == {"complexityType": "ordinal", "category": "geography"}
    assert m.metadata["answer_labels"][0]["en"] == "Mount Lucania" and m.metadata["mention"] == "Mount Lucania"
    assert ds["e343ad26"].answer == BooleanAnswer(True)
    assert ds["bc8713cc"].answer == TableAnswer.single_column([Literal("4", XSD + "integer")], "answer")
    assert ds["9a296167"].answer == TableAnswer.single_column([Literal("2001-11-16", XSD + "date")], "answer")
    assert ds["4367c74a"].answer == TableAnswer.single_column([Literal("Citius, Altius, Fortius")], "answer")
    assert ds["b41ae115"].answer is None


def test_mintaka_runs_score_against_the_dataset():
    ds = load_dataset(FIX / "mintaka" / "mintaka_test.sample.json")
    run = load_run(FIX / "mintaka" / "predictions_kg.json", dataset=ds)
    assert [p.id for p in run] == ["a9011ddf", "e343ad26", "bc8713cc", "9a296167", "4367c74a", "b41ae115", "ffffffff"]
    assert run.get("ffffffff").answer == TableAnswer.single_column([IRI(WD + "Q106182"), IRI(WD + "Q219776")], "answer")
    assert run.get("b41ae115").answer == TableAnswer(("answer",), ())
    e = evaluate(ds, run, profiles.get("kgqa"))
    scores = {q.id: q.scores["AnswerEM"] for q in e.questions}
    assert scores == {"a9011ddf": 1.0, "e343ad26": 0.0, "bc8713cc": 1.0, "9a296167": 1.0, "4367c74a": 1.0}
    assert e.unknown_ids == ["ffffffff"]
    assert {s["id"] for s in e.skipped} >= {"b41ae115", "ffffffff"}
    text = load_run(FIX / "mintaka" / "predictions_text.json", dataset=ds)
    assert text.get("e343ad26").answer == BooleanAnswer(True)  # "True" against a boolean gold
    assert text.get("a9011ddf").answer == TableAnswer.single_column([Literal("Mount Lucania")], "answer")


@settings(max_examples=80, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=2), max_leaves=6))
def test_mintaka_prediction_value_never_crashes(value):
    try:
        a = prediction_answer(value)
    except ValueError:
        return
    assert isinstance(a, (BooleanAnswer, TableAnswer))


def test_kqapro():
    ds = load_dataset(FIX / "kqapro" / "train.sample.json")
    skipped = _accounted(ds, 5)
    assert skipped == ["record 5"]
    assert ds.ids == ["0", "1", "2", "3"]
    k = ds["0"]
    assert k.answer == TableAnswer.single_column([Literal("Kettering")], "answer")
    assert k.groups == {"function": "What"} and k.metadata["num_functions"] == 5 and len(k.metadata["choices"]) == 10
    assert ds["1"].groups == {"function": "Count"} and ds["2"].answer == TableAnswer.single_column([Literal("no")], "answer")
    assert ds["3"].answer is None and ds["3"].sparql is None


def test_new_loaders_refuse_wrong_top_level(tmp_path):
    from kgqa.model import InputError

    p = tmp_path / "x.json"
    p.write_text(json.dumps({"a": 1}))
    for fmt in ("cwq", "mintaka", "kqapro"):
        with pytest.raises(InputError, match="expected an array"):
            load_dataset(p, format=fmt)
    with pytest.raises(InputError, match="'Questions' list"):
        load_dataset(p, format="webqsp")


def test_undetectable_run_hint_names_the_run_format_option(tmp_path):
    from kgqa.model import InputError

    p = tmp_path / "run.txt"
    p.write_text("nothing any format knows\n")
    with pytest.raises(InputError, match=r"cannot tell which run format this is; pass --run-format \(one of: ") as e:
        load_run(p)
    assert "mintaka-run" in str(e.value)
    with pytest.raises(InputError, match=r"pass --dataset-format"):
        load_dataset(p)
    with pytest.raises(InputError) as e:
        load_run(p, format="no-such")
    assert e.value.problem.file == "--run-format"


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "x", "m.0abc", "Q42", "1.5", "2001-01-01"]),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(
        st.sampled_from(["id", "ID", "QuestionId", "question", "RawQuestion", "Parses", "Answers", "AnswerType",
                         "AnswerArgument", "answers", "answer", "answer_id", "answerType", "sparql", "Sparql",
                         "program", "choices", "function", "translations", "name"]), c, max_size=4),
    max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(_json, max_size=4), st.sampled_from(["cwq", "mintaka", "kqapro", "webqsp"]))
def test_loaders_account_for_every_record_of_arbitrary_json(records, fmt):
    import tempfile

    from kgqa.model import InputError

    doc = {"Questions": records} if fmt == "webqsp" else records
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "x.json"
        p.write_text(json.dumps(doc))
        try:
            ds = load_dataset(p, format=fmt)
        except InputError:
            return
    skipped = [q for q in ds.problems if q.severity == "error"]
    assert len(ds) + len(skipped) == len(records)
    for it in ds:
        assert isinstance(it.id, str) and it.id
        assert it.answer is None or isinstance(it.answer, (BooleanAnswer, TableAnswer))
