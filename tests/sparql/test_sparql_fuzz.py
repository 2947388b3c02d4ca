"""The analyzer never raises: random text, token soups, mutated real gold queries."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import examples

from kgqa.analyze.characteristics import sparql_characteristics
from kgqa.sparql import analyze, canonical_form, tokenize, structure_template
from sparql_gold import gold_queries

FRAGMENTS = (
    "SELECT ASK CONSTRUCT DESCRIBE WHERE DISTINCT REDUCED OPTIONAL UNION MINUS GRAPH SERVICE SILENT FILTER "
    "BIND AS VALUES UNDEF GROUP BY HAVING ORDER ASC DESC LIMIT OFFSET PREFIX BASE FROM NAMED EXISTS NOT IN "
    "COUNT SUM MIN MAX AVG SAMPLE GROUP_CONCAT SEPARATOR regex STR lang IF COALESCE BOUND INSERT DELETE DATA "
    "{ } ( ) [ ] . , ; * / | ^ ^^ + - ? ! = != < > <= >= && || a true false () [] "
    "?x ?y $z _:b dbo:p dbr:A : :x <http://x/p> <rel> \"s\" 's' \"\"\"l\"\"\" @en 1 2.5 3e2 .5 # \n"
).split(" ")


def _check(text: str) -> None:
    info = analyze(text)
    assert isinstance(info.valid, bool)
    if info.valid:
        assert info.error is None and info.error_offset is None
    else:
        assert info.error and not info.error.startswith("internal error"), info.error
        assert 0 <= info.error_offset <= len(text)
    sparql_characteristics(info)
    structure_template(info)
    form = canonical_form(info)
    assert (form is None) == (not info.valid)


@examples(400)
def test_random_text(examples):
    @settings(max_examples=examples, deadline=None)
    @given(st.text(max_size=300))
    def check(text):
        _check(text)
        assert all(text[t.start:t.end] for t in tokenize(text))

    check()


_SOUP = (st.lists(st.sampled_from(FRAGMENTS), max_size=60), st.sampled_from([" ", "", "\n"]))


@examples(600)
def test_token_soup(examples):
    @settings(max_examples=examples, deadline=None)
    @given(*_SOUP)
    def check(parts, sep):
        _check(sep.join(parts))

    check()


@pytest.fixture(scope="session")
def gold(shared_data):
    qs = [q for _, q in gold_queries(shared_data)]
    assert len(qs) > 2000
    return qs


_CHARS = st.sampled_from(list("{}()<>.;,?\"' abcxyz:_#*^|/!=&+-$@0123456789\n\\"))


_MUTATED_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@examples(500)
def test_mutated_gold_queries(gold, examples):
    @settings(max_examples=examples, **_MUTATED_SETTINGS)
    @given(data=st.data())
    def check(data):
        _check_mutated(gold, data)

    check()


def _check_mutated(gold, data):
    q = gold[data.draw(st.integers(0, len(gold) - 1), label="query")]
    kind = data.draw(st.sampled_from(["truncate", "delete", "insert", "delete-span", "swap"]), label="kind")
    k = data.draw(st.integers(0, len(q)), label="offset")
    if kind == "truncate":
        m = q[:k]
    elif kind == "delete":
        m = q[:k] + q[k + 1:]
    elif kind == "insert":
        m = q[:k] + data.draw(_CHARS) + q[k:]
    elif kind == "delete-span":
        m = q[:k] + q[k + data.draw(st.integers(1, 20)):]
    else:
        j = data.draw(st.integers(0, len(q)))
        a, b = min(j, k), max(j, k)
        m = q[:a] + q[b:] + q[a:b]
    _check(m)
    if kind == "truncate" and "}" in q[k:]:
        # a gold query cut before its last brace is never valid, yet keeps its patterns: all
        # but the last (which the cut may have changed) are the gold's first patterns (a cut
        # inside '[ ... ]' reorders the enclosing pattern, so those are left out)
        info = analyze(m)
        assert not info.valid
        if "[" not in q and analyze(q).valid:
            got = [t.spo for t in info.triples]
            want = [t.spo for t in analyze(q).triples]
            assert len(got) <= len(want)
            assert got[:-1] == want[: max(0, len(got) - 1)]
