"""Units and scales (issue 37): a literal-valued source predicate whose values the target holds
multiplied by one constant factor (grams -> kilograms: x 0.001, found by
:func:`kgqa.make.migrate.align.value_transform`) is mapped to the target predicate *with* the
factor, and the items using it are rescaled:

- numeric constants in a ``FILTER`` that mentions a variable bound by the predicate (as its
  object) are multiplied by the factor (``FILTER(?w > 1000)`` -> ``FILTER(?w > 1)``);
- the expected answers (the mapped source answers) are multiplied by the factor in the
  columns that return such a variable, directly or through ``MIN``/``MAX``/``SUM``/``AVG``/
  ``SAMPLE``;
- ``ORDER BY``, ``MIN``/``MAX`` and argmax questions need no rewrite: a positive factor keeps
  the order, so the entities they return are the same.

The item's agreement is then measured as for any other item: a rescaled item is written as
verified only when the target returns exactly the rescaled source answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from kgqa.model import IRI, Literal, TableAnswer
from kgqa.sparql.lexer import tokenize

XSD_DECIMAL = "http://www.w3.org/2001/XMLSchema#decimal"
AGGREGATES = ("MIN", "MAX", "SUM", "AVG", "SAMPLE")


@dataclass(frozen=True)
class Scale:
    """The target predicate holding the source values times ``factor`` (on ``support`` of
    ``of`` sampled facts)."""

    target: str
    factor: float
    support: int
    of: int

    def text(self) -> str:
        return f"x {self.factor:g} on <{self.target}> ({self.support} of {self.of} sampled facts)"


def times(value: str, factor: float) -> str | None:
    """``value`` (a number's lexical form) times ``factor`` as a plain decimal, exact; None
    when ``value`` is not a number."""
    try:
        d = Decimal(value) * Decimal(repr(factor))
    except (InvalidOperation, ValueError):
        return None
    return format(d.normalize(), "f")


def object_vars(triples, predicate: str) -> set[str]:
    """Names of the variables that are the object of ``predicate`` in ``triples`` (the
    analyzer's triple patterns of a query)."""
    return {t.object.name for t in triples if isinstance(t.predicate, IRI) and t.predicate.value == predicate
            and type(t.object).__name__ == "Var"}


def _filter_spans(toks) -> list[tuple[int, int]]:
    """Token index spans ``(open, close)`` of every ``FILTER ( ... )`` expression."""
    spans = []
    i, n = 0, len(toks)
    while i < n:
        if toks[i].kind == "KEYWORD" and toks[i].value.upper() == "FILTER" and i + 1 < n \
                and toks[i + 1].value == "(":
            depth, j = 0, i + 1
            while j < n:
                if toks[j].value == "(":
                    depth += 1
                elif toks[j].value == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            spans.append((i + 1, j))
            i = j
        i += 1
    return spans


def _literal(toks, k: int, factor: float, edits: dict[int, str]) -> None:
    """Put the scaled literal token ``k`` (a number, or a quoted number with or without a
    datatype) into ``edits`` as a plain decimal (a datatype such as xsd:integer may not hold
    the product), its ``^^`` and datatype tokens removed; nothing when it is not a number."""
    t = toks[k]
    if t.kind not in ("NUMBER", "STRING"):
        return
    new = times(t.value, factor)
    if new is None:
        return
    edits[k] = new
    if t.kind == "STRING" and k + 2 < len(toks) and toks[k + 1].value == "^^":
        edits[k + 1] = edits[k + 2] = ""


def scale_filters(query: str, names: set[str], factor: float, target: str | None = None) -> tuple[str, list[str]]:
    """``query`` with the numeric constants of every FILTER that mentions one of ``names``
    multiplied by ``factor``, and (given the ``target`` predicate IRI) a literal object of a
    triple pattern with that predicate; and the changes (``"1000 -> 1"``)."""
    toks = tokenize(query)
    edits: dict[int, str] = {}
    for a, b in _filter_spans(toks):
        span = toks[a:b + 1]
        if not any(t.kind == "VAR" and t.value.lstrip("?$") in names for t in span):
            continue
        for k in range(a, b + 1):
            if k not in edits:
                _literal(toks, k, factor, edits)
    if target is not None:
        for k, t in enumerate(toks[:-1]):
            if t.kind == "IRIREF" and t.value == target and k + 1 not in edits:
                _literal(toks, k + 1, factor, edits)
    if not edits:
        return query, []
    out, last, changes = [], 0, []
    for k in sorted(edits):
        t = toks[k]
        out += [query[last:t.start], edits[k]]
        if edits[k]:
            changes.append(f"{t.value} -> {edits[k]}")
        last = t.end
    return "".join(out + [query[last:]]), changes


def scaled_columns(query: str, names: set[str]) -> set[str]:
    """Projected columns that return one of ``names``: the variable itself, or an aggregate
    of it other than COUNT (``(MAX(?w) AS ?m)``)."""
    cols = set(names)
    for name in names:
        pat = (r"\(\s*(?:" + "|".join(AGGREGATES) + r")\s*\(\s*(?:DISTINCT\s+)?[?$]" + re.escape(name)
               + r"\s*\)\s*AS\s+[?$](\w+)\s*\)")
        cols |= {m.group(1) for m in re.finditer(pat, query, re.IGNORECASE)}
    return cols


def scale_answer(answer: TableAnswer, columns: set[str], factor: float) -> tuple[TableAnswer, int]:
    """``answer`` with the numeric cells of ``columns`` multiplied by ``factor``; and how many
    cells changed."""
    idx = [i for i, v in enumerate(answer.variables) if v in columns]
    if not idx:
        return answer, 0
    rows, n = [], 0
    for row in answer.rows:
        cells = list(row)
        for i in idx:
            c = cells[i]
            if isinstance(c, Literal) and c.language is None:
                new = times(c.value, factor)
                if new is not None:
                    cells[i] = Literal(new, XSD_DECIMAL)
                    n += 1
        rows.append(tuple(cells))
    return TableAnswer(answer.variables, tuple(rows)), n


__all__ = ["Scale", "times", "object_vars", "scale_filters", "scaled_columns", "scale_answer"]
