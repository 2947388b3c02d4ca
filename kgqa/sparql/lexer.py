r"""A fast, total SPARQL 1.1 tokenizer: one compiled regular expression, never raises.

:func:`tokenize` turns any text into a list of :class:`Token` s covering every non-blank,
non-comment character. Token kinds (``Token.kind``):

``IRIREF``
    ``<...>`` with no whitespace, quotes, braces, ``|``, ``^``, backtick or backslash inside.
    This resolves the ``<`` ambiguity the way SPARQL parsers do: ``?a<?b`` followed later by
    ``>`` on the same token run is an IRI only if nothing forbidden occurs in between, so
    ``?x < 5 && ?y > 3`` lexes as comparisons.
``PNAME``
    a prefixed name ``prefix:local`` or a bare namespace ``prefix:`` (``value`` is the text).
``VAR``
    ``?name`` or ``$name`` (``value`` is the name without the sigil).
``STRING``
    any of the four quote styles; ``value`` is the raw body between the quotes (escapes are
    *not* decoded here, see :func:`unescape_string`). A language tag and a ``^^`` datatype are
    **separate tokens** (``LANGTAG`` and ``PUNCT '^^'``); the analyzer attaches them.
``LANGTAG``
    ``@en``, ``@en-GB`` (``value`` without the ``@``).
``NUMBER``
    unsigned INTEGER / DECIMAL / DOUBLE (a sign is a separate ``PUNCT``).
``BOOLEAN``
    ``true`` / ``false`` (any case; ``value`` lower-cased).
``KEYWORD``
    a SPARQL keyword or built-in function name, any case; ``value`` is upper-cased. A word made
    of keywords glued together (``SELECTDISTINCT``, ``FILTERregex``) becomes one KEYWORD token
    per keyword, as pyoxigraph reads it.
``A``
    the lower-case keyword ``a`` (``rdf:type``).
``BNODE``
    ``_:label`` (``value`` is the label).
``ANON``
    ``[ ]`` (blank node; whitespace allowed inside).
``NIL``
    ``( )`` (whitespace allowed inside).
``PUNCT``
    ``{ } ( ) . , ; [ ] * / | ^ ^^ + - ? ! = != < > <= >= && ||``.
``ERROR``
    anything else: an unknown bare word, an unterminated string (to the end of its line), or a
    single unrecognised character.
``WS`` / ``COMMENT``
    whitespace and ``# ...`` comments (to the end of the line), only with ``trivia=True``.

Comments and whitespace are skipped unless ``trivia=True``; with it the lexer is lossless: the
tokens are contiguous and ``"".join(text[t.start:t.end] for t in tokens) == text``.
``Token.start`` / ``end`` are character offsets into the input.

Codepoint escapes (SPARQL 1.1 section 19.2). ``\uXXXX`` / ``\UXXXXXXXX`` "are processed before
parsing", so they may stand for any character, ``#`` and ``"`` included.
:func:`decode_codepoint_escapes` performs that replacement; the sandbox
(:mod:`kgqa.execute.sandbox`) checks every reading of a query (as written, and decoded) because
engines differ: pyoxigraph decodes them only inside IRIs and strings, Jena before parsing.
This lexer reads them as pyoxigraph does: an ``IRIREF`` may contain them (its ``value`` is
decoded), a string keeps them in its raw ``value`` (see :func:`unescape_string`), elsewhere a
backslash is an ``ERROR``.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

__all__ = ["Token", "tokenize", "KEYWORDS", "BUILTINS", "AGGREGATES", "unescape_string",
           "decode_codepoint_escapes", "has_codepoint_escapes", "text_of", "significant"]

AGGREGATES = frozenset("COUNT SUM MIN MAX AVG SAMPLE GROUP_CONCAT".split())

#: Built-in function names and their allowed argument counts (None: any number).
BUILTINS: dict[str, tuple[int, int | None]] = {
    **{n: (0, 0) for n in "RAND NOW UUID STRUUID".split()},
    **{
        n: (1, 1)
        for n in (
            "STR LANG DATATYPE IRI URI ABS CEIL FLOOR ROUND STRLEN UCASE LCASE ENCODE_FOR_URI "
            "YEAR MONTH DAY HOURS MINUTES SECONDS TIMEZONE TZ MD5 SHA1 SHA256 SHA384 SHA512 "
            "ISIRI ISURI ISBLANK ISLITERAL ISNUMERIC BOUND "
            # SPARQL 1.2 (accepted by pyoxigraph 0.5)
            "LANGDIR HASLANG HASLANGDIR ISTRIPLE SUBJECT PREDICATE OBJECT"
        ).split()
    },
    "BNODE": (0, 1),
    **{
        n: (2, 2)
        for n in "LANGMATCHES CONTAINS STRSTARTS STRENDS STRBEFORE STRAFTER STRLANG STRDT SAMETERM".split()
    },
    "REGEX": (2, 3),
    "SUBSTR": (2, 3),
    "REPLACE": (3, 4),
    "IF": (3, 3),
    "TRIPLE": (3, 3),
    "STRLANGDIR": (3, 3),
    "CONCAT": (0, None),
    "COALESCE": (0, None),
}

KEYWORDS = frozenset(
    (
        "SELECT CONSTRUCT DESCRIBE ASK BASE PREFIX FROM NAMED WHERE ORDER BY ASC DESC LIMIT "
        "OFFSET DISTINCT REDUCED OPTIONAL UNION MINUS GRAPH SERVICE SILENT FILTER BIND AS VALUES "
        "UNDEF GROUP HAVING EXISTS NOT IN SEPARATOR LOAD CLEAR DROP CREATE ADD MOVE COPY TO INTO "
        "INSERT DELETE DATA WITH USING DEFAULT ALL"
    ).split()
) | AGGREGATES | frozenset(BUILTINS)


class Token(NamedTuple):
    kind: str
    value: str
    start: int
    end: int

    def __repr__(self) -> str:  # compact, for error messages and debugging
        return f"{self.kind}({self.value!r}@{self.start})"


_PN_CHARS_BASE = (
    "A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D"
    "\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\U00010000-\U000EFFFF"
)
_PN_CHARS_U = _PN_CHARS_BASE + "_"
_PN_CHARS = _PN_CHARS_U + r"\-0-9\u00B7\u0300-\u036F\u203F-\u2040"
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_PN_PREFIX = rf"[{_PN_CHARS_BASE}](?:[{_PN_CHARS}.]*[{_PN_CHARS}])?"
_PN_LOCAL = (
    rf"(?:[{_PN_CHARS_U}:0-9]|{_PLX})"
    rf"(?:(?:[{_PN_CHARS}.:]|{_PLX})*(?:[{_PN_CHARS}:]|{_PLX}))?"
)
_VARNAME = rf"[{_PN_CHARS_U}0-9][{_PN_CHARS_U}0-9\u00B7\u0300-\u036F\u203F-\u2040]*"
_EXP = r"[eE][+-]?[0-9]+"

_SPEC = [
    ("WS", r"\s+"),
    ("COMMENT", r"#[^\n\r]*"),
    ("IRIREF", r"<(?:[^<>\"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>"),
    ("STRING_LONG2", r'"""(?:(?:"|"")?(?:[^"\\]|\\.))*"""'),
    ("STRING_LONG1", r"'''(?:(?:'|'')?(?:[^'\\]|\\.))*'''"),
    ("STRING2", r'"(?:[^"\\\n\r]|\\.)*"'),
    ("STRING1", r"'(?:[^'\\\n\r]|\\.)*'"),
    ("UNTERMINATED", r"(?:\"\"\"|'''|[\"'])[^\n\r]*"),
    ("LANGTAG", r"@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*(?:--[a-zA-Z]+)?"),
    ("NUMBER", rf"[0-9]+\.[0-9]*{_EXP}|\.?[0-9]+{_EXP}|[0-9]*\.[0-9]+|[0-9]+"),
    ("VAR", rf"[?$]{_VARNAME}"),
    ("BNODE", rf"_:[{_PN_CHARS_U}0-9](?:[{_PN_CHARS}.]*[{_PN_CHARS}])?"),
    ("PNAME", rf"(?:{_PN_PREFIX})?:(?:{_PN_LOCAL})?"),
    ("NAME", r"[A-Za-z_][A-Za-z0-9_]*"),
    ("ANON", r"\[[\x20\t\r\n]*\]"),
    ("NIL", r"\([\x20\t\r\n]*\)"),
    ("PUNCT", r"\^\^|&&|\|\||!=|<=|>=|[{}()\[\].,;*/|^+\-?!=<>]"),
    ("ERROR", r"."),
]
# _SPEC is the token grammar as written (and the reference the tests compare against); the
# tokenizer runs an equivalent, faster expression built below. Python's regex engine skips an
# alternative cheaply when its first character cannot match, but only when the alternative
# starts with a literal or a character set, not with a group: so each alternative reads its
# first character, then an empty named group marks the kind (``m.lastgroup``), and group 1
# (the blanks and comments skipped before the token) gives the token's start. Alternatives
# that may start with the same character keep _SPEC's order; repetitions are unrolled and
# possessive (``[^"]*+(?:\\.[^"]*+)*+``) instead of one alternation per character; a bare word
# that cannot be a prefixed name (``SELECT``) is tried before the prefixed-name pattern.
# Otherwise the most frequent kinds in the shared gold queries come first.
# The name classes are written negated: ``[^C]`` with C the complement of the class (the code
# points outside it, about 11,000 of the BMP's instead of 54,000). Compiling a class costs time
# in proportion to the BMP code points it lists (the ``re`` compiler marks them one by one), so
# the expression below compiles in about a sixth of the time (about 10 instead of 60 ms a
# process that reads a query), and matches the same characters.
_MAX_CODEPOINT = 0x10FFFF


def _ranges(body: str) -> list[tuple[int, int]]:
    """The code point ranges of a class body written as above: characters, ``\\uXXXX`` and
    ``\\UXXXXXXXX`` escapes, ``\\-`` (a hyphen) and ``X-Y`` ranges; merged and sorted."""
    chars: list[tuple[str, bool]] = []  # (character, an unescaped hyphen)
    i = 0
    while i < len(body):
        if body[i] != "\\":
            chars.append((body[i], body[i] == "-"))
            i += 1
            continue
        width = {"u": 4, "U": 8}.get(body[i + 1], 0)
        chars.append((chr(int(body[i + 2:i + 2 + width], 16)) if width else body[i + 1], False))
        i += 2 + width
    out: list[tuple[int, int]] = []
    k = 0
    while k < len(chars):
        if k + 2 < len(chars) and chars[k + 1][1]:
            out.append((ord(chars[k][0]), ord(chars[k + 2][0])))
            k += 3
        else:
            out.append((ord(chars[k][0]), ord(chars[k][0])))
            k += 1
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(out):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def _negated(body: str) -> str:
    """``[body]`` written as ``[^...]``: the same characters, a cheaper class to compile."""
    gaps, nxt = [], 0
    for lo, hi in _ranges(body):
        if lo > nxt:
            gaps.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= _MAX_CODEPOINT:
        gaps.append((nxt, _MAX_CODEPOINT))

    def esc(c: int) -> str:
        return f"\\U{c:08X}" if c > 0xFFFF else f"\\u{c:04X}"

    return "[^" + "".join(esc(lo) if lo == hi else f"{esc(lo)}-{esc(hi)}" for lo, hi in gaps) + "]"


_PN_BASE_CLASS = _negated(_PN_CHARS_BASE)
_PN_U09_CLASS = _negated(_PN_CHARS_U + "0-9")
_PN_CLASS = _negated(_PN_CHARS)
_PN_COLON_CLASS = _negated(_PN_CHARS + ":")
_NOT_NAME_NEXT = _negated(_PN_CHARS + ".:")
_PN_U09_COLON_CLASS = _negated(_PN_CHARS_U + ":0-9")
_VAR_REST_CLASS = _negated(_PN_CHARS_U + "0-9\u00B7\u0300-\u036F\u203F-\u2040")
_IRI_CHAR = r"[^<>\"{}|^`\\\x00-\x20]"
_UCHAR = r"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
_PN_PREFIX_REST = rf"(?:{_PN_CLASS}++|\.++(?={_PN_CLASS}))*+"
_PN_LOCAL_FAST = (
    rf"(?:{_PN_U09_COLON_CLASS}|{_PLX})"
    rf"(?:{_PN_COLON_CLASS}++|{_PLX}|\.++(?={_PN_COLON_CLASS}|{_PLX}))*+"
)
# (group name, expression with "{K}" where the kind's empty group goes, right after the first
# character); the group name maps to the token kind in _GROUP_KIND
_FAST = [
    ("NAME", rf"[A-Za-z_]{{K}}[A-Za-z0-9_]*+(?!{_NOT_NAME_NEXT})"),  # cannot start a PNAME
    ("VAR", rf"[?$]{{K}}{_PN_U09_CLASS}{_VAR_REST_CLASS}*+"),
    ("PNAME", rf"{_PN_BASE_CLASS}{{K}}{_PN_PREFIX_REST}:(?:{_PN_LOCAL_FAST})?"),
    ("PNAME_EMPTY", rf":{{K}}(?:{_PN_LOCAL_FAST})?"),
    ("PUNCT_LBRACE", r"\{{K}"),  # braces have groups of their own: tokenize_from matches them
    ("PUNCT_RBRACE", r"\}{K}"),
    ("NUMBER_DOT", rf"\.{{K}}(?:[0-9]+{_EXP}|[0-9]+)"),
    ("NIL", r"\({K}[\x20\t\r\n]*\)"),
    ("ANON", r"\[{K}[\x20\t\r\n]*\]"),
    ("PUNCT", r"[(\[.?),;*/=+\-\]]{K}"),  # after what '(', '[', '.' and '?' may start
    ("IRIREF", rf"<{{K}}{_IRI_CHAR}*+(?:(?:{_UCHAR}){_IRI_CHAR}*+)*+>"),
    ("NUMBER", rf"[0-9]{{K}}(?:[0-9]*\.[0-9]*{_EXP}|[0-9]*{_EXP}|[0-9]*\.[0-9]+|[0-9]*)"),
    # the quote read decides the branch (lookbehind): each branch is _SPEC's pattern
    ("STRING_LONG", r"""["']{K}(?:(?<=")""(?:(?:"|"")?(?:[^"\\]|\\.))*\"""|(?<=')''(?:(?:'|'')?(?:[^'\\]|\\.))*''')"""),
    ("STRING_SHORT",
     r"""["']{K}(?:(?<=")[^"\\\n\r]*+(?:\\.[^"\\\n\r]*+)*+"|(?<=')[^'\\\n\r]*+(?:\\.[^'\\\n\r]*+)*+')"""),
    ("UNTERMINATED", r"[\"']{K}[^\n\r]*+"),
    ("LANGTAG", r"@{K}[a-zA-Z]+(?:-[a-zA-Z0-9]+)*(?:--[a-zA-Z]+)?"),
    ("BNODE", rf"_{{K}}:{_PN_U09_CLASS}(?:{_PN_CLASS}++|\.++(?={_PN_CLASS}))*+"),
    ("NAME_ANY", r"[A-Za-z_]{K}[A-Za-z0-9_]*"),  # _SPEC's NAME, after PNAME and BNODE failed
    # '^' '^^' '|' '||' '!' '!=' '<' '<=' '>' '>=' '&&' (a lone '&' is an ERROR): one group
    ("PUNCT_OP", r"[\^|!<>&]{K}(?:(?<=\^)\^?|(?<=\|)\|?|(?<=[!<>])=?|(?<=&)&)"),
    ("ERROR", r".{K}"),
]
_GROUP_KIND = {name: name for name, _ in _SPEC} | {
    "PNAME_EMPTY": "PNAME", "NUMBER_DOT": "NUMBER", "NAME_ANY": "NAME", "PUNCT_OP": "PUNCT",
    "PUNCT_LBRACE": "PUNCT", "PUNCT_RBRACE": "PUNCT", "STRING_LONG": "STRING", "STRING_SHORT": "STRING",
    "END": "END",
}


def _alternatives(spec: list[tuple[str, str]]) -> str:
    return "|".join(rx.replace("{K}", f"(?P<{name}>)") for name, rx in spec)


# Each match skips leading blanks and comments (group 1), then reads one token. Compiling the
# two expressions costs about 0.1 s of CPU (the Unicode ranges of the names), so it is done on first
# use rather than at import: importing kgqa.sparql stays cheap for the CLI and answers-only use.
@functools.cache
def _master(trivia: bool) -> re.Pattern[str]:
    """The token expression; with ``trivia``, the lossless variant where whitespace and
    comments are tokens of their own (group 1 is empty)."""
    if trivia:
        return re.compile(
            r"()(?:" + _alternatives([("WS", r"\s{K}\s*+"), ("COMMENT", r"#{K}[^\n\r]*+"), *_FAST]) + ")",
            re.DOTALL,
        )
    return re.compile(
        r"(\s*+(?:#[^\n\r]*+\s*+)*+)(?:" + _alternatives(_FAST) + r"|\Z(?P<END>))", re.DOTALL
    )


#: token kinds whose value is their text, by group name
_VERBATIM = {g: k for g, k in _GROUP_KIND.items()
             if k in ("PUNCT", "PNAME", "NUMBER", "WS", "COMMENT", "ANON", "NIL", "ERROR")}
_STRING_KINDS = {"STRING_LONG": 3, "STRING_SHORT": 1}


def _word_token(word: str) -> tuple[str, str] | None:
    """``(kind, value)`` of a bare word that is one token (``a``, a keyword, a boolean), else None."""
    up = word.upper()
    if word == "a":
        return ("A", "a")
    if up in KEYWORDS:
        return ("KEYWORD", up)
    if up == "TRUE" or up == "FALSE":
        return ("BOOLEAN", word.lower())
    return None


# the spellings of keywords met in practice, looked up before any case folding
_WORDS: dict[str, tuple[str, str] | None] = {
    w: _word_token(w)
    for kw in KEYWORDS | {"TRUE", "FALSE", "A"}
    for w in (kw, kw.lower(), kw.capitalize())
}


def tokenize(text: str, trivia: bool = False) -> list[Token]:
    """All tokens of ``text`` in order. Whitespace and comments are dropped unless ``trivia``
    (then they are ``WS`` / ``COMMENT`` tokens and the token spans cover ``text`` exactly).
    Total: never raises on a ``str``; any other input is first converted with ``str()``."""
    if not isinstance(text, str):
        text = str(text)
    return tokenize_from(text, trivia, 0)


def tokenize_from(text: str, trivia: bool, pos: int, braces: dict[int, int] | None = None,
                  base: int = 0, plain: bool = False) -> list[Token]:
    """The tokens of ``text`` from offset ``pos`` on, which must be where a token (or, without
    ``trivia``, blanks before one) begins: then they are the tail of ``tokenize(text)``.

    With ``braces`` (a dict), each ``{`` token's index is mapped there to the index of the
    ``}`` token that closes it (innermost first; an unclosed ``{`` is left out, an unopened
    ``}`` ignored), indices counted from ``base`` for the first token returned. With
    ``plain``, each token is a plain tuple ``(kind, value, start, end)`` equal to its
    :class:`Token` (the parser's own tokens: a Token costs a second object and a call)."""
    out: list[Token] = []
    opened: list[int] = []  # indices of the '{' not closed yet
    append = out.append
    verbatim = _VERBATIM
    words = _WORDS
    new = tuple.__new__  # Token(...) without the namedtuple's Python-level __new__
    T = Token
    for m in _master(trivia).finditer(text, pos):
        g = m.lastgroup
        s = m.end(1)
        e = m.end()
        if g == "PNAME" or g == "PUNCT":  # the most frequent kinds first, without a look-up
            tok = (g, text[s:e], s, e)
        elif g == "VAR":
            tok = (g, text[s + 1 : e], s, e)
        elif g == "NAME" or g == "NAME_ANY":
            word = text[s:e]
            kv = words.get(word, False)
            if kv is False:
                kv = _word_token(word)
            if kv is not None:
                tok = (kv[0], kv[1], s, e)
            else:
                parts = _split_keywords(word.upper()) if len(word) <= 64 else None
                if parts is None:
                    tok = ("ERROR", word, s, e)
                else:
                    for kw, off in parts:
                        tok = ("KEYWORD", kw, s + off, s + off + len(kw))
                        append(tok if plain else new(T, tok))
                    continue
        elif g == "PUNCT_LBRACE":
            if braces is not None:
                opened.append(base + len(out))
            tok = ("PUNCT", "{", s, e)
        elif g == "PUNCT_RBRACE":
            if braces is not None and opened:
                braces[opened.pop()] = base + len(out)
            tok = ("PUNCT", "}", s, e)
        elif g == "IRIREF":
            body = text[s + 1 : e - 1]
            tok = (g, decode_codepoint_escapes(body) if "\\" in body else body, s, e)
        elif g in verbatim:
            tok = (verbatim[g], text[s:e], s, e)
        elif g in _STRING_KINDS:
            q = _STRING_KINDS[g]
            tok = ("STRING", text[s + q : e - q], s, e)
        elif g == "LANGTAG" or g == "BNODE":
            tok = (g, text[s + (1 if g == "LANGTAG" else 2) : e], s, e)
        elif g == "UNTERMINATED":
            tok = ("ERROR", text[s:e], s, e)
        else:  # END: only blanks/comments were left
            break
        append(tok if plain else new(T, tok))
    return out


def significant(tokens: list[Token]) -> list[Token]:
    """``tokens`` without ``WS`` and ``COMMENT`` tokens."""
    return [t for t in tokens if t.kind != "WS" and t.kind != "COMMENT"]


def text_of(text: str, token: Token) -> str:
    """The source text of ``token`` (its span in ``text``)."""
    return text[token.start : token.end]


_CODEPOINT = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def has_codepoint_escapes(text: str) -> bool:
    """Whether ``text`` contains a ``\\uXXXX`` or ``\\UXXXXXXXX`` codepoint escape."""
    return "\\" in text and _CODEPOINT.search(text) is not None


def _codepoint(m: re.Match) -> str:
    try:
        return chr(int(m.group(1) or m.group(2), 16))
    except (ValueError, OverflowError):  # beyond U+10FFFF: not a character, kept as written
        return m.group(0)


def decode_codepoint_escapes(text: str) -> str:
    """``text`` with every ``\\uXXXX`` / ``\\UXXXXXXXX`` replaced by its character, in one
    left-to-right pass, as SPARQL 1.1 section 19.2 prescribes before parsing. An escape beyond
    U+10FFFF is kept as written. Linear in ``len(text)``."""
    if "\\" not in text:
        return text
    return _CODEPOINT.sub(_codepoint, text)


_KW_BY_FIRST: dict[str, list[str]] = {}
for _kw in sorted(KEYWORDS, key=len, reverse=True):
    _KW_BY_FIRST.setdefault(_kw[0], []).append(_kw)


def _split_keywords(word: str, start: int = 0) -> list[tuple[str, int]] | None:
    """Split an upper-cased word into keywords glued together (``SELECTDISTINCT``,
    ``FILTERCONTAINS``), longest first with backtracking; None if it is not such a word.
    pyoxigraph accepts glued keywords, so the analyzer must not call them invalid."""
    if start == len(word):
        return []
    for kw in _KW_BY_FIRST.get(word[start], ()):
        if word.startswith(kw, start):
            rest = _split_keywords(word, start + len(kw))
            if rest is not None:
                return [(kw, start)] + rest
    return None


_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.DOTALL)


def unescape_string(body: str) -> tuple[str, str | None]:
    """Decode the escapes of a string token's body. Returns ``(value, error)``; ``error`` names
    the first invalid escape (``\\x``), in which case the escape is kept verbatim."""
    if "\\" not in body:
        return body, None
    error: list[str] = []

    def repl(m: re.Match) -> str:
        g = m.group(1)
        if len(g) > 1:
            try:
                return chr(int(g[1:], 16))
            except (ValueError, OverflowError):
                error.append(m.group(0))
                return m.group(0)
        if g in _ECHAR:
            return _ECHAR[g]
        error.append(m.group(0))
        return m.group(0)

    value = _ESCAPE.sub(repl, body)
    return value, (f"invalid escape {error[0]!r} in string" if error else None)
