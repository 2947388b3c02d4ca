"""The embedded engine's answers in bulk (issue 17): the terms decoded once per batch and the
tables built without re-checking rows give the same outcomes as decoding every cell on its own;
queues topped up by halves answer every query, in order, as one query at a time in-process."""

from __future__ import annotations

import pyoxigraph as ox
import pytest
import yaml
from hypothesis import given, settings, strategies as st

from kgqa.demo import DATA
from kgqa.execute import embedded
from kgqa.execute.embedded import EmbeddedEngine, _decode, _outcome, _Terms, evaluate
from kgqa.execute.engine import transient
from kgqa.model import BooleanAnswer, Outcome, Status, TableAnswer
from conftest import examples

KG = DATA / "kg.ttl"


def reference(msg: tuple, elapsed: float) -> Outcome:
    """Every cell decoded on its own, the table checked row by row (the general way)."""
    kind = msg[0]
    if kind == "table":
        return Outcome(Status.OK, TableAnswer(msg[1], tuple(tuple(_decode(c) for c in row) for row in msg[2])),
                       "", elapsed)
    if kind == "bool":
        return Outcome(Status.OK, BooleanAnswer(msg[1]), "", elapsed)
    if kind == "parse":
        return Outcome(Status.PARSE_ERROR, None, msg[1], elapsed)
    if kind == "memory":
        return Outcome(Status.EXEC_ERROR, None, transient(f"memory limit: {msg[1]}"), elapsed)
    return Outcome(Status.EXEC_ERROR, None, msg[1], elapsed)


def _store(path) -> ox.Store:
    store = ox.Store()
    store.load(path=str(path), format=ox.RdfFormat.TURTLE)
    return store


def _demo_queries() -> list[str]:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from bench_exec import trivial_queries

    return trivial_queries(600)


def test_bulk_decoding_agrees_on_the_demo_kg():
    store = _store(KG)
    terms = _Terms()
    queries = _demo_queries() + ["SELECT * WHERE { ?s ?p ?o }", "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }",
                                 "SELECT ?x WHERE { OPTIONAL { ?x <http://nothing> ?y } }", "SELECT ?x WHERE {",
                                 "ASK { ?s ?p ?o }", "SELECT (BNODE() AS ?b) (<< <http://a> <http://b> <http://c> >> AS ?t) {}"]
    kinds = set()
    for q in queries:
        msg = evaluate(store, q, 10_000, True, 1 << 26)
        kinds.add(msg[0])
        got = _outcome(msg, 0.25, terms)
        assert got == reference(msg, 0.25), q
        assert _outcome(msg, 0.25) == got
    assert kinds == {"table", "bool", "parse"}


def test_bulk_decoding_agrees_on_ck25(shared_data):
    store = _store(shared_data / "ck25" / "graphs" / "prod-inst.ttl")
    doc = yaml.safe_load((shared_data / "ck25" / "questions.yml").read_text(encoding="utf-8"))
    from kgqa.execute.normalise import normalise

    terms = _Terms()
    n = 0
    for q in doc["questions"]:
        msg = evaluate(store, normalise(q["query"]["sparql"]).text, 10_000, True, 1 << 26)
        n += msg[0] == "table" and len(msg[2]) > 0
        assert _outcome(msg, 0.5, terms) == reference(msg, 0.5)
    assert n > 30


def _indexed(store: ox.Store, query: str) -> tuple:
    """A SELECT's rows read cell by cell by position (how the worker read them before)."""
    res = store.query(query, use_default_graph_as_union=True)
    variables = tuple(v.value for v in res.variables)
    return ("table", variables, [tuple(embedded._cell(sol[i]) for i in range(len(variables))) for sol in res])


def test_rows_read_by_iteration_are_the_rows_read_by_position(shared_data):
    """evaluate() reads a solution's values by iterating over it: the same cells, in the order
    of the projected variables, as reading them by position (unbound cells, reordered and
    repeated variables, literals of every kind, blank nodes)."""
    demo = _store(KG)
    queries = [q for q in _demo_queries()[:200] if not q.startswith("ASK")] + [
        "SELECT ?o ?s ?p WHERE { ?s ?p ?o } LIMIT 50",
        "SELECT ?x ?s WHERE { ?s ?p ?o OPTIONAL { ?s <http://nothing> ?x } } LIMIT 5",
        "SELECT * WHERE { ?s ?p ?o } LIMIT 50",
        "SELECT (STRDT('1', <http://x/t>) AS ?d) (1 AS ?n) ('x'@en AS ?l) ?unbound ?n2 {}",
    ]
    for q in queries:
        assert evaluate(demo, q, 10_000, True, 1 << 26) == _indexed(demo, q), q
    ck25 = _store(shared_data / "ck25" / "graphs" / "prod-inst.ttl")
    for q in ["SELECT ?p ?s ?o WHERE { ?s ?p ?o } LIMIT 3000", "SELECT * WHERE { ?s ?p ?o } OFFSET 20000 LIMIT 2000"]:
        assert evaluate(ck25, q, 10_000, True, 1 << 26) == _indexed(ck25, q)


_iri = st.text(min_size=1, max_size=8).map(lambda s: "http://x/" + s)
_literal = st.tuples(st.text(max_size=6), st.one_of(st.none(), _iri), st.none()) | \
    st.tuples(st.text(max_size=6), st.none(), st.sampled_from(["en", "de", "en-GB"]))
_cell = st.one_of(st.none(), _iri, _literal, st.text(min_size=1, max_size=4).map(lambda s: (s,)))


@st.composite
def _messages(draw):
    kind = draw(st.sampled_from(["table", "table", "bool", "parse", "error", "memory"]))
    if kind == "table":
        width = draw(st.integers(1, 3))
        rows = draw(st.lists(st.tuples(*[_cell] * width), max_size=6))
        return ("table", tuple(f"v{i}" for i in range(width)), rows)
    if kind == "bool":
        return ("bool", draw(st.booleans()))
    return (kind, draw(st.text(max_size=10)))


@examples(300)
def test_bulk_decoding_agrees_on_any_message(examples):
    """One term cache over many messages (cleared beyond a small cap, as beyond TERM_CACHE)."""
    @settings(max_examples=examples, deadline=None)
    @given(st.lists(_messages(), max_size=12), st.integers(0, 4))
    def check(messages, cap):
        saved = embedded.TERM_CACHE
        embedded.TERM_CACHE = cap
        try:
            terms = _Terms()
            for msg in messages:
                assert _outcome(msg, 0.0, terms) == reference(msg, 0.0)
        finally:
            embedded.TERM_CACHE = saved

    check()


@pytest.mark.parametrize("workers", [1, 2])
def test_queues_answer_every_query_in_order(workers):
    """Many small queries, some large ones (over half a queue's text), errors and parse errors
    mixed in: every outcome is the in-process one, in input order."""
    store = _store(KG)
    small = _demo_queries()
    big = [q + " #" + "x" * (embedded.QUEUE_CHARS // 2 + k) for k, q in enumerate(small[:6])]
    queries = []
    for i, q in enumerate(small):
        queries.append(q)
        if i % 97 == 0:
            queries.append(big[(i // 97) % len(big)])
        if i % 131 == 0:
            queries.append(f"SELECT ?x WHERE {{ # {i}")
        if i % 173 == 0:
            queries.append(f"SELECT (<http://x/{i}> + 1 AS ?x) {{}}")
    with EmbeddedEngine.from_files([KG], workers=workers) as eng:
        for _ in range(2):
            outs = eng.execute_many(queries)
            assert len(outs) == len(queries)
            for q, o in zip(queries, outs):
                ref = reference(evaluate(store, q, 10_000, True, eng.max_result_bytes), o.elapsed)
                assert (o.status, o.answer, o.message) == (ref.status, ref.answer, ref.message), q
        assert eng.restarts == 0


def test_workers_run_as_batch_work():
    """Workers ask the scheduler for SCHED_BATCH (Linux): waking one with a batch does not preempt
    the parent that feeds them (best effort: where the call is refused they run as before)."""
    import os
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("SCHED_BATCH is Linux's")
    with EmbeddedEngine.from_files([KG], workers=2) as eng:
        assert eng.execute("ASK { ?s ?p ?o }").answer == BooleanAnswer(True)
        assert {os.sched_getscheduler(w.proc.pid) for w in eng._pool} == {os.SCHED_BATCH}
    assert os.sched_getscheduler(0) != os.SCHED_BATCH  # the parent is left as it was
