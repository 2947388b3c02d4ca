"""The generator's join order (kgqa.make.generate.joinorder): the text sent to the engine is a
reordering of the query's own lines, and the engine's solutions are the same."""

from __future__ import annotations

from collections import Counter

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from kgqa.make.generate.graphquery import Edge, Function, GraphQuery, Node, path_iri
from kgqa.make.generate import joinorder
from kgqa.make.generate.joinorder import JoinStats, reorder
from kgqa.make.generate import kg as kgmod
from kgqa.make.generate.kg import KGAccess, QueryFailed
from kgqa.model.answer import TableAnswer
from kgqa.model.terms import IRI, Literal

EX = "http://example.org/"
D = "http://www.w3.org/2001/XMLSchema#date"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"


def _stats(**preds: tuple[int, int, int]) -> JoinStats:
    return JoinStats({EX + p: v for p, v in preds.items()}, {EX + "C": 50})


def test_a_pattern_on_few_distinct_keys_is_not_joined_first():
    """fso-hgde's case: 8,513 inScheme triples on 11 schemes then validFrom on the scheme took
    4.8 s in pyoxigraph, validFrom first 0.06 s: the reordered text starts with validFrom."""
    q = (f"SELECT DISTINCT ?y2 WHERE {{\n  ?y1 <{EX}inScheme> ?y2 .\n  ?y2 <{EX}validFrom> ?b .\n"
         f"  FILTER(?y1 != ?y2)\n}}")
    out = reorder(q, _stats(inScheme=(8513, 8513, 11), validFrom=(8477, 8477, 108)))
    assert out.split("\n")[1] == f"  ?y2 <{EX}validFrom> ?b ."
    assert Counter(out.split("\n")) == Counter(q.split("\n"))


def test_binds_go_after_the_patterns_only_when_that_keeps_the_solutions():
    stats = _stats(p=(10, 10, 10), q=(100000, 100, 100000))
    moved = f"SELECT ?x WHERE {{\n  ?a <{EX}p> ?v .\n  BIND(<{D}>(?v) AS ?x)\n  ?a <{EX}q> ?b .\n}}"
    assert reorder(moved, stats).split("\n")[1:4] == [f"  ?a <{EX}p> ?v .", f"  ?a <{EX}q> ?b .",
                                                      f"  BIND(<{D}>(?v) AS ?x)"]
    # a pattern reads the bound value: the BIND stays where it is, and so does the run
    used = f"SELECT ?x WHERE {{\n  ?a <{EX}q> ?v .\n  BIND(<{D}>(?v) AS ?x)\n  ?x <{EX}p> ?b .\n}}"
    assert reorder(used, stats) == used
    # the BIND reads a variable bound only after it: unbound there, so it may not move
    later = f"SELECT ?x WHERE {{\n  ?a <{EX}q> ?b .\n  BIND(<{D}>(?v) AS ?x)\n  ?a <{EX}p> ?v .\n}}"
    assert reorder(later, stats) == later


def test_text_it_cannot_read_is_kept():
    stats = _stats(p=(10, 10, 10), q=(100000, 100, 100000))
    split = f"SELECT ?a WHERE {{\n  ?a <{EX}q> ?b .\n  FILTER(?b != ?a ||\n  ?a != ?b)\n  ?b <{EX}p> ?c .\n}}"
    assert reorder(split, stats) == split  # a FILTER over two lines ends the run: nothing to reorder
    assert reorder(split, None) == split
    one_line = f"SELECT ?a WHERE {{ ?a <{EX}q> ?b . ?b <{EX}p> ?c }}"
    assert reorder(one_line, stats) == one_line


def _store() -> ox.Store:
    """A small KG with skew: 40 items in 2 schemes, dates on half, parts between items."""
    s = ox.Store()
    n = ox.NamedNode
    for i in range(40):
        item = n(f"{EX}i{i}")
        s.add(ox.Quad(item, n(EX + "inScheme"), n(f"{EX}s{i % 2}")))
        s.add(ox.Quad(item, n("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), n(EX + "C")))
        if i % 2:
            s.add(ox.Quad(item, n(EX + "validFrom"), ox.Literal(f"20{10 + i % 7}-01-01")))
        s.add(ox.Quad(item, n(EX + "hasPart"), n(f"{EX}i{(i * 7) % 40}")))
    for k in range(2):
        s.add(ox.Quad(n(f"{EX}s{k}"), n(EX + "validFrom"), ox.Literal(f"200{k}-01-01")))
    return s


def _solutions(store: ox.Store, q: str) -> Counter:
    res = store.query(q)
    return Counter(tuple(str(sol[v]) if sol[v] is not None else None for v in res.variables) for sol in res)


#: the store's relations, and its dates read through a cast (a BIND in the query text)
_RELS = [EX + "inScheme", EX + "validFrom", EX + "hasPart", path_iri((EX + "validFrom",), cast=D)]


@st.composite
def _queries(draw) -> GraphQuery:
    """A connected graph query of 1-4 edges over the store's relations, perhaps typed, perhaps
    with a grounded node, and a function on it."""
    k = draw(st.integers(1, 4))
    nodes = ["x"]
    edges = []
    for j in range(k):
        a = draw(st.sampled_from(nodes))
        b = f"y{j + 1}"
        nodes.append(b)
        rel = draw(st.sampled_from(_RELS))
        edges.append(Edge(a, rel, b) if draw(st.booleans()) or "validFrom" in rel else Edge(b, rel, a))
    literal = {e.dst for e in edges if "validFrom" in e.rel}
    ground = draw(st.sampled_from([None] + [nd for nd in nodes[1:] if nd not in literal]))
    ns = tuple(Node(nd, EX + "C" if nd not in literal else D, literal=nd in literal,
                    value=IRI(f"{EX}i{draw(st.integers(0, 39))}") if nd == ground else None) for nd in nodes)
    fn = draw(st.sampled_from(["none", "count"] + (["max"] if "x" in literal else [])))
    return GraphQuery(ns, tuple(edges), Function(fn), typed=draw(st.booleans()), question="x")


@examples(200)
def test_reordered_queries_have_the_same_solutions(examples, monkeypatch):
    """On a real pyoxigraph store, every generated query and its two-values form give the same
    solutions (as a multiset) sent as written and as reordered (every run reordered: the
    store is small, below the cost a run is left as written under)."""
    monkeypatch.setattr(joinorder, "CHEAP", 0.0)
    store = _store()
    moved = []
    stats = JoinStats.from_rows([tuple(r) for r in store.query(JoinStats.QUERIES[0])],
                                [tuple(r) for r in store.query(JoinStats.QUERIES[1])])

    @settings(max_examples=examples, deadline=None)
    @given(_queries())
    def check(q):
        for text in (q.sparql(), q.sparql(function=False)):
            sent = reorder(text, stats)
            assert Counter(sent.split("\n")) == Counter(text.split("\n"))
            assert _solutions(store, sent) == _solutions(store, text)
            moved.append(sent != text)

    check()
    assert any(moved)


def test_access_sends_the_reordered_text_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(joinorder, "CHEAP", 0.0)
    kg = tmp_path / "kg.ttl"
    kg.write_text("".join(f"<{EX}i{i}> <{EX}inScheme> <{EX}s{i % 2}> .\n<{EX}s{i % 2}> <{EX}validFrom> \"2001\" .\n"
                          for i in range(6)))
    q = f"SELECT DISTINCT ?y1 WHERE {{\n  ?y1 <{EX}inScheme> ?y2 .\n  ?y2 <{EX}validFrom> ?b .\n}}"
    with KGAccess.open(str(kg)) as access:
        access.read_join_stats()
        assert access.join_stats is not None and access.join_stats.predicates[EX + "inScheme"] == (6, 6, 2)
        plain, moved = access.select_many([q, q], reorder=[False, True])
        assert set(plain.rows) == set(moved.rows) == {(IRI(f"{EX}i{i}"),) for i in range(6)}
        assert access.reordered[q] != q  # validFrom first: 2 schemes, 6 items


def test_a_grounded_cast_value_is_sent_as_the_value_the_kg_stores(tmp_path):
    """fso-hgde writes its dates as plain strings, read as xsd:date: a query that compares one
    (``FILTER(xsd:date(?v) = "..."^^xsd:date)``) cast the whole relation. It is sent with the one
    value the KG stores in its pattern, an index lookup, and gives the same rows; a date stored
    two ways (``Z`` and ``+00:00``: one value), or not at all, is sent as written."""
    kg = tmp_path / "kg.nt"
    dates = ["2001-01-01Z", "2001-01-01+00:00"] + [f"200{i}-01-01" for i in range(2, 10)]
    kg.write_text("".join(f"<{EX}i{i}> <{EX}inScheme> <{EX}s{i % 2}> .\n<{EX}i{i}> <{EX}validFrom> \"{d}\" .\n"
                          for i, d in enumerate(dates)))
    rel = path_iri((EX + "validFrom",), cast=D)

    def asking(value: str) -> str:
        nodes = (Node("x", EX + "C"), Node("y1", D, literal=True, value=Literal(value, D)), Node("y2", EX + "C"))
        return GraphQuery(nodes, (Edge("x", rel, "y1"), Edge("x", EX + "inScheme", "y2")), Function(),
                          typed=False, question="x").sparql()

    one, two_ways, none = (asking(v) for v in ("2003-01-01", "2001-01-01Z", "1999-01-01"))
    cast_filter = f"FILTER(<{D}>(?via0_v) = "
    assert all(cast_filter in q for q in (one, two_ways, none))
    with KGAccess.open(str(kg)) as access:
        access.read_join_stats()
        plain = access.select_many([one, two_ways, none])
        sent = access.select_many([one, two_ways, none], reorder=True)
        assert [set(r.rows) for r in plain] == [set(r.rows) for r in sent] == \
            [{(IRI(f"{EX}i3"),)}, {(IRI(f"{EX}i0"),), (IRI(f"{EX}i1"),)}, set()]
        assert f'?x <{EX}validFrom> "2003-01-01" .' in access._reorder(one) and cast_filter not in access._reorder(one)
        assert cast_filter in access._reorder(two_ways) and cast_filter in access._reorder(none)
        assert access.stored == {(f"<{EX}validFrom>", f"<{D}>", Literal(v, D).n3()): stored
                                 for v, stored in (("2003-01-01", '"2003-01-01"'), ("2001-01-01Z", None),
                                                   ("1999-01-01", None))}
    # a cast variable read anywhere else (here: returned) keeps its FILTER
    text = one.replace("SELECT DISTINCT ?x", "SELECT DISTINCT ?x ?via0_v")
    assert joinorder.bind_casts(text, {k: '"2003-01-01"' for k in joinorder.cast_lookups(one)}) == text
    assert joinorder.cast_lookups(text) == []
    # the pattern and its FILTER in different groups: the FILTER's scope is not the pattern's
    nested = one.replace(f"  {cast_filter}", f"  {{ }}\n  {cast_filter}")
    assert nested != one and joinorder.cast_lookups(nested) == []


def _count(store: ox.Store, q: str) -> int:
    """The solutions of ``q``'s triple patterns (its lines that end in `` .``), listed."""
    lines = [x for x in q.split("\n") if x.endswith(" .")]
    return sum(1 for _ in store.query("SELECT * WHERE {\n" + "\n".join(lines) + "\n}"))


@examples(200)
def test_counted_solutions_are_the_patterns_solutions(examples):
    """On a real pyoxigraph store, the count query of every generated query whose patterns form
    a tree equals the number of solutions of its triple patterns (as a multiset), listed."""
    store = _store()
    counted = []

    @settings(max_examples=examples, deadline=None)
    @given(_queries())
    def check(q):
        for text in (q.sparql(), q.sparql(function=False)):
            cq = joinorder.count_query(text)
            if cq is None:
                continue
            got = next(iter(store.query(cq)))[0]
            assert int(got.value) == _count(store, text)
            counted.append(int(got.value))

    check()
    # the property held on enough of them: about 40% of the drawn texts have tree-shaped patterns
    # (20 of 50 in one quick run, so 'more than the examples' failed by chance); under 5 of 50 is
    # 4 standard deviations out
    assert len(counted) >= 5 and max(counted) > 1, counted


def _hub_kg(tmp_path) -> str:
    """A part hierarchy with one hub: 60 parts of h, each dated, and 3 parts of each of 5 others."""
    lines = [f"<{EX}p{i}> <{EX}isPartOf> <{EX}h> .\n<{EX}h> <{EX}hasPart> <{EX}p{i}> .\n"
             f"<{EX}p{i}> <{EX}validFrom> \"20{10 + i % 10}-01-01\" .\n" for i in range(60)]
    lines += [f"<{EX}q{k}_{i}> <{EX}isPartOf> <{EX}o{k}> .\n<{EX}o{k}> <{EX}hasPart> <{EX}q{k}_{i}> .\n"
              for k in range(5) for i in range(3)]
    path = tmp_path / "hub.nt"
    path.write_text("".join(lines))
    return str(path)


#: fso-hgde's check that ran into the timeout: a date over parts of the wholes items are part of
CHAIN = (f"SELECT (MAX(?v) AS ?m) WHERE {{\n  ?y1 <{EX}validFrom> ?v .\n  ?y1 <{EX}isPartOf> ?y2 .\n"
         f"  ?y2 <{EX}hasPart> ?y3 .\n  FILTER(?y1 != ?y3)\n}}")


def test_a_check_over_more_solutions_than_its_timeout_allows_is_refused_unrun(tmp_path, monkeypatch):
    """The hub's chain has 60 x 60 = 3,600 solutions; with a bound of 3,000 (the test's rate
    times a 1 s timeout) it is refused ``too-costly`` without being run, while a chain of
    60 + 15 = 75 (each part's whole's parts) and the first chain under a bound of 4,000 are
    run and answered."""
    monkeypatch.setattr(kgmod, "DEGREES_OVER", 10)
    monkeypatch.setattr(kgmod, "COUNT_OVER", 20)
    monkeypatch.setattr(kgmod, "SOLUTIONS_PER_SECOND", 3000)
    small = f"SELECT (COUNT(*) AS ?n) WHERE {{\n  ?y2 <{EX}hasPart> ?y3 .\n  ?y3 <{EX}isPartOf> ?y4 .\n}}"
    with KGAccess.open(_hub_kg(tmp_path), timeout=1.0) as access:
        access.read_join_stats()
        # by the counts alone (every node its predicate's average degree) 60 x 1 x 12.5 = 750;
        # with the hub's degrees (sums of squares) 60 x 1 x 3,645 / 75 = 2,916, of the real 3,600
        assert joinorder.solutions(CHAIN, access.join_stats) == 750.0
        big, ok = access.select_many([CHAIN, small], reorder=True)
        assert joinorder.solutions(CHAIN, access.join_stats) == pytest.approx(2916.0)
        assert isinstance(big, QueryFailed) and big.status == "too-costly" and "3,600 solutions" in big.message
        assert access.counted[access.reordered[CHAIN]] == 3600 and access.degrees_read
        assert access.join_stats.degrees[(EX + "hasPart", 0)] == (60 * 60 + 5 * 9, 60)
        assert access.counted[access.reordered[small]] in (None, 75)
        assert isinstance(ok, TableAnswer) and ok.rows == ((Literal("75", XSD_INTEGER),),)
        executed = access.executed
        monkeypatch.setattr(kgmod, "SOLUTIONS_PER_SECOND", 4000)
        answered = access.select(CHAIN)
        assert answered.rows[0][0] == Literal("2019-01-01") and access.executed == executed + 1
