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

Rewrites work on tokens (:mod:`kgqa.execute.lexer`), so text inside strings, IRIs and
comments is never touched. A query needing no rewrite comes back unchanged (same text).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgqa.execute.lexer import Token, declared_prefixes, prefix_of, tokenize

XSD = "http://www.w3.org/2001/XMLSchema#"

from kgqa.sparql.prefixes import STANDARD_PREFIXES  # noqa: E402  (the one prefix table)

UNSUPPORTED_CASTS = {"int": "integer", "long": "integer", "short": "integer"}

_CLAUSE_END = {"WHERE", "FROM", "{"}


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
    table = STANDARD_PREFIXES if prefixes is None else prefixes
    rewrites: list[str] = []
    text = _fix_casts(query, rewrites)
    text = _fix_projections(text, rewrites)
    text = _add_prefixes(text, table, rewrites)
    return Normalised(text, rewrites)


# --------------------------------------------------------------------------- prefixes


def missing_prefixes(query: str) -> list[str]:
    """Prefixes used in prefixed names but not declared, in order of first use."""
    toks = tokenize(query)
    declared = declared_prefixes(toks)
    seen: list[str] = []
    for t in toks:
        p = prefix_of(t)
        if p is not None and p not in declared and p not in seen:
            seen.append(p)
    return seen


def _add_prefixes(query: str, table: dict[str, str], rewrites: list[str]) -> str:
    lines = []
    for p in missing_prefixes(query):
        if p in table:
            lines.append(f"PREFIX {p}: <{table[p]}>")
            rewrites.append(f"added PREFIX {p}: <{table[p]}>")
    if not lines:
        return query
    return "\n".join(lines) + "\n" + query


# --------------------------------------------------------------------------- casts


def _fix_casts(query: str, rewrites: list[str]) -> str:
    toks = tokenize(query)
    declared = declared_prefixes(toks)
    edits: list[tuple[Token, str]] = []
    for i, t in enumerate(toks):
        local = None
        if t.kind == "pname":
            p, _, loc = t.text.partition(":")
            ns = declared.get(p, STANDARD_PREFIXES.get(p) if p == "xsd" else None)
            if ns == XSD:
                local = loc
        elif t.kind == "iri" and t.text[1:-1].startswith(XSD):
            local = t.text[1 + len(XSD):-1]
        if local not in UNSUPPORTED_CASTS:
            continue
        nxt = _next_sig(toks, i)
        prev = _prev_sig(toks, i)
        if nxt is None or toks[nxt].text != "(" or (prev is not None and toks[prev].text == "^^"):
            continue
        new = (t.text[: t.text.index(":") + 1] + UNSUPPORTED_CASTS[local] if t.kind == "pname"
               else f"<{XSD}{UNSUPPORTED_CASTS[local]}>")
        edits.append((t, new))
        rewrites.append(f"cast {t.text}( -> {new}( (unsupported cast)")
    return _apply(query, [(t.start, t.end, new) for t, new in edits])


# --------------------------------------------------------------------------- projections


def _fix_projections(query: str, rewrites: list[str]) -> str:
    toks = tokenize(query)
    taken = {t.text[1:].lower() for t in toks if t.kind == "var"}
    edits: list[tuple[int, int, str]] = []
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        if not (t.kind == "word" and t.upper == "SELECT"):
            i += 1
            continue
        j = i + 1
        while j < n:
            tj = toks[j]
            if tj.kind in ("ws", "comment"):
                j += 1
                continue
            if (tj.kind == "word" and tj.upper in _CLAUSE_END) or tj.text == "{":
                break
            if tj.kind in ("word", "pname") and tj.upper not in ("DISTINCT", "REDUCED"):
                k = _next_sig(toks, j)
                if k is not None and toks[k].text == "(":
                    close = _matching(toks, k)
                    if close is None:
                        break
                    name = _fresh(_local_name(tj), taken)
                    call = query[tj.start:toks[close].end]
                    edits.append((tj.start, toks[close].end, f"({call} AS ?{name})"))
                    rewrites.append(f"projection {call} -> ({call} AS ?{name})")
                    j = close + 1
                    continue
            if tj.text == "(":
                close = _matching(toks, j)
                if close is None:
                    break
                inner = [x for x in toks[j + 1:close] if x.kind not in ("ws", "comment")]
                if not _has_top_level_as(toks, j, close) and inner:
                    first = inner[0]
                    name = _fresh(_local_name(first) if first.kind in ("word", "pname") else "value", taken)
                    expr = query[toks[j].start:toks[close].end]
                    edits.append((toks[close].start, toks[close].start, f" AS ?{name}"))
                    rewrites.append(f"projection {expr} -> {expr[:-1]} AS ?{name})")
                j = close + 1
                continue
            j += 1
        i = j
    return _apply(query, edits)


def _has_top_level_as(toks: list[Token], open_i: int, close_i: int) -> bool:
    depth = 0
    for t in toks[open_i + 1:close_i]:
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif depth == 0 and t.kind == "word" and t.upper == "AS":
            return True
    return False


def _local_name(tok: Token) -> str:
    text = tok.text
    if tok.kind == "pname":
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


def _next_sig(toks: list[Token], i: int) -> int | None:
    for k in range(i + 1, len(toks)):
        if toks[k].kind not in ("ws", "comment"):
            return k
    return None


def _prev_sig(toks: list[Token], i: int) -> int | None:
    for k in range(i - 1, -1, -1):
        if toks[k].kind not in ("ws", "comment"):
            return k
    return None


def _matching(toks: list[Token], open_i: int) -> int | None:
    depth = 0
    for k in range(open_i, len(toks)):
        if toks[k].text == "(":
            depth += 1
        elif toks[k].text == ")":
            depth -= 1
            if depth == 0:
                return k
    return None


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text
