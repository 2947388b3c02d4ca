"""Tokens shared by the reference systems: SPARQL queries and annotated questions.

- **Query tokens** (:func:`query_tokens`): the query without its ``PREFIX`` / ``BASE``
  declarations, split into IRIs, prefixed names, literals (with language tag or datatype),
  variables, numbers, words and single punctuation marks; each IRI or prefixed name is written
  as :func:`kgqa.make.annotate.element_text` writes it (``dbr:Stanley_Kubrick``), so the KB
  tokens of a query are the same strings as the KB elements of its tagged question. Keywords
  are upper-cased (``select`` = ``SELECT``).
- **KB tokens** (:func:`is_kb`): IRIs outside ``rdf:``, ``rdfs:``, ``owl:``, ``xsd:``, and
  literals: the tokens the copy mechanism copies and the retrieval baseline re-grounds.
- :func:`detokenize` joins tokens with blanks, prefixed names written as full IRIs.
- **Question tokens** (:func:`question_tokens`): the KB element texts of an annotated question
  (from ``metadata.mentions`` when present, else anything written like an element) as single
  tokens, the rest lower-cased words and punctuation.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from kgqa.make.annotate import element_text
from kgqa.model import IRI, Item
from kgqa.sparql.prefixes import STANDARD_PREFIXES

_DECL = re.compile(r"^\s*(?:PREFIX\s+([A-Za-z][\w.-]*)?:\s*<([^>]*)>|BASE\s+<[^>]*>)", re.IGNORECASE)
_TOKEN = re.compile(r"""
    <[^<>\s"{}|^`\\]*>                                   # IRI
  | "(?:[^"\\]|\\.)*"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^(?:<[^<>\s]*>|[A-Za-z][\w.-]*:[\w%-]+))?
  | '(?:[^'\\]|\\.)*'(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^(?:<[^<>\s]*>|[A-Za-z][\w.-]*:[\w%-]+))?
  | [?$]\w+                                              # variable
  | [A-Za-z][\w-]*(?:\.[\w-]+)*:(?:[\w:%-]|\.(?=[\w:%-]))* # prefixed name
  | :(?:[\w:%-]|\.(?=[\w:%-]))+                          # default-prefix name
  | \d+(?:\.\d+)?(?:[eE][+-]?\d+)?                       # number
  | \w+                                                  # keyword / word
  | \^\^|&&|\|\||!=|<=|>=|\S                             # operators, punctuation
""", re.VERBOSE)
_PLUMBING = ("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "http://www.w3.org/2000/01/rdf-schema#",
             "http://www.w3.org/2002/07/owl#", "http://www.w3.org/2001/XMLSchema#")
_QWORD = re.compile(r"<[^<>\s]+>|\"[^\"]*\"(?:@[\w-]+|\^\^\S+)?|[A-Za-z][\w-]*:[^\s,;!?()]*[^\s,;!?().]|\w+|[^\w\s]")

__all__ = ["query_tokens", "detokenize", "is_kb", "question_tokens", "split_declarations", "namespace",
           "question_text", "dataset_checksum", "query_namespaces"]


def split_declarations(sparql: str) -> tuple[dict[str, str], str]:
    """``(prefixes, body)``: the ``PREFIX`` declarations at the start of a query and the rest."""
    prefixes: dict[str, str] = {}
    rest = sparql
    while True:
        m = _DECL.match(rest)
        if not m:
            return prefixes, rest.strip()
        if m.group(2) is not None:
            prefixes[m.group(1) or ""] = m.group(2)
        rest = rest[m.end():]


def _expand(token: str, prefixes: dict[str, str]) -> str | None:
    pfx, _, local = token.partition(":")
    ns = prefixes.get(pfx, STANDARD_PREFIXES.get(pfx))
    return None if ns is None else ns + local


def query_tokens(sparql: str, prefixes: dict[str, str] | None = None) -> list[str]:
    """The query's tokens (module docstring); ``prefixes`` add to the query's own declarations."""
    declared, body = split_declarations(sparql)
    table = {**(prefixes or {}), **declared}
    out: list[str] = []
    for m in _TOKEN.finditer(body):
        t = m.group(0)
        if t.startswith("<") and t.endswith(">") and len(t) > 1 and t not in ("<=", ">="):
            out.append(element_text(IRI(t[1:-1]), table))
        elif t[0].isalpha() and ":" in t and not t.startswith(("http:", "https:")):
            full = _expand(t, table)
            out.append(element_text(IRI(full), table) if full else t)
        elif t[0] in "\"'" and "^^" in t:
            lex, _, dt = t.rpartition("^^")
            if dt.startswith("<"):
                dt = element_text(IRI(dt[1:-1]), table)
            out.append(f"{lex}^^{dt}")
        elif t.isalpha():
            out.append(t.upper() if t.upper() in _KEYWORDS else t)
        else:
            out.append(t)
    return out


_KEYWORDS = frozenset("""SELECT DISTINCT REDUCED WHERE FILTER OPTIONAL UNION MINUS GRAPH SERVICE BIND VALUES AS ASK
CONSTRUCT DESCRIBE ORDER BY ASC DESC LIMIT OFFSET GROUP HAVING COUNT SUM MIN MAX AVG SAMPLE GROUP_CONCAT NOT EXISTS IN
STR LANG LANGMATCHES DATATYPE BOUND ISIRI ISURI ISLITERAL ISBLANK REGEX CONTAINS STRSTARTS STRENDS YEAR MONTH DAY
LCASE UCASE NOW IF COALESCE""".split())


def is_kb(token: str) -> bool:
    """Is a query token a KB element (module docstring)?"""
    if token.startswith('"') or token.startswith("'"):
        return True
    if token.startswith("<") and token.endswith(">") and len(token) > 2:
        return not token[1:-1].startswith(_PLUMBING)
    if ":" in token and token[0].isalpha() and not token.startswith("?"):
        pfx = token.split(":", 1)[0]
        ns = STANDARD_PREFIXES.get(pfx)
        return not (ns and ns.startswith(_PLUMBING))
    return False


def detokenize(tokens: Sequence[str], prefixes: dict[str, str] | None = None) -> str:
    """The query text of tokens, joined by blanks, every prefixed name written as a full IRI
    (``prefixes``, then :data:`STANDARD_PREFIXES`; an unknown prefix is kept as it is), so the
    text needs no ``PREFIX`` lines and compares token for token with full-IRI gold queries."""
    table = {**STANDARD_PREFIXES, **(prefixes or {})}

    def full(t: str) -> str:
        if t and t[0].isalpha() and ":" in t:
            pfx, _, local = t.partition(":")
            if pfx in table:
                return f"<{table[pfx]}{local}>"
        return t

    out = []
    for t in tokens:
        if t.startswith(("\"", "'")) and "^^" in t:
            lex, _, dt = t.rpartition("^^")
            out.append(f"{lex}^^{full(dt)}")
        else:
            out.append(full(t))
    return " ".join(out)


def question_text(item: Item, lang: str = "en") -> str:
    """The item's question in ``lang`` (else its first question), blanks collapsed."""
    q = item.question(lang) or next(iter(item.questions.values()), "")
    return " ".join((q or "").split())


def question_tokens(item: Item, lang: str = "en") -> list[str]:
    """Question tokens (module docstring)."""
    text = question_text(item, lang)
    kb = sorted({m["element"] for m in item.metadata.get("mentions", ()) if isinstance(m, dict)
                 and isinstance(m.get("element"), str)}, key=len, reverse=True)
    out: list[str] = []
    pieces = [text]
    if kb:
        pieces = re.split("(" + "|".join(re.escape(k) for k in kb) + ")", text)
    for piece in pieces:
        if piece in kb:
            out.append(piece)
            continue
        for m in _QWORD.finditer(piece):
            t = m.group(0)
            out.append(t if (":" in t and t[0].isalpha()) or t.startswith(("<", '"')) else t.lower())
    return out


def namespace(iri: str) -> str:
    """An IRI up to its last ``/`` or ``#`` (``http://dbpedia.org/resource/X`` ->
    ``http://dbpedia.org/resource/``)."""
    cut = max(iri.rfind("/"), iri.rfind("#"))
    return iri[: cut + 1] if cut >= 0 else iri


def query_namespaces(items: Iterable[Item]) -> dict[str, int]:
    """How many KB IRIs of the items' gold queries (:func:`query_tokens`, prefixed names
    expanded with the query's and the standard prefixes) fall in each namespace."""
    out: dict[str, int] = {}
    for it in items:
        if not it.sparql:
            continue
        declared, _ = split_declarations(it.sparql)
        for t in query_tokens(it.sparql):
            if not is_kb(t) or t.startswith(("\"", "'")):
                continue
            full = t[1:-1] if t.startswith("<") else _expand(t, declared)
            if full:
                ns = namespace(full)
                out[ns] = out.get(ns, 0) + 1
    return out


def dataset_checksum(items: Iterable[Item], lang: str = "en") -> str:
    """``sha256:`` of the items' ids, questions and queries: what a system was trained on."""
    h = hashlib.sha256()
    for it in items:
        h.update(json.dumps([it.id, question_text(it, lang), it.sparql or ""], ensure_ascii=False).encode())
        h.update(b"\n")
    return "sha256:" + h.hexdigest()


def jsonable(value: Any) -> Any:
    """Config values as JSON can hold them (tuples as lists)."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value
