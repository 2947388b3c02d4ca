"""The schema the generator grows templates from: classes with their sizes, relations with
their domain and range classes (with counts), literal datatypes of each relation, and KG
statistics used for commonness.

Two sources (Su et al. 2016, Sec. 3 assume typed relations):

- :func:`induce_schema`: from the KG alone. For each predicate, the classes of its subjects
  and of its IRI objects (an untyped resource is the pseudo-class :data:`UNTYPED`) and the
  datatypes of its literal objects, each with the number of triples, by aggregate queries;
- :func:`schema_from_ontology`: relations, domains and ranges declared in an RDFS/OWL file (any
  RDF syntax pyoxigraph reads; what it leaves undeclared, and literal datatypes, as the KG
  uses them), with class sizes and relation frequencies counted on the KG. Relations the KG
  never uses are dropped (nothing could ground them).

Schema vocabulary (``rdf:``, ``rdfs:``, ``owl:``, ``void:``, ``vann:`` terms), label and
alternative-label properties are never relations of a question; classes from those namespaces
are never node classes. Dataset metadata is left out: triples about an ontology, a VoID
dataset, a class or a property (subjects typed in :data:`META_SUBJECT_TYPES`: an ontology's
version, creator or licence is no question). Identifier-valued relations (ids, codes, e-mail
addresses, phone numbers, URLs by name; text values unique to each of at least
:data:`KEY_MIN_TRIPLES` subjects) lose their literal ends: an identifier is neither a topic nor
a quantity ("more than 4674578"). Blank nodes are never ends of a relation (a grounded node
must be writable in SPARQL); a path through them is one relation (:func:`blank_paths`), and a
relation whose plain strings are all dates or numbers is read as such (:func:`_cast_relation`). A relation between IRIs whose triples all share one subject or one object
(:data:`CONSTANT_MIN_TRIPLES`) is left out: "Which concept scheme is X a top concept of?" has
the same answer for every X. :func:`label_properties` finds the KG's label predicate when ``rdfs:label`` is absent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
import re

from kgqa.make.generate.graphquery import edge_patterns, path_cast, path_iri, path_steps
from kgqa.make.generate.kg import KGAccess, QueryFailed
from kgqa.make.generate.lexicon import RelText, parse_phrase
from kgqa.model.labels import ALT_LABEL_PREDICATES, LABEL_PREDICATES, PRIMARY_LABEL_PREDICATES
from kgqa.model.problems import InputError
from kgqa.model.terms import (DATE_TYPES, IRI, Literal, NUMERIC_TYPES, RDF, XSD_DATE, XSD_DECIMAL, XSD_INTEGER,
                              XSD_STRING)

RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
RDF_TYPE = RDF + "type"
#: Pseudo-class of IRIs without an rdf:type.
UNTYPED = ""
#: Datatype recorded for simple literals (no datatype, no language).
PLAIN = XSD_STRING

VOID = "http://rdfs.org/ns/void#"
META_NAMESPACES = (RDF, RDFS, OWL, "http://www.w3.org/ns/shacl#", VOID, "http://purl.org/vocab/vann/",
                   "http://creativecommons.org/ns#")
#: subjects of these types are schema or dataset metadata, never question material
META_SUBJECT_TYPES = (OWL + "Ontology", VOID + "Dataset", VOID + "Linkset", OWL + "Class", RDFS + "Class",
                      RDF + "Property", OWL + "ObjectProperty", OWL + "DatatypeProperty",
                      OWL + "AnnotationProperty", "http://www.w3.org/ns/shacl#NodeShape",
                      "http://www.w3.org/ns/shacl#PropertyShape")
_NOT_META = ("FILTER NOT EXISTS { ?s a ?meta_t . VALUES ?meta_t { "
             + " ".join(f"<{t}>" for t in META_SUBJECT_TYPES) + " } }")
#: words of a relation's local name that say its values are identifiers
ID_WORDS = frozenset(("id", "ids", "identifier", "code", "isbn", "issn", "doi", "email", "mail", "phone",
                      "telephone", "fax", "url", "uri", "iri", "homepage", "website", "zip", "postcode",
                      "orcid", "uuid", "guid", "sku", "wikidata", "viaf", "gnd"))
#: a text-valued relation with a different value for each of this many triples is a key
KEY_MIN_TRIPLES = 20
#: a relation between IRIs with this many triples, all from one subject or to one object (every
#: concept is top concept of the one scheme), is no question: its answer is always the same
CONSTANT_MIN_TRIPLES = 5
#: a value join needs a relation whose values are shared by at most this many subjects on average
MAX_SHARING = 20
LABEL_PROPERTIES = PRIMARY_LABEL_PREDICATES
ALT_LABEL_PROPERTIES = ALT_LABEL_PREDICATES
#: identity and mapping relations ("Which country is the same as India?" answers India)
IDENTITY_RELATIONS = (OWL + "sameAs", "http://schema.org/sameAs", "https://schema.org/sameAs", SKOS + "exactMatch",
                      SKOS + "closeMatch", SKOS + "relatedMatch", SKOS + "broadMatch", SKOS + "narrowMatch",
                      SKOS + "mappingRelation", "http://www.w3.org/2002/07/owl#equivalentClass")
EXCLUDED_RELATIONS = frozenset((*LABEL_PREDICATES, *ALT_LABEL_PROPERTIES, *IDENTITY_RELATIONS, RDFS + "comment",
                                SKOS + "definition", SKOS + "note", SKOS + "scopeNote", SKOS + "editorialNote",
                                SKOS + "historyNote", SKOS + "changeNote", SKOS + "example", SKOS + "notation",
                                "http://xmlns.com/foaf/0.1/depiction"))
#: words of a relation's local name that say its values are free text (never a topic nor a quantity)
TEXT_WORDS = frozenset(("comment", "description", "note", "notes", "definition", "abstract", "summary", "remark",
                        "remarks", "caption", "hint", "layout"))


def is_meta(iri: str) -> bool:
    return iri.startswith(META_NAMESPACES)


def name_words(iri: str) -> list[str]:
    """The lower-cased words of an IRI's local name (``addressCountryCode`` -> address,
    country, code)."""

    name = re.split(r"[#/:]", iri.rstrip("/#"))[-1]
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", name.lower()) if w]


def is_identifier_name(iri: str) -> bool:
    """Whether a relation's name says its values are identifiers or codes (``laureateId``,
    ``hisco_code``, ``number``, but not ``numberOfEmployees``) or free text (``comment``)."""
    words = name_words(iri)
    if any(w in ID_WORDS or w in TEXT_WORDS for w in words):
        return True
    return any(w in NUMBER_WORDS and (k + 1 == len(words) or words[k + 1] != "of") for k, w in enumerate(words))


#: "number", "no", "nr": a key unless followed by "of" ("number of employees" is a quantity)
NUMBER_WORDS = frozenset(("number", "no", "nr", "num", "notation", "key", "ref", "reference", "index", "serial"))


#: a predicate whose local name is one of these, with literal values, is a label candidate
LABEL_NAMES = ("label", "prefLabel", "name", "title")


def label_properties(kg: KGAccess, given: str | None = None) -> tuple[str, ...]:
    """The label predicates, most preferred first: ``given`` (``--label-predicate``); else, by
    coverage, the candidate (:data:`~kgqa.model.labels.LABEL_PREDICATES` and any predicate whose
    local name is ``label``, ``prefLabel``, ``name`` or ``title`` or ends in ``Name``/``_name``)
    with literal values on the most subjects among the entities that need names (subjects of a
    relation to another IRI, or objects of one); the others follow by coverage, then the usual
    ones, so every entity falls back through them (then its IRI) one by one."""
    if given:
        return (given, *(p for p in LABEL_PROPERTIES if p != given))
    known = " ".join(f"<{p}>" for p in PRIMARY_LABEL_PREDICATES)
    q = ("SELECT ?p (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s ?p ?l . FILTER(isIRI(?s) && isLiteral(?l)) "
         f"FILTER(?p IN ({known.replace(' ', ', ')}) || REGEX(STR(?p), \"[#/:](label|prefLabel|name|title)$|(Name|_name)$\")) "
         "FILTER EXISTS { { ?s ?r ?o . FILTER(isIRI(?o) && ?r != <" + RDF_TYPE + ">) } UNION "
         "{ ?o2 ?r2 ?s . FILTER(isIRI(?o2)) } } } GROUP BY ?p ORDER BY DESC(?n) ?p LIMIT 10")
    try:
        rows = [(r[0].value, _int(r[1])) for r in kg.select(q).rows if isinstance(r[0], IRI)]
    except QueryFailed:  # too large to count in time: the usual predicates, in their order
        return LABEL_PROPERTIES
    alt = set(ALT_LABEL_PREDICATES)
    ranked = [p for p, n in rows if n > 0 and p not in alt]
    return tuple(dict.fromkeys([*ranked, *LABEL_PROPERTIES]))


def value_kind(datatype: str) -> str:
    """``number``, ``date`` or ``text`` for a literal datatype."""
    if datatype in NUMERIC_TYPES:
        return "number"
    if datatype in DATE_TYPES:
        return "date"
    return "text"


@dataclass
class Relation:
    iri: str
    count: int = 0
    #: subject class -> triples
    domain: dict[str, int] = field(default_factory=dict)
    #: object class (IRI objects) -> triples
    range: dict[str, int] = field(default_factory=dict)
    #: literal datatype -> triples
    datatypes: dict[str, int] = field(default_factory=dict)
    #: distinct literal values (0: unknown or none)
    values: int = 0
    #: distinct subjects of its triples to IRIs (0: unknown): ``count`` close to it means one
    #: object per subject ("the capital of X"), more means several ("an element of X")
    subjects: int = 0
    #: distinct IRI objects (0: unknown)
    objects: int = 0

    def fan(self, side: str) -> float:
        """Triples per distinct object (``side`` "in": how many subjects share an object) or
        per distinct subject ("out"); 0 when unknown."""
        n = self.objects if side == "in" else self.subjects
        return self.count / n if n else 0.0

    @property
    def functional(self) -> bool:
        """Whether a subject has (about) one object: "the X of S" rather than "an X of S"."""
        return not self.subjects or self.count <= 1.1 * self.subjects

    @property
    def joinable(self) -> bool:
        """Whether a value join over this relation ("the same X as") is a question: its
        literal values are shared by at most :data:`MAX_SHARING` subjects on average (a
        currency shared by every price joins everything with everything)."""
        return self.values > 0 and self.count <= MAX_SHARING * self.values


@dataclass
class Schema:
    classes: dict[str, int]
    relations: dict[str, Relation]
    #: KG totals: triples, entity_degree (sum of entity degrees), entities, literal_triples, literals
    stats: dict[str, int] = field(default_factory=dict)
    source: str = "induced"

    def outgoing(self, cls: str) -> list[Relation]:
        return [r for k, r in sorted(self.relations.items()) if cls in r.domain]

    def incoming(self, cls: str, literal: bool) -> list[Relation]:
        if literal:
            return [r for k, r in sorted(self.relations.items()) if cls in r.datatypes]
        return [r for k, r in sorted(self.relations.items()) if cls in r.range]

    def summary(self) -> dict[str, int]:
        return {"classes": len(self.classes), "relations": len(self.relations),
                "literal_relations": sum(1 for r in self.relations.values() if r.datatypes)}


def untype_classes(schema: Schema, classes: Iterable[str]) -> None:
    """Merge ``classes`` (whose names have no words: ``GO_0003674`` without a label) into
    :data:`UNTYPED` in place: their instances become things ("What was created on ...?")
    rather than question nodes whose class the text cannot say."""
    gone = set(classes) - {UNTYPED}
    if not gone:
        return
    for r in schema.relations.values():
        for ends in (r.domain, r.range):
            moved = sum(ends.pop(c) for c in list(ends) if c in gone)
            if moved:
                ends[UNTYPED] = ends.get(UNTYPED, 0) + moved
    for c in gone:
        schema.classes.pop(c, None)


def _int(t) -> int:
    return int(t.value) if isinstance(t, Literal) else 0


def _iri(t) -> str | None:
    return t.value if isinstance(t, IRI) else None


def _relation_ok(p: str, exclude: frozenset[str]) -> bool:
    return not is_meta(p) and p not in EXCLUDED_RELATIONS and p not in exclude


def _class_ok(c: str) -> bool:
    return c == UNTYPED or not is_meta(c)


def _counts(kg: KGAccess, exclude: frozenset[str]) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    classes: dict[str, int] = {}
    for c, n in kg.select("SELECT ?c (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a ?c . FILTER(isIRI(?s) && isIRI(?c)) } GROUP BY ?c").rows:
        if _iri(c) and _class_ok(c.value):
            classes[c.value] = _int(n)
    relcount: dict[str, int] = {}
    for p, n in kg.select("SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p").rows:
        if _iri(p):
            relcount[p.value] = _int(n)
    stats: dict[str, int] = {"triples": sum(relcount.values())}
    row = kg.select("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o . FILTER(isIRI(?o)) }").rows
    iri_triples = _int(row[0][0]) if row else 0
    row = kg.select("SELECT (COUNT(DISTINCT ?e) AS ?n) WHERE { { ?e ?p ?o . FILTER(isIRI(?e)) } UNION { ?s ?p ?e . FILTER(isIRI(?e)) } }").rows
    stats["entities"] = _int(row[0][0]) if row else 0
    row = kg.select("SELECT (COUNT(DISTINCT ?o) AS ?n) WHERE { ?s ?p ?o . FILTER(isLiteral(?o)) }").rows
    stats["literals"] = _int(row[0][0]) if row else 0
    stats["literal_triples"] = stats["triples"] - iri_triples
    stats["entity_degree"] = stats["triples"] + iri_triples
    return classes, relcount, stats


def _literal_stats(kg: KGAccess) -> tuple[set[str], dict[str, int]]:
    """(keys, distinct literal values per relation). Keys are text-valued relations whose
    values are all different, on at least :data:`KEY_MIN_TRIPLES` triples (addresses, UUIDs),
    numbers excepted."""
    q = ("SELECT ?p (COUNT(*) AS ?n) (COUNT(DISTINCT ?o) AS ?d) WHERE { ?s ?p ?o . FILTER(isLiteral(?o)) } "
         "GROUP BY ?p")
    keys, values = set(), {}
    for p, n, d in kg.select(q).rows:
        if not _iri(p):
            continue
        values[p.value] = _int(d)
        if _int(n) >= KEY_MIN_TRIPLES and _int(n) == _int(d):
            dts = kg.select(f"SELECT DISTINCT (DATATYPE(?o) AS ?dt) WHERE {{ ?s <{p.value}> ?o }} LIMIT 5").rows
            if all(not _iri(r[0]) or value_kind(r[0].value) == "text" for r in dts):
                keys.add(p.value)
            elif all(_iri(r[0]) and r[0].value.endswith(INTEGER_TYPES) for r in dts) and _dense(kg, p.value, _int(n)):
                keys.add(p.value)  # integers, one per subject, packed in a range: serial numbers
    return keys, values


INTEGER_TYPES = ("#integer", "#int", "#long", "#nonNegativeInteger", "#positiveInteger", "#short",
                 "#unsignedInt", "#unsignedLong")


def _dense(kg: KGAccess, p: str, n: int) -> bool:
    """Whether the ``n`` distinct integer values of ``p`` lie in a range at most 4n wide (ids
    and ranks do; populations and years of many subjects spread wider)."""
    rows = kg.select(f"SELECT (MIN(?o) AS ?lo) (MAX(?o) AS ?hi) WHERE {{ ?s <{p}> ?o }}").rows
    try:
        lo, hi = int(rows[0][0].value), int(rows[0][1].value)
    except (IndexError, AttributeError, TypeError, ValueError):
        return False
    return hi - lo < 4 * n


def _iri_ends(kg: KGAccess, subjects: dict[str, tuple[int, int]] | None = None) -> list[tuple[str, dict[str, dict[str, int]]]]:
    """For each relation between IRIs: triples per subject class and per object class
    (:data:`UNTYPED` for the rest). Inner joins on ``rdf:type`` (an OPTIONAL per triple is
    slow on large KGs); triples whose subject is schema or dataset metadata are left out."""
    totals, constant = {}, set()
    for p, n, ds, do in kg.select("SELECT ?p (COUNT(*) AS ?n) (COUNT(DISTINCT ?s) AS ?ds) (COUNT(DISTINCT ?o) AS ?do) "
                                  "WHERE { ?s ?p ?o . FILTER(isIRI(?s) && isIRI(?o)) } GROUP BY ?p").rows:
        if _iri(p):
            totals[p.value] = _int(n)
            if subjects is not None:
                subjects[p.value] = (_int(ds), _int(do))
            if _int(n) >= CONSTANT_MIN_TRIPLES and min(_int(ds), _int(do)) == 1:
                constant.add(p.value)
    out: dict[str, dict[str, dict[str, int]]] = {p: {"s": {}, "o": {}} for p in totals}
    meta = set(META_SUBJECT_TYPES)
    for side, q in (("s", "SELECT ?p ?c (COUNT(*) AS ?n) WHERE { ?s ?p ?o . FILTER(isIRI(?o) && isIRI(?s)) ?s a ?c } GROUP BY ?p ?c"),
                    ("o", "SELECT ?p ?c (COUNT(*) AS ?n) WHERE { ?o a ?c . ?s ?p ?o . FILTER(isIRI(?s) && isIRI(?o)) } GROUP BY ?p ?c")):
        for p, c, n in kg.select(q).rows:
            if _iri(p) and _iri(c) and p.value in out:
                out[p.value][side][c.value] = _int(n)
    result = []
    for p, sides in sorted(out.items()):
        if p in constant:
            continue  # one subject or one object for all: every question has the same answer
        metan = sum(n for c, n in sides["s"].items() if c in meta)
        if metan and metan >= totals[p]:
            continue  # only about schema or dataset metadata
        for side in ("s", "o"):
            typed = {c: n for c, n in sides[side].items() if _class_ok(c) and c not in meta}
            rest = totals[p] - sum(sides[side].values())
            if rest > 0 or not typed:
                typed[UNTYPED] = max(rest, 1) if not typed else rest
            sides[side] = {c: n for c, n in typed.items() if n > 0}
        if sides["s"] and sides["o"]:
            result.append((p, sides))
    return result


def induce_schema(kg: KGAccess, exclude: Iterable[str] = ()) -> Schema:
    """The schema as the KG uses it (see the module docstring)."""
    ex = frozenset(exclude)
    classes, relcount, stats = _counts(kg, ex)
    rels: dict[str, Relation] = {}
    subjects: dict[str, tuple[int, int]] = {}
    for p, side in _iri_ends(kg, subjects):
        if not _relation_ok(p, ex):
            continue
        ds, do = subjects.get(p, (0, 0))
        r = rels.setdefault(p, Relation(p, relcount.get(p, 0), subjects=ds, objects=do))
        for c, n in side["s"].items():
            r.domain[c] = r.domain.get(c, 0) + n
        for c, n in side["o"].items():
            r.range[c] = r.range.get(c, 0) + n
    q_lit = ("SELECT ?p ?cs ?dt (COUNT(*) AS ?n) WHERE { ?s ?p ?o . FILTER(isIRI(?s) && isLiteral(?o)) "
             + _NOT_META + " BIND(DATATYPE(?o) AS ?dt) OPTIONAL { ?s a ?cs } } GROUP BY ?p ?cs ?dt")
    keys, values = _literal_stats(kg)
    for p, cs, dt, n in kg.select(q_lit).rows:
        if not _iri(p) or not _relation_ok(p.value, ex) or is_identifier_name(p.value) or p.value in keys:
            continue
        s_cls = cs.value if _iri(cs) else UNTYPED
        if not _class_ok(s_cls):
            continue
        d = dt.value if _iri(dt) else PLAIN
        r = rels.setdefault(p.value, Relation(p.value, relcount.get(p.value, 0)))
        r.domain[s_cls] = r.domain.get(s_cls, 0) + _int(n)
        r.datatypes[d] = r.datatypes.get(d, 0) + _int(n)
        r.values = values.get(p.value, 0)
    for r in blank_paths(kg, ex):
        rels.setdefault(r.iri, r)
    for r in [r for r in rels.values() if PLAIN in r.datatypes]:
        cast = _cast_relation(kg, r)
        if cast is not None:  # dates and numbers written as strings are compared as such
            rels[cast.iri] = cast
            del r.datatypes[PLAIN]
            if not r.datatypes and not r.range:
                del rels[r.iri]
    return Schema(classes, dict(sorted(rels.items())), stats, "induced")


#: lexical forms of plain strings read as dates or numbers (all of a relation's values must fit)
_DATE_RE, _INT_RE, _DEC_RE = r"^-?[0-9]{4}-[0-9]{2}-[0-9]{2}$", r"^-?[0-9]+$", r"^-?[0-9]+[.][0-9]+$"


def _cast_relation(kg: KGAccess, r: Relation) -> Relation | None:
    """The relation ``r`` with its plain-string values read as ``xsd:date``, ``xsd:integer`` or
    ``xsd:decimal`` when every one of them is written so (``"2013-01-01"``, ``"1884"``,
    ``"45.348367"``), or None. Integers that are keys (one per subject, packed in a range at most
    4n wide: serial numbers) are not read as numbers."""
    body = " ".join(edge_patterns("?s", r.iri, "?o", "c"))
    q = (f"SELECT (COUNT(*) AS ?n) (COUNT(DISTINCT ?o) AS ?d) (SUM(IF(REGEX(?o, \"{_DATE_RE}\"), 1, 0)) AS ?dt) "
         f"(SUM(IF(REGEX(?o, \"{_INT_RE}\"), 1, 0)) AS ?i) (SUM(IF(REGEX(?o, \"{_DEC_RE}\"), 1, 0)) AS ?de) "
         f"WHERE {{ {body} FILTER(isIRI(?s) && isLiteral(?o) && DATATYPE(?o) = <{PLAIN}>) }}")
    try:
        n, d, dt, i, de = (_int(t) for t in kg.select(q).rows[0])
    except (QueryFailed, IndexError):
        return None
    if n < 2:
        return None
    if dt == n:
        cast = XSD_DATE
    elif i == n:
        cast = XSD_INTEGER
        if d == n and n >= KEY_MIN_TRIPLES and _dense_cast(kg, body, n):
            return None
    elif i + de == n and de:
        cast = XSD_DECIMAL
    else:
        return None
    return Relation(path_iri(path_steps(r.iri), cast), n, domain=dict(r.domain), datatypes={cast: n},
                    subjects=r.subjects)


def _dense_cast(kg: KGAccess, body: str, n: int) -> bool:
    q = (f"SELECT (MIN(<{XSD_INTEGER}>(?o)) AS ?lo) (MAX(<{XSD_INTEGER}>(?o)) AS ?hi) WHERE {{ {body} "
         f"FILTER(isLiteral(?o) && DATATYPE(?o) = <{PLAIN}>) }}")
    try:
        lo, hi = (int(t.value) for t in kg.select(q).rows[0])
    except (QueryFailed, IndexError, AttributeError, TypeError, ValueError):
        return True
    return hi - lo < 4 * n


#: blank nodes a path relation passes at most (organs-it: organ, timed location, location,
#: address, city)
MAX_BLANK_DEPTH = 3


def _chain(depth: int) -> list[str]:
    """WHERE lines of an IRI ``?s`` and ``depth`` blank nodes ``?b1`` ... one after the other."""
    lines = ["?s ?p1 ?b1 . FILTER(isIRI(?s) && isBlank(?b1))"]
    for k in range(2, depth + 1):
        lines.append(f"?b{k - 1} ?p{k} ?b{k} . FILTER(isBlank(?b{k}))")
    return lines


def _path_pattern(depth: int) -> tuple[str, list[str]]:
    """The WHERE text of paths from an IRI ``?s`` through ``depth`` blank nodes to a non-blank
    ``?o``, and the step variables."""
    steps = [f"?p{k}" for k in range(1, depth + 1)] + ["?q"]
    return " ".join([*_chain(depth), f"?b{depth} ?q ?o . FILTER(!isBlank(?o))"]), steps


def _path_rows(kg: KGAccess, depth: int, extra: str, select: str, group: str = "") -> dict[str, list]:
    where, steps = _path_pattern(depth)
    sv = " ".join(steps)
    q = f"SELECT {sv} {select} WHERE {{ {where} {extra} }} GROUP BY {sv} {group}"
    out: dict[str, list] = {}
    for row in kg.select(q).rows:
        ps = row[:len(steps)]
        if all(_iri(p) for p in ps):
            out.setdefault(path_iri([p.value for p in ps]), []).append(row[len(steps):])
    return out


def _blank_chain(kg: KGAccess, depth: int) -> bool:
    """Whether some IRI reaches a chain of ``depth`` blank nodes one after the other."""
    return bool(kg.select(f"SELECT ?b{depth} WHERE {{ {' '.join(_chain(depth))} }} LIMIT 1").rows)


def _path_ok(rel: str, exclude: frozenset[str]) -> bool:
    """Whether no step is schema vocabulary and the last is a relation questions may use."""
    steps = path_steps(rel)
    return all(_relation_ok(p, exclude) or (k < len(steps) - 1 and not is_meta(p)) for k, p in enumerate(steps))


def blank_paths(kg: KGAccess, exclude: frozenset[str] = frozenset()) -> list[Relation]:
    """Relations through blank nodes: ``S <p> _:b . _:b <q> O`` (up to :data:`MAX_BLANK_DEPTH`
    blank nodes) from an IRI ``S`` to an IRI or literal ``O`` is one relation whose IRI is the
    path's (:func:`~kgqa.make.generate.graphquery.path_iri`); a blank node is never a topic
    nor an answer, the query passes it through a variable. Paths over schema vocabulary, a
    label or an identity relation are left out, as are identifier-valued and key literal ends
    and IRI ends that are constant (module docstring)."""
    out: list[Relation] = []
    for depth in range(1, MAX_BLANK_DEPTH + 1):
        totals = _path_rows(kg, depth, "", "(COUNT(*) AS ?n) (COUNT(DISTINCT ?s) AS ?ds) (COUNT(DISTINCT ?o) AS ?do) "
                            "(SUM(IF(isLiteral(?o), 1, 0)) AS ?nl)")
        if not totals and not _blank_chain(kg, depth):  # (a blank node may lead only to blank nodes)
            break
        subj = _path_rows(kg, depth, "?s a ?cs .", "?cs (COUNT(*) AS ?n)", "?cs")
        obj = _path_rows(kg, depth, "FILTER(isIRI(?o)) ?o a ?co .", "?co (COUNT(*) AS ?n)", "?co")
        lit = _path_rows(kg, depth, "FILTER(isLiteral(?o)) BIND(DATATYPE(?o) AS ?dt)",
                         "?dt (COUNT(*) AS ?n) (COUNT(DISTINCT ?o) AS ?d)", "?dt")
        for rel, [(n, ds, do, nl)] in sorted(totals.items()):
            r = _path_relation(rel, _int(n), _int(ds), _int(do), _int(nl), subj.get(rel, []), obj.get(rel, []),
                               lit.get(rel, []), exclude)
            if r is not None:
                out.append(r)
    return out


def _add_classes(counts: dict[str, int], rows: list, n: int) -> None:
    """Add the (class, count) ``rows`` to a domain or range ``counts`` of ``n`` ends; the ends
    no class covers (or all, when none has one) count as :data:`UNTYPED`."""
    for c, k in rows:
        if _iri(c) and _class_ok(c.value):
            counts[c.value] = counts.get(c.value, 0) + _int(k)
    rest = n - sum(counts.values())
    if rest > 0 or not counts:
        counts[UNTYPED] = max(rest, 1)


def _path_relation(rel: str, n: int, ds: int, do: int, nl: int, subj: list, obj: list, lit: list,
                   exclude: frozenset[str]) -> Relation | None:
    if not _path_ok(rel, exclude):
        return None
    last = path_steps(rel)[-1]
    r = Relation(rel, n, subjects=ds, objects=do if nl < n else 0)
    _add_classes(r.domain, subj, n)
    n_iri = n - nl
    if n_iri and not (n_iri >= CONSTANT_MIN_TRIPLES and min(ds, do) == 1):
        _add_classes(r.range, obj, n_iri)
    total = sum(_int(k) for _, k, _ in lit)
    distinct = sum(_int(d) for _, _, d in lit)
    key = total >= KEY_MIN_TRIPLES and total == distinct and all(not _iri(dt) or value_kind(dt.value) == "text"
                                                                  for dt, _, _ in lit)
    if nl and not is_identifier_name(last) and not key:
        for dt, k, _ in lit:
            d = dt.value if _iri(dt) else PLAIN
            r.datatypes[d] = r.datatypes.get(d, 0) + _int(k)
        r.values = distinct
    return r if (r.range or r.datatypes) else None


def schema_from_ontology(path: str | Path, kg: KGAccess, exclude: Iterable[str] = ()) -> Schema:
    """Relations and their domains and ranges as an RDFS/OWL file declares them; what it leaves
    open comes from the KG. A property counts as declared when the file types it
    (``rdf:Property``, ``owl:ObjectProperty``, ``owl:DatatypeProperty``) or gives it a domain or
    range. Its domain classes are the declared ones (an undeclared domain: the classes the KG
    shows for its subjects); its range classes likewise; a declared literal range
    (``xsd:*``, ``rdfs:Literal``, ``rdf:langString``) or an undeclared one takes the literal
    datatypes the KG really uses (a declared ``xsd:nonNegativeInteger`` is stored as
    ``xsd:integer`` by most loaders). Declared classes without instances in the KG, and
    relations the KG never uses, drop out; subclasses are not inferred (a KG must state the
    classes its individuals have, as DBpedia's does)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), "ontology file not found")
    with KGAccess.open(p) as onto:  # read through kgqa's engine, as every KG is
        return _from_declarations(onto, p.name, kg, exclude)


def _from_declarations(store: KGAccess, name: str, kg: KGAccess, exclude: Iterable[str]) -> Schema:
    observed = induce_schema(kg, exclude)
    classes = observed.classes
    declared: set[str] = set()
    types = " ".join(f"<{t}>" for t in (RDF + "Property", OWL + "ObjectProperty", OWL + "DatatypeProperty"))
    for sol in store.select(f"SELECT DISTINCT ?p WHERE {{ VALUES ?t {{ {types} }} ?p a ?t . FILTER(isIRI(?p)) }}").rows:
        declared.add(sol[0].value)
    domains: dict[str, list[str]] = {}
    ranges: dict[str, list[str]] = {}
    for sol in store.select(f"SELECT ?p ?d WHERE {{ ?p <{RDFS}domain> ?d . FILTER(isIRI(?p) && isIRI(?d)) }}").rows:
        domains.setdefault(sol[0].value, []).append(sol[1].value)
    for sol in store.select(f"SELECT ?p ?r WHERE {{ ?p <{RDFS}range> ?r . FILTER(isIRI(?p) && isIRI(?r)) }}").rows:
        ranges.setdefault(sol[0].value, []).append(sol[1].value)
    declared |= set(domains) | set(ranges)
    literal_ranges = ("http://www.w3.org/2001/XMLSchema#", RDFS + "Literal", RDF + "langString")
    rels: dict[str, Relation] = {}
    for prop in sorted(declared):
        obs = observed.relations.get(prop)
        if obs is None:
            continue  # unused (or excluded)
        r = Relation(prop, obs.count, values=obs.values, subjects=obs.subjects, objects=obs.objects)
        if prop in domains:
            r.domain = {d: classes[d] for d in sorted(domains[prop]) if _class_ok(d) and classes.get(d)}
        else:
            r.domain = dict(obs.domain)
        rg = ranges.get(prop)
        if rg is None:
            r.range, r.datatypes = dict(obs.range), dict(obs.datatypes)
        elif any(x.startswith(literal_ranges) for x in rg):
            r.datatypes = dict(obs.datatypes)
        else:
            r.range = {c: classes[c] for c in sorted(rg) if _class_ok(c) and classes.get(c)}
        if r.domain and (r.range or r.datatypes):
            rels[prop] = r
    return Schema(classes, rels, observed.stats, f"ontology:{name}")


#: last steps too vague to say alone: the step before names what they belong to ("location name")
GENERIC_STEPS = frozenset(("name", "label", "value", "title", "type", "kind"))
#: step nouns that make a path lead to a place: a last step that is a place noun reads "is in the
#: city X" ("Which organ is in the city Arignano?"), a name of such a step "is at the location X"
PLACE_STEPS = frozenset(("location", "address", "place", "site", "position", "venue", "timed location"))
PLACE_NOUNS = frozenset(("city", "town", "village", "municipality", "commune", "country", "region", "province",
                         "county", "state", "district", "locality", "place"))


def path_texts(relations: Iterable[str], get: Callable[[str], RelText]) -> dict[str, RelText]:
    """How each path relation through blank nodes reads: as its last step ("has full address"
    for organ / timed location / location / address / full address), a vague last step with
    the noun of the step before ("location name"); a path through a place step (a location, an
    address) to a place noun "is in the city X", to a place's name "is at the location X"
    (:data:`PLACE_STEPS`); the bound of a time-span at the end of a path is said by its noun
    ("has a start time of 1997": the begin of the blank node's span, not of the subject); a
    path whose steps have no words is opaque. ``get`` gives a plain relation's
    :class:`~kgqa.make.generate.lexicon.RelText`."""
    out: dict[str, RelText] = {}
    for rel in relations:
        steps = path_steps(rel)
        if len(steps) == 1 and not path_cast(rel):
            continue
        last = get(steps[-1])
        if last.opaque:
            out[rel] = RelText("opaque", "", source="path")
            continue
        if last.kind == "when":
            last = RelText("noun", " ".join(w.lower() for w in name_words(steps[-1])), source="path")
        before = [get(p) for p in steps[:-1]]
        placed = any(b.kind == "noun" and b.words.lower() in PLACE_STEPS for b in before)
        if placed and last.kind == "noun" and last.words.lower() in PLACE_NOUNS:
            out[rel] = RelText("prep", f"in {last.words.lower()}", source="path")
            continue
        if last.kind == "noun" and last.words.lower() in GENERIC_STEPS and len(steps) > 1:
            if before[-1].opaque or before[-1].kind != "noun":
                out[rel] = RelText("opaque", "", source="path")
                continue
            if before[-1].words.lower() in PLACE_STEPS and last.words.lower() in ("name", "label", "title"):
                out[rel] = RelText("prep", f"at {before[-1].words.lower()}", source="path")
                continue
            out[rel] = parse_phrase(f"has {before[-1].words} {last.words}", "path")
            continue
        out[rel] = replace(last, source="path", inverse=None)
    return out
