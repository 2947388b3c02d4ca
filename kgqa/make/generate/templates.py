"""Query templates grown at random from the schema (Su et al. 2016, Sec. 3.1).

A question node's class is drawn; then, edge by edge, an existing node is drawn and a relation
whose domain (outgoing) or range (incoming) fits its class is appended, leading to a new node
of a class drawn from the relation's other end (weighted by triple counts) or, sometimes, to an
existing node of that class (cycles; the same relation may repeat, but not twice on one side
of a hub node whose relation fans out to more than ``MAX_SHARING`` on average: siblings of
siblings). Literal nodes only receive
edges, a second one only over the same relation whose values are selective (a value join:
"the same amount as X"; see :attr:`~kgqa.make.generate.schema.Relation.joinable`). Then a function (see :mod:`kgqa.make.generate.functions`) is put on a compatible node, and
some nodes are chosen as template nodes, to be grounded with individuals: each leaf with
probability 0.7, each inner node with 0.15 (half that with a comparative, which needs several
answers to compare), never the question node, the function's node or the node owning the function's value,
never both ends of one edge (that would be a fixed fact, not a constraint), and at least one
unless the function is a superlative or a comparative (whose constant
is grounded instead).
"""

from __future__ import annotations

import random

from kgqa.make.generate.functions import requirements
from kgqa.make.generate.graphquery import Edge, Function, GraphQuery, Node, path_steps
from kgqa.make.generate.schema import MAX_SHARING, UNTYPED, Schema, value_kind

REUSE_PROBABILITY = 0.2
#: a number literal is grounded (a topic) this much less often than other leaves
NUMBER_TOPIC_FACTOR = 0.15


def _weighted(rng: random.Random, counts: dict[str, int]) -> str:
    keys = sorted(counts)
    return rng.choices(keys, weights=[max(1, counts[k]) for k in keys])[0]


def _numeric(dt: str) -> bool:
    return value_kind(dt) in ("number", "date")


def question_classes(schema: Schema, literal: bool) -> list[str]:
    if literal:
        return sorted({dt for r in schema.relations.values() for dt in r.datatypes if _numeric(dt)})
    used = {c for r in schema.relations.values() for c in (*r.domain, *r.range)}
    typed = sorted(c for c in schema.classes if c in used and c != UNTYPED)
    # a KG without rdf:type: the question node is an untyped resource ("Which thing ...")
    return typed or ([UNTYPED] if UNTYPED in used else [])


def _fans(schema: Schema, rel: str, side: str) -> bool:
    r = schema.relations.get(rel)
    return r is not None and r.fan(side) > MAX_SHARING


def _hub(schema: Schema, r, nid: str, edges: list[Edge], side: str) -> bool:
    """Whether a new edge of relation ``r`` at node ``nid`` (its object when ``side`` is "in")
    and an edge already there would both fan out from ``nid``: many subjects share each
    object, or a subject has many objects, more than
    :data:`~kgqa.make.generate.schema.MAX_SHARING` on average. Such siblings of siblings
    ("Which concept is in a scheme that X is in?") pair thousands with thousands (slow) and
    say little."""
    if not r.fan(side) > MAX_SHARING:
        return False
    return any((e.dst == nid and _fans(schema, e.rel, "in")) or (e.src == nid and _fans(schema, e.rel, "out"))
               for e in edges)


def _through_blanks(rel: str) -> bool:
    """Whether ``rel`` is a path through blank nodes (more than one step)."""
    return len(path_steps(rel)) > 1


def _second_path(rel: str, edges: list[Edge]) -> bool:
    """Whether an edge of ``rel`` would be a template's second path through blank nodes. Two
    such paths from one node join every pair of its blank nodes (organs-it: each instrument's
    timed locations twice over; queries of 30 s and more) and read as one long sentence, so
    a template has at most one."""
    return _through_blanks(rel) and any(_through_blanks(e.rel) for e in edges)


#: numeric_distance per schema (id -> (schema, relations then, distances)); a few schemas per process
_DISTANCES: dict[int, tuple[Schema, int, dict[str, int]]] = {}


def numeric_distance(schema: Schema) -> dict[str, int]:
    """For each class, the fewest edges from one of its instances to a number or date literal
    over the schema's relations (either direction between entities, the last one to the
    literal); classes that reach none are absent. Cached per schema (and its relation count:
    the generator drops relations before it grows templates)."""
    hit = _DISTANCES.get(id(schema))
    if hit is not None and hit[0] is schema and hit[1] == len(schema.relations):
        return hit[2]
    links: dict[str, set[str]] = {}
    dist: dict[str, int] = {}
    for r in schema.relations.values():
        if any(_numeric(d) for d in r.datatypes):
            dist.update((c, 1) for c in r.domain)
        for a in r.domain:
            for b in r.range:
                links.setdefault(a, set()).add(b)
                links.setdefault(b, set()).add(a)
    frontier = sorted(dist)
    while frontier:  # breadth first from the classes one edge away
        nxt = []
        for c in frontier:
            for d in sorted(links.get(c, ())):
                if d not in dist:
                    dist[d] = dist[c] + 1
                    nxt.append(d)
        frontier = nxt
    if len(_DISTANCES) > 8:
        _DISTANCES.clear()
    _DISTANCES[id(schema)] = (schema, len(schema.relations), dist)
    return dist


def _ends(r, direction: str, toward: dict[str, int] | None, left: int) -> dict[str, int]:
    """The classes/datatypes an edge of ``r`` may lead to (with their triple counts): when the
    template must still reach a number (``toward``: :func:`numeric_distance`), only number/date
    datatypes or classes that reach one in the ``left`` edges after this one."""
    ends = {**r.range, **r.datatypes} if direction == "out" else dict(r.domain)
    if toward is None:
        return ends
    return {k: c for k, c in ends.items()
            if (direction == "out" and k in r.datatypes and _numeric(k)) or
            (k not in r.datatypes and toward.get(k, left + 1) <= left)}


# long function: the growth loop (module docstring): options, their ends and reuse share the loop's nodes and edges
def grow_template(schema: Schema, rng: random.Random, n_edges: int, fn: str,
                  named: frozenset[str] = frozenset()) -> GraphQuery | None:
    """One random template with ``n_edges`` edges and function ``fn``, or None when the schema
    offers no way to build it from the drawn start (callers draw again). A function on a
    number or date (argmax, argmin, comparatives) starts from a class that reaches one within
    ``n_edges`` (:func:`numeric_distance`) and grows toward it: until the template has such a
    literal node, an edge is kept only when some node still reaches one in the edges left
    (an object's date through its production and time-span). Such a function's question node
    is of a class in ``named`` (whose instances have names) when one reaches a number: its
    answers are listed or picked, and "Which time-span has the latest end date?" names none."""
    q_literal, need_numeric = requirements(fn)
    if fn == "count" or fn in ("argmax", "argmin") or need_numeric:
        q_literal = False
    starts = question_classes(schema, q_literal)
    dist = numeric_distance(schema) if need_numeric else {}
    if need_numeric:
        starts = [c for c in starts if dist.get(c, n_edges + 1) <= n_edges]
        starts = [c for c in starts if c in named] or starts
    if not starts:
        return None
    nodes: list[Node] = [Node("x", rng.choice(starts), literal=q_literal)]
    edges: list[Edge] = []
    counter = 0
    for step in range(n_edges):
        left = n_edges - step - 1  # edges after this one
        # must this edge lead toward a number (no node has one, none reaches one later)?
        toward = dist if need_numeric and not any(n.literal and _numeric(n.cls) for n in nodes[1:]) and \
            not any(not n.literal and dist.get(n.cls, left + 1) <= left for n in nodes) else None
        force_numeric = toward is not None and left == 0
        options: list[tuple[Node, str, str]] = []  # (node, relation, direction)
        for n in nodes:
            if not n.literal:
                for r in schema.outgoing(n.cls):
                    if _hub(schema, r, n.id, edges, "out") or _second_path(r.iri, edges):
                        continue
                    if toward is not None and not _ends(r, "out", toward, left):
                        continue
                    options.append((n, r.iri, "out"))
            if not force_numeric:
                for r in schema.incoming(n.cls, n.literal):
                    if (not n.literal and _hub(schema, r, n.id, edges, "in")) or _second_path(r.iri, edges):
                        continue
                    # a value join only over the same relation ("the same height as X"): two
                    # different relations sharing a value is a coincidence, not a question
                    into = [e for e in edges if e.dst == n.id]
                    if n.literal and into and not (r.joinable and any(e.rel == r.iri for e in into)):
                        continue  # (a literal question node takes its first edge from anywhere)
                    if toward is not None and not _ends(r, "in", toward, left):
                        continue
                    options.append((n, r.iri, "in"))
        if not options:
            return None
        node, rel, direction = rng.choice(options)
        r = schema.relations[rel]
        other = _weighted(rng, _ends(r, direction, toward, left))
        literal = direction == "out" and other in r.datatypes and other not in r.range
        reuse = [n for n in nodes if n.cls == other and n.literal == literal and n.id != node.id and not literal
                 and not any({e.src, e.dst} == {n.id, node.id} and e.rel == rel for e in edges)]
        if reuse and rng.random() < REUSE_PROBABILITY:
            target = rng.choice(reuse)
        else:
            counter += 1
            target = Node(f"y{counter}", other, literal=literal)
            nodes.append(target)
        edges.append(Edge(node.id, rel, target.id) if direction == "out" else Edge(target.id, rel, node.id))
    return _finish(nodes, edges, fn, rng)


def _finish(nodes: list[Node], edges: list[Edge], fn: str, rng: random.Random) -> GraphQuery | None:
    degree = {n.id: 0 for n in nodes}
    for e in edges:
        degree[e.src] += 1
        degree[e.dst] += 1
    function = Function(fn)
    if fn in ("argmax", "argmin", ">", ">=", "<", "<="):
        cands = [n for n in nodes[1:] if n.literal and _numeric(n.cls)]
        if not cands:
            return None
        function = Function(fn, rng.choice(cands).id)
    elif fn in ("max", "min") and not (nodes[0].literal and _numeric(nodes[0].cls)):
        return None
    elif fn == "count" and nodes[0].literal:
        return None
    keep_free = {function.node}
    if fn in ("max", "min"):  # aggregate over a set: the value's owner stays a variable
        keep_free |= {e.src for e in edges if e.dst == nodes[0].id}
    if function.node is not None:  # a grounded owner would make the value a constant
        keep_free |= {e.src for e in edges if e.dst == function.node}
    chosen: list[str] = []
    for n in nodes[1:]:
        if n.id in keep_free:
            continue
        p = (0.7 if degree[n.id] == 1 else 0.15) * (0.5 if function.cls == "comparative" else 1.0)
        if n.literal and value_kind(n.cls) == "number":
            p *= NUMBER_TOPIC_FACTOR  # looking an entity up by a statistic is rare (commonness)
        if rng.random() < p:
            chosen.append(n.id)
    for e in edges:  # an edge between two individuals is a fixed fact, not a constraint
        if e.src in chosen and e.dst in chosen:
            chosen.remove(max(e.src, e.dst, key=lambda nid: [n.id for n in nodes].index(nid)))
    if not chosen and function.cls not in ("superlative", "comparative"):
        leaves = [n.id for n in nodes[1:] if degree[n.id] == 1 and n.id not in keep_free]
        if not leaves:
            return None
        chosen.append(rng.choice(leaves))
    out = tuple(Node(n.id, n.cls, n.literal, None, n.id in chosen) for n in nodes)
    return GraphQuery(out, tuple(edges), function)


def template_key(t: GraphQuery) -> tuple:
    return (tuple((n.id, n.cls, n.literal, n.template) for n in t.nodes), t.edges, t.function.name, t.function.node)
