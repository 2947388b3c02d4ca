"""Tolerant SPARQL analyzer: what a query contains, even when it is broken or truncated.

:func:`analyze` runs a hand-written recursive-descent parser for the SPARQL 1.1 query and
update grammars over the tokens of :mod:`kgqa.sparql.lexer`. It never raises. On a syntax
error it records the first error (message and character offset), recovers (skips the
offending token, closes what is open at the end of the text) and keeps collecting, so a model's
output that lacks its closing ``}`` still yields all its triple patterns.

Definitions (exact):

- ``valid``: the text is a SPARQL 1.1 query (or update) under the grammar of the W3C
  recommendation, *where prefixes that are used but not declared are taken from*
  :data:`~kgqa.sparql.prefixes.STANDARD_PREFIXES` (or the ``prefixes`` argument). A prefix that is
  neither declared nor known makes the query invalid; ``undeclared_prefixes`` lists those taken
  from the table (empty: what a bare SPARQL engine accepts). Checked: the grammar,
  string escapes, built-in function arity, VALUES row lengths, IRIs (a scheme unless BASE is
  given, percent-encoding, one ``#``, numeric port), BCP 47 language tags, and that a query
  with GROUP BY or aggregates projects only grouped variables (no ``SELECT *``). Not checked:
  other semantic rules (scoping of ``AS`` variables, aggregates inside FILTER). Where
  pyoxigraph 0.5 is more lenient than the W3C grammar the analyzer follows it (keywords glued
  together such as ``SELECTDISTINCT``, ``PREFIXdbo:``, ``?o .5 :p ?x``), so that whatever
  pyoxigraph parses is valid (tested on all shared gold queries and their mutations). Nesting
  deeper than 64 levels is reported as an error. Tested to agree with pyoxigraph's parser on
  every shared gold query except one (``res:T._E._Lawrence``, a valid name pyoxigraph refuses).
- text that does not start like a query (``form == "unknown"``) is read as group content, so
  a bare ``?s :p :o . ?o :q ?x`` still yields its triple patterns.
- terms: prefixed names, ``a`` and relative IRIs (against ``BASE``) are expanded, so a prefixed
  name and the full IRI compare equal. An unresolvable prefixed name becomes ``IRI("pfx:local")``.
  Numbers become literals typed ``xsd:integer`` / ``xsd:decimal`` / ``xsd:double``, booleans
  ``xsd:boolean``. ``[]``, ``[ ... ]`` and collection nodes get fresh blank nodes
  ``BNode("anon#N")`` (``#`` cannot occur in a blank-node label, so they never clash).
  Collections ``( x y )`` are expanded to ``rdf:first`` / ``rdf:rest`` / ``rdf:nil`` triples.
- ``triples``: every triple pattern of the WHERE clause, in source order, with ``;`` and ``,``
  expanded, each with its ``context``: the path of enclosing constructs from the outside in,
  e.g. ``()``, ``("OPTIONAL",)``, ``("UNION", 1)`` (second branch), ``("OPTIONAL", "UNION",
  0)``; the constructs are ``OPTIONAL``, ``UNION`` (followed by the branch index), ``MINUS``,
  ``GRAPH``, ``SERVICE``, ``SUBQUERY``, ``EXISTS``, ``NOT EXISTS``. A predicate is an
  :class:`IRI`, a :class:`Var`, or a :class:`Path` (a property path other than a single IRI).
  CONSTRUCT templates and INSERT/DELETE data go to ``template`` (context ``("CONSTRUCT",)``,
  ``("INSERT",)``, ``("DELETE",)``), not to ``triples``.
- ``entities``: IRIs in subject or object position of ``triples`` and ``template`` (classes
  included) and IRIs in VALUES rows. ``predicates``: IRIs in predicate position, including every
  IRI inside a property path. ``classes``: objects of ``rdf:type`` / ``a``. ``literals``: literals
  in triple patterns and VALUES rows (not those inside FILTER/BIND expressions).
- ``iris``: every IRI the query uses as a term: triple patterns, paths, VALUES, expressions
  (including function IRIs such as ``xsd:integer(...)``), GRAPH/SERVICE/FROM/DESCRIBE. *Not*
  included: the IRIs of PREFIX/BASE declarations and literal datatypes (those are in
  ``datatypes``). All tuples of terms are de-duplicated, in first-occurrence order.
"""

from __future__ import annotations

import functools
import os
import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType
from collections.abc import Mapping

from kgqa.model.terms import IRI, Literal
from kgqa.sparql.parser import Parser, TooDeep
from kgqa.sparql.tree import (
    RDF_FIRST,
    RDF_NIL,
    RDF_REST,
    RDF_TYPE,
    Aggregate,
    Expr,
    Filter,
    Group,
    OrderCondition,
    Path,
    Projection,
    QueryNode,
    StatementSpan,
    TriplePattern,
    ValuesBlock,
    Var,
    make_projection,
)

# The tree types are re-exported: ``from kgqa.sparql.analyzer import Var, Path, ...`` keeps working.
__all__ = [
    "analyze", "QueryInfo", "Var", "Path", "TriplePattern", "Projection", "Aggregate",
    "OrderCondition", "Filter", "ValuesBlock", "Expr", "Group", "QueryNode", "StatementSpan",
    "RDF_TYPE", "RDF_FIRST", "RDF_REST", "RDF_NIL", "STRICT_ENV",
]


# --------------------------------------------------------------------------- QueryInfo


@dataclass(frozen=True)
class QueryInfo:
    """Everything :func:`analyze` found in a query. See the module docstring for definitions."""

    query: str
    valid: bool
    error: str | None
    error_offset: int | None
    form: str
    base: str | None
    prefixes: Mapping[str, str]  # declared (read-only: results are cached and shared)
    undeclared_prefixes: tuple[str, ...]
    unresolved_prefixes: tuple[str, ...]
    distinct: bool
    reduced: bool
    select_all: bool
    projection: tuple[Projection, ...]
    triples: tuple[TriplePattern, ...]
    template: tuple[TriplePattern, ...]
    entities: tuple[IRI, ...]
    predicates: tuple[IRI, ...]
    classes: tuple[IRI, ...]
    literals: tuple[Literal, ...]
    iris: tuple[IRI, ...]
    datatypes: tuple[IRI, ...]
    paths: tuple[Path, ...]
    values: tuple[ValuesBlock, ...]
    filters: tuple[Filter, ...]
    aggregates: tuple[Aggregate, ...]
    group_by: tuple[str, ...]
    having: tuple[str, ...]
    order_by: tuple[OrderCondition, ...]
    limit: int | None
    offset: int | None
    services: tuple
    graphs: tuple
    variables: tuple[Var, ...]
    features: frozenset[str]
    tree: QueryNode | None = field(default=None, compare=False, repr=False)
    projected_in: tuple[Var, ...] = field(default=(), compare=False, repr=False)
    #: source spans of the triples statements (see :class:`StatementSpan`)
    statements: tuple[StatementSpan, ...] = field(default=(), compare=False, repr=False)
    #: token indices of the top-level WHERE group's ``{`` and matching ``}`` (None: unclosed);
    #: None when the query has no WHERE group
    where_span: tuple[int, int | None] | None = field(default=None, compare=False, repr=False)

    @property
    def projected_variables(self) -> tuple[Var, ...]:
        return tuple(p.var for p in self.projection)

    @property
    def from_graphs(self) -> tuple[IRI, ...]:
        """The ``FROM`` graphs of the (top-level) query, in order: what the engine layer must
        honour or refuse (see :mod:`kgqa.execute.sandbox`)."""
        return tuple(iri for named, iri in (self.tree.datasets if self.tree is not None else ()) if not named)

    @property
    def from_named(self) -> tuple[IRI, ...]:
        """The ``FROM NAMED`` graphs of the (top-level) query, in order."""
        return tuple(iri for named, iri in (self.tree.datasets if self.tree is not None else ()) if named)

    @property
    def is_ask(self) -> bool:
        return self.form == "ASK"

    @property
    def is_select(self) -> bool:
        return self.form == "SELECT"


# --------------------------------------------------------------------------- entry point


def analyze(query: str, prefixes: dict[str, str] | None = None) -> QueryInfo:
    """Analyze a SPARQL query (or update, or any text). Never raises on any input (an analyzer
    bug is reported as an ``internal error``; it raises only under ``KGQA_ANALYZER_STRICT=1``).

    ``prefixes`` maps prefix names to namespaces used for prefixes the query uses without
    declaring them (taking precedence over :data:`STANDARD_PREFIXES`). Results are cached.
    """
    key = tuple(sorted(prefixes.items())) if prefixes else ()
    try:
        return _analyze_cached(query if isinstance(query, str) else str(query), key)
    except TypeError:  # unhashable prefix values
        return _analyze(str(query), dict(prefixes or {}))


@functools.lru_cache(maxsize=8192)
def _analyze_cached(query: str, prefixes: tuple) -> QueryInfo:
    return _analyze(query, dict(prefixes) if prefixes else None)


#: Set this environment variable to ``1`` (the test suite does) and an analyzer bug raises
#: instead of being reported as an ``internal error`` (invalid) result.
STRICT_ENV = "KGQA_ANALYZER_STRICT"


def _strict() -> bool:
    return os.environ.get(STRICT_ENV) == "1"


def _analyze(query: str, prefixes: dict | None) -> QueryInfo:
    """Parse (grammar, with the validity checks as it goes) then build the facts. A bug in
    either is never disguised as an ordinary parse error: the result's error says
    ``internal error in the analyzer`` (it replaces any parse error found before), and with
    ``KGQA_ANALYZER_STRICT=1`` it raises."""
    p = Parser(query, prefixes)  # tokenize is total
    node = None
    try:
        node = p.parse()
    except TooDeep:
        pass
    except RecursionError:
        p.fail("nesting too deep")
    except Exception as exc:  # a bug: labelled as such, raised under KGQA_ANALYZER_STRICT=1
        if _strict():
            raise
        p.error = f"internal error in the analyzer: {exc!r}"
        p.error_offset = p.tok[2] if p.i < len(p.toks) else len(query)
    if node is None:  # the parse stopped early
        node = QueryNode()
    try:
        return _build(query, p, node)
    except Exception as exc:  # a bug: labelled as such, raised under KGQA_ANALYZER_STRICT=1
        if _strict():
            raise
        return _empty(query, f"internal error in the analyzer: {exc!r}")


def _empty(query: str, error: str) -> QueryInfo:
    return QueryInfo(
        query, False, error, 0, "unknown", None, {}, (), (), False, False, False, (), (), (), (),
        (), (), (), (), (), (), (), (), (), (), (), (), None, None, (), (), (), frozenset(), None, (),
    )


# long function: one walk over the parse tree filling the analysis record, one branch per node kind
def _build(query: str, p: Parser, node: QueryNode) -> QueryInfo:
    # Terms de-duplicated in first-occurrence order, keyed by what their equality compares
    # (an IRI's value; a literal's value, datatype and language), which hashes in C, unlike
    # the dataclasses' own __hash__ and __eq__: the first object of each is kept.
    ents: dict = {}
    preds: dict = {}
    classes: dict = {}
    lits: dict = {}
    # the parser makes terms of these exact types (no subclasses): type() is isinstance here
    for t in (p.triples + p.template) if p.template else p.triples:
        s, pr, o = t.subject, t.predicate, t.object
        ts = type(s)
        if ts is IRI:
            if s.value not in ents:
                ents[s.value] = s
        elif ts is Literal:
            k = (s.value, s.datatype, s.language)
            if k not in lits:
                lits[k] = s
        tp = type(pr)
        to = type(o)
        if to is IRI:
            if o.value not in ents:
                ents[o.value] = o
            if tp is IRI and pr.value == _RDF_TYPE and o.value not in classes:  # pr == RDF_TYPE
                classes[o.value] = o
        elif to is Literal:
            k = (o.value, o.datatype, o.language)
            if k not in lits:
                lits[k] = o
        if tp is IRI:
            if pr.value not in preds:
                preds[pr.value] = pr
        elif tp is Path:
            for i in pr.iris:
                if i.value not in preds:
                    preds[i.value] = i
    for v in p.value_terms:
        tv = type(v)
        if tv is IRI:
            if v.value not in ents:
                ents[v.value] = v
        elif tv is Literal:
            k = (v.value, v.datatype, v.language)
            if k not in lits:
                lits[k] = v

    projected_in: dict = {}  # Vars by name (what their equality compares), in order
    if node.projection:
        projection = tuple([make_projection(v, e.text if e is not None else None) for v, e in node.projection])
        if node.form == "SELECT":
            for v, e in node.projection:
                if e is None:
                    if v.name not in projected_in:
                        projected_in[v.name] = v
                else:
                    for it in e.items:
                        if type(it) is Var and it.name not in projected_in:
                            projected_in[it.name] = it
    else:
        projection = ()
    # QueryInfo's fields in declaration order; the instance is made without the frozen
    # dataclass's __init__ (one object.__setattr__ per field, a third of _build's time): same
    # object, same attribute order (a test compares it with QueryInfo(**fields)). The dict is
    # a copy of _DEFAULTS (every field, in order: a copy of its table costs less than building
    # a dict of 38 keys), in which what differs from an empty query is set.
    fields = _DEFAULTS.copy()
    fields["query"] = query
    if p.error is not None:
        fields["valid"] = False
        fields["error"] = p.error
    if p.error_offset is not None:
        fields["error_offset"] = p.error_offset
    fields["form"] = node.form
    if p.base is not None:
        fields["base"] = p.base
    fields["prefixes"] = _prefixes(p)
    if p.undeclared:
        fields["undeclared_prefixes"] = tuple(p.undeclared)
    if p.unresolved:
        fields["unresolved_prefixes"] = tuple(p.unresolved)
    if node.modifier is not None:
        fields["distinct"] = node.modifier == "DISTINCT"
        fields["reduced"] = node.modifier == "REDUCED"
    if node.select_all:
        fields["select_all"] = node.select_all
    if projection:
        fields["projection"] = projection
    if p.triples:
        fields["triples"] = tuple(p.triples)
    if p.template:
        fields["template"] = tuple(p.template)
    if ents:
        fields["entities"] = tuple(ents.values())
    if preds:
        fields["predicates"] = tuple(preds.values())
    if classes:
        fields["classes"] = tuple(classes.values())
    if lits:
        fields["literals"] = tuple(lits.values())
    if p.iris:
        fields["iris"] = tuple(p.iris.values())
    if p.datatypes:
        fields["datatypes"] = tuple(p.datatypes)
    if p.paths:
        fields["paths"] = tuple(dict.fromkeys(p.paths))
    if p.values:
        fields["values"] = tuple(p.values)
    if p.filters:
        fields["filters"] = tuple(p.filters)
    if p.aggregates:
        fields["aggregates"] = tuple(p.aggregates)
    if node.group_by:
        fields["group_by"] = tuple([e.text for e, _ in node.group_by])
    if node.having:
        fields["having"] = tuple([e.text for e in node.having])
    if node.order:
        fields["order_by"] = tuple([OrderCondition(_strip_dir(e.text) if explicit else e.text, d)
                                    for d, e, explicit in node.order])
    if node.limit is not None:
        fields["limit"] = node.limit
    if node.offset is not None:
        fields["offset"] = node.offset
    if p.services:
        fields["services"] = tuple(p.services)
    if p.graphs:
        fields["graphs"] = tuple(p.graphs)
    if p.var_of:
        fields["variables"] = tuple(p.var_of.values())
    fields["features"] = frozenset(p.features) if p.features else _NO_FEATURES
    fields["tree"] = node
    if projected_in:
        fields["projected_in"] = tuple(projected_in.values())
    if p.statements:
        fields["statements"] = tuple(p.statements)
    if p.where_span is not None:
        fields["where_span"] = p.where_span
    info = _new_info(QueryInfo)
    _set_dict(info, "__dict__", fields)
    return info


_new_info = object.__new__
_NO_FEATURES: frozenset[str] = frozenset()
#: QueryInfo's fields in declaration order, each with its value for a query with nothing in it
_DEFAULTS = {
    "query": "", "valid": True, "error": None, "error_offset": None, "form": "unknown", "base": None,
    "prefixes": None, "undeclared_prefixes": (), "unresolved_prefixes": (), "distinct": False,
    "reduced": False, "select_all": False, "projection": (), "triples": (), "template": (),
    "entities": (), "predicates": (), "classes": (), "literals": (), "iris": (), "datatypes": (),
    "paths": (), "values": (), "filters": (), "aggregates": (), "group_by": (), "having": (),
    "order_by": (), "limit": None, "offset": None, "services": (), "graphs": (), "variables": (),
    "features": _NO_FEATURES, "tree": None, "projected_in": (), "statements": (), "where_span": None,
}
assert list(_DEFAULTS) == [f.name for f in dataclasses.fields(QueryInfo)]


def _prefixes(p: Parser) -> Mapping[str, str]:
    """QueryInfo.prefixes: a read-only copy of what the query declares, shared with the
    queries that declare the same in the same PREFIX prologue."""
    head = p.head
    if head is not None and head.prefixes is not None and p.declared == head.declared:
        return head.prefixes
    return MappingProxyType(dict(p.declared) if p.declared else {})
_set_dict = object.__setattr__


_RDF_TYPE = RDF_TYPE.value


def _strip_dir(text: str) -> str:
    """``(?x)`` -> ``?x`` for the sort key of ``DESC(?x)`` / ``ASC(?x)``."""
    t = text.strip()
    if t.startswith("(") and t.endswith(")"):
        return t[1:-1].strip()
    return t
