"""The SPARQL endpoint engine against a real Virtuoso 7 serving CK25 (see tests/virtuoso.py).

All 50 CK25 gold queries run on Virtuoso (gold text as written, for Virtuoso) and on
pyoxigraph in-process (after kgqa's normaliser: q37/q42 need ``xsd:int(`` -> ``xsd:integer(``);
values are flattened to lexical strings and compared as sets. They are identical except for
the genuine engine differences named in :data:`DIFFERENCES` and the ties in :data:`TIES`, which
are checked as ties.
"""

from __future__ import annotations

from decimal import Decimal

import pyoxigraph as ox
import pytest
import yaml

from kgqa.execute.endpoint import SparqlEndpoint
from kgqa.execute.normalise import normalise
from kgqa.model import BooleanAnswer, Status, TableAnswer
from virtuoso import CK25_GRAPH, VirtuosoError, virtuoso_ck25  # noqa: F401  (session fixture)

# one Virtuoso per run: with `-n N --dist loadgroup` these tests share one xdist worker
pytestmark = [pytest.mark.slow, pytest.mark.virtuoso, pytest.mark.xdist_group("virtuoso")]

#: Gold queries whose results genuinely differ between Virtuoso 7.2 and pyoxigraph.
DIFFERENCES = {
    25: "Virtuoso divides integers as integers: width*depth*height / 1000000000 is 0 for every coil, "
        "so weight_kg / volume_m3 raises 'Virtuoso 22012 Error SR084: Division by 0'; pyoxigraph "
        "divides as xsd:decimal and returns the densest coil.",
}
#: Gold queries whose ORDER BY ... LIMIT k cuts through a tie: (k, score variable). Any choice
#: among the tied rows is correct; the engines may choose differently (q46 does: 4 suppliers tie
#: at 0.942 for the 5th place; q50: two departments are responsible for 12 products each, and
#: today both engines happen to pick the same one).
TIES = {46: (5, "averageReliabilityIndex"), 50: (1, "count")}
#: q41 computes ``?deptTeam / ?fullteam * 100``: integer division on Virtuoso, decimal on
#: pyoxigraph. It is *not* a difference on CK25 because every ratio there is exactly 1 (100 %);
#: test_integer_division shows the difference itself.


def lexical(answer) -> frozenset[str]:
    if isinstance(answer, BooleanAnswer):
        return frozenset({"true" if answer.value else "false"})
    return frozenset(c.value for row in answer.rows for c in row if c is not None)


def ox_lexical(result) -> frozenset[str]:
    if isinstance(result, ox.QueryBoolean):
        return frozenset({"true" if bool(result) else "false"})
    return frozenset(t.value for sol in result for t in sol if t is not None)


@pytest.fixture(scope="module")
def gold(shared_data) -> dict[int, str]:
    doc = yaml.safe_load((shared_data / "ck25" / "questions.yml").read_text())
    return {int(q["id"]): q["query"]["sparql"] for q in doc["questions"]}


@pytest.fixture(scope="module")
def store(shared_data) -> ox.Store:
    s = ox.Store()
    s.load(path=str(shared_data / "ck25" / "graphs" / "prod-inst.ttl"), format=ox.RdfFormat.TURTLE)
    return s


@pytest.fixture(scope="module")
def vt(virtuoso_ck25):
    with SparqlEndpoint(virtuoso_ck25.sparql_url, default_graphs=[CK25_GRAPH], backoff=0.05) as e:
        yield e


@pytest.fixture(scope="module")
def vt_outcomes(vt, gold):
    ids = sorted(gold)
    return dict(zip(ids, vt.execute_many([gold[i] for i in ids], timeout=30)))


def test_all_50_gold_queries_match_pyoxigraph(vt, vt_outcomes, gold, store):
    assert len(gold) == 50
    mismatches = {}
    for i, q in gold.items():
        if i in DIFFERENCES or i in TIES:
            continue
        out = vt_outcomes[i]
        if out.status is not Status.OK:
            mismatches[i] = f"Virtuoso {out.status.value}: {out.message[:200]}"
            continue
        expected = ox_lexical(store.query(normalise(q).text))
        got = lexical(out.answer)
        if got != expected:
            mismatches[i] = f"only Virtuoso: {sorted(got - expected)[:5]}; only pyoxigraph: {sorted(expected - got)[:5]}"
    assert mismatches == {}
    assert sum(1 for i in gold if i not in DIFFERENCES and i not in TIES) == 47
    assert vt.info.version.startswith("Virtuoso/07.")


def test_q25_division_by_zero_on_virtuoso_only(vt_outcomes, gold, store):
    out = vt_outcomes[25]
    assert out.status is Status.EXEC_ERROR
    assert "22012" in out.message and "Division by 0" in out.message
    assert ox_lexical(store.query(gold[25])) == {"http://ld.company.org/prod-instances/hw-N832-1055352"}


def test_integer_division(vt, store):
    out = vt.execute("SELECT (7 / 2 AS ?x) (7.0 / 2 AS ?y) {}")
    assert out.status is Status.OK
    assert [c.value for c in out.answer.rows[0]] == ["3", "3.5"]
    (sol,) = list(store.query("SELECT (7 / 2 AS ?x) (7.0 / 2 AS ?y) {}"))
    assert [Decimal(t.value) for t in sol] == [Decimal("3.5"), Decimal("3.5")]


@pytest.mark.parametrize("qid", sorted(TIES))
def test_ties_are_ties(qid, vt_outcomes, gold, store):
    """Virtuoso's top-k equals a valid top-k of pyoxigraph's full ranking: the same k scores,
    and every returned (row, score) is in the ranking."""
    k, score = TIES[qid]
    out = vt_outcomes[qid]
    assert out.status is Status.OK and len(out.answer.rows) == k
    full = store.query(gold[qid].replace(f"LIMIT {k}", ""))
    ranking = [tuple(t.value if t is not None else None for t in sol) for sol in full]
    variables = [v.value for v in full.variables] if hasattr(full, "variables") else None
    si = out.answer.variables.index(score)
    got_scores = sorted((Decimal(r[si].value) for r in out.answer.rows), reverse=True)
    all_scores = sorted((Decimal(r[si]) for r in ranking), reverse=True)
    assert got_scores == all_scores[:k]
    assert all_scores[k - 1] == all_scores[k], "not a tie any more: move this id out of TIES"
    rows = {tuple(c.value for c in r) for r in out.answer.rows}
    ranked = {(r[0], str(Decimal(r[1]).normalize())) for r in ranking}
    assert {(r[0], str(Decimal(r[1]).normalize())) for r in rows} <= ranked
    assert variables is None or variables == list(out.answer.variables)


def _count(vt: SparqlEndpoint, where: str) -> int:
    out = vt.execute(f"SELECT (COUNT(*) AS ?n) WHERE {{ {where} }}")
    assert out.status is Status.OK, out.message
    return int(out.answer.rows[0][0].value)


def test_predicted_updates_and_service_are_refused(virtuoso_ck25, vt):
    with SparqlEndpoint(virtuoso_ck25.sparql_url, backoff=0.05) as everything:
        before_total = _count(everything, "GRAPH ?g { ?s ?p ?o }")
        before_ck25 = _count(vt, "?s ?p ?o")
        assert before_ck25 == 26903
        # make the SPARQL endpoint writable, so that only kgqa's sandbox stands in the way
        virtuoso_ck25.isql('grant SPARQL_UPDATE to "SPARQL";')
        try:
            sent = vt.requests_sent
            attacks = [
                f"INSERT DATA {{ GRAPH <{CK25_GRAPH}> {{ <urn:x:s> <urn:x:p> <urn:x:o> }} }}",
                f"DELETE WHERE {{ GRAPH <{CK25_GRAPH}> {{ ?s ?p ?o }} }}",
                f"LOAD <file:///etc/hostname> INTO GRAPH <{CK25_GRAPH}>",
                "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }",
            ]
            outs = [vt.execute(a) for a in attacks] + vt.execute_many(attacks)
            assert [o.status for o in outs] == [Status.REFUSED] * 8
            assert vt.requests_sent == sent
            assert _count(everything, "GRAPH ?g { ?s ?p ?o }") == before_total
            assert _count(vt, "?s ?p ?o") == 26903
            # control: the same kind of request, explicitly allowed, does change the store
            with SparqlEndpoint(virtuoso_ck25.sparql_url, allow_update=True, backoff=0.05) as writer:
                w = writer.execute("INSERT DATA { GRAPH <urn:kgqa:scratch> { <urn:x:s> <urn:x:p> <urn:x:o> } }")
            assert w.status is Status.OK, w.message
            assert _count(everything, "GRAPH ?g { ?s ?p ?o }") == before_total + 1
        finally:
            virtuoso_ck25.isql('revoke SPARQL_UPDATE from "SPARQL";')
            virtuoso_ck25.isql("sparql clear graph <urn:kgqa:scratch>;")
        assert _count(everything, "GRAPH ?g { ?s ?p ?o }") == before_total


def test_parse_error_and_get(vt, virtuoso_ck25):
    bad = vt.execute("SELECT ?x WHERE { ?x ?p ")
    assert bad.status is Status.PARSE_ERROR and "SP030" in bad.message
    q = "PREFIX pv: <http://ld.company.org/prod-vocab/> SELECT ?d WHERE { ?d a pv:Department } ORDER BY ?d"
    with SparqlEndpoint(virtuoso_ck25.sparql_url, default_graphs=[CK25_GRAPH], method="GET") as get:
        a = get.execute(q)
    b = vt.execute(q)
    assert a.status is Status.OK and a.answer == b.answer and len(a.answer.rows) > 5
    ask = vt.execute("ASK { ?s ?p ?o }")
    assert ask.answer == BooleanAnswer(True)  # CaseMode=2: a real boolean, not a one-row table


def test_construct_as_triples(vt):
    out = vt.execute("CONSTRUCT { ?s a ?t } WHERE { ?s a ?t } LIMIT 3")
    assert out.status is Status.OK and out.answer.variables == ("subject", "predicate", "object")
    assert len(out.answer.rows) == 3
    assert all(r[1].value == "http://www.w3.org/1999/02/22-rdf-syntax-ns#type" for r in out.answer.rows)


def test_row_cap(vt):
    out = vt.execute("SELECT ?s WHERE { ?s ?p ?o } LIMIT 500", max_rows=100)
    assert out.status is Status.EXEC_ERROR and "more than 100 rows" in out.message


def test_load_errors_are_reported(virtuoso_ck25):
    bad = virtuoso_ck25.workdir / "broken.ttl"
    bad.write_text("<urn:a> <urn:b> <urn:c> .\n<urn:a> <urn:b> \"unterminated .\n")
    with pytest.raises(VirtuosoError, match="ll_error") as e:
        virtuoso_ck25.load([bad], "urn:kgqa:broken")
    assert "broken.ttl" in str(e.value) and "TURTLE RDF loader, line 3" in str(e.value)


def test_explosive_query_times_out(vt):
    q = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"
    out = vt.execute(q, timeout=1.5)
    assert out.status is Status.TIMEOUT
