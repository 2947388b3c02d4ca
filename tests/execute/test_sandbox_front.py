r"""The one SPARQL front end under attack: the lossless lexer, SPARQL 1.1 section 19.2 codepoint
escapes, glued keywords, FROM graphs, the size cap, one tokenisation per query, and the sandbox
in every engine (embedded and endpoint). pyoxigraph is the oracle for what an engine reads."""

from __future__ import annotations

import re
from pathlib import Path

import pyoxigraph
import pytest
from hypothesis import assume, given, settings, strategies as st

from conftest import examples
from faultserver import FaultServer
from kgqa.execute import sandbox
from kgqa.execute.endpoint import SparqlEndpoint
from kgqa.execute.sandbox import DEFAULT_MAX_QUERY_BYTES, check, prepare, readings, refusal
from kgqa.model import Status
from kgqa.sparql import analyze
from kgqa.sparql.lexer import decode_codepoint_escapes, significant, tokenize

# --------------------------------------------------------------------------- lexer

_SPARQLISH = st.text(alphabet=st.sampled_from(list("SELECTwhere{}()<>?$:\"'#\\u0041_ .;,@^!=|&\n\t-+*/0123456789aZ")),
                     max_size=120)


@examples(300)
def test_lexer_is_lossless_with_trivia(examples):
    @settings(max_examples=examples, deadline=None)
    @given(st.one_of(st.text(max_size=200), _SPARQLISH))
    def check(text):
        _check_lexer_is_lossless_with_trivia(text)

    check()


def _check_lexer_is_lossless_with_trivia(text):
    toks = tokenize(text, trivia=True)
    assert "".join(text[t.start:t.end] for t in toks) == text
    pos = 0
    for t in toks:
        assert t.start == pos and t.end > t.start
        pos = t.end
    # dropping trivia gives exactly the default token stream
    assert significant(toks) == tokenize(text)


def test_trivia_tokens():
    text = "SELECT ?x # c\n  WHERE{}"
    assert [(t.kind, t.value) for t in tokenize(text, trivia=True)] == [
        ("KEYWORD", "SELECT"), ("WS", " "), ("VAR", "x"), ("WS", " "), ("COMMENT", "# c"), ("WS", "\n  "),
        ("KEYWORD", "WHERE"), ("PUNCT", "{"), ("PUNCT", "}")]


def _escape(c: str, big: bool) -> str:
    return f"\\U{ord(c):08X}" if big or ord(c) > 0xFFFF else f"\\u{ord(c):04x}"


@examples(300)
def test_codepoint_escapes_decode_to_the_characters(examples):
    @settings(max_examples=examples, deadline=None)
    @given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40), st.lists(st.booleans(), max_size=40))
    def check(s, big):
        _check_codepoint_escapes_decode_to_the_characters(s, big)

    check()


def _check_codepoint_escapes_decode_to_the_characters(s, big):
    assume("\\" not in s)
    escaped = "".join(_escape(c, big[i] if i < len(big) else False) for i, c in enumerate(s))
    assert decode_codepoint_escapes(escaped) == s
    assert decode_codepoint_escapes(s) == s


def test_codepoint_escape_edge_cases():
    assert decode_codepoint_escapes(r"\u0049NSERT") == "INSERT"
    assert decode_codepoint_escapes(r"\U0001F600 \UFFFFFFFF \u12") == "\U0001F600 \\UFFFFFFFF \\u12"
    # one pass only (section 19.2); the sandbox checks repeated decoding separately
    assert decode_codepoint_escapes(r"\u005Cu0041") == r"\u0041"
    # IRIs may contain escapes (pyoxigraph decodes them); the IRIREF value is decoded
    assert [(t.kind, t.value) for t in tokenize(r"<http://x/\u0041#>")] == [("IRIREF", "http://x/A#")]


# --------------------------------------------------------------------------- the attacks of issue 11


ATTACKS = {
    r"SELECT * WHERE { BIND(<http://x/\u0041#> AS ?z) SERVICE <http://127.0.0.1:1/> { ?s ?p ?o } }": "SERVICE",
    r"\u0049NSERT DATA { <http://a> <http://b> <http://c> }": "INSERT",
    "DROPALL": "DROP",
    "CLEARDEFAULT": "CLEAR",
    "INSERTDATA {}": "INSERT",
    "INSERTDATA{<http://a> <http://b> <http://c>}": "INSERT",
    "LOADSILENT<http://127.0.0.1:1/x>": "LOAD",
    "PREFIX ex: <http://g/> DROPGRAPHex:g": "DROP",
    "PREFIX ex: <http://127.0.0.1:1/> SELECT * WHERE { SERVICEex:s { ?s ?p ?o } }": "SERVICE",
    "PREFIX ex: <http://127.0.0.1:1/> SELECT * WHERE { SERVICESILENTex:s { ?s ?p ?o } }": "SERVICE",
    "PREFIX ex: <http://127.0.0.1:1/> SELECT * WHERE { SERVICE:s { ?s ?p ?o } }": "SERVICE",
    # hidden from a reader that decodes nothing, visible to one that decodes before parsing (Jena)
    r"SELECT * WHERE { ?s ?p ?o } # \u000A SERVICE <http://127.0.0.1:1/> { }": "SERVICE",
    r"SELECT * WHERE { ?s ?p 'a\u0027 } SERVICE <http://127.0.0.1:1/> { } #' }": "SERVICE",
    r"SELECT * WHERE { ?s ?p ?o } \u0053ERVICE <http://127.0.0.1:1/> { }": "SERVICE",
    r"\u005Cu0044ROP ALL": "DROP",  # an engine decoding twice
    "SELECT * FROM <file:///etc/passwd> WHERE { ?s ?p ?o }": "FROM",
    r"SELECT * FROM <file\u003A///etc/passwd> WHERE { ?s ?p ?o }": "FROM",
    "PREFIX f: <file:///etc/> SELECT * FROM NAMED f:passwd WHERE { ?s ?p ?o }": "FROM NAMED",
    "SELECT * FROM <relative> WHERE { ?s ?p ?o }": "FROM",
    # glued as pyoxigraph reads them: FROM ex:passwd, FROM NAMED ex:passwd, PREFIX dbr: <file:...>
    "PREFIX ex: <file:///etc/> SELECT * FROMex:passwd WHERE { ?s ?p ?o }": "FROM",
    "PREFIX ex: <file:///etc/> SELECT * FROMNAMEDex:passwd WHERE { GRAPH ?g { ?s ?p ?o } }": "FROM NAMED",
    "PREFIX ex: <file:///etc/> SELECT * FROM NAMEDex:passwd WHERE { GRAPH ?g { ?s ?p ?o } }": "FROM NAMED",
    "PREFIXdbr: <file:///etc/> SELECT * FROM dbr:passwd WHERE { ?s ?p ?o }": "FROM",
    'define get:soft "replace" SELECT * FROM <http://127.0.0.1:1/x.ttl> WHERE { ?s ?p ?o }': "DEFINE",
    # Virtuoso vendor functions that reach the network, files or the database
    'SELECT (bif:http_get("http://127.0.0.1:1/") AS ?x) {}': "bif:",
    'SELECT (<bif:file_to_string>("/etc/passwd") AS ?x) {}': "bif:",
    "SELECT (sql:anything(1) AS ?x) {}": "sql:",
    'PREFIX bif: <http://x/> SELECT (bif:http_get("http://127.0.0.1:1/") AS ?x) {}': "bif:",
    'PREFIX v: <http://www.openlinksw.com/schemas/bif#> SELECT (v:http_get("http://127.0.0.1:1/") AS ?x) {}': "bif:",
}


@pytest.mark.parametrize("query,word", sorted(ATTACKS.items()))
def test_attacks_are_refused(query, word):
    reason = refusal(query)
    assert reason is not None and reason.startswith("refused") and word in reason


def test_pyoxigraph_reads_glued_keywords_as_the_sandbox_assumes():
    """The oracle: what the sandbox refuses as an update really is one for pyoxigraph, and
    ``SERVICEex:s`` really is executed as SERVICE (the port-1 refusal is pyoxigraph's own; no
    packet leaves the process)."""
    for q in ("DROPALL", "CLEARDEFAULT", "INSERTDATA {}", "PREFIX ex: <http://g/> DROPSILENTGRAPHex:g"):
        pyoxigraph.Store().update(q)  # parses and runs (on an empty store)
        assert refusal(q) is not None
    with pytest.raises(OSError, match="port 1 is not allowed"):
        list(pyoxigraph.Store().query("PREFIX ex: <http://127.0.0.1:1/> SELECT * WHERE { SERVICEex:s { ?s ?p ?o } }"))


def test_pyoxigraph_reads_glued_from_as_the_sandbox_assumes():
    store = pyoxigraph.Store()
    store.add(pyoxigraph.Quad(pyoxigraph.NamedNode("http://a"), pyoxigraph.NamedNode("http://b"),
                              pyoxigraph.NamedNode("http://c"), pyoxigraph.NamedNode("file:///etc/passwd")))
    for q in ("PREFIX ex: <file:///etc/> SELECT * FROMex:passwd WHERE { ?s ?p ?o }",
              "PREFIXdbr: <file:///etc/> SELECT * FROM dbr:passwd WHERE { ?s ?p ?o }",
              "PREFIX ex: <file:///etc/> SELECT * FROM NAMEDex:passwd WHERE { GRAPH ?g { ?s ?p ?o } }"):
        assert len(list(store.query(q))) == 1  # the graph was selected
        assert "file:///etc/passwd" in refusal(q)
    info = analyze("PREFIX ex: <http://g/> SELECT * FROMex:a FROMNAMEDex:b FROM NAMEDex:c WHERE { ?s ?p ?o }")
    assert info.valid and [i.value for i in info.from_graphs] == ["http://g/a"]
    assert [i.value for i in info.from_named] == ["http://g/b", "http://g/c"]
    v = check("PREFIX ex: <http://g/> SELECT * FROMex:a FROMNAMEDex:b FROM NAMEDex:c FROM dbr:X WHERE { ?s ?p ?o }")
    assert v.reason is None and v.from_graphs == ("http://g/a", "http://dbpedia.org/resource/X")
    assert v.from_named == ("http://g/b", "http://g/c")


def test_from_graphs_are_reported():
    v = check("BASE <http://b/> PREFIX g: <https://g/> SELECT * FROM <http://a/> FROM <rel> FROM NAMED g:x "
              "WHERE { ?s ?p ?o }")
    assert v.reason is None and v.from_graphs == ("http://a/", "http://b/rel") and v.from_named == ("https://g/x",)
    assert check("SELECT * FROM <file:///x> {}", from_schemes=None).reason is None
    assert check("SELECT * FROM <file:///x> {}", from_schemes=("file",)).from_graphs == ("file:///x",)
    info = analyze("SELECT * FROM <http://a/> FROM NAMED <http://b/> WHERE { ?s ?p ?o }")
    assert [i.value for i in info.from_graphs] == ["http://a/"] and [i.value for i in info.from_named] == ["http://b/"]


def test_size_cap_refuses_before_any_work(monkeypatch):
    calls = []
    monkeypatch.setattr(sandbox, "tokenize", lambda *a, **k: calls.append(1) or tokenize(*a, **k))
    big = "SELECT * WHERE { ?s ?p ?o } #" + "x" * DEFAULT_MAX_QUERY_BYTES
    reason = refusal(big)
    size = len(big.encode("utf-8"))
    assert reason.startswith(f"refused: query is {size:,} bytes, over the {DEFAULT_MAX_QUERY_BYTES:,}-byte cap")
    p = prepare(big)
    assert p.refusal == reason and p.text == big and calls == []
    assert refusal("SELECT * { ?s ?p 'é' }", max_query_bytes=22) is not None  # bytes, not characters
    assert refusal("SELECT * { ?s ?p 'é' }", max_query_bytes=23) is None
    assert refusal(big, max_query_bytes=None) is None


def test_prepare_tokenises_once(monkeypatch):
    import kgqa.execute.normalise as norm

    calls = []
    real = tokenize

    def counting(*a, **k):
        calls.append(a[0])
        return real(*a, **k)

    monkeypatch.setattr(sandbox, "tokenize", counting)
    monkeypatch.setattr(norm, "tokenize", counting)
    q = "SELECT DISTINCT COUNT(?x) WHERE { ?x a dbo:Film . FILTER(xsd:int(?y) > 2) } # unique 7f3a"
    p = prepare(q)
    assert len(calls) == 1
    assert p.refusal is None and p.text.startswith("PREFIX dbo: ") and len(p.rewrites) == 4
    # an engine checking the prepared text again pays nothing (the verdict is remembered)
    assert refusal(p.text) is None and len(calls) == 1


def test_readings_only_for_escaped_queries():
    assert readings("SELECT * {}") == [("as written", "SELECT * {}")]
    labels = [label for label, _ in readings(r"SELECT '\\u0041 \u0042' {}")]
    assert labels == ["as written", "after decoding \\u escapes", "after decoding \\u escapes Java-style"]


def test_legit_queries_with_escapes_pass():
    for q in ("PREFIX services: <http://x/> SELECT * WHERE { services:a ?p ?o }",
              r"SELECT * WHERE { ?s ?p 'caf\u00e9' }", r"SELECT * WHERE { ?s <http://x/\u0041> ?o }",
              "PREFIX delete: <http://x/> SELECT ?insert WHERE { ?insert delete:load ?service }",
              "SELECT * FROM <http://dbpedia.org> WHERE { ?s ?p ?o }",
              'SELECT * WHERE { ?s ?p ?o . ?o bif:contains "\'x\'" }'):
        assert refusal(q) is None, q


# --------------------------------------------------------------------------- random update forms

UPDATES = [
    ("INSERT", ["INSERT", "DATA", "{ <http://a> <http://b> <http://c> }"]),
    ("DELETE", ["DELETE", "DATA", "{ <http://a> <http://b> <http://c> }"]),
    ("DELETE", ["DELETE", "WHERE", "{ ?s ?p ?o }"]),
    ("INSERT", ["INSERT", "{ ?s ?p ?o }", "WHERE", "{ ?s ?p ?o }"]),
    ("WITH", ["WITH", "<http://g>", "DELETE", "{ ?s ?p ?o }", "WHERE", "{ ?s ?p ?o }"]),
    ("LOAD", ["LOAD", "SILENT", "<http://127.0.0.1:1/x.ttl>", "INTO", "GRAPH", "<http://g>"]),
    ("CLEAR", ["CLEAR", "DEFAULT"]),
    ("CLEAR", ["CLEAR", "ALL"]),
    ("DROP", ["DROP", "GRAPH", "<http://g>"]),
    ("DROP", ["DROP", "NAMED"]),
    ("CREATE", ["CREATE", "GRAPH", "<http://g>"]),
    ("ADD", ["ADD", "DEFAULT", "TO", "<http://g>"]),
    ("MOVE", ["MOVE", "<http://a>", "TO", "<http://b>"]),
    ("COPY", ["COPY", "DEFAULT", "TO", "<http://b>"]),
]
_WORD = re.compile(r"[A-Za-z]+")


@st.composite
def update_variant(draw):
    word, parts = draw(st.sampled_from(UPDATES))
    out = []
    for k, part in enumerate(parts):
        if _WORD.fullmatch(part):
            part = "".join(c.upper() if draw(st.booleans()) else c.lower() for c in part)
            if draw(st.integers(0, 3)) == 0:  # escape one letter of the keyword
                i = draw(st.integers(0, len(part) - 1))
                part = part[:i] + _escape(part[i], draw(st.booleans())) + part[i + 1:]
        sep = draw(st.sampled_from(["", " ", "\n", "\t ", " # c\n", "  "])) if k else ""
        out.append(sep + part)
    prologue = draw(st.sampled_from(["", "PREFIX ex: <http://x/>\n", "BASE <http://b/> ", "# hi\n"]))
    head = draw(st.sampled_from(["", "SELECT * { ?s ?p ?o } ;\n"]))  # hidden behind a query
    return word, prologue + head + "".join(out)


@examples(400)
def test_every_update_form_is_refused(examples):
    @settings(max_examples=examples, deadline=None)
    @given(update_variant())
    def check(case):
        _check_every_update_form_is_refused(case)

    check()


def _check_every_update_form_is_refused(case):
    word, query = case
    reason = refusal(query)
    assert reason is not None and reason.startswith("refused: SPARQL Update"), query
    assert refusal(query, allow_update=True) is None or "SERVICE" in refusal(query, allow_update=True)


@examples(200)
def test_what_pyoxigraph_runs_as_an_update_is_refused(examples):
    @settings(max_examples=examples, deadline=None)
    @given(update_variant())
    def check(case):
        _check_what_pyoxigraph_runs_as_an_update_is_refused(case)

    check()


def _check_what_pyoxigraph_runs_as_an_update_is_refused(case):
    _, query = case
    assume("LOAD" not in query.upper())  # never let the oracle fetch anything
    try:
        pyoxigraph.Store().update(query)
    except RuntimeError:  # parsed, failed while running ("graph does not exist"): an update
        pass
    except (SyntaxError, ValueError, OSError):
        return
    assert refusal(query) is not None, query


@st.composite
def service_variant(draw):
    kw = "".join(c.upper() if draw(st.booleans()) else c.lower() for c in "SERVICE")
    if draw(st.integers(0, 2)) == 0:
        i = draw(st.integers(0, 6))
        kw = kw[:i] + _escape(kw[i], draw(st.booleans())) + kw[i + 1:]
    silent = draw(st.sampled_from(["", " SILENT", "SILENT", " silent "]))
    target = draw(st.sampled_from(["<http://127.0.0.1:1/>", "ex:s", ":s", "?endpoint"]))
    sep = draw(st.sampled_from(["", " ", "\n", " # c\n"]))
    # SERVICE alone: joined with a pattern that has no solutions pyoxigraph would never call it
    return (f"PREFIX ex: <http://127.0.0.1:1/> PREFIX : <http://127.0.0.1:1/> SELECT * WHERE {{ "
            f"{kw}{silent}{sep}{target} {{ ?s ?p ?o }} }}")


@examples(300)
def test_every_service_form_is_refused(examples):
    @settings(max_examples=examples, deadline=None)
    @given(service_variant())
    def check(query):
        _check_every_service_form_is_refused(query)

    check()


def _check_every_service_form_is_refused(query):
    reason = refusal(query)
    assert reason is not None and "SERVICE" in reason, query
    assert refusal(query, allow_service=True) is None


@examples(150)
def test_what_pyoxigraph_runs_as_service_is_refused(examples):
    """Oracle: pyoxigraph refuses port 1 itself, so an OSError naming it means the query was
    read as SERVICE (nothing is sent)."""
    @settings(max_examples=examples, deadline=None)
    @given(service_variant())
    def check(query):
        _check_what_pyoxigraph_runs_as_service_is_refused(query)

    check()


def _check_what_pyoxigraph_runs_as_service_is_refused(query):
    try:
        list(pyoxigraph.Store().query(query))
    except OSError as e:
        if "port 1 is not allowed" in str(e):
            SERVICE_SEEN.append(query)
            assert refusal(query) is not None, query
    except (SyntaxError, ValueError, RuntimeError):
        pass


SERVICE_SEEN: list[str] = []


def test_the_service_oracle_is_not_vacuous():
    """pyoxigraph really calls SERVICE in these forms (so the property test above can fail)."""
    for q in ("SELECT * WHERE { SERVICE <http://127.0.0.1:1/> { ?s ?p ?o } }",
              "PREFIX ex: <http://127.0.0.1:1/> SELECT * WHERE { SERVICEex:s { ?s ?p ?o } }",
              "PREFIX : <http://127.0.0.1:1/> SELECT * WHERE { sErViCe:s { ?s ?p ?o } }"):
        with pytest.raises(OSError, match="port 1 is not allowed"):
            list(pyoxigraph.Store().query(q))
        assert refusal(q) is not None


@examples(200)
def test_string_contents_never_trigger_refusal(examples):
    @settings(max_examples=examples, deadline=None)
    @given(st.text(alphabet=st.characters(blacklist_characters='"\\\n\r', blacklist_categories=("Cs",)), max_size=60))
    def check(s):
        _check_string_contents_never_trigger_refusal(s)

    check()


def _check_string_contents_never_trigger_refusal(s):
    assert refusal(f'SELECT ?x WHERE {{ ?x ?p "{s}" }}') is None


# --------------------------------------------------------------------------- engines


def test_endpoint_mode_refuses_before_any_request():
    with FaultServer(lifetime=60) as server:
        with SparqlEndpoint(server.url("/sparql"), backoff=0.01) as e:
            outs = e.execute_many(sorted(ATTACKS))
    assert [o.status for o in outs] == [Status.REFUSED] * len(ATTACKS)
    assert server.requests == []


def test_policy_prepare_refuses_in_every_mode():
    from kgqa.execute.policy import ExecutionPolicy

    for q in ATTACKS:
        for normalise in (True, False):
            _, _, out = ExecutionPolicy(normalise=normalise).prepare(q)
            assert out is not None and out.status is Status.REFUSED, q


def test_embedded_engine_refuses_every_attack_and_the_kg_is_unchanged(tmp_path):
    from kgqa.execute.embedded import EmbeddedEngine

    data = tmp_path / "kg.nt"
    data.write_text("<http://a> <http://b> <http://c> .\n")
    with EmbeddedEngine.from_files([data], workers=1) as e:
        outs = e.execute_many(sorted(ATTACKS), timeout=10)
        count = e.execute("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", timeout=10)
    assert [o.status for o in outs] == [Status.REFUSED] * len(ATTACKS)
    assert all(o.message.startswith("refused") for o in outs)
    assert count.status is Status.OK and count.answer.rows[0][0].value == "1"


# --------------------------------------------------------------------------- real gold queries and the normaliser


@pytest.mark.parametrize("step", [10, pytest.param(1, marks=pytest.mark.slow)], ids=["every-10th", "all"])
def test_no_shared_gold_query_is_refused_and_prepare_equals_normalise(shared_data, step):
    """Every 10th of the 2,302 shared gold queries in the README's test command, all of them in
    CI's slow run."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from sparql_gold import gold_queries
    from kgqa.execute.normalise import normalise

    queries = [q for _, q in gold_queries(shared_data)]
    assert len(queries) == 2302
    queries = queries[::step]
    refused = [q for q in queries if refusal(q) is not None]
    assert refused == []
    for q in queries:
        p = prepare(q)
        n = normalise(q)
        assert (p.text, p.rewrites) == (n.text, n.rewrites)
    assert sum(bool(normalise(q).rewrites) for q in queries) > 0


_QUERYISH = st.text(alphabet=st.sampled_from(
    list("SELECT DISTINCT COUNT xsd:int dbo:x ( ) { } ?a ?b <http://x/> \"s # t\" 'u' # c\n WHERE AS . ,")),
    max_size=80)
_PARTS = st.lists(st.sampled_from([
    "SELECT", "DISTINCT", "COUNT(?x)", "COUNT(DISTINCT ?y)", "xsd:int(?v)", "(MAX(?z))", "?a", "WHERE",
    "{", "}", "?s dbo:p ?o .", '"str # not a comment"', "# comment (COUNT\n", "<http://x/a>", "(", ")",
    "FILTER(xsd:int(?v) > 2)", "NOW()", "AS ?n", "dbr:X", "'x' ", "\n"]), max_size=14)


@examples(300)
def test_normaliser_only_adds_tokens_and_never_touches_strings_iris_comments(examples):
    @settings(max_examples=examples, deadline=None)
    @given(_PARTS, _QUERYISH)
    def check(parts, noise):
        _check_normaliser_only_adds_tokens_and_never_touches_strings_iris_comments(parts, noise)

    check()


def _check_normaliser_only_adds_tokens_and_never_touches_strings_iris_comments(parts, noise):
    from kgqa.execute.normalise import normalise

    q = " ".join(parts) + noise
    n = normalise(q)
    before = [(t.kind, q[t.start:t.end]) for t in tokenize(q, trivia=True)
              if t.kind in ("STRING", "IRIREF", "COMMENT", "VAR")]
    after = [(t.kind, n.text[t.start:t.end]) for t in tokenize(n.text, trivia=True)
             if t.kind in ("STRING", "IRIREF", "COMMENT", "VAR")]
    # every string, IRI, comment and variable of the input survives, in order
    it = iter(after)
    assert all(any(x == y for y in it) for x in before), (q, n.text)
    assert n.changed == (n.text != q)
    assert normalise(q) == n  # deterministic
    # the sandbox's verdict does not change with normalisation
    assert (refusal(q) is None) == (refusal(n.text) is None)


def test_a_string_that_looks_like_a_vendor_function_is_not_refused():
    assert refusal('SELECT * WHERE { ?s ?p "http://www.openlinksw.com/schemas/bif#http_get" }') is None
    assert refusal("SELECT * WHERE { ?s <http://www.openlinksw.com/schemas/bif#http_get> ?o }") is not None
