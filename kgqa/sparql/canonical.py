"""Canonical form of a SPARQL query, for canonical exact match and structure templates.

:func:`canonical_form` writes a valid query in a normal form in which two queries that differ
only in the following are written identically:

- prefixed names vs full IRIs (everything is written ``<full IRI>``, ``a`` as ``rdf:type``);
  relative IRIs are resolved against BASE;
- keyword case, whitespace, comments, the quote style and escapes of strings, the case of
  language tags, ``5`` vs ``"5"^^xsd:integer`` (every literal is written in full N-Triples form);
- variable and blank-node names: variables become ``?v0, ?v1, ...`` and blank nodes
  ``_:b0, _:b1, ...`` by first occurrence in the canonical text;
- the order of triple patterns inside a basic graph pattern (triple blocks separated only by
  FILTERs are one BGP), the position of FILTERs inside a group (they are written last, sorted),
  the order of UNION branches, of VALUES rows and of FROM clauses;
- ``FILTER(expr)`` vs ``FILTER expr`` for a call, redundant outer parentheses of a FILTER,
  ``ORDER BY ?x`` vs ``ORDER BY ASC(?x)``.

Everything else is kept: DISTINCT/REDUCED and where it is written (``COUNT(DISTINCT ?x)`` is not
``DISTINCT COUNT(?x)``), projection order, OPTIONAL/MINUS/BIND positions, ORDER BY, LIMIT,
OFFSET, GROUP BY, HAVING, nesting of groups, and expressions as written (operands are not
reordered, ``?a < ?b`` is not ``?b > ?a``).

Renaming: a variable's canonical name must not depend on its original name, yet the pattern
order that decides first occurrence depends on the names. The procedure is: (1) give every
variable and blank node a *colour* from its role (its position in the projection, then three
rounds of colour refinement over the triple patterns it occurs in: position, predicate, the
constants and the colours of its neighbours, and the construct it sits in; a repeated pattern
counts once); (2) write the query with each variable masked by its colour, sorting patterns by
that text; (3) name variables by first occurrence; (4) write the query again with those names
(re-sorting), re-name by first occurrence, and repeat until the names are stable (at most 8
rounds). When every variable and blank node has its own colour after (1), that is all.

Ties: when some get the same colour (symmetric patterns such as ``?a :p ?b . ?c :p ?d``, or
variables met only in expressions), the colours are first refined to a fixed point, also over
the expressions (a variable's operand positions in FILTER, BIND, projection, GROUP BY, HAVING
and ORDER BY expressions, which are never reordered), and then the ties are broken by
individualisation-refinement, the canonical labelling scheme of nauty and bliss, done by brute
force: the tied class with the smallest colour is split by giving each member in turn a fresh
colour, the colouring is refined again, and so on until no ties are left; each such leaf is
written by (2)-(4), and the form is the smallest text over all leaves. Two leaves with the same
text reveal a symmetry of the query; branches that a known symmetry maps onto an explored
branch are skipped or abandoned. This makes the form a canonical labelling (the same for all
queries equal up to the normalisations above) as long as the search stays within its bounds:
at most MAX_LEAVES = 2000 leaves, MAX_WORK = 100,000 steps (a step: one pattern or expression
looked at in one round of refinement, or at a leaf) and MAX_DEPTH = 200 individualised terms
(well under a second of search on the machine it was written on). Limits: beyond a bound (only very large symmetric queries, e.g.
60 interchangeable ``?a :p ?b`` components) the search is abandoned and the colours of (1)
are used as they are: then the original pattern order breaks the remaining ties, and two such
equal queries may get different forms. Colours are 48-bit digests, so a collision could in
principle merge two colours (ties it would create are searched as above). In every case each
form is the query itself written with renamed variables, so the procedure never gives equal
forms to queries that are not equal up to the normalisations above. The context of a pattern
inside a UNION includes its branch index, so in rare cases UNION branch order can still break
a tie.

Updates (INSERT/DELETE/...) get a token-level normal form only (prefixes expanded, keywords
upper-cased, whitespace normalised).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Any

from kgqa.model.terms import BNode, IRI, Literal, XSD_STRING
from kgqa.sparql.analyzer import (
    RDF_TYPE, Expr, Group, Path, QueryInfo, QueryNode, TriplePattern, ValuesBlock, Var, analyze,
)
from kgqa.sparql.lexer import Token, tokenize
from kgqa.sparql.prefixes import STANDARD_PREFIXES

__all__ = ["canonical_form", "canonical_equal", "render"]

MAX_ROUNDS = 8
MAX_LEAVES = 2000  # bounds of the tie search (see the module docstring)
MAX_WORK = 100_000
MAX_DEPTH = 200
_IRI_IN_PATH = re.compile(r"<[^>]*>")


def canonical_form(query: str | QueryInfo, prefixes: dict[str, str] | None = None) -> str | None:
    """The canonical text of ``query`` (see the module docstring); None if the query is not
    valid (:attr:`QueryInfo.valid`). ``prefixes`` as for :func:`~kgqa.sparql.analyzer.analyze`."""
    info = query if isinstance(query, QueryInfo) else analyze(query, prefixes)
    return render(info)


def canonical_equal(a: str | QueryInfo, b: str | QueryInfo, prefixes: dict[str, str] | None = None) -> bool:
    """True iff both queries are valid and have the same canonical form."""
    fa = canonical_form(a, prefixes)
    if fa is None:
        return False
    return fa == canonical_form(b, prefixes)


def structure_template(info: QueryInfo) -> str | None:
    """The query's structure with every IRI and literal in a term position replaced by a
    placeholder (``<>`` for IRIs except ``rdf:type``, which is kept, ``""`` for literals;
    function IRIs and LIMIT/OFFSET numbers are kept), variables renamed canonically and triple
    patterns sorted as in :func:`canonical_form`; stable under whitespace, keyword case, pattern
    order and variable renaming. None if the query is not valid."""
    return render(info, abstract=True)


def render(info: QueryInfo, abstract: bool = False) -> str | None:
    """Canonical text of an analyzed query; with ``abstract`` the structure template of
    :func:`structure_template` (IRIs other than rdf:type and literals in term
    positions replaced by ``<>`` and ``""``). None if the query is not valid."""
    if not info.valid or info.tree is None:
        return None
    node = info.tree
    if node.form == "UPDATE":
        return _update_form(info, abstract)
    r = _Renderer(abstract)
    colour, atoms = _colours(info, node, r)
    if len(set(colour.values())) < len(colour):  # tied colour classes: search (rare)
        text = _search(r, node, colour, atoms)
        if text is not None:
            return text
    return _name(r, node, _masked(colour))[0]


def _name(r: "_Renderer", node: QueryNode, names: dict[Any, str]) -> tuple[str, dict[Any, str]]:
    """Write the query starting from the masked ``names``, naming variables and blank nodes by
    first occurrence until the names are stable (at most MAX_ROUNDS rounds): the text and the
    final names."""
    text = ""
    for _ in range(MAX_ROUNDS):
        r.names = names
        pieces = r.query(node)
        order: dict[Any, None] = {}
        for p in pieces:
            if not isinstance(p, str) and p not in order:
                order[p] = None
        new: dict[Any, str] = {}
        nv = nb = 0
        for x in order:
            if isinstance(x, Var):
                new[x] = f"?v{nv}"
                nv += 1
            else:
                new[x] = f"_:b{nb}"
                nb += 1
        text = r.join(pieces, new)
        if new == names:
            break
        names = new
    return text, names


# --------------------------------------------------------------------------- colours


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def _colours(info: QueryInfo, node: QueryNode, r: "_Renderer") -> tuple[dict[Any, str], list]:
    """Initial colours from colour refinement (independent of the original names), and the
    atoms (context, terms, constant texts) of the triple patterns they were refined over."""
    colour: dict[Any, str] = {}
    for t in info.triples + info.template:
        for x in (t.subject, t.predicate, t.object):
            if isinstance(x, (Var, BNode)):
                colour.setdefault(x, "b" if isinstance(x, BNode) else "v")
    for v in info.variables:
        colour.setdefault(v, "v")
    if node.form == "SELECT":
        for k, (v, _) in enumerate(node.projection):
            colour[v] = colour.get(v, "v") + f"P{k}"
    atoms = []
    seen: set = set()
    for t in info.triples + info.template:
        terms = (t.subject, t.predicate, t.object)
        fixed = [None if isinstance(x, (Var, BNode)) else r.term_text(x) for x in terms]
        if fixed[0] is not None and fixed[1] is not None and fixed[2] is not None:
            continue  # no variable or blank node
        ctx = "/".join(str(c) for c in t.context)
        key = (ctx, terms)
        if key in seen:  # a repeated pattern counts once, as in the text
            continue
        seen.add(key)
        atoms.append((ctx, terms, fixed))
    for _ in range(3 if atoms else 0):
        new = _refine(colour, atoms)
        refined = len(set(new.values())) > len(set(colour.values()))
        colour = new
        if not refined:
            break
    return colour, atoms


def _refine(colour: dict[Any, str], atoms: list) -> dict[Any, str]:
    """One round of colour refinement: a term's new colour digests its colour and the
    (sorted) patterns it occurs in, with itself as ``@`` and the other terms by colour."""
    sig: dict[Any, list[str]] = {x: [] for x in colour}
    for ctx, terms, fixed in atoms:
        for x in set(y for y in terms if isinstance(y, (Var, BNode))):
            parts = [ctx]
            for y, f in zip(terms, fixed):
                parts.append(f if f is not None else ("@" if y == x else colour[y]))
            sig[x].append(" ".join(parts))
    return {x: _digest(colour[x] + "|" + "|".join(sorted(sig[x]))) for x in colour}


def _masked(colour: dict[Any, str]) -> dict[Any, str]:
    return {x: ("_:~" if isinstance(x, BNode) else "?~") + c for x, c in colour.items()}


class _TooMany(Exception):
    pass


class _Prune(Exception):
    """Abandon the subtree of the current child of the node at ``depth``."""

    def __init__(self, depth: int):
        self.depth = depth


# long function: individualisation-refinement search; its pruning shares the loop's state
def _search(r: "_Renderer", node: QueryNode, colour: dict[Any, str], atoms: list) -> str | None:
    """Individualisation-refinement over tied colour classes: the smallest text over all
    leaves (discrete colourings) of the search tree, or None when the search exceeds MAX_LEAVES
    leaves, MAX_WORK steps (an atom looked at in a round of refinement, or written at a leaf)
    or MAX_DEPTH individualised terms.

    At a node, the tied class with the smallest colour is the target; each member in turn gets
    a fresh colour and the colouring is refined again. Two leaves with the same text give an
    automorphism of the query (checked on the atoms). A child that the automorphisms fixing
    its node's individualised terms map onto an explored sibling is skipped, and when a new
    automorphism shows this for a child being explored, the rest of its subtree is abandoned:
    such subtrees only repeat texts already seen."""
    seen: dict[str, dict[Any, str]] = {}  # leaf text -> its names
    autos: list[dict[Any, Any]] = []
    path: list = []  # the individualised terms from the root
    explored: list[list] = []  # per depth, the explored children of the node on the path
    leaves = work = 0

    def fixing(d: int) -> list[dict[Any, Any]]:
        return [g for g in autos if all(g.get(p, p) == p for p in path[:d])]

    def refine(c: dict[Any, str]) -> dict[Any, str]:
        """Refine until the partition into colour classes no longer gets finer."""
        nonlocal work
        n = len(set(c.values()))
        while atoms and n < len(c):
            work += len(atoms)
            if work > MAX_WORK:
                raise _TooMany
            c = _refine(c, atoms)
            m = len(set(c.values()))
            if m == n:
                break
            n = m
        return c

    def leaf(c: dict[Any, str]) -> None:
        nonlocal leaves, work
        leaves += 1
        work += len(atoms)
        if leaves > MAX_LEAVES or work > MAX_WORK:
            raise _TooMany
        text, names = _name(r, node, _masked(c))
        other = seen.get(text)
        if other is None:
            seen[text] = names
            return
        inv = {n: x for x, n in other.items()}
        if len(names) != len(c) or len(inv) != len(c):
            return
        gamma = {x: inv.get(n) for x, n in names.items()}
        if any(y is None for y in gamma.values()):
            return
        if Counter((ctx, tuple(gamma[y] if f is None else f for y, f in zip(terms, fixed)))
                   for ctx, terms, fixed in atoms) != atom_keys:
            return
        autos.append(gamma)
        for d in range(len(path)):  # the highest node whose current child is now redundant
            if explored[d] and _same_orbit(path[d], explored[d], fixing(d)):
                raise _Prune(d)

    def visit(c: dict[Any, str]) -> None:
        if len(path) > MAX_DEPTH:
            raise _TooMany
        cells: dict[str, list] = {}
        for x, k in c.items():
            cells.setdefault(k, []).append(x)
        tied = [k for k, xs in cells.items() if len(xs) > 1]
        if not tied:
            leaf(c)
            return
        depth = len(path)
        done: list = []
        explored.append(done)
        for x in cells[min(tied)]:
            if done and _same_orbit(x, done, fixing(depth)):
                continue
            c2 = dict(c)
            c2[x] = _digest(c[x] + "|*")
            path.append(x)
            try:
                visit(refine(c2))
            except _Prune as e:
                if e.depth != depth:
                    raise
                del path[depth + 1:], explored[depth + 1:]
            path.pop()
            done.append(x)
        explored.pop()

    atoms = atoms + _expr_atoms(r, node)
    # what refinement sees of the atoms; an automorphism must map them onto themselves
    atom_keys = Counter((ctx, tuple(y if f is None else f for y, f in zip(terms, fixed))) for ctx, terms, fixed in atoms)
    try:
        visit(refine(colour))
    except _TooMany:
        return None
    return min(seen)


def _expr_atoms(r: "_Renderer", node: QueryNode) -> list:
    """Atoms for colour refinement from the expressions of the query (FILTER, BIND,
    projection, GROUP BY, HAVING, ORDER BY) as the renderer writes them: the operand positions
    of a variable in an expression are an invariant, as operands are never reordered. Groups
    inside an expression (EXISTS) are left out: their patterns are atoms already."""
    out: list = []

    def add(kind: str, e: Expr | None, strip: bool = False, extra: Any = None) -> None:
        if e is None:
            return
        items = _strip_parens(e.items) if strip else e.items
        terms: list = []
        for it in items:
            if isinstance(it, Group):
                terms.append("{}")
            elif isinstance(it, Token):
                terms.append(it.value if it.kind not in ("NIL", "ANON", "LANGTAG") else it.kind + it.value.lower())
            elif isinstance(it, (Var, BNode)):
                terms.append(it)
            else:
                terms.append(r.term_text(it))
        if extra is not None:
            terms.append(extra)
        if any(isinstance(x, (Var, BNode)) for x in terms):
            out.append(("E" + kind, tuple(terms), [None if isinstance(x, (Var, BNode)) else x for x in terms]))

    def group(g: Group) -> None:
        for el in g.elements:
            kind = el.kind
            if kind == "filter":
                add("F", el.expr, True)
            elif kind == "bind":
                add("B", el.expr, False, el.var)
            elif kind in ("optional", "minus", "group", "graph", "service"):
                group(el.group)
            elif kind == "union":
                for b in el.branches:
                    group(b)
            elif kind == "subquery":
                query(el.query)

    def query(q: QueryNode) -> None:
        for v, e in q.projection if q.form == "SELECT" else ():
            add("P", e, False, v)
        if q.where is not None:
            group(q.where)
        for e, alias in q.group_by or ():
            add("G", e, False, alias)
        for e in q.having or ():
            add("H", e, True)
        for direction, e, _explicit in q.order or ():
            add("O" + direction, e, True)

    query(node)
    return out


def _same_orbit(x: Any, done: list, gens: list[dict[Any, Any]]) -> bool:
    """Whether the group generated by ``gens`` maps ``x`` onto a member of ``done``."""
    if not gens:
        return False
    orbit = {x}
    todo = [x]
    while todo:
        y = todo.pop()
        for g in gens:
            z = g.get(y, y)
            if z not in orbit:
                orbit.add(z)
                todo.append(z)
    return any(d in orbit for d in done)


# --------------------------------------------------------------------------- the renderer


class _Renderer:
    """Writes a query tree as a list of pieces: strings and Var/BNode objects (named late)."""

    def __init__(self, abstract: bool):
        self.abstract = abstract
        self.names: dict[Any, str] = {}

    def join(self, pieces: list, names: dict | None = None) -> str:
        names = self.names if names is None else names
        return " ".join(p if isinstance(p, str) else names.get(p, "?_") for p in pieces)

    def key(self, pieces: list) -> str:
        return self.join(pieces)

    # ------------------------------------------------------------------ terms

    def term_text(self, x: Any) -> str:
        if isinstance(x, IRI):
            if self.abstract and x != RDF_TYPE:
                return "<>"
            return x.n3()
        if isinstance(x, Literal):
            if self.abstract:
                return '""'
            if x.language:
                return Literal(x.value, None, x.language.lower()).n3()
            if x.datatype and x.datatype != XSD_STRING:
                return Literal(x.value).n3() + f"^^<{x.datatype}>"
            return Literal(x.value).n3()
        if isinstance(x, Path):
            if self.abstract:
                return _IRI_IN_PATH.sub(lambda m: m.group(0) if m.group(0) == RDF_TYPE.n3() else "<>", x.text)
            return x.text
        if x is None:
            return "UNDEF"
        return str(x)

    def term(self, x: Any) -> Any:
        if isinstance(x, (Var, BNode)):
            return x
        return self.term_text(x)

    def triple(self, t: TriplePattern) -> list:
        return [self.term(t.subject), self.term(t.predicate), self.term(t.object), "."]

    def sorted_triples(self, triples: list) -> list:
        unique = {t.spo: t for t in triples}  # a BGP is a set: a repeated pattern counts once
        rendered = [self.triple(t) for t in unique.values()]
        rendered.sort(key=self.key)
        return [p for pieces in rendered for p in pieces]

    # ------------------------------------------------------------------ expressions

    def expr(self, e: Expr | None, strip: bool = False) -> list:
        if e is None:
            return []
        items = e.items
        if strip:
            items = _strip_parens(items)
        out: list = []
        n = len(items)
        for k, it in enumerate(items):
            if isinstance(it, Token):
                kind = it.kind
                if kind == "NIL":
                    out.append("()")
                elif kind == "ANON":
                    out.append("[]")
                elif kind == "LANGTAG":
                    out.append("@" + it.value.lower())
                else:
                    out.append(it.value)
            elif isinstance(it, Group):
                out += self.group(it)
            elif isinstance(it, IRI) and self.abstract:
                nxt = items[k + 1] if k + 1 < n else None
                is_call = isinstance(nxt, Token) and (nxt.kind == "NIL" or (nxt.kind == "PUNCT" and nxt.value == "("))
                out.append(it.n3() if is_call else self.term_text(it))
            else:
                out.append(self.term(it))
        return out

    # ------------------------------------------------------------------ patterns

    def group(self, g: Group) -> list:
        out: list = ["{"]
        filters: list[list] = []
        for el in g.elements:
            kind = el.kind
            if kind == "bgp":
                out += self.sorted_triples(el.triples)
            elif kind == "filter":
                filters.append(["FILTER", "("] + self.expr(el.expr, strip=True) + [")"])
            elif kind in ("optional", "minus"):
                out += [kind.upper()] + self.group(el.group)
            elif kind == "union":
                branches = [self.group(b) for b in el.branches]
                branches.sort(key=self.key)
                for k, b in enumerate(branches):
                    if k:
                        out.append("UNION")
                    out += b
            elif kind == "group":
                out += self.group(el.group)
            elif kind == "graph":
                out += ["GRAPH", self.term(el.term)] + self.group(el.group)
            elif kind == "service":
                out += ["SERVICE"] + (["SILENT"] if el.silent else []) + [self.term(el.term)] + self.group(el.group)
            elif kind == "bind":
                out += ["BIND", "("] + self.expr(el.expr) + ["AS", el.var if el.var is not None else "?_", ")"]
            elif kind == "values":
                out += self.values(el.block)
            elif kind == "subquery":
                out += self.query(el.query)
        filters.sort(key=self.key)
        for f in filters:
            out += f
        out.append("}")
        return out

    def values(self, vb: ValuesBlock) -> list:
        out: list = ["VALUES", "("] + list(vb.variables) + [")", "{"]
        rows = [["("] + [self.term_text(x) for x in row] + [")"] for row in vb.rows]
        rows.sort(key=self.key)
        for row in rows:
            out += row
        out.append("}")
        return out

    def query(self, node: QueryNode) -> list:
        out: list = [node.form]
        if node.form == "SELECT":
            if node.modifier:
                out.append(node.modifier)
            if node.select_all:
                out.append("*")
            for v, e in node.projection:
                if e is None:
                    out.append(v)
                else:
                    out += ["("] + self.expr(e) + ["AS", v, ")"]
        elif node.form == "CONSTRUCT":
            out += ["{"] + self.sorted_triples(node.template or []) + ["}"]
        elif node.form == "DESCRIBE":
            if node.select_all:
                out.append("*")
            out += [self.term(x) for x in node.describe]
        datasets = sorted((("FROM NAMED " if named else "FROM ") + self.term_text(iri)) for named, iri in node.datasets)
        out += datasets
        if node.where is not None:
            out += ["WHERE"] + self.group(node.where)
        if node.group_by:
            out += ["GROUP", "BY"]
            for e, alias in node.group_by:
                if alias is not None:
                    out += ["("] + self.expr(e) + ["AS", alias, ")"]
                else:
                    out += self.expr(e)
        if node.having:
            out.append("HAVING")
            for e in node.having:
                out += ["("] + self.expr(e, strip=True) + [")"]
        if node.order:
            out += ["ORDER", "BY"]
            for direction, e, _explicit in node.order:
                out += [direction, "("] + self.expr(e, strip=True) + [")"]
        if node.limit is not None:
            out += ["LIMIT", str(node.limit)]
        if node.offset is not None:
            out += ["OFFSET", str(node.offset)]
        if node.values is not None:
            out += self.values(node.values)
        return out


def _strip_parens(items: list) -> list:
    """Remove outer parentheses that enclose the whole item list (repeatedly)."""
    while (
        len(items) >= 2
        and isinstance(items[0], Token) and items[0].kind == "PUNCT" and items[0].value == "("
        and isinstance(items[-1], Token) and items[-1].kind == "PUNCT" and items[-1].value == ")"
    ):
        depth = 0
        for k, it in enumerate(items):
            if isinstance(it, Token) and it.kind == "PUNCT":
                if it.value == "(":
                    depth += 1
                elif it.value == ")":
                    depth -= 1
                    if depth == 0 and k != len(items) - 1:
                        return items
        items = items[1:-1]
    return items


def _update_form(info: QueryInfo, abstract: bool) -> str:
    """Token-level normal form of an update: prologue dropped, prefixed names expanded."""
    toks = tokenize(info.query)
    ns = {**STANDARD_PREFIXES, **info.prefixes}
    out: list[str] = []
    k = 0
    n = len(toks)
    while k < n:
        t = toks[k]
        if t.kind == "KEYWORD" and t.value in ("PREFIX", "BASE"):
            k += 3 if t.value == "PREFIX" else 2
            continue
        if t.kind == "PNAME":
            pfx, _, local = t.value.partition(":")
            text = f"<{ns.get(pfx, pfx + ':')}{local}>"
            out.append("<>" if abstract else text)
        elif t.kind == "IRIREF":
            out.append("<>" if abstract else f"<{t.value}>")
        elif t.kind == "VAR":
            out.append("?" + t.value)
        elif t.kind == "STRING":
            out.append('""' if abstract else '"' + t.value.replace('"', '\\"') + '"')
        elif t.kind == "A":
            out.append(RDF_TYPE.n3())
        else:
            out.append(t.value)
        k += 1
    return " ".join(out)
