"""Rewriting a gold query through entity and predicate mappings, on token spans.

The query is tokenized by :mod:`kgqa.sparql.lexer` (the same lexer the tolerant analyzer
uses) and every IRI token (``<...>``, a prefixed name, the keyword ``a``) is given a *role*
by a small state machine over the triple-pattern grammar: ``subject``, ``predicate``
(including every IRI inside a property path), ``object``, ``values`` (VALUES rows),
``expr`` (a constant in FILTER/BIND/ORDER/...), or a role that is never rewritten (``decl``:
PREFIX/BASE declarations; ``datatype``: after ``^^``; ``function``: an IRI called as a
function). Only the spans of rewritten tokens change; everything else of the query (layout,
comments, FILTERs, modifiers) is kept byte for byte.

- subject / object / values / expr IRIs -> the mapped target entity;
- predicate IRIs -> the mapped target path (a one-step forward path is written as the bare
  IRI; anything else in parentheses, so it composes with surrounding ``/ | ^ * + ?``);
- a mapping's type constraint becomes ``FILTER EXISTS { X rdf:type/rdfs:subClassOf* <C> }`` inserted just before
  the ``}`` closing the group the pattern is in (FILTER position inside a group does not matter
  in SPARQL), ``X`` being the mapped subject or object of that pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urljoin

from kgqa.make.migrate.kg import TYPE_PATH, iri_ref
from kgqa.sparql.analyzer import analyze
from kgqa.sparql.lexer import Token, tokenize
from kgqa.sparql.prefixes import STANDARD_PREFIXES

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
TERM_KINDS = {"IRIREF", "PNAME", "VAR", "STRING", "NUMBER", "BOOLEAN", "BNODE", "ANON", "NIL", "A"}
IRI_KINDS = {"IRIREF", "PNAME", "A"}
ENTITY_ROLES = ("subject", "object", "values", "expr")
CLAUSE_KEYWORDS = frozenset(
    "PREFIX BASE SELECT CONSTRUCT DESCRIBE ASK WHERE FROM OPTIONAL MINUS GRAPH SERVICE UNION FILTER BIND "
    "VALUES ORDER GROUP HAVING LIMIT OFFSET".split())


@dataclass
class Slot:
    index: int  # token index
    role: str
    iri: str
    subject: int | None = None  # predicates: token index of the pattern's subject (None: blank node)
    objects: list[int] = field(default_factory=list)  # predicates: token indexes of its objects
    first: bool = True  # predicates: the first / last step of its property path
    last: bool = True


def _resolver(query: str):
    info = analyze(query)
    prefixes = dict(STANDARD_PREFIXES)
    prefixes.update(info.prefixes)
    base = info.base

    def resolve(t: Token) -> str:
        if t.kind == "A":
            return RDF_TYPE
        if t.kind == "IRIREF":
            return urljoin(base, t.value) if base and ":" not in t.value else t.value
        pfx, _, local = t.value.partition(":")
        if "\\" in local:
            local = re.sub(r"\\(.)", r"\1", local)
        ns = prefixes.get(pfx)
        return ns + local if ns is not None else t.value

    return resolve


# long function: one lexical pass over the query's tokens; its cases (prefixed names, IRIs, 'a', paths) share the scanner state
def slots(query: str) -> tuple[list[Token], list[Slot]]:
    """Tokens of ``query`` and a :class:`Slot` for every IRI token (and ``a``)."""
    toks = tokenize(query)
    resolve = _resolver(query)
    out: list[Slot] = []
    state = "X"
    xdepth = 0
    back_to_s = False
    ppd = 0  # parentheses inside a property path
    values_depth = -1  # >= 0 inside a VALUES block
    skip: dict[int, str] = {}
    stack: list[tuple] = []
    cur_subject: int | None = None
    cur_preds: list[Slot] = []
    n = len(toks)

    def nxt(i: int) -> Token | None:
        return toks[i + 1] if i + 1 < n else None

    def path_continues(i: int) -> bool:
        t = nxt(i)
        return t is not None and t.kind == "PUNCT" and (t.value in ("/", "|", "?", "*", "+") or (t.value == ")" and ppd > 0))

    for i, t in enumerate(toks):
        if i in skip:
            if t.kind in IRI_KINDS:
                out.append(Slot(i, skip[i], resolve(t)))
            continue
        k, v = t.kind, t.value
        if values_depth >= 0:
            if k == "PUNCT" and v == "{":
                values_depth += 1
            elif k == "PUNCT" and v == "}":
                values_depth -= 1
                if values_depth == 0:
                    values_depth = -1
                    state = "S"
            elif k in IRI_KINDS:
                out.append(Slot(i, "values", resolve(t)))
            continue
        if k == "KEYWORD":
            if state == "X" and xdepth > 0:
                continue
            if state == "X" and v not in CLAUSE_KEYWORDS:
                continue  # AS, NOT, EXISTS, built-in calls, ... inside an expression or a clause
            if v == "PREFIX":
                skip[i + 1] = skip[i + 2] = "decl"
            elif v == "BASE":
                skip[i + 1] = "decl"
            elif v == "VALUES":
                values_depth = 0
            state, xdepth = "X", 0
            back_to_s = v in ("FILTER", "BIND")
            continue
        if k == "PUNCT" and v == "{":
            state = "S"
            continue
        if k == "PUNCT" and v == "}":
            state = "S"
            continue
        if k == "PUNCT" and v == "^^":
            skip[i + 1] = "datatype"
            continue
        if state == "X":
            if k == "PUNCT" and v == "(":
                xdepth += 1
            elif k == "PUNCT" and v == ")":
                xdepth -= 1
                if xdepth <= 0 and back_to_s:
                    state, back_to_s = "S", False
            elif k in IRI_KINDS:
                t2 = nxt(i)
                role = "function" if t2 is not None and t2.kind in ("PUNCT", "NIL") and t2.value.startswith("(") else "expr"
                out.append(Slot(i, role, resolve(t)))
            continue
        if state == "S":
            if k == "PUNCT" and v == "[":
                stack.append((None, []))
                cur_subject, cur_preds, state = None, [], "V"
            elif k in TERM_KINDS:
                if k in IRI_KINDS:
                    out.append(Slot(i, "subject", resolve(t)))
                cur_subject = i if k != "ANON" else None
                cur_preds, state = [], "V"
            continue
        if state == "V" or (state == "OD" and k in ("IRIREF", "PNAME", "A", "VAR")):
            if state == "OD":  # after `[ ... ]` used as a subject
                cur_subject, cur_preds = None, []
                state = "V"
            if k == "PUNCT" and v in ("^", "!"):
                continue
            if k == "PUNCT" and v == "(":
                ppd += 1
                continue
            if k == "PUNCT" and v in (")", "?", "*", "+", "/", "|"):
                if v == ")":
                    ppd -= 1
                if v not in ("/", "|") and not path_continues(i):
                    state = "O"
                continue
            if k in IRI_KINDS or k == "VAR":
                if k != "VAR":
                    prev = toks[i - 1] if i else None
                    s = Slot(i, "predicate", resolve(t), cur_subject,
                             first=not (prev is not None and prev.kind == "PUNCT" and prev.value in ("/", "|")),
                             last=not path_continues(i))
                    out.append(s)
                    cur_preds.append(s)
                if not path_continues(i):
                    state, ppd = "O", 0
            continue
        if state == "O":
            if k == "PUNCT" and v == "[":
                stack.append((cur_subject, cur_preds))
                cur_subject, cur_preds, state = None, [], "V"
            elif k in TERM_KINDS:
                if k in IRI_KINDS:
                    out.append(Slot(i, "object", resolve(t)))
                for s in cur_preds:
                    s.objects.append(i)
                state = "OD"
            continue
        if state == "OD":
            if k == "PUNCT" and v == ",":
                state = "O"
            elif k == "PUNCT" and v == ";":
                cur_preds, state = [], "V"
            elif k == "PUNCT" and v == ".":
                state = "S"
            elif k == "PUNCT" and v == "]":
                if stack:
                    cur_subject, cur_preds = stack.pop()
                state = "OD"
            continue
    return toks, out


@dataclass(frozen=True)
class PredicateTarget:
    """What a source predicate becomes: a SPARQL property path text (subject -> object) and
    an optional type constraint on one side of the pattern."""

    path: str
    constraint: str | None = None
    constraint_on: str = "object"
    negated: bool = False  # the side must *not* have the type (FILTER NOT EXISTS)


@dataclass
class Rewritten:
    query: str | None
    replaced: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _enclosing_close(toks: list[Token], index: int) -> int | None:
    """Token index of the ``}`` closing the innermost group around token ``index``."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for j, t in enumerate(toks):
        if t.kind == "PUNCT" and t.value == "{":
            stack.append(j)
        elif t.kind == "PUNCT" and t.value == "}" and stack:
            pairs[stack.pop()] = j
    best = None
    for o, c in pairs.items():
        if o < index < c and (best is None or o > best[0]):
            best = (o, c)
    return best[1] if best else None


def rewrite(query: str, entities: dict[str, str | None], predicates: dict[str, PredicateTarget | None]) -> Rewritten:
    """``query`` with every entity IRI and predicate replaced through the mappings.

    ``entities``/``predicates`` map full source IRIs to target ones (``None``: known to have no
    mapping). An IRI absent from ``entities`` is kept as it is (it is the same on both KGs);
    a predicate absent from ``predicates`` too. A ``None`` mapping makes the query unanswerable
    on the target: ``query`` is None and ``problems`` say why.
    """
    toks, found = slots(query)
    res = Rewritten(None)
    edits: dict[int, str] = {}
    inserts: dict[int, list[str]] = {}

    def token_text(j: int) -> str:
        return edits.get(j, query[toks[j].start:toks[j].end])

    for s in found:
        if s.role in ENTITY_ROLES and s.iri in entities:
            tgt = entities[s.iri]
            if tgt is None:
                res.problems.append(f"entity {s.iri} has no target")
            elif tgt != s.iri:
                edits[s.index] = iri_ref(tgt)
                res.replaced.append({"role": "entity", "source": s.iri, "target": tgt})
    for s in found:
        if s.role != "predicate" or s.iri not in predicates:
            continue
        tgt = predicates[s.iri]
        if tgt is None:
            res.problems.append(f"predicate {s.iri} has no mapping")
            continue
        if tgt.path != iri_ref(s.iri):  # the same predicate keeps its spelling (prefixed name, `a`)
            edits[s.index] = tgt.path
            res.replaced.append({"role": "predicate", "source": s.iri, "target": tgt.path})
        if tgt.constraint:
            ends = [s.subject] if tgt.constraint_on == "subject" else list(s.objects)
            close = _enclosing_close(toks, s.index)
            placed = s.first if tgt.constraint_on == "subject" else s.last
            if not placed and close is not None and _splittable(toks, s, tgt):
                var = f"?_kgqa_step{s.index}"
                edits[s.index] = f"{token_text(s.index)} {var} . {var}"
                edits[s.index + 1] = " "  # the "/" after the step
                inserts.setdefault(close, []).append(
                    f"FILTER {'NOT ' if tgt.negated else ''}EXISTS {{ {var} {TYPE_PATH} {iri_ref(tgt.constraint)} }}")
                res.replaced.append({"role": "constraint", "source": s.iri, "target": tgt.constraint,
                                     "on": "object", "split": var})
                continue
            for e in ends:
                if not placed:
                    res.problems.append(f"type constraint {tgt.constraint} of {s.iri} cannot be placed "
                                        f"(inside a property path)")
                    continue
                if e is None or toks[e].kind not in ("VAR", "IRIREF", "PNAME") or close is None:
                    res.problems.append(f"type constraint {tgt.constraint} of {s.iri} cannot be placed "
                                        f"(the {tgt.constraint_on} is not a variable or IRI)")
                    continue
                inserts.setdefault(close, []).append(
                    f"FILTER {'NOT ' if tgt.negated else ''}EXISTS {{ {token_text(e)} {TYPE_PATH} "
                    f"{iri_ref(tgt.constraint)} }}")
                res.replaced.append({"role": "constraint", "source": s.iri, "target": tgt.constraint,
                                     "on": tgt.constraint_on})
    if res.problems:
        res.problems = list(dict.fromkeys(res.problems))
        return res
    out, pos = [], 0
    for j in sorted(set(edits) | set(inserts)):
        t = toks[j]
        out.append(query[pos:t.start])
        if j in inserts:
            out.append(" ".join(dict.fromkeys(inserts[j])) + " ")
        if j in edits:
            out.append(edits[j])
            pos = t.end
        else:
            pos = t.start
    out.append(query[pos:])
    res.query = "".join(out)
    return res


def _splittable(toks: list[Token], s: Slot, tgt: PredicateTarget) -> bool:
    """A constrained object side inside a property path can be placed when the step is the
    first of a plain sequence (``S p1/p2 O .``): the path is split at the step through a new
    variable (``S p1 ?m . ?m p2 O .``), which the constraint then tests. Only when the triple
    ends with its one object (``.`` or ``}`` follows), so that no ``;`` or ``,`` changes meaning."""
    nxt = toks[s.index + 1] if s.index + 1 < len(toks) else None
    if tgt.constraint_on != "object" or not s.first or s.last or nxt is None or nxt.value != "/":
        return False
    if len(s.objects) != 1 or s.objects[0] + 1 >= len(toks):
        return False
    return toks[s.objects[0] + 1].value in (".", "}")


def constants(query: str) -> tuple[list[str], list[str]]:
    """(entity IRIs, predicate IRIs) of a query, in first-occurrence order, by token role."""
    _, found = slots(query)
    ents = [s.iri for s in found if s.role in ENTITY_ROLES]
    preds = [s.iri for s in found if s.role == "predicate"]
    return list(dict.fromkeys(ents)), list(dict.fromkeys(preds))
