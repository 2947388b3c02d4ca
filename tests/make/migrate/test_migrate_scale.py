"""Unit changes in a migration (issue 37, :mod:`kgqa.make.migrate.scale`) and the path split
that places a separating constraint (:mod:`kgqa.make.migrate.rewrite`)."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, strategies as st

from kgqa.make.migrate.rewrite import PredicateTarget, rewrite
from kgqa.make.migrate.scale import object_vars, scale_answer, scale_filters, scaled_columns, times
from kgqa.model import IRI, Literal, TableAnswer
from kgqa.sparql.analyzer import analyze

P = "http://x/weight_g"
Q = ("PREFIX x: <http://x/> SELECT ?h (MAX(?w) AS ?m) (COUNT(?w) AS ?n) WHERE { ?h x:weight_g ?w . "
     "FILTER(?w > 1000 && ?w < \"2.5e3\"^^<http://www.w3.org/2001/XMLSchema#double>) FILTER(?h != 1000) } "
     "ORDER BY DESC(?w) LIMIT 1000")


@given(st.decimals(min_value=-10**9, max_value=10**9, allow_nan=False, allow_infinity=False, places=4),
       st.sampled_from([0.001, 1000.0, 2.54, 0.5]))
def test_times_is_the_exact_decimal_product(value, factor):
    assert Decimal(times(str(value), factor)) == value * Decimal(repr(factor))


def test_times_refuses_a_non_number():
    assert times("heavy", 0.001) is None


def test_filters_on_the_scaled_variable_are_rescaled_and_nothing_else():
    names = object_vars(analyze(Q).triples, P)
    assert names == {"w"}
    out, changes = scale_filters(Q, names, 0.001)
    assert changes == ["1000 -> 1", "2.5e3 -> 2.5"]
    assert "FILTER(?w > 1 && ?w < 2.5)" in out
    assert "FILTER(?h != 1000)" in out and out.endswith("LIMIT 1000")  # other constants kept


def test_literal_object_of_the_target_predicate_is_rescaled():
    q = 'SELECT ?x WHERE { ?x <http://t/kg> "1500" . ?x <http://t/kg> "4"^^<http://www.w3.org/2001/XMLSchema#integer> }'
    assert scale_filters(q, set(), 0.001, "http://t/kg")[0] == \
        "SELECT ?x WHERE { ?x <http://t/kg> 1.5 . ?x <http://t/kg> 0.004 }"  # no "0.004"^^xsd:integer


def test_answers_rescaled_in_value_and_aggregate_columns_not_in_counts():
    cols = scaled_columns(Q, {"w"})
    assert cols == {"w", "m"}
    a = TableAnswer(("h", "m", "n"), ((IRI("http://x/h1"), Literal("1234", "http://www.w3.org/2001/XMLSchema#integer"),
                                       Literal("3", "http://www.w3.org/2001/XMLSchema#integer")),))
    got, n = scale_answer(a, cols, 0.001)
    assert n == 1 and got.rows[0][1].value == "1.234" and got.rows[0][2].value == "3"


def test_object_constraint_inside_a_sequence_path_splits_the_path():
    q = "SELECT ?hw WHERE { ?hw <http://s/pm>/<http://s/name> [] . }"
    rw = rewrite(q, {}, {"http://s/pm": PredicateTarget("<http://t/contact>", "http://t/Vendor", "object", True)})
    assert rw.problems == []
    assert "?hw <http://t/contact> ?_kgqa_step" in rw.query
    assert "FILTER NOT EXISTS { ?_kgqa_step" in rw.query and "<http://t/Vendor> }" in rw.query


def test_constraint_inside_a_path_followed_by_more_objects_is_refused():
    q = "SELECT ?hw WHERE { ?hw <http://s/pm>/<http://s/name> ?n ; <http://s/id> ?i . }"
    rw = rewrite(q, {}, {"http://s/pm": PredicateTarget("<http://t/contact>", "http://t/Vendor", "object")})
    assert rw.query is None and "cannot be placed" in rw.problems[0]
