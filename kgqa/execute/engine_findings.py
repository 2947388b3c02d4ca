"""Engine dependence: does a query's answer depend on which (standard-conforming, or popular)
SPARQL engine runs it? Detected statically from the query and confirmed by execution.

Static findings (:func:`detect`), by kind:

- ``limit-without-order``: ``LIMIT``/``OFFSET`` on a query level without ``ORDER BY``: the engine
  picks which solutions are kept (not for a single-row aggregate without ``GROUP BY``);
- ``order-limit``: ``ORDER BY ... LIMIT/OFFSET``: solutions tied on every sort key at the cut
  may be kept or dropped by the engine (needs execution to tell: the ``ties`` check below);
- ``sample``: the ``SAMPLE`` aggregate returns any value of its group;
- ``group-concat``: ``GROUP_CONCAT`` concatenates in an unspecified order;
- ``comparison``: ``<``, ``>``, ``<=``, ``>=`` between two variables: comparing IRIs (or terms
  of incomparable types) is an error in SPARQL 1.1 (the solution is filtered out), while some
  engines (Virtuoso) order IRIs and keep it;
- ``nondeterministic``: ``RAND()``, ``NOW()``, ``UUID()``, ``STRUUID()``, ``BNODE()``.

Confirmation (:func:`assess`) executes variants of the query on the engine:

- ``limit-without-order`` (outermost level): the query without ``LIMIT``/``OFFSET``; confirmed
  when there are more solutions than the window keeps; every choice of ``k`` of them is legal;
- ``order-limit`` (outermost level, sort keys that are projected variables): the query without
  ``LIMIT``/``OFFSET``; confirmed when the sort key of the last kept solution equals the key of
  the next one (or the first kept equals the previous one, with ``OFFSET``); the legal answers
  keep the solutions outside the tied group and any ``m`` of the tied group (``m`` = how many
  of it the window holds);
- ``comparison``: the query with each ``?a op ?b`` rewritten to compare ``STR()`` of the terms
  where SPARQL 1.1 raises a type error (an IRI on either side, a number against a non-number;
  once in each order), leaving comparable terms to the standard operator; confirmed when an
  answer differs from the standard one; the legal answers are the standard one and the
  rewritten ones;
- ``group-concat``: confirmed when a projected GROUP_CONCAT value contains its separator;
- ``sample``, ``nondeterministic``, and findings in subqueries: marked, not confirmed
  (``confirmed`` None) and without alternatives.

The result of :func:`assess` is a :class:`QueryAssessment`; the score range over the legal
answers is computed later (``kgqa.analyze.engine_dependence``), since that needs the profile.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations, product
from math import comb
from typing import Any

from kgqa.load.jsonio import fast_loads as _loads
from kgqa.model.answer import Answer, BooleanAnswer, TableAnswer, from_results_json, to_results_json
from kgqa.model.outcome import Outcome, Status
from kgqa.model.terms import DEFAULT_MATCHING, from_sparql_json, to_sparql_json
from kgqa.sparql.analyzer import QueryNode, Var, analyze
from kgqa.sparql.lexer import Token, tokenize
from kgqa.execute.cache import ResultCache, code_fingerprint, query_hash

NONDETERMINISTIC = ("RAND", "NOW", "UUID", "STRUUID", "BNODE")
_ORDER_OPS = ("<", ">", "<=", ">=")

#: how many legal answers are enumerated at most; beyond, extreme choices are used (inexact)
DEFAULT_BOUND = 2000


@dataclass(frozen=True)
class Finding:
    kind: str
    message: str
    level: str = "outer"  # outer / subquery


@dataclass
class Choice:
    """Legal answers as ``fixed`` rows plus, for each group, any ``choose`` of its ``pool``."""

    variables: tuple[str, ...]
    fixed: tuple[tuple, ...]
    groups: tuple[tuple[tuple[tuple, ...], int], ...]

    def count(self) -> int:
        n = 1
        for pool, k in self.groups:
            n *= comb(len(pool), k)
        return n

    def answers(self, bound: int = DEFAULT_BOUND) -> list[Answer]:
        """Every legal answer (at most ``bound``; :meth:`count` tells whether that is all)."""
        per_group = [combinations(pool, k) for pool, k in self.groups]
        out: list[Answer] = []
        for picks in product(*per_group):
            rows = list(self.fixed)
            for p in picks:
                rows += list(p)
            out.append(TableAnswer(self.variables, tuple(rows)))
            if len(out) >= bound:
                break
        return out


@dataclass
class QueryAssessment:
    """What :func:`assess` found for one query. ``reason`` is a one-line summary (empty when
    nothing was found). ``confirmed``: True (execution showed the answer can differ), False
    (execution showed it cannot, e.g. no tie at the cut), None (not checked). ``choice`` /
    ``alternatives`` describe the legal answers where they are computable."""

    query: str
    findings: list[Finding] = field(default_factory=list)
    confirmed: bool | None = None
    reason: str = ""
    choice: Choice | None = None
    alternatives: list[Answer] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the kinds of the findings whose legal answers are not described by ``choice`` /
    #: ``alternatives`` (SAMPLE, RAND(), a subquery's LIMIT, an unchecked window, too many
    #: GROUP_CONCAT orders): a score range over them can only be a bound
    open: list[str] = field(default_factory=list)

    @property
    def dependent(self) -> bool:
        """Flagged: confirmed, or found statically and not refuted by execution."""
        return bool(self.findings) and self.confirmed is not False

    def to_json(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "kinds": sorted({f.kind for f in self.findings}),
            "confirmed": self.confirmed,
            "legal_answers": (self.choice.count() if self.choice is not None and not self.open
                              else len(self.alternatives) if self.alternatives and not self.open else None),
            **({"notes": self.notes} if self.notes else {}),
        }


# --------------------------------------------------------------------------- static


def _nodes(node: QueryNode | None, level: str = "outer"):
    if node is None:
        return
    yield node, level
    stack = [node.where] if node.where is not None else []
    while stack:
        g = stack.pop()
        for el in g.elements:
            kind = el[0]
            if kind == "subquery":
                yield from _nodes(el[1], "subquery")
            elif kind in ("optional", "minus", "group"):
                stack.append(el[1])
            elif kind == "union":
                stack.extend(el[1])
            elif kind == "graph":
                stack.append(el[2])
            elif kind == "service":
                stack.append(el[3])


def _ops(query: str, toks: list | None = None) -> list[tuple[int, int, str, str, str]]:
    """``?a op ?b`` comparisons: (start, end, a, op, b) character spans in the query text
    (``toks``: its tokens, when the caller has them)."""
    if toks is None:
        toks = tokenize(query)
    out = []
    for i in range(1, len(toks) - 1):
        t = toks[i]
        if t.kind == "PUNCT" and t.value in _ORDER_OPS and toks[i - 1].kind == "VAR" and toks[i + 1].kind == "VAR":
            a, b = toks[i - 1], toks[i + 1]
            out.append((a.start, b.end, a.value, t.value, b.value))
    return out


#: Keywords without which a query has no static finding but a comparison: LIMIT/OFFSET, the
#: two aggregates, the nondeterministic built-ins.
_FINDING_KEYWORDS = frozenset({"LIMIT", "OFFSET", "SAMPLE", "GROUP_CONCAT", *NONDETERMINISTIC})
_DETECTED: OrderedDict[str, tuple[Finding, ...]] = OrderedDict()
#: Distinct query texts whose findings are remembered (a run's queries, gold and predicted).
DETECT_MEMO_SIZE = 1 << 16
_DETECT_MEMO_MAX_TEXT = 65536
_DETECT_LOCK = threading.Lock()


def detect(query: str) -> list[Finding]:
    """Static findings (see the module docstring); [] for a query without any. One lexer pass
    per distinct text (remembered): a query none of whose tokens is a finding keyword
    (:data:`_FINDING_KEYWORDS`) or a comparison between variables is not parsed at all."""
    hit = _DETECTED.get(query)
    if hit is not None:
        return list(hit)
    found = _detect(query)
    if len(query) <= _DETECT_MEMO_MAX_TEXT:
        with _DETECT_LOCK:
            _DETECTED[query] = tuple(found)
            if len(_DETECTED) > DETECT_MEMO_SIZE:
                _DETECTED.popitem(last=False)
    return found


def screen(tokens: list[Token]) -> bool:
    """False when a query with these tokens (trivia or not) has no static finding (no finding
    keyword, no comparison between variables): :func:`detect` would return [] without parsing."""
    sig = [t for t in tokens if t.kind != "WS" and t.kind != "COMMENT"]
    return bool(_ops("", sig)) or any(t.kind == "KEYWORD" and t.value in _FINDING_KEYWORDS for t in sig)


def _detect(query: str) -> list[Finding]:
    toks = tokenize(query)
    ops = _ops(query, toks)
    if not ops and not any(t.kind == "KEYWORD" and t.value in _FINDING_KEYWORDS for t in toks):
        return []  # everything below needs one of those tokens (the analyzer reads the same tokens)
    info = analyze(query)
    if info.tree is None or info.form == "unknown":
        return []
    found: list[Finding] = []
    for node, level in _nodes(info.tree):
        if node.limit is None and node.offset is None:
            continue
        if level == "outer" and info.form == "ASK":
            continue  # whether an ASK's window holds a solution depends only on how many there are
        single_row = node.aggregated and not node.group_by
        where = "" if level == "outer" else " in a subquery"
        if not node.order and not single_row:
            found.append(Finding("limit-without-order", f"LIMIT/OFFSET without ORDER BY{where}: the engine picks the rows", level))
        elif node.order:
            found.append(Finding("order-limit", f"ORDER BY ... LIMIT/OFFSET{where}: rows tied at the cut are the engine's choice", level))
    funcs = {a.function.upper() for a in info.aggregates}
    if "SAMPLE" in funcs:
        found.append(Finding("sample", "SAMPLE returns any value of its group"))
    if "GROUP_CONCAT" in funcs:
        found.append(Finding("group-concat", "GROUP_CONCAT concatenates in an unspecified order"))
    if ops:
        found.append(Finding("comparison", "ordering comparison between variables: on IRIs an error in SPARQL 1.1, "
                                           "allowed by some engines"))
    calls = {t.value for t, nxt in zip(toks, toks[1:])  # a built-in called: keyword then "(" or "()"
             if t.kind == "KEYWORD" and (nxt.kind == "NIL" or (nxt.kind == "PUNCT" and nxt.value == "("))}
    nd = [f for f in NONDETERMINISTIC if f in calls]
    if nd:
        found.append(Finding("nondeterministic", f"{', '.join(x + '()' for x in nd)} differ from run to run and engine to engine"))
    return found


# --------------------------------------------------------------------------- rewrites


@functools.lru_cache(maxsize=8192)  # assess_many plans, then replays, each chunk of assessments
def without_outer_limit(query: str) -> str | None:
    """The query without its outermost LIMIT and OFFSET clauses (None if it has none)."""
    depth = 0
    cut: list[tuple[int, int]] = []
    toks = tokenize(query)
    for i, t in enumerate(toks):
        if t.kind == "PUNCT" and t.value == "{":
            depth += 1
        elif t.kind == "PUNCT" and t.value == "}":
            depth -= 1
        elif depth == 0 and t.kind == "KEYWORD" and t.value.upper() in ("LIMIT", "OFFSET") and i + 1 < len(toks) \
                and toks[i + 1].kind == "NUMBER":
            cut.append((t.start, toks[i + 1].end))
    if not cut:
        return None
    out = query
    for s, e in sorted(cut, reverse=True):
        out = out[:s] + " " + out[e:]
    return out


def iri_comparison_variants(query: str) -> list[str]:
    """Two rewrites of every ``?a op ?b``: where SPARQL 1.1 raises a type error (an IRI on either
    side, or a number against a non-number) the terms are compared by their text, in order and
    reversed; comparable terms keep the standard operator."""
    return list(_iri_comparison_variants(query))


@functools.lru_cache(maxsize=8192)
def _iri_comparison_variants(query: str) -> tuple[str, ...]:
    spans = _ops(query)
    if not spans:
        return ()
    flip = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
    variants = []
    for reverse in (False, True):
        out = query
        for s, e, a, op, b in sorted(spans, reverse=True):
            iop = flip[op] if reverse else op
            mixed = (f"isIRI(?{a}) || isIRI(?{b}) || (isLiteral(?{a}) && isLiteral(?{b}) && "
                     f"isNumeric(?{a}) != isNumeric(?{b}))")
            repl = f"(IF({mixed}, STR(?{a}) {iop} STR(?{b}), ?{a} {op} ?{b}))"
            out = out[:s] + repl + out[e:]
        variants.append(out)
    return tuple(variants)


# --------------------------------------------------------------------------- confirmation


def _key(row: tuple, idx: list[int]) -> tuple:
    return tuple(DEFAULT_MATCHING.key(row[i]) for i in idx)


def _sort_vars(node: QueryNode) -> list[str] | None:
    names = []
    for _direction, expr, _explicit in node.order:
        items = [x for x in expr.items if not (getattr(x, "kind", None) == "PUNCT" and x.value in "()")]
        if len(items) != 1 or not isinstance(items[0], Var):
            return None
        names.append(items[0].name)
    return names


def with_projected(query: str, names: Sequence[str]) -> str | None:
    """The query with variables ``names`` added to its outermost SELECT clause (None when it
    has no such clause, e.g. ``SELECT *``, which projects them already)."""
    return _with_projected(query, tuple(names))


def with_sort_keys(query: str, node: QueryNode) -> tuple[str, list[str]] | None:
    """The query with each ``ORDER BY`` condition of ``node`` (an expression such as
    ``DESC(COUNT(?y))`` or a variable) projected as a fresh variable ``?__kgqa_keyN``, and those
    names; None when that could change the rows (``SELECT DISTINCT`` without aggregation: a key
    column could split rows) or there is no SELECT clause to extend."""
    if node.modifier and not (node.aggregated or node.group_by):
        return None
    names = [f"__kgqa_key{i}" for i in range(len(node.order))]
    terms = tuple(f"(({expr.text}) AS ?{name})" for (_d, expr, _e), name in zip(node.order, names))
    widened = _with_projected(query, terms, raw=True)
    return (widened, names) if widened is not None else None


@functools.lru_cache(maxsize=8192)
def _with_projected(query: str, names: tuple[str, ...], raw: bool = False) -> str | None:
    toks = tokenize(query)
    depth = 0
    seen_select = False
    for t in toks:
        if t.kind == "PUNCT" and t.value == "(":
            depth += 1
        elif t.kind == "PUNCT" and t.value == ")":
            depth -= 1
        elif t.kind == "KEYWORD" and t.value.upper() == "SELECT" and not seen_select:
            seen_select = True
        elif seen_select and depth == 0 and ((t.kind == "KEYWORD" and t.value.upper() in ("WHERE", "FROM"))
                                             or (t.kind == "PUNCT" and t.value == "{")):
            return query[:t.start] + " " + " ".join(n if raw else "?" + n for n in names) + " " + query[t.start:]
        elif seen_select and t.kind == "PUNCT" and t.value == "*" and depth == 0:
            return None
    return None


def _confirm_window(node: QueryNode, full: TableAnswer, kept: TableAnswer, ordered: bool,
                    extra: Sequence[str] = (), keys: Sequence[str] | None = None) -> tuple[bool | None, Choice | None, str]:
    """Whether the window of ``node`` (LIMIT/OFFSET) over the full solutions ``full`` is the
    engine's choice. ``extra``: sort variables that were added to the projection to read their
    values (dropped again from the legal answers); ``keys``: the variables holding the sort keys
    when they are not the ORDER BY variables themselves (:func:`with_sort_keys`)."""
    rows = list(full.rows)
    o = node.offset or 0
    k = node.limit if node.limit is not None else max(0, len(rows) - o)
    window = rows[o:o + k]
    if not ordered:
        if o == 0 and len(rows) <= k:
            return False, None, "all solutions fit in the LIMIT"
        choose = min(k, max(0, len(rows) - o))
        return True, Choice(full.variables, (), ((tuple(rows), choose),)), \
            f"LIMIT {k}{f' OFFSET {o}' if o else ''} without ORDER BY keeps {choose} of {len(rows)} solutions"
    names = list(keys) if keys is not None else _sort_vars(node)
    if names is None or any(n not in full.variables for n in names):
        return None, None, "a sort key is an expression, not a variable: ties not checked"
    idx = [full.variables.index(n) for n in names]
    if not window:
        return False, None, "the window is empty"
    boundary = set()
    if o + k < len(rows) and _key(window[-1], idx) == _key(rows[o + k], idx):
        boundary.add(_key(window[-1], idx))
    if o > 0 and o < len(rows) and _key(window[0], idx) == _key(rows[o - 1], idx):
        boundary.add(_key(window[0], idx))
    if not boundary:
        return False, None, "no tie at the cut"
    keep = [i for i, v in enumerate(full.variables) if v not in extra]

    def proj(r: tuple) -> tuple:
        return tuple(r[i] for i in keep)

    fixed = tuple(proj(r) for r in window if _key(r, idx) not in boundary)
    groups = []
    for b in boundary:
        pool = tuple(proj(r) for r in rows if _key(r, idx) == b)
        m = sum(1 for r in window if _key(r, idx) == b)
        groups.append((pool, m))
    sizes = ", ".join(f"{m} of {len(p)}" for p, m in groups)
    variables = tuple(full.variables[i] for i in keep)
    return True, Choice(variables, fixed, tuple(groups)), f"ORDER BY ... LIMIT cuts through tied solutions (keeps {sizes})"


def _concat_columns(info, answer: TableAnswer) -> list[int]:
    """The columns of ``answer`` projected from a GROUP_CONCAT expression."""
    return [answer.variables.index(p.var.name) for p in info.projection
            if p.expression and p.expression.upper().lstrip().startswith("GROUP_CONCAT") and p.var.name in answer.variables]


def _group_concat_confirmed(info, answer: Answer | None) -> bool | None:
    if not isinstance(answer, TableAnswer):
        return None
    cols = _concat_columns(info, answer)
    if not cols:
        return None
    sep = _concat_separator(info)
    if sep == "":  # SEPARATOR="": the elements cannot be told apart in the value
        longer = any(row[i] is not None and len(row[i].value) > 1 for row in answer.rows for i in cols)
        return None if longer else False
    return any(row[i] is not None and sep in row[i].value for row in answer.rows for i in cols)


def _concat_separator(info) -> str:
    """The separator of the query's (first) GROUP_CONCAT; a space by default."""
    seps = [a.separator if a.separator is not None else " " for a in info.aggregates if a.function.upper() == "GROUP_CONCAT"]
    return seps[0] if seps else " "


def distinct_orders(elements: Sequence[str], cap: int) -> int:
    """How many distinct sequences the multiset ``elements`` can be ordered into (the multinomial
    n! / (k1! k2! ...), computed as a product of binomials, never enumerated), or ``cap + 1``
    as soon as it exceeds ``cap``: the cost stays small for any n."""
    counts = sorted(Counter(elements).values())
    if len(counts) > 1 and len(elements) > cap:  # two kinds of element: at least n orders
        return cap + 1
    out, seen = 1, 0
    for k in counts:
        seen += k
        out *= comb(seen, k)
        if out > cap:
            return cap + 1
    return out


def _distinct_permutations(elements: Sequence[str]):
    """Each distinct order of the multiset ``elements`` once (lexicographic next-permutation:
    no order is produced twice, so the work is proportional to the number of distinct orders)."""
    a = sorted(elements)
    n = len(a)
    while True:
        yield tuple(a)
        i = n - 2
        while i >= 0 and a[i] >= a[i + 1]:
            i -= 1
        if i < 0:
            return
        j = n - 1
        while a[j] <= a[i]:
            j -= 1
        a[i], a[j] = a[j], a[i]
        a[i + 1:] = reversed(a[i + 1:])


def _one_value_note(info, answer: TableAnswer) -> str:
    """Why an unconfirmed GROUP_CONCAT is not engine-dependent: one value per group, or no value
    at all (unbound: the aggregate failed, e.g. over IRIs, which have no string to concatenate)."""
    cols = _concat_columns(info, answer)
    cells = [row[i] for row in answer.rows for i in cols]
    if cells and all(c is None for c in cells):
        return "every GROUP_CONCAT value is unbound (the aggregate failed: nothing to order)"
    if any(c is None for c in cells):
        return "every bound GROUP_CONCAT value has one element; the others are unbound (the aggregate failed)"
    return "every GROUP_CONCAT group has one value"


# long function: one pass over the query's syntax tree collecting every engine-dependent construct; each finding is a few lines of the same walk
def assess(query: str, outcome: Outcome | None, execute, *, bound: int = DEFAULT_BOUND) -> QueryAssessment:
    """Static findings for ``query`` and their confirmation by execution.

    ``outcome`` is the query's own outcome (as scored); ``execute(texts) -> [Outcome]`` runs
    query variants on the same engine (untrusted queries must go through the sandbox there).
    """
    a = QueryAssessment(query, detect(query))
    if not a.findings:
        return a
    if outcome is None or outcome.status is not Status.OK:
        a.notes.append("the query did not run: its answer depends on no engine choice kgqa can see")
        a.findings = []
        return a
    info = analyze(query)
    answer = outcome.answer
    verdicts: list[bool | None] = []
    reasons: list[str] = []
    outer_window = [f for f in a.findings if f.kind in ("limit-without-order", "order-limit") and f.level == "outer"]
    if outer_window and isinstance(answer, TableAnswer):
        ordered = outer_window[0].kind == "order-limit"
        stripped = without_outer_limit(query)
        extra: list[str] = []
        keys: list[str] | None = None
        if stripped and ordered:
            names = _sort_vars(info.tree)
            missing = [n for n in names or [] if n not in answer.variables]
            if names is None:  # a sort key is an expression (DESC(COUNT(?y))): read its values as columns
                keyed = with_sort_keys(stripped, info.tree)
                if keyed is not None:
                    stripped, keys = keyed
                    extra = list(keys)
            elif missing and not info.tree.aggregated:
                widened = with_projected(stripped, missing)
                if widened is not None:
                    stripped, extra = widened, missing
        full = execute([stripped])[0] if stripped else None
        if full is not None and full.status is Status.OK and isinstance(full.answer, TableAnswer):
            ok, choice, why = _confirm_window(info.tree, full.answer, answer, ordered, extra, keys)
            verdicts.append(ok)
            if ok is True:
                reasons.append(why)
                a.choice = choice
            elif ok is None:
                reasons.append(f"{outer_window[0].message} ({why})")
                a.open.append(outer_window[0].kind)
            else:
                a.notes.append(why)
        else:
            verdicts.append(None)
            a.open.append(outer_window[0].kind)
            reasons.append(outer_window[0].message + " (not checked: the query without LIMIT did not run"
                           + (f": {full.message})" if full is not None else ")"))
    for f in a.findings:
        if f in outer_window:
            continue
        if f.kind == "comparison" and answer is not None:
            variants = iri_comparison_variants(query)
            outs = execute(variants)
            alts = [o.answer for o in outs if o.status is Status.OK and o.answer is not None]
            differs = any(_differs(x, answer) for x in alts)
            verdicts.append(differs)
            if differs:
                reasons.append("compares IRIs or terms of incomparable types with an ordering operator "
                               "(an error in SPARQL 1.1; some engines order them)")
                _set_alternatives(a, [answer] + [x for x in alts if _differs(x, answer)], f.kind)
            else:
                a.notes.append("ordering comparisons never met IRIs or incomparable types on this KG")
        elif f.kind == "group-concat":
            c = _group_concat_confirmed(info, answer)
            verdicts.append(c)
            (reasons if c is not False else a.notes).append(f.message if c is not False else _one_value_note(info, answer))
            orders = _group_concat_orders(info, answer, bound) if c else None
            if orders is not None:
                _set_alternatives(a, orders, f.kind)
            elif c is not False:
                a.open.append(f.kind)
        else:
            verdicts.append(None)
            reasons.append(f.message)
            a.open.append(f.kind)
    if any(v is True for v in verdicts):
        a.confirmed = True
    elif verdicts and all(v is False for v in verdicts):
        a.confirmed = False
    else:
        a.confirmed = None
    a.reason = "; ".join(reasons) if a.dependent else ""
    return a


def _set_alternatives(a: QueryAssessment, answers: list[Answer], kind: str) -> None:
    """The legal answers of one finding; a second finding with its own (or a window choice)
    would combine with them in ways not listed: the kind is then left open."""
    if a.alternatives or a.choice is not None:
        a.open.append(kind)
    else:
        a.alternatives = answers


def _group_concat_orders(info, answer: TableAnswer, bound: int) -> list[Answer] | None:
    """Every answer the GROUP_CONCAT columns of ``answer`` can take in another order of their
    elements (the answer itself first; a value is split at the separator), or None when there
    are more than ``bound`` (counted before any is listed: time and memory stay bounded) or the
    separator is empty (the elements cannot be recovered)."""
    cols = _concat_columns(info, answer)
    sep = _concat_separator(info)
    if sep == "":
        return None
    cells: list[tuple[int, int, list]] = []
    total = 1
    for r, row in enumerate(answer.rows):
        for i in cols:
            c = row[i]
            if c is None or sep not in c.value:
                continue
            parts = c.value.split(sep)
            total *= distinct_orders(parts, bound)
            if total > bound:
                return None
            orders = list(dict.fromkeys(sep.join(p) for p in _distinct_permutations(parts)))
            cells.append((r, i, [replace(c, value=v) for v in orders]))
    out: list[Answer] = []
    for pick in product(*(terms for _r, _i, terms in cells)):
        rows = [list(row) for row in answer.rows]
        for (r, i, _t), term in zip(cells, pick):
            rows[r][i] = term
        out.append(TableAnswer(answer.variables, tuple(tuple(row) for row in rows)))
    return [answer] + [x for x in out if _differs(x, answer)]


def _differs(x: Answer, y: Answer) -> bool:
    if isinstance(x, BooleanAnswer) or isinstance(y, BooleanAnswer):
        return x != y
    kx = sorted(tuple(DEFAULT_MATCHING.key(c) for c in r) for r in x.rows) if isinstance(x, TableAnswer) else None
    ky = sorted(tuple(DEFAULT_MATCHING.key(c) for c in r) for r in y.rows) if isinstance(y, TableAnswer) else None
    return kx != ky


def assess_many(queries: Mapping[str, str], outcomes: Mapping[str, Outcome], runner, *,
                untrusted: bool = True, timeout: float | None = None) -> dict[str, QueryAssessment]:
    """:func:`assess` for ``{id: query}`` with ``outcomes`` by id (only queries with findings
    are in the result). ``runner`` is a :class:`~kgqa.execute.executor.Executor` (policy:
    normaliser, sandbox; cache) or anything with ``run({id: text}, untrusted) -> {id: Outcome}``.
    Queries without findings, or whose own outcome is not OK, execute nothing.

    With an Executor that has a result cache, assessments are remembered there
    (:class:`_Remembered`): a re-run whose outcomes all come from the cache neither analyses its
    queries nor looks their variants up again. ``outcomes`` must then be what the runner
    returned for the queries."""
    out: dict[str, QueryAssessment] = {}
    clean = getattr(runner, "no_findings", None) or ()  # screened when the runner prepared them
    todo = []
    for qid, q in queries.items():
        o = outcomes.get(qid)
        # a query that did not run has no assessment (assess drops its findings)
        if q and q.strip() and q not in clean and o is not None and o.status is Status.OK:
            todo.append((qid, q))
    memory = _Remembered.of(runner, untrusted) if todo else None
    if memory is not None:
        todo = memory.recall(todo, outcomes, out)
    chunk: list[tuple[str, str]] = []
    for n, (qid, q) in enumerate(todo):
        if detect(q):
            chunk.append((qid, q))
        elif memory is not None:
            memory.remember(q, QueryAssessment(q), outcomes[qid], {}, static=True)
        if chunk and (len(chunk) >= ASSESS_CHUNK or n == len(todo) - 1):
            _assess_chunk(chunk, outcomes, runner, untrusted, out, memory)
            chunk = []
    if memory is not None:
        memory.store()
    return {qid: out[qid] for qid in queries if qid in out}


def _assess_chunk(chunk: list[tuple[str, str]], outcomes: Mapping[str, Outcome], runner, untrusted: bool,
                  out: dict[str, QueryAssessment], memory: "_Remembered | None" = None) -> None:
    """Assess ``chunk`` (queries with findings, detected just before, so the analyzer's cache
    still holds them) into ``out``, executing every variant they need in one batch (and
    hand each assessment with the outcomes it read to ``memory``)."""
    # first pass: which variants the chunk's assessments execute (each assessment asks for
    # its variants before it reads any of their outcomes); then all of them in one batch
    wanted: dict[str, None] = {}

    def record(texts: Sequence[str]) -> list[Outcome]:
        wanted.update(dict.fromkeys(texts))
        return [_NOT_RUN] * len(texts)

    for qid, q in chunk:
        assess(q, outcomes.get(qid), record)
    texts = list(wanted)
    res = runner.run({str(i): t for i, t in enumerate(texts)}, untrusted=untrusted) if texts else {}
    done = {t: res[str(i)] for i, t in enumerate(texts)}
    read: dict[str, Outcome] = {}

    def execute(texts: Sequence[str]) -> list[Outcome]:
        missing = [t for t in dict.fromkeys(texts) if t not in done]
        if missing:  # not asked for in the first pass (never happens for assess as written)
            more = runner.run({str(i): t for i, t in enumerate(missing)}, untrusted=untrusted)
            done.update({t: more[str(i)] for i, t in enumerate(missing)})
        read.update((t, done[t]) for t in texts)
        return [done[t] for t in texts]

    for qid, q in chunk:
        read.clear()
        a = assess(q, outcomes.get(qid), execute)
        if a.findings:
            out[qid] = a
        if memory is not None:
            memory.remember(q, a, outcomes[qid], dict(read))


#: Flagged queries assessed together: their variants are executed (looked up) in one batch.
ASSESS_CHUNK = 2000
_NOT_RUN = Outcome(Status.EXEC_ERROR, None, "not run (planning pass)", None)


def assess_dataset(dataset, executor) -> dict[str, QueryAssessment]:
    """``kgqa audit``'s engine-dependence column: the assessment of every gold query with a
    static finding (variants run through ``executor``, sandboxed when its policy does not trust
    gold queries)."""
    untrusted = executor.policy.untrusted("gold")
    queries = {it.id: it.sparql for it in dataset.items if it.sparql and it.sparql.strip() and detect(it.sparql)}
    outcomes = executor.run(queries, untrusted=untrusted) if queries else {}
    return assess_many(queries, outcomes, executor, untrusted=untrusted)


# --------------------------------------------------------------------------- remembered assessments

#: Modules whose code decides an assessment: any change to one makes every remembered
#: assessment a miss (static findings: lexer, parser, analyzer; confirmation: this module, the
#: answer model, how variants are prepared, executed and cached).
ASSESSMENT_CODE = ("kgqa.execute.engine_findings", "kgqa.execute.cache", "kgqa.execute.executor",
                   "kgqa.execute.policy", "kgqa.execute.sandbox", "kgqa.execute.normalise", "kgqa.execute.engine",
                   "kgqa.sparql.lexer", "kgqa.sparql.parser", "kgqa.sparql.analyzer", "kgqa.sparql.tree",
                   "kgqa.sparql.checks", "kgqa.sparql.prefixes", "kgqa.model.terms", "kgqa.model.answer",
                   "kgqa.model.outcome")
@functools.cache
def _code_version() -> str | None:
    return code_fingerprint(ASSESSMENT_CODE)


class _Remembered:
    """Assessments kept in an Executor's result cache (its ``assessments`` table).

    **Key**: the code version (:data:`ASSESSMENT_CODE`), the engine key (kind, version, full KG
    fingerprint), the policy (timeout, row cap, normaliser, sandbox settings), trusted or not,
    and the exact query text. **Basis**: the cached entries of the outcomes the assessment read
    (the query's own, then its variants') with their states
    (:meth:`~kgqa.execute.cache.ResultCache.row_states`); a remembered assessment is used only
    while every one of them is unchanged and the query's own outcome has the row count its entry
    has, so a changed KG, engine, policy, code, query or cached outcome never reuses a stale one.
    An assessment that read an outcome the cache does not give back as it was read (a transient
    failure, an entry too large to keep, a replaced entry) is not remembered. A query whose
    static check finds nothing is remembered with an empty basis; a variant the sandbox refused
    needs no entry (the refusal is decided by the policy and the code, both in the key)."""

    def __init__(self, runner, untrusted: bool):
        self.runner, self.untrusted = runner, untrusted
        self.cache = runner.cached.cache
        self.engine = runner.cached.key
        p = runner.policy
        self.limits = (p.timeout, p.max_rows)
        self.head = (f"{_code_version()}|{self.engine}|timeout={p.timeout!r}|max_rows={p.max_rows}"
                     f"|normalise={p.normalise}|sandbox={untrusted and p.sandbox}|service={p.allow_service}"
                     f"|update={p.allow_update}|untrusted={untrusted}\0")
        self.pending: list[tuple[str, QueryAssessment, Outcome, dict[str, Outcome], bool]] = []

    @classmethod
    def of(cls, runner, untrusted: bool) -> "_Remembered | None":
        """For a runner with a result cache (an :class:`~kgqa.execute.executor.Executor`'s
        ``cached.cache``), else None."""

        cached = getattr(runner, "cached", None)
        if not isinstance(getattr(cached, "cache", None), ResultCache) or _code_version() is None:
            return None
        return cls(runner, untrusted)

    def key(self, query: str) -> str:
        return hashlib.sha256((self.head + query).encode("utf-8", "surrogatepass")).hexdigest()

    def recall(self, todo: list[tuple[str, str]], outcomes: Mapping[str, Outcome],
               out: dict[str, QueryAssessment]) -> list[tuple[str, str]]:
        """Put the valid remembered assessments of ``todo`` (``(id, query)``) with findings
        into ``out``; return the items that have none."""
        keys = [self.key(q) for _, q in todo]
        stored = self.cache.get_assessments(keys)
        if not stored:
            return todo
        bases = {k: [e.split("=", 1) for e in basis.split(" ")] if basis else [] for k, (basis, _) in stored.items()}
        states = self.cache.row_states(self.engine, [h for b in bases.values() for h, _ in b])
        rest = []
        for (qid, q), k in zip(todo, keys):
            basis = bases.get(k)
            own = outcomes[qid]
            if basis is None or not all(states.get(h) == st for h, st in basis) or \
                    (basis and basis[0][1].rsplit("/", 1)[1] != str(_n_rows(own))):
                rest.append((qid, q))
                continue
            a = _from_record(q, _loads(stored[k][1]), own.answer)
            if a.findings:
                out[qid] = a
        return rest

    def remember(self, query: str, a: QueryAssessment, own: Outcome, read: dict[str, Outcome],
                 static: bool = False) -> None:
        """Keep ``a`` (made from the query's outcome ``own`` and the variant outcomes ``read``,
        by variant text; ``static``: the query has no static finding) for :meth:`store`."""
        self.pending.append((query, a, own, read, static))

    def store(self) -> None:
        """Store what :meth:`remember` kept, each with its basis, where the cache gives back
        every outcome it read."""

        pending, self.pending = self.pending, []
        read_texts: dict[str, Outcome] = {}  # text the engine ran -> the outcome read
        plans: list[tuple[str, QueryAssessment, Outcome, list[str] | None]] = []
        for q, a, own, read, static in pending:
            texts: list[str] | None = []
            if not static:
                for t, o in [(q, own), *read.items()]:
                    text, _, refused = self.runner.prepare(t, self.untrusted)
                    if refused is not None:  # decided by the policy and the code (the key)
                        if o.status is not refused.status:
                            texts = None
                            break
                        continue
                    seen = read_texts.setdefault(text, o)
                    if texts is not None and seen is not o and not _same(seen, o):
                        texts = None
                        break
                    texts.append(text)
            plans.append((q, a, own, texts))
        distinct = list(read_texts)
        states: dict[str, str] = {}
        got = self.cache.get_many(self.engine, distinct, *self.limits, states=states) if distinct else []
        hashes = {t: query_hash(t) for t in distinct}
        kept = {t for t, g in zip(distinct, got) if g is not None and hashes[t] in states and _same(g, read_texts[t])}
        entries = []
        for q, a, own, texts in plans:
            if texts is None or not all(t in kept for t in texts):
                continue
            record = _to_record(a, own.answer)
            if record is not None:
                basis = " ".join(f"{hashes[t]}={states[hashes[t]]}" for t in texts)
                entries.append((self.key(q), basis, json.dumps(record, separators=(",", ":"))))
        self.cache.put_assessments(entries)


def _n_rows(o: Outcome) -> int | None:
    """The row count the result cache stores for an outcome."""
    if o.answer is None:
        return None
    return len(o.answer.rows) if isinstance(o.answer, TableAnswer) else 1


def _same(x: Outcome, y: Outcome) -> bool:
    return x.status is y.status and x.message == y.message and x.answer == y.answer


def _row_json(row: tuple) -> list:
    return [None if c is None else to_sparql_json(c) for c in row]


def _row(cells: list) -> tuple:
    return tuple(None if c is None else from_sparql_json(c) for c in cells)


def _to_record(a: QueryAssessment, own: Answer | None) -> dict[str, Any] | None:
    """``a`` as JSON (its alternatives without the query's own answer, which comes first)."""
    alternatives = None
    if a.alternatives:
        if a.alternatives[0] is not own:
            return None
        alternatives = [to_results_json(x) for x in a.alternatives[1:]]
    choice = None
    if a.choice is not None:
        c = a.choice
        choice = {"v": list(c.variables), "x": [_row_json(r) for r in c.fixed],
                  "g": [[[_row_json(r) for r in pool], k] for pool, k in c.groups]}
    return {"f": [[f.kind, f.message, f.level] for f in a.findings], "c": a.confirmed, "r": a.reason,
            "n": a.notes, "h": choice, "a": alternatives, "o": a.open}


def _from_record(query: str, d: dict[str, Any], own: Answer | None) -> QueryAssessment:
    a = QueryAssessment(query, [Finding(*f) for f in d["f"]], d["c"], d["r"], notes=list(d["n"]), open=list(d.get("o", ())))
    c = d["h"]
    if c is not None:
        a.choice = Choice(tuple(c["v"]), tuple(_row(r) for r in c["x"]),
                          tuple((tuple(_row(r) for r in pool), k) for pool, k in c["g"]))
    if d["a"] is not None:
        a.alternatives = [own, *(from_results_json(x) for x in d["a"])]
    return a
