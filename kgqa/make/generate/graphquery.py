"""Graph queries (Su et al. 2016, Sec. 3): a connected directed graph of typed nodes (the
question node, ungrounded nodes, grounded nodes holding an individual or a literal) joined by
relation edges, with at most one function, and its translation to SPARQL.

SPARQL form (deterministic text; full IRIs):

- every edge is one triple pattern (a relation through blank nodes: one per step, joined by a
  ``?via`` variable per blank node; a cast relation binds its cast value, see :func:`edge_patterns`); the question node's class is one more pattern
  ``?x a <Class>`` while :attr:`GraphQuery.typed` (minimization drops it when redundant);
- mutual exclusivity: ``FILTER(?a != ?b)`` for every pair of entity nodes one of which is a
  variable (two grounded nodes are different individuals by construction). Only the question
  node's class is a pattern, so the class of any other node says what it usually holds, not
  what it must: every pair gets the filter;
- functions: ``count`` -> ``SELECT (COUNT(DISTINCT ?x) AS ?count)``; ``max``/``min`` (on a
  literal question node) -> ``SELECT (MAX(?x) AS ?max)``; ``argmax``/``argmin`` on a literal node
  ``?v`` -> ``SELECT ?x ... ORDER BY DESC(?v) LIMIT 1`` (groundings with a tie at the top are
  rejected, so the answer is unique); comparatives ``> >= < <=`` -> ``FILTER(?v > c)``; no
  function -> ``SELECT DISTINCT ?x``.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field, replace
from urllib.parse import quote, unquote

from kgqa.model.terms import IRI, Literal, Term

FUNCTION_CLASSES = {"none": "none", "count": "count", "max": "superlative", "min": "superlative",
                    "argmax": "superlative", "argmin": "superlative", ">": "comparative",
                    ">=": "comparative", "<": "comparative", "<=": "comparative"}
FUNCTIONS = tuple(FUNCTION_CLASSES)

#: a relation through blank nodes (``S <p> _:b . _:b <q> O``) is one edge whose relation is a
#: path IRI: this prefix and the steps' IRIs, each percent-encoded, joined by commas
PATH_PREFIX = "urn:kgqa:path:"
#: a last path element ``^^`` + a datatype: the relation's plain-string values are read as that
#: datatype (dates and numbers written as strings: ``"2013-01-01"`` compared as a date)
CAST_MARK = "^^"


def path_iri(steps: tuple[str, ...] | list[str], cast: str | None = None) -> str:
    """The relation IRI of a path through blank nodes, its values read as ``cast`` when given
    (one step and no cast: the step itself)."""
    if len(steps) == 1 and not cast:
        return steps[0]
    parts = [*steps, *((CAST_MARK + cast,) if cast else ())]
    return PATH_PREFIX + ",".join(quote(s, safe="") for s in parts)


def _parts(rel: str) -> tuple[str, ...]:
    return tuple(unquote(s) for s in rel[len(PATH_PREFIX):].split(",")) if rel.startswith(PATH_PREFIX) else (rel,)


@functools.lru_cache(maxsize=4096)
def path_steps(rel: str) -> tuple[str, ...]:
    """The predicates of relation ``rel`` in order (one for a plain relation). Memoised, as
    :func:`path_cast`: a KG has few relations, and each is read for every pattern written
    (168,000 times generating 200 questions on fso-hgde)."""
    return tuple(p for p in _parts(rel) if not p.startswith(CAST_MARK))


@functools.lru_cache(maxsize=4096)
def path_cast(rel: str) -> str | None:
    """The datatype ``rel``'s plain-string values are read as, or None."""
    last = _parts(rel)[-1]
    return last[len(CAST_MARK):] if last.startswith(CAST_MARK) else None


def edge_patterns(src: str, rel: str, dst: str, tag: str) -> list[str]:
    """Triple patterns of one edge: a path relation gets a variable per blank node it passes
    (``?via{tag}_1``, ..., each ``FILTER(isBlank(...))``: the relation found through blank nodes),
    never a blank-node label; a cast relation reads its value into a
    variable (``?via{tag}_v``) and binds the cast value to ``dst`` (or, ``dst`` grounded,
    compares it)."""
    steps = path_steps(rel)
    cast = path_cast(rel)
    end = f"?via{tag}_v" if cast else dst
    terms = [src, *(f"?via{tag}_{k}" for k in range(1, len(steps))), end]
    out = [f"{terms[k]} <{p}> {terms[k + 1]} ." for k, p in enumerate(steps)]
    out += [f"FILTER(isBlank({v}))" for v in terms[1:len(steps)]]  # through blank nodes, as found
    if cast:
        out.append(f"BIND(<{cast}>({end}) AS {dst})" if dst.startswith("?") else f"FILTER(<{cast}>({end}) = {dst})")
    return out


@dataclass(frozen=True)
class Node:
    id: str                      # variable name without '?'
    cls: str                     # class IRI, UNTYPED "", or a datatype IRI for a literal node
    literal: bool = False
    value: Term | None = None    # grounded: the individual / literal
    template: bool = False       # a template node (grounded when the query is made)

    @property
    def grounded(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class Edge:
    src: str
    rel: str
    dst: str


@dataclass(frozen=True)
class Function:
    name: str = "none"           # one of FUNCTIONS
    node: str | None = None      # the node it applies to (argmax/argmin/comparatives)
    value: Literal | None = None  # comparatives: the constant

    @property
    def cls(self) -> str:
        return FUNCTION_CLASSES[self.name]


@dataclass(frozen=True)
class GraphQuery:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    function: Function = field(default_factory=Function)
    typed: bool = True
    question: str = "x"

    # ------------------------------------------------------------------ access

    def node(self, nid: str) -> Node:
        for n in self.nodes:
            if n.id == nid:
                return n
        raise KeyError(nid)

    @property
    def qnode(self) -> Node:
        return self.node(self.question)

    @property
    def topic_entities(self) -> list[Node]:
        return [n for n in self.nodes if n.grounded]

    def ground(self, values: dict[str, Term]) -> "GraphQuery":
        nodes = tuple(replace(n, value=values[n.id]) if n.id in values else n for n in self.nodes)
        return replace(self, nodes=nodes)

    def without_edge(self, i: int) -> "GraphQuery":
        """Drop edge ``i`` and every node (and function) no longer connected to the question node."""
        edges = tuple(e for j, e in enumerate(self.edges) if j != i)
        reach = {self.question}
        changed = True
        while changed:
            changed = False
            for e in edges:
                if (e.src in reach) != (e.dst in reach):
                    reach |= {e.src, e.dst}
                    changed = True
        edges = tuple(e for e in edges if e.src in reach and e.dst in reach)
        nodes = tuple(n for n in self.nodes if n.id in reach)
        fn = self.function
        if fn.node is not None and fn.node not in reach:
            fn = Function()
        return replace(self, nodes=nodes, edges=edges, function=fn)

    # ------------------------------------------------------------------ SPARQL

    def term(self, nid: str) -> str:
        n = self.node(nid)
        return n.value.n3() if n.value is not None else f"?{n.id}"

    def exclusive_pairs(self) -> list[tuple[str, str]]:
        ents = [n for n in self.nodes if not n.literal]
        return [(a.id, b.id) for a, b in itertools.combinations(ents, 2) if not (a.grounded and b.grounded)]

    def patterns(self, class_constraint: bool | None = None) -> list[str]:
        lines = [line for i, e in enumerate(self.edges)
                 for line in edge_patterns(self.term(e.src), e.rel, self.term(e.dst), str(i))]
        q = self.qnode
        typed = self.typed if class_constraint is None else class_constraint
        if typed and not q.literal and q.cls:
            lines.append(f"?{q.id} a <{q.cls}> .")
        for a, b in self.exclusive_pairs():
            lines.append(f"FILTER({self.term(a)} != {self.term(b)})")
        fn = self.function
        if fn.cls == "comparative" and fn.node is not None and fn.value is not None:
            lines.append(f"FILTER(?{fn.node} {fn.name} {fn.value.n3()})")
        return lines

    def sparql(self, *, function: bool = True) -> str:
        """The SPARQL query; ``function=False`` gives the query without its function (the
        plain answer set of the question node)."""
        x = f"?{self.question}"
        fn = self.function if function else Function()
        body = replace(self, function=fn).patterns()
        where = "WHERE {\n" + "".join(f"  {line}\n" for line in body) + "}"
        if fn.name == "count":
            return f"SELECT (COUNT(DISTINCT {x}) AS ?count) {where}"
        if fn.name in ("max", "min"):
            return f"SELECT ({fn.name.upper()}({x}) AS ?{fn.name}) {where}"
        if fn.name in ("argmax", "argmin"):
            order = "DESC" if fn.name == "argmax" else "ASC"
            return f"SELECT {x} {where}\nORDER BY {order}(?{fn.node})\nLIMIT 1"
        return f"SELECT DISTINCT {x} {where}"

    # ------------------------------------------------------------------ JSON

    def to_json(self) -> dict:
        def val(n: Node):
            if n.value is None:
                return None
            if isinstance(n.value, IRI):
                return {"type": "uri", "value": n.value.value}
            d = {"type": "literal", "value": n.value.value}
            if n.value.datatype:
                d["datatype"] = n.value.datatype
            if n.value.language:
                d["xml:lang"] = n.value.language
            return d

        fn: dict = {"name": self.function.name, "class": self.function.cls}
        if self.function.node:
            fn["node"] = self.function.node
        if self.function.value is not None:
            fn["value"] = self.function.value.value
        return {
            "nodes": [{"id": n.id, "class": n.cls, "kind": "question" if n.id == self.question else
                       ("grounded" if n.grounded else "ungrounded"), "literal": n.literal,
                       **({"value": val(n)} if n.grounded else {})} for n in self.nodes],
            "edges": [{"from": e.src, "relation": e.rel, "to": e.dst} for e in self.edges],
            "function": fn,
            "class_constraint": self.typed and not self.qnode.literal and bool(self.qnode.cls),
        }
