"""The analyzer on every shared gold query: IRI sets equal rdflib's, validity agrees with
pyoxigraph's parser.

IRI set compared (like with like): every IRI used as a term anywhere in the query, i.e.
:attr:`QueryInfo.iris` (triple patterns, paths, VALUES, expressions including function IRIs,
GRAPH/SERVICE), against every ``URIRef`` in rdflib's algebra (``parseQuery`` +
``translateQuery``, walking nodes, paths and VALUES bindings). Neither side contains PREFIX/BASE
IRIs or literal datatypes. Undeclared prefixes are resolved through STANDARD_PREFIXES on both
sides (``translateQuery(initNs=...)``), which also covers RuBQ's undeclared wd:/wdt:/p:/ps:/pq:.
"""

from __future__ import annotations

import logging
import os
import random
from concurrent.futures import ProcessPoolExecutor

import pytest

from kgqa.sparql import STANDARD_PREFIXES, analyze
from sparql_gold import gold_queries


def _walk(x, out: set, seen: set) -> None:
    from rdflib.paths import Path as RPath
    from rdflib.term import URIRef

    if isinstance(x, URIRef):
        out.add(str(x))
        return
    if x is None or isinstance(x, (str, int, float, bool)) or id(x) in seen:
        return
    seen.add(id(x))
    if isinstance(x, dict):
        for k, v in x.items():
            _walk(k, out, seen)
            _walk(v, out, seen)
    elif isinstance(x, (list, tuple, set, frozenset)):
        for v in x:
            _walk(v, out, seen)
    elif isinstance(x, RPath):
        for attr in ("args", "arg", "path"):
            if hasattr(x, attr):
                _walk(getattr(x, attr), out, seen)
    elif hasattr(x, "__dict__"):
        _walk(vars(x), out, seen)


def _rdflib_iris(queries: list[str]) -> list[frozenset[str] | None]:
    """rdflib's IRI set per query (None where rdflib cannot parse/translate it)."""
    logging.disable(logging.CRITICAL)
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    out: list[frozenset[str] | None] = []
    for q in queries:
        try:
            alg = translateQuery(parseQuery(q), initNs=STANDARD_PREFIXES)
        except Exception:
            out.append(None)
            continue
        found: set[str] = set()
        _walk(alg.algebra, found, set())
        out.append(frozenset(found))
    return out


@pytest.fixture(scope="session")
def gold(shared_data):
    return gold_queries(shared_data)


@pytest.fixture(scope="session")
def rdflib_iris(gold, request):
    """Computed once per session, in up to 4 processes (rdflib's parser needs ~12 CPU-seconds
    for all), and kept in pytest's cache keyed by the rdflib version and the query texts."""
    import hashlib

    import rdflib

    queries = [q for _, q in gold]
    digest = hashlib.sha256("\x00".join(queries).encode()).hexdigest()[:16]
    key = f"kgqa/sparql_rdflib_iris/{rdflib.__version__}/{digest}"
    cache = getattr(request.config, "cache", None)
    cached = cache.get(key, None) if cache is not None else None
    if isinstance(cached, list) and len(cached) == len(queries):
        return [None if v is None else frozenset(v) for v in cached]
    workers = max(1, min(4, os.cpu_count() or 1))
    chunks = [queries[i::workers] for i in range(workers)]
    with ProcessPoolExecutor(workers) as pool:
        parts = list(pool.map(_rdflib_iris, chunks))
    result: list = [None] * len(queries)
    for w, part in enumerate(parts):
        for j, v in enumerate(part):
            result[w + j * workers] = v
    if cache is not None:
        cache.set(key, [None if v is None else sorted(v) for v in result])
    return result


def test_gold_query_count(gold):
    by_source: dict[str, int] = {}
    for sid, _ in gold:
        src = sid.split("#")[0]
        by_source[src] = by_source.get(src, 0) + 1
    assert by_source == {
        "qald-9/qald-9-train-multilingual.json": 408, "qald-9/qald-9-test-multilingual.json": 150,
        "qald-10/qald_10.json": 394, "db25/questions_db25.yaml": 100, "ck25/questions.yml": 50,
        "rubq-1.0/RuBQ_1.0_dev.json": 240, "rubq-1.0/RuBQ_1.0_test.json": 960,
    }


@pytest.mark.slow
def test_iri_sets_equal_rdflib(gold, rdflib_iris):
    compared = 0
    mismatches = []
    for (sid, q), theirs in zip(gold, rdflib_iris):
        if theirs is None:
            continue
        compared += 1
        mine = frozenset(i.value for i in analyze(q).iris)
        if mine != theirs:
            mismatches.append((sid, sorted(mine - theirs), sorted(theirs - mine)))
    print(f"\ncompared IRI sets of {compared} of {len(gold)} gold queries (rdflib parses {compared})")
    assert mismatches == []
    assert compared >= 2250


def test_validity_per_dataset(gold):
    valid: dict[str, int] = {}
    for sid, q in gold:
        src = sid.split("#")[0]
        valid[src] = valid.get(src, 0) + analyze(q).valid
    # invalid ones are Virtuoso dialect (SELECT COUNT(?x) without AS, SELECT xsd:date(?d), ...)
    assert valid == {
        "qald-9/qald-9-train-multilingual.json": 401, "qald-9/qald-9-test-multilingual.json": 139,
        "qald-10/qald_10.json": 394, "db25/questions_db25.yaml": 89, "ck25/questions.yml": 50,
        "rubq-1.0/RuBQ_1.0_dev.json": 240, "rubq-1.0/RuBQ_1.0_test.json": 960,
    }


def _pyoxigraph_accepts():
    """pyoxigraph's parser as an oracle, for trusted gold text only: the store is empty and
    in memory, and queries with SERVICE are never passed (they could reach the network)."""
    import pyoxigraph

    store = pyoxigraph.Store()

    def accepts(q: str) -> bool:
        assert "service" not in q.lower()
        try:
            store.query(q, prefixes=STANDARD_PREFIXES)
        except SyntaxError:
            return False
        except Exception:  # an evaluation error (e.g. unsupported xsd:int cast): it parsed
            return True
        return True

    return accepts


def test_validity_agrees_with_pyoxigraph(gold):
    accepts = _pyoxigraph_accepts()
    n = 0
    only_mine = []
    for sid, q in gold:
        if "service" in q.lower():
            continue
        n += 1
        ox, mine = accepts(q), analyze(q).valid
        assert mine or not ox, f"{sid}: pyoxigraph accepts, analyzer says {analyze(q).error}"
        if mine and not ox:
            only_mine.append(sid)
    # the analyzer accepts one that pyoxigraph rejects: res:T._E._Lawrence, a valid PN_LOCAL
    # by the SPARQL 1.1 grammar that pyoxigraph's parser refuses
    assert n == 2298 and only_mine == ["qald-9/qald-9-train-multilingual.json#369"]


def test_mutated_validity_agrees_with_pyoxigraph(gold):
    """Truncations and one-character edits of real queries: whatever pyoxigraph accepts is
    valid; the analyzer accepts at most 1% that pyoxigraph rejects."""
    accepts = _pyoxigraph_accepts()
    rng = random.Random(4)
    pool = [q for _, q in gold if "service" not in q.lower() and accepts(q)]
    chars = "{}()<>.;,?\"' abcxyz:_#*^|/!=&+-$@0123456789\n"
    both = looser = 0
    for _ in range(1500):
        q = rng.choice(pool)
        k = rng.randrange(len(q))
        kind = rng.randrange(4)
        m = (q[:k], q[:k] + q[k + 1:], q[:k] + rng.choice(chars) + q[k:], q[:k] + q[k + rng.randint(1, 8):])[kind]
        ox, mine = accepts(m), analyze(m).valid
        assert mine or not ox, f"pyoxigraph accepts, analyzer rejects: {m!r}: {analyze(m).error}"
        both += ox
        looser += mine and not ox
    assert looser <= 15 and both > 300
