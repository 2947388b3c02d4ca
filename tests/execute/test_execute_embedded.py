"""The embedded pyoxigraph engine: CK25 gold queries, real timeouts, row caps, result typing,
read-only guarantees, persistent stores, RDF loading."""

from __future__ import annotations

import bz2
import gzip
import json
import os
import signal
import threading
from pathlib import Path

import pytest
import yaml

from kgqa.execute.embedded import EmbeddedEngine, evaluate
from kgqa.execute.engine import GRAPH_VARIABLES, Engine, too_many_rows_message
from kgqa.execute.kgfile import MANIFEST, create_store, fingerprint, load_files, read_manifest
from kgqa.execute.normalise import normalise
from kgqa.model import BooleanAnswer, InputError, Status, TableAnswer
from kgqa.model.terms import XSD_INTEGER, BNode, IRI, Literal
from waiting import wait_until

# one worker: the module's engine (the CK25 KG loaded, worker processes) is made once
pytestmark = pytest.mark.xdist_group("execute-embedded")

COUNT_ALL = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } "
COUNT_DEFAULT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
EXPLOSIVE = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"
WRITES = [
    "INSERT DATA { <http://x/s> <http://x/p> <http://x/o> }",
    "PREFIX pv: <http://ld.company.org/prod-vocab/> DELETE WHERE { ?s pv:memberOf ?o }",
    "LOAD <http://example.org/data.ttl>",
    "CLEAR DEFAULT",
    "DROP ALL",
    "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }",
    "select * where { service <http://example.org/sparql> { ?s ?p ?o } }",
]


@pytest.fixture(scope="module")
def ck25(shared_data) -> Path:
    return shared_data / "ck25"


@pytest.fixture(scope="module")
def engine(ck25):
    e = EmbeddedEngine.from_files([ck25 / "graphs" / "prod-inst.ttl"], workers=2)
    yield e
    e.close()


@pytest.fixture(scope="module")
def gold_queries(ck25) -> dict[int, str]:
    doc = yaml.safe_load((ck25 / "questions.yml").read_text(encoding="utf-8"))
    return {int(q["id"]): q["query"]["sparql"] for q in doc["questions"]}


def _count(engine, q=COUNT_DEFAULT) -> int:
    o = engine.execute(q, timeout=30)
    assert o.status is Status.OK, o.message
    return int(o.answer.rows[0][0].value)


def _lexical(answer) -> set[str]:
    if isinstance(answer, BooleanAnswer):
        return {"true" if answer.value else "false"}
    return {c.value for row in answer.rows for c in row if c is not None}


def test_engine_info_and_protocol(engine, ck25):
    assert isinstance(engine, Engine)
    fp = fingerprint([ck25 / "graphs" / "prod-inst.ttl"])
    assert engine.info.fingerprint == fp and fp.startswith("sha256:") and len(fp) == 7 + 64
    assert engine.info.kind == "oxigraph"
    assert engine.info.signature() == f"oxigraph-{engine.info.version}:kg={fp[:19]}"
    assert engine.quads == 26903
    assert _count(engine) == 26903


def test_ck25_gold_queries_execute_and_match_official_gold(engine, gold_queries, ck25):
    official = json.loads((ck25 / "official-gold" / "ck25_true_result_set.json").read_text(encoding="utf-8"))
    ids = sorted(gold_queries)
    assert len(ids) == 50
    # as written: everything runs except the xsd:int casts of 37 and 42
    raw = dict(zip(ids, engine.execute_many([gold_queries[i] for i in ids], timeout=30)))
    assert sorted(i for i, o in raw.items() if o.status is not Status.OK) == [37, 42]
    assert raw[37].status is Status.EXEC_ERROR and "XMLSchema#int" in raw[37].message
    # normalised: all 50 run
    outs = dict(zip(ids, engine.execute_many([normalise(gold_queries[i]).text for i in ids], timeout=30)))
    assert all(o.status is Status.OK for o in outs.values()), {i: o.message for i, o in outs.items() if o.message}
    equal, differ = [], []
    for i in ids:
        bag = official[f"ck25:{i}-en"]
        if isinstance(outs[i].answer, BooleanAnswer):
            expected = {"true" if bag.get("true") else "false"}
        else:
            expected = set(bag)
        (equal if _lexical(outs[i].answer) == expected else differ).append(i)
    assert len(equal) == 47 and differ == [25, 41, 50]
    assert isinstance(outs[33].answer, BooleanAnswer) and outs[33].answer.value is False
    assert all(o.elapsed is not None and o.elapsed >= 0 for o in outs.values())


def test_explosive_query_times_out_within_limit_and_engine_carries_on(engine):
    before = engine.restarts
    outs = engine.execute_many([EXPLOSIVE, "ASK { ?s ?p ?o }", COUNT_DEFAULT], timeout=1.5)
    assert outs[0].status is Status.TIMEOUT  # how soon after the limit: bench/bench_timeouts.py
    assert outs[0].message == "timeout: query ran longer than 1.5 s and was stopped"
    assert outs[1].answer == BooleanAnswer(True)
    assert int(outs[2].answer.rows[0][0].value) == 26903
    assert engine.restarts == before + 1
    # the replacement worker answers normally
    assert _count(engine) == 26903


def test_row_cap_is_an_error_not_a_truncated_table(engine):
    o = engine.execute("SELECT ?s WHERE { ?s ?p ?o } LIMIT 101", max_rows=100)
    assert o.status is Status.EXEC_ERROR and o.message == too_many_rows_message(100)
    o = engine.execute("SELECT ?s WHERE { ?s ?p ?o } LIMIT 100", max_rows=100)
    assert o.status is Status.OK and len(o.answer) == 100
    o = engine.execute("CONSTRUCT WHERE { ?s ?p ?o } LIMIT 11", max_rows=10)
    assert o.status is Status.EXEC_ERROR and "more than 10 rows" in o.message


def test_result_typing(engine):
    q = """SELECT ?i ?lang ?plain ?typed ?b ?unbound WHERE {
             BIND(<http://x/a> AS ?i) BIND("hallo"@de AS ?lang) BIND("txt" AS ?plain)
             BIND(42 AS ?typed) BIND(BNODE("k") AS ?b) OPTIONAL { ?i <http://x/none> ?unbound } }"""
    o = engine.execute(q)
    assert o.status is Status.OK
    ans = o.answer
    assert ans.variables == ("i", "lang", "plain", "typed", "b", "unbound")
    i, lang, plain, typed, b, unbound = ans.rows[0]
    assert i == IRI("http://x/a")
    assert lang == Literal("hallo", None, "de")
    assert plain == Literal("txt")
    assert typed == Literal("42", XSD_INTEGER)
    assert isinstance(b, BNode) and unbound is None
    ask = engine.execute("ASK { ?s <http://nothing/p> ?o }")
    assert ask.status is Status.OK and ask.answer == BooleanAnswer(False) and ask.label == "ok"
    empty = engine.execute("SELECT ?s WHERE { ?s <http://nothing/p> ?o }")
    assert empty.status is Status.OK and empty.answer == TableAnswer(("s",), ()) and empty.label == "empty"
    g = engine.execute("CONSTRUCT { ?s <http://x/p> ?o } WHERE { VALUES (?s ?o) { (<http://x/a> 1) } }")
    assert g.answer == TableAnswer(GRAPH_VARIABLES, ((IRI("http://x/a"), IRI("http://x/p"),
                                                       Literal("1", XSD_INTEGER)),))


def test_errors_are_outcomes_never_empty_answers(engine):
    p = engine.execute("SELEC ?x WHERE { ?x ?y ?z }")
    assert p.status is Status.PARSE_ERROR and p.answer is None and "1:" in p.message
    e = engine.execute("SELECT * WHERE { ?s undeclared:p ?o }")
    assert e.status is Status.PARSE_ERROR and "Prefix not found" in e.message
    x = engine.execute("PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT (xsd:int('1') AS ?v) {}")
    assert x.status is Status.EXEC_ERROR and x.answer is None


@pytest.mark.parametrize("query", WRITES)
def test_writes_and_federation_are_refused_and_kg_unchanged(engine, query):
    before = _count(engine)
    o = engine.execute(query)
    assert o.status is Status.REFUSED and o.answer is None and o.message.startswith("refused")
    assert _count(engine) == before == 26903


def test_store_query_cannot_update_even_without_the_sandbox(ck25):
    store, m = load_files([ck25 / "graphs" / "prod-inst.ttl"])
    for q in WRITES[:5]:
        kind = evaluate(store, q, 10)[0]
        assert kind == "parse"  # Store.query only parses queries, never updates
    assert len(store) == m.quads == 26903


def test_workers_have_no_network(ck25):
    """Defence in depth: even with the SERVICE refusal switched off, an isolated worker
    cannot reach a server listening on loopback."""
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    srv.settimeout(0.5)
    port = srv.getsockname()[1]
    with EmbeddedEngine.from_files([ck25 / "graphs" / "prod-inst.ttl"], workers=1, allow_service=True,
                                   isolate_network=True) as e:
        if not e.network_isolated:
            pytest.skip("unprivileged user/network namespaces unavailable on this host")
        o = e.execute(f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{port}/sparql> {{ ?s ?p ?o }} }}", timeout=10)
    assert o.status is Status.EXEC_ERROR and "unreachable" in o.message.lower()
    with pytest.raises(socket.timeout):
        srv.accept()
    srv.close()


@pytest.mark.slow  # a 3 s explosive query killed from outside; the README's command keeps tests/test_holes.py's deterministic kill-once/kill-twice checks
def test_worker_death_is_replaced_and_the_query_asked_again(engine):
    # a worker killed from outside (SIGKILL) is replaced and its query run again (issue 34; the
    # deterministic kill-once / kill-twice checks are in tests/test_holes.py): here the explosive
    # query then runs to its timeout instead of becoming a final "worker died" error
    killed = []

    def killer():  # as soon as a worker runs the query (its start is in the shared progress)
        w = wait_until(lambda: next((w for w in engine._pool if w.running() is not None), None), timeout=60,
                       every=0.005, what="a worker running the explosive query")
        os.kill(w.proc.pid, signal.SIGKILL)
        killed.append(w.proc.pid)

    th = threading.Thread(target=killer)
    th.start()
    o = engine.execute(EXPLOSIVE, timeout=3)
    th.join()
    assert killed and o.status is Status.TIMEOUT
    assert _count(engine) == 26903


def test_persistent_store_read_only_and_same_answers(ck25, tmp_path, engine, gold_queries):
    d = tmp_path / "store"
    m = create_store([ck25 / "graphs" / "prod-inst.ttl"], d)
    assert (d / MANIFEST).is_file() and read_manifest(d).fingerprint == m.fingerprint == engine.info.fingerprint
    assert m.quads == 26903 and m.files[0].quads == 26903
    with EmbeddedEngine.from_store(d, workers=1) as disk:
        assert disk.info.fingerprint == engine.info.fingerprint
        assert disk.info.signature() != engine.info.signature()  # "/rocksdb": ties may differ
        for q in WRITES:
            assert disk.execute(q).status is Status.REFUSED
        assert _count(disk) == 26903
        qs = [normalise(gold_queries[i]).text for i in (1, 5, 33, 37)]
        rowsets = lambda outs: [set(o.answer.rows) if isinstance(o.answer, TableAnswer) else o.answer  # noqa: E731
                                for o in outs]
        assert rowsets(disk.execute_many(qs)) == rowsets(engine.execute_many(qs))
        assert disk.execute(EXPLOSIVE, timeout=0.5).status is Status.TIMEOUT  # never finishes: any limit
        assert _count(disk) == 26903
    assert read_manifest(d).fingerprint == m.fingerprint
    with pytest.raises(InputError, match="not empty"):
        create_store([ck25 / "graphs" / "prod-inst.ttl"], d)
    with pytest.raises(InputError, match="kgqa-store.json missing"):
        EmbeddedEngine.from_store(tmp_path)


def test_named_graph_compression_and_union_default(tmp_path):
    ttl = b"@prefix x: <http://x/> .\nx:a x:p x:b .\nx:b x:p \"v\"@en .\n"
    (tmp_path / "a.ttl.gz").write_bytes(gzip.compress(ttl))
    (tmp_path / "b.nt.bz2").write_bytes(bz2.compress(b"<http://x/c> <http://x/q> \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"))
    (tmp_path / "plain.ttl").write_bytes(ttl)
    fp_plain = fingerprint([tmp_path / "plain.ttl"])
    assert fingerprint([tmp_path / "a.ttl.gz"]) == fp_plain  # content, not compression or name
    assert fingerprint([tmp_path / "a.ttl.gz"], graph="http://g/") != fp_plain
    files = [tmp_path / "a.ttl.gz", tmp_path / "b.nt.bz2"]
    assert fingerprint(files) == fingerprint(list(reversed(files)))
    with EmbeddedEngine.from_files(files, graph="http://g/", workers=1) as e:
        assert e.quads == 3
        assert _count(e) == 3  # union default graph
        assert _count(e, COUNT_ALL) == 3
        o = e.execute("SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 1")
        assert o.answer.rows == ((IRI("http://g/"),),)
    with EmbeddedEngine.from_files(files, graph="http://g/", workers=1, union_default_graph=False) as e:
        assert _count(e) == 0 and _count(e, COUNT_ALL) == 3
        assert e.info.version.endswith("/default-graph")


def test_bad_rdf_names_file_line_and_what_was_loaded(tmp_path):
    good = tmp_path / "good.nt"
    good.write_text("<http://x/a> <http://x/p> <http://x/b> .\n")
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix x: <http://x/> .\nx:a x:p x:b .\nx:a x:p \"unterminated .\n")
    with pytest.raises(InputError) as ei:
        load_files([good, bad])
    msg = str(ei.value)
    assert "bad.ttl" in msg and "line 3" in msg and "1 earlier file(s) with 1 quads were loaded" in msg
    with pytest.raises(InputError, match="unknown RDF file extension '.csv'"):
        load_files([tmp_path / "x.csv"]) if (tmp_path / "x.csv").write_text("a") else None
    with pytest.raises(InputError, match="not found"):
        load_files([tmp_path / "missing.ttl"])
