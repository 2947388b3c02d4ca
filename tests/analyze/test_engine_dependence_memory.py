"""Issue 17 (re-scoring from cache): engine-dependence assessments remembered in the result cache
are the assessments made afresh, and a changed KG, engine, policy, code, query or cached outcome
never reuses a stale one."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import examples

from kgqa.execute import engine_findings as ed
from kgqa.execute.opener import open_engine
from kgqa.execute.cache import ResultCache
from kgqa.execute.executor import Executor
from kgqa.execute.policy import ExecutionPolicy
from kgqa.model import Status, TableAnswer
from kgqa.model.outcome import Outcome
from kgqa.model.terms import IRI
from waiting import wait_until

EX = "http://ex.org/"
P = f"PREFIX ex: <{EX}> "
SIZES = ((1, 5), (2, 5), (3, 3), (4, 2), (5, 2), (6, 1))
KG = "\n".join(
    [f"<{EX}d{d}> <{EX}responsibleFor> <{EX}p{d}_{i}> ." for d, n in SIZES for i in range(n)]
    + [f"<{EX}d{d}> <{EX}size> {n} ." for d, n in SIZES]
    + [f"<{EX}p1_0> <{EX}compatible> <{EX}p2_0> .", f"<{EX}p2_0> <{EX}compatible> <{EX}p1_0> .",
       f"<{EX}d1> <{EX}label> \"one\" .", f"<{EX}d2> <{EX}label> \"two\"@en ."]
) + "\n"
COUNT = P + "SELECT ?d (COUNT(?p) AS ?n) WHERE {{ ?d ex:responsibleFor ?p }} GROUP BY ?d ORDER BY DESC(?n) LIMIT {k}"

#: every kind of finding, confirmed or not, with and without a computable range
QUERIES = {
    "tie": COUNT.format(k=1),
    "no-tie": COUNT.format(k=3),
    "offset-tie": COUNT.format(k=1) + " OFFSET 1",
    "hidden-key": P + "SELECT ?d WHERE { ?d ex:size ?n } ORDER BY DESC(?n) LIMIT 4",
    "expr-key": P + "SELECT ?d WHERE { ?d ex:size ?n } ORDER BY DESC(?n * 2) LIMIT 4",
    "no-order": P + "SELECT ?d WHERE { ?d ex:size ?n } LIMIT 2",
    "fits": P + "SELECT ?d ?l WHERE { ?d ex:label ?l } LIMIT 5",
    "iri-cmp": P + "SELECT ?a ?b WHERE { ?a ex:compatible ?b FILTER(?a < ?b) }",
    "mixed-cmp": P + "SELECT ?d WHERE { ?d ex:size ?n ; ex:label ?l FILTER(?n < ?l) }",
    "num-cmp": P + "SELECT ?a ?b WHERE { ?a ex:size ?n . ?b ex:size ?m FILTER(?n < ?m) }",
    "concat": P + "SELECT ?d (GROUP_CONCAT(STR(?p)) AS ?s) WHERE { ?d ex:responsibleFor ?p } GROUP BY ?d",
    "concat-one": P + "SELECT ?d (GROUP_CONCAT(?n) AS ?s) WHERE { ?d ex:size ?n } GROUP BY ?d",
    "sample": P + "SELECT ?d (SAMPLE(?p) AS ?s) WHERE { ?d ex:responsibleFor ?p } GROUP BY ?d",
    "rand": P + "SELECT ?d WHERE { ?d ex:size ?n FILTER(RAND() < 2) }",
    "subquery": P + "SELECT ?d WHERE { { SELECT ?d WHERE { ?d ex:size ?n } LIMIT 2 } }",
    "one-row": P + "SELECT (COUNT(*) AS ?c) WHERE { ?d ex:size ?n } LIMIT 1",
    "ask": P + "ASK { ?d ex:size ?n } LIMIT 1",  # a finding keyword, no finding (an ASK's LIMIT picks nothing)
    "broken": P + "SELECT ?d WHERE { ?d ex:size ?n } LIMIT 2 ORDER BY ?n",
    "refused": P + "INSERT DATA { ex:a ex:b ex:c }",
    "plain": P + "SELECT ?d WHERE { ?d ex:size 3 }",
}


def canon(assessments: dict) -> dict:
    """Everything an assessment holds, comparable."""
    def one(a):
        c = a.choice
        return (a.query, a.findings, a.confirmed, a.reason, a.notes, a.alternatives, a.to_json(),
                None if c is None else (c.variables, c.fixed, c.groups))
    return {k: one(a) for k, a in assessments.items()}


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    path = tmp_path_factory.mktemp("kg") / "kg.ttl"
    path.write_text(KG)
    return path


@pytest.fixture(scope="module")
def engine(kg):
    e = open_engine(str(kg), None, progress=False)
    yield e
    e.close()


def assess(engine, queries, cache=None, policy=None, untrusted=True):
    ex = Executor(engine, cache=cache, policy=policy)
    outcomes = ex.run(queries, untrusted)
    return ed.assess_many(queries, outcomes, ex, untrusted=untrusted), outcomes


class Counting:
    """Counts calls of the static check and queries confirmed by execution while installed."""

    def __init__(self, monkeypatch):
        self.detect = self.assess = 0
        real_detect, real_chunk = ed.detect, ed._assess_chunk

        def detect(q):
            self.detect += 1
            return real_detect(q)

        def chunk(queries, *a, **k):
            self.assess += len(queries)
            return real_chunk(queries, *a, **k)

        monkeypatch.setattr(ed, "detect", detect)
        monkeypatch.setattr(ed, "_assess_chunk", chunk)


@pytest.mark.parametrize("untrusted", [True, False])
def test_remembered_assessments_are_the_fresh_ones(engine, tmp_path, monkeypatch, untrusted):
    fresh, _ = assess(engine, QUERIES, untrusted=untrusted)
    assert {"tie", "no-tie", "iri-cmp", "concat", "sample", "rand", "subquery"} <= set(fresh)
    assert fresh["concat"].confirmed is True and fresh["concat-one"].confirmed is False
    assert "one-row" not in fresh and "ask" not in fresh and "broken" not in fresh and "refused" not in fresh and "plain" not in fresh
    with ResultCache(tmp_path / "c.sqlite") as rc:
        first, _ = assess(engine, QUERIES, rc, untrusted=untrusted)
        calls = Counting(monkeypatch)
        again, _ = assess(engine, QUERIES, rc, untrusted=untrusted)
        stored = rc._db.execute("SELECT COUNT(*), SUM(basis = '') FROM assessments").fetchone()
    assert canon(first) == canon(fresh) and canon(again) == canon(fresh)
    assert list(again) == list(fresh)  # same order
    assert calls.detect == 0 and calls.assess == 0  # neither analysed nor confirmed again
    # every query that ran with a finding, and "one-row" and "ask" (a finding keyword, no finding) with an
    # empty basis
    assert stored == (len(fresh) + 2, 2)


def test_a_changed_kg_engine_policy_code_or_query_is_assessed_again(engine, kg, tmp_path, monkeypatch):
    queries = {"tie": QUERIES["tie"], "no-order": QUERIES["no-order"]}
    with ResultCache(tmp_path / "c.sqlite") as rc:
        assess(engine, queries, rc)
        calls = Counting(monkeypatch)
        assess(engine, queries, rc)
        assert calls.assess == 0
        # another KG (d2 loses a product: no tie at the cut)
        other = tmp_path / "other.ttl"
        other.write_text(KG.replace(f"<{EX}d2> <{EX}responsibleFor> <{EX}p2_4> .\n", ""))
        e2 = open_engine(str(other), None, progress=False)
        try:
            got, _ = assess(e2, queries, rc)
            assert calls.assess == 2
            fresh, _ = assess(e2, queries)
        finally:
            e2.close()
        assert canon(got) == canon(fresh) and got["tie"].confirmed is False
        # another policy (timeout), trusted instead of untrusted, another code version, another query
        assess(engine, queries, rc, policy=ExecutionPolicy(timeout=29))
        assert calls.assess == 6
        assess(engine, queries, rc, untrusted=False)
        assert calls.assess == 8
        monkeypatch.setattr(ed, "_code_version", lambda: "another version")
        assess(engine, queries, rc)
        assert calls.assess == 10
        monkeypatch.undo()
        calls = Counting(monkeypatch)
        assess(engine, {k: q + " # changed" for k, q in queries.items()}, rc)
        assert calls.assess == 2
        assess(engine, queries, rc)
        assert calls.assess == 2  # the original ones are still remembered


def test_a_replaced_or_deleted_cache_entry_is_assessed_again(engine, tmp_path, monkeypatch):
    q = {"tie": QUERIES["tie"]}
    with ResultCache(tmp_path / "c.sqlite") as rc:
        first, _ = assess(engine, q, rc)
        assert first["tie"].confirmed is True
        ex = Executor(engine, cache=rc)
        variant = ex.prepare(ed.without_outer_limit(q["tie"]))[0]
        key = ex.cached.key
        full = rc.get(key, variant)
        # the variant's entry replaced by one without the tie (d2 has 4 products)
        rows = tuple((d, n) if d != IRI(f"{EX}d2") else (d, type(n)("4", n.datatype)) for d, n in full.answer.rows)
        rc.put(key, variant, Outcome.ok(TableAnswer(full.answer.variables, rows)))
        calls = Counting(monkeypatch)
        got, _ = assess(engine, q, rc)
        assert calls.assess == 1 and got["tie"].confirmed is False
        assess(engine, q, rc)
        assert calls.assess == 1  # remembered again, on the new entry
        rc.clear(key)  # every entry deleted: the query runs again, and its variant
        got, _ = assess(engine, q, rc)
        assert calls.assess == 2 and canon(got) == canon(first)


def test_an_assessment_not_made_from_the_cached_outcomes_is_not_remembered(engine, tmp_path):
    q = {"no-order": QUERIES["no-order"]}
    with ResultCache(tmp_path / "c.sqlite") as rc:
        ex = Executor(engine, cache=rc)
        outcomes = ex.run(q)
        own = outcomes["no-order"]
        # an outcome the cache does not hold (as a transient failure or an uncached entry would be)
        fake = {"no-order": Outcome.ok(TableAnswer(own.answer.variables, own.answer.rows[:1]))}
        a = ed.assess_many(q, fake, ex)["no-order"]
        assert a.confirmed is True
        assert rc._db.execute("SELECT COUNT(*) FROM assessments").fetchone() == (0,)
        # and a remembered one is not used for an own outcome with another row count
        ed.assess_many(q, outcomes, ex)
        assert rc._db.execute("SELECT COUNT(*) FROM assessments").fetchone() == (1,)
        again = ed.assess_many(q, fake, Executor(engine, cache=rc))["no-order"]
        assert canon({"x": again}) == canon({"x": a})


def test_a_transient_variant_outcome_is_not_remembered(engine, tmp_path, monkeypatch):
    q = {"tie": QUERIES["tie"]}
    with ResultCache(tmp_path / "c.sqlite") as rc:
        ex = Executor(engine, cache=rc)
        outcomes = ex.run(q)
        real = ex.execute_many

        def flaky(queries, *a, **k):
            return [Outcome(Status.EXEC_ERROR, None, "connection reset [transient: not cached; a rerun retries it]")
                    if "LIMIT" not in t else o for t, o in zip(queries, real(queries, *a, **k))]

        monkeypatch.setattr(ex, "execute_many", flaky)
        a = ed.assess_many(q, outcomes, ex)["tie"]
        assert a.confirmed is None and "did not run" in a.reason
        assert rc._db.execute("SELECT COUNT(*) FROM assessments").fetchone() == (0,)


@examples(30, quick=10)
def test_remembered_equals_fresh_on_generated_queries(engine, tmp_path_factory, examples):
    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(k=st.integers(1, 7), offset=st.integers(0, 5), desc=st.booleans(), key=st.sampled_from(["?n", "?d", "?n ?d"]),
           project=st.sampled_from(["?d", "?d ?n", "*"]), distinct=st.booleans())
    def check(k, offset, desc, key, project, distinct):
        _check_remembered_equals_fresh_on_generated_queries(engine, tmp_path_factory, k, offset, desc, key, project, distinct)

    check()


def _check_remembered_equals_fresh_on_generated_queries(engine, tmp_path_factory, k, offset, desc, key, project, distinct):
    order = " ".join(f"DESC({v})" if desc else v for v in key.split())
    q = (P + f"SELECT {'DISTINCT ' if distinct and project != '*' else ''}{project} WHERE {{ ?d ex:size ?n }} "
         f"ORDER BY {order} LIMIT {k}" + (f" OFFSET {offset}" if offset else ""))
    queries = {"q": q, "unordered": q.split(" ORDER BY")[0] + f" LIMIT {k}"}
    fresh, _ = assess(engine, queries)
    with ResultCache(tmp_path_factory.mktemp("c") / "c.sqlite") as rc:
        first, _ = assess(engine, queries, rc)
        again, _ = assess(engine, queries, rc)
    assert canon(first) == canon(fresh) == canon(again)


def test_an_evaluation_from_remembered_assessments_is_the_same(kg, tmp_path):
    import kgqa
    from kgqa.report.evaluation import to_json

    ds = tmp_path / "ds.jsonl"
    run = tmp_path / "run.jsonl"
    ids = [k for k in QUERIES if k != "broken"]
    ds.write_text("".join(json.dumps({"id": k, "question": k, "answers": [f"{EX}d2", f"{EX}d1"]}) + "\n" for k in ids))
    run.write_text("".join(json.dumps({"id": k, "query": QUERIES[k]}) + "\n" for k in ids))

    def evaluate(cache):
        e = kgqa.evaluate(str(ds), str(run), kg=str(kg), profile="kgqa", cache=cache, dataset_format="jsonl",
                          run_format="jsonl")
        (doc,) = json.loads(to_json([e]))["runs"]
        doc.pop("execution")
        for q in doc["questions"]:
            q["details"].pop("elapsed", None)  # how long a query ran: not kept when it is not cached
        return doc

    none = evaluate(False)
    assert none["engine_dependence"]["questions"] >= 5 and none["engine_dependence"]["with_range"] >= 3
    assert evaluate(tmp_path / "c.sqlite") == none  # assessed, remembered
    assert evaluate(tmp_path / "c.sqlite") == none  # from the remembered assessments


# ----------------------------------------------------------------- aggregate ranges from the columns


def _reference_aggregate_range(evaluation, ranges):
    """The aggregate ranges as computed before they were read from the columns (every question
    made into an object, one dict of values per measure)."""
    import math

    out = {}
    for spec in evaluation.measures:
        label = spec.label
        agg = evaluation.aggregate.get(label)
        vals = {q.id: q.scores[label] for q in evaluation.questions if q.scores.get(label) is not None}
        if agg is None or not vals or (isinstance(agg, float) and math.isnan(agg)):
            continue
        if spec.over != "all" or abs(math.fsum(vals.values()) / len(vals) - agg) > 1e-12:
            continue
        lo = dict(vals)
        hi = dict(vals)
        for qid, r in ranges.items():
            if label in r and qid in vals:
                lo[qid], hi[qid] = r[label]
        out[label] = [math.fsum(lo.values()) / len(lo), math.fsum(hi.values()) / len(hi)]
    return out


@examples(40, quick=15)
def test_aggregate_range_from_columns_is_the_reference(examples):
    @settings(max_examples=examples, deadline=None)
    @given(picked=st.lists(st.tuples(st.integers(0, 29), st.floats(0, 1), st.floats(0, 1)), max_size=12),
           made=st.sampled_from(["none", "some", "changed", "nan"]))
    def check(picked, made):
        _check_aggregate_range_from_columns_is_the_reference(picked, made)

    check()


def _check_aggregate_range_from_columns_is_the_reference(picked, made):
    import kgqa
    from kgqa.analyze.engine_dependence import _aggregate_range
    from kgqa.demo import DATA

    e = kgqa.evaluate(str(DATA / "questions.json"), str(DATA / "runs" / "medium.json"), profile="kgqa")
    ids = e.questions.ids
    labels = [s.label for s in e.measures]
    ranges = {ids[i]: {lab: (min(a, b), max(a, b)) for lab in labels} for i, a, b in picked}
    if made != "none":
        for i, _, _ in picked[:3]:
            q = e.questions[i]  # made into an object (as annotate does for flagged questions)
            if made == "changed" and "F1" in q.scores:
                q.scores["F1"] = 0.123
            elif made == "nan" and "P" in q.scores:
                q.scores["P"] = float("nan")
    fast = _aggregate_range(e, ranges)
    assert fast == _reference_aggregate_range(e, ranges) or (made == "nan" and str(fast) == str(
        _reference_aggregate_range(e, ranges)))


def test_row_states_change_when_an_entry_is_replaced_and_clear_drops_assessments(tmp_path):
    import time

    from kgqa.execute.cache import query_hash

    with ResultCache(tmp_path / "c.sqlite") as rc:
        a = Outcome.ok(TableAnswer(("x",), ((IRI(f"{EX}a"),),)))
        rc.put("e", "Q", a)
        h = query_hash("Q")
        states: dict[str, str] = {}
        assert rc.get_many("e", ["Q", "missing"], states=states)[0] == Outcome(Status.OK, a.answer, "", None)
        assert states == rc.row_states("e", [h, query_hash("missing")]) and list(states) == [h]
        assert states[h].endswith("/ok/1") and rc.row_states("other engine", [h]) == {}
        stored_at = float(states[h].split("/")[0])  # an entry's state holds when it was stored
        wait_until(lambda: time.time() > stored_at, every=0.001, what="the clock past the first entry's time")
        rc.put("e", "Q", a)  # the same outcome stored again is another entry
        assert rc.row_states("e", [h]) != states
        rc.put_assessments([("k", f"{h}={states[h]}", "{}")])
        assert rc.get_assessments(["k", "x"]) == {"k": (f"{h}={states[h]}", "{}")}
        rc.clear("e")
        assert rc.row_states("e", [h]) == {} and rc.get_assessments(["k"])  # invalid by its basis, still stored
        rc.clear()
        assert rc.get_assessments(["k"]) == {}
