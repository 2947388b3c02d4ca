"""Incremental SPARQL results readers (issue 24, scope 2): any split of a body gives the answer
the whole-document parser gives; row and column caps stop reading at the piece that crosses them;
hostile endpoint bodies end as exec_error with the cap named."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given, settings, strategies as st

from conftest import examples
from faultserver import FaultServer, Reply
from kgqa.execute.endpoint import SparqlEndpoint
from kgqa.execute.results_stream import CapExceeded, JsonResultsStream
from kgqa.execute.results_xml import XmlResultsStream, parse_results_xml
from results_xml_writer import to_results_xml
from kgqa.model import Status
from kgqa.model.answer import TableAnswer, from_results_json
from kgqa.model.terms import IRI, Literal

names = st.text("abcxyz", min_size=1, max_size=3)
terms = st.one_of(st.builds(lambda s: IRI("http://x/" + s), st.text("abc/#", max_size=5)),
                  st.builds(lambda s: Literal(s), st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=6)),
                  st.builds(lambda s: Literal(s, None, "en"), st.text("ab ", max_size=4)),
                  st.none())


def cell(t):
    if isinstance(t, IRI):
        return {"type": "uri", "value": t.value}
    d = {"type": "literal", "value": t.value}
    if t.language:
        d["xml:lang"] = t.language
    return d


@st.composite
def documents(draw):
    declared = draw(st.lists(names, max_size=3, unique=True))
    undeclared = draw(st.lists(names.map(lambda n: "u" + n), max_size=2, unique=True))
    allv = declared + undeclared
    rows = draw(st.lists(st.lists(terms, min_size=len(allv), max_size=len(allv)), max_size=6))
    bindings = [{v: cell(t) for v, t in zip(allv, r) if t is not None} for r in rows]
    doc = {"results": {"bindings": bindings}, "head": {"vars": declared}}
    if draw(st.booleans()):
        doc = {"head": doc["head"], "results": doc["results"]}
    return doc


def feed_split(stream, data: bytes, cuts: list[int]):
    prev = 0
    for c in sorted(set(min(c, len(data)) for c in cuts)):
        stream.feed(data[prev:c])
        prev = c
    stream.feed(data[prev:])
    return stream.close()


@examples(200)
def test_json_any_split_equals_whole_document(examples):
    @settings(max_examples=examples, deadline=None)
    @given(doc=documents(), cuts=st.lists(st.integers(0, 2000), max_size=8), indent=st.sampled_from([None, 1]))
    def check(doc, cuts, indent):
        _check_json_any_split_equals_whole_document(doc, cuts, indent)

    check()


def _check_json_any_split_equals_whole_document(doc, cuts, indent):
    data = json.dumps(doc, indent=indent, ensure_ascii=False).encode("utf-8")
    assert feed_split(JsonResultsStream(), data, cuts) == from_results_json(doc)


@settings(max_examples=100, deadline=None)
@given(doc=documents(), cuts=st.lists(st.integers(0, 3000), max_size=8))
def test_xml_any_split_equals_whole_document(doc, cuts):
    answer = from_results_json(doc)
    xml = to_results_xml(answer).encode("utf-8")
    got = feed_split(XmlResultsStream(), xml, cuts)
    assert got == parse_results_xml(xml)
    assert set(got.variables) == set(answer.variables)


def test_boolean_and_head_only():
    assert feed_split(JsonResultsStream(), b'{"head": {}, "boolean": true}', [3, 9]).value is True
    assert feed_split(JsonResultsStream(), b'{"head": {"vars": ["x"]}}', [5]) == TableAnswer(("x",), ())


@pytest.mark.parametrize("body, message", [
    (b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": "a"}}', "truncated"),
    (b'{"head": {"vars": ["x"]}, "results": {"bindings": [1]}}', "binding is not an object"),
    (b'{"head": {"vars": ["x"]}, "results": {"bindings": {}}}', "not a list"),
    (b'{"head": {"vars": ["x"]}, "results": []}', "no 'bindings' list"),
    (b'{"head": {}, "boolean": 1' + b"1" * 5000 + b"}", "malformed SPARQL results JSON"),
    (b'{"a": 1} x', "extra data"),
    (b'\xff{"head": {}}', "not UTF-8"),
    (b'{"head": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
])
def test_json_malformed_bodies_say_what_is_wrong(body, message):
    with pytest.raises(ValueError, match=message):
        feed_split(JsonResultsStream(), body, [7, 100])


def rows_json(n: int, start: int = 0) -> bytes:
    return b",".join(b'{"x": {"type": "uri", "value": "http://x/%d"}}' % i for i in range(start, start + n))


def test_row_cap_stops_at_the_piece_that_crosses_it():
    s = JsonResultsStream(max_rows=10)
    s.feed(b'{"head": {"vars": ["x"]}, "results": {"bindings": [' + rows_json(10) + b",")
    with pytest.raises(CapExceeded, match="more than 10 rows"):
        s.feed(rows_json(1, 10) + b",")


def test_undeclared_variables_count_against_the_column_cap():
    s = JsonResultsStream(max_columns=5)
    s.feed(b'{"head": {"vars": ["a"]}, "results": {"bindings": [')
    for i in range(4):
        s.feed(b'{"v%d": {"type": "literal", "value": "1"}},' % i)
    with pytest.raises(CapExceeded, match="more than 5 variables"):
        s.feed(b'{"v9": {"type": "literal", "value": "1"}},')
    x = XmlResultsStream(max_columns=2)
    x.feed(b'<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><results>')
    x.feed(b'<result><binding name="a"><literal>1</literal></binding><binding name="b"><literal>1</literal>'
           b'</binding></result>')
    with pytest.raises(CapExceeded, match="more than 2 variables"):
        x.feed(b'<result><binding name="c"><literal>1</literal></binding></result>')


def test_xml_doctype_refused_wherever_it_is():
    doc = b"<?xml version='1.0'?><!--" + b"x" * 5000 + b"--><!DOCTYPE sparql [<!ENTITY a 'b'>]><sparql/>"
    with pytest.raises(ValueError, match="DTD"):
        feed_split(XmlResultsStream(), doc, [100, 4000])


# --------------------------------------------------------------------------- hostile endpoints


def undeclared_body(n: int) -> bytes:
    items = b",".join(b'{"v%d": {"type": "literal", "value": "x"}}' % i for i in range(n))
    return b'{"head": {"vars": []}, "results": {"bindings": [' + items + b"]}}"


def test_endpoint_undeclared_variables_hit_the_column_cap():
    with FaultServer(lifetime=60) as server:
        server.handler = lambda req: Reply(body=undeclared_body(10_000))
        with SparqlEndpoint(server.url(), retries=0) as ep:
            o = ep.execute("SELECT * WHERE { ?s ?p ?o }", timeout=30)
    assert o.status is Status.EXEC_ERROR
    assert "more than 256 variables" in o.message


def test_endpoint_endless_rows_stop_at_the_row_cap_not_the_byte_cap():
    def endless():
        yield b'{"head": {"vars": ["x"]}, "results": {"bindings": ['
        while True:
            yield rows_json(500) + b","

    with FaultServer(lifetime=60) as server:
        server.handler = lambda req: Reply(stream=endless)
        with SparqlEndpoint(server.url(), retries=0) as ep:
            o = ep.execute("SELECT ?x WHERE { ?s ?p ?x }", timeout=30, max_rows=1000)
    assert o.status is Status.EXEC_ERROR
    assert "more than 1000 rows (row cap" in o.message


def test_endpoint_gzip_of_millions_of_rows_stops_at_the_row_cap():
    body = gzip.compress(b'{"head": {"vars": []}, "results": {"bindings": [' + b"{}," * 2_000_000 + b"{}]}}", 9)
    with FaultServer(lifetime=60) as server:
        server.handler = lambda req: Reply(body=body, headers={"Content-Encoding": "gzip"})
        with SparqlEndpoint(server.url(), retries=0) as ep:
            o = ep.execute("SELECT * WHERE { ?s ?p ?o }", timeout=30, max_rows=5000)
    assert o.status is Status.EXEC_ERROR
    assert "more than 5000 rows (row cap" in o.message


def test_endpoint_small_results_still_parse():
    with FaultServer(lifetime=60) as server:
        server.handler = lambda req: Reply.select(["x"], [{"x": {"type": "uri", "value": "http://x/a"}},
                                                          {"y": {"type": "literal", "value": "b"}}])
        with SparqlEndpoint(server.url(), retries=0) as ep:
            o = ep.execute("SELECT ?x WHERE { ?s ?p ?x }", timeout=30)
    assert o.status is Status.OK
    assert o.answer == TableAnswer(("x", "y"), ((IRI("http://x/a"), None), (None, Literal("b"))))


def test_only_blanks_may_follow_the_document_and_they_are_not_kept():
    s = JsonResultsStream()
    s.feed(b'{"head": {"vars": ["x"]}, "results": {"bindings": []}}')
    for _ in range(100):
        s.feed(b" \n" * 5000)
    assert len(s._buf) < 100 and not s._pending  # nothing after the document is buffered
    with pytest.raises(ValueError, match="extra data after the document"):
        s.feed(b"  x")
