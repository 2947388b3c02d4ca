"""The sandbox's refusals, the token scan, and the query normaliser (unit cases and the real
gold queries of QALD-9, QALD-10, DB25 and RuBQ)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from kgqa.execute.embedded import EmbeddedEngine
from kgqa.sparql.lexer import tokenize
from kgqa.execute.normalise import STANDARD_PREFIXES, normalise
from kgqa.execute.sandbox import refusal
from kgqa.model import Status

# --------------------------------------------------------------------------- sandbox

REFUSED = {
    "INSERT DATA { <a> <b> <c> }": "INSERT",
    "insert data { <a> <b> <c> }": "INSERT",
    "DELETE WHERE { ?s ?p ?o }": "DELETE",
    "PREFIX x: <http://x/> DELETE { ?s x:p ?o } INSERT { ?s x:q ?o } WHERE { ?s x:p ?o }": "DELETE",
    "WITH <http://g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }": "WITH",
    "LOAD <http://example.org/x.ttl>": "LOAD",
    "LOAD SILENT <http://example.org/x.ttl> INTO GRAPH <http://g>": "LOAD",
    "CLEAR ALL": "CLEAR",
    "DROP GRAPH <http://g>": "DROP",
    "CREATE GRAPH <http://g>": "CREATE",
    "ADD <http://a> TO <http://b>": "ADD",
    "MOVE DEFAULT TO <http://b>": "MOVE",
    "COPY <http://a> TO <http://b>": "COPY",
    "SELECT * { ?s ?p ?o } ; # trailing\nDrOp ALL": "DROP",
    "SELECT * WHERE { SERVICE <http://evil/sparql> { ?s ?p ?o } }": "SERVICE",
    "SELECT * WHERE { SERVICE SILENT <http://evil/sparql> { ?s ?p ?o } }": "SERVICE",
    "SELECT * WHERE { service ?endpoint { ?s ?p ?o } }": "SERVICE",
}

ALLOWED = [
    'SELECT * WHERE { ?s ?p "delete me" }',
    "SELECT * WHERE { ?s ?p 'DROP ALL; LOAD <x>' }",
    'SELECT * WHERE { ?s ?p """multi\nINSERT DATA { } line""" }',
    "SELECT * WHERE { ?s <http://x/DELETE> ?o }  # INSERT DATA {} in a comment",
    "PREFIX delete: <http://x/> SELECT ?insert WHERE { ?insert delete:load ?service }",
    "SELECT * WHERE { ?s <http://x/p> ?o . ?o :copy ?x }",
    "ASK { <http://x/SERVICE> ?p ?o }",
    'SELECT * WHERE { ?s ?p "x"@de . FILTER(CONTAINS(STR(?s), "clear")) }',
]


@pytest.mark.parametrize("query,word", sorted(REFUSED.items()))
def test_refusals(query, word):
    reason = refusal(query)
    assert reason is not None and reason.startswith("refused") and word.upper() in reason


@pytest.mark.parametrize("query", ALLOWED)
def test_not_fooled_by_strings_iris_comments_names(query):
    assert refusal(query) is None


def test_allow_switches():
    assert refusal("SELECT * { SERVICE <http://e/s> { ?s ?p ?o } }", allow_service=True) is None
    assert refusal("INSERT DATA { <a> <b> <c> }", allow_update=True) is None
    assert refusal("INSERT DATA { <a> <b> <c> }", allow_service=True) is not None
    assert "SERVICE" in refusal("SELECT * { SERVICE <http://e/s> { ?s ?p ?o } }", allow_update=True)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_tokens_cover_the_input_exactly(text):
    toks = tokenize(text, trivia=True)
    assert "".join(text[t.start:t.end] for t in toks) == text
    pos = 0
    for t in toks:
        assert t.start == pos
        pos = t.end


_SAFE_CHARS = st.characters(blacklist_characters='"\\\n\r', blacklist_categories=("Cs",))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=_SAFE_CHARS, max_size=60))
def test_string_contents_never_trigger_refusal(s):
    assert refusal(f'SELECT ?x WHERE {{ ?x ?p "{s}" }}') is None


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted({w for w in REFUSED.values() if w != "WITH"})), st.sampled_from(["", " ", "\n  ", "\t"]))
def test_keyword_anywhere_at_token_level_is_refused(word, ws):
    for variant in (word, word.lower(), word.title()):
        assert refusal(f"SELECT * WHERE {{ ?s ?p ?o }}{ws}{variant} <http://g>") is not None


# --------------------------------------------------------------------------- normaliser


def test_prefix_injection_only_for_undeclared_used_prefixes():
    q = "PREFIX dbo: <http://other/> SELECT ?x WHERE { ?x dbo:a dbr:B ; rdfs:label \"wd:Q1\" . ?x unknown:p ?y }"
    n = normalise(q)
    assert n.text.startswith("PREFIX dbr: <http://dbpedia.org/resource/>\n"
                             "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n")
    assert n.text.endswith(q)
    assert n.rewrites == ["added PREFIX dbr: <http://dbpedia.org/resource/>",
                          "added PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>"]
    assert "unknown:" not in n.text.split("SELECT")[0]  # a prefix no table knows is left undeclared


def test_virtuoso_projections():
    n = normalise("SELECT DISTINCT COUNT(?x) WHERE { ?x a <http://x/C> }")
    assert n.text == "SELECT DISTINCT (COUNT(?x) AS ?count) WHERE { ?x a <http://x/C> }"
    n = normalise("SELECT COUNT(DISTINCT ?x) WHERE { ?x ?p ?count }")
    assert n.text == "SELECT (COUNT(DISTINCT ?x) AS ?count1) WHERE { ?x ?p ?count }"
    n = normalise("PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT ?a xsd:date(?d) WHERE { ?a <p> ?d }")
    assert "SELECT ?a (xsd:date(?d) AS ?date) WHERE" in n.text
    n = normalise("SELECT (COUNT(?x)) WHERE { ?x ?p ?o }")
    assert n.text == "SELECT (COUNT(?x) AS ?count) WHERE { ?x ?p ?o }"
    n = normalise("SELECT ?s WHERE { { SELECT COUNT(?o) WHERE { ?s ?p ?o } } }")
    assert "SELECT (COUNT(?o) AS ?count) WHERE" in n.text
    untouched = "SELECT ?x (COUNT(?y) AS ?n) WHERE { ?x ?p ?y FILTER(STRLEN(?y) > 2) } GROUP BY ?x"
    assert normalise(untouched) == normalise(untouched) and normalise(untouched).text == untouched
    assert normalise(untouched).rewrites == []


def test_casts():
    n = normalise('PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * { FILTER(xsd:int(?v) > "3"^^xsd:int) }')
    assert 'xsd:integer(?v) > "3"^^xsd:int' in n.text and len(n.rewrites) == 1
    n = normalise("SELECT (<http://www.w3.org/2001/XMLSchema#int>(?x) AS ?y) {}")
    assert "<http://www.w3.org/2001/XMLSchema#integer>(?x)" in n.text
    n = normalise('PREFIX my: <http://my/> SELECT (my:int(?x) AS ?y) {}')
    assert n.rewrites == []


def test_distinct_count_semantics_on_data(tmp_path):
    """Virtuoso's SELECT DISTINCT COUNT(?x) counts every solution, then DISTINCT rows."""
    data = tmp_path / "d.nt"
    data.write_text("".join(f"<http://x/s{i}> <http://x/p> <http://x/o{i % 2}> .\n" for i in range(5)))
    with EmbeddedEngine.from_files([data], workers=1) as e:
        o = e.execute(normalise("SELECT DISTINCT COUNT(?o) WHERE { ?s <http://x/p> ?o }").text)
        assert o.status is Status.OK and o.answer.variables == ("count",)
        assert [r[0].value for r in o.answer.rows] == ["5"]


# --------------------------------------------------------------------------- real gold queries


def _gold(shared: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, rel in [("qald9-train", "qald-9/qald-9-train-multilingual.json"),
                      ("qald9-test", "qald-9/qald-9-test-multilingual.json"),
                      ("qald10", "qald-10/qald_10.json")]:
        doc = json.loads((shared / rel).read_text(encoding="utf-8"))
        out[name] = [q["query"]["sparql"] for q in doc["questions"] if q["query"].get("sparql")]
    out["rubq-test"] = [q["query"] for q in json.loads((shared / "rubq-1.0/RuBQ_1.0_test.json").read_text(encoding="utf-8"))
                        if q.get("query")]
    doc = yaml.safe_load((shared / "db25/questions_db25.yaml").read_text(encoding="utf-8"))
    out["db25"] = [q["query"]["sparql"] for q in doc["questions"]]
    return out


@pytest.fixture(scope="module")
def parser_engine(tmp_path_factory):
    """An engine over an empty KG used as a parser: PARSE_ERROR or not. SERVICE is let through
    to the engine here, but its workers have no network."""
    empty = tmp_path_factory.mktemp("empty") / "empty.nt"
    empty.write_text("")
    e = EmbeddedEngine.from_files([empty], workers=2, allow_service=True, isolate_network=True)
    if not e.network_isolated:
        e.close()
        pytest.skip("workers cannot be isolated from the network here; not sending gold SERVICE queries")
    yield e
    e.close()


def test_real_gold_queries_parse_after_normalising(shared_data, parser_engine):
    gold = _gold(shared_data)
    counts = {}
    for name, queries in gold.items():
        before = parser_engine.execute_many(queries, timeout=10)
        after = parser_engine.execute_many([normalise(q).text for q in queries], timeout=10)
        ok_before = sum(o.status is not Status.PARSE_ERROR for o in before)
        ok_after = sum(o.status is not Status.PARSE_ERROR for o in after)
        assert ok_after >= ok_before
        counts[name] = (len(queries), ok_before, ok_after)
    assert counts == {
        "qald9-train": (408, 394, 400),
        "qald9-test": (150, 126, 146),
        "qald10": (394, 394, 394),
        "rubq-test": (960, 0, 960),
        "db25": (100, 89, 100),
    }


def test_standard_prefix_table_is_sane():
    for p, iri in STANDARD_PREFIXES.items():
        assert iri.startswith("http") and (iri.endswith(("/", "#", ":")) or p == "xml"), p
    assert STANDARD_PREFIXES["dbc"] == "http://dbpedia.org/resource/Category:"
    assert STANDARD_PREFIXES["wdt"] == "http://www.wikidata.org/prop/direct/"
