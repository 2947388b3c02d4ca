r"""The sandbox for untrusted (predicted) queries: refuse what could change a KG, reach the
network or read outside the KG before any engine sees the query.

:func:`check` returns a :class:`Verdict` (a refusal reason or None, plus the ``FROM`` /
``FROM NAMED`` graphs the query asks for); :func:`refusal` returns just the reason. A query is
refused when

- it is longer than ``max_query_bytes`` (UTF-8; default :data:`DEFAULT_MAX_QUERY_BYTES`),
  checked before anything else so a huge query costs nothing;
- a keyword token (outside strings, IRIs, comments, prefixed names and variable names; case
  does not matter; keywords glued together such as ``DROPALL``, ``CLEARDEFAULT``,
  ``INSERTDATA{}`` count, as pyoxigraph reads them) is a SPARQL 1.1 Update operation or clause:
  ``INSERT``, ``DELETE``, ``LOAD``, ``CLEAR``, ``DROP``, ``CREATE``, ``ADD``, ``MOVE``, ``COPY``,
  ``WITH``, ``USING`` (unless ``allow_update``); at the top level (outside braces, not the name
  declared by ``PREFIX``) a prefixed name or bare word that *starts* with one of these words
  (``DROPGRAPHex:g``) is refused too;
- ``SERVICE`` (federated query: kgqa would call a URL chosen by the system under test) occurs,
  unless ``allow_service``; also glued to a prefixed name (``SERVICEex:s {``,
  ``SERVICESILENTex:s {``): pyoxigraph 0.5 executes ``SERVICEex:s {...}`` as ``SERVICE ex:s``,
  so a prefixed name whose prefix starts with ``SERVICE`` followed by ``{``, or a bare word
  starting with ``SERVICE``, is refused;
- it calls a Virtuoso vendor function other than :data:`SAFE_VIRTUOSO_FUNCTIONS`
  (``bif:http_get``, ``bif:file_to_string``, any ``sql:`` procedure), written with the ``bif:`` /
  ``sql:`` prefixes Virtuoso predefines (whatever the query declares them as), through a prefix
  declared as Virtuoso's namespace, or as a full IRI;
- it starts with a Virtuoso ``DEFINE`` pragma (``DEFINE get:soft "replace"`` makes Virtuoso
  fetch the ``FROM`` IRIs from the network);
- a ``FROM`` / ``FROM NAMED`` graph is not an absolute IRI with a scheme in
  ``from_schemes`` (default http and https): ``FROM <file:///etc/passwd>`` is refused, also
  written as pyoxigraph reads glued clauses (``FROMex:passwd``, ``FROM NAMEDex:passwd``, with
  ``PREFIXex: <file:///etc/>``); undeclared prefixes resolve through the standard table the
  normaliser injects.
  Allowed graphs are reported in the verdict (``from_graphs`` / ``from_named``) for the engine
  to honour or refuse.

Every check runs on **every reading** of the query. SPARQL 1.1 section 19.2 says codepoint
escapes (``\uXXXX``, ``\UXXXXXXXX``) are replaced before parsing, and engines differ on where
and how they do it (pyoxigraph inside IRIs and strings only; Jena's SPARQL 1.1 parser and
Blazegraph everywhere, Java-style: one *or more* ``u`` (``\uu0053ERVICE``), and only a backslash
preceded by an even number of backslashes starts one; RDF4J/GraphDB the same with ``\U`` too;
docs/sandbox.md lists every form with the grammar line it comes from). So besides the text as
written the checks see the text decoded everywhere in every form (repeatedly, in case an engine
decodes twice), decoded Java-style and decoded RDF4J-style;
``SELECT * { BIND(<http://x/\u0041#> AS ?z) SERVICE <...> {} }``, ``\u0049NSERT DATA {}`` and
``\uu0053ERVICE <...> {}`` are refused. Readings beyond the first exist only for queries that
contain such escapes.

Queries are tokenised by the one SPARQL lexer (:mod:`kgqa.sparql.lexer`), so ``"delete me"``,
``ex:drop``, ``?insert`` and ``# LOAD <x>`` are not refused. :func:`prepare` is what every
execution path does before an engine sees a predicted query: size cap, sandbox and normaliser
on **one** tokenisation; a query in the simple form (:func:`is_simple`: full IRIs, variables,
literals and a few read-only keywords, such as LC-QuAD's) is recognised by one regular
expression instead, and passes every check and needs no rewrite by construction. The embedded
engine is also read-only by construction (it only ever calls ``Store.query``), in worker
processes without network where the OS allows.
"""

from __future__ import annotations

import gc
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from kgqa.sparql.lexer import Token, significant, tokenize
from kgqa.sparql.prefixes import STANDARD_PREFIXES
from kgqa.execute.normalise import normalise_tokens

UPDATE_KEYWORDS = frozenset("INSERT DELETE LOAD CLEAR DROP CREATE ADD MOVE COPY WITH USING".split())
SERVICE_KEYWORD = "SERVICE"
#: Default cap on a query's size (UTF-8 bytes); larger queries are refused before any work.
from kgqa.execute.engine import DEFAULT_MAX_QUERY_BYTES  # one cap for every path (256 KiB)
DEFAULT_FROM_SCHEMES = ("http", "https")

__all__ = ["Verdict", "check", "refusal", "prepare", "Prepared", "readings", "UPDATE_KEYWORDS",
           "SERVICE_KEYWORD", "DEFAULT_MAX_QUERY_BYTES", "DEFAULT_FROM_SCHEMES", "query_bytes_refusal"]


@dataclass(frozen=True)
class Verdict:
    """The sandbox's answer for one query: ``reason`` (None: may run), the ``FROM`` and
    ``FROM NAMED`` graph IRIs it names (resolved against ``BASE`` / ``PREFIX``; from every
    reading), and how many readings were checked."""

    reason: str | None
    from_graphs: tuple[str, ...] = ()
    from_named: tuple[str, ...] = ()
    readings: int = 1

    @property
    def refused(self) -> bool:
        return self.reason is not None


# --------------------------------------------------------------------------- readings

#: Every codepoint escape some engine reads (docs/sandbox.md lists them with their grammar
#: lines): ``\u`` followed by one *or more* ``u`` and 4 hex digits (Java's grammar, which
#: JavaCC's ``JAVA_UNICODE_ESCAPE`` implements: Jena's SPARQL 1.1 parser, Blazegraph), ``\U`` and
#: 8 hex digits (SPARQL 1.1 section 19.2, RDF4J/GraphDB, QLever, pyoxigraph in IRIs and strings).
_ANY_ESCAPE = re.compile(r"\\(?:u+([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
# Java-style: the backslash must be preceded by an even number of backslashes.
_JAVA_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u+([0-9A-Fa-f]{4})")
# RDF4J's UnicodeEscapeStream (GraphDB): the same parity rule, one ``u`` or ``U`` + 8 hex digits.
_RDF4J_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
_MAX_DECODE_ROUNDS = 8


def _chr(hexdigits: str, whole: str) -> str:
    try:
        return chr(int(hexdigits, 16))
    except (ValueError, OverflowError):  # beyond U+10FFFF: not a character, kept as written
        return whole


def has_escapes(text: str) -> bool:
    """Whether ``text`` holds a codepoint escape in any form an engine reads (:data:`_ANY_ESCAPE`)."""
    return "\\" in text and _ANY_ESCAPE.search(text) is not None


def _decode_everywhere(text: str) -> str:
    """Every escape of :data:`_ANY_ESCAPE` replaced wherever it is (SPARQL 1.1 section 19.2,
    read as widely as any engine does), in one left-to-right pass."""
    return _ANY_ESCAPE.sub(lambda m: _chr(m.group(1) or m.group(2), m.group(0)), text)


def _java_decode(text: str) -> str:
    return _JAVA_ESCAPE.sub(lambda m: m.group(1) + _chr(m.group(2), m.group(0)[len(m.group(1)):]), text)


def _rdf4j_decode(text: str) -> str:
    return _RDF4J_ESCAPE.sub(lambda m: m.group(1) + _chr(m.group(2) or m.group(3), m.group(0)[len(m.group(1)):]),
                             text)


def readings(query: str) -> list[tuple[str, str]]:
    """Every text an engine may parse for ``query``: ``[(label, text), ...]``, the query as
    written first, then decoded readings that differ from all before (see module docstring)."""
    out = [("as written", query)]
    if not has_escapes(query):
        return out
    seen = {query}
    text = query
    for k in range(_MAX_DECODE_ROUNDS):
        nxt = _decode_everywhere(text)
        if nxt in seen:
            break
        out.append(("after decoding \\u escapes" + (f" ({k + 1} times)" if k else ""), nxt))
        seen.add(nxt)
        text = nxt
        if not has_escapes(text):
            break
    for label, decode in (("Java-style", _java_decode), ("RDF4J-style", _rdf4j_decode)):
        other = decode(query)
        if other not in seen:
            out.append((f"after decoding \\u escapes {label}", other))
            seen.add(other)
    return out


# --------------------------------------------------------------------------- checks


def query_bytes_refusal(query: str, max_query_bytes: int | None = DEFAULT_MAX_QUERY_BYTES) -> str | None:
    """The refusal for a query over ``max_query_bytes`` UTF-8 bytes (None: within the cap or
    no cap). Costs O(1) for queries far below the cap."""
    if max_query_bytes is None or len(query) * 4 <= max_query_bytes:
        return None
    size = len(query) if query.isascii() else len(query.encode("utf-8", "surrogatepass"))
    if size > max_query_bytes:
        return (f"refused: query is {size:,} bytes, over the {max_query_bytes:,}-byte cap "
                "(max_query_bytes); nothing was parsed or executed")
    return None


def _starts_with_update(word: str) -> str | None:
    for kw in UPDATE_KEYWORDS:
        if word.startswith(kw):
            return kw
    return None


# long function: one pass over the query's tokens; every refusal rule reads the same scanner state (docs/reference/trust.md lists the rules in this order)
def _check_tokens(text: str, toks: list[Token], label: str, allow_service: bool, allow_update: bool,
                  from_schemes: tuple[str, ...] | None, graphs: list[str], named: list[str]) -> str | None:
    where = "" if label == "as written" else f", {label}"
    sig = significant(toks)
    prefixes: dict[str, str] = {}
    base: str | None = None
    depth = 0
    n = len(sig)
    for i, t in enumerate(sig):
        k = t.kind
        if k == "PUNCT":
            v = t.value
            if v == "{":
                depth += 1
            elif v == "}":
                depth = max(0, depth - 1)
            continue
        if k == "IRIREF" and (t.value[:4].lower() in ("bif:", "sql:") or t.value.startswith(_OPENLINK)):
            reason = _vendor_function(t.value, text, t, where)
            if reason is not None:
                return reason
            continue
        if k == "KEYWORD":
            v = t.value
            if v in UPDATE_KEYWORDS and not allow_update:
                return (f"refused: SPARQL Update ({v} at offset {t.start}{where}); "
                        "untrusted queries may only read the KG")
            if v == SERVICE_KEYWORD and not allow_service:
                return (f"refused: SERVICE (federated query at offset {t.start}{where}) would contact "
                        "another endpoint; allow it explicitly with --allow-service")
            if v == "PREFIX" and i + 2 < n and sig[i + 1].kind == "PNAME" and sig[i + 2].kind == "IRIREF":
                prefixes[sig[i + 1].value.split(":", 1)[0]] = _resolve(sig[i + 2].value, base)
            elif v == "BASE" and i + 1 < n and sig[i + 1].kind == "IRIREF":
                base = _resolve(sig[i + 1].value, base)
            elif v == "FROM" and from_schemes is not None:
                j = i + 1
                is_named = j < n and sig[j].kind == "KEYWORD" and sig[j].value == "NAMED"
                if is_named:
                    j += 1
                if j < n and sig[j].kind in ("IRIREF", "PNAME"):
                    reason = _from_graph(text, sig[j], sig[j].value, is_named, prefixes, base, from_schemes,
                                         where, graphs, named)
                    if reason is not None:
                        return reason
            continue
        if k == "PNAME" or k == "ERROR":
            word = t.value.split(":", 1)[0].upper() if k == "PNAME" else t.value.upper()
            if k == "PNAME":
                pfx, _, local = t.value.partition(":")
                ns = prefixes.get(pfx)
                if word in ("BIF", "SQL") or (ns is not None and ns.startswith(_OPENLINK)):
                    reason = _vendor_function(t.value if ns is None or not ns.startswith(_OPENLINK) else ns + local,
                                              text, t, where)
                    if reason is not None:
                        return reason
            if k == "ERROR" and word == "DEFINE" and depth == 0:
                return (f"refused: Virtuoso DEFINE pragma at offset {t.start}{where} (it can make the endpoint "
                        "fetch remote data, e.g. DEFINE get:soft \"replace\"); untrusted queries may not set pragmas")
            if (k == "PNAME" and depth == 0 and word.startswith("PREFIX") and t.value.endswith(":")
                    and i + 1 < n and sig[i + 1].kind == "IRIREF"):
                # 'PREFIXex: <iri>': pyoxigraph reads PREFIX ex: <iri>
                prefixes[t.value[6:-1]] = _resolve(sig[i + 1].value, base)
                continue
            if (k == "PNAME" and from_schemes is not None and depth == 0 and word.startswith("FROM")
                    and not (i > 0 and sig[i - 1].kind == "KEYWORD" and sig[i - 1].value == "PREFIX")
                    and not (i + 1 < n and (sig[i + 1].kind == "NIL" or (sig[i + 1].kind == "PUNCT"
                                                                          and sig[i + 1].value == "(")))):
                # 'FROMex:g' / 'FROMNAMEDex:g': pyoxigraph reads FROM [NAMED] ex:g
                rest = t.value[4:]
                is_named = rest[:5].upper() == "NAMED"
                reason = _from_graph(text, t, rest[5:] if is_named else rest, is_named, prefixes, base,
                                     from_schemes, where, graphs, named)
                if reason is not None:
                    return reason
            if not allow_service and word.startswith(SERVICE_KEYWORD) and (
                    k == "ERROR" or (i + 1 < n and sig[i + 1].kind == "PUNCT" and sig[i + 1].value == "{")):
                return (f"refused: SERVICE (federated query: {text[t.start:t.end]!r} at offset {t.start}{where} "
                        "is read as SERVICE by pyoxigraph) would contact another endpoint; allow it explicitly "
                        "with --allow-service")
            if (not allow_update and depth == 0 and not (i > 0 and sig[i - 1].kind == "KEYWORD"
                                                          and sig[i - 1].value == "PREFIX")):
                kw = _starts_with_update(word)
                if kw is not None:
                    return (f"refused: SPARQL Update ({kw} glued in {text[t.start:t.end]!r} at offset "
                            f"{t.start}{where}); untrusted queries may only read the KG")
    return None


#: Virtuoso built-ins an untrusted query may call (``bif:contains`` is common in DBpedia-era
#: gold queries); every other ``bif:`` function (``bif:http_get``, ``bif:file_to_string``, ...) and
#: every ``sql:`` procedure is refused: they can reach the network, files or the database.
SAFE_VIRTUOSO_FUNCTIONS = frozenset({"contains", "st_intersects", "st_within", "st_distance", "st_point"})
_OPENLINK = "http://www.openlinksw.com/schemas/"


def _vendor_function(value: str, text: str, t: Token, where: str) -> str | None:
    if value.startswith(_OPENLINK):
        ns, _, name = value[len(_OPENLINK):].partition("#")
        ns = ns.rstrip("/")
    else:
        ns, _, name = value.partition(":")
    ns = ns.lower()
    if ns == "bif" and name.lower() in SAFE_VIRTUOSO_FUNCTIONS:
        return None
    if ns not in ("bif", "sql"):
        return None
    return (f"refused: Virtuoso {ns}: function {text[t.start:t.end]} at offset {t.start}{where} (vendor built-ins "
            f"can reach the network, files or the database; allowed: "
            f"{', '.join('bif:' + f for f in sorted(SAFE_VIRTUOSO_FUNCTIONS))})")


def _from_graph(text: str, g: Token, value: str, is_named: bool, prefixes: dict[str, str], base: str | None,
                from_schemes: tuple[str, ...], where: str, graphs: list[str], named: list[str]) -> str | None:
    """Check the graph of a ``FROM`` / ``FROM NAMED`` clause (token ``g``, its IRI body or
    prefixed name ``value``): every IRI an engine may read it as must be absolute with a scheme in
    ``from_schemes``. A prefixed name starting with ``NAMED`` (``FROM NAMEDex:g``) is also read as
    ``FROM NAMED ex:g``, as pyoxigraph does when ``NAMEDex:`` is not a declared prefix. Undeclared
    prefixes resolve through :data:`STANDARD_PREFIXES` (the normaliser declares those)."""
    shown = text[g.start:g.end]
    if g.kind == "IRIREF":
        cands = [(is_named, _resolve(value, base))]
    else:
        cands = []
        p, _, local = value.partition(":")
        ns = prefixes.get(p, STANDARD_PREFIXES.get(p))
        if ns is not None:
            cands.append((is_named, ns + local))
        if not is_named and p[:5].upper() == "NAMED":
            ns2 = prefixes.get(p[5:], STANDARD_PREFIXES.get(p[5:]))
            if ns2 is not None:
                cands.append((True, ns2 + local))
        if not cands:
            return (f"refused: {'FROM NAMED' if is_named else 'FROM'} {shown} (offset {g.start}{where}) "
                    "uses an undeclared prefix")
    for nm, iri in cands:
        scheme = iri.split(":", 1)[0].lower() if ":" in iri else ""
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*", scheme or "-") or scheme not in from_schemes:
            return (f"refused: {'FROM NAMED' if nm else 'FROM'} <{iri}> (offset {g.start}{where}) is not an "
                    f"absolute {'/'.join(from_schemes)} IRI; untrusted queries may only select graphs of the KG "
                    "by such IRIs")
    for nm, iri in cands:
        (named if nm else graphs).append(iri)
    return None


def _resolve(iri: str, base: str | None) -> str:
    if base is None or re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", iri):
        return iri
    try:
        return urljoin(base, iri)
    except ValueError:
        return iri


# --------------------------------------------------------------------------- the simple form

#: Keywords the simple form may use: read-only query forms and graph patterns, none of them an
#: Update word, SERVICE, FROM, a finding of :mod:`kgqa.execute.engine_findings` or a function.
SIMPLE_KEYWORDS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE", "WHERE", "DISTINCT", "REDUCED", "OPTIONAL",
                   "UNION", "MINUS", "GRAPH")
#: A query in the simple form: blanks, ``#`` comments, IRIs (not ``bif:`` / ``sql:`` nor
#: Virtuoso's namespace), variables with ASCII names, the keywords of :data:`SIMPLE_KEYWORDS`
#: (any case) and ``a``, each followed by a blank, ``{ } * ? $ < #`` or the end, one-line strings
#: not next to another quote, language tags, ``^^``, integers and ``{ } . ; , * / |``; and no
#: backslash anywhere (checked before). Every piece lexes as the one token of
#: :mod:`kgqa.sparql.lexer` it looks like (the lexer's own expressions, restricted), so the
#: tokens hold no Update word, SERVICE, FROM, prefixed name, bare word, vendor function,
#: codepoint escape or parenthesis: the sandbox accepts the query with no ``FROM`` graph and
#: one reading, the normaliser has nothing to rewrite, and no token is a finding of
#: :mod:`kgqa.execute.engine_findings`. ``LC-QuAD``-style queries over full IRIs are of this
#: form; tests/execute/test_sandbox_simple.py compares it with the full path.
_SIMPLE = re.compile(  # the most frequent pieces first
    r"(?:\s++"
    r"|<(?!(?i:bif|sql):|http://www\.openlinksw\.com/schemas/)[^<>\"{}|^`\\\x00-\x20]*+>"
    r"|[?$][A-Za-z0-9_]++"
    r"|[{}.;,*/|]"
    r"|(?:(?i:" + "|".join(SIMPLE_KEYWORDS) + r")|a)(?![^\s{}*?$<#])"
    r"|#[^\n\r]*+"
    r"|\"[^\"\\\n\r]*+\"(?![\"'])|'[^'\\\n\r]*+'(?![\"'])"
    r"|@[a-zA-Z]++(?:-[a-zA-Z0-9]++)*+(?![A-Za-z0-9_\-])"
    r"|\^\^"
    r"|[0-9]++(?![0-9A-Za-z_:]|\.[0-9])"
    r")*+",
    re.ASCII,  # no Unicode case folding (``ſelect``) nor Unicode blanks: those go the general way
)
#: Longer queries are not tried for the simple form (they go the general way).
SIMPLE_MAX_CHARS = 4096


def is_simple(query: str) -> bool:
    """True when ``query`` is in the simple form (see :data:`_SIMPLE`): then :func:`check`
    accepts it under any options (:data:`SIMPLE_VERDICT`) and :func:`prepare` returns it
    unchanged, without tokenising it."""
    return (query.__class__ is str and len(query) <= SIMPLE_MAX_CHARS and "\\" not in query
            and _SIMPLE.fullmatch(query) is not None)


#: The verdict on every query in the simple form.
SIMPLE_VERDICT = Verdict(None, (), (), 1)


_MEMO: OrderedDict[tuple, Verdict] = OrderedDict()
_MEMO_SIZE = 65536
_MEMO_MAX_TEXT = 65536


_MEMO_LOCK = threading.Lock()  # engines check from their own threads (the endpoint's event loop)


def _memo_put(key: tuple, verdict: Verdict) -> None:
    if len(key[0]) > _MEMO_MAX_TEXT:
        return
    with _MEMO_LOCK:
        _MEMO[key] = verdict
        _MEMO.move_to_end(key)
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)


def check(query: str, *, allow_service: bool = False, allow_update: bool = False,
          from_schemes: tuple[str, ...] | None = DEFAULT_FROM_SCHEMES,
          max_query_bytes: int | None = DEFAULT_MAX_QUERY_BYTES,
          tokens: list[Token] | None = None) -> Verdict:
    """The sandbox's :class:`Verdict` for ``query`` (see the module docstring).
    ``from_schemes=None`` lets every ``FROM`` through unchecked. ``tokens``: the query's tokens
    (``tokenize(query)``, trivia or not) when the caller already has them."""
    if not isinstance(query, str):
        return Verdict(f"refused: query is not text ({type(query).__name__})")
    too_big = query_bytes_refusal(query, max_query_bytes)
    if too_big is not None:
        return Verdict(too_big)
    key = (query, allow_service, allow_update, from_schemes)
    hit = _MEMO.get(key)
    if hit is not None:
        return hit
    if tokens is None and is_simple(query):
        return SIMPLE_VERDICT
    graphs: list[str] = []
    named: list[str] = []
    texts = readings(query)
    reason = None
    for idx, (label, text) in enumerate(texts):
        toks = tokens if idx == 0 and tokens is not None else tokenize(text)
        reason = _check_tokens(text, toks, label, allow_service, allow_update, from_schemes, graphs, named)
        if reason is not None:
            break
    verdict = Verdict(reason, tuple(dict.fromkeys(graphs)), tuple(dict.fromkeys(named)), len(texts))
    _memo_put(key, verdict)
    return verdict


def refusal(query: str, allow_service: bool = False, allow_update: bool = False,
            max_query_bytes: int | None = DEFAULT_MAX_QUERY_BYTES,
            from_schemes: tuple[str, ...] | None = DEFAULT_FROM_SCHEMES) -> str | None:
    """Why ``query`` must not run, or None when it may. See the module docstring."""
    return check(query, allow_service=allow_service, allow_update=allow_update,
                 max_query_bytes=max_query_bytes, from_schemes=from_schemes).reason


# --------------------------------------------------------------------------- prepare


#: ``scan_simple``'s default: the caller says nothing of what ``scan`` gives for a simple query
UNSET: Any = object()


@dataclass(frozen=True)
class Prepared:
    """A query ready for an engine: the ``text`` to execute, the normaliser's ``rewrites`` and
    the sandbox ``verdict`` (None for trusted queries)."""

    text: str
    rewrites: list[str] = field(default_factory=list)
    verdict: Verdict | None = None
    #: what ``prepare(..., scan=f)`` returned for the query's tokens (None: not scanned)
    scan: Any = None

    @property
    def refusal(self) -> str | None:
        return None if self.verdict is None else self.verdict.reason


def prepare(query: str, *, normalise: bool = True, untrusted: bool = True, allow_service: bool = False,
            allow_update: bool = False, max_query_bytes: int | None = DEFAULT_MAX_QUERY_BYTES,
            from_schemes: tuple[str, ...] | None = DEFAULT_FROM_SCHEMES,
            scan: Callable[[list[Token]], Any] | None = None, scan_simple: Any = UNSET) -> Prepared:
    """Size cap, sandbox (untrusted queries) and normaliser on one tokenisation of ``query``.
    ``scan(tokens)`` (tokens with trivia), when given, reads that same tokenisation for the
    caller; its result is :attr:`Prepared.scan` (None when the query was not tokenised).

    A query in the simple form (:func:`is_simple`) is not tokenised: it comes back unchanged,
    with :data:`SIMPLE_VERDICT` when untrusted, and with ``scan_simple`` as its scan: what
    ``scan`` returns for the tokens of every such query (without ``scan_simple``, a query is
    tokenised for ``scan`` whatever its form).

    A refused query comes back unnormalised with its verdict. The normalised text of an
    accepted query gets the same verdict without a second scan (engines that check again hit
    :func:`check`'s memo): the normaliser only inserts ``PREFIX`` lines at the start, ``(``,
    `` AS ?v)`` between tokens, and replaces ``xsd:int``-like cast names, none of which can add
    a keyword, a ``FROM`` or a codepoint escape, or change how the tokens around them lex."""
    if untrusted:
        too_big = query_bytes_refusal(query, max_query_bytes)
        if too_big is not None:
            return Prepared(query, [], Verdict(too_big))
    if (scan is None or scan_simple is not UNSET) and is_simple(query):
        return Prepared(query, [], SIMPLE_VERDICT if untrusted else None, None if scan is None else scan_simple)
    if len(query) > _GC_PAUSE_ABOVE:
        with _gc_paused():
            return _prepare(query, normalise, untrusted, allow_service, allow_update, max_query_bytes, from_schemes,
                            scan)
    return _prepare(query, normalise, untrusted, allow_service, allow_update, max_query_bytes, from_schemes, scan)


#: Queries longer than this are prepared with the cyclic garbage collector paused: the
#: hundreds of thousands of (acyclic) token tuples of a large query otherwise trigger repeated
#: full collections (about a third of the time at 1 MB).
_GC_PAUSE_ABOVE = 65536


@contextmanager
def _gc_paused():
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _prepare(query: str, normalise: bool, untrusted: bool, allow_service: bool, allow_update: bool,
             max_query_bytes: int | None, from_schemes: tuple[str, ...] | None,
             scan: Callable[[list[Token]], Any] | None = None) -> Prepared:
    toks = tokenize(query, trivia=True) if (normalise or untrusted or scan is not None) else []
    scanned = scan(toks) if scan is not None else None
    verdict = seen = None
    if untrusted or toks:  # the verdict read off these tokens: it decides for an untrusted
        # query; for a trusted one it is only memoised, for the engine that checks every text
        # it runs (its own lexer pass saved: 24,000 queries generating on autry-museum)
        seen = check(query, allow_service=allow_service, allow_update=allow_update, from_schemes=from_schemes,
                     max_query_bytes=max_query_bytes, tokens=toks)
        if untrusted:
            verdict = seen
            if verdict.refused:
                return Prepared(query, [], verdict, scanned)
    if not normalise:
        return Prepared(query, [], verdict, scanned)
    n = normalise_tokens(query, toks)
    if seen is not None and not seen.refused and n.text != query:
        _memo_put((n.text, allow_service, allow_update, from_schemes), seen)
    return Prepared(n.text, list(n.rewrites), verdict, scanned)
