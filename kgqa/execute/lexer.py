"""A light, tolerant SPARQL token scan (not a parser) for the sandbox and the normaliser.

It splits a query into tokens that never cross a string, an IRI or a comment, so keyword
checks and rewrites cannot be fooled by ``"delete me"``, ``<http://x/LOAD>``, ``# DROP`` or
``ex:insert``. Unknown characters become single-character ``punct`` tokens; the scan never
fails. Concatenating every token's ``text`` gives back the input exactly.

Token kinds: ``ws``, ``comment``, ``string`` (with an optional ``@lang`` / ``^^`` left as
separate tokens), ``iri`` (``<...>``), ``var`` (``?x``/``$x``), ``pname`` (``pre:local``,
``pre:``, ``:local``), ``bnode`` (``_:b``), ``lang`` (``@en``), ``number``, ``word``
(keywords, function names, ``a``, ``true``), ``punct``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PN_CHARS_BASE = r"A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D" \
                 r"\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD"
_PN_CHARS = _PN_CHARS_BASE + r"_0-9\-\u00B7\u0300-\u036F\u203F-\u2040"
_PREFIX = rf"[{_PN_CHARS_BASE}](?:[{_PN_CHARS}.]*[{_PN_CHARS}])?"
_LOCAL_CHAR = rf"(?:[{_PN_CHARS}:]|%[0-9A-Fa-f]{{2}}|\\[_~.\-!$&'()*+,;=/?#@%])"
_LOCAL = rf"(?:{_LOCAL_CHAR}(?:(?:{_LOCAL_CHAR}|\.)*{_LOCAL_CHAR})?)"

_TOKEN = re.compile(
    "|".join(
        [
            r"(?P<ws>\s+)",
            r"(?P<comment>\#[^\n\r]*)",
            r"(?P<string>'''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z)|\"\"\"(?:[^\"\\]|\\.|\"(?!\"\"))*(?:\"\"\"|\Z)"
            r"|'(?:[^'\\\n\r]|\\.)*'?|\"(?:[^\"\\\n\r]|\\.)*\"?)",
            r"(?P<iri><[^<>\"{}|^`\\\x00-\x20]*>)",
            r"(?P<var>[?$][A-Za-z0-9_\u00B7\u00C0-\uFFFD]+)",
            r"(?P<bnode>_:[A-Za-z0-9_\-.]+)",
            rf"(?P<pname>(?:{_PREFIX})?:{_LOCAL}?)",
            r"(?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)",
            r"(?P<number>[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))",
            rf"(?P<word>[{_PN_CHARS_BASE}_][{_PN_CHARS}]*)",
            r"(?P<punct>\^\^|&&|\|\||!=|<=|>=|.)",
        ]
    ),
    re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    @property
    def upper(self) -> str:
        return self.text.upper()


def tokenize(query: str) -> list[Token]:
    """All tokens of ``query`` in order (whitespace and comments included)."""
    out: list[Token] = []
    pos = 0
    n = len(query)
    while pos < n:
        m = _TOKEN.match(query, pos)
        if m is None or m.end() == pos:  # pragma: no cover - the last alternative matches any char
            out.append(Token("punct", query[pos], pos))
            pos += 1
            continue
        out.append(Token(m.lastgroup or "punct", m.group(), pos))
        pos = m.end()
    return out


def significant(tokens: list[Token]) -> list[Token]:
    """Tokens without whitespace and comments."""
    return [t for t in tokens if t.kind not in ("ws", "comment")]


def prefix_of(token: Token) -> str | None:
    """The prefix of a ``pname`` token (``""`` for ``:local``), else None."""
    if token.kind != "pname":
        return None
    return token.text.split(":", 1)[0]


def declared_prefixes(tokens: list[Token]) -> dict[str, str]:
    """``PREFIX p: <iri>`` declarations (case-insensitive keyword) as {prefix: iri}."""
    sig = significant(tokens)
    out: dict[str, str] = {}
    for i, t in enumerate(sig[:-2]):
        if t.kind == "word" and t.upper == "PREFIX" and sig[i + 1].kind == "pname" and sig[i + 2].kind == "iri":
            out[sig[i + 1].text[:-1] if sig[i + 1].text.endswith(":") else sig[i + 1].text.split(":")[0]] = \
                sig[i + 2].text[1:-1]
    return out
