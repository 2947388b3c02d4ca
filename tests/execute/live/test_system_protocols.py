"""The GERBIL QA / Text2SPARQL contracts (reading responses), the journal, the question list
and the adapter's callable replies: unit and property tests."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from conftest import examples

from kgqa.execute.live.client import prediction_from_record, questions_for
from kgqa.execute.live.journal import Journal
from kgqa.execute.live.protocols import (
    Question,
    gerbil_response,
    parse_gerbil,
    parse_text2sparql,
    text2sparql_response,
)
from kgqa.model import BooleanAnswer, Dataset, InputError, Item, Status, TableAnswer
from kgqa.model.terms import IRI, Literal
from kgqa.service.sources import reply_from_value

Q = Question("q7", "en", "Who wrote Hamlet?", "q7")
SEL = {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": "http://ex.org/S"}}]}}


def body(doc) -> bytes:
    return json.dumps(doc).encode()


# --------------------------------------------------------------------------- GERBIL


def test_gerbil_qald_response_with_query_and_answers():
    p = parse_gerbil(body({"questions": [{"id": "q7", "question": [{"language": "en", "string": "Who wrote Hamlet?"}],
                                          "query": {"sparql": "SELECT ?x {}"}, "answers": [SEL]}]}), Q)
    assert p.outcome == "ok" and p.sparql == "SELECT ?x {}" and p.warnings == []
    assert p.answer == TableAnswer(("x",), ((IRI("http://ex.org/S"),),))


def test_gerbil_eqald_response():
    doc = {"questions": [{"id": "1", "metadata": {"answertype": "resource"}, "query": {"SPARQL": "ASK {}"},
                          "answers": [{"bindings": [{"result": {"type": "literal", "value": "7"}}], "confidence": "0.9"}]}]}
    p = parse_gerbil(body(doc), Q)
    assert p.outcome == "ok" and p.sparql == "ASK {}"
    assert p.answer == TableAnswer(("result",), ((Literal("7"),),))
    assert p.metadata == {"confidence": "0.9", "answertype": "resource"}
    assert any("response id '1'" in w for w in p.warnings)


def test_gerbil_query_only_and_explicit_empty_answers():
    p = parse_gerbil(body({"questions": [{"id": "q7", "query": {"sparql": "SELECT ?x {}"}}]}), Q)
    assert p.outcome == "ok" and p.answer is None and p.sparql == "SELECT ?x {}"
    p = parse_gerbil(body({"questions": [{"id": "q7", "answers": []}]}), Q)
    assert p.outcome == "ok" and p.answer == TableAnswer((), ()) and p.sparql is None
    p = parse_gerbil(body({"questions": [{"id": "q7", "answers": [{"head": {}, "boolean": True}]}]}), Q)
    assert p.answer == BooleanAnswer(True)


@pytest.mark.parametrize("raw,why", [
    (b"<html>oops</html>", "not JSON"),
    (b"", "empty response"),
    (b"\xff\xfe", "not UTF-8"),
    (b"[1, 2]", "got a JSON list"),
    (b'{"questions": []}', "no non-empty 'questions'"),
    (b'{"questions": [{"id": "q7"}]}', "neither a query nor answers"),
    (b'{"questions": [{"id": "q7", "query": 5}]}', "'query' must be"),
    (b'{"questions": [{"id": "q7", "answers": [{"results": {}}]}]}', "not SPARQL 1.1 results"),
    (b'{"questions": [{"id": "q7", "question": [{"language": "en", "string": "Who wrote Faust?"}], "answers": []}]}',
     "another question"),
    (b'{"questions": [{"id": "a", "answers": []}, {"id": "b", "answers": []}]}', "none is the one asked"),
])
def test_gerbil_malformed_responses_say_why(raw, why):
    p = parse_gerbil(raw, Q)
    assert p.outcome == "malformed_response" and why in p.message, p.message


def test_gerbil_several_entries_pick_the_asked_question():
    doc = {"questions": [
        {"id": "a", "question": [{"language": "en", "string": "Who wrote Faust?"}], "answers": []},
        {"id": "b", "question": [{"language": "en", "string": "Who  wrote Hamlet? "}], "answers": [SEL]},
    ]}
    p = parse_gerbil(body(doc), Q)
    assert p.outcome == "ok" and len(p.answer) == 1 and "question string" in p.warnings[0]
    doc = {"questions": [{"id": "x", "answers": []}, {"id": "q7", "answers": [SEL]}]}
    p = parse_gerbil(body(doc), Q)
    assert p.outcome == "ok" and len(p.answer) == 1


# --------------------------------------------------------------------------- Text2SPARQL


def test_text2sparql_responses():
    D = "https://text2sparql.aksw.org/2025/corporate/"
    ok = parse_text2sparql(body({"dataset": D, "question": "Who wrote Hamlet?", "query": "SELECT 1 {}"}), Q, D)
    assert ok.outcome == "ok" and ok.sparql == "SELECT 1 {}" and ok.warnings == []
    other = parse_text2sparql(body({"dataset": "urn:x", "question": "Who wrote Hamlet?", "query": "ASK {}"}), Q, D)
    assert other.outcome == "ok" and "dataset 'urn:x'" in other.warnings[0]
    empty = parse_text2sparql(body({"query": ""}), Q, D)
    assert empty.outcome == "ok" and empty.sparql is None and empty.warnings == ["empty query"]
    for raw, why in [(body({"question": "Who wrote Hamlet?"}), "no 'query'"), (body({"query": None}), "must be a string"),
                     (body({"query": "ASK {}", "question": "Who?"}), "another question"), (b"nope", "not JSON")]:
        p = parse_text2sparql(raw, Q, D)
        assert p.outcome == "malformed_response" and why in p.message


# --------------------------------------------------------------------------- properties

iris = st.from_regex(r"http://ex\.org/[a-z]{1,8}", fullmatch=True).map(IRI)
lits = st.text(min_size=0, max_size=12).map(lambda s: Literal(s))
terms = st.one_of(iris, lits)
tables = st.lists(terms, max_size=6).map(lambda ts: TableAnswer.single_column(ts, "x"))
answers = st.one_of(st.booleans().map(BooleanAnswer), tables)


@examples(150)
def test_gerbil_response_round_trips(examples):
    @settings(max_examples=examples, deadline=None)
    @given(answer=st.one_of(st.none(), answers), sparql=st.one_of(st.none(), st.text(min_size=1, max_size=40)))
    def check(answer, sparql):
        _check_gerbil_response_round_trips(answer, sparql)

    check()


def _check_gerbil_response_round_trips(answer, sparql):
    if answer is None and (sparql is None or not sparql.strip()):
        return
    doc = gerbil_response("q7", Q.text, "en", sparql, answer)
    p = parse_gerbil(json.dumps(doc).encode(), Q)
    assert p.outcome == "ok"
    assert p.answer == answer
    assert p.sparql == (sparql if sparql and sparql.strip() else None)


@given(question=st.text(min_size=1, max_size=30), sparql=st.text(max_size=30))
@settings(max_examples=100, deadline=None)
def test_text2sparql_response_round_trips(question, sparql):
    q = Question("x", "en", question, "x")
    p = parse_text2sparql(json.dumps(text2sparql_response("urn:d", question, sparql)).encode(), q, "urn:d")
    assert p.outcome == "ok" and p.sparql == (sparql if sparql.strip() else None)


@examples(300)
def test_any_body_is_ok_or_malformed_never_an_exception(examples):
    @settings(max_examples=examples, deadline=None)
    @given(raw=st.one_of(st.binary(max_size=200), st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10)),
        lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(
            st.sampled_from(["questions", "query", "answers", "id", "question", "sparql", "head", "results",
                             "bindings", "boolean", "x"]), c, max_size=4)), max_leaves=12).map(lambda d: json.dumps(d).encode())))
    def check(raw):
        _check_any_body_is_ok_or_malformed_never_an_exception(raw)

    check()


def _check_any_body_is_ok_or_malformed_never_an_exception(raw):
    for p in (parse_gerbil(raw, Q), parse_text2sparql(raw, Q, "urn:d")):
        assert p.outcome in ("ok", "malformed_response")
        assert (p.outcome == "ok") == (p.message == "")


# --------------------------------------------------------------------------- the run, questions, journal


def test_failed_record_becomes_a_failure_never_an_empty_answer():
    p = prediction_from_record({"id": "q1", "outcome": "http_error", "http_status": 502, "message": "HTTP 502",
                                "sparql": "ASK {}", "answer": {"head": {}, "boolean": True}, "raw": "bad gateway"})
    assert p.status is Status.HTTP_ERROR and p.answer is None and p.sparql is None and p.message == "HTTP 502"
    assert p.outcome().status is Status.HTTP_ERROR and p.metadata["system"]["raw"] == "bad gateway"
    ok = prediction_from_record({"id": "q1", "outcome": "ok", "sparql": "ASK {}", "answer": {"head": {}, "boolean": False}})
    assert ok.status is Status.OK and ok.answer == BooleanAnswer(False)


def test_questions_for_per_language_and_single_language_datasets():
    t2s = Dataset("ck", [Item("ck:1", {"en": "One?", "de": "Eins?"}, lang_ids={"en": "ck:1-en", "de": "ck:1-de"})])
    assert [(q.id, q.lang, q.text) for q in questions_for(t2s)[0]] == [("ck:1-en", "en", "One?"), ("ck:1-de", "de", "Eins?")]
    assert [q.id for q in questions_for(t2s, ["de"])[0]] == ["ck:1-de"]
    qald = Dataset("qald", [Item("1", {"en": "One?", "de": "Eins?"}), Item("2", {"de": "Zwei?"})])
    qs, problems = questions_for(qald)
    assert [(q.id, q.lang) for q in qs] == [("1", "en"), ("2", "de")] and problems == []
    qs, problems = questions_for(qald, ["en"])
    assert [q.id for q in qs] == ["1"] and "no question text in en" in problems[0].message
    with pytest.raises(InputError, match="one language per run"):
        questions_for(qald, ["en", "de"])


def test_journal_drops_a_torn_line_and_refuses_another_session(tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal.open(path, {"url": "http://a/", "protocol": "gerbil", "dataset": "d"}) as j:
        j.append({"id": "q1", "outcome": "ok"})
        j.append({"id": "q2", "outcome": "timeout"})
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"id": "q3", "outc')  # a write cut short by kill -9
    with Journal.open(path, {"url": "http://a/", "protocol": "gerbil", "dataset": "d"}) as j:
        assert list(j.records) == ["q1", "q2"] and j.dropped == 1
        j.append({"id": "q3", "outcome": "ok"})
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 and json.loads(lines[-1])["id"] == "q3"
    with pytest.raises(InputError, match="url 'http://a/'"):
        Journal.open(path, {"url": "http://b/", "protocol": "gerbil", "dataset": "d"})
    with Journal.open(path, {"url": "http://b/", "protocol": "gerbil", "dataset": "d"}, fresh=True) as j:
        assert j.records == {}
    (tmp_path / "x.jsonl").write_text("hello\n")
    with pytest.raises(InputError, match="not a kgqa system-ask journal"):
        Journal.open(tmp_path / "x.jsonl", {"url": "u", "protocol": "gerbil", "dataset": "d"})


# --------------------------------------------------------------------------- the adapter's callable replies


def test_callable_return_values():
    assert reply_from_value("ASK {}").sparql == "ASK {}"
    r = reply_from_value({"query": "SELECT ?x {}", "answers": ["http://ex.org/a", "7"], "confidence": 0.3})
    assert r.sparql == "SELECT ?x {}" and len(r.answer) == 2 and r.extra == {"confidence": 0.3}
    assert isinstance(r.answer.rows[0][0], IRI)
    assert reply_from_value({"answers": True}).answer == BooleanAnswer(True)
    assert reply_from_value({"sparql": "ASK {}", "answer": SEL}).answer == TableAnswer(("x",), ((IRI("http://ex.org/S"),),))
    for bad, why in [(42, "returned int"), ({}, "neither a query nor answers"), ({"query": 1}, "must be a string"),
                     ({"answers": [{"a": 1}]}, "strings or numbers")]:
        with pytest.raises(ValueError, match=why):
            reply_from_value(bad)
