"""Typed RDF terms: IRI, Literal (with datatype or language tag), blank node.

Answers in kgqa are made of these terms, never of bare strings. How two terms are
compared is explicit: see :class:`TermMatching`, whose ``key`` maps a term to a hashable
comparison key (numbers by value, dates by value, language tags and case as settings, IRIs
after percent-encoding normalisation).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation, Overflow
from collections.abc import Hashable, Iterable
from typing import Any, Literal as _Lit, Union
from urllib.parse import unquote
import hashlib
import unicodedata

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD_STRING = XSD + "string"
XSD_BOOLEAN = XSD + "boolean"
XSD_INTEGER = XSD + "integer"
XSD_DECIMAL = XSD + "decimal"
XSD_DOUBLE = XSD + "double"
XSD_DATE = XSD + "date"
XSD_DATETIME = XSD + "dateTime"
RDF_LANGSTRING = RDF + "langString"
#: the namespace of Freebase ids (``ns:m.0abc``) in WebQSP, CWQ, GraphQuestions and SimpleQuestions
FREEBASE_NS = "http://rdf.freebase.com/ns/"

NUMERIC_TYPES = frozenset(
    XSD + t
    for t in (
        "integer decimal float double int long short byte nonNegativeInteger positiveInteger "
        "nonPositiveInteger negativeInteger unsignedInt unsignedLong unsignedShort unsignedByte"
    ).split()
)
DATE_TYPES = frozenset(XSD + t for t in ("date", "dateTime", "dateTimeStamp", "gYear", "gYearMonth"))


@dataclass(frozen=True, slots=True)
class IRI:
    value: str

    def n3(self) -> str:
        return f"<{self.value}>"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Literal:
    """An RDF literal. ``datatype`` is None for a simple literal (xsd:string); a literal with a
    language tag has ``language`` set and datatype None."""

    value: str
    datatype: str | None = None
    language: str | None = None

    def __post_init__(self) -> None:
        if self.language is not None and self.datatype not in (None, RDF_LANGSTRING):
            raise ValueError(f"literal {self.value!r} has both a language tag and datatype {self.datatype}")

    def n3(self) -> str:
        body = '"' + self.value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        if self.language:
            return f"{body}@{self.language}"
        if self.datatype and self.datatype != XSD_STRING:
            return f"{body}^^<{self.datatype}>"
        return body

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class BNode:
    id: str

    def n3(self) -> str:
        return f"_:{self.id}"

    def __str__(self) -> str:
        return f"_:{self.id}"


Term = Union[IRI, Literal, BNode]

TRUE = Literal("true", XSD_BOOLEAN)
FALSE = Literal("false", XSD_BOOLEAN)


# --------------------------------------------------------------------------- conversions

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:[^\s]*$")


def looks_like_iri(text: str) -> bool:
    """True for an absolute IRI such as ``http://x/y`` or ``urn:a:b`` (no whitespace)."""
    return bool(_SCHEME.match(text)) and not text[: text.index(":")].isdigit()


_new = object.__new__
_set_iri = IRI.value.__set__  # type: ignore[attr-defined]
_set_lit_value = Literal.value.__set__  # type: ignore[attr-defined]
_set_lit_datatype = Literal.datatype.__set__  # type: ignore[attr-defined]
_set_lit_language = Literal.language.__set__  # type: ignore[attr-defined]


def iri(value: str) -> IRI:
    """``IRI(value)``, made without the dataclass's ``__init__`` (a loader's hot path: three
    times faster); the same object in every respect."""
    term = _new(IRI)
    _set_iri(term, value)
    return term


def simple_literal(value: str) -> Literal:
    """``Literal(value)`` (no datatype, no language), made as :func:`iri` makes an IRI."""
    term = _new(Literal)
    _set_lit_value(term, value)
    _set_lit_datatype(term, None)
    _set_lit_language(term, None)
    return term


def guessed_iri(text: str) -> bool:
    """Whether :func:`guess_term` types the bare string ``text`` as an IRI (an absolute IRI
    without a space); :func:`guess_terms` inlines the same test in its loop."""
    return text.startswith(_IRI_PREFIXES) and " " not in text


def guess_term(text: str) -> Term:
    """Type a bare string from an untyped source (Text2SPARQL answer bags, CSV): absolute
    IRIs become :class:`IRI`, everything else a simple :class:`Literal`."""
    if guessed_iri(text):
        return iri(text)
    return simple_literal(text)


def guess_terms(texts: Iterable[str]) -> list[Term]:
    """``[guess_term(t) for t in texts]`` in one function (a loader's hot path: no call per term)."""
    out: list[Term] = []
    add = out.append
    for text in texts:
        if text.startswith(_IRI_PREFIXES) and " " not in text:
            term = _new(IRI)
            _set_iri(term, text)
        else:
            term = _new(Literal)
            _set_lit_value(term, text)
            _set_lit_datatype(term, None)
            _set_lit_language(term, None)
        add(term)
    return out


_IRI_PREFIXES = ("http://", "https://", "urn:")


def from_sparql_json(cell: dict[str, Any]) -> Term:
    """A term from one binding of SPARQL 1.1 Query Results JSON (also Virtuoso's
    ``typed-literal`` and the QALD variants ``"type": "uri"|"literal"``)."""
    if not isinstance(cell, dict):
        raise ValueError(f"expected a binding object with 'type' and 'value', got {cell!r}")
    kind = cell.get("type")
    value = cell.get("value")
    if value is None:
        raise ValueError(f"binding without 'value': {cell!r}")
    value = str(value)
    if kind in ("uri", "iri"):
        return IRI(value)
    if kind == "bnode":
        return BNode(value)
    if kind in ("literal", "typed-literal", None):
        lang = cell.get("xml:lang") or cell.get("lang")
        dt = cell.get("datatype")
        if lang:
            return Literal(value, None, str(lang))
        return Literal(value, None if dt in (None, XSD_STRING) else str(dt))
    raise ValueError(f"unknown binding type {kind!r} (expected uri, literal, typed-literal or bnode)")


def to_sparql_json(term: Term) -> dict[str, str]:
    if term.__class__ is IRI or isinstance(term, IRI):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": term.id}
    out = {"type": "literal", "value": term.value}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype and term.datatype != XSD_STRING:
        out["datatype"] = term.datatype
    return out


# --------------------------------------------------------------------------- comparison

#: Lexical forms of a number, an xsd:date and an xsd:dateTime (with optional timezone).
NUMBER_PATTERN = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")
DATE_PATTERN = re.compile(r"^(-?\d{4,})-(\d{2})-(\d{2})(Z|[+-]\d{2}:\d{2})?$")
DATETIME_PATTERN = re.compile(r"^(-?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})?$")


#: the arithmetic context of numeric keys: the default precision, the widest exponents (the
#: default context's +-999999 made "1E100000000" raise decimal.Overflow and "1E-1000000" equal 0)
_WIDE = Context(prec=28, Emax=MAX_EMAX, Emin=MIN_EMIN)


def _number(text: str) -> Decimal | None:
    """The value of a numeric lexical form, rounded to 28 significant digits (as before), or
    None (the caller then compares the lexical form) when it is no number or its exponent is
    beyond what a Decimal holds (|exponent| > 10**18). A huge or tiny exponent within that
    range is kept as it is: no overflow to an error, no underflow to 0."""
    m = NUMBER_PATTERN.match(text)
    if not m:
        return None
    if not m.group(1).strip("0."):  # zero, whatever its exponent
        return Decimal(0)
    try:
        return _WIDE.normalize(Decimal(text.strip()))
    except (InvalidOperation, Overflow):  # exponent beyond 10**18: Decimal cannot hold it
        return None


def _date_key(text: str) -> tuple | None:
    """Value key of an xsd:date / xsd:dateTime lexical form. Timezone offsets are applied;
    a dateTime at midnight compares equal to the bare date (DBpedia and Wikidata disagree on
    which of the two they return for a day)."""
    text = text.strip()
    m = DATE_PATTERN.match(text)
    if m:
        return ("date", int(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = DATETIME_PATTERN.match(text)
    if not m:
        return None
    y, mo, d, h, mi = (int(m.group(i)) for i in range(1, 6))
    sec = Decimal(m.group(6))
    tz = m.group(7)
    if tz and tz not in ("Z", "+00:00", "-00:00"):
        sign = 1 if tz[0] == "+" else -1
        offset = sign * (int(tz[1:3]) * 60 + int(tz[4:6]))
        try:
            moment = _dt.datetime(y, mo, d, h, mi) - _dt.timedelta(minutes=offset)
        except ValueError:
            return None
        y, mo, d, h, mi = moment.year, moment.month, moment.day, moment.hour, moment.minute
    if (h, mi, sec) == (0, 0, 0):
        return ("date", y, mo, d)
    return ("dateTime", y, mo, d, h, mi, sec.normalize())


_BOOL = {"true": True, "1": True, "false": False, "0": False}

_DBPEDIA = re.compile(r"^https?://(?:www\.|en\.)?dbpedia\.org/(?:resource|page)/")


def dbpedia_canonical(iri: str) -> str:
    """The DBpedia IRI variants GERBIL's meaning matching treats as one resource, written one way:
    ``https://`` as ``http://``, the ``en.`` and ``www.`` hosts as ``dbpedia.org``, and the HTML
    view ``/page/X`` as ``/resource/X`` (other language chapters, ``fr.dbpedia.org``, are other
    resources and stay apart)."""
    m = _DBPEDIA.match(iri)
    return "http://dbpedia.org/resource/" + iri[m.end():] if m else iri


class IriLinks:
    """Which IRIs denote the same thing (GERBIL's "meaning matching"): owl:sameAs links (either
    direction, transitively), KG redirects, and the DBpedia variants (:func:`dbpedia_canonical`).
    Each IRI maps to one representative of its class (the smallest IRI in it, after the DBpedia
    variants are written one way), so gold and predicted answers are compared class by class and
    P/R/F stay counts of distinct meanings.

    Immutable and hashable by content (:attr:`fingerprint`); :attr:`description` names where the
    links came from, for the score signature (``links:dbpedia+sameAs=120+redirects=43#ab12cd34``).
    Make one with :meth:`from_pairs`."""

    __slots__ = ("_rep", "dbpedia", "description", "fingerprint")

    def __init__(self, rep: dict[str, str], dbpedia: bool, description: str, fingerprint: str):
        self._rep = rep
        self.dbpedia = dbpedia
        self.description = description
        self.fingerprint = fingerprint

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, str]], *, dbpedia: bool = True,
                   sources: Iterable[str] = ()) -> "IriLinks":
        """Links from (IRI, IRI) pairs, union-found; ``dbpedia``: write DBpedia variants one way
        first; ``sources``: how many pairs came from where (``sameAs=120``), for the signature."""

        norm = dbpedia_canonical if dbpedia else (lambda x: x)
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            root = x
            while parent.get(root, root) != root:
                root = parent[root]
            while x != root:  # path compression
                parent[x], x = root, parent[x]
            return root

        for a, b in pairs:
            a, b = norm(a), norm(b)
            parent.setdefault(a, a)
            parent.setdefault(b, b)
            ra, rb = find(a), find(b)
            if ra != rb:  # the smaller root stays: the representative is the smallest IRI of its class
                parent[max(ra, rb)] = min(ra, rb)
        rep = {x: find(x) for x in list(parent)}
        rep = {x: r for x, r in rep.items() if x != r}
        h = hashlib.sha256()
        for x in sorted(rep):
            h.update(f"{x}\t{rep[x]}\n".encode("utf-8", "surrogatepass"))
        h.update(b"dbpedia" if dbpedia else b"")
        parts = (["dbpedia"] if dbpedia else []) + list(sources)
        return cls(rep, dbpedia, "+".join(parts) or "none", h.hexdigest()[:8])

    def map(self, iri: str) -> str:
        """The representative of ``iri``'s class (``iri`` itself when it is linked to nothing)."""
        if self.dbpedia:
            iri = dbpedia_canonical(iri)
        return self._rep.get(iri, iri)

    def __len__(self) -> int:
        return len(self._rep)

    def signature(self) -> str:
        return f"{self.description}#{self.fingerprint}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IriLinks) and other.fingerprint == self.fingerprint and other._rep == self._rep

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return f"IriLinks({self.signature()}, {len(self)} linked IRIs)"


def label_text(text: str) -> str:
    """How a text answer and an entity label are compared: Unicode NFKC, case-folded, white space
    collapsed, surrounding punctuation and a leading English article dropped."""

    t = " ".join(unicodedata.normalize("NFKC", text).casefold().split()).strip(" .,;:!?\"'")
    for article in ("the ", "a ", "an "):
        if t.startswith(article):
            t = t[len(article):]
            break
    return t


class TextLabels:
    """Text answers matched against entity labels (``match:labels``): systems built on language
    models answer "Berlin" where the gold answer is ``dbr:Berlin``. A plain or language-tagged
    literal whose text (:func:`label_text`) is a label or alias of exactly one entity compares as
    that entity's IRI; a text that names several entities stays a text (never a guess).

    Labels come from the KG (rdfs:label, skos:prefLabel/altLabel, schema:name of the gold
    answers' IRIs) and from the dataset (Mintaka's entity labels, CWQ's answer names and aliases,
    WebQSP's entity names). Hashable by content; :meth:`signature` names sources and counts."""

    __slots__ = ("_iri", "description", "fingerprint")

    def __init__(self, iri_of: dict[str, str], description: str, fingerprint: str):
        self._iri = iri_of
        self.description = description
        self.fingerprint = fingerprint

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, str]], sources: Iterable[str] = ()) -> "TextLabels":
        """From (IRI, label) pairs; labels naming more than one IRI are dropped."""

        seen: dict[str, set[str]] = {}
        for iri, label in pairs:
            t = label_text(label)
            if t:
                seen.setdefault(t, set()).add(iri)
        iri_of = {t: next(iter(v)) for t, v in seen.items() if len(v) == 1}
        h = hashlib.sha256()
        for t in sorted(iri_of):
            h.update(f"{t}\t{iri_of[t]}\n".encode("utf-8", "surrogatepass"))
        return cls(iri_of, "+".join(sources) or "none", h.hexdigest()[:8])

    def iri(self, text: str) -> str | None:
        """The one entity ``text`` names, or None."""
        return self._iri.get(label_text(text))

    def __len__(self) -> int:
        return len(self._iri)

    def signature(self) -> str:
        return f"{self.description}#{self.fingerprint}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TextLabels) and other._iri == self._iri

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return f"TextLabels({self.signature()}, {len(self)} labels)"


@dataclass(frozen=True)
class TermMatching:
    """How answer terms are compared. Every field is part of the score signature.

    - ``mode``: ``typed`` compares terms by kind and value (the rules below);
      ``lexical`` compares only the lexical form string (what Text2SPARQL's pytrec_eval bags
      and GERBIL's string sets do).
    - ``numbers``: ``value`` (``"8"``, ``"8.0"``, ``"8"^^xsd:int`` equal) or ``lexical``.
    - ``untyped_numbers``: simple literals whose text is a number compare as that number.
    - ``dates``: ``value`` (``2020-01-05`` equals ``2020-01-05T00:00:00Z``) or ``lexical``.
    - ``language``: ``ignore`` language tags, or ``match`` them (case-insensitively, as BCP47).
    - ``case``: ``sensitive`` or ``insensitive`` for literal text.
    - ``iri``: ``percent-decode`` (``%40`` equals ``@``), or ``exact``.
    - ``literal_vs_iri``: when True, a literal whose text equals an IRI matches the IRI.
    - ``links``: meaning matching (:class:`IriLinks`): IRIs linked by owl:sameAs, KG redirects
      or DBpedia variants compare equal (signature ``links:...``); None compares IRIs as written.
    - ``labels``: text answers matched against entity labels (:class:`TextLabels`; signature
      ``labels:...``): a literal naming exactly one labelled entity compares as its IRI.
    """

    mode: _Lit["typed", "lexical"] = "typed"
    numbers: _Lit["value", "lexical"] = "value"
    untyped_numbers: bool = True
    dates: _Lit["value", "lexical"] = "value"
    language: _Lit["ignore", "match"] = "ignore"
    case: _Lit["sensitive", "insensitive"] = "sensitive"
    iri: _Lit["percent-decode", "exact"] = "percent-decode"
    literal_vs_iri: bool = False
    links: IriLinks | None = None
    labels: TextLabels | None = None

    def signature(self) -> str:
        links = f",links:{self.links.signature()}" if self.links is not None else ""
        if self.labels is not None:
            links += f",labels:{self.labels.signature()}"
        if self.mode == "lexical":
            return "lexical" + links
        parts = [
            f"num:{self.numbers}{'+untyped' if self.untyped_numbers and self.numbers == 'value' else ''}",
            f"date:{self.dates}",
            f"lang:{self.language}",
            f"case:{self.case}",
            f"iri:{self.iri}",
        ]
        if self.literal_vs_iri:
            parts.append("lit=iri")
        return ",".join(parts) + links

    def keys(self, terms: Iterable[Term | None]) -> list[Hashable]:
        """``[self.key(t) for t in terms]``, with the common cases inlined (a hot path)."""
        if self.links is not None or self.labels is not None:
            return [self.key(t) for t in terms]
        if self.mode == "lexical":
            return [("unbound",) if t is None else t.value if t.__class__ is not BNode else "_:" + t.id
                    for t in terms]
        if self.iri == "percent-decode" and not self.literal_vs_iri:
            key = self.key
            # unquote(v) is v without a "%": tested inline (a function call per term saved)
            return [("iri", unquote(t.value) if "%" in t.value else t.value) if t.__class__ is IRI else key(t)
                    for t in terms]
        return [self.key(t) for t in terms]

    def column_keys(self, rows: Iterable[tuple[Term | None]]) -> list[Hashable]:
        """``self.keys(...)`` of the bound cells of one-cell rows (a one-column table), in one pass."""
        if self.links is not None or self.labels is not None:
            return [self.key(c) for (c,) in rows if c is not None]
        if self.mode == "lexical":
            return [c.value if c.__class__ is not BNode else "_:" + c.id for (c,) in rows if c is not None]
        if self.iri == "percent-decode" and not self.literal_vs_iri:
            key = self.key
            return [("iri", unquote(c.value) if "%" in c.value else c.value) if c.__class__ is IRI else key(c)
                    for (c,) in rows if c is not None]
        return [self.key(c) for (c,) in rows if c is not None]

    def text_keys(self, texts: list[str]) -> list[Hashable]:
        """``self.keys(guess_terms(texts))`` without making the terms (a bare-string answer's
        keys, see :class:`~kgqa.model.answer.TextColumn`): under lexical matching a term's key
        is its lexical form, which is the string itself."""
        if self.links is not None or self.labels is not None:
            return self.keys(guess_terms(texts))
        if self.mode == "lexical":
            return texts
        if self.iri == "percent-decode" and not self.literal_vs_iri:
            literal_key = self._literal_key
            return [("iri", unquote(t) if "%" in t else t) if t.startswith(_IRI_PREFIXES) and " " not in t
                    else literal_key(simple_literal(t)) for t in texts]
        return self.keys(guess_terms(texts))

    def key(self, term: Term | None) -> Hashable:
        """Comparison key of a term: two terms match iff their keys are equal."""
        if term is None:
            return ("unbound",)
        if self.labels is not None and isinstance(term, Literal) and term.datatype in (None, XSD_STRING, RDF_LANGSTRING):
            named = self.labels.iri(term.value)
            if named is not None:
                term = IRI(named)
        if self.mode == "lexical":
            if self.links is not None and isinstance(term, IRI):
                return self.links.map(term.value)
            return term.value if not isinstance(term, BNode) else "_:" + term.id
        if isinstance(term, IRI):
            v = unquote(term.value) if self.iri == "percent-decode" else term.value
            if self.links is not None:
                v = self.links.map(v)
            return ("text", v) if self.literal_vs_iri else ("iri", v)
        if isinstance(term, BNode):
            return ("bnode", term.id)
        return self._literal_key(term)

    def _literal_key(self, lit: Literal) -> Hashable:
        dt = lit.datatype
        text = lit.value
        if dt in NUMERIC_TYPES or (dt is None and lit.language is None and self.untyped_numbers):
            if self.numbers == "value":
                n = _number(text)
                if n is not None:
                    return ("num", n)
        if dt == XSD_BOOLEAN:
            b = _BOOL.get(text.strip().lower())
            if b is not None:
                return ("bool", b)
        if dt in DATE_TYPES or (dt is None and lit.language is None and self.untyped_numbers):
            if self.dates == "value":
                d = _date_key(text)
                if d is not None:
                    return d
        if self.case == "insensitive":
            text = text.casefold()
        if dt is not None and dt not in (XSD_STRING, RDF_LANGSTRING) and dt not in NUMERIC_TYPES and dt not in DATE_TYPES:
            return ("typed", text, dt)
        if self.language == "match" and lit.language:
            return ("text", text, lit.language.lower())
        return ("text", text)

DEFAULT_MATCHING = TermMatching()
LEXICAL_MATCHING = TermMatching(mode="lexical")
