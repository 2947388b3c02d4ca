"""Grounding templates with individuals (Su et al. 2016, Sec. 3.2).

A template's grounding query selects the template nodes' values from the KG itself, with the
node classes required (``?t a <Class>`` for typed template nodes and the question node; a
literal node's datatype), grounded entities IRIs, and mutual exclusivity in force, so every
grounding conforms with the classes and has a non-empty answer before the function. Candidates are drawn in the engine, seeded:
``ORDER BY MD5(CONCAT(STR(?t1), "|", ..., salt))`` with a salt from the seed, so the same seed
draws the same candidates on every engine that implements SPARQL 1.1 (SPARQL engines do not
promise a row order otherwise), as long as the template has at most :data:`SOLUTION_CAP`
solutions; of a larger one only the first that many, in the engine's order, are drawn from
(the same on one engine; on another engine the draw may differ).

A comparative's constant is grounded next (:func:`comparative_constants`): of the N answers
without the filter, each answer's largest (``>``, ``>=``) or smallest (``<``, ``<=``) value of
the function node's datatype is read (one grouped query; cast values and values through blank
nodes alike), and the constant is the value that keeps closest to min(:data:`COMPARATIVE_KEEP`,
N/2) answers, at least one and not all (:func:`choose_constant`): a median over hundreds of
answers kept hundreds, more than a question lists. A node with a single value has no
comparative.

Each candidate graph query is then executed (:func:`validate`); it is valid when the answer is
non-empty and holds no blank node (``blank-answer``; a count of at least 2: a count of 1 is a lookup, ``count-one``; a bound max/min), a superlative chooses among at least two
answers (max/min: values), an argmax/argmin has no tie at the top, and a comparative changes
the answer (a filter that keeps every answer is a redundant function).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from kgqa.make.generate.graphquery import Function, GraphQuery, path_steps
from kgqa.make.generate.kg import TOO_COSTLY, KGAccess, QueryFailed
from kgqa.model.answer import TableAnswer
from kgqa.model.terms import IRI, RDF_LANGSTRING, BNode, Literal, Term
from kgqa.model.terms import TermMatching


#: solutions of a template read when drawing candidates or checking that a count varies: a
#: star of three patterns on one popular node has millions; the first this many (in the
#: engine's order) are hashed and drawn from
SOLUTION_CAP = 5000
#: a literal longer than this is never a topic (a description would give the answer away)
MAX_TOPIC_CHARS = 60
#: a comparative's constant keeps about this many answers at most (half of them when there
#: are fewer than twice as many): "Which organs were built after 1890?" lists a few organs,
#: not the 600 a median would keep (more than a reader lists: ``too-many-answers``)
COMPARATIVE_KEEP = 20


def _named(var: str, labels: tuple[str, ...]) -> str:
    """A filter: ``?var`` has a value of one of ``labels``. One EXISTS per predicate, each a
    lookup with subject and predicate bound (``EXISTS { ?v ?p ?l . VALUES ?p {...} }`` scanned
    the whole KG per solution on pyoxigraph: 10-22 s per grounding query on fso-hgde, 1 s so)."""
    return "FILTER(" + " || ".join(f"EXISTS {{ ?{var} <{p}> ?{var}_l{i} }}" for i, p in enumerate(labels)) + ")"


def _binds_last(lines: list[str]) -> list[str]:
    """``lines`` with every ``BIND`` (a cast of a value written as a plain string) after the
    triple patterns: a BIND ends its group's basic graph pattern, so pyoxigraph joined the
    patterns after it only once the cast relation was read whole (fso-hgde: 30 s timeouts, 0.1 s
    so). The same solutions (a BIND's variable is a cast literal no triple pattern uses),
    though the first :data:`SOLUTION_CAP` the engine returns may be others where there are more."""
    binds = [line for line in lines if line.startswith("BIND(")]
    if not binds:
        return lines
    targets = {line.rsplit(" AS ", 1)[1].rstrip(")") for line in binds}
    triples = [line for line in lines if not line.startswith(("BIND(", "FILTER"))]
    if any(v in line.replace(".", " ").split() for line in triples for v in targets):
        return lines  # a triple pattern uses a cast value: keep the order SPARQL's scoping needs
    return triples + binds + [line for line in lines if line.startswith("FILTER")]


def _grounding_body(t: GraphQuery) -> tuple[list[str], list[str]]:
    """The WHERE lines that select template ``t``'s groundings and the grounded variables."""
    vars_ = [n.id for n in t.nodes if n.template]
    free = t.__class__(t.nodes, t.edges, Function(), t.typed, t.question)
    lines = free.patterns()
    for n in t.nodes:
        if n.template and not n.literal:
            lines.append(f"FILTER(isIRI(?{n.id}))")
            if n.cls:
                lines.append(f"?{n.id} a <{n.cls}> .")
        if n.template and n.literal:  # a short value of the node's datatype
            if n.cls == RDF_LANGSTRING:
                lines.append(f"FILTER(isLiteral(?{n.id}) && LANG(?{n.id}) != \"\")")
            else:
                lines.append(f"FILTER(isLiteral(?{n.id}) && DATATYPE(?{n.id}) = <{n.cls}>)")
            lines.append(f"FILTER(STRLEN(STR(?{n.id})) <= {MAX_TOPIC_CHARS})")
    return _binds_last(lines), vars_


def grounding_query(t: GraphQuery, limit: int, salt: str,
                    labels: tuple[str, ...] = ()) -> tuple[str, list[str]] | None:
    """The SELECT for candidate groundings of template ``t`` and the variables it returns
    (None when the template has nothing to ground). Literal topics are at most
    :data:`MAX_TOPIC_CHARS` characters. ``labels``: entity topics must have a value of one of
    these (a KG that names its entities: an unnamed topic is never put in a question, so it is
    not drawn); checked on the capped solutions, outside the subquery, so a template whose
    topics are mostly unnamed costs no more than :data:`SOLUTION_CAP` checks."""
    sq = solutions_query(t, labels)
    if sq is None:
        return None
    q, vars_ = sq
    key = ", \"|\", ".join(f"STR(?{v})" for v in vars_)
    sel = " ".join(f"?{v}" for v in vars_)
    return f"{q}\nORDER BY MD5(CONCAT({key}, \"|{salt}\")) {sel}\nLIMIT {int(limit)}", vars_


def solutions_query(t: GraphQuery, labels: tuple[str, ...] = ()) -> tuple[str, list[str]] | None:
    """:func:`grounding_query`'s distinct groundings without its seeded order and limit (the
    same for every salt, so read once per template and memoised by the executor), and the
    variables it returns; None when there is nothing to ground."""
    lines, vars_ = _grounding_body(t)
    if not vars_:
        return None
    sel = " ".join(f"?{v}" for v in vars_)
    where = "".join(f"  {line}\n" for line in lines)
    capped = f"{{ SELECT {sel} WHERE {{\n{where}}} LIMIT {SOLUTION_CAP} }}"
    nodes = [n.id for n in t.nodes if n.template and not n.literal] if labels else []
    if not nodes:
        return f"SELECT DISTINCT {sel} WHERE {{ {capped} }}", vars_
    # the names checked on the distinct groundings, each a BIND: as FILTERs over the capped
    # solutions pyoxigraph took 1-2 s a query on fso-hgde, this way 0.03 s (the same rows)
    named = " ".join(f"BIND(({_named(v, labels)[7:-1]}) AS ?{v}_named) FILTER(?{v}_named)" for v in nodes)
    return f"SELECT DISTINCT {sel} WHERE {{ {{ SELECT DISTINCT {sel} WHERE {{ {capped} }} }} {named} }}", vars_


def seeded_order(rows, salt: str, limit: int) -> list | None:
    """The first ``limit`` of ``rows`` (distinct solutions) in :func:`grounding_query`'s order,
    ``MD5(CONCAT(STR(?v1), "|", ..., "|salt"))`` ascending, computed here; None where that
    order needs SPARQL's term order to break a tie (two rows with the same string) or a value
    is unbound: the caller then asks the engine."""
    texts = _row_texts(rows)
    if texts is None:
        return None
    tail = ("|" + salt).encode("utf-8")
    keyed = sorted((hashlib.md5(t + tail).hexdigest(), k) for k, t in enumerate(texts))
    if any(a[0] == b[0] for a, b in zip(keyed, keyed[1:])):
        return None
    return [rows[k] for _, k in keyed[:int(limit)]]


#: the last rows :func:`_row_texts` read ({id: (rows, texts)}): a template's grounding rows are
#: drawn from under a new salt at every attempt that draws it
_ROW_TEXTS: dict[int, tuple] = {}


def _row_texts(rows) -> list[bytes] | None:
    """Each row's ``STR(?v1) "|" ... STR(?vn)`` in UTF-8; None when a value is unbound or a
    blank node (its string is the engine's own)."""
    hit = _ROW_TEXTS.get(id(rows))
    if hit is not None and hit[0] is rows:
        return hit[1]
    texts = None if any(v is None or isinstance(v, BNode) for row in rows for v in row) else \
        ["|".join(v.value for v in row).encode("utf-8") for row in rows]
    if len(_ROW_TEXTS) >= 64:
        _ROW_TEXTS.clear()
    _ROW_TEXTS[id(rows)] = (rows, texts)
    return texts


def named_classes(kg: KGAccess, classes: dict[str, int], labels: tuple[str, ...]) -> frozenset[str]:
    """The classes of ``classes`` ({class: instances}) most of whose instances have a value of
    one of ``labels`` (one grouped query): question nodes whose answers can be named, unlike
    structural nodes (time-spans, productions, addresses). Raises :class:`QueryFailed`."""
    if not labels or not classes:
        return frozenset()
    has = " || ".join(f"EXISTS {{ ?s <{p}> ?l{i} }}" for i, p in enumerate(labels))
    q = f"SELECT ?c (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s a ?c . FILTER(isIRI(?s) && isIRI(?c)) FILTER({has}) }} GROUP BY ?c"
    out = set()
    for c, n in kg.select(q).rows:
        if isinstance(c, IRI) and isinstance(n, Literal) and 2 * int(n.value) > classes.get(c.value, 0) > 0:
            out.add(c.value)
    return frozenset(out)


#: node signatures (:func:`node_signatures`) are read from KGs of at most this many triples
#: (one aggregate over every node; a large endpoint is asked the grounding queries instead)
SIGNATURE_MAX_TRIPLES = 2_000_000
_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def node_signatures(kg: KGAccess) -> list[frozenset[str]]:
    """The distinct signatures of the KG's nodes (IRIs and blank nodes): each the set of what
    meets at one node, ``o<p>`` (a triple of predicate p leaves it), ``i<p>`` (one arrives)
    and ``a<C>`` (it is typed C). One aggregate query. Raises :class:`QueryFailed`."""
    q = (f"SELECT DISTINCT ?sig WHERE {{ {{ SELECT ?n (GROUP_CONCAT(DISTINCT ?k; separator=\" \") AS ?sig) WHERE {{\n"
         f"  {{ ?n ?p ?o . BIND(IF(?p = <{_RDF_TYPE}> && isIRI(?o), CONCAT(\"a<\", STR(?o), \">\"), "
         f"CONCAT(\"o<\", STR(?p), \">\")) AS ?k) }}\n"
         f"  UNION {{ ?s ?p ?n . FILTER(!isLiteral(?n)) BIND(CONCAT(\"i<\", STR(?p), \">\") AS ?k) }}\n"
         f"}} GROUP BY ?n }} }}")
    return [frozenset(re.findall(r"[aoi]<[^<>]*>", row[0].value)) for row in kg.select(q).rows
            if row and isinstance(row[0], Literal)]


def may_ground(signatures: list[frozenset[str]], t: GraphQuery, labels: tuple[str, ...] = ()) -> bool:
    """False when template ``t`` certainly has no grounding (:func:`grounding_query` would come
    back empty): some entity node of it needs relations (and a class) that meet at no node of
    the KG (``signatures``: :func:`node_signatures`), e.g. a star whose three relations never
    share a node (fso-hgde: 13 s to find none). ``labels``: template nodes must also have one
    of these (:func:`grounding_query`'s ``labels``). True says nothing (a necessary condition)."""
    named = {f"o<{p}>" for p in labels}
    for n in t.nodes:
        if n.literal:
            continue
        need = {f"o<{path_steps(e.rel)[0]}>" for e in t.edges if e.src == n.id}
        need |= {f"i<{path_steps(e.rel)[-1]}>" for e in t.edges if e.dst == n.id}
        if n.cls and ((n.id == t.question and t.typed) or n.template):
            need.add(f"a<{n.cls}>")
        label = bool(named) and n.template
        if not any(need <= sig and (not label or not named.isdisjoint(sig)) for sig in signatures):
            return False
    return True


def count_varies(kg: KGAccess, t: GraphQuery) -> bool:
    """Whether some grounding of count template ``t`` counts more than one answer (False: the
    count is 1 for every grounding, a lookup, not a count question). Raises :class:`QueryFailed`."""
    lines, vars_ = _grounding_body(t)
    if not vars_:
        return True
    sel = " ".join(f"?{v}" for v in vars_)
    where = "".join(f"  {line}\n" for line in lines)
    q = (f"SELECT {sel} WHERE {{ {{ SELECT {sel} ?{t.question} WHERE {{\n{where}}} LIMIT {SOLUTION_CAP} }} }}\n"
         f"GROUP BY {sel}\nHAVING (COUNT(DISTINCT ?{t.question}) > 1)\nLIMIT 1")
    return bool(kg.select(q).rows)


def candidates(kg: KGAccess, t: GraphQuery, limit: int, salt: str,
               labels: tuple[str, ...] = ()) -> list[dict[str, Term]]:
    """Up to ``limit`` seeded candidate groundings ({node id: value}); [{}] when there is
    nothing to ground. ``labels``: :func:`grounding_query`. Raises
    :class:`QueryFailed`."""
    sq = solutions_query(t, labels)
    if sq is None:
        return [{}]
    rows = seeded_order(kg.select(sq[0]).rows, salt, limit)
    if rows is None:  # a tie or an unbound value: the engine orders
        q, _ = grounding_query(t, limit, salt, labels)
        rows = kg.select(q).rows
    vars_ = sq[1]
    out = []
    for row in rows:
        vals = dict(zip(vars_, row))
        if any(v is None for v in vals.values()):
            continue
        out.append(vals)
    return out


def apply(t: GraphQuery, values: dict[str, Term]) -> GraphQuery | None:
    """The graph query for one candidate: template nodes grounded. None when two grounded
    entities coincide."""
    ents = [v for v in values.values() if isinstance(v, IRI)]
    if len(set(ents)) != len(ents):
        return None
    return t.ground(values)


def _constant_query(q: GraphQuery) -> str:
    """Each answer's largest (``>``, ``>=``) or smallest (``<``, ``<=``) value of the function
    node's datatype, grouped: the distinct such values in SPARQL order, each with how many
    answers have it. An answer passes ``?v > c`` when its largest value does, so the answers a
    constant keeps are read off these rows."""
    node = q.node(q.function.node)
    x = f"?{q.question}"
    agg = "MAX" if q.function.name in (">", ">=") else "MIN"
    body = "".join(f"  {line}\n" for line in q.__class__(q.nodes, q.edges, Function(), q.typed, q.question).patterns())
    return (f"SELECT ?m (COUNT({x}) AS ?n) WHERE {{ {{ SELECT {x} ({agg}(?{node.id}) AS ?m) WHERE {{\n{body}"
            f"  FILTER(DATATYPE(?{node.id}) = <{node.cls}>)\n}} GROUP BY {x} }} }}\nGROUP BY ?m\nORDER BY ?m")


def choose_constant(fn: str, rows: list[tuple[Literal, int]]) -> Literal | None:
    """The constant of comparative ``fn`` from ``rows`` (:func:`_constant_query`: each distinct
    extreme value, ascending, and its number of answers): the value that keeps closest to
    min(:data:`COMPARATIVE_KEEP`, half) of the N answers, at least one and fewer than N (ties:
    fewer answers, then the smaller value); None when no value does (a single value)."""
    total = sum(n for _, n in rows)
    target = min(COMPARATIVE_KEEP, max(1, total // 2))
    best: tuple | None = None
    below = 0  # answers whose value is below rows[j]
    for j, (value, n) in enumerate(rows):
        kept = {">": total - below - n, ">=": total - below, "<": below, "<=": below + n}[fn]
        if 1 <= kept < total:
            key = (abs(kept - target), kept, j)
            if best is None or key < best[0]:
                best = (key, value)
        below += n
    return best[1] if best else None


def comparative_constants(kg: KGAccess, qs: list[GraphQuery]) -> list[GraphQuery | None]:
    """Each comparative query with its constant chosen (module docstring; one batch); None when
    no constant keeps some answers and drops others (a single value), or the query failed."""
    out: list[GraphQuery | None] = []
    for q, res in zip(qs, kg.select_many([_constant_query(q) for q in qs], reorder=True)):
        rows = [] if isinstance(res, QueryFailed) else \
            [(r[0], int(r[1].value)) for r in res.rows if isinstance(r[0], Literal) and isinstance(r[1], Literal)]
        fn = q.function
        c = choose_constant(fn.name, rows)
        out.append(None if c is None else
                   q.__class__(q.nodes, q.edges, Function(fn.name, fn.node, c), q.typed, q.question))
    return out


@dataclass(frozen=True)
class Answered:
    query: GraphQuery
    sparql: str
    answer: TableAnswer


def answer_key(a: TableAnswer) -> frozenset:
    return frozenset(a.rows)


def _checks(q: GraphQuery) -> list[str]:
    """The query and the extra queries its validation needs."""
    fn = q.function
    out = [q.sparql()]
    plain = q.sparql(function=False)
    x = f"?{q.question}"
    if fn.cls == "superlative":  # are there two distinct answers (values) to choose from? (LIMIT 2
        # stops early: COUNT(DISTINCT) read every solution, 1-4 s each on fso-hgde)
        out.append(f"{plain[:-1]}  FILTER(BOUND({x}))\n}}\nLIMIT 2")
    if fn.name == "count":  # would it count a blank node?
        out.append(f"{plain[:-1]}  FILTER(isBlank({x}))\n}}\nLIMIT 1")
    if fn.name in ("argmax", "argmin"):
        order = "DESC" if fn.name == "argmax" else "ASC"
        base = plain.replace(f"SELECT DISTINCT {x}", f"SELECT DISTINCT ?{fn.node} {x}", 1)
        out.append(f"{base}\nORDER BY {order}(?{fn.node})\nLIMIT 2")
    elif fn.cls == "comparative":
        out.append(plain)
    return out


def _judge(q: GraphQuery, sparql: str, res: list) -> tuple[Answered | None, str]:
    failed = [r.status for r in res if isinstance(r, QueryFailed)]
    if failed:  # a check refused unrun for the solutions it would read, or one that failed
        return None, TOO_COSTLY if TOO_COSTLY in failed else "engine-error"
    fn = q.function
    answer = res[0]
    rows = [r for r in answer.rows if any(c is not None for c in r)]
    if not rows:
        return None, "empty"
    if any(isinstance(c, BNode) for r in rows for c in r):
        return None, "blank-answer"  # a blank node is never an answer (it has no name to give)
    if fn.name == "count" and res[1].rows:
        return None, "blank-answer"
    if fn.name == "count" and rows[0][0] == Literal("0", "http://www.w3.org/2001/XMLSchema#integer"):
        return None, "empty"
    if fn.name == "count" and rows[0][0] == Literal("1", "http://www.w3.org/2001/XMLSchema#integer"):
        return None, "count-one"  # a lookup worded as a count
    if fn.cls == "superlative":
        if len({r[0] for r in res[1].rows if r and r[0] is not None}) < 2:
            return None, "redundant-function"  # a max over one value, an argmax over one answer
    if fn.name in ("argmax", "argmin"):
        top = res[2].rows
        if len(top) > 1 and top[0][0] is not None and top[1][0] is not None and \
                _value_equal(top[0][0], top[1][0]) and top[0][1] != top[1][1]:
            return None, "tie"
    if fn.cls == "comparative" and answer_key(res[1]) == answer_key(answer):
        return None, "redundant-function"
    return Answered(q, sparql, TableAnswer(answer.variables, tuple(rows))), ""


#: functions whose answer is one row: their query may be sent in another join order (the rows
#: of a list come in the engine's order, and that order is the dataset's)
ONE_ROW = frozenset(("count", "max", "min", "argmax", "argmin"))


def validate_many(kg: KGAccess, qs: list[GraphQuery]) -> list[tuple[Answered | None, str]]:
    """:func:`validate` for several queries, executed as one batch (the engine runs them in
    parallel: worker processes, or requests in flight to an endpoint). The checks are sent in
    the join order of :mod:`~kgqa.make.generate.joinorder`; the query itself when its answer
    is one row (:data:`ONE_ROW`)."""
    plans = [_checks(q) for q in qs]
    early = _few_values(kg, qs, plans)
    todo = [k for k in range(len(qs)) if early[k] is None]
    flat = kg.select_many([x for k in todo for x in plans[k]],
                          reorder=[j > 0 or qs[k].function.name in ONE_ROW for k in todo for j in range(len(plans[k]))])
    out, i = list(early), 0
    for k in todo:
        p = plans[k]
        out[k] = _judge(qs[k], p[0], flat[i:i + len(p)])
        i += len(p)
    return out


def prefetch_few_values(kg: KGAccess, qs: list[GraphQuery]) -> None:
    """Run the two-values checks of the superlatives among ``qs`` as one batch, ahead of
    :func:`validate_many` (which then finds them in the executor's memo): a superlative
    template's candidates are mostly all checked, most choosing among one value, and one batch
    keeps every engine worker busy where batches of one or three left one idle."""
    texts = [_checks(q)[1] for q in qs if q.function.cls == "superlative"]
    if len(texts) > 1:
        kg.select_many(texts, reorder=True)


def _few_values(kg: KGAccess, qs: list[GraphQuery], plans: list[list[str]]) -> list[tuple[None, str] | None]:
    """For each superlative, the verdict :func:`_judge` gives when its answers have fewer
    than two values, read from its two-values check alone (asked first, one batch), so the
    superlative itself is not run (fso-hgde: most of its 3,500 superlatives choose among one
    value): ``empty`` (none), ``blank-answer`` (an argmax/argmin whose one answer is a blank
    node) or ``redundant-function``; None where the whole validation must run."""
    sup = [k for k, q in enumerate(qs) if q.function.cls == "superlative"]
    out: list[tuple[None, str] | None] = [None] * len(qs)
    for k, res in zip(sup, kg.select_many([plans[k][1] for k in sup], reorder=True)):
        if isinstance(res, QueryFailed):
            continue
        values = {r[0] for r in res.rows if r and r[0] is not None}
        if len(values) >= 2:
            continue
        if not values:
            out[k] = (None, "empty")
        elif any(isinstance(v, BNode) for v in values) and qs[k].function.name in ("argmax", "argmin"):
            out[k] = (None, "blank-answer")
        else:
            out[k] = (None, "redundant-function")
    return out


def validate(kg: KGAccess, q: GraphQuery) -> tuple[Answered | None, str]:
    """Execute ``q`` and check it is a valid graph query (module docstring). Returns the
    answered query or None with the reason (``empty``, ``tie``, ``redundant-function``,
    ``engine-error``, ``too-costly``: a check refused unrun, see
    :data:`~kgqa.make.generate.kg.SOLUTIONS_PER_SECOND`)."""
    return validate_many(kg, [q])[0]


def _value_equal(a: Term, b: Term) -> bool:
    m = TermMatching()
    return m.key(a) == m.key(b)
