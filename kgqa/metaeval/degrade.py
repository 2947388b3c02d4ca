"""Synthetic degradation of gold queries: runs with controlled errors (Linjordet, Balog, Setty,
ICTIR 2022, Sect. 5.2), for checking which measures notice which error.

A :class:`Transformation` rewrites one gold query into a degraded prediction and declares
which desiderata it is meant to keep and break (D1 semantic representation, D2
executability, D3 answer correctness). :func:`degrade` applies one to a seeded random share
of a dataset's items and leaves the rest as gold, giving a :class:`~kgqa.model.Run`.

Every edit works on the tokens of :mod:`kgqa.sparql.lexer` (character offsets), so strings,
IRIs and comments are never touched by accident. Registered transformations:

- ``T1``: remove the closing ``}`` of the outermost WHERE group (keeps D1; breaks D2, D3).
- ``T2``: replace every entity IRI with a random entity IRI of the KG and every predicate
  (``a`` included) with a random predicate of the KG; one replacement per distinct IRI, never
  the IRI itself (keeps D2; breaks D1, D3). Needs the KG vocabulary.
- ``T3``: replace the query with another gold query of the dataset (different text) whose
  executed answer is exactly the same (keeps D2, D3; breaks D1). Needs the executed gold answers;
  items without such a partner are not applicable.
- ``swap``: exchange subject and object of one triple pattern whose object is not a literal
  (keeps D2; breaks D1, D3).
- ``drop``: remove one triple pattern (with its ``.``, ``;`` or ``,``) from a group that keeps at
  least one pattern (keeps D2; breaks D1, D3).
- ``distinct``: remove the top-level ``DISTINCT``/``REDUCED`` of a SELECT, or add ``DISTINCT``
  (keeps D1, D2; breaks D3 when duplicates exist).
- ``count-distinct``: toggle ``DISTINCT`` inside one ``COUNT(...)`` (keeps D1, D2; breaks D3).
- ``filter-constant``: change one number or string constant inside a FILTER: an integer ``n``
  becomes ``n + d`` (``d`` uniform in ``[-max(1,|n|/2), max(1,|n|/2)]`` minus 0, never below 0
  for a non-negative ``n``), a decimal/double is multiplied by one of 0.5, 0.8, 1.25, 2, a
  string becomes another string literal of the KG (keeps D1, D2; breaks D3). Strings need the
  vocabulary.
- ``truncate``: cut the query after a random token of the WHERE body (a decoder cut-off; the
  cut point is uniform over the tokens after the WHERE ``{``, at least one token is removed)
  (breaks D2, D3 and partly D1).

D1 as "kept" means the semantic elements and triple patterns that F1_Sem / F1_Tri compare are
unchanged (the tolerant analyzer still reads them), not that the query means the same.

**Selection** (:func:`degrade`): with ``N`` items that have a gold query, ``k = floor(rate·N +
0.5)`` items are drawn with ``random.Random(f"{seed}|{name}|select").sample`` from the items
the transformation applies to (``among="applicable"``, the default: the effective rate is the
nominal one whenever enough items qualify), or from all items (``among="all"``, the paper's
protocol: a drawn item the transformation cannot change stays gold). Each item's edit uses its
own ``random.Random(f"{seed}|{name}|{item id}")``, so an item's degraded query does not depend on
which other items were drawn. Same inputs, same seed: the same run, byte for byte.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgqa.model import BooleanAnswer, Dataset, Outcome, Prediction, Run, Status, TableAnswer
from kgqa.model.terms import DEFAULT_MATCHING, TermMatching
from kgqa.sparql.analyzer import analyze
from kgqa.sparql.lexer import Token, tokenize
from kgqa.sparql.prefixes import STANDARD_PREFIXES
from kgqa.execute.executor import Executor
from kgqa.execute.policy import ExecutionPolicy

__all__ = [
    "Transformation", "Vocabulary", "Context", "Degradation", "TRANSFORMATIONS", "register", "get",
    "names", "degrade", "fetch_vocabulary", "answer_key", "same_answer_partners",
    "rename_variables", "triple_patterns", "PatternSpan", "where_braces", "item_rng", "build_context",
]

D1, D2, D3 = "D1", "D2", "D3"

# --------------------------------------------------------------------------- token helpers


def _is(t: Token, kind: str, value: str | None = None) -> bool:
    return t.kind == kind and (value is None or t.value == value)


def _p(t: Token, value: str) -> bool:
    return t.kind == "PUNCT" and t.value == value


def _kw(t: Token, value: str) -> bool:
    return t.kind == "KEYWORD" and t.value == value


def where_braces(query: str) -> tuple[int, int | None] | None:
    """Token indices (into ``tokenize(query)``) of the outermost WHERE group's ``{`` and its
    matching ``}`` (None when unclosed); None when the query has no such group. Read by the
    parser (:attr:`kgqa.sparql.analyzer.QueryInfo.where_span`): the group after the top-level
    ``WHERE``, or (WHERE omitted) the query's group; for ``CONSTRUCT WHERE { ... }`` the
    template."""
    return analyze(query).where_span


def _balanced(toks: Sequence[Token], i: int, open_: str, close: str) -> int:
    """Index just past the token closing the bracket opened at ``i`` (or len(toks))."""
    depth = 0
    for j in range(i, len(toks)):
        if _p(toks[j], open_):
            depth += 1
        elif _p(toks[j], close):
            depth -= 1
            if depth == 0:
                return j + 1
    return len(toks)


@dataclass(frozen=True)
class PatternSpan:
    """One triple pattern of a triples statement, as token index ranges ``[a, b)``:
    subject, verb (a predicate, variable or property path) and object; ``stmt`` is the
    statement's range (subject to last object, without the final ``.``); ``group`` the index of
    the verb group (``;``-separated) in the statement and ``obj`` the object's index in its
    ``,``-list; ``groups`` / ``objs`` how many there are; ``literal_object`` whether the object
    is a literal."""

    subject: tuple[int, int]
    verb: tuple[int, int]
    object: tuple[int, int]
    stmt: tuple[int, int]
    group: int
    groups: int
    obj: int
    objs: int
    verb_group: tuple[int, int]
    literal_object: bool


_LITERAL_START = frozenset({"STRING", "NUMBER", "BOOLEAN"})


def triple_patterns(query: str) -> list[PatternSpan]:
    """The editable triple patterns of the outermost WHERE group and the groups nested in it
    (OPTIONAL, UNION, MINUS, GRAPH, SERVICE, subqueries), in source order, from the parser's
    source spans (:attr:`kgqa.sparql.analyzer.QueryInfo.statements`; token indices into
    ``tokenize(query)``). Patterns inside FILTER (NOT) EXISTS, statements with blank-node
    property lists or collections, and statements the parser could not read without an error
    are left out (they are never edited)."""
    info = analyze(query)
    wb = info.where_span
    if wb is None:
        return []
    toks = tokenize(query)
    lo, hi = wb[0], (wb[1] if wb[1] is not None else len(toks))
    out: list[PatternSpan] = []
    for st in info.statements:
        stmt = st.span
        if not st.simple or not (lo < stmt[0] and stmt[1] <= hi):
            continue
        for g, (verb, objs) in enumerate(st.groups):
            vg = (verb[0], objs[-1][1])
            for k, o in enumerate(objs):
                first = toks[o[0]]
                lit = first.kind in _LITERAL_START or (first.kind == "PUNCT" and first.value in "+-")
                out.append(PatternSpan(st.subject, verb, o, stmt, g, len(st.groups), k, len(objs), vg, lit))
    return out


# --------------------------------------------------------------------------- text edits


def _apply(query: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """Apply non-overlapping ``(start, end, replacement)`` character edits."""
    out = query
    for s, e, r in sorted(edits, key=lambda x: (x[0], x[1]), reverse=True):
        out = out[:s] + r + out[e:]
    return out


def _span_text(query: str, toks: Sequence[Token], rng_: tuple[int, int]) -> str:
    return query[toks[rng_[0]].start: toks[rng_[1] - 1].end]


_BLANKS = " \t\r\n"


def _removal(toks: Sequence[Token], a: int, b: int, text: str) -> tuple[int, int]:
    """Character range removing tokens ``[a, b)`` and the blanks (not comments) after them."""
    s, e = toks[a].start, toks[b - 1].end
    while e < len(text) and text[e] in _BLANKS:
        e += 1
    return s, e


# --------------------------------------------------------------------------- vocabulary / answers


@dataclass(frozen=True)
class Vocabulary:
    """IRIs and string literals of a KG, each sorted: ``entities`` (IRIs in subject or object
    position), ``predicates``, ``strings`` (plain or language-tagged literal texts)."""

    entities: tuple[str, ...] = ()
    predicates: tuple[str, ...] = ()
    strings: tuple[str, ...] = ()


VOCABULARY_QUERIES = {
    "predicates": "SELECT DISTINCT ?x WHERE {{ ?s ?x ?o }} LIMIT {n}",
    "entities": "SELECT DISTINCT ?x WHERE {{ {{ ?x ?p ?o }} UNION {{ ?s ?p ?x }} FILTER(isIRI(?x)) }} LIMIT {n}",
    "strings": ("SELECT DISTINCT ?x WHERE {{ ?s ?p ?x FILTER(isLiteral(?x) && "
                "(datatype(?x) = <http://www.w3.org/2001/XMLSchema#string> || lang(?x) != \"\")) }} LIMIT {n}"),
}


def fetch_vocabulary(engine: Any, limit: int = 100_000, timeout: float = 120.0) -> Vocabulary:
    """Query ``engine`` once per class (:data:`VOCABULARY_QUERIES`, at most ``limit`` values
    each) and sort the values. Raises RuntimeError naming the failed query."""
    out: dict[str, tuple[str, ...]] = {}
    for key, q in VOCABULARY_QUERIES.items():
        text = q.format(n=int(limit))
        o = engine.execute(text, timeout=timeout, max_rows=int(limit))
        if o.status is not Status.OK or not isinstance(o.answer, TableAnswer):
            raise RuntimeError(f"vocabulary query for {key} failed ({o.status.value}): {o.message}")
        vals = {c.value for row in o.answer.rows for c in row if c is not None}
        out[key] = tuple(sorted(vals))
    return Vocabulary(out["entities"], out["predicates"], out["strings"])


def answer_key(answer: Any, matching: TermMatching = DEFAULT_MATCHING) -> Any:
    """An answer as a comparable value: ``("bool", v)`` for ASK; for a table the set of rows,
    each row the sorted tuple of its cells' comparison keys (column order and names ignored,
    duplicates collapsed: the kgqa profile's ``tuples`` view)."""
    if isinstance(answer, BooleanAnswer):
        return ("bool", answer.value)
    if isinstance(answer, TableAnswer):
        return frozenset(
            tuple(sorted((matching.key(c) for c in row), key=repr))
            for row in answer.rows if any(c is not None for c in row)
        )
    return None


def same_answer_partners(dataset: Dataset, gold: Mapping[str, Outcome],
                         matching: TermMatching = DEFAULT_MATCHING) -> dict[str, list[str]]:
    """For each item with an OK executed gold answer: the other items (dataset order) whose
    executed gold answer has the same :func:`answer_key` and whose gold query text differs
    (ignoring leading/trailing blanks)."""
    keys: dict[str, Any] = {}
    for it in dataset.items:
        o = gold.get(it.id)
        if o is not None and o.status is Status.OK and it.sparql:
            keys[it.id] = answer_key(o.answer, matching)
    by_key: dict[Any, list[str]] = {}
    for iid, k in keys.items():
        by_key.setdefault(k, []).append(iid)
    out: dict[str, list[str]] = {}
    for iid, k in keys.items():
        text = dataset[iid].sparql.strip()
        out[iid] = [j for j in by_key[k] if j != iid and dataset[j].sparql.strip() != text]
    return out


@dataclass
class Context:
    """What transformations may need beyond the query: the dataset, the KG vocabulary (T2,
    string FILTER constants) and same-answer partners from executed gold answers (T3)."""

    dataset: Dataset
    vocabulary: Vocabulary | None = None
    partners: dict[str, list[str]] | None = None


# --------------------------------------------------------------------------- transformations

EditFn = Callable[[str, random.Random, Context, str], "str | None"]


@dataclass(frozen=True)
class Transformation:
    """A registered degradation. ``edit(query, rng, ctx, item_id)`` returns the degraded query,
    or None when the transformation does not apply to this query. ``needs`` names context it
    uses (``vocabulary``, ``partners``)."""

    name: str
    title: str
    definition: str
    keeps: frozenset[str]
    breaks: frozenset[str]
    edit: EditFn
    needs: tuple[str, ...] = ()

    def apply(self, query: str, rng: random.Random, ctx: Context, item_id: str = "") -> str | None:
        out = self.edit(query, rng, ctx, item_id)
        return None if out is None or out == query else out


TRANSFORMATIONS: dict[str, Transformation] = {}


def register(t: Transformation) -> Transformation:
    if t.name in TRANSFORMATIONS:
        raise ValueError(f"transformation {t.name} registered twice")
    TRANSFORMATIONS[t.name] = t
    return t


def names() -> list[str]:
    return list(TRANSFORMATIONS)


def get(name: str) -> Transformation:
    t = TRANSFORMATIONS.get(name) or {k.lower(): v for k, v in TRANSFORMATIONS.items()}.get(name.lower())
    if t is None:
        raise ValueError(f"unknown transformation {name!r}; known: {', '.join(TRANSFORMATIONS)}")
    return t


def _t1(query: str, rng: random.Random, ctx: Context, item_id: str) -> str | None:
    toks = tokenize(query)
    wb = where_braces(query)
    if wb is None or wb[1] is None:
        return None
    s, e = _removal(toks, wb[1], wb[1] + 1, query)
    if wb[1] + 1 >= len(toks):  # nothing after: also drop the blanks before it
        while s > 0 and query[s - 1] in _BLANKS:
            s -= 1
    return query[:s] + query[e:]


def _prefix_map(query: str) -> dict[str, str]:
    info = analyze(query)
    return {**STANDARD_PREFIXES, **dict(info.prefixes)}


def _expand(t: Token, prefixes: Mapping[str, str]) -> str | None:
    if t.kind == "IRIREF":
        return t.value
    if t.kind == "PNAME":
        p, _, local = t.value.partition(":")
        base = prefixes.get(p)
        return None if base is None else base + local
    if t.kind == "A":
        return "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    return None


def _term_iri_tokens(toks: Sequence[Token]) -> list[int]:
    """Indices of IRI tokens (and ``a``) used as terms: not PREFIX/BASE declarations, not
    datatypes after ``^^``, not function names before ``(``."""
    out = []
    for i, t in enumerate(toks):
        if t.kind not in ("IRIREF", "PNAME", "A"):
            continue
        if i > 0 and (_kw(toks[i - 1], "PREFIX") or _kw(toks[i - 1], "BASE") or _p(toks[i - 1], "^^")):
            continue
        if i > 1 and t.kind == "IRIREF" and _kw(toks[i - 2], "PREFIX"):
            continue
        if i + 1 < len(toks) and (_p(toks[i + 1], "(") or toks[i + 1].kind == "NIL") and t.kind != "A":
            continue
        out.append(i)
    return out


def _t2(query: str, rng: random.Random, ctx: Context, item_id: str) -> str | None:
    voc = ctx.vocabulary
    if voc is None:
        raise ValueError("T2 needs the KG vocabulary (pass --kg)")
    toks = tokenize(query)
    info = analyze(query)
    entities = {i.value for i in info.entities}
    predicates = {i.value for i in info.predicates}
    verb_tokens: set[int] = set()
    for p in triple_patterns(query):
        verb_tokens.update(range(*p.verb))
    prefixes = _prefix_map(query)
    mapping: dict[tuple[str, str], str] = {}
    edits = []
    for i in _term_iri_tokens(toks):
        iri = _expand(toks[i], prefixes)
        if iri is None:
            continue
        if i in verb_tokens or (iri in predicates and iri not in entities):
            cls, pool = "p", voc.predicates
        elif iri in entities:
            cls, pool = "e", voc.entities
        else:
            continue  # an IRI in an expression (FILTER, BIND): not a semantic element
        key = (cls, iri)
        if key not in mapping:
            choices = [x for x in pool if x != iri] if len(pool) < 64 else None
            if choices is not None:
                if not choices:
                    continue
                mapping[key] = rng.choice(choices)
            else:
                pick = iri
                while pick == iri:
                    pick = pool[rng.randrange(len(pool))]
                mapping[key] = pick
        edits.append((toks[i].start, toks[i].end, f"<{mapping[key]}>"))
    return _apply(query, edits) if edits else None


def _t3(query: str, rng: random.Random, ctx: Context, item_id: str) -> str | None:
    if ctx.partners is None:
        raise ValueError("T3 needs the executed gold answers (pass --kg)")
    partners = ctx.partners.get(item_id) or []
    if not partners:
        return None
    return ctx.dataset[rng.choice(partners)].sparql


def _swap(query: str, rng: random.Random, ctx: Context, item_id: str) -> str | None:
    toks = tokenize(query)
    cands = [p for p in triple_patterns(query)
             if not p.literal_object and _span_text(query, toks, p.subject) != _span_text(query, toks, p.object)]
    if not cands:
        return None
    p = rng.choice(cands)
    s_txt, v_txt, o_txt = (_span_text(query, toks, r) for r in (p.subject, p.verb, p.object))
    if p.groups == 1 and p.objs == 1:
        return _apply(query, [(toks[p.subject[0]].start, toks[p.subject[1] - 1].end, o_txt),
                              (toks[p.object[0]].start, toks[p.object[1] - 1].end, s_txt)])
    removal = _pattern_removal(query, toks, p)
    insert_at = toks[p.stmt[1] - 1].end
    return _apply(query, [removal, (insert_at, insert_at, f" .\n  {o_txt} {v_txt} {s_txt}")])


def _pattern_removal(query: str, toks: Sequence[Token], p: PatternSpan) -> tuple[int, int, str]:
    """The edit removing pattern ``p`` from its statement (which has more than one pattern)."""
    if p.objs > 1:
        a, b = p.object
        if p.obj > 0:  # remove ", obj"
            return (toks[a - 1].start, toks[b - 1].end, "")
        s, e = _removal(toks, a, b + 1, query)  # "obj , "
        return (s, e, "")
    a, b = p.verb_group
    if p.group > 0:  # remove "; verb obj" (all ';' before it)
        k = a - 1
        while k > p.stmt[0] and _p(toks[k - 1], ";"):
            k -= 1
        return (toks[k].start, toks[b - 1].end, "")
    k = b
    while k < len(toks) and _p(toks[k], ";"):
        k += 1
    s, e = _removal(toks, a, k, query)
    return (s, e, "")


def _drop(query: str, rng: random.Random, ctx: Context, item_id: str) -> str | None:
    toks = tokenize(query)
    pats = triple_patterns(query)
    if len(pats) < 2:
        return None
    p = rng.choice(pats)
    if p.groups > 1 or p.objs > 1:
        return _apply(query, [_pattern_removal(query, toks, p)])
    a, b = p.stmt
    if b < len(toks) and _p(toks[b], "."):
        b += 1
    s, e = _removal(toks, a, b, query)
    return query[:s] + query[e:]


def _top_select(toks: Sequence[Token]) -> int | None:
    depth = 0
    for i, t in enumerate(toks):
        if _p(t, "{"):
            depth += 1
        elif _p(t, "}"):
            depth -= 1
        elif depth == 0 and _kw(t, "SELECT"):
            return i
    return None


def _distinct(query: str, rng: random.Random, ctx: Context, item_id: str) -> str | None:
    toks = tokenize(query)
    i = _top_select(toks)
    if i is None or i + 1 >= len(toks):
        return None
    nxt = toks[i + 1]
    if nxt.kind == "KEYWORD" and nxt.value in ("DISTINCT", "REDUCED"):
        s, e = _removal(toks, i + 1, i + 2, query)
        return query[:s] + query[e:]
    return query[:nxt.start] + "DISTINCT " + query[nxt.start:]


def _count_distinct(query: str, rng: random.Random, ctx: Context, item_id: str) -> str | None:
    toks = tokenize(query)
    cands = [i for i in range(len(toks) - 2) if _kw(toks[i], "COUNT") and _p(toks[i + 1], "(")]
    if not cands:
        return None
    i = rng.choice(cands)
    arg = toks[i + 2]
    if _kw(arg, "DISTINCT"):
        s, e = _removal(toks, i + 2, i + 3, query)
        return query[:s] + query[e:]
    return query[:arg.start] + "DISTINCT " + query[arg.start:]


def _filter_tokens(toks: Sequence[Token]) -> list[int]:
    out = []
    i = 0
    while i < len(toks):
        if _kw(toks[i], "FILTER"):
            j = i + 1
            while j < len(toks) and not _p(toks[j], "(") and not _p(toks[j], "{"):
                j += 1
            if j < len(toks) and _p(toks[j], "("):
                end = _balanced(toks, j, "(", ")")
                out.extend(k for k in range(j, end) if toks[k].kind in ("NUMBER", "STRING")
                           and not (k > 0 and _p(toks[k - 1], "^^")))
                i = end
                continue
        i += 1
    return out


def _sparql_string(text: str) -> str:
    esc = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{esc}"'


def _new_number(text: str, rng: random.Random) -> str:
    if text.isdigit():
        n = int(text)
        k = max(1, abs(n) // 2)
        d = 0
        while d == 0:
            d = rng.randint(-k, k)
        if n + d < 0:
            d = abs(d)
        return str(n + d)
    value = float(text)
    new = value * rng.choice((0.5, 0.8, 1.25, 2.0))
    if "e" in text.lower():
        return repr(new)
    return format(new, "f").rstrip("0").rstrip(".") if "." in format(new, "f") else format(new, "f")


def _filter_constant(query: str, rng: random.Random, ctx: Context, item_id: str) -> str | None:
    toks = tokenize(query)
    strings = ctx.vocabulary.strings if ctx.vocabulary is not None else ()
    cands = [i for i in _filter_tokens(toks) if toks[i].kind == "NUMBER" or strings]
    if not cands:
        return None
    i = rng.choice(cands)
    t = toks[i]
    if t.kind == "NUMBER":
        new = _new_number(t.value, rng)
        if new == t.value:
            return None
        return query[:t.start] + new + query[t.end:]
    pool = [s for s in strings if s != t.value]
    if not pool:
        return None
    return query[:t.start] + _sparql_string(rng.choice(pool)) + query[t.end:]


def _truncate(query: str, rng: random.Random, ctx: Context, item_id: str) -> str | None:
    toks = tokenize(query)
    wb = where_braces(query)
    if wb is None or wb[0] + 1 >= len(toks):
        return None
    k = rng.randint(wb[0] + 1, len(toks) - 1)  # keep tokens [0, k)
    return query[: toks[k - 1].end]


_ALL = frozenset((D1, D2, D3))

register(Transformation(
    "T1", "remove the closing brace of WHERE",
    "Remove the closing '}' of the outermost WHERE group (ICTIR 2022 T1).",
    frozenset({D1}), frozenset({D2, D3}), _t1))
register(Transformation(
    "T2", "random entities and predicates",
    "Replace every entity IRI with a random entity IRI and every predicate (a included) with a random "
    "predicate of the KG, one replacement per distinct IRI (ICTIR 2022 T2).",
    frozenset({D2}), frozenset({D1, D3}), _t2, ("vocabulary",)))
register(Transformation(
    "T3", "another query with the same answer",
    "Replace the query with another gold query of the dataset whose executed answer is exactly the "
    "same (ICTIR 2022 T3); items without such a partner are not applicable.",
    frozenset({D2, D3}), frozenset({D1}), _t3, ("partners",)))
register(Transformation(
    "swap", "swap subject and object of one pattern",
    "Exchange subject and object of one triple pattern whose object is not a literal.",
    frozenset({D2}), frozenset({D1, D3}), _swap))
register(Transformation(
    "drop", "drop one triple pattern",
    "Remove one triple pattern (with its separator) from a query with at least two patterns.",
    frozenset({D2}), frozenset({D1, D3}), _drop))
register(Transformation(
    "distinct", "toggle DISTINCT",
    "Remove the top-level DISTINCT/REDUCED of a SELECT query, or add DISTINCT.",
    frozenset({D1, D2}), frozenset({D3}), _distinct))
register(Transformation(
    "count-distinct", "COUNT vs COUNT(DISTINCT)",
    "Toggle DISTINCT inside one COUNT(...) aggregate.",
    frozenset({D1, D2}), frozenset({D3}), _count_distinct))
register(Transformation(
    "filter-constant", "change a FILTER constant",
    "Change one number (n -> n+d; decimals scaled) or string (another KG string) inside a FILTER.",
    frozenset({D1, D2}), frozenset({D3}), _filter_constant, ("vocabulary",)))
register(Transformation(
    "truncate", "truncate the query (decoder cut-off)",
    "Cut the query after a random token of its WHERE body.",
    frozenset(), _ALL, _truncate))


# --------------------------------------------------------------------------- degrade


@dataclass
class Degradation:
    """A degraded run and what was done: ``changed`` ids (dataset order), how many items had a
    gold query (``items``), how many the transformation applies to (``applicable``), how many
    were requested (``requested`` = floor(rate·items + 0.5)) and drawn (``drawn``)."""

    run: Run
    transform: str
    rate: float
    seed: int
    among: str
    items: int
    applicable: int
    requested: int
    drawn: int
    changed: list[str] = field(default_factory=list)

    def summary(self) -> str:
        t = get(self.transform)
        extra = " (items with a same-answer partner)" if self.transform == "T3" else ""
        return (f"{self.transform} ({t.title}) rate {self.rate:g} seed {self.seed}: changed {len(self.changed)} of "
                f"{self.items} items; applicable to {self.applicable}{extra}; requested {self.requested}, "
                f"drawn {self.drawn} among {self.among}")


def item_rng(seed: int, name: str, item_id: str) -> random.Random:
    return random.Random(f"{seed}|{name}|{item_id}")


def degrade(dataset: Dataset, transform: str | Transformation, rate: float, seed: int = 0,
            ctx: Context | None = None, *, among: str = "applicable", name: str | None = None) -> Degradation:
    """A run: gold queries, with ``transform`` applied to a seeded random ``rate`` share of the
    items (see the module docstring for the exact selection). Items without a gold query are
    not in the run."""
    t = transform if isinstance(transform, Transformation) else get(transform)
    if not 0.0 <= rate <= 1.0 or math.isnan(rate):
        raise ValueError(f"rate must be in [0, 1], got {rate}")
    if among not in ("applicable", "all"):
        raise ValueError(f"among must be 'applicable' or 'all', got {among!r}")
    ctx = ctx or Context(dataset)
    items = [it for it in dataset.items if it.sparql and it.sparql.strip()]
    candidates: dict[str, str] = {}
    for it in items:
        new = t.apply(it.sparql, item_rng(seed, t.name, it.id), ctx, it.id)
        if new is not None:
            candidates[it.id] = new
    k = int(math.floor(rate * len(items) + 0.5))
    pool = [it.id for it in items if it.id in candidates] if among == "applicable" else [it.id for it in items]
    drawn = set(random.Random(f"{seed}|{t.name}|select").sample(pool, min(k, len(pool))))
    preds, changed = [], []
    for it in items:
        if it.id in drawn and it.id in candidates:
            preds.append(Prediction(it.id, sparql=candidates[it.id], metadata={"degraded": t.name}))
            changed.append(it.id)
        else:
            preds.append(Prediction(it.id, sparql=it.sparql))
    run_name = name or f"{dataset.name}-{t.name}-{rate:g}-seed{seed}"
    meta = {"transform": t.name, "rate": rate, "seed": seed, "among": among, "changed": len(changed),
            "applicable": len(candidates), "items": len(items)}
    run = Run(run_name, preds, "jsonl", [], [], meta)
    return Degradation(run, t.name, rate, seed, among, len(items), len(candidates), k, len(drawn), changed)


def scoring_run(run: Run, dataset: Dataset) -> Run:
    """``run`` with ids as ``kgqa evaluate`` scores them: a prediction for an item scored per
    language (Text2SPARQL: ``ck25:1`` -> ``ck25:1-en``, ...) is repeated under each language id."""
    preds = []
    for p in run.predictions:
        ids = list(dataset[p.id].lang_ids.values()) if p.id in dataset and dataset[p.id].lang_ids else [p.id]
        preds += [Prediction(i, sparql=p.sparql, metadata=dict(p.metadata)) for i in ids]
    return Run(run.name, preds, run.format, list(run.source), list(run.problems), dict(run.metadata))


def build_context(dataset: Dataset, transforms: Sequence[str | Transformation], engine: Any = None, *,
                  gold: Mapping[str, Outcome] | None = None, vocabulary: Vocabulary | None = None,
                  matching: TermMatching = DEFAULT_MATCHING, timeout: float = 30.0) -> Context:
    """The context the given transformations need, fetched from ``engine`` once: the vocabulary
    (unless given) and same-answer partners from ``gold`` outcomes (executed when not given)."""
    ts = [t if isinstance(t, Transformation) else get(t) for t in transforms]
    needs = {n for t in ts for n in t.needs}
    ctx = Context(dataset, vocabulary)
    if "vocabulary" in needs and ctx.vocabulary is None:
        if engine is None:
            raise ValueError(f"{', '.join(t.name for t in ts if 'vocabulary' in t.needs)} need a KG (--kg)")
        ctx.vocabulary = fetch_vocabulary(engine)
    if "partners" in needs:
        if gold is None:
            if engine is None:
                raise ValueError("T3 needs a KG (--kg) to execute the gold queries")

            ex = engine if isinstance(engine, Executor) else Executor(engine, policy=ExecutionPolicy(timeout=timeout))
            gold = ex.execute_gold(dataset)
        ctx.partners = same_answer_partners(dataset, gold, matching)
    return ctx


# --------------------------------------------------------------------------- rewrites for axioms


def rename_variables(query: str, prefix: str = "v") -> str:
    """Rename every variable consistently to ``?{prefix}1``, ``?{prefix}2``... in order of first
    occurrence (a semantics-preserving rewrite); the prefix is lengthened if a new name would
    clash with an existing one."""
    toks = tokenize(query)
    names_ = [t.value for t in toks if t.kind == "VAR"]
    existing = set(names_)
    while any(n.startswith(prefix) for n in existing):
        prefix += prefix[-1]
    mapping: dict[str, str] = {}
    for n in names_:
        mapping.setdefault(n, f"{prefix}{len(mapping) + 1}")
    edits = [(t.start, t.end, query[t.start] + mapping[t.value]) for t in toks if t.kind == "VAR"]
    return _apply(query, edits)
