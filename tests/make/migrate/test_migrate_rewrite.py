"""Query rewriting on token spans (kgqa.make.migrate.rewrite)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from conftest import examples

from kgqa.make.migrate.rewrite import PredicateTarget, constants, rewrite, slots
from kgqa.sparql.analyzer import analyze

PV = "http://ld.company.org/prod-vocab/"
Q = """PREFIX pv: <http://ld.company.org/prod-vocab/>
SELECT DISTINCT ?result WHERE {
  ?result pv:hasCategory <http://x/Encoder> ; pv:price/pv:amount ?price .
  ?result a pv:Hardware , pv:Thing .
  FILTER(?price > "3"^^xsd:decimal && xsd:integer(?p) != 2 && ?c = <http://x/const>)
  VALUES ?v { <http://x/v1> pv:v2 }
  OPTIONAL { ?e pv:memberOf/pv:name ?dept . }
  BIND(STR(?x) AS ?b)
  ?b pv:after ?c # a comment <http://x/not-an-iri>
} ORDER BY ASC(?price) LIMIT 1"""


def roles(q):
    _, s = slots(q)
    return [(x.role, x.iri) for x in s]


def test_roles_of_every_iri():
    r = roles(Q)
    assert r[:2] == [("decl", PV), ("decl", PV)]
    assert ("predicate", PV + "hasCategory") in r and ("object", "http://x/Encoder") in r
    assert ("predicate", PV + "price") in r and ("predicate", PV + "amount") in r
    assert ("predicate", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type") in r
    assert ("object", PV + "Hardware") in r and ("object", PV + "Thing") in r
    assert ("datatype", "http://www.w3.org/2001/XMLSchema#decimal") in r
    assert ("function", "http://www.w3.org/2001/XMLSchema#integer") in r
    assert ("expr", "http://x/const") in r
    assert ("values", "http://x/v1") in r and ("values", PV + "v2") in r
    assert ("predicate", PV + "after") in r  # a triple after BIND(... AS ...)
    assert not any("not-an-iri" in i for _, i in r)


def test_rewrite_keeps_everything_else_byte_for_byte():
    out = rewrite(Q, {"http://x/Encoder": "http://t/Encoder"},
                  {PV + "hasCategory": PredicateTarget("<http://t/category>"),
                   PV + "memberOf": PredicateTarget("(<http://t/assignment>/<http://t/unit>)")})
    assert out.problems == []
    expected = (Q.replace("pv:hasCategory <http://x/Encoder>", "<http://t/category> <http://t/Encoder>")
                .replace("pv:memberOf/pv:name", "(<http://t/assignment>/<http://t/unit>)/pv:name"))
    assert out.query == expected
    assert analyze(out.query).valid


def test_inverse_path_and_type_constraint_on_the_subject():
    q = "SELECT ?x WHERE { ?x <http://s/expert> <http://s/Sensor> . }"
    out = rewrite(q, {"http://s/Sensor": "http://t/Sensor"},
                  {"http://s/expert": PredicateTarget("(^<http://t/has>)", "http://t/Agent", "subject")})
    assert out.query == ("SELECT ?x WHERE { ?x (^<http://t/has>) <http://t/Sensor> . FILTER EXISTS { ?x "
                         "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>/<http://www.w3.org/2000/01/rdf-schema#subClassOf>* "
                         "<http://t/Agent> } }")
    assert analyze(out.query).valid


def test_constraint_on_the_object_goes_into_the_optional_group():
    q = "SELECT ?x ?y WHERE { ?x <http://s/p> ?z OPTIONAL { ?x <http://s/q> ?y } }"
    out = rewrite(q, {}, {"http://s/q": PredicateTarget("<http://t/q>", "http://t/C", "object")})
    assert out.query.endswith("OPTIONAL { ?x <http://t/q> ?y FILTER EXISTS { ?y "
                              "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>/<http://www.w3.org/2000/01/rdf-schema#subClassOf>* "
                              "<http://t/C> } } }")


def test_unmapped_terms_make_the_query_unanswerable_with_reasons():
    q = "SELECT ?x WHERE { <http://s/a> <http://s/p> ?x . ?x <http://s/q> ?y }"
    out = rewrite(q, {"http://s/a": None}, {"http://s/q": None})
    assert out.query is None
    assert out.problems == ["entity http://s/a has no target", "predicate http://s/q has no mapping"]


def test_constants_by_role():
    ents, preds = constants(Q)
    assert "http://x/Encoder" in ents and PV + "Hardware" in ents and "http://x/v1" in ents
    assert PV + "hasCategory" in preds and PV + "amount" in preds
    assert PV not in ents and "http://www.w3.org/2001/XMLSchema#integer" not in ents


_iri = st.integers(0, 5).map(lambda i: f"http://s/e{i}")
_pred = st.integers(0, 3).map(lambda i: f"http://s/p{i}")
_var = st.sampled_from(["?a", "?b", "?c"])
_node = st.one_of(_iri.map(lambda i: f"<{i}>"), _var)


@examples(150)
def test_renaming_reaches_every_iri_and_only_those(examples):
    @settings(max_examples=examples, deadline=None)
    @given(st.lists(st.tuples(_node, _pred, _node), min_size=1, max_size=5), st.booleans())
    def check(patterns, inverse):
        _check_renaming_reaches_every_iri_and_only_those(patterns, inverse)

    check()


def _check_renaming_reaches_every_iri_and_only_those(patterns, inverse):
    q = "SELECT * WHERE { " + " . ".join(f"{s} <{p}> {o}" for s, p, o in patterns) + " }"
    ents = {f"http://s/e{i}": f"http://t/e{i}" for i in range(6)}
    preds = {f"http://s/p{i}": PredicateTarget(f"(^<http://t/p{i}>)" if inverse else f"<http://t/p{i}>")
             for i in range(4)}
    out = rewrite(q, ents, preds)
    info = analyze(out.query)
    assert info.valid
    assert not any(i.value.startswith("http://s/") for i in info.iris)
    assert len(info.triples) == len(patterns)
    for tp, (s, p, o) in zip(info.triples, patterns):
        assert tp.subject.n3() == s.replace("http://s/", "http://t/")
        assert tp.object.n3() == o.replace("http://s/", "http://t/")
    assert rewrite(q, {}, {}).query == q  # no mapping: nothing changes


def test_an_unchanged_predicate_keeps_its_spelling():
    q = "SELECT ?x WHERE { ?x a <http://s/C> ; rdfs:label ?l }"
    out = rewrite(q, {"http://s/C": "http://t/C"},
                  {"http://www.w3.org/1999/02/22-rdf-syntax-ns#type":
                       PredicateTarget("<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"),
                   "http://www.w3.org/2000/01/rdf-schema#label":
                       PredicateTarget("<http://www.w3.org/2000/01/rdf-schema#label>")})
    assert out.query == "SELECT ?x WHERE { ?x a <http://t/C> ; rdfs:label ?l }"
