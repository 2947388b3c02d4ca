"""The SPARQL tokenizer: kinds, values, offsets, the '<' ambiguity, errors."""

from conftest import examples
from kgqa.sparql.lexer import tokenize, unescape_string


def kinds(text):
    return [(t.kind, t.value) for t in tokenize(text)]


def test_basic_kinds_and_offsets():
    text = "PREFIX dbo: <http://dbpedia.org/ontology/>\nselect ?x $y WHERE { ?x a dbo:Film } # c\n"
    toks = tokenize(text)
    assert [(t.kind, t.value) for t in toks] == [
        ("KEYWORD", "PREFIX"), ("PNAME", "dbo:"), ("IRIREF", "http://dbpedia.org/ontology/"),
        ("KEYWORD", "SELECT"), ("VAR", "x"), ("VAR", "y"), ("KEYWORD", "WHERE"), ("PUNCT", "{"),
        ("VAR", "x"), ("A", "a"), ("PNAME", "dbo:Film"), ("PUNCT", "}"),
    ]
    for t in toks:
        src = text[t.start:t.end]
        if t.kind == "KEYWORD":
            assert src.upper() == t.value
        elif t.kind == "VAR":
            assert src[1:] == t.value
        elif t.kind == "IRIREF":
            assert src == "<" + t.value + ">"
        else:
            assert src == t.value
    assert toks[2].start == 12 and toks[2].end == 42
    assert toks[3].start == 43 and text[toks[3].start:toks[3].end] == "select"


def test_strings_four_quote_styles_and_suffixes():
    text = """ "a\\"b"@en 'c' \"\"\"multi
line "q" \"\"\" '''x''y'''^^xsd:string """
    assert kinds(text) == [
        ("STRING", 'a\\"b'), ("LANGTAG", "en"), ("STRING", "c"), ("STRING", 'multi\nline "q" '),
        ("STRING", "x''y"), ("PUNCT", "^^"), ("PNAME", "xsd:string"),
    ]
    assert unescape_string('a\\"b\\n\\u00e9') == ('a"b\né', None)
    assert unescape_string("bad\\x")[1] == "invalid escape '\\\\x' in string"


def test_numbers_booleans_bnodes_anon_nil():
    assert kinds("1 2.5 .5 3e2 1.5E-3 5. true FALSE _:b1 [ ] ( ) [] ()") == [
        ("NUMBER", "1"), ("NUMBER", "2.5"), ("NUMBER", ".5"), ("NUMBER", "3e2"), ("NUMBER", "1.5E-3"),
        ("NUMBER", "5"), ("PUNCT", "."), ("BOOLEAN", "true"), ("BOOLEAN", "false"), ("BNODE", "b1"),
        ("ANON", "[ ]"), ("NIL", "( )"), ("ANON", "[]"), ("NIL", "()"),
    ]


def test_less_than_versus_iri():
    # an IRIREF has no blanks or quotes inside: these are comparisons
    assert kinds("FILTER(?x < 5 && ?y > 3)") == [
        ("KEYWORD", "FILTER"), ("PUNCT", "("), ("VAR", "x"), ("PUNCT", "<"), ("NUMBER", "5"),
        ("PUNCT", "&&"), ("VAR", "y"), ("PUNCT", ">"), ("NUMBER", "3"), ("PUNCT", ")"),
    ]
    assert kinds("?a<=?b") == [("VAR", "a"), ("PUNCT", "<="), ("VAR", "b")]
    assert kinds("<http://x/y>") == [("IRIREF", "http://x/y")]
    assert kinds('?a<"x">') == [("VAR", "a"), ("PUNCT", "<"), ("STRING", "x"), ("PUNCT", ">")]


def test_punctuation_set():
    got = [t.value for t in tokenize("{ } ( . , ; [ * / | ^ ^^ + - ? ! = != < > <= >= && || ] )")]
    assert got == "{ } ( . , ; [ * / | ^ ^^ + - ? ! = != < > <= >= && || ] )".split()
    assert all(t.kind == "PUNCT" for t in tokenize("{ } . , ; * / | ^ + - ? ! = != && ||"))


def test_keywords_case_insensitive_a_is_case_sensitive():
    assert kinds("Select disTinct A a") == [("KEYWORD", "SELECT"), ("KEYWORD", "DISTINCT"),
                                              ("ERROR", "A"), ("A", "a")]
    # glued keywords are read as pyoxigraph reads them
    assert kinds("SELECTDISTINCT FILTERregex") == [
        ("KEYWORD", "SELECT"), ("KEYWORD", "DISTINCT"), ("KEYWORD", "FILTER"), ("KEYWORD", "REGEX")]


def test_errors_and_comments():
    assert kinds('childOf ~ "open') == [("ERROR", "childOf"), ("ERROR", "~"), ("ERROR", '"open')]
    assert kinds("# only a comment\n   ") == []
    assert kinds("?x # c1\n# c2\n?y") == [("VAR", "x"), ("VAR", "y")]


def test_prefixed_names():
    assert kinds(r"dbr:AC/DC dbr:T._E._Lawrence : :x dbr:a\,b dbr:x%20y wd:Q1.") == [
        ("PNAME", "dbr:AC"), ("PUNCT", "/"), ("ERROR", "DC"), ("PNAME", "dbr:T._E._Lawrence"),
        ("PNAME", ":"), ("PNAME", ":x"), ("PNAME", r"dbr:a\,b"), ("PNAME", "dbr:x%20y"),
        ("PNAME", "wd:Q1"), ("PUNCT", "."),
    ]


def test_total_on_odd_input():
    for text in ["", "\x00\x01", "<<<>>>", "\"\"\"", "'''", "\\", "é ü 中文", "?", "$", "_:", "@"]:
        toks = tokenize(text)
        assert all(text[t.start:t.end] for t in toks)


# --------------------------------------------------------------------------- the fast expression
# tokenize runs an expression rewritten for speed from lexer._SPEC (the token grammar as
# written); this reference reads _SPEC directly, one named group per kind, in _SPEC's order.

def _reference_tokenize(text, trivia=False):
    import re

    from kgqa.sparql import lexer as L

    rx = re.compile("|".join(f"(?P<{n}>{r})" for n, r in L._SPEC), re.DOTALL)
    out = []
    for m in rx.finditer(text):
        kind, (s, e) = m.lastgroup, m.span()
        if kind in ("WS", "COMMENT") and not trivia:
            continue
        if kind == "NAME":
            word = text[s:e]
            up = word.upper()
            if word == "a":
                out.append(("A", "a", s, e))
            elif up in L.KEYWORDS:
                out.append(("KEYWORD", up, s, e))
            elif up in ("TRUE", "FALSE"):
                out.append(("BOOLEAN", word.lower(), s, e))
            else:
                parts = L._split_keywords(up) if len(word) <= 64 else None
                if parts is None:
                    out.append(("ERROR", word, s, e))
                else:
                    out.extend(("KEYWORD", kw, s + o, s + o + len(kw)) for kw, o in parts)
        elif kind == "VAR":
            out.append((kind, text[s + 1:e], s, e))
        elif kind == "IRIREF":
            out.append((kind, L.decode_codepoint_escapes(text[s + 1:e - 1]), s, e))
        elif kind.startswith("STRING"):
            q = 3 if "LONG" in kind else 1
            out.append(("STRING", text[s + q:e - q], s, e))
        elif kind in ("LANGTAG", "BNODE"):
            out.append((kind, text[s + (1 if kind == "LANGTAG" else 2):e], s, e))
        elif kind == "UNTERMINATED":
            out.append(("ERROR", text[s:e], s, e))
        else:
            out.append((kind, text[s:e], s, e))
    return out


_ATOMS = list("{}()[]<>.;,?\"'abcxyzAEZ:_#*^|/!=&+-$@0123456789\n\r\t \\%~e") + [
    "\\u0041", "\\U0001F600", "\\u003E", "\\u00", "\u00e9", "\u00b7", "\u0300", "\u2040", "\u00a0",
    "\u2028", "\U00010000", "\x00", "SELECT", "select", "a", "true", "FALSE", "dbo:", "http://x/",
    '"""', "'''", "--", "e+", "E-", "..", "%2F", "%G", "\\.", "\\-", "_:", "^^", "&&", "||", "!=",
    "<=", ">=", "FILTERregex", "PREFIXdbo:", "Select", "BNODE", "@en-GB", "@en--ltr", "[ ]", "( )",
]


@examples(3000, quick=100)
def test_fast_expression_equals_the_spec(examples):
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=examples, deadline=None)
    @given(st.lists(st.sampled_from(_ATOMS), max_size=40).map("".join), st.booleans())
    def check(text, trivia):
        assert [tuple(t) for t in tokenize(text, trivia)] == _reference_tokenize(text, trivia)

    check()
    for text in ["dbr:T._E._Lawrence", "wd:Q1.", "a.b:c..d.", "_:b.x.", "?x<y>", "1.e5 .5 5. 1e", '"a\\"', "'''x''"]:
        assert [tuple(t) for t in tokenize(text)] == _reference_tokenize(text)


_PROLOGUE_ATOMS = ["PREFIX", "prefix", "PREFIXdbo:", " ", "\n", "dbo", "a.b", "a.", ":", "<", ">", "<http://x/>",
                   "<x y>", "#", '"', "'", "{", "SELECT", "?x", "\\u0041", "<a\\u0041>", "_", ".", "é", "wd:", "<>",
                   "# c\n", "\\", "PREFIX p: <http://p/>", "PREFIX : <http://e/>", "PREF\u0131X"]


def test_negated_name_classes_hold_the_same_characters():
    """The fast expression writes SPARQL's name classes negated (a sixth of the compile time):
    over every code point of the BMP and on both sides of each bound beyond it, each matches exactly
    the characters of the class as written."""
    import re

    from kgqa.sparql import lexer as L

    bounds = {0x10000, 0xEFFFF, 0xF0000, 0x1F600, 0x1F64F, 0x10FFFF}
    beyond = {b + d for b in bounds for d in (-1, 0, 1) if b + d <= 0x10FFFF}
    every = "".join(map(chr, sorted({*range(0x10000), *beyond})))
    bodies = [L._PN_CHARS_BASE, L._PN_CHARS_U + "0-9", L._PN_CHARS, L._PN_CHARS + ":", L._PN_CHARS + ".:",
              L._PN_CHARS_U + ":0-9", L._PN_CHARS_U + r"0-9\u00B7\u0300-\u036F\u203F-\u2040",
              r"\-a-c", "-x-z", "ab-", r"\U0001F600-\U0001F64F\\"]
    for body in bodies:
        assert re.sub(f"[{body}]", "\x00", every) == re.sub(L._negated(body), "\x00", every), body
    assert L._master.__wrapped__(False).pattern.count("[^") >= 10  # the fast expression uses them


@examples(2000, quick=60)
def test_parser_tokens_reuse_prologues_exactly(examples):
    """The parser reuses the tokens of a PREFIX prologue it has seen (kgqa.sparql.parser._tokens):
    always the same tokens as tokenize, first time or not."""
    from hypothesis import given, settings, strategies as st

    from kgqa.sparql.parser import _tokens

    @settings(max_examples=examples, deadline=None)
    @given(st.lists(st.sampled_from(_PROLOGUE_ATOMS), max_size=25).map("".join), st.booleans())
    def check(text, declared):
        if declared:
            text = "PREFIX p: <http://p/> " + text
        assert _tokens(text)[0] == tokenize(text)
        assert _tokens(text)[0] == tokenize(text)

    check()


def _reference_braces(tokens):
    """Each '{' token's index -> the index of the '}' closing it, from the tokens alone."""
    out, stack = {}, []
    for k, t in enumerate(tokens):
        if tuple(t) == ("PUNCT", "{", t[2], t[3]):
            stack.append(k)
        elif tuple(t) == ("PUNCT", "}", t[2], t[3]) and stack:
            out[stack.pop()] = k
    return out


@examples(2000, quick=60)
def test_parser_tokens_match_braces_as_a_second_pass_does(examples):
    """The lexer matches braces as it reads them (kgqa.sparql.parser._tokens), with or without
    a prologue seen before: the same pairs as a pass over the tokens."""
    from hypothesis import given, settings, strategies as st

    from kgqa.sparql.parser import _tokens

    atoms = _PROLOGUE_ATOMS + ["{", "}", "{ }", "'{'", '"}"', "# {\n", "<{>", "{{", "}}", "?x", "\\{"]

    @settings(max_examples=examples, deadline=None)
    @given(st.lists(st.sampled_from(atoms), max_size=30).map("".join), st.booleans())
    def check(text, declared):
        if declared:
            text = "PREFIX p: <http://p/> " + text
        for _ in range(2):  # the prologue's tokens read, then reused
            toks, _, braces = _tokens(text)
            assert toks == tokenize(text)
            assert braces == _reference_braces(toks)

    check()


@examples(1500, quick=60)
def test_parser_finds_a_prologue_seen_before_as_the_expression_does(examples):
    """A prologue seen before is found by its first characters (kgqa.sparql.parser._BY_START)
    instead of the prologue expression: the same prologue as the expression, also when the
    text goes on with more declarations, and the same tokens as tokenize."""
    from hypothesis import given, settings, strategies as st

    from kgqa.sparql import parser

    decls = ["PREFIX dbo: <http://dbpedia.org/ontology/> ", "PREFIX res: <http://dbpedia.org/resource/>\n",
             "prefix x: <http://x/>", "PREFIX : <http://e/> ", "PREFIX  dbo:<http://dbpedia.org/ontology/>"]
    tails = ["SELECT ?x { ?x dbo:p res:A }", " PREFIX", "PREFIX y: <rel", "# c\nPREFIX z: <http://z/> ASK {}",
             "", " ", "PREFIXdbo: <http://d/> SELECT * {}", "<http://x/>"]

    @settings(max_examples=examples, deadline=None)
    @given(st.lists(st.lists(st.sampled_from(decls), min_size=1, max_size=4).map("".join), min_size=1, max_size=4),
           st.lists(st.sampled_from(tails), max_size=3).map("".join))
    def check(heads, tail):
        for h in heads:  # seen first: later texts may extend or repeat them
            for text in (h + tail, h, h + " " + tail):
                toks, head, _ = parser._tokens(text)
                assert toks == tokenize(text)
                m = parser._PROLOGUE.match(text)
                assert head is parser._HEADS.get(m.group())

    check()
