"""The tolerant analyzer: exact values for every extracted feature, validity, characteristics."""

import pytest

from kgqa.analyze.characteristics import function_class, hops, sparql_characteristics
from kgqa.model.terms import BNode, IRI, Literal, XSD, RDF
from kgqa.sparql import STANDARD_PREFIXES, analyze, structure_template
from kgqa.sparql.analyzer import Aggregate, OrderCondition, Path, Projection, TriplePattern, ValuesBlock, Var

DBO = "http://dbpedia.org/ontology/"
DBR = "http://dbpedia.org/resource/"
DBP = "http://dbpedia.org/property/"
EX = "http://example.org/"
TYPE = IRI(RDF + "type")


def iri(x):
    return IRI(x)


# --------------------------------------------------------------------------- the paper's pairs


def test_justin_madden_pair():
    gold = analyze("ASK WHERE { dbr:Justin_Madden dbp:university dbr:Australian_Catholic_University }")
    pred = analyze("ASK WHERE { dbr:Justin_Madden dbo:almaMater ?uri . }")
    assert gold.valid and pred.valid
    assert gold.form == pred.form == "ASK"
    assert gold.entities == (IRI(DBR + "Justin_Madden"), IRI(DBR + "Australian_Catholic_University"))
    assert gold.predicates == (IRI(DBP + "university"),)
    assert pred.entities == (IRI(DBR + "Justin_Madden"),)
    assert pred.predicates == (IRI(DBO + "almaMater"),)
    assert pred.triples == (TriplePattern(IRI(DBR + "Justin_Madden"), IRI(DBO + "almaMater"), Var("uri")),)
    assert gold.undeclared_prefixes == ("dbr", "dbp") and gold.valid


def test_truncated_query_keeps_all_patterns():
    full = ("PREFIX dbo: <http://dbpedia.org/ontology/> SELECT DISTINCT ?uri WHERE { ?uri a dbo:Film ; "
            "dbo:director ?d . ?d dbo:birthPlace dbr:Berlin . OPTIONAL { ?uri dbo:runtime ?r } }")
    cut = full[:-1]
    a, b = analyze(full), analyze(cut)
    assert a.valid and not b.valid
    assert b.error.startswith("expected '}' (the query is truncated), found end of query at offset %d" % len(cut))
    assert b.error_offset == len(cut)
    assert b.triples == a.triples and len(b.triples) == 4
    assert b.entities == a.entities and b.predicates == a.predicates
    # cut inside the OPTIONAL, and in the middle of a triple
    c = analyze(full[: full.index("?r }")])
    assert [t.n3() for t in c.triples][-1] == f"?d <{DBO}birthPlace> <{DBR}Berlin> ."
    assert not c.valid


# --------------------------------------------------------------------------- prefixes, base, IRIs


def test_prefixes_declared_undeclared_and_expansion():
    q = ("BASE <http://example.org/base/> PREFIX ex: <http://example.org/> PREFIX : <http://e.org/d#> "
         "SELECT * WHERE { ex:a :p <rel> . <http://example.org/a> foaf:name ?n . ?n wdt:P31 zz:x }")
    info = analyze(q)
    assert info.base == "http://example.org/base/"
    assert info.prefixes == {"ex": EX, "": "http://e.org/d#"}
    assert info.undeclared_prefixes == ("foaf", "wdt", "zz")
    assert info.unresolved_prefixes == ("zz",)
    assert not info.valid and "undeclared prefix 'zz'" in info.error
    s = info.triples
    assert s[0] == TriplePattern(IRI(EX + "a"), IRI("http://e.org/d#p"), IRI("http://example.org/base/rel"))
    assert s[1].subject == s[0].subject  # prefixed name == full IRI after expansion
    assert s[1].predicate == IRI(STANDARD_PREFIXES["foaf"] + "name")
    assert s[2].predicate == IRI("http://www.wikidata.org/prop/direct/P31")
    assert s[2].object == IRI("zz:x")
    # caller-supplied prefixes win over the standard table
    assert analyze("SELECT * { ?s foaf:x ?o }", {"foaf": "urn:f:"}).predicates == (IRI("urn:f:x"),)


def test_iris_exclude_declarations_and_datatypes():
    q = ('PREFIX unused: <http://unused.org/> SELECT ?x WHERE { ?x dbo:p "3"^^xsd:int . '
         'FILTER(xsd:integer(?x) > 2 && ?x != dbr:B) } ')
    info = analyze(q)
    assert set(info.iris) == {IRI(DBO + "p"), IRI(XSD + "integer"), IRI(DBR + "B")}
    assert info.datatypes == (IRI(XSD + "int"),)
    assert info.literals == (Literal("3", XSD + "int"),)


def test_relative_iri_without_base_is_invalid():
    info = analyze("SELECT * WHERE { ?s <p> ?o }")
    assert not info.valid and info.error.startswith("relative IRI without BASE")
    assert analyze("BASE <http://x.org/> SELECT * WHERE { ?s <p> ?o }").predicates == (IRI("http://x.org/p"),)


# --------------------------------------------------------------------------- form and projection


@pytest.mark.parametrize("q,form", [
    ("SELECT * { ?s ?p ?o }", "SELECT"),
    ("ask { ?s ?p ?o }", "ASK"),
    ("CONSTRUCT { ?s <http://x/q> ?o } WHERE { ?s <http://x/p> ?o }", "CONSTRUCT"),
    ("CONSTRUCT WHERE { ?s <http://x/p> ?o }", "CONSTRUCT"),
    ("DESCRIBE <http://x/a>", "DESCRIBE"),
    ("INSERT DATA { <http://x/a> <http://x/p> 1 }", "UPDATE"),
    ("DELETE WHERE { ?s ?p ?o }", "UPDATE"),
    ("DROP ALL", "UPDATE"),
    ("?s ?p ?o", "unknown"),
])
def test_query_forms(q, form):
    info = analyze(q)
    assert info.form == form
    assert info.valid == (form != "unknown")


def test_projection_distinct_reduced_and_expressions():
    info = analyze("SELECT DISTINCT ?a (COUNT(DISTINCT ?b) AS ?n) ?c WHERE { ?a <http://x/p> ?b, ?c } GROUP BY ?a ?c")
    assert info.distinct and not info.reduced and not info.select_all
    assert info.projection == (Projection(Var("a")), Projection(Var("n"), "COUNT(DISTINCT ?b)"), Projection(Var("c")))
    assert info.projected_variables == (Var("a"), Var("n"), Var("c"))
    assert analyze("SELECT REDUCED * { ?s ?p ?o }").reduced
    assert analyze("SELECT * { ?s ?p ?o }").select_all


def test_template_triples_are_separate():
    info = analyze("CONSTRUCT { ?s <http://x/q> ?o } WHERE { ?s <http://x/p> ?o }")
    assert info.template == (TriplePattern(Var("s"), IRI("http://x/q"), Var("o"), ("CONSTRUCT",)),)
    assert info.triples == (TriplePattern(Var("s"), IRI("http://x/p"), Var("o")),)
    assert info.predicates == (IRI("http://x/p"), IRI("http://x/q"))


# --------------------------------------------------------------------------- triples


def test_semicolon_comma_and_classes():
    info = analyze("SELECT ?x WHERE { ?x a dbo:Person, dbo:Artist ; dbo:birthPlace dbr:Oslo ; rdfs:label 'X'@en , \"Y\" ; . }")
    assert [t.spo for t in info.triples] == [
        (Var("x"), TYPE, IRI(DBO + "Person")),
        (Var("x"), TYPE, IRI(DBO + "Artist")),
        (Var("x"), IRI(DBO + "birthPlace"), IRI(DBR + "Oslo")),
        (Var("x"), IRI(STANDARD_PREFIXES["rdfs"] + "label"), Literal("X", None, "en")),
        (Var("x"), IRI(STANDARD_PREFIXES["rdfs"] + "label"), Literal("Y")),
    ]
    assert info.classes == (IRI(DBO + "Person"), IRI(DBO + "Artist"))
    assert info.entities == (IRI(DBO + "Person"), IRI(DBO + "Artist"), IRI(DBR + "Oslo"))
    assert info.literals == (Literal("X", None, "en"), Literal("Y"))
    assert info.valid


def test_blank_node_property_lists_and_collections():
    info = analyze("SELECT * { ?x <http://x/p> [ <http://x/q> ?y ; <http://x/r> [ <http://x/s> 1 ] ] . "
                   "[] <http://x/t> _:lbl . ( 1 ?z ) <http://x/u> ?w }")
    t = [x.spo for x in info.triples]
    b1, b2, b3 = BNode("anon#1"), BNode("anon#2"), BNode("anon#3")
    assert t[:4] == [
        (b1, IRI("http://x/q"), Var("y")),
        (b2, IRI("http://x/s"), Literal("1", XSD + "integer")),
        (b1, IRI("http://x/r"), b2),
        (Var("x"), IRI("http://x/p"), b1),
    ]
    assert t[4] == (b3, IRI("http://x/t"), BNode("lbl"))
    c1, c2 = BNode("anon#4"), BNode("anon#5")
    assert t[5:] == [
        (c1, IRI(RDF + "first"), Literal("1", XSD + "integer")),
        (c1, IRI(RDF + "rest"), c2),
        (c2, IRI(RDF + "first"), Var("z")),
        (c2, IRI(RDF + "rest"), IRI(RDF + "nil")),
        (c1, IRI("http://x/u"), Var("w")),
    ]
    assert info.valid


def test_literals_typed():
    info = analyze('SELECT * { ?x <http://x/p> 1, -2.5, 3e1, true, "a\\tb", """long""", "d"^^<http://x/dt> }')
    assert info.literals == (
        Literal("1", XSD + "integer"), Literal("-2.5", XSD + "decimal"), Literal("3e1", XSD + "double"),
        Literal("true", XSD + "boolean"), Literal("a\tb"), Literal("long"), Literal("d", "http://x/dt"),
    )


def test_property_paths():
    info = analyze("SELECT * { ?x dbo:p/dbo:q* ?y . ?y ^dbo:r|a ?z . ?z !(rdf:type|^dbo:s) ?w . ?w (dbo:t)+ ?v . ?v dbo:plain ?u }")
    assert [str(t.predicate) for t in info.triples] == [
        f"<{DBO}p>/<{DBO}q>*", f"^<{DBO}r>|<{RDF}type>", f"!(<{RDF}type>|^<{DBO}s>)", f"(<{DBO}t>)+", f"{DBO}plain",
    ]
    assert isinstance(info.triples[0].predicate, Path) and info.triples[4].predicate == IRI(DBO + "plain")
    assert info.triples[0].predicate.iris == (IRI(DBO + "p"), IRI(DBO + "q"))
    assert [p.text for p in info.paths] == [str(t.predicate) for t in info.triples[:4]]
    assert info.predicates == (IRI(DBO + "p"), IRI(DBO + "q"), IRI(DBO + "r"), TYPE, IRI(DBO + "s"),
                               IRI(DBO + "t"), IRI(DBO + "plain"))
    assert info.classes == ()  # a path is not rdf:type
    assert sparql_characteristics(info)["property_path"]


def test_contexts():
    q = ("SELECT * WHERE { ?a <http://x/p0> ?b . OPTIONAL { ?a <http://x/p1> ?c "
         "{ ?c <http://x/p2> ?d } UNION { ?c <http://x/p3> ?d } UNION { ?c <http://x/p4> ?d } } "
         "MINUS { ?a <http://x/p5> ?e } FILTER NOT EXISTS { ?a <http://x/p6> ?f } FILTER(EXISTS { ?a <http://x/p7> ?g }) "
         "GRAPH ?gr { ?a <http://x/p8> ?h } SERVICE <http://x/sparql> { ?a <http://x/p9> ?i } "
         "{ SELECT ?a WHERE { ?a <http://x/p10> ?j } } { ?a <http://x/p11> ?k } }")
    info = analyze(q)
    assert info.valid, info.error
    assert [(t.predicate.value[9:], t.context) for t in info.triples] == [
        ("p0", ()), ("p1", ("OPTIONAL",)), ("p2", ("OPTIONAL", "UNION", 0)), ("p3", ("OPTIONAL", "UNION", 1)),
        ("p4", ("OPTIONAL", "UNION", 2)), ("p5", ("MINUS",)), ("p6", ("NOT EXISTS",)), ("p7", ("EXISTS",)),
        ("p8", ("GRAPH",)), ("p9", ("SERVICE",)), ("p10", ("SUBQUERY",)), ("p11", ()),
    ]
    assert info.services == (IRI("http://x/sparql"),)
    assert info.graphs == (Var("gr"),)
    c = sparql_characteristics(info)
    assert c["optional"] and c["union"] and c["minus"] and c["subquery"] and c["service"] and c["filter"]
    assert {"EXISTS", "NOT EXISTS", "GRAPH"} <= info.features


# --------------------------------------------------------------------------- VALUES, filters, aggregates, modifiers


def test_values():
    info = analyze("SELECT * { VALUES ?x { dbr:A 'b' UNDEF } ?x ?p ?o } VALUES (?p ?o) { (dbo:p 1) (UNDEF UNDEF) }")
    assert info.values == (
        ValuesBlock((Var("x"),), ((IRI(DBR + "A"),), (Literal("b"),), (None,)), ()),
        ValuesBlock((Var("p"), Var("o")), ((IRI(DBO + "p"), Literal("1", XSD + "integer")), (None, None)), ()),
    )
    assert IRI(DBR + "A") in info.entities and Literal("b") in info.literals
    assert not analyze("SELECT * { VALUES (?a ?b) { (1) } }").valid


def test_filters_and_operators():
    info = analyze("SELECT * { ?x dbo:p ?v . FILTER(?v >= 10 && ?v < 20 || ?v = 5) FILTER regex(?x, 'a') "
                   "FILTER(?x NOT IN (dbr:A, dbr:B)) FILTER(?v != 3 && lang(?x) IN ('en')) }")
    assert [(f.text, f.operators) for f in info.filters] == [
        ("(?v >= 10 && ?v < 20 || ?v = 5)", (">=", "<", "=")),
        ("regex(?x, 'a')", ()),
        ("(?x NOT IN (dbr:A, dbr:B))", ("NOT IN",)),
        ("(?v != 3 && lang(?x) IN ('en'))", ("!=", "IN")),
    ]
    assert function_class(info) == "comparative"


def test_aggregates_group_having_order_limit_offset():
    q = ("SELECT ?c (COUNT(DISTINCT ?x) AS ?n) (SAMPLE(?y) AS ?s) (GROUP_CONCAT(?y ; separator=', ') AS ?g) "
         "(MIN(?y) AS ?lo) (MAX(?y) AS ?hi) (AVG(?y) AS ?av) (SUM(?y) AS ?su) (COUNT(*) AS ?all) "
         "WHERE { ?x a ?c ; dbo:v ?y } GROUP BY ?c HAVING (COUNT(?x) > 2) ORDER BY DESC(?n) ?c ASC(?s) LIMIT 10 OFFSET 5")
    info = analyze(q)
    assert info.valid, info.error
    assert info.aggregates == (
        Aggregate("COUNT", True, "?x"), Aggregate("SAMPLE", False, "?y"),
        Aggregate("GROUP_CONCAT", False, "?y", ", "), Aggregate("MIN", False, "?y"),
        Aggregate("MAX", False, "?y"), Aggregate("AVG", False, "?y"), Aggregate("SUM", False, "?y"),
        Aggregate("COUNT", False, "*"), Aggregate("COUNT", False, "?x"),
    )
    assert info.group_by == ("?c",)
    assert info.having == ("(COUNT(?x) > 2)",)
    assert info.order_by == (OrderCondition("?n", "DESC"), OrderCondition("?c", "ASC"), OrderCondition("?s", "ASC"))
    assert (info.limit, info.offset) == (10, 5)
    assert analyze("SELECT * { ?s ?p ?o } OFFSET 3 LIMIT 2").limit == 2


def test_grouping_errors_like_pyoxigraph():
    assert not analyze("SELECT ?x (COUNT(?y) AS ?n) WHERE { ?x ?p ?y }").valid
    assert "?x is projected but neither grouped nor aggregated" in analyze(
        "SELECT ?x (COUNT(?y) AS ?n) WHERE { ?x ?p ?y }").error
    assert analyze("SELECT ?x (COUNT(?y) AS ?n) WHERE { ?x ?p ?y } GROUP BY ?x").valid
    # Virtuoso dialect: an aggregate without AS
    info = analyze("SELECT DISTINCT COUNT(?uri) WHERE { ?uri a dbo:Film }")
    assert not info.valid and "needs '(... AS ?var)'" in info.error
    assert info.aggregates == (Aggregate("COUNT", False, "?uri"),) and len(info.triples) == 1


# --------------------------------------------------------------------------- validity


@pytest.mark.parametrize("q", [
    "SELECT * WHERE { ?s ?p ?o",
    "SELECT * WHERE { ?s ?p ?o } }",
    "SELECT * WHERE { ?s ?p ?o . FILTER(?o > 3 }",
    "SELECT * WHERE { ?s ?p ?o . FILTER((?o > 3) }",
    "SELECT * WHERE { ?s ?p }",
    "SELECT * WHERE { ?s ?p ?o ?s2 ?p2 ?o2 }",
    "SELECT WHERE { ?s ?p ?o }",
    "SELECT * WHERE { ?s ?p ?o } LIMIT",
    "SELECT * WHERE { ?s ?p ?o } LIMIT 1.5",
    "SELECT * WHERE { ?s ?p ?o } ORDER BY",
    "SELECT * WHERE { ?s ?p 'unterminated }",
    "SELECT * WHERE { ?s ?p ?o . FILTER(regex(?o)) }",
    "SELECT * WHERE { ?s ?p \"a\\qb\" }",
    "SELECT ?x WHERE { ?x ?p ?o } garbage",
    "the capital of France",
    "",
    "   # just a comment",
    "SELECT * WHERE { ?s ?p \"x\"@1 }",
    "SELECT * WHERE { ?s <http://a:b/x> ?o }",
    "SELECT * WHERE { ?s <http://x/p> ?o } GROUP BY ?s",
])
def test_invalid(q):
    info = analyze(q)
    assert not info.valid
    assert info.error and info.error_offset is not None and 0 <= info.error_offset <= len(q)


@pytest.mark.parametrize("q", [
    "SELECT * WHERE { ?s ?p ?o }",
    "select * { ?s ?p ?o . }",
    "SELECT * WHERE { ?s ?p ?o . ?o ?q ?r . }",
    "SELECT * WHERE { ?s ?p ?o OPTIONAL { ?o ?q ?r } . ?s ?x ?y }",
    "SELECT * WHERE { } ",
    "ASK {}",
    "SELECT * WHERE { ?s ?p ?o FILTER(?o) }",
    "SELECT (1 + 2 * -3 AS ?x) WHERE {}",
    "SELECT * WHERE { ?s ?p ?o . BIND(IF(BOUND(?o), STR(?o), 'n') AS ?l) FILTER(!isIRI(?o) && RAND() < 1) }",
    "SELECT * WHERE { ?s ?p ?o FILTER(CONCAT()) FILTER(COALESCE(?o, 1)) FILTER(NOW() > ?o) }",
    "SELECT * WHERE { ?s ?p ?o } VALUES ?s { <http://x/a> }",
    "PREFIX : <http://x/> SELECT * WHERE { :a :b :c }",
    "SELECT * FROM <http://x/g> FROM NAMED <http://x/h> WHERE { GRAPH ?g { ?s ?p ?o } }",
    "SELECT * WHERE { ?s ?p 18 . 5 ?p ?o }",
    "SELECTDISTINCT ?s WHERE { ?s ?p ?o }",
    "PREFIXex: <http://x/> SELECT * { ex:a ?p ?o }",
    "SELECT * WHERE { ?s ?p ?o }  # trailing comment",
    "DESCRIBE ?x WHERE { ?x ?p ?o }",
    "SELECT ?s WHERE { ?s <http://x/p> ?o } GROUP BY ?s",
])
def test_valid(q):
    info = analyze(q)
    assert info.valid, info.error
    assert info.error is None and info.error_offset is None


def test_never_raises_on_deep_nesting():
    info = analyze("SELECT * WHERE { FILTER(" + "(" * 5000 + "1" + ")" * 5000 + ") }")
    assert not info.valid and "nesting deeper than" in info.error
    info = analyze("{" * 3000)
    assert not info.valid


# --------------------------------------------------------------------------- characteristics


def test_characteristics_counts_and_hops():
    q = ("PREFIX : <http://x/> SELECT ?person WHERE { ?person :childOf ?parent . ?parent :childOf :Albert_Einstein . "
         "?parent :born ?date }")
    info = analyze(q)
    c = sparql_characteristics(info)
    assert (c["triples"], c["variables"], c["hops"], c["function"]) == (3, 3, 2, "none")
    assert c["select"] and not c["ask"] and not c["optional"] and not c["group_by"]
    # hops: from ?person: ?parent 1, :Albert_Einstein 2, ?date 2
    assert hops(analyze("SELECT ?date WHERE { ?person <http://x/c> ?parent . ?parent <http://x/c> <http://x/E> . ?parent <http://x/b> ?date }")) == 2
    assert hops(analyze("SELECT ?x WHERE { ?x <http://x/p> ?y . ?y <http://x/p> ?z . ?z <http://x/p> ?w }")) == 3
    # aggregate projection: the hop count starts from the counted variable
    assert hops(analyze("SELECT (COUNT(?x) AS ?c) WHERE { ?x <http://x/p> <http://x/o> }")) == 1
    # ASK: diameter of the pattern graph
    assert hops(analyze("ASK { <http://x/a> <http://x/p> ?y . ?y <http://x/p> ?z }")) == 2
    assert hops(analyze("SELECT * {}")) == 0


@pytest.mark.parametrize("q,cls", [
    ("SELECT (COUNT(?x) AS ?c) WHERE { ?x ?p ?o } ORDER BY ?c LIMIT 1", "count"),
    ("SELECT ?x WHERE { ?x <http://x/p> ?v } ORDER BY DESC(?v) LIMIT 1", "superlative"),
    ("SELECT (MAX(?v) AS ?m) WHERE { ?x <http://x/p> ?v FILTER(?v > 3) }", "superlative"),
    ("SELECT ?x WHERE { ?x <http://x/p> ?v } ORDER BY DESC(?v)", "none"),
    ("SELECT ?x WHERE { ?x <http://x/p> ?v FILTER(?v > 3) }", "comparative"),
    ("SELECT ?x WHERE { ?x <http://x/p> ?v FILTER(?v != 3) }", "none"),
    ("ASK { ?x <http://x/p> ?v }", "none"),
])
def test_function_class(q, cls):
    assert function_class(analyze(q)) == cls


def test_structure_template_is_stable():
    a = analyze("PREFIX dbo: <http://dbpedia.org/ontology/> SELECT ?u WHERE { ?u a dbo:Film ; dbo:director dbr:X } LIMIT 5")
    b = analyze("select ?film where { ?film <http://dbpedia.org/ontology/starring> <http://y/Z> .\n ?film a <http://c/Book> } LIMIT 5")
    assert structure_template(a) == structure_template(b)
    assert structure_template(a) == (
        f"SELECT ?v0 WHERE {{ ?v0 <> <> . ?v0 <{RDF}type> <> . }} LIMIT 5"
    )
    c = analyze("SELECT ?u WHERE { ?u a dbo:Film ; dbo:director 'X' } LIMIT 5")
    assert structure_template(c) != structure_template(a)
    assert structure_template(analyze("SELECT ?u WHERE { ?u a dbo:Film ")) is None


def test_results_are_frozen_and_cached():
    a = analyze("SELECT * { ?s ?p ?o }")
    assert a is analyze("SELECT * { ?s ?p ?o }")
    with pytest.raises(Exception):
        a.valid = False  # type: ignore[misc]


def test_result_is_the_dataclass_instance_its_fields_make():
    """_build makes QueryInfo without its __init__ (for speed): the same object, every field
    (the compare=False ones included) in declaration order."""
    import dataclasses

    from kgqa.sparql.analyzer import QueryInfo

    for q in ["PREFIX dbo: <http://dbpedia.org/ontology/> SELECT DISTINCT ?x WHERE { ?x a dbo:Film } LIMIT 3",
              "ASK { ?s ?p ?o", "garbage"]:
        a = analyze(q)
        names = [f.name for f in dataclasses.fields(QueryInfo)]
        assert list(vars(a)) == names
        b = QueryInfo(**{n: getattr(a, n) for n in names})
        assert a == b and vars(a) == vars(b)


def test_unknown_form_still_yields_patterns():
    info = analyze("?s <http://x/p> <http://x/o> . ?o <http://x/q> ?x")
    assert info.form == "unknown" and not info.valid
    assert info.error.startswith("expected SELECT, ASK, CONSTRUCT, DESCRIBE or an update, found VAR 's' at offset 0")
    assert [t.n3() for t in info.triples] == ["?s <http://x/p> <http://x/o> .", "?o <http://x/q> ?x ."]
    info = analyze("SELECT ?x WHERE { ?x ?p ?o } garbage { ?a <http://x/b> ?c }")
    assert info.error.startswith("unexpected text after the end of the query, found ERROR 'garbage' at offset 29")
    assert len(info.triples) == 2


def test_truncated_group_followed_by_solution_modifiers():
    """A WHERE group whose closing brace is missing, followed by ORDER BY / LIMIT (a decoder
    cut-off or the T1 degradation): the modifiers are modifiers, not a triple with a collection."""
    from kgqa.sparql.analyzer import analyze as _analyze

    info = _analyze("PREFIX : <http://x/> SELECT ?x WHERE { ?x :p ?y . ?y :q 3 ORDER BY DESC(?y) LIMIT 1")
    assert not info.valid and "expected '}' before ORDER" in info.error
    assert [t.n3() for t in info.triples] == [
        "?x <http://x/p> ?y .", '?y <http://x/q> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .']
    assert [(o.expression, o.direction) for o in info.order_by] == [("?y", "DESC")]
    assert info.limit == 1
    assert not any("rdf-syntax-ns#first" in str(i) for i in info.iris)


@pytest.mark.parametrize("q", [
    "SELECT ORDER NOT",
    "SELECT * WHERE { ?s ?p ?o } ORDER BY NOT",
    "SELECT * WHERE { ?s ?p ?o } ORDER BY ?s NOT IN (1) LIMIT 1",
    "SELECT ?s WHERE { ?s ?p ?o } GROUP BY NOT ?s",
    "SELECT * WHERE { ?s ?p ?o } HAVING NOT",
    "SELECT * WHERE { ?s ?p ?o } HAVING (?s) NOT ?o",
])
def test_not_without_exists_in_a_solution_modifier_ends(q):
    """``NOT`` not followed by ``EXISTS`` starts a constraint yet reads nothing: GROUP BY,
    HAVING and ORDER BY stop there (they looped forever, growing their lists)."""
    info = analyze(q)
    assert not info.valid
    assert q == "SELECT ORDER NOT" or info.error.startswith("expected an expression, found 'NOT'")
    assert all(o.expression for o in info.order_by) and all(info.having) and all(info.group_by)


def test_a_prologue_read_before_gives_the_same_results():
    """The parser keeps what a PREFIX prologue declares (kgqa.sparql.parser._HEADS): a query
    read with that prologue known gives what it gives when read first."""
    import dataclasses

    from kgqa.sparql import parser
    from kgqa.sparql.analyzer import _analyze

    head = "PREFIX dbo: <http://dbpedia.org/ontology/> PREFIX res: <http://dbpedia.org/resource/>\n"
    bodies = ["SELECT ?x WHERE { res:Berlin dbo:leader ?x }", "PREFIX dbo: <http://x/> ASK { ?s dbo:p ?o }",
              "BASE <http://b/> SELECT * { <r> ?p ?o }", "SELECT ?x { ?x foo:p ?y }", "", "PREFIX", "res:X",
              "INSERT DATA { res:a dbo:b res:c }"]
    bad_heads = ["PREFIX dbo: <rel> ", "PREFIX dbo: <http://a%zz/> ", "prefix x.: <http://x/> "]

    def everything(info):
        return {f.name: getattr(info, f.name) for f in dataclasses.fields(info)}

    for h in [head, *bad_heads]:
        for body in bodies:
            parser._HEADS.clear()
            first = everything(_analyze(h + body, {}))
            again = everything(_analyze(h + body, {}))
            assert again == first, (h, body)
        parser._HEADS.clear()
        for body in bodies:  # the head is read once, by the first body
            assert everything(_analyze(h + body, {})) == _fresh(h + body)


def _fresh(text):
    import dataclasses

    from kgqa.sparql import parser
    from kgqa.sparql.analyzer import _analyze

    saved = dict(parser._HEADS)
    parser._HEADS.clear()
    try:
        info = _analyze(text, {})
        return {f.name: getattr(info, f.name) for f in dataclasses.fields(info)}
    finally:
        parser._HEADS.clear()
        parser._HEADS.update(saved)


def test_fast_constructors_make_the_dataclass_instances():
    """kgqa.sparql.tree's make_* set the slots of its frozen dataclasses directly: the objects
    equal what the constructors make, field by field, with the same hash and repr, and stay
    frozen."""
    import dataclasses

    from hypothesis import given, settings, strategies as st

    from kgqa.sparql import tree as T

    names = st.text(max_size=5)
    terms = st.one_of(names.map(IRI), names.map(T.Var), names.map(Literal), names.map(BNode))
    ctx = st.lists(st.sampled_from(["OPTIONAL", "UNION", 0, 1, "EXISTS"]), max_size=3).map(tuple)
    spans = st.tuples(st.integers(0, 9), st.integers(0, 9))

    def same(a, b):
        assert type(a) is type(b) and a == b and hash(a) == hash(b) and repr(a) == repr(b)
        for f in dataclasses.fields(b):
            assert getattr(a, f.name) is getattr(b, f.name)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(a, dataclasses.fields(b)[0].name, None)

    @settings(max_examples=300, deadline=None)
    @given(names, terms, terms, terms, ctx, spans, st.booleans(), st.one_of(st.none(), names))
    def check(name, s, p, o, c, span, simple, expression):
        same(T.make_var(name), T.Var(name))
        same(T.make_triple(s, p, o, c), T.TriplePattern(s, p, o, c))
        groups = ((span, (span,)),)
        same(T.make_statement(span, groups, simple, c), T.StatementSpan(span, groups, simple, c))
        v = T.Var(name)
        same(T.make_projection(v, expression), T.Projection(v, expression))
        node, ref = T.make_query_node(name), T.QueryNode(form=name)
        assert node == ref and repr(node) == repr(ref)
        assert node.projection is not T.make_query_node(name).projection  # fresh lists

    check()


def test_tokens_handed_out_are_tokens():
    """The parser reads plain tuples (kgqa.sparql.parser._tokens) but the tokens it hands out
    (expression items, projection tokens) are Tokens, with or without a prologue seen before."""
    from kgqa.sparql import Token
    from kgqa.sparql.analyzer import _analyze
    from kgqa.sparql.tree import Expr, Group

    def tokens(x, out):
        if isinstance(x, tuple) and len(x) == 4 and isinstance(x[0], str) and isinstance(x[2], int):
            out.append(x)
        elif isinstance(x, Expr):
            for it in x.items:
                tokens(it, out)
        elif isinstance(x, Group):
            for el in x.elements:
                tokens(el, out)
        elif isinstance(x, (list, tuple)):
            for it in x:
                tokens(it, out)
        return out

    q = ("PREFIX dbo: <http://dbpedia.org/ontology/> SELECT ?x (COUNT(?y) + 1 AS ?n) WHERE { ?x dbo:p ?y "
         "FILTER(?y > 3 && NOT EXISTS { ?y dbo:q ?z FILTER(?z != 'a') }) BIND(STR(?x) AS ?s) } "
         "GROUP BY ?x (LCASE(?x) AS ?l) HAVING (COUNT(?y) > 1) ORDER BY DESC(?n) ?x")
    for _ in range(2):
        node = _analyze(q, {}).tree
        found = tokens([e for _, e in node.projection] + [e for e, _ in node.group_by] + node.having
                       + [e for _, e, _ in node.order] + [node.where], [])
        found += node.projection_tokens
        assert len(found) > 20 and all(type(t) is Token for t in found)
