"""Query normaliser: rewrites applied before execution so that real gold (and predicted)
queries written for Virtuoso / Wikidata's endpoint run on a standard SPARQL 1.1 engine.

:func:`normalise` applies, in this order, and records each rewrite as one line:

1. **Missing standard prefixes**: for every prefixed name whose prefix is used but not
   declared and is in :data:`STANDARD_PREFIXES`, a ``PREFIX p: <iri>`` line is prepended
   (``added PREFIX dbo: <http://dbpedia.org/ontology/>``). Declared prefixes are never changed;
   unknown undeclared prefixes are left alone (the engine reports them).
2. **Bare projection expressions** (Virtuoso dialect): in a SELECT clause, a function call or
   aggregate at the top level without ``( ... AS ?v)`` — ``SELECT COUNT(?x)``,
   ``SELECT DISTINCT COUNT(?x)``, ``SELECT ?a xsd:date(?d)`` — is wrapped as
   ``(COUNT(?x) AS ?count)``; a parenthesised expression without ``AS`` — ``SELECT (COUNT(?x))``
   — gets `` AS ?count``. The new variable is named after the function's local name in lower
   case (``count``, ``date``), suffixed ``1``, ``2``... if taken. ``DISTINCT`` stays where it
   was: Virtuoso's ``SELECT DISTINCT COUNT(?x)`` counts all solutions and then removes duplicate
   rows, which is exactly ``SELECT DISTINCT (COUNT(?x) AS ?count)`` (it is *not*
   ``COUNT(DISTINCT ?x)``).
3. **Unsupported casts**: ``xsd:int(...)``, ``xsd:long(...)`` and ``xsd:short(...)`` used as
   casts (a call, not ``^^xsd:int``), also written as full IRIs, become ``xsd:integer(...)``
   (pyoxigraph implements only the XPath cast functions of SPARQL 1.1; Virtuoso accepts these).

Rewrites work on the tokens of the one SPARQL lexer (:func:`kgqa.sparql.lexer.tokenize` with
``trivia=True``), computed once per query: text inside strings, IRIs and comments is never
touched, and every rewrite is an edit at token boundaries applied in one linear pass. A query
needing no rewrite comes back unchanged (same text).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgqa.sparql.lexer import Token, tokenize
from kgqa.sparql.prefixes import STANDARD_PREFIXES

XSD = "http://www.w3.org/2001/XMLSchema#"

UNSUPPORTED_CASTS = {"int": "integer", "long": "integer", "short": "integer"}

_TRIVIA = ("WS", "COMMENT")
_WORDS = ("KEYWORD", "PNAME", "A", "BOOLEAN")


@dataclass(frozen=True)
class Normalised:
    """The rewritten query ``text`` and one human-readable line per rewrite applied."""

    text: str
    rewrites: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.rewrites)


def normalise(query: str, prefixes: dict[str, str] | None = None) -> Normalised:
    """Apply the rewrites of the module docstring. ``prefixes`` replaces
    :data:`STANDARD_PREFIXES` as the table of injectable prefixes."""
    return normalise_tokens(query, tokenize(query, trivia=True), prefixes)


def normalise_tokens(query: str, toks: list[Token], prefixes: dict[str, str] | None = None) -> Normalised:
    """:func:`normalise` on the query's tokens (``tokenize(query, trivia=True)``) when the
    caller has them already (see :func:`kgqa.execute.sandbox.prepare`)."""
    table = STANDARD_PREFIXES if prefixes is None else prefixes
    rewrites: list[str] = []
    declared = _declared_prefixes(toks)
    casts = _fix_casts(query, toks, declared, rewrites)
    edits = [(t.start, t.end, new) for t, new in casts.values()]
    edits += _fix_projections(query, toks, casts, rewrites)
    text = _apply(query, edits)
    lines = []
    for p in _missing(toks, declared):
        if p in table:
            lines.append(f"PREFIX {p}: <{table[p]}>")
            rewrites.append(f"added PREFIX {p}: <{table[p]}>")
    if lines:
        text = "\n".join(lines) + "\n" + text
    return Normalised(text, rewrites)


# --------------------------------------------------------------------------- prefixes


def _declared_prefixes(toks: list[Token]) -> dict[str, str]:
    """``PREFIX p: <iri>`` declarations (case-insensitive keyword) as {prefix: iri}."""
    sig = [t for t in toks if t.kind not in _TRIVIA]
    out: dict[str, str] = {}
    for i in range(len(sig) - 2):
        t = sig[i]
        if t.kind == "KEYWORD" and t.value == "PREFIX" and sig[i + 1].kind == "PNAME" and sig[i + 2].kind == "IRIREF":
            out[sig[i + 1].value.split(":", 1)[0]] = sig[i + 2].value
    return out


def _missing(toks: list[Token], declared: dict[str, str]) -> list[str]:
    seen: dict[str, None] = {}
    for t in toks:
        if t.kind == "PNAME":
            p = t.value.split(":", 1)[0]
            if p not in declared:
                seen[p] = None
    return list(seen)


# --------------------------------------------------------------------------- casts


def _fix_casts(query: str, toks: list[Token], declared: dict[str, str],
               rewrites: list[str]) -> dict[int, tuple[Token, str]]:
    """Cast rewrites as {token index: (token, new text)}."""
    out: dict[int, tuple[Token, str]] = {}
    if "\\" not in query and not any(k in query for k in UNSUPPORTED_CASTS):
        return out  # no token can name one of the casts (IRIs are decoded only when they hold a backslash)
    for i, t in enumerate(toks):
        local = None
        if t.kind == "PNAME":
            p, _, loc = t.value.partition(":")
            ns = declared.get(p, STANDARD_PREFIXES.get(p) if p == "xsd" else None)
            if ns == XSD:
                local = loc
        elif t.kind == "IRIREF" and t.value.startswith(XSD):
            local = t.value[len(XSD):]
        if local not in UNSUPPORTED_CASTS:
            continue
        nxt = _next_sig(toks, i)
        prev = _prev_sig(toks, i)
        if nxt is None or not _opens_call(toks[nxt]) or (prev is not None and _is(toks[prev], "^^")):
            continue
        raw = query[t.start:t.end]
        new = (raw[: raw.index(":") + 1] + UNSUPPORTED_CASTS[local] if t.kind == "PNAME"
               else f"<{XSD}{UNSUPPORTED_CASTS[local]}>")
        out[i] = (t, new)
        rewrites.append(f"cast {raw}( -> {new}( (unsupported cast)")
    return out


# --------------------------------------------------------------------------- projections


def _fix_projections(query: str, toks: list[Token], casts: dict[int, tuple[Token, str]],
                     rewrites: list[str]) -> list[tuple[int, int, str]]:
    edits: list[tuple[int, int, str]] = []
    if "SELECT" not in query.upper():  # the lexer reads SELECT (also glued) only where the text has it
        return edits
    taken_vars: set[str] | None = None
    cast_edits = [(t.start, t.end, new) for t, new in casts.values()]

    def fresh(base: str) -> str:
        nonlocal taken_vars
        if taken_vars is None:
            taken_vars = {t.value.lower() for t in toks if t.kind == "VAR"}
        return _fresh(base, taken_vars)

    def shown(a: int, b: int) -> str:  # source text of [a, b) with the cast rewrites applied
        inner = [(s - a, e - a, new) for s, e, new in cast_edits if a <= s and e <= b]
        return _apply(query[a:b], inner)

    def word_text(k: int) -> str:
        return casts[k][1] if k in casts else query[toks[k].start:toks[k].end]

    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        if not (t.kind == "KEYWORD" and t.value == "SELECT"):
            i += 1
            continue
        j = i + 1
        while j < n:
            tj = toks[j]
            kind = tj.kind
            if kind in _TRIVIA:
                j += 1
                continue
            if (kind == "KEYWORD" and tj.value in ("WHERE", "FROM")) or _is(tj, "{"):
                break
            if (kind in _WORDS or _is_word_error(tj)) and not (kind == "KEYWORD" and tj.value in ("DISTINCT", "REDUCED")):
                k = _next_sig(toks, j)
                if k is not None and _opens_call(toks[k]):
                    close = k if toks[k].kind == "NIL" else _matching(toks, k)
                    if close is None:
                        break
                    name = fresh(_local_name(word_text(j), kind == "PNAME"))
                    call = shown(tj.start, toks[close].end)
                    edits.append((tj.start, tj.start, "("))
                    edits.append((toks[close].end, toks[close].end, f" AS ?{name})"))
                    rewrites.append(f"projection {call} -> ({call} AS ?{name})")
                    j = close + 1
                    continue
            if _is(tj, "("):
                close = _matching(toks, j)
                if close is None:
                    break
                inner = [x for x in range(j + 1, close) if toks[x].kind not in _TRIVIA]
                if not _has_top_level_as(toks, j, close) and inner:
                    first = inner[0]
                    fk = toks[first].kind
                    name = fresh(_local_name(word_text(first), fk == "PNAME")
                                 if fk in _WORDS or _is_word_error(toks[first]) else "value")
                    expr = shown(tj.start, toks[close].end)
                    edits.append((toks[close].start, toks[close].start, f" AS ?{name}"))
                    rewrites.append(f"projection {expr} -> {expr[:-1]} AS ?{name})")
                j = close + 1
                continue
            j += 1
        i = j
    return edits


def _has_top_level_as(toks: list[Token], open_i: int, close_i: int) -> bool:
    depth = 0
    for t in toks[open_i + 1:close_i]:
        if t.kind == "PUNCT":
            if t.value == "(":
                depth += 1
            elif t.value == ")":
                depth -= 1
        elif depth == 0 and t.kind == "KEYWORD" and t.value == "AS":
            return True
    return False


def _local_name(text: str, is_pname: bool) -> str:
    if is_pname:
        text = text.split(":", 1)[1] or text.split(":", 1)[0]
    name = "".join(c for c in text.lower() if c.isalnum() or c == "_")
    return name or "value"


def _fresh(base: str, taken: set[str]) -> str:
    name, k = base, 0
    while name.lower() in taken:
        k += 1
        name = f"{base}{k}"
    taken.add(name.lower())
    return name


# --------------------------------------------------------------------------- helpers


def _is(t: Token, punct: str) -> bool:
    return t.kind == "PUNCT" and t.value == punct


def _is_word_error(t: Token) -> bool:
    """An unknown bare word (the lexer's ERROR for ``foo``), e.g. a vendor function name."""
    return t.kind == "ERROR" and (t.value[:1].isalpha() or t.value[:1] == "_")


def _opens_call(t: Token) -> bool:
    return t.kind == "NIL" or (t.kind == "PUNCT" and t.value == "(")


def _next_sig(toks: list[Token], i: int) -> int | None:
    for k in range(i + 1, len(toks)):
        if toks[k].kind not in _TRIVIA:
            return k
    return None


def _prev_sig(toks: list[Token], i: int) -> int | None:
    for k in range(i - 1, -1, -1):
        if toks[k].kind not in _TRIVIA:
            return k
    return None


def _matching(toks: list[Token], open_i: int) -> int | None:
    depth = 0
    for k in range(open_i, len(toks)):
        t = toks[k]
        if t.kind == "PUNCT":
            if t.value == "(":
                depth += 1
            elif t.value == ")":
                depth -= 1
                if depth == 0:
                    return k
    return None


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with the (start, end, new) edits applied in one pass (edits do not overlap;
    insertions at one offset keep their order)."""
    if not edits:
        return text
    out: list[str] = []
    pos = 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        out.append(text[pos:start])
        out.append(new)
        pos = max(pos, end)
    out.append(text[pos:])
    return "".join(out)
