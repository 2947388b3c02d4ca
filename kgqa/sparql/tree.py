"""The typed result types and syntax tree of the SPARQL analyzer (:mod:`kgqa.sparql.analyzer`).

The parser (:mod:`kgqa.sparql.parser`) builds a :class:`QueryNode` tree of :class:`Group` s and
:class:`Expr` s, with triple patterns as :class:`TriplePattern` and the source spans of triples
statements as :class:`StatementSpan`; :mod:`kgqa.sparql.analyzer` derives the facts of a
:class:`~kgqa.sparql.analyzer.QueryInfo` from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Union

from kgqa.model.terms import BNode, IRI, Literal, RDF

__all__ = [
    "BgpElement", "OptionalElement", "MinusElement", "UnionElement", "GroupElement", "GraphElement",
    "ServiceElement", "FilterElement", "BindElement", "ValuesElement", "SubqueryElement", "RDF_TYPE", "RDF_FIRST", "RDF_REST", "RDF_NIL", "Var", "Path", "TriplePattern", "StatementSpan", "Projection", "Aggregate", "OrderCondition", "Filter", "ValuesBlock", "Expr", "Group", "QueryNode",
]

RDF_TYPE = IRI(RDF + "type")
RDF_FIRST = IRI(RDF + "first")
RDF_REST = IRI(RDF + "rest")
RDF_NIL = IRI(RDF + "nil")



# --------------------------------------------------------------------------- result types


@dataclass(frozen=True, slots=True)
class Var:
    """A SPARQL variable; ``name`` is without the ``?`` / ``$`` sigil."""

    name: str

    def n3(self) -> str:
        return "?" + self.name

    def __str__(self) -> str:
        return "?" + self.name


@dataclass(frozen=True, slots=True)
class Path:
    """A property path in predicate position. ``text`` is the path with every IRI written in
    full (``<http://...>``), ``a`` as ``rdf:type``, and operators as in SPARQL
    (``/ | ^ ! ? * +``, parentheses as written); ``iris`` the IRIs it mentions."""

    text: str
    iris: tuple[IRI, ...]

    def n3(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text


Node = Union[IRI, Literal, BNode, Var]


@dataclass(frozen=True, slots=True)
class TriplePattern:
    subject: Node
    predicate: Union[IRI, Var, Path]
    object: Node
    context: tuple = ()

    def n3(self) -> str:
        return f"{self.subject.n3()} {self.predicate.n3()} {self.object.n3()} ."

    @property
    def spo(self) -> tuple:
        """``(subject, predicate, object)`` without the context."""
        return (self.subject, self.predicate, self.object)


@dataclass(frozen=True, slots=True)
class StatementSpan:
    """Source spans of one triples statement of a group graph pattern (``s p o1, o2 ; p2 o3``),
    as token index ranges ``[a, b)`` into ``tokenize(query)`` (the parser's own tokens):
    ``subject``, and per ``;``-separated verb group ``(verb range, (object ranges, ...))``.
    ``simple``: the subject and every object are single terms (no ``[ ... ]`` property list or
    ``( ... )`` collection); ``context`` as in :class:`TriplePattern`. Only statements read
    without a parse error are recorded; none inside FILTER (NOT) EXISTS or a CONSTRUCT
    template (except the ``CONSTRUCT WHERE { ... }`` shorthand, whose template is the pattern)."""

    subject: tuple[int, int]
    groups: tuple[tuple[tuple[int, int], tuple[tuple[int, int], ...]], ...]
    simple: bool
    context: tuple = ()

    @property
    def span(self) -> tuple[int, int]:
        """Token range of the whole statement (subject to last object, no final ``.``)."""
        return (self.subject[0], self.groups[-1][1][-1][1])


class Stmt:
    """One triples statement being parsed: its subject and the groups of its property list."""

    __slots__ = ("subject", "groups", "simple")

    def __init__(self) -> None:
        self.subject: tuple[int, int] | None = None
        self.groups: list = []
        self.simple = True


@dataclass(frozen=True, slots=True)
class Projection:
    """One projected variable; ``expression`` is the source text of ``(expr AS ?v)``'s expr."""

    var: Var
    expression: str | None = None


@dataclass(frozen=True, slots=True)
class Aggregate:
    """``function`` upper-cased (COUNT, SUM, MIN, MAX, AVG, SAMPLE, GROUP_CONCAT); ``argument``
    the source text of the argument (``*`` for ``COUNT(*)``)."""

    function: str
    distinct: bool
    argument: str
    separator: str | None = None


@dataclass(frozen=True, slots=True)
class OrderCondition:
    """``expression``: source text of the sort key without ``ASC(...)``/``DESC(...)``;
    ``direction``: ``ASC`` or ``DESC``."""

    expression: str
    direction: str = "ASC"


@dataclass(frozen=True, slots=True)
class Filter:
    """A FILTER: ``text`` is the source text of the constraint (what follows ``FILTER``),
    ``operators`` the comparison operators it uses, in order (``= != < > <= >= IN NOT IN``;
    not those inside a nested EXISTS pattern's own FILTERs), ``context`` as for triples."""

    text: str
    operators: tuple[str, ...]
    context: tuple = ()


@dataclass(frozen=True, slots=True)
class ValuesBlock:
    """Inline data: variables and rows (``None`` for UNDEF)."""

    variables: tuple[Var, ...]
    rows: tuple[tuple[Any, ...], ...]
    context: tuple = ()


# --------------------------------------------------------------------------- syntax tree
# A light tree kept for canonicalisation (kgqa.sparql.canonical) and structure templates.


@dataclass(slots=True)
class Expr:
    """An expression: its source ``text`` and ``items``, a flat list of tokens, terms
    (IRI/Literal/Var) and nested :class:`Group` s (the patterns of EXISTS)."""

    text: str
    items: list


class BgpElement(NamedTuple):
    """Triple patterns of a basic graph pattern (triple blocks separated only by FILTERs)."""

    kind: str  # "bgp"
    triples: list


class OptionalElement(NamedTuple):
    kind: str  # "optional"
    group: "Group"


class MinusElement(NamedTuple):
    kind: str  # "minus"
    group: "Group"


class UnionElement(NamedTuple):
    kind: str  # "union"
    branches: list


class GroupElement(NamedTuple):
    kind: str  # "group"
    group: "Group"


class GraphElement(NamedTuple):
    kind: str  # "graph"
    term: Any
    group: "Group"


class ServiceElement(NamedTuple):
    kind: str  # "service"
    silent: bool
    term: Any
    group: "Group"


class FilterElement(NamedTuple):
    kind: str  # "filter"
    expr: "Expr"


class BindElement(NamedTuple):
    kind: str  # "bind"
    expr: "Expr"
    var: Any  # Var | None


class ValuesElement(NamedTuple):
    kind: str  # "values"
    block: "ValuesBlock | None"


class SubqueryElement(NamedTuple):
    kind: str  # "subquery"
    query: "QueryNode"


@dataclass(slots=True)
class Group:
    """A group graph pattern: elements in source order, each a typed named tuple whose first
    field ``kind`` names it (so ``el[0]`` / ``el[1]`` keep working): :class:`BgpElement`
    ``("bgp", [TriplePattern])``, :class:`OptionalElement` ``("optional", Group)``,
    :class:`MinusElement` ``("minus", Group)``, :class:`UnionElement` ``("union", [Group])``,
    :class:`GroupElement` ``("group", Group)``, :class:`GraphElement` ``("graph", term, Group)``,
    :class:`ServiceElement` ``("service", silent, term, Group)``, :class:`FilterElement`
    ``("filter", Expr)``, :class:`BindElement` ``("bind", Expr, Var)``, :class:`ValuesElement`
    ``("values", ValuesBlock)``, :class:`SubqueryElement` ``("subquery", QueryNode)``. Triple
    blocks separated only by FILTERs form one ``bgp`` (FILTER position inside a group is
    irrelevant in SPARQL)."""

    elements: list = field(default_factory=list)


@dataclass(slots=True)
class QueryNode:
    form: str = "unknown"
    modifier: str | None = None  # DISTINCT / REDUCED
    select_all: bool = False
    projection: list = field(default_factory=list)  # (Var, Expr | None)
    datasets: list = field(default_factory=list)  # (named: bool, IRI)
    template: list | None = None  # CONSTRUCT template triples
    describe: list = field(default_factory=list)
    where: Group | None = None
    group_by: list = field(default_factory=list)  # (Expr, Var | None)
    having: list = field(default_factory=list)  # Expr
    order: list = field(default_factory=list)  # (direction, Expr, explicit ASC/DESC)
    limit: int | None = None
    offset: int | None = None
    values: ValuesBlock | None = None
    aggregated: bool = False  # an aggregate occurs at this query level
    projection_tokens: list = field(default_factory=list)


# --------------------------------------------------------------------------- fast construction
# The parser makes many of these frozen, slotted dataclasses; their generated __init__ sets each
# field with object.__setattr__ (frozen), a call per field. These make the same objects (same
# type, same fields, equal, tests/sparql/test_sparql_analyzer.py compares them) by setting the slots
# through their descriptors.

_new = object.__new__


def _setters(cls: type, names: str) -> tuple:
    return tuple(cls.__dict__[n].__set__ for n in names.split())


_VAR_NAME, = _setters(Var, "name")
_TP_S, _TP_P, _TP_O, _TP_C = _setters(TriplePattern, "subject predicate object context")
_SS_S, _SS_G, _SS_SIMPLE, _SS_C = _setters(StatementSpan, "subject groups simple context")
_PJ_V, _PJ_E = _setters(Projection, "var expression")


def make_var(name: str) -> Var:
    """``Var(name)``."""
    v = _new(Var)
    _VAR_NAME(v, name)
    return v


def make_triple(s: Any, p: Any, o: Any, context: tuple) -> TriplePattern:
    """``TriplePattern(s, p, o, context)``."""
    t = _new(TriplePattern)
    _TP_S(t, s)
    _TP_P(t, p)
    _TP_O(t, o)
    _TP_C(t, context)
    return t


def make_statement(subject: tuple, groups: tuple, simple: bool, context: tuple) -> StatementSpan:
    """``StatementSpan(subject, groups, simple, context)``."""
    st = _new(StatementSpan)
    _SS_S(st, subject)
    _SS_G(st, groups)
    _SS_SIMPLE(st, simple)
    _SS_C(st, context)
    return st


def make_projection(var: Var, expression: str | None) -> Projection:
    """``Projection(var, expression)``."""
    pj = _new(Projection)
    _PJ_V(pj, var)
    _PJ_E(pj, expression)
    return pj


def make_query_node(form: str) -> QueryNode:
    """``QueryNode(form=form)``: every other field its default (new lists)."""
    n = _new(QueryNode)
    n.form = form
    n.modifier = None
    n.select_all = False
    n.projection = []
    n.datasets = []
    n.template = None
    n.describe = []
    n.where = None
    n.group_by = []
    n.having = []
    n.order = []
    n.limit = None
    n.offset = None
    n.values = None
    n.aggregated = False
    n.projection_tokens = []
    return n
