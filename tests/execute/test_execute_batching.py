"""Issue 17 (execution speed): queued workers, remembered preparations, batched engine-dependence
checks give the same outcomes as one query at a time."""

from __future__ import annotations

import pytest

import kgqa.execute.sandbox as sandbox_module
from kgqa.demo import DATA
from kgqa.execute import engine_findings as ed
from kgqa.execute.cache import ResultCache
from kgqa.execute.embedded import EmbeddedEngine
from kgqa.execute.executor import Executor
from kgqa.model import Dataset, Item, Prediction, Run, Status
from kgqa.sparql.lexer import tokenize

KG = DATA / "kg.ttl"
EXPLOSIVE = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r }"
FAST = [f"SELECT ?o WHERE {{ <http://demo.kgqa.org/resource/Norland> ?p ?o }} # {i}" for i in range(40)]


@pytest.fixture(scope="module")
def engine():
    e = EmbeddedEngine.from_files([KG], workers=1)
    yield e
    e.close()


def test_a_queue_answers_like_one_query_at_a_time(engine):
    outs = engine.execute_many(FAST)
    one = [engine.execute(q) for q in FAST[:3]]
    assert [o.status for o in outs] == [Status.OK] * len(FAST)
    assert all(o.answer == outs[0].answer for o in outs) and one[0].answer == outs[0].answer


def test_a_timeout_inside_a_queue_stops_only_that_query(engine):
    before = engine.restarts
    qs = FAST[:10] + [EXPLOSIVE] + FAST[10:20]
    outs = engine.execute_many(qs, timeout=1.0)
    assert outs[10].status is Status.TIMEOUT
    assert outs[10].message == "timeout: query ran longer than 1 s and was stopped"
    assert all(o.status is Status.OK for i, o in enumerate(outs) if i != 10)
    assert engine.restarts == before + 1
    assert engine.execute_many(FAST[:5])[0].status is Status.OK


@pytest.mark.parametrize("step", [10, pytest.param(1, marks=pytest.mark.slow)], ids=["every-10th", "all"])
def test_screen_skips_only_queries_without_findings(shared_data, step):
    """The demo's queries and every 10th shared gold query in the README's test command, all of
    them in CI's slow run."""
    import json

    from sparql_gold import gold_queries

    queries = [q["query"]["sparql"] for q in json.loads((DATA / "questions.json").read_text())["questions"]]
    queries += [q for _, q in gold_queries(shared_data)[::step]]
    skipped = 0
    for q in queries:
        full = _full_detect(q)
        assert ed._detect(q) == full, q
        if not ed.screen(tokenize(q, trivia=True)):
            skipped += 1
            assert full == [], q
    assert skipped > len(queries) // 2


def _full_detect(query: str):
    """detect() without its token prefilter."""
    saved = ed._FINDING_KEYWORDS
    try:
        ed._FINDING_KEYWORDS = _Everything()
        return ed._detect(query)
    finally:
        ed._FINDING_KEYWORDS = saved


class _Everything:
    def __contains__(self, item) -> bool:
        return True


def test_preparations_are_remembered_in_the_cache(engine, tmp_path, monkeypatch):
    items = [Item(id=str(i), questions={"en": "q"}, answer=None) for i in range(3)]
    ds = Dataset("t", items)
    run = Run("r", [Prediction("0", sparql="SELECT (COUNT(?o) ) WHERE { res:Norland ?p ?o }"),
                    Prediction("1", sparql="INSERT DATA { <http://x/a> <http://x/b> <http://x/c> }"),
                    Prediction("2", sparql="SELECT ?o WHERE { ?s ?p ?o } LIMIT 2")])
    with ResultCache(tmp_path / "c.sqlite") as rc:
        first = Executor(engine, cache=rc).execute_run(ds, run)
        ex = Executor(engine, cache=rc)

        def boom(*a, **k):
            raise AssertionError("tokenised again")

        monkeypatch.setattr(sandbox_module, "tokenize", boom)
        again = ex.execute_run(ds, run)
    assert again.rewrites == first.rewrites and again.rewrites["0"]
    assert {k: (o.status, o.answer, o.message) for k, o in again.predicted.items()} == \
        {k: (o.status, o.answer, o.message) for k, o in first.predicted.items()}
    assert again.predicted["1"].status is Status.REFUSED
    assert again.counts["refused"] == 1 and again.counts["cache_hits"] == 2 and again.counts["executed"] == 0
    # the screen came back with the preparation: only the LIMIT query needs the analyzer
    assert run.get("0").sparql in ex.no_findings and run.get("2").sparql not in ex.no_findings


def test_assess_many_batches_variants_and_matches_one_by_one(engine):
    queries = {str(i): f"SELECT ?o WHERE {{ <http://demo.kgqa.org/resource/Norland> ?p ?o }} LIMIT {i + 1}"
               for i in range(5)}
    ex = Executor(engine)
    outcomes = ex.run(queries)
    batched = ed.assess_many(queries, outcomes, ex)
    calls = []

    class OneByOne:
        def run(self, qs, untrusted=True):
            calls.append(len(qs))
            return ex.run(qs, untrusted)

    single = {qid: ed.assess(q, outcomes[qid], lambda ts: [OneByOne().run({"0": t})["0"] for t in ts])
              for qid, q in queries.items()}
    assert set(batched) == {k for k, a in single.items() if a.findings}
    for k, a in batched.items():
        assert (a.confirmed, a.reason, a.to_json()) == (single[k].confirmed, single[k].reason, single[k].to_json())
