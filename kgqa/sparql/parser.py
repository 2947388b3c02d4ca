"""The tolerant recursive-descent parser behind :func:`kgqa.sparql.analyzer.analyze`.

It reads the SPARQL 1.1 query and update grammars over the tokens of
:mod:`kgqa.sparql.lexer` into the typed tree of :mod:`kgqa.sparql.tree` (with source spans of
triples statements and the WHERE group), applying the validity checks of
:mod:`kgqa.sparql.checks` as it goes; it records the first error (message, offset), recovers
and keeps reading. Facts (entities, predicates, ...) are derived from what it collected by
:mod:`kgqa.sparql.analyzer`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any
from urllib.parse import urljoin

from kgqa.model.terms import (
    BNode,
    IRI,
    Literal,
    XSD_BOOLEAN,
)
from kgqa.sparql.checks import (
    LANGTAG as _LANGTAG,
    grouping_problems,
    iri_problem as _iri_problem,
    number_literal as _number,
    unescape_local as _unescape_local,
)
from kgqa.sparql.lexer import AGGREGATES, BUILTINS, Token, tokenize_from, tokenize, unescape_string
from kgqa.sparql.prefixes import STANDARD_PREFIXES
from kgqa.sparql.tree import (
    BgpElement,
    BindElement,
    FilterElement,
    GraphElement,
    GroupElement,
    MinusElement,
    OptionalElement,
    ServiceElement,
    SubqueryElement,
    UnionElement,
    ValuesElement,
    RDF_FIRST,
    RDF_NIL,
    RDF_REST,
    RDF_TYPE,
    Var,
    Path,
    TriplePattern,
    StatementSpan,
    Stmt,
    Aggregate,
    Filter,
    ValuesBlock,
    Expr,
    Group,
    QueryNode,
    make_query_node,
    make_statement,
    make_triple,
    make_var,
)

MAX_DEPTH = 64  # nesting levels of groups, brackets, paths, collections (pyoxigraph allows more; never seen in practice)


# --------------------------------------------------------------------------- the parser


class TooDeep(Exception):
    """Nesting deeper than the parser follows (the analyzer reports the query as too deep)."""


_TERM_START = frozenset({"VAR", "IRIREF", "PNAME", "STRING", "NUMBER", "BOOLEAN", "BNODE", "ANON", "NIL"})
_VERB_START = frozenset({"VAR", "IRIREF", "PNAME", "A"})
_UPDATE_START = frozenset("INSERT DELETE LOAD CLEAR DROP CREATE ADD MOVE COPY WITH".split())
_REL_OPS = frozenset(("=", "!=", "<", ">", "<=", ">="))
_PATH_OPS = frozenset(("/", "|", "?", "*", "+"))  # may follow an IRI in a property path
_EOF_KIND = "EOF"


_new_token = tuple.__new__

# Leading PREFIX declarations (``PREFIX p: <iri>`` only), which a dataset's queries and a
# system's outputs repeat verbatim: their tokens are kept, keyed by their text. Each '<' of it
# starts an IRIREF token (only blanks, a keyword, a name and ':' come before) and each '>' ends
# one, so the tokens of the head are exactly the first tokens of the whole text, and the rest
# is read from the end of the head on.
_DECLARATION = r"\s*+[Pp][Rr][Ee][Ff][Ii][Xx]\s++(?:[A-Za-z][A-Za-z0-9_.\-]*+)?:\s*+<[^<>\"{}|^`\\\x00-\x20]*+>"
_PROLOGUE = re.compile(rf"(?:{_DECLARATION})++")
_DECLARATION_AT = re.compile(_DECLARATION).match


class _Head:
    """A PREFIX prologue's tokens and, once a parse has read it without error, the prefixes
    it declares (what :meth:`Parser.prologue` does with those tokens, nothing else)."""

    __slots__ = ("tokens", "declared", "prefixes")

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.declared: dict[str, str] | None = None
        # a read-only copy of ``declared``, shared by the results of the queries that
        # declare exactly these prefixes (QueryInfo.prefixes)
        self.prefixes: Mapping[str, str] | None = None


_NO_PREFIXES: Mapping[str, str] = MappingProxyType({})

_HEADS: dict[str, _Head] = {}
_HEADS_MAX = 1024
# the texts of the prologues in _HEADS (those of _START characters or more) by their first
# _START characters, at most 16 each: a text that starts with one of them, followed by no
# further declaration, has that prologue (what _PROLOGUE matches), found without reading it
# again; one no longer in _HEADS is ignored
_BY_START: dict[str, list[str]] = {}
_START = 32


def _tokens(text: str) -> tuple[list[Token], _Head | None, dict[int, int]]:
    """``tokenize(text)`` (a new list), reusing the tokens of a PREFIX prologue seen before,
    that prologue's :class:`_Head` (None if the text does not start with one), and the
    matching braces (the index of each ``{`` token mapped to that of the ``}`` closing it).
    The tokens after the prologue are plain tuples, each equal to its :class:`Token`; the
    parser reads them by index and makes a Token of those it hands out (:func:`_token`)."""
    braces: dict[int, int] = {}
    head = None
    for key in _BY_START.get(text[:_START], ()):
        if text.startswith(key) and _DECLARATION_AT(text, len(key)) is None:
            head = _HEADS.get(key)
            break
    if head is None:
        m = _PROLOGUE.match(text)
        if m is None:
            return tokenize_from(text, False, 0, braces, 0, True), None, braces
        key = m.group()
        head = _HEADS.get(key)
        if head is None:
            if len(_HEADS) >= _HEADS_MAX:
                _HEADS.clear()
            head = _HEADS[key] = _Head(tokenize(key))
            if len(key) >= _START:
                if len(_BY_START) >= _HEADS_MAX:
                    _BY_START.clear()
                same = _BY_START.setdefault(key[:_START], [])
                if key not in same and len(same) < 16:
                    same.append(key)
    head_tokens = head.tokens  # a prologue has no braces
    return head_tokens + tokenize_from(text, False, len(key), braces, len(head_tokens), True), head, braces


# IRIs met so far, shared between parses (they are immutable and benchmarks repeat them);
# emptied when it reaches _IRIS_MAX entries
_IRIS: dict[str, IRI] = {}
_IRIS_MAX = 65536


def _new_iri(value: str) -> IRI:
    if len(_IRIS) >= _IRIS_MAX:
        _IRIS.clear()
    iri = _IRIS[value] = IRI(value)
    return iri


def _token(t: tuple) -> Token:
    """``t`` as a :class:`Token`: the parser's tokens are plain tuples (see :func:`_tokens`),
    those it hands out (in expressions, projections) Tokens."""
    return t if type(t) is Token else _new_token(Token, t)


def _describe(tok: Token) -> str:
    if tok[0] == _EOF_KIND:
        return "end of query"
    if tok[0] in ("KEYWORD", "PUNCT", "A", "NIL", "ANON"):
        return repr(tok[1])
    return f"{tok[0]} {tok[1]!r}"


class Parser:
    """The recursive-descent SPARQL parser over a token list (used by :mod:`kgqa.sparql.analyzer`)."""

    # slots: attribute access is faster, and an instance has more attributes than the
    # shared-key dict of an ordinary instance holds
    __slots__ = (
        "text", "head", "toks", "i", "extra", "error", "error_offset", "base", "declared",
        "undeclared", "unresolved", "ctx", "depth", "bnodes", "in_template", "cur_bgp", "cur_ops",
        "cur_query", "triples", "template", "iris", "datatypes", "value_terms", "paths", "values",
        "filters", "aggregates", "services", "graphs", "var_of", "features", "term_at",
        "group_at", "statements", "nerrors", "where_span", "template_is_pattern", "brace_match",
    )

    def __init__(self, text: str, extra: dict[str, str] | None):
        self.text = text
        toks, self.head, self.brace_match = _tokens(text)
        toks.append((_EOF_KIND, "", len(text), len(text)))
        self.toks = toks
        self.i = 0
        self.extra = extra or _NO_PREFIXES  # read only
        self.error: str | None = None
        self.error_offset: int | None = None
        self.base: str | None = None
        self.declared: dict[str, str] = {}
        # what few queries have starts as () and becomes a list or dict when first added to
        self.undeclared: dict[str, None] | tuple = ()
        self.unresolved: dict[str, None] | tuple = ()
        self.ctx: tuple = ()
        self.depth = 0
        self.bnodes = 0
        self.in_template: tuple | None = None
        self.cur_bgp: list | None = None
        self.cur_ops: list | None = None
        self.cur_query: QueryNode | None = None
        # collected
        self.triples: list[TriplePattern] = []
        self.template: list[TriplePattern] | tuple = ()
        self.iris: dict[str, IRI] = {}  # by value (the first of equal IRIs), in order
        self.datatypes: dict[IRI, None] | tuple = ()
        self.value_terms: list | tuple = ()
        self.paths: list[Path] | tuple = ()
        self.values: list[ValuesBlock] | tuple = ()
        self.filters: list[Filter] | tuple = ()
        self.aggregates: list[Aggregate] | tuple = ()
        self.services: dict | tuple = ()
        self.graphs: dict | tuple = ()
        self.var_of: dict[str, Var] = {}  # one Var per name (they are immutable), in order
        self.features: set[str] = set()
        self.term_at: dict[int, tuple[int, Any]] = {}
        self.group_at: dict[int, tuple[int, Group]] = {}
        self.statements: list[StatementSpan] = []
        self.nerrors = 0  # every fail() call, not only the first error
        self.where_span: tuple[int, int | None] | None = None
        self.template_is_pattern = False

    # ------------------------------------------------------------------ helpers

    @property
    def tok(self) -> tuple:
        """The token at the cursor (a plain tuple, see :func:`_tokens`)."""
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else self.toks[-1]

    def advance(self) -> Token:
        t = self.toks[self.i]
        if t[0] != _EOF_KIND:
            self.i += 1
        return t

    def at_p(self, value: str) -> bool:
        t = self.toks[self.i]
        return t[0] == "PUNCT" and t[1] == value

    def at_kw(self, value: str) -> bool:
        t = self.toks[self.i]
        return t[0] == "KEYWORD" and t[1] == value

    def fail(self, message: str, tok: Token | None = None) -> None:
        self.nerrors += 1
        if self.error is not None:
            return
        tok = tok or self.toks[self.i]
        off = tok[2]
        line = self.text.count("\n", 0, off) + 1
        col = off - (self.text.rfind("\n", 0, off) + 1) + 1
        found = _describe(tok)
        if tok[0] == _EOF_KIND:
            message += " (the query is truncated)"
        self.error = f"{message}, found {found} at offset {off} (line {line}, column {col})"
        self.error_offset = off

    def expect_p(self, value: str, what: str | None = None) -> bool:
        if self.at_p(value):
            self.i += 1
            return True
        self.fail(f"expected {what or repr(value)}")
        return False

    def expect_kw(self, value: str) -> bool:
        if self.at_kw(value):
            self.i += 1
            return True
        self.fail(f"expected {value}")
        return False

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"nesting deeper than {MAX_DEPTH} levels")
            raise TooDeep

    def source(self, start: int, end: int) -> str:
        """Source text of tokens[start:end]."""
        if end <= start:
            return ""
        return self.text[self.toks[start][2] : self.toks[end - 1][3]]

    def fresh_bnode(self) -> BNode:
        self.bnodes += 1
        return BNode(f"anon#{self.bnodes}")

    def var(self, name: str) -> Var:
        v = self.var_of.get(name)
        if v is None:
            v = self.var_of[name] = make_var(name)
        return v

    def skip_to_close(self) -> None:
        """Error recovery inside parentheses: skip to just after the ``)`` closing the current
        level, or stop before ``}`` / the end."""
        depth = 0
        while True:
            t = self.toks[self.i]
            if t[0] == _EOF_KIND:
                return
            if t[0] == "PUNCT":
                if t[1] == "(":
                    depth += 1
                elif t[1] == ")":
                    self.i += 1
                    if depth == 0:
                        return
                    depth -= 1
                    continue
                elif t[1] == "}" or t[1] == "{":
                    return
            self.i += 1

    # ------------------------------------------------------------------ terms

    def iri_of(self, t: Token) -> IRI:
        if t[0] == "IRIREF":
            value = t[1]
            problem = _iri_problem(value)
            if problem == "relative":
                if self.base is None:
                    self.fail("relative IRI without BASE (an IRI needs a scheme such as 'http:')", t)
                else:
                    try:
                        value = urljoin(self.base, value)
                    except ValueError:
                        self.fail("IRI cannot be resolved against BASE", t)
            elif problem is not None:
                self.fail(problem, t)
            iri = _IRIS.get(value)
            return iri if iri is not None else _new_iri(value)
        text = t[1]
        pfx, _, local = text.partition(":")
        if "\\" in local:
            local = _unescape_local(local)
        ns = self.declared.get(pfx)
        if ns is None:
            ns = self.extra.get(pfx)
            if ns is None:
                ns = STANDARD_PREFIXES.get(pfx)
            if pfx not in self.undeclared:
                if not self.undeclared:
                    self.undeclared = {}
                self.undeclared[pfx] = None
            if ns is None:
                if pfx not in self.unresolved:
                    if not self.unresolved:
                        self.unresolved = {}
                    self.unresolved[pfx] = None
                    self.fail(f"undeclared prefix {pfx!r}", t)
                return IRI(f"{pfx}:{local}")
        value = ns + local
        iri = _IRIS.get(value)
        return iri if iri is not None else _new_iri(value)

    def use_iri(self, iri: IRI) -> IRI:
        if iri.value not in self.iris:
            self.iris[iri.value] = iri
        return iri

    def literal(self) -> Literal | None:
        """STRING (LANGTAG | ^^ iri)? / NUMBER / BOOLEAN / signed NUMBER at the cursor."""
        t = self.toks[self.i]
        if t[0] == "STRING":
            self.i += 1
            value, err = unescape_string(t[1])
            if err:
                self.fail(err, t)
            nxt = self.toks[self.i]
            if nxt[0] == "LANGTAG":
                self.i += 1
                if not _LANGTAG.match(nxt[1]):
                    self.fail("invalid language tag (BCP 47)", nxt)
                return Literal(value, None, nxt[1])
            if nxt[0] == "PUNCT" and nxt[1] == "^^":
                self.i += 1
                d = self.toks[self.i]
                if d[0] in ("IRIREF", "PNAME"):
                    self.i += 1
                    dt = self.iri_of(d)
                    if not self.datatypes:
                        self.datatypes = {}
                    self.datatypes[dt] = None
                    return Literal(value, dt.value)
                self.fail("expected a datatype IRI after '^^'")
            return Literal(value)
        if t[0] == "NUMBER":
            self.i += 1
            return _number(t[1])
        if t[0] == "BOOLEAN":
            self.i += 1
            return Literal(t[1], XSD_BOOLEAN)
        if t[0] == "PUNCT" and t[1] in ("+", "-") and self.peek()[0] == "NUMBER":
            self.i += 2
            lit = _number(self.toks[self.i - 1][1])
            return Literal(("-" if t[1] == "-" else "") + lit.value, lit.datatype)
        return None

    def var_or_term(self) -> Any:
        """Var | GraphTerm at the cursor, or None (nothing consumed)."""
        t = self.toks[self.i]
        k = t[0]
        if k == "VAR":
            self.i += 1
            return self.var(t[1])
        if k == "IRIREF" or k == "PNAME":
            self.i += 1
            iri = self.iri_of(t)
            if iri.value not in self.iris:
                self.iris[iri.value] = iri
            return iri
        if k == "BNODE":
            self.i += 1
            return BNode(t[1])
        if k == "ANON":
            self.i += 1
            return self.fresh_bnode()
        if k == "NIL":
            self.i += 1
            return self.use_iri(RDF_NIL)
        return self.literal()

    def var_or_iri(self) -> Any:
        t = self.toks[self.i]
        if t[0] == "VAR":
            self.i += 1
            return self.var(t[1])
        if t[0] in ("IRIREF", "PNAME"):
            self.i += 1
            return self.use_iri(self.iri_of(t))
        self.fail("expected a variable or an IRI")
        return None

    def iri(self) -> IRI | None:
        t = self.toks[self.i]
        if t[0] in ("IRIREF", "PNAME"):
            self.i += 1
            return self.use_iri(self.iri_of(t))
        self.fail("expected an IRI")
        return None

    # ------------------------------------------------------------------ prologue

    def prologue(self) -> None:
        toks = self.toks
        head = self.head
        record = None  # where the head's tokens end, if what they declare is to be kept
        if head is not None and self.i == 0 and self.nerrors == 0 and self.base is None and not self.declared:
            if head.declared is not None:  # read before without error: the same again
                self.declared.update(head.declared)
                self.i = len(head.tokens)
            else:
                record = len(head.tokens)
        while True:
            if self.i == record:
                if self.nerrors == 0:
                    head.declared = dict(self.declared)
                    head.prefixes = MappingProxyType(dict(self.declared))
                record = None
            t = toks[self.i]
            k = t[0]
            if k == "KEYWORD":
                if t[1] == "BASE":
                    self.i += 1
                    t = toks[self.i]
                    if t[0] == "IRIREF":
                        self.i += 1
                        self.base = urljoin(self.base, t[1]) if self.base else t[1]
                    else:
                        self.fail("expected an IRI after BASE")
                    continue
                if t[1] != "PREFIX":
                    return
                self.i += 1
                t = toks[self.i]
            elif k == "PNAME" and t[1][:6].upper() == "PREFIX" and t[1].endswith(":") \
                    and t[1].count(":") == 1:
                # 'PREFIXdbo:' -- pyoxigraph reads 'PREFIX dbo:'
                t = Token("PNAME", t[1][6:], t[2] + 6, t[3])
            else:
                return
            if t[0] == "PNAME" and t[1].endswith(":") and t[1].count(":") == 1:
                self.i += 1
                iri_tok = toks[self.i]
                if iri_tok[0] == "IRIREF":
                    self.i += 1
                    self.declared[t[1][:-1]] = self.iri_of(iri_tok).value
                else:
                    self.fail("expected an IRI in PREFIX declaration")
            else:
                self.fail("expected a prefix name ending in ':' after PREFIX")
                if t[0] in ("PNAME", "ERROR"):
                    self.i += 1
                if toks[self.i][0] == "IRIREF":
                    self.i += 1

    # ------------------------------------------------------------------ top level

    def parse(self) -> QueryNode:
        self.prologue()
        t = self.toks[self.i]
        node: QueryNode
        if t[0] == "KEYWORD" and t[1] in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
            node = self.query()
            if self.at_kw("VALUES"):
                self.i += 1
                node.values = self.data_block()
        elif t[0] == "KEYWORD" and t[1] in _UPDATE_START:
            node = make_query_node("UPDATE")
            self.update()
        else:
            node = make_query_node("unknown")
            if t[0] == _EOF_KIND:
                self.fail("empty query: expected SELECT, ASK, CONSTRUCT, DESCRIBE or an update")
            else:
                self.fail("expected SELECT, ASK, CONSTRUCT, DESCRIBE or an update")
        if self.toks[self.i][0] != _EOF_KIND:
            if node.form != "unknown":
                self.fail("unexpected text after the end of the query")
            self.harvest(node)
        return node

    def harvest(self, node: QueryNode) -> None:
        """Recovery: read whatever is left as group content, to collect its patterns."""
        group = Group()
        while self.toks[self.i][0] != _EOF_KIND:
            before = self.i
            if self.at_p("}"):
                self.i += 1
                continue
            if self.toks[self.i][0] == "KEYWORD" and self.toks[self.i][1] in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
                sub = self.query()
                if node.form == "unknown":
                    node.form = sub.form
                    node.where = sub.where
                continue
            self.group_sub(group)
            if self.i == before:
                self.i += 1
        if node.where is None and group.elements:
            node.where = group

    def query(self) -> QueryNode:
        t = self.advance()
        node = make_query_node(t[1])
        saved_query, self.cur_query = self.cur_query, node
        try:
            self.query_body(t, node)
        finally:
            self.cur_query = saved_query
        if node.group_by or node.aggregated:  # else grouping_problems has nothing to say
            for message, tok in grouping_problems(node, t):
                self.fail(message, tok)
        return node

    def query_body(self, t: Token, node: QueryNode) -> None:
        if t[1] == "SELECT":
            self.select_clause(node)
            self.datasets(node)
            self.where_clause(node)
        elif t[1] == "ASK":
            self.datasets(node)
            self.where_clause(node)
        elif t[1] == "CONSTRUCT":
            if self.at_p("{"):
                node.template = self.template_block(("CONSTRUCT",))
                self.datasets(node)
                self.where_clause(node)
            else:
                self.datasets(node)
                if self.expect_kw("WHERE"):
                    self.mark_where()
                    self.template_is_pattern = True
                    node.template = self.template_block(("CONSTRUCT",))
                    self.template_is_pattern = False
                    node.where = Group([BgpElement("bgp", list(node.template))])
        else:  # DESCRIBE
            if self.at_p("*"):
                self.i += 1
                node.select_all = True
            else:
                while self.toks[self.i][0] in ("VAR", "IRIREF", "PNAME"):
                    node.describe.append(self.var_or_iri())
                if not node.describe:
                    self.fail("expected variables, IRIs or '*' after DESCRIBE")
            self.datasets(node)
            if self.at_kw("WHERE") or self.at_p("{"):
                self.where_clause(node)
        self.solution_modifiers(node)

    def datasets(self, node: QueryNode) -> None:
        """``FROM [NAMED] iri`` clauses; also glued as pyoxigraph reads them: ``FROMex:g``,
        ``FROMNAMEDex:g`` and ``FROM NAMEDex:g`` (when ``NAMEDex:`` is not a declared prefix)."""
        while True:
            t = self.toks[self.i]
            if t[0] == "KEYWORD" and t[1] == "FROM":
                self.i += 1
                named = False
                if self.at_kw("NAMED"):
                    self.i += 1
                    named = True
                g = self.toks[self.i]
                if not named and g[0] == "PNAME" and g[1][:5].upper() == "NAMED" \
                        and g[1].split(":", 1)[0] not in self.declared:
                    self.i += 1
                    node.datasets.append((True, self.use_iri(self.iri_of(self.glued(g, 5)))))
                    continue
                iri = self.iri()
                if iri is not None:
                    node.datasets.append((named, iri))
            elif t[0] == "PNAME" and t[1][:4].upper() == "FROM" and t[1].split(":", 1)[0] not in self.declared:
                self.i += 1
                rest = self.glued(t, 4)
                named = rest[1][:5].upper() == "NAMED" and rest[1].split(":", 1)[0] not in self.declared
                node.datasets.append((named, self.use_iri(self.iri_of(self.glued(rest, 5) if named else rest))))
            else:
                return

    @staticmethod
    def glued(t: Token, k: int) -> Token:
        """The prefixed name after the first ``k`` characters of a PNAME token (``FROMex:g``)."""
        return Token("PNAME", t[1][k:], t[2] + k, t[3])

    def mark_where(self) -> None:
        """Record the first WHERE group met (the top-level one: it is entered before any
        nested query's)."""
        if self.where_span is None and self.at_p("{"):
            self.where_span = (self.i, self.brace_match.get(self.i))

    def where_clause(self, node: QueryNode) -> None:
        t = self.toks[self.i]
        if t[0] == "KEYWORD" and t[1] == "WHERE":
            self.i += 1
            t = self.toks[self.i]
        if self.where_span is None and t[0] == "PUNCT" and t[1] == "{":  # mark_where
            self.where_span = (self.i, self.brace_match.get(self.i))
        node.where = self.group_graph_pattern()

    def select_clause(self, node: QueryNode) -> None:
        toks = self.toks
        t = toks[self.i]
        if t[0] == "KEYWORD" and (t[1] == "DISTINCT" or t[1] == "REDUCED"):
            node.modifier = self.advance()[1]
            t = toks[self.i]
        if t[0] == "PUNCT" and t[1] == "*":
            self.i += 1
            node.select_all = True
            return
        while True:
            t = toks[self.i]
            if t[0] == "VAR":
                self.i += 1
                node.projection.append((self.var(t[1]), None))
                node.projection_tokens.append(_token(t))
            elif t[0] == "PUNCT" and t[1] == "(":
                self.i += 1
                self.enter()
                expr = self.expression()
                if self.expect_kw("AS"):
                    v = self.toks[self.i]
                    if v[0] == "VAR":
                        self.i += 1
                        node.projection.append((self.var(v[1]), expr))
                        node.projection_tokens.append(_token(v))
                    else:
                        self.fail("expected a variable after AS")
                if not self.expect_p(")"):
                    self.skip_to_close()
                self.depth -= 1
            elif t[0] == "KEYWORD" and (t[1] in AGGREGATES or t[1] in BUILTINS):
                # Virtuoso dialect: SELECT COUNT(?x) / SELECT DISTINCT COUNT(?x) without AS
                self.fail("expected a variable, '(' or '*' in SELECT (an expression needs '(... AS ?var)')")
                self.expression()
            elif t[0] in ("IRIREF", "PNAME") and self.peek()[0] == "PUNCT" and self.peek()[1] == "(":
                self.fail("expected a variable, '(' or '*' in SELECT (an expression needs '(... AS ?var)')")
                self.expression()
            elif t[0] == "KEYWORD" and t[1] == "AS" and self.peek()[0] == "VAR":
                # Virtuoso dialect: SELECT COUNT(?x) AS ?c (no parentheses); read on to WHERE
                self.fail("expected a variable, '(' or '*' in SELECT (an expression needs '(... AS ?var)')")
                self.i += 2
            else:
                break
        if not node.projection and not node.select_all:
            self.fail("expected a variable, '(' or '*' in SELECT")

    # long function: a grammar rule of the SPARQL 1.1 grammar with its alternatives in the spec's order
    def solution_modifiers(self, node: QueryNode) -> None:
        if self.toks[self.i][0] != "KEYWORD":  # none follows
            return
        if self.at_kw("GROUP"):
            self.i += 1
            self.expect_kw("BY")
            self.features.add("GROUP BY")
            while True:
                t = self.toks[self.i]
                start = self.i
                if t[0] == "VAR":
                    self.i += 1
                    self.term_at[start] = (self.i, self.var(t[1]))
                    node.group_by.append((self.make_expr(start, self.i), None))
                elif t[0] == "PUNCT" and t[1] == "(":
                    self.i += 1
                    self.enter()
                    e = self.expression()
                    alias = None
                    if self.at_kw("AS"):
                        self.i += 1
                        if self.toks[self.i][0] == "VAR":
                            alias = self.var(self.advance()[1])
                        else:
                            self.fail("expected a variable after AS")
                    if not self.expect_p(")"):
                        self.skip_to_close()
                    self.depth -= 1
                    node.group_by.append((e, alias))
                elif t[0] in ("KEYWORD", "IRIREF", "PNAME") and (t[0] != "KEYWORD" or t[1] in BUILTINS or t[1] in AGGREGATES or t[1] in ("NOT", "EXISTS")):
                    e = self.expression_at(self.primary)
                    if self.i == start:  # NOT without EXISTS: an error, nothing read
                        break
                    node.group_by.append((e, None))
                else:
                    break
            if not node.group_by:
                self.fail("expected a grouping condition after GROUP BY")
        if self.at_kw("HAVING"):
            self.i += 1
            self.features.add("HAVING")
            while self.starts_constraint():
                ops: list = []
                saved, self.cur_ops = self.cur_ops, ops
                start = self.i
                e = self.constraint()
                self.cur_ops = saved
                if self.i == start:  # NOT without EXISTS: an error, nothing read
                    break
                node.having.append(e)
                if any(o in ("<", ">", "<=", ">=") for o in ops):
                    self.features.add("COMPARATIVE")
            if not node.having:
                self.fail("expected a constraint after HAVING")
        if self.at_kw("ORDER"):
            self.i += 1
            self.expect_kw("BY")
            self.features.add("ORDER BY")
            while True:
                t = self.toks[self.i]
                start = self.i
                if t[0] == "KEYWORD" and t[1] in ("ASC", "DESC"):
                    self.i += 1
                    if self.at_p("("):
                        e = self.expression_at(self.primary)
                    else:
                        self.fail("expected '(' after " + t[1])
                        e = self.make_expr(self.i, self.i)
                    node.order.append((t[1], e, True))
                elif t[0] == "VAR":
                    self.i += 1
                    self.term_at[start] = (self.i, self.var(t[1]))
                    node.order.append(("ASC", self.make_expr(start, self.i), False))
                elif self.starts_constraint():
                    e = self.constraint()
                    if self.i == start:  # NOT without EXISTS: an error, nothing read
                        break
                    node.order.append(("ASC", e, False))
                else:
                    break
            if not node.order:
                self.fail("expected an order condition after ORDER BY")
        for _ in range(2):
            if self.at_kw("LIMIT") and node.limit is None:
                self.i += 1
                self.features.add("LIMIT")
                node.limit = self.integer()
            elif self.at_kw("OFFSET") and node.offset is None:
                self.i += 1
                self.features.add("OFFSET")
                node.offset = self.integer()

    def integer(self) -> int | None:
        t = self.toks[self.i]
        if t[0] == "NUMBER" and t[1].isdigit():
            self.i += 1
            return int(t[1])
        self.fail("expected an integer")
        return None

    def starts_constraint(self) -> bool:
        t = self.toks[self.i]
        if t[0] == "PUNCT":
            return t[1] == "("
        if t[0] == "KEYWORD":
            return t[1] in BUILTINS or t[1] in AGGREGATES or t[1] in ("NOT", "EXISTS")
        if t[0] in ("IRIREF", "PNAME"):
            n = self.peek()
            return n[0] == "NIL" or (n[0] == "PUNCT" and n[1] == "(")
        return False

    # ------------------------------------------------------------------ update

    def update(self) -> None:
        while True:
            self.prologue()
            t = self.toks[self.i]
            if t[0] == _EOF_KIND:
                return
            if t[0] != "KEYWORD" or t[1] not in _UPDATE_START:
                self.fail("expected an update operation")
                return
            self.i += 1
            op = t[1]
            if op == "LOAD":
                self.silent()
                self.iri()
                if self.at_kw("INTO"):
                    self.i += 1
                    self.expect_kw("GRAPH")
                    self.iri()
            elif op in ("CLEAR", "DROP"):
                self.silent()
                if self.at_kw("GRAPH"):
                    self.i += 1
                    self.iri()
                elif self.toks[self.i][0] == "KEYWORD" and self.toks[self.i][1] in ("DEFAULT", "NAMED", "ALL"):
                    self.i += 1
                else:
                    self.fail("expected GRAPH, DEFAULT, NAMED or ALL")
            elif op == "CREATE":
                self.silent()
                self.expect_kw("GRAPH")
                self.iri()
            elif op in ("ADD", "MOVE", "COPY"):
                self.silent()
                self.graph_or_default()
                self.expect_kw("TO")
                self.graph_or_default()
            elif op == "INSERT":
                if self.at_kw("DATA"):
                    self.i += 1
                    self.quad_pattern(("INSERT",))
                else:
                    self.quad_pattern(("INSERT",))
                    self.using_where()
            elif op == "DELETE":
                if self.at_kw("DATA"):
                    self.i += 1
                    self.quad_pattern(("DELETE",))
                elif self.at_kw("WHERE"):
                    self.i += 1
                    self.quad_pattern(("DELETE",))
                else:
                    self.quad_pattern(("DELETE",))
                    if self.at_kw("INSERT"):
                        self.i += 1
                        self.quad_pattern(("INSERT",))
                    self.using_where()
            elif op == "WITH":
                self.iri()
                if self.at_kw("DELETE"):
                    self.i += 1
                    self.quad_pattern(("DELETE",))
                    if self.at_kw("INSERT"):
                        self.i += 1
                        self.quad_pattern(("INSERT",))
                elif self.at_kw("INSERT"):
                    self.i += 1
                    self.quad_pattern(("INSERT",))
                else:
                    self.fail("expected DELETE or INSERT after WITH")
                self.using_where()
            if self.at_p(";"):
                self.i += 1
                continue
            return

    def silent(self) -> None:
        if self.at_kw("SILENT"):
            self.i += 1

    def graph_or_default(self) -> None:
        if self.at_kw("DEFAULT"):
            self.i += 1
            return
        if self.at_kw("GRAPH"):
            self.i += 1
        self.iri()

    def using_where(self) -> None:
        while self.at_kw("USING"):
            self.i += 1
            if self.at_kw("NAMED"):
                self.i += 1
            self.iri()
        self.expect_kw("WHERE")
        self.mark_where()
        self.group_graph_pattern()

    def quad_pattern(self, ctx: tuple) -> None:
        if not self.expect_p("{"):
            return
        self.enter()
        while True:
            t = self.toks[self.i]
            if t[0] == _EOF_KIND or self.at_p("}"):
                break
            before = self.i
            if self.at_kw("GRAPH"):
                self.i += 1
                self.var_or_iri()
                self.template_block(ctx)
                if self.at_p("."):
                    self.i += 1
            else:
                self.template_triples(ctx)
            if self.i == before:
                self.fail("unexpected token in quad pattern")
                self.i += 1
        self.expect_p("}", "'}'")
        self.depth -= 1

    def template_block(self, ctx: tuple) -> list:
        """'{' TriplesTemplate? '}' (no property paths); triples go to ``template``."""
        out: list = []
        if not self.expect_p("{"):
            return out
        self.enter()
        start = len(self.template)
        while self.toks[self.i][0] != _EOF_KIND and not self.at_p("}"):
            before = self.i
            self.template_triples(ctx)
            if self.i == before:
                self.fail("unexpected token in triples template")
                self.i += 1
        self.expect_p("}", "'}'")
        self.depth -= 1
        return self.template[start:] if self.template else []

    def template_triples(self, ctx: tuple) -> None:
        saved, self.in_template = self.in_template, ctx
        try:
            while self.starts_triples():
                self.statement(False, record=self.template_is_pattern)
                if self.at_p("."):
                    self.i += 1
                else:
                    break
        finally:
            self.in_template = saved

    # ------------------------------------------------------------------ graph patterns

    def group_graph_pattern(self) -> Group:
        group = Group()
        t = self.toks[self.i]
        if t[0] != "PUNCT" or t[1] != "{":
            self.fail("expected '{'")
            return group
        self.i += 1
        self.enter()
        t = self.toks[self.i]
        if t[0] == "KEYWORD" and t[1] == "SELECT":
            self.features.add("SUBQUERY")
            saved = self.ctx
            self.ctx = saved + ("SUBQUERY",)
            sub = self.query()
            if self.at_kw("VALUES"):
                self.i += 1
                sub.values = self.data_block()
            self.ctx = saved
            group.elements.append(SubqueryElement("subquery", sub))
        else:
            self.group_sub(group)
        t = self.toks[self.i]
        if t[0] != "PUNCT" or t[1] != "}":
            self.fail("expected '}'")
        else:
            self.i += 1
        self.depth -= 1
        return group

    def starts_triples(self) -> bool:
        t = self.toks[self.i]
        k = t[0]
        if k in _TERM_START:
            return True
        if k == "PUNCT":
            v = t[1]
            if v == "[" or v == "(":
                return True
            if (v == "+" or v == "-") and self.peek()[0] == "NUMBER":
                return True
        return False

    # long function: a grammar rule of the SPARQL 1.1 grammar with its alternatives in the spec's order
    def group_sub(self, group: Group) -> None:
        els = group.elements
        need_dot = False  # a triples block without a final '.' was just read
        while True:
            t = self.toks[self.i]
            k = t[0]
            if k == _EOF_KIND or (k == "PUNCT" and t[1] == "}"):
                return
            before = self.i
            if k in _TERM_START or self.starts_triples():
                if need_dot:
                    self.fail("expected '.' or '}' between triple patterns")
                need_dot = self.triples_block(els)
                continue
            need_dot = False
            if k == "KEYWORD":
                v = t[1]
                if v in ("OPTIONAL", "MINUS"):
                    self.i += 1
                    self.features.add(v)
                    saved = self.ctx
                    self.ctx = saved + (v,)
                    g = self.group_graph_pattern()
                    self.ctx = saved
                    els.append(OptionalElement("optional", g) if v == "OPTIONAL" else MinusElement("minus", g))
                elif v == "GRAPH":
                    self.i += 1
                    self.features.add("GRAPH")
                    term = self.var_or_iri()
                    if term is not None:
                        if not self.graphs:
                            self.graphs = {}
                        self.graphs[term] = None
                    saved = self.ctx
                    self.ctx = saved + ("GRAPH",)
                    g = self.group_graph_pattern()
                    self.ctx = saved
                    els.append(GraphElement("graph", term, g))
                elif v == "SERVICE":
                    self.i += 1
                    self.features.add("SERVICE")
                    silent = False
                    if self.at_kw("SILENT"):
                        self.i += 1
                        silent = True
                    term = self.var_or_iri()
                    if term is not None:
                        if not self.services:
                            self.services = {}
                        self.services[term] = None
                    saved = self.ctx
                    self.ctx = saved + ("SERVICE",)
                    g = self.group_graph_pattern()
                    self.ctx = saved
                    els.append(ServiceElement("service", silent, term, g))
                elif v == "FILTER":
                    self.i += 1
                    self.features.add("FILTER")
                    if self.starts_constraint():
                        ops: list = []
                        saved_ops, self.cur_ops = self.cur_ops, ops
                        e = self.constraint()
                        self.cur_ops = saved_ops
                        if not self.filters:
                            self.filters = []
                        self.filters.append(Filter(e.text, tuple(ops), self.ctx))
                        if any(o in ("<", ">", "<=", ">=") for o in ops):
                            self.features.add("COMPARATIVE")
                        els.append(FilterElement("filter", e))
                    else:
                        self.fail("expected '(' or a function call after FILTER")
                elif v == "BIND":
                    self.i += 1
                    self.features.add("BIND")
                    if self.expect_p("("):
                        self.enter()
                        e = self.expression()
                        target = None
                        if self.expect_kw("AS"):
                            if self.toks[self.i][0] == "VAR":
                                target = self.var(self.advance()[1])
                            else:
                                self.fail("expected a variable after AS")
                        if not self.expect_p(")"):
                            self.skip_to_close()
                        self.depth -= 1
                        els.append(BindElement("bind", e, target))
                elif v == "VALUES":
                    self.i += 1
                    vb = self.data_block()
                    if vb is not None:
                        els.append(ValuesElement("values", vb))
                elif v in ("ORDER", "GROUP", "HAVING", "LIMIT", "OFFSET"):
                    # a truncated query (closing brace missing) continues with its solution
                    # modifiers: end the pattern here so they are read as modifiers, not triples
                    self.fail(f"expected '}}' before {v}")
                    return
                else:
                    self.fail(f"unexpected keyword {v} in a graph pattern")
            elif k == "PUNCT" and t[1] == "{":
                close = self.brace_match.get(self.i)
                after = self.toks[close + 1] if close is not None else None
                if after is not None and after[0] == "KEYWORD" and after[1] == "UNION":
                    self.features.add("UNION")
                    branches = []
                    saved = self.ctx
                    n = 0
                    while True:
                        self.ctx = saved + ("UNION", n)
                        branches.append(self.group_graph_pattern())
                        if self.at_kw("UNION"):
                            self.i += 1
                            n += 1
                            if not self.at_p("{"):
                                self.fail("expected '{' after UNION")
                                break
                        else:
                            break
                    self.ctx = saved
                    els.append(UnionElement("union", branches))
                else:
                    els.append(GroupElement("group", self.group_graph_pattern()))
            else:
                self.fail(f"unexpected {_describe(t)} in a graph pattern")
            if self.at_p(".") and self.i != before:
                self.i += 1
            if self.i == before:
                self.i += 1  # recovery: skip the token (the error is recorded)

    def triples_block(self, els: list) -> bool:
        """Read a TriplesBlock into a ``bgp`` element (merged with a preceding bgp when only
        FILTERs lie between). Returns True when it ended without a '.'."""
        target = None
        for el in reversed(els):
            if el[0] == "filter":
                continue
            if el[0] == "bgp":
                target = el[1]
            break
        if target is None:
            target = []
            els.append(_new_token(BgpElement, ("bgp", target)))  # BgpElement("bgp", target)
        saved, self.cur_bgp = self.cur_bgp, target
        toks = self.toks
        try:
            self.statement(True)
            while True:
                t = toks[self.i]
                if t[0] == "PUNCT" and t[1] == ".":
                    self.i += 1
                    t = toks[self.i]
                    if t[0] not in _TERM_START and not self.starts_triples():
                        return False
                    self.statement(True)
                elif t[0] == "NUMBER" and t[1][0] == "." and t[1][1:2].isdigit():
                    # '?o .421 :p ?x': pyoxigraph reads '?o . 421 :p ?x' (a DECIMAL for W3C)
                    self.i += 1
                    if not self.starts_verb(True):
                        self.fail("expected a predicate")
                        return True
                    self.property_list(_number(t[1][1:]), True)
                else:
                    return True
        finally:
            self.cur_bgp = saved

    def add_triple(self, s: Any, p: Any, o: Any) -> None:
        if self.in_template is not None:
            if not self.template:
                self.template = []
            self.template.append(make_triple(s, p, o, self.in_template))
            return
        tp = make_triple(s, p, o, self.ctx)
        self.triples.append(tp)
        if self.cur_bgp is not None:
            self.cur_bgp.append(tp)

    def statement(self, paths: bool, record: bool = True) -> None:
        """One triples statement (TriplesSameSubject[Path]); its source spans go to
        ``statements`` (see :class:`StatementSpan`) when ``record`` and outside FILTER (NOT)
        EXISTS."""
        ctx = self.ctx
        if record and not (ctx and ("EXISTS" in ctx or "NOT EXISTS" in ctx)):
            st: Stmt | None = Stmt()
            nerrors = self.nerrors
        else:
            st = None
        start = self.i
        t = self.toks[start]
        k = t[0]
        if k == "VAR":  # what var_or_term does with it
            self.i = start + 1
            subject = self.var_of.get(t[1]) or self.var(t[1])
        elif k == "PUNCT" and (t[1] == "[" or t[1] == "("):
            subject = self.graph_node(paths)
            if subject is None:
                return
            if st is not None:
                st.subject, st.simple = (start, self.i), False
            if self.starts_verb(paths):
                self.property_list(subject, paths, st)
            elif t[1] == "(":
                self.fail("expected a predicate after a collection")
            subject = None  # recorded below
        else:
            subject = self.var_or_term()
            if subject is None:
                self.fail("expected a subject")
                return
        if subject is not None:
            if st is not None:
                st.subject = (start, self.i)
            if not self.starts_verb(paths):
                self.fail("expected a predicate")
                return
            self.property_list(subject, paths, st)
        if st is not None and self.nerrors == nerrors and st.subject is not None and st.groups:
            self.statements.append(make_statement(st.subject, tuple(st.groups), st.simple, ctx))

    def starts_verb(self, paths: bool) -> bool:
        t = self.toks[self.i]
        if t[0] in _VERB_START:
            return True
        return paths and t[0] == "PUNCT" and t[1] in ("^", "!", "(")

    def property_list(self, subject: Any, paths: bool, st: Stmt | None = None) -> None:
        """``verb objects (';' (verb objects)?)*`` at the cursor, which starts a verb; the
        spans of each verb and its objects go to ``st``."""
        toks = self.toks
        var_of = self.var_of
        while True:
            # a verb (its first token: t)
            v0 = self.i
            t = toks[v0]
            k = t[0]
            if k == "VAR":
                self.i = v0 + 1
                verb: Any = var_of.get(t[1]) or self.var(t[1])
            elif paths:
                n = toks[v0 + 1] if k == "PNAME" or k == "IRIREF" or k == "A" else None  # not EOF
                if n is not None and (n[0] != "PUNCT" or n[1] not in _PATH_OPS) and self.depth < MAX_DEPTH:
                    # a lone IRI: what path() (path_alt, ..., path_iri) does with it
                    self.i = v0 + 1
                    verb = RDF_TYPE if k == "A" else self.iri_of(t)
                    if verb.value not in self.iris:
                        self.iris[verb.value] = verb
                else:
                    verb = self.path()
            elif k == "A":
                self.i = v0 + 1
                verb = self.use_iri(RDF_TYPE)
            elif k == "IRIREF" or k == "PNAME":
                self.i = v0 + 1
                verb = self.use_iri(self.iri_of(t))
            else:
                self.fail("expected a predicate")
                verb = None
            if verb is not None:
                # its objects
                v1 = self.i
                objs: list[tuple[int, int]] = []
                while True:
                    o0 = self.i
                    t = toks[o0]
                    k = t[0]
                    if k == "VAR":  # what var_or_term does with it
                        self.i = o0 + 1
                        obj = var_of.get(t[1]) or self.var(t[1])
                    elif k == "PUNCT" and (t[1] == "[" or t[1] == "("):
                        obj = self.graph_node(paths)
                        if obj is not None and st is not None:
                            st.simple = False
                    else:
                        obj = self.var_or_term()
                    if obj is None:
                        self.fail("expected an object")
                        break
                    if st is not None:
                        objs.append((o0, self.i))
                    self.add_triple(subject, verb, obj)
                    t = toks[self.i]
                    if t[0] == "PUNCT" and t[1] == ",":
                        self.i += 1
                    else:
                        if st is not None:
                            st.groups.append(((v0, v1), tuple(objs)))
                        break
            # ';' and, unless it ends the list, the next verb
            while True:
                t = toks[self.i]
                if t[0] != "PUNCT" or t[1] != ";":
                    return
                self.i += 1
                if self.starts_verb(paths):
                    break

    def graph_node(self, paths: bool) -> Any:
        t = self.toks[self.i]
        if t[0] == "PUNCT" and t[1] == "[":
            self.i += 1
            self.enter()
            b = self.fresh_bnode()
            if self.starts_verb(paths):
                self.property_list(b, paths)
            else:
                self.fail("expected a predicate in '[ ... ]'")
            self.expect_p("]")
            self.depth -= 1
            return b
        if t[0] == "PUNCT" and t[1] == "(":
            self.i += 1
            self.enter()
            items = []
            while not self.at_p(")") and self.toks[self.i][0] != _EOF_KIND:
                before = self.i
                item = self.graph_node(paths)
                if item is None:
                    self.fail("expected a collection member")
                    if self.i == before:
                        break
                    continue
                items.append(item)
            closed = self.expect_p(")")
            self.depth -= 1
            if not closed:  # an unclosed collection (a cut query) yields no patterns
                return None
            if not items:
                return self.use_iri(RDF_NIL)
            nodes = [self.fresh_bnode() for _ in items]
            self.use_iri(RDF_FIRST)
            self.use_iri(RDF_REST)
            for k, (node, item) in enumerate(zip(nodes, items)):
                self.add_triple(node, RDF_FIRST, item)
                self.add_triple(node, RDF_REST, nodes[k + 1] if k + 1 < len(nodes) else self.use_iri(RDF_NIL))
            return nodes[0]
        term = self.var_or_term()
        return term

    # ------------------------------------------------------------------ property paths

    def path(self) -> Any:
        """A Path (VerbPath) at the cursor: a single IRI or ``a`` gives an IRI, anything
        else a :class:`Path`; None on error. (:meth:`property_list` reads a lone IRI itself.)"""
        self.enter()
        iris: list[IRI] = []
        start = self.i
        text = self.path_alt(iris)
        self.depth -= 1
        if text is None:
            return None
        if self.i == start + 1 and len(iris) == 1 and not text.startswith(("(", "!", "^")):
            return iris[0]
        if len(iris) == 1 and text == iris[0].n3():
            return iris[0]
        self.features.add("PROPERTY PATH")
        p = Path(text, tuple(dict.fromkeys(iris)))
        if not self.paths:
            self.paths = []
        self.paths.append(p)
        return p

    def path_alt(self, iris: list) -> str | None:
        parts = [self.path_seq(iris)]
        while self.at_p("|") and parts[-1] is not None:
            self.i += 1
            parts.append(self.path_seq(iris))
        if any(p is None for p in parts):
            return None
        return "|".join(parts)

    def path_seq(self, iris: list) -> str | None:
        parts = [self.path_elt(iris)]
        while self.at_p("/") and parts[-1] is not None:
            self.i += 1
            parts.append(self.path_elt(iris))
        if any(p is None for p in parts):
            return None
        return "/".join(parts)

    def path_elt(self, iris: list) -> str | None:
        inverse = False
        if self.at_p("^"):
            self.i += 1
            inverse = True
        prim = self.path_primary(iris)
        if prim is None:
            return None
        t = self.toks[self.i]
        if t[0] == "PUNCT" and t[1] in ("?", "*", "+"):
            self.i += 1
            prim += t[1]
        return ("^" + prim) if inverse else prim

    def path_iri(self, iris: list) -> str | None:
        t = self.toks[self.i]
        if t[0] == "A":
            self.i += 1
            iri = RDF_TYPE
        elif t[0] in ("IRIREF", "PNAME"):
            self.i += 1
            iri = self.iri_of(t)
        else:
            self.fail("expected an IRI in a property path")
            return None
        self.use_iri(iri)
        iris.append(iri)
        return iri.n3()

    def path_primary(self, iris: list) -> str | None:
        t = self.toks[self.i]
        if t[0] == "PUNCT" and t[1] == "(":
            self.i += 1
            self.enter()
            inner = self.path_alt(iris)
            self.depth -= 1
            if inner is None:
                return None
            if not self.expect_p(")"):
                return None
            return "(" + inner + ")"
        if t[0] == "PUNCT" and t[1] == "!":
            self.i += 1
            if self.at_p("("):
                self.i += 1
                parts = []
                while True:
                    one = self.path_one_in_set(iris)
                    if one is None:
                        return None
                    parts.append(one)
                    if self.at_p("|"):
                        self.i += 1
                        continue
                    break
                if not self.expect_p(")"):
                    return None
                return "!(" + "|".join(parts) + ")"
            if self.toks[self.i][0] == "NIL":
                self.i += 1
                return "!()"
            one = self.path_one_in_set(iris)
            return None if one is None else "!" + one
        return self.path_iri(iris)

    def path_one_in_set(self, iris: list) -> str | None:
        if self.at_p("^"):
            self.i += 1
            one = self.path_iri(iris)
            return None if one is None else "^" + one
        return self.path_iri(iris)

    # ------------------------------------------------------------------ VALUES

    def data_block(self) -> ValuesBlock | None:
        self.features.add("VALUES")
        t = self.toks[self.i]
        variables: list[Var] = []
        rows: list[tuple] = []
        if t[0] == "VAR":
            self.i += 1
            variables.append(self.var(t[1]))
            single = True
        elif t[0] == "NIL":
            self.i += 1
            single = False
        elif self.at_p("("):
            self.i += 1
            while self.toks[self.i][0] == "VAR":
                variables.append(self.var(self.advance()[1]))
            if not self.expect_p(")"):
                self.skip_to_close()
            single = False
        else:
            self.fail("expected a variable or '(' after VALUES")
            return None
        if not self.expect_p("{"):
            return None
        while self.toks[self.i][0] != _EOF_KIND and not self.at_p("}"):
            before = self.i
            if single:
                val, ok = self.data_value()
                if not ok:
                    self.fail("expected an IRI, a literal or UNDEF in VALUES")
                    self.i += 1
                    continue
                rows.append((val,))
            elif self.toks[self.i][0] == "NIL":
                self.i += 1
                if variables:
                    self.fail(f"VALUES row has 0 values for {len(variables)} variables", self.toks[before])
                rows.append(())
            elif self.at_p("("):
                self.i += 1
                row = []
                while not self.at_p(")") and self.toks[self.i][0] != _EOF_KIND:
                    val, ok = self.data_value()
                    if not ok:
                        self.fail("expected an IRI, a literal or UNDEF in VALUES")
                        break
                    row.append(val)
                if not self.expect_p(")"):
                    self.skip_to_close()
                if len(row) != len(variables):
                    self.fail(f"VALUES row has {len(row)} values for {len(variables)} variables", self.toks[before])
                rows.append(tuple(row))
            else:
                self.fail("expected '(' for a VALUES row")
            if self.i == before:
                self.i += 1
        self.expect_p("}", "'}'")
        vb = ValuesBlock(tuple(variables), tuple(rows), self.ctx)
        if not self.values:
            self.values = []
        self.values.append(vb)
        for row in rows:
            if not self.value_terms:
                self.value_terms = []
            self.value_terms.extend(row)
        return vb

    def data_value(self) -> tuple[Any, bool]:
        t = self.toks[self.i]
        if t[0] == "KEYWORD" and t[1] == "UNDEF":
            self.i += 1
            return None, True
        if t[0] in ("IRIREF", "PNAME"):
            self.i += 1
            return self.use_iri(self.iri_of(t)), True
        lit = self.literal()
        if lit is not None:
            return lit, True
        return None, False

    # ------------------------------------------------------------------ expressions

    def make_expr(self, start: int, end: int) -> Expr:
        items: list = []
        k = start
        term_at, group_at, toks = self.term_at, self.group_at, self.toks
        while k < end:
            if k in group_at:
                e, g = group_at[k]
                items.append(_token(toks[k]))
                items.append(g)
                k = e
            elif k in term_at:
                e, term = term_at[k]
                items.append(term)
                k = e
            else:
                items.append(_token(toks[k]))
                k += 1
        return Expr(self.source(start, end), items)

    def expression(self) -> Expr:
        start = self.i
        self.or_expr()
        return self.make_expr(start, self.i)

    def expression_at(self, fn) -> Expr:
        start = self.i
        fn()
        return self.make_expr(start, self.i)

    def constraint(self) -> Expr:
        """BrackettedExpression | BuiltInCall | FunctionCall."""
        return self.expression_at(self.primary)

    def or_expr(self) -> None:
        self.and_expr()
        while self.at_p("||"):
            self.i += 1
            self.and_expr()

    def and_expr(self) -> None:
        self.rel_expr()
        while self.at_p("&&"):
            self.i += 1
            self.rel_expr()

    def rel_expr(self) -> None:
        self.add_expr()
        t = self.toks[self.i]
        if t[0] == "PUNCT" and t[1] in _REL_OPS:
            self.i += 1
            if self.cur_ops is not None:
                self.cur_ops.append(t[1])
            self.add_expr()
        elif t[0] == "KEYWORD" and (t[1] == "IN" or (t[1] == "NOT" and self.peek()[0] == "KEYWORD" and self.peek()[1] == "IN")):
            op = "IN" if t[1] == "IN" else "NOT IN"
            self.i += 1 if op == "IN" else 2
            if self.cur_ops is not None:
                self.cur_ops.append(op)
            self.expression_list()

    def expression_list(self) -> int:
        """NIL | '(' Expression ( ',' Expression )* ')'; returns the number of expressions."""
        if self.toks[self.i][0] == "NIL":
            self.i += 1
            return 0
        if not self.expect_p("("):
            return 0
        self.enter()
        n = 1
        self.or_expr()
        while self.at_p(","):
            self.i += 1
            self.or_expr()
            n += 1
        if not self.expect_p(")"):
            self.skip_to_close()
        self.depth -= 1
        return n

    def add_expr(self) -> None:
        self.mul_expr()
        while True:
            t = self.toks[self.i]
            if t[0] == "PUNCT" and t[1] in ("+", "-"):
                self.i += 1
                self.mul_expr()
            else:
                return

    def mul_expr(self) -> None:
        self.unary_expr()
        while True:
            t = self.toks[self.i]
            if t[0] == "PUNCT" and t[1] in ("*", "/"):
                self.i += 1
                self.unary_expr()
            else:
                return

    def unary_expr(self) -> None:
        t = self.toks[self.i]
        if t[0] == "PUNCT" and t[1] in ("!", "+", "-"):
            self.i += 1
            self.enter()
            self.unary_expr() if t[1] == "!" else self.primary()
            self.depth -= 1
            return
        self.primary()

    # long function: a grammar rule of the SPARQL 1.1 grammar with its alternatives in the spec's order
    def primary(self) -> None:
        t = self.toks[self.i]
        k = t[0]
        start = self.i
        if k == "VAR":
            self.i += 1
            self.term_at[start] = (self.i, self.var(t[1]))
            return
        if k == "PUNCT" and t[1] == "(":
            self.i += 1
            self.enter()
            self.or_expr()
            if not self.expect_p(")"):
                self.skip_to_close()
            self.depth -= 1
            return
        if k in ("IRIREF", "PNAME"):
            self.i += 1
            iri = self.use_iri(self.iri_of(t))
            self.term_at[start] = (self.i, iri)
            n = self.toks[self.i]
            if n[0] == "NIL":
                self.i += 1
            elif n[0] == "PUNCT" and n[1] == "(":
                self.i += 1
                self.enter()
                if self.at_kw("DISTINCT"):
                    self.i += 1
                self.or_expr()
                while self.at_p(","):
                    self.i += 1
                    self.or_expr()
                if not self.expect_p(")"):
                    self.skip_to_close()
                self.depth -= 1
            return
        if k in ("STRING", "NUMBER", "BOOLEAN"):
            lit = self.literal()
            self.term_at[start] = (self.i, lit)
            return
        if k == "KEYWORD":
            v = t[1]
            if v in AGGREGATES:
                self.aggregate()
                return
            if v == "EXISTS" or (v == "NOT" and self.peek()[0] == "KEYWORD" and self.peek()[1] == "EXISTS"):
                label = "EXISTS" if v == "EXISTS" else "NOT EXISTS"
                self.i += 1 if v == "EXISTS" else 2
                self.features.add(label)
                saved, saved_ops = self.ctx, self.cur_ops
                self.ctx = saved + (label,)
                self.cur_ops = None
                g = self.group_graph_pattern()
                self.ctx, self.cur_ops = saved, saved_ops
                self.group_at[start if v == "EXISTS" else start + 1] = (self.i, g)
                return
            if v == "BOUND":
                self.i += 1
                if self.expect_p("("):
                    vt = self.toks[self.i]
                    if vt[0] == "VAR":
                        self.i += 1
                        self.term_at[self.i - 1] = (self.i, self.var(vt[1]))
                    else:
                        self.fail("expected a variable in BOUND(...)")
                    if not self.expect_p(")"):
                        self.skip_to_close()
                return
            if v in BUILTINS:
                self.i += 1
                lo, hi = BUILTINS[v]
                if self.toks[self.i][0] == "NIL":
                    self.i += 1
                    n = 0
                elif self.at_p("("):
                    n = self.expression_list()
                else:
                    self.fail(f"expected '(' after {v}")
                    return
                if n < lo or (hi is not None and n > hi):
                    want = str(lo) if lo == hi else (f"{lo} to {hi}" if hi is not None else f"at least {lo}")
                    self.fail(f"{v} takes {want} argument(s), got {n}", t)
                return
        self.fail("expected an expression")

    def aggregate(self) -> None:
        t = self.advance()
        fn = t[1]
        self.features.add("AGGREGATE")
        if self.cur_query is not None:
            self.cur_query.aggregated = True
        if not self.expect_p("("):
            return
        self.enter()
        distinct = False
        if self.at_kw("DISTINCT"):
            self.i += 1
            distinct = True
        start = self.i
        separator = None
        if fn == "COUNT" and self.at_p("*"):
            self.i += 1
        else:
            self.or_expr()
        arg = self.source(start, self.i)
        if fn == "GROUP_CONCAT" and self.at_p(";"):
            self.i += 1
            if self.expect_kw("SEPARATOR") and self.expect_p("="):
                s = self.toks[self.i]
                if s[0] == "STRING":
                    self.i += 1
                    separator = unescape_string(s[1])[0]
                else:
                    self.fail("expected a string after SEPARATOR =")
        if not self.expect_p(")"):
            self.skip_to_close()
        self.depth -= 1
        if not self.aggregates:
            self.aggregates = []
        self.aggregates.append(Aggregate(fn, distinct, arg, separator))
