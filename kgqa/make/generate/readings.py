"""Faithfulness as a checked property: the readings a person could give a question, run as
queries. A graph query is rejected when

- ``answer-in-text``: an answer (its label, or a literal's value) is written in the question
  ("Which country is the same as India?" answering India);
- ``ambiguous-node``: a node that is neither the question node nor grounded, but is pinned by
  a grounded literal ("a country that has a life expectancy of 71"), matches more than one
  entity: the text says "a country", one, so a count, superlative or list over several would
  be over more than the text names;
- ``blank-answers``: an answer is a blank node (its id is local to one copy of the KG: no
  reader can name it, no scorer can match it on another load or engine);
- ``too-many-answers``: more than :data:`MAX_ANSWERS_READ` answers (not a count);
- ``indistinct-answers`` / ``unlabelled-answers``: the answers cannot be told apart or have
  no names where the KG names its entities (:func:`unreadable_answers`);
- ``ambiguous-reading``: a relation between two entities read the other way round (the
  reader's other interpretation of "Which region has subregion X?": is X the region's
  subregion, or the region X's?) gives a different, non-empty answer. Relations whose
  direction the user lexicon or a built-in entry fixes are not re-read;
- ``ambiguous-topic``: another entity has the topic's label (three HISCO codes are each "Not
  an occupational title"), and the query with that entity in the topic's place has answers the
  question's own do not include (a reader of "the hisco code for Not an occupational title"
  expects the answers of all three); a twin with no answer, or only answers the question has,
  changes nothing a reader expects (:func:`label_twins`).

Each check is one batch of SPARQL queries through :class:`~kgqa.make.generate.kg.KGAccess`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from kgqa.make.generate.graphquery import Edge, GraphQuery
from kgqa.make.generate.grounding import Answered, answer_key
from kgqa.make.generate.kg import KGAccess, QueryFailed
from kgqa.make.generate.language import code_like, unnamed_iri
from kgqa.model.terms import IRI, BNode, Literal

_INT = "http://www.w3.org/2001/XMLSchema#integer"


#: a question (not a count) with more answers than this is too vague to publish
#: (``too-many-answers``): no reader lists them, and their labels are not all read
MAX_ANSWERS_READ = 200


def _answer_iris(answered: Answered) -> list[str]:
    return [t.value for row in answered.answer.rows[:MAX_ANSWERS_READ] for t in row if isinstance(t, IRI)]


def answer_in_text(answered: Answered, lex, text: str) -> bool:
    """Whether an answer of ``answered`` is written in ``text`` (whole words, any case; a label
    that is a code with a bracketed suffix without it: "Y117-1025328 (5)" is in "... has the
    part Y117-1025328 - Planck Switch")."""
    if answered.query.function.name in ("count", "max", "min"):
        return False
    low = text.lower()
    lex.fetch(_answer_iris(answered))  # one batch, not a query per answer
    for row in answered.answer.rows:
        for t in row:
            if isinstance(t, IRI):
                said = lex.label(t.value)
            elif isinstance(t, Literal):
                said = t.value
            else:
                continue
            said = said.strip().lower()
            bare = re.sub(r"\s*\([^()]*\)$", "", said)  # "Y117-1025328 (5)": the code is said
            for form in (said, bare) if code_like(bare) else (said,):
                if len(form) >= 2 and re.search(r"(?<!\w)" + re.escape(form) + r"(?!\w)", low):
                    return True
    return False


def unreadable_answers(answered: Answered, lex) -> str:
    """``indistinct-answers`` when two answers have the same label (a reader cannot tell
    "death, death, death" apart: structural nodes such as events and time-spans), or
    ``unlabelled-answers`` when the KG names its entities but most answers have no name
    (blank-node-like structure: parthoods, time-spans), or when an answer has neither a label
    nor a local name with a word in it (a UUID); else ""."""
    if answered.query.function.name in ("count", "max", "min"):
        return ""
    iris = _answer_iris(answered)
    if not iris:
        return ""
    lex.fetch(iris)
    labels = [lex.label(i).strip().lower() for i in iris]
    if len(set(labels)) < len(labels):
        return "indistinct-answers"
    if lex.names_entities and 2 * sum(1 for i in iris if i in lex.unlabelled) > len(iris):
        return "unlabelled-answers"
    if any(i in lex.unlabelled and unnamed_iri(i) for i in iris):
        return "unlabelled-answers"  # a UUID printed as an answer: no reader can name or check it
    return ""


def answers_problem(answered: Answered, lex) -> str:
    """``blank-answers`` (an answer is a blank node), ``too-many-answers`` or
    :func:`unreadable_answers`' reason, or "": what the answers alone decide (minimization keeps the answer, so the generator asks before minimizing)."""
    if answered.query.function.name in ("count", "max", "min"):
        return ""  # a number or one value: what the question asks about its answers is read, not listed
    if any(isinstance(t, BNode) for row in answered.answer.rows for t in row):
        return "blank-answers"  # local to one copy of the KG: no reader can name it, no scorer match it
    if len(answered.answer.rows) > MAX_ANSWERS_READ:
        return "too-many-answers"  # "Which concept is in the scheme X?" listing 5,565: no question
    return unreadable_answers(answered, lex) if lex is not None else ""


def pinned_nodes(q: GraphQuery) -> list[str]:
    """Ungrounded entity nodes, other than the question node, with an edge to a grounded literal."""
    lits = {n.id for n in q.nodes if n.literal and n.grounded}
    out = []
    for n in q.nodes:
        if n.id == q.question or n.literal or n.grounded:
            continue
        if any((e.src == n.id and e.dst in lits) or (e.dst == n.id and e.src in lits) for e in q.edges):
            out.append(n.id)
    return out


def reversible_edges(q: GraphQuery, lex) -> list[int]:
    """Edges between two entity nodes whose direction only the relation's words tell."""
    out = []
    for i, e in enumerate(q.edges):
        if e.src == e.dst or q.node(e.src).literal or q.node(e.dst).literal:
            continue
        rt = lex.rel(e.rel) if lex is not None else None
        if rt is not None and rt.source in ("lexicon", "builtin"):
            continue
        out.append(i)
    return out


def _reversed(q: GraphQuery, i: int) -> GraphQuery:
    e = q.edges[i]
    edges = tuple(Edge(e.dst, e.rel, e.src) if j == i else x for j, x in enumerate(q.edges))
    return replace(q, edges=edges)


#: entities looked up per topic whose label is the topic's (:func:`label_twins`)
MAX_TWINS = 5


def label_twins(kg: KGAccess, q: GraphQuery, lex) -> list[GraphQuery]:
    """``q`` with each grounded entity replaced by another entity that has the label the text
    says (by the same label property, any language tag), at most :data:`MAX_TWINS` per topic:
    the other things a reader could take the topic for. One batch of queries."""
    if lex is None or not lex.props:
        return []
    topics = [n for n in q.topic_entities if isinstance(n.value, IRI)]
    props = ", ".join(f"<{p}>" for p in lex.props)
    texts = [f"SELECT DISTINCT ?o WHERE {{ {n.value.n3()} ?p ?l . FILTER(?p IN ({props})) "
             f"FILTER(STR(?l) = {Literal(lex.label(n.value.value)).n3()}) ?o ?p ?l . "
             f"FILTER(isIRI(?o) && ?o != {n.value.n3()}) }} LIMIT {MAX_TWINS}" for n in topics]
    if not texts:
        return []
    out = []
    for n, r in zip(topics, kg.select_many(texts)):
        if isinstance(r, QueryFailed):
            raise r
        for (o, *_rest) in r.rows:
            if isinstance(o, IRI):
                out.append(q.ground({n.id: o}))
    return out


def _twin_differs(q: GraphQuery, rows: frozenset, want: frozenset) -> bool:
    """Whether a twin's answer (:func:`label_twins`) adds to what the question's reader
    expects: a list with answers the question's own lack; a count, superlative or comparative
    with any answer that is not the question's (a count of 0 adds nothing)."""
    if q.function.name == "count":
        rows = frozenset(row for row in rows if not all(c == Literal("0", _INT) for c in row))
    if not rows:
        return False
    return bool(rows - want) if q.function.name == "none" else rows != want


def readings_problem(kg: KGAccess, answered: Answered, lex, text: str) -> str:
    """The reason to reject ``answered`` (module docstring), or "". Raises :class:`QueryFailed`."""
    q = answered.query
    why = answers_problem(answered, lex)
    if why:
        return why
    if lex is not None and answer_in_text(answered, lex, text):
        return "answer-in-text"
    twins = label_twins(kg, q, lex)
    if twins:
        want = answer_key(answered.answer)
        for r in kg.select_many([t.sparql() for t in twins], reorder=True):
            if isinstance(r, QueryFailed):
                raise r
            if _twin_differs(q, frozenset(row for row in r.rows if any(c is not None for c in row)), want):
                return "ambiguous-topic"
    plain = q.sparql(function=False)
    head = f"SELECT DISTINCT ?{q.question}"
    texts = [plain.replace(head, f"SELECT (COUNT(DISTINCT ?{nid}) AS ?n)", 1) for nid in pinned_nodes(q)]
    n_pinned = len(texts)
    rev = reversible_edges(q, lex)
    texts += [_reversed(q, i).sparql() for i in rev]
    if not texts:
        return ""
    res = kg.select_many(texts, reorder=True)  # counts and answer sets: the order is not read
    for r in res:
        if isinstance(r, QueryFailed):
            raise r
    for r in res[:n_pinned]:
        n = r.rows[0][0] if r.rows else None
        if isinstance(n, Literal) and int(n.value) > 1:
            return "ambiguous-node"
    want = answer_key(answered.answer)
    for r in res[n_pinned:]:
        rows = frozenset(row for row in r.rows if any(c is not None for c in row))
        if q.function.name == "count" and rows and all(c == Literal("0", _INT) for row in rows for c in row):
            continue
        if rows and rows != want:
            return "ambiguous-reading"
    return ""
