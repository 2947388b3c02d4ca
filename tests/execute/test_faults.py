"""Trust under attack and faults (issue 11): FROM honoured, bounded memory and bytes, nothing
lost on kill -9 or Ctrl-C, transient failures never cached. Endpoints are the local fault
server (tests/faultserver.py, loopback only)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faultserver import EMPTY_SELECT, FaultServer, Reply
from kgqa.execute.cache import CachedEngine, ResultCache, engine_key
from kgqa.execute.embedded import EmbeddedEngine, has_dataset_clause
from kgqa.execute.endpoint import SparqlEndpoint
from kgqa.execute.engine import TRANSIENT_NOTE, is_transient
from kgqa.model import Status, TableAnswer
from kgqa.model.outcome import Outcome
from kgqa.model.terms import Literal
from waiting import wait_until

ROOT = Path(__file__).parents[2]
KG = """<http://x/a> <http://x/p> "in the default graph" .
"""
KG_G = """<http://x/b> <http://x/p> "in graph g" <http://x/g> .
"""


def doubling(n: int) -> str:
    """The 900-byte query of issue 11: n nested CONCAT(?v, ?v) doublings of a 42-char string."""
    binds = " ".join(f"BIND(CONCAT(?v{i},?v{i}) AS ?v{i + 1})" for i in range(n))
    return (f'SELECT (STRLEN(?v{n}) AS ?n) WHERE {{ BIND("0123456789abcdef0123456789abcdef0123456789" AS ?v0) '
            f"{binds} }}")


@pytest.fixture(scope="module")
def kg_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("kg")
    (d / "kg.nt").write_text(KG, encoding="utf-8")
    (d / "g.nq").write_text(KG_G, encoding="utf-8")
    return [d / "kg.nt", d / "g.nq"]


@pytest.fixture(scope="module")
def engine(kg_files):
    with EmbeddedEngine.from_files(kg_files, workers=1, memory_limit=768 << 20, max_result_bytes=1 << 20) as e:
        yield e


# --------------------------------------------------------------------------- FROM


def values(o: Outcome) -> set[str]:
    assert o.status is Status.OK, o.message
    return {c.value for row in o.answer.rows for c in row if c is not None}


def test_from_selects_graphs_and_never_returns_the_whole_kg(engine):
    assert values(engine.execute("SELECT ?o WHERE { ?s ?p ?o }")) == {"in the default graph", "in graph g"}
    # a non-http(s) graph IRI is refused by the sandbox, before the engine (never the whole KG)
    refused = engine.execute("SELECT ?o FROM <file:///etc/passwd> WHERE { ?s ?p ?o }")
    assert refused.status is Status.REFUSED and "file:///etc/passwd" in refused.message
    assert values(engine.execute("SELECT ?o FROM <http://x/nothing> WHERE { ?s ?p ?o }")) == set()
    assert values(engine.execute("SELECT ?o FROM <http://x/g> WHERE { ?s ?p ?o }")) == {"in graph g"}
    # FROM NAMED only: the default graph is empty (SPARQL 1.1 section 13.2), GRAPH sees the named graph
    assert values(engine.execute("SELECT ?o FROM NAMED <http://x/g> WHERE { ?s ?p ?o }")) == set()
    assert values(engine.execute("SELECT ?o FROM NAMED <http://x/g> WHERE { GRAPH ?g { ?s ?p ?o } }")) == {"in graph g"}


def test_glued_from_selects_its_graph_not_the_union(engine):
    # pyoxigraph reads FROMex:g as FROM ex:g: the default graph is that graph, never the whole KG
    q = "PREFIX ex: <http://x/> SELECT ?o FROMex:g WHERE { ?s ?p ?o }"
    assert has_dataset_clause(q)
    assert values(engine.execute(q)) == {"in graph g"}


def test_dataset_clause_detection_reads_the_query_as_the_engine_does():
    assert has_dataset_clause("select * from <x> where {}")
    assert has_dataset_clause("SELECT * \\u0046ROM <x> WHERE {}")
    assert not has_dataset_clause('SELECT * WHERE { ?s ?p "from" } # FROM <x>')
    assert not has_dataset_clause("SELECT ?from WHERE { ?s ex:from ?from }")


# --------------------------------------------------------------------------- memory and bytes


def test_isolation_and_limits_are_in_the_signature(engine):
    limits = engine.info.limits
    assert limits.startswith("net=isolated," if engine.network_isolated else "net=NOT-isolated,")
    assert "mem=768MiB/worker" in limits and "result=1MiB" in limits
    from kgqa.execute.executor import Executor

    assert Executor(engine).signature_parts()["limits"] == limits  # in the score signature
    assert limits not in engine.info.signature()  # not in the engine part of the cache key


def test_string_doubling_hits_the_memory_limit_and_the_run_goes_on(engine, tmp_path):
    cache = ResultCache(tmp_path / "c.sqlite")
    ce = CachedEngine(engine, cache)
    outs = ce.execute_many([doubling(27), "ASK { ?s ?p ?o }"], timeout=60)
    assert outs[0].status is Status.EXEC_ERROR and outs[0].message.startswith("memory limit")
    assert is_transient(outs[0]) and outs[1].status is Status.OK
    assert cache.get(ce.key, doubling(27), timeout=60) is None  # a memory-limit kill is not cached
    assert cache.get(ce.key, "ASK { ?s ?p ?o }", timeout=60) is not None
    ok = engine.execute(doubling(10))
    assert ok.status is Status.OK and ok.answer.rows[0][0] == Literal("43008", "http://www.w3.org/2001/XMLSchema#integer")


def test_result_byte_cap_is_its_own_outcome_and_not_cached(engine, tmp_path):
    q = doubling(15) .replace("(STRLEN(?v15) AS ?n)", "?v15")  # one 1.4 MB cell
    cache = ResultCache(tmp_path / "c.sqlite")
    ce = CachedEngine(engine, cache)
    o = ce.execute(q)
    assert o.status is Status.EXEC_ERROR and "result larger than 1 MiB (result byte cap" in o.message
    assert cache.get(ce.key, q) is None


def test_a_row_sqlite_refuses_is_skipped_not_fatal(tmp_path):
    cache = ResultCache(tmp_path / "c.sqlite")
    cache._db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 10_000)  # "string or blob too big" beyond 10 kB
    big = Outcome(Status.OK, TableAnswer.single_column([Literal("x" * 20_000)], "v"), "", 0.1)
    small = Outcome(Status.OK, TableAnswer.single_column([Literal("y")], "v"), "", 0.1)
    assert cache.put_many("e", [("BIG", big), ("SMALL", small)]) == 1
    assert cache.get("e", "BIG") is None and cache.get("e", "SMALL") == small


# --------------------------------------------------------------------------- endpoint faults


@pytest.fixture
def server():
    with FaultServer(lifetime=60) as s:
        yield s


def test_transient_failures_are_not_cached_and_a_rerun_retries_them(server, tmp_path):
    cache = ResultCache(tmp_path / "c.sqlite")
    server.script("/sparql", [Reply.ask(True)])  # the info probe
    server.script("/sparql", [Reply.error(503, "overloaded")] * 6)
    with SparqlEndpoint(server.url(), retries=1, backoff=0.01) as ep:
        ce = CachedEngine(ep, cache)
        outs = ce.execute_many(["ASK {1}", "ASK {2}", "ASK {3}"])
        assert all(o.status is Status.EXEC_ERROR and o.message.startswith("HTTP 503") and is_transient(o)
                   for o in outs)
        assert cache.stats().entries == 0
        server.handler = lambda req: Reply.ask(True)  # the endpoint recovers
        before = dict(ce.counts)
        outs = ce.execute_many(["ASK {1}", "ASK {2}", "ASK {3}"])
        assert [o.status for o in outs] == [Status.OK] * 3
        assert ce.counts["executed"] - before["executed"] == 3 and ce.counts["cache_hits"] == before["cache_hits"]


def test_connection_refused_is_transient(tmp_path):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with SparqlEndpoint(f"http://127.0.0.1:{port}/sparql", retries=1, backoff=0.01) as ep:
        o = ep.execute("ASK {}", timeout=5)
    assert o.status is Status.EXEC_ERROR and "connection error" in o.message and o.message.endswith(TRANSIENT_NOTE)


def test_endpoint_body_is_read_only_up_to_the_cap(server):
    def endless():
        yield b'{"head": {"vars": ["x"]}, "results": {"bindings": ['
        row = json.dumps({"x": {"type": "literal", "value": "z" * 4000}}).encode() + b","
        for _ in range(50_000):  # 200 MB if read whole
            yield row

    server.script("/sparql", [Reply(stream=endless)])
    with SparqlEndpoint(server.url(), retries=0, max_response_bytes=2 << 20) as ep:
        o = ep.execute("SELECT ?x WHERE { ?s ?p ?x }", timeout=30)
    assert o.status is Status.EXEC_ERROR and "response body larger than 2 MiB" in o.message
    assert "(response byte cap;" in o.message and not server.streamed_completely


def test_gzip_bomb_response_is_cut_off(server):
    bomb = gzip.compress(b'{"head": {"vars": ["x"]}, "results": {"bindings": []}}' + b" " * (64 << 20), 9)
    assert len(bomb) < 200_000
    server.script("/sparql", [Reply(body=bomb, headers={"Content-Encoding": "gzip"})])
    with SparqlEndpoint(server.url(), retries=0, max_response_bytes=4 << 20) as ep:
        o = ep.execute("SELECT ?x WHERE { ?s ?p ?x }", timeout=30)
    assert o.status is Status.EXEC_ERROR and "response body larger than 4 MiB" in o.message


def test_compressed_kg_bomb_is_refused(tmp_path, monkeypatch):
    import kgqa.execute.kgfile as kgfile
    import kgqa.load.decompress as decompress
    from kgqa.model import InputError

    monkeypatch.setattr(decompress, "DECOMPRESSION_FLOOR", 1 << 20)
    p = tmp_path / "bomb.nt.gz"
    p.write_bytes(gzip.compress(b'<http://a> <http://p> "x" .\n' * 400_000, 9))
    with pytest.raises(InputError, match="decompression bomb"):
        kgfile.load_files([p])
    monkeypatch.setenv("KGQA_MAX_DECOMPRESSION_RATIO", "0")
    _, manifest = kgfile.load_files([p])
    assert manifest.quads == 1


# --------------------------------------------------------------------------- nothing lost


def test_ctrl_c_keeps_what_finished(server, tmp_path):
    server.handler = lambda req: (time.sleep(0.005), EMPTY_SELECT)[1]
    cache = ResultCache(tmp_path / "c.sqlite")
    queries = [f"SELECT ?x WHERE {{ ?x ?p {i} }}" for i in range(200)]
    done = []

    def progress(n):
        done.append(n)
        if len(done) == 60:
            raise KeyboardInterrupt

    with SparqlEndpoint(server.url(), concurrency=4) as ep:
        ce = CachedEngine(ep, cache)
        with pytest.raises(KeyboardInterrupt):
            ce.execute_many(queries, progress=progress)
        key = ce.key
    stored = sum(o is not None for o in cache.get_many(key, queries))
    assert stored >= 59  # everything that finished before the interrupt (the 60th may be in the buffer too)


@pytest.mark.slow  # kill -9 and resume: test_system_live checks it in the README's command
def test_kill_9_half_way_then_rerun_executes_only_what_was_not_finished(tmp_path):
    """A 1,000-query run through `kgqa evaluate --kg <endpoint>`, killed with SIGKILL half-way;
    the rerun executes no more than the queries not finished before the kill plus those in
    flight (and the last commit interval's worth)."""
    from kgqa.execute.cache import COMMIT_INTERVAL

    n, latency, concurrency = 1000, 0.01, 4
    ds = tmp_path / "ds.jsonl"
    run = tmp_path / "run.jsonl"
    ds.write_text("".join(json.dumps({"id": str(i), "question": f"q{i}", "answers": ["http://x/a"]}) + "\n"
                          for i in range(n)), encoding="utf-8")
    run.write_text("".join(json.dumps({"id": str(i), "sparql": f"SELECT ?x WHERE {{ ?x ?p {i} }}"}) + "\n"
                           for i in range(n)), encoding="utf-8")
    finished: list[float] = []

    def handler(req):
        time.sleep(latency)
        if req.query and req.query.startswith("SELECT"):
            finished.append(time.monotonic())
        return EMPTY_SELECT

    env = {**os.environ, "PYTHONPATH": str(ROOT), "KGQA_CACHE_DIR": str(tmp_path / "cache")}
    with FaultServer(handler, lifetime=300) as server:
        args = [sys.executable, "-c", "from kgqa.cli import main; main()", "evaluate", str(ds), str(run),
                "--kg", server.url(), "--format", "json"]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        wait_until(lambda: len(finished) >= n // 2, every=0.01, what="half the queries answered", proc=proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        t_kill = time.monotonic()
        # answers the server finished after this are later than t_kill: never counted as safe
        safe = sum(1 for t in list(finished) if t < t_kill - COMMIT_INTERVAL - 0.1)
        assert safe > n // 4
        rerun = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    (doc,) = json.loads(rerun.stdout)["runs"]
    executed = doc["execution"]["executed"]
    assert executed <= n - safe + concurrency, (executed, n, safe)
    assert doc["execution"]["cache_hits"] >= safe - concurrency


def test_without_isolation_the_signature_says_so_and_warns_once(kg_files, monkeypatch):
    import kgqa.execute.embedded as embedded

    monkeypatch.setattr(embedded, "_isolate_network", lambda: False)  # inherited by the forked workers
    monkeypatch.setattr(EmbeddedEngine, "_warned", set())
    with pytest.warns(RuntimeWarning, match="worker network isolation is unavailable"):
        e = EmbeddedEngine.from_files(kg_files, workers=1)
    try:
        assert not e.network_isolated and e.info.limits.startswith("net=NOT-isolated,")
        assert "SERVICE stays refused" in e.isolation_problem()
        o = e.execute("SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }")
        assert o.status is Status.REFUSED
    finally:
        e.close()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second engine does not warn again
        EmbeddedEngine.from_files(kg_files, workers=1).close()


def test_sizes_and_engine_options():
    from kgqa.execute.opener import open_engine
    from kgqa.execute.engine import parse_bytes

    assert parse_bytes("512MiB") == 512 << 20 and parse_bytes("2G") == 2 << 30 and parse_bytes("off") == 0
    assert parse_bytes("65536") == 65536 and parse_bytes(None) is None
    with pytest.raises(ValueError):
        parse_bytes("1Q")
    with open_engine("http://127.0.0.1:9/sparql", memory_limit=1 << 30, max_response_bytes=1 << 20) as ep:
        assert ep.max_response_bytes == 1 << 20


def test_a_cap_given_as_none_keeps_its_default_and_zero_turns_it_off(kg_files):
    from kgqa.execute.endpoint import SparqlEndpoint
    from kgqa.execute.engine import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MAX_RESULT_BYTES, DEFAULT_WORKER_MEMORY

    with EmbeddedEngine.from_files(kg_files, workers=1, memory_limit=None, max_result_bytes=None) as e:
        assert (e.memory_limit, e.max_result_bytes) == (DEFAULT_WORKER_MEMORY, DEFAULT_MAX_RESULT_BYTES)
    with EmbeddedEngine.from_files(kg_files, workers=1, memory_limit=0, max_result_bytes=0) as e:
        assert (e.memory_limit, e.max_result_bytes) == (None, None)
    with SparqlEndpoint("http://127.0.0.1:9/sparql", max_response_bytes=None) as ep:
        assert ep.max_response_bytes == DEFAULT_MAX_RESPONSE_BYTES
