"""Outcome labels that say what happened (issue 25, part 4): text that is not SPARQL is a
parse_error whatever keywords its words spell; ``refused`` is kept for a query that parses (as
written, decoded, or as the normaliser repairs it) and that the sandbox refuses."""

from __future__ import annotations

import pyoxigraph
import pytest
from hypothesis import given, settings, strategies as st

from conftest import examples

from kgqa.execute.policy import ExecutionPolicy, refused_outcome
from kgqa.model import Status

POLICY = ExecutionPolicy()

PROSE = [
    # an LLM's explanation instead of a query: 'services' is read as SERVICE by pyoxigraph's lexer
    "I could not build a query. The company offers several services to its clients, see the catalogue.",
    # 'WITH' in prose is no update
    "Sorry, I cannot answer this question\nWITH the information in the knowledge graph.",
    "To find the products we would DELETE nothing and INSERT nothing; LOAD the data first.",
    # prose that begins with an update keyword: the parse stops at the very next word
    "With the data available I could not find it; the services listed do not say.",
    "Delete this answer, the graph has no such fact.",
    "Load the page again and ask the services desk.",
    "Insert a query here.",
    "drop it",
    # a query followed by an explanation: the engine stops at 'This', before 'services'
    "SELECT ?p WHERE { ?p a <http://ex.org/Product> }\nThis query lists the products of all services.",
]


@pytest.mark.parametrize("text", PROSE)
def test_prose_is_a_parse_error_not_a_refusal(text):
    _, _, out = POLICY.prepare(text)
    assert out is not None and out.status is Status.PARSE_ERROR
    assert out.message.startswith("parse error: ") and "SERVICE" not in out.message and "Update" not in out.message
    with pytest.raises(SyntaxError):  # the engine agrees: nothing it would run
        pyoxigraph.Store().query(text)
    with pytest.raises(SyntaxError):
        pyoxigraph.Store().update(text)


@pytest.mark.parametrize("query,why", [
    ("SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }", "SERVICE"),
    ("WITH <http://ex.org/g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", "SPARQL Update"),
    ("DROP GRAPH <http://ex.org/g>", "SPARQL Update"),
    ("CLEAR ALL", "SPARQL Update"),
    # broken, but not at the word after the keyword: an update with a mistake, still refused
    ("WITH <http://ex.org/g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o", "SPARQL Update"),
    # parses once decoded (SPARQL 1.1 codepoint escapes): the engine would run it
    ("SELECT * WHERE { \\u0053ERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }", "SERVICE"),
    # parses once the normaliser adds ' AS ?v': the engine would run it
    ("SELECT COUNT(?s) WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }", "SERVICE"),
])
def test_queries_the_engine_would_run_are_refused(query, why):
    _, _, out = POLICY.prepare(query)
    assert out is not None and out.status is Status.REFUSED and why in out.message


def test_an_oversized_text_is_refused_without_parsing():
    big = "word " * 300_000
    _, _, out = POLICY.prepare(big)
    assert out.status is Status.REFUSED and "cap" in out.message


WORDS = ["the", "services", "service", "SERVICE", "with", "WITH", "insert", "DELETE", "load", "clear", "drop",
         "create", "graph", "data", "company", "products", "query", "cannot", "answer", "Select", "where", "ask",
         ".", ",", ":", "?", "I"]


@examples(200)
def test_refused_only_when_the_text_parses(examples):
    @settings(max_examples=examples, deadline=None)
    @given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=14), st.sampled_from([" ", "\n"]))
    def check(words, sep):
        _check_refused_only_when_the_text_parses(words, sep)

    check()


def _check_refused_only_when_the_text_parses(words, sep):
    text = sep.join(words)
    _, _, out = POLICY.prepare(text)
    if out is None:
        return  # accepted: the engine reports its own error
    if out.status is Status.PARSE_ERROR:
        for run in (pyoxigraph.Store().query, pyoxigraph.Store().update):
            with pytest.raises(SyntaxError):
                run(text)
    else:
        assert out.status is Status.REFUSED


def test_the_embedded_engine_labels_alike(tmp_path):
    # the engine's own sandbox (defence in depth, without the executor in front) labels alike
    from kgqa.execute.opener import open_engine

    kg = tmp_path / "kg.ttl"
    kg.write_text("<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\n")
    engine = open_engine(str(kg), None, progress=False)
    try:
        prose, service = engine.execute_many([PROSE[0], "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }"])
    finally:
        engine.close()
    assert prose.status is Status.PARSE_ERROR and service.status is Status.REFUSED
    assert refused_outcome(PROSE[1], "refused: SPARQL Update (WITH at offset 37)").status is Status.PARSE_ERROR
