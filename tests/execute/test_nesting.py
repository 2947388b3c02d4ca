"""A query nested deeper than the embedded engine's parser can take gets its own outcome
(issue 24, scope 5): ``exec_error: query too deeply nested``, definitive (cached, not
transient), without crashing a worker."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from kgqa.execute.cache import CachedEngine, ResultCache
from kgqa.execute.embedded import EmbeddedEngine
from kgqa.execute.engine import is_transient
from kgqa.execute.nesting import MAX_CHAIN, MAX_NESTING, nesting_problem
from kgqa.model import Status


@settings(max_examples=100, deadline=None)
@given(depth=st.integers(1, 2 * MAX_NESTING), kind=st.sampled_from(["{}", "()", "!"]))
def test_nesting_measured_exactly(depth, kind):
    if kind == "{}":
        q = "SELECT * WHERE " + "{" * depth + "}" * depth
        levels = depth
    elif kind == "()":
        q = "SELECT * WHERE { FILTER(" + "(" * depth + "1" + ")" * depth + ") }"
        levels = depth + 2
    else:
        q = "SELECT * WHERE { FILTER(" + "!" * depth + "true) }"
        levels = depth + 2
    msg = nesting_problem(q)
    if levels > MAX_NESTING:
        assert msg is not None and f"{levels} levels" in msg
    else:
        assert msg is None


@pytest.mark.parametrize("n, bad", [(MAX_CHAIN, False), (MAX_CHAIN + 1, True)])
def test_operator_chains(n, bad):
    plus = "SELECT * WHERE { FILTER(1" + " + 1" * n + ") }"
    union = "SELECT * WHERE { {?s ?p ?o}" + " UNION {?s ?p ?o}" * n + " }"
    for q in (plus, union):
        msg = nesting_problem(q)
        assert (msg is not None and f"chain of {n}" in msg) if bad else msg is None


def test_iris_and_strings_do_not_count():
    q = "SELECT * WHERE { ?s <http://x/a-b/c-d/e> \"" + "((((-" * 500 + "\" }"
    assert nesting_problem(q) is None


def test_engine_answers_too_deeply_nested_definitively_and_it_is_cached(tmp_path):
    deep = "SELECT * WHERE " + "{" * 5000 + "}" * 5000
    (tmp_path / "kg.nt").write_text('<http://x/a> <http://x/p> "a" .\n', encoding="utf-8")
    with EmbeddedEngine.from_files([tmp_path / "kg.nt"], workers=1) as engine, \
            ResultCache(tmp_path / "c.sqlite") as cache:
        check_deep_query(engine, CachedEngine(engine, cache), deep)


def check_deep_query(engine, ce, deep):
    first = ce.execute(deep)
    assert first.status is Status.EXEC_ERROR
    assert first.message.startswith("query too deeply nested: 5000 levels")
    assert not is_transient(first)
    again = ce.execute(deep)
    assert again.message == first.message
    assert ce.counts["cache_hits"] == 1
    assert engine.restarts == 0  # no worker crashed
    assert engine.execute("ASK { ?s ?p ?o }").status is Status.OK
