"""Every codepoint-escape form an engine reads is decoded before the sandbox reads a query
(issue 24, scope 1): ``\\uu0053ERVICE`` (Java's grammar, Jena's SPARQL 1.1 parser, Blazegraph),
``\\U0000005`` + 8 hex digits (SPARQL 1.1, RDF4J/GraphDB, QLever), escapes preceded by an even or
odd number of backslashes, and escapes that decode to more escapes."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from conftest import examples

from kgqa.execute.sandbox import check, readings

SERVICE = r"SELECT * { \uu0053ERVICE <http://169.254.169.254/> {?s ?p ?o} }"


def test_issue_example_multi_u_service_is_refused():
    v = check(SERVICE)
    assert v.refused and "SERVICE" in v.reason
    assert any(text.startswith("SELECT * { SERVICE <") for _, text in readings(SERVICE))


def escape(ch: str, form: str) -> str:
    cp = ord(ch)
    if form == "U":
        return f"\\U{cp:08X}"
    return "\\" + "u" * int(form) + f"{cp:04x}"


FORMS = st.sampled_from(["1", "2", "3", "7", "U"])


@examples(300)
def test_any_escaped_letter_of_a_dangerous_keyword_is_refused(examples):
    @settings(max_examples=examples, deadline=None)
    @given(word=st.sampled_from(["SERVICE", "INSERT", "DELETE", "LOAD", "DROP", "CLEAR", "FROM"]),
           at=st.integers(0, 3), form=FORMS, case=st.booleans())
    def check(word, at, form, case):
        _check_any_escaped_letter_of_a_dangerous_keyword_is_refused(word, at, form, case)

    check()


def _check_any_escaped_letter_of_a_dangerous_keyword_is_refused(word, at, form, case):
    word = word.lower() if case else word
    hidden = word[:at] + escape(word[at], form) + word[at + 1:]
    q = {"SERVICE": f"SELECT * {{ {hidden} <http://127.0.0.1:9/> {{ ?s ?p ?o }} }}",
         "FROM": f"SELECT * {hidden} <file:///etc/passwd> {{ ?s ?p ?o }}",
         "LOAD": f"{hidden} <file:///etc/passwd>",
         "DROP": f"{hidden} ALL",
         "CLEAR": f"{hidden} ALL"}.get(word.upper(), f"{hidden} DATA {{ <http://x/a> <http://x/b> <http://x/c> }}")
    v = check(q)
    assert v.refused, q
    assert re.search(word.upper(), v.reason, re.IGNORECASE) or "file:" in v.reason


def test_java_parity_odd_backslashes_decode_even_do_not():
    # three backslashes: an escaped backslash, then an escape (Java-style decodes it)
    q = "SELECT * { \\\\\\uu0053ERVICE <http://x/> {} }"
    assert check(q).refused
    java = dict(readings(q))
    assert any("SERVICE" in t for t in java.values())


def test_escape_that_decodes_to_an_escape_is_decoded_again():
    # \u005C is a backslash: decoded twice, \u005Cu0053ERVICE -> \u0053ERVICE -> SERVICE
    q = "SELECT * { \\u005Cuu0053ERVICE <http://x/> {} }"
    assert check(q).refused


def test_escapes_in_strings_and_iris_stay_harmless():
    for q in ['SELECT * { ?s ?p "\\\\uu0053ERVICE" }', 'SELECT * { ?s ?p "caf\\u00E9" }',
              "SELECT * { <http://x/\\uu0041> ?p ?o }", "\\uu0041SK {}", "SELECT * { ?s ?p \"\\U0001F600\" }"]:
        assert not check(q).refused, q


def test_out_of_range_U_escape_is_kept_as_written():
    q = 'SELECT * { ?s ?p "\\UFFFFFFFF" }'
    assert not check(q).refused
    assert all("\\UFFFFFFFF" in t for _, t in readings(q))


# --------------------------------------------------------------------------- a Jena-like endpoint


@examples(500)
def test_java_style_reading_is_what_a_javacc_stream_hands_its_lexer(examples):
    @settings(max_examples=examples, deadline=None)
    @given(st.text(st.sampled_from(["\\", "u", "U", "0", "0", "5", "3", "A", "x", " "]), max_size=24))
    def check(text):
        _check_java_style_reading_is_what_a_javacc_stream_hands_its_lexer(text)

    check()


def _check_java_style_reading_is_what_a_javacc_stream_hands_its_lexer(text):
    from faultserver import java_unicode_unescape

    from kgqa.execute.sandbox import _java_decode

    assert _java_decode(text) == java_unicode_unescape(text)


def test_jena_like_endpoint_never_receives_the_attack():
    import pyoxigraph as ox
    from faultserver import FaultServer, jena_handler

    from kgqa.execute.endpoint import SparqlEndpoint
    from kgqa.model import Status

    store = ox.Store()
    store.add(ox.Quad(ox.NamedNode("http://x/a"), ox.NamedNode("http://x/p"), ox.Literal("a")))
    with FaultServer(lifetime=60) as listener, FaultServer(lifetime=60) as server:
        handler = jena_handler(store)
        server.handler = handler
        attack = f"SELECT * {{ \\uu0053ERVICE <{listener.url('/x')}> {{ ?s ?p ?o }} }}"
        with SparqlEndpoint(server.url(), retries=0) as ep:
            ep.probe()
            sent = len(server.requests)
            assert ep.execute(attack, timeout=10).status is Status.REFUSED
            assert ep.execute("\\uu0049NSERT DATA { <http://x/e> <http://x/p> 1 }", timeout=10).status is Status.REFUSED
            assert len(server.requests) == sent and not listener.requests and len(store) == 1
            ok = ep.execute("\\uu0041SK { ?s ?p ?o }", timeout=10)
        assert ok.status is Status.OK and handler.decoded[-1] == "ASK { ?s ?p ?o }"
        import httpx

        httpx.post(server.url(), data={"query": attack}, timeout=10)  # past kgqa: the endpoint federates
        assert len(listener.requests) == 1
