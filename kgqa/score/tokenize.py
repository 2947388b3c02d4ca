"""Tokenisations of SPARQL text for the n-gram query measures (BLEU, ROUGE-L).

Two schemes, selected by the measures' ``tokenize`` parameter:

``sparql`` (:func:`sparql_tokens`)
    The tokens of :func:`kgqa.sparql.lexer.tokenize`, each as its source text (so the case of
    keywords and the spelling of IRIs are kept: BLEU is a surface measure). An IRI ``<...>``, a
    prefixed name, a variable, a number and a string literal are single tokens; a string's
    language tag or ``^^datatype`` is glued to it, so ``"Berlin"@en`` and ``"5"^^xsd:int`` are
    one token each. Whitespace and comments between tokens are dropped; whitespace *inside* a
    token (a string with spaces, ``[ ]``, ``( )``) is kept in the token.

``nspm`` (:func:`nspm_tokens`)
    The query encoded as the Neural SPARQL Machines line of work does (Soru, Marx et al.,
    "SPARQL as a Foreign Language", 2017; AKSW/LiberAI NSpM ``generator_utils.encode``; used by
    Linjordet et al., ICTIR 2022), then split on whitespace. :func:`nspm_encode` re-implements
    that encoding: a fixed sequence of plain substring replacements (``dbo:`` and
    ``http://dbpedia.org/ontology/`` -> ``dbo_``, likewise ``dbp_``, ``dbc_``, ``dbr_`` (also
    for ``res:``), ``dct_ geo_ georss_ rdf_ rdfs_ foaf_ owl_ yago_ skos_``; ``(`` / ``)`` ->
    ``par_open`` / ``par_close`` when space-delimited, else ``attr_open`` / ``attr_close``;
    ``{ }`` -> ``brack_open brack_close``; ``.`` -> ``sep_dot``; ``?`` -> ``var_``; ``*`` ->
    ``wildcard``; ``<= >= < >`` -> ``math_leq math_geq math_lt math_gt`` when space-delimited),
    then ``ORDER BY [ASC|DESC] (x)`` shortened to ``_oba_ x`` / ``_obd_ x``, then 12
    "standard" predicates substituted for their alternatives (``dbp_almaMater`` ->
    ``dbo_almaMater``, ``dbp_placeOfBirth`` -> ``dbo_birthPlace``, ...).

    **The encoding is lossy**: it rewrites ``dbp:`` properties to ``dbo:`` ones for those 12
    predicates (as plain substring replacement, so also inside longer names that contain
    them), a local name containing ``var_`` cannot be told apart from a variable after
    encoding, full DBpedia IRIs keep their angle brackets around the short form, and a
    ``?`` or ``.`` inside a string literal is rewritten too. Two different queries can
    therefore have the same encoding; use it only to compare with papers that used it.

Both functions are total (never raise) and cached (recent queries).
"""

from __future__ import annotations

import functools
import re

from kgqa.sparql.lexer import tokenize as _lex

__all__ = ["sparql_tokens", "nspm_encode", "nspm_tokens", "tokens", "TOKENIZERS", "escape_ws"]

#: Recently tokenised queries kept. The query measures keep what they need of a question's
#: tokens per question (kgqa.score.query_measures.question_memo), so this cache only shares work
#: between nearby questions with the same query; it is kept small so it never holds a large
#: evaluation's queries (a tuple of tokens is a few KB).
CACHE_SIZE = 1 << 14


@functools.lru_cache(maxsize=CACHE_SIZE)
def sparql_tokens(text: str) -> tuple[str, ...]:
    """SPARQL-aware tokens of ``text`` (see the module docstring)."""
    if not isinstance(text, str):
        text = str(text)
    toks = _lex(text)
    out: list[str] = []
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        piece = text[t.start : t.end]
        if t.kind == "STRING" and i + 1 < n:
            nxt = toks[i + 1]
            if nxt.kind == "LANGTAG":
                piece += text[nxt.start : nxt.end]
                i += 1
            elif (
                nxt.kind == "PUNCT" and nxt.value == "^^" and i + 2 < n
                and toks[i + 2].kind in ("IRIREF", "PNAME")
            ):
                dt = toks[i + 2]
                piece += "^^" + text[dt.start : dt.end]
                i += 2
        out.append(piece)
        i += 1
    return tuple(out)


# --------------------------------------------------------------------------- NSpM encoding
# (originals, encoding): every original is replaced by the encoding, in this order.
_NSPM_STEPS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("dbo:", "http://dbpedia.org/ontology/"), "dbo_"),
    (("dbp:", "http://dbpedia.org/property/"), "dbp_"),
    (("dbc:", "http://dbpedia.org/resource/Category:"), "dbc_"),
    (("dbr:", "res:", "http://dbpedia.org/resource/"), "dbr_"),
    (("dct:",), "dct_"),
    (("geo:",), "geo_"),
    (("georss:",), "georss_"),
    (("rdf:",), "rdf_"),
    (("rdfs:",), "rdfs_"),
    (("foaf:",), "foaf_"),
    (("owl:",), "owl_"),
    (("yago:",), "yago_"),
    (("skos:",), "skos_"),
    ((" ( ",), "  par_open  "),
    ((" ) ",), "  par_close  "),
    (("(",), " attr_open "),
    ((") ", ")"), " attr_close "),
    (("{",), " brack_open "),
    (("}",), " brack_close "),
    ((" . ",), " sep_dot "),
    ((". ",), " sep_dot "),
    (("?",), "var_"),
    (("*",), "wildcard"),
    ((" <= ",), " math_leq "),
    ((" >= ",), " math_geq "),
    ((" < ",), " math_lt "),
    ((" > ",), " math_gt "),
)

#: standard predicate -> the alternatives the encoding rewrites to it (12 standards).
NSPM_STANDARD_PREDICATES: dict[str, tuple[str, ...]] = {
    "dbo_almaMater": ("dbp_almaMater",),
    "dbo_award": ("dbp_awards",),
    "dbo_birthPlace": ("dbp_birthPlace", "dbp_placeOfBirth"),
    "dbo_deathPlace": ("dbp_deathPlace", "dbp_placeOfDeath"),
    "dbo_child": ("dbp_children",),
    "dbo_college": ("dbp_college",),
    "dbo_hometown": ("dbp_hometown",),
    "dbo_nationality": ("dbo_stateOfOrigin",),
    "dbo_relative": ("dbp_relatives",),
    "dbo_restingPlace": ("dbp_restingPlaces", "dbp_placeOfBurial", "dbo_placeOfBurial", "dbp_restingplace"),
    "dbo_spouse": ("dbp_spouse",),
    "dbo_partner": ("dbp_partner",),
}

_ORDER_DESC = re.compile(r"order by desc\s+....?_open\s+(\S+)\s+....?_close", re.IGNORECASE)
_ORDER_ASC = re.compile(r"order by asc\s+....?_open\s+(\S+)\s+....?_close", re.IGNORECASE)
_ORDER = re.compile(r"order by\s+(\S+)", re.IGNORECASE)


@functools.lru_cache(maxsize=CACHE_SIZE)
def nspm_encode(sparql: str) -> str:
    """The NSpM/Soru encoding of a query (lossy; see the module docstring)."""
    s = sparql if isinstance(sparql, str) else str(sparql)
    for originals, enc in _NSPM_STEPS:
        for orig in originals:
            s = s.replace(orig, enc)
    s = _ORDER_DESC.sub(r"_obd_ \1", s)
    s = _ORDER_ASC.sub(r"_oba_ \1", s)
    s = _ORDER.sub(r"_oba_ \1", s)
    for standard, alternatives in NSPM_STANDARD_PREDICATES.items():
        for alt in alternatives:
            s = s.replace(alt, standard)
    return s


def nspm_tokens(text: str) -> tuple[str, ...]:
    """Whitespace tokens of :func:`nspm_encode` ``(text)``."""
    return tuple(nspm_encode(text).split())


TOKENIZERS = {"sparql": sparql_tokens, "nspm": nspm_tokens}


def tokens(text: str, scheme: str = "sparql") -> tuple[str, ...]:
    """Tokens of ``text`` under ``scheme`` (``sparql`` or ``nspm``)."""
    try:
        fn = TOKENIZERS[scheme]
    except KeyError:
        raise ValueError(f"unknown tokenisation {scheme!r}; expected one of {', '.join(TOKENIZERS)}") from None
    return fn(text)


_WS = re.compile(r"\s")


def escape_ws(token: str) -> str:
    """An injective rewrite of a token without whitespace (``\\`` -> ``\\\\``, a whitespace
    character -> ``\\uXXXX``), so a token sequence can be joined with spaces for tools that
    split on whitespace (sacrebleu's ``tokenize='none'``) without changing token identity."""
    if "\\" in token:
        token = token.replace("\\", "\\\\")
    if _WS.search(token):
        token = _WS.sub(lambda m: f"\\u{ord(m.group()):04x}", token)
    return token
