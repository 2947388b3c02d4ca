"""Answers: a boolean (ASK) or a table of rows over named variables whose cells are RDF terms.

Row and variable structure is kept; flattening to a set of values is a measure's choice
(see :func:`answer_items`).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal as _Lit, Union

from kgqa.model.terms import TermMatching, Term, from_sparql_json, guess_terms, guessed_iri, to_sparql_json
from kgqa.model.terms import DATETIME_PATTERN, DATE_PATTERN, Literal as Lit, NUMBER_PATTERN, XSD, guess_term


@dataclass(frozen=True, slots=True)
class BooleanAnswer:
    value: bool

    def __len__(self) -> int:  # a boolean answer is never "empty"
        return 1


@dataclass(frozen=True, slots=True, eq=False)
class TableAnswer:
    """Rows over ``variables``; a cell is a term or None (unbound). Two tables are equal when
    their variables and rows are (a :class:`TextColumn` included)."""

    variables: tuple[str, ...]
    rows: tuple[tuple[Term | None, ...], ...]

    def __post_init__(self) -> None:
        n = len(self.variables)
        for i, row in enumerate(self.rows):
            if len(row) != n:
                raise ValueError(f"row {i} has {len(row)} cells for {n} variables {self.variables}")

    def __len__(self) -> int:
        return len(self.rows)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TableAnswer):
            return NotImplemented
        return self is other or (self.variables == other.variables and self.rows == other.rows)

    def __hash__(self) -> int:
        return hash((self.variables, self.rows))

    @classmethod
    def single_column(cls, terms: Iterable[Term], variable: str = "result") -> "TableAnswer":
        # every row has one cell by construction: skip __init__ and __post_init__'s check (a
        # loader's hot path); zip of one iterable gives the one-cell rows
        table = _new(cls)
        _set_variables(table, (variable,))
        _set_rows(table, tuple(zip(terms)))
        return table

    def column(self, variable: str) -> list[Term | None]:
        i = self.variables.index(variable)
        return [row[i] for row in self.rows]


_new = object.__new__
_set_variables = TableAnswer.variables.__set__  # type: ignore[attr-defined]
_set_rows = TableAnswer.rows.__set__  # type: ignore[attr-defined]


class TextColumn(TableAnswer):
    """A one-column table of bare strings (a JSON list of strings), each typed as
    :func:`~kgqa.model.terms.guess_term` types it: an :class:`~kgqa.model.terms.IRI` or a simple
    literal. It is a :class:`TableAnswer` in every respect (equal to the table of those terms);
    its ``rows`` are made on first use, so that scoring by lexical form
    (:meth:`TermMatching.text_keys`) reads ``texts`` and never makes a term."""

    __slots__ = ("texts",)
    texts: list[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a TextColumn is made of its strings: TextColumn.of(texts, variable)")

    @classmethod
    def of(cls, texts: list[str], variable: str = "answer") -> "TextColumn":
        """The column of ``texts`` (a list of strings, kept as it is: not to be changed)."""
        table = _new(cls)
        _set_variables(table, (variable,))
        _set_texts(table, texts)
        return table

    def __getattr__(self, name: str) -> Any:  # only for a slot not yet set: ``rows`` on first use
        if name == "rows":
            rows = tuple(zip(guess_terms(self.texts)))
            _set_rows(self, rows)
            return rows
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __len__(self) -> int:
        return len(self.texts)

    def __repr__(self) -> str:
        return f"TableAnswer(variables={self.variables!r}, rows={self.rows!r})"

    def __reduce__(self) -> Any:
        return TextColumn.of, (list(self.texts), self.variables[0])


_set_texts = TextColumn.texts.__set__  # type: ignore[attr-defined]

Answer = Union[BooleanAnswer, TableAnswer]

EMPTY = TableAnswer((), ())


def is_empty(answer: Answer | None) -> bool:
    """None and a table with no rows (or only unbound cells) are empty; a boolean never is."""
    if answer is None:
        return True
    if answer.__class__ is TextColumn:  # every cell a term
        return not answer.texts
    if isinstance(answer, BooleanAnswer):
        return False
    for row in answer.rows:
        for c in row:
            if c is not None:
                return False
    return True


View = _Lit["values", "tuples"]


def answer_items(answer: Answer | None, matching: TermMatching, view: View = "values") -> frozenset[Hashable]:
    """The set an answer is compared as.

    - ``values``: every bound cell of every row, flattened (the QALD / GERBIL / Text2SPARQL
      convention); a boolean is the single item ``("bool", value)`` (``"true"``/``"false"`` in
      lexical mode, as the Text2SPARQL client writes it).
    - ``tuples``: each row as a tuple of cell keys, with variables sorted by name so that
      column order never matters; unbound cells take part as ``unbound``.
    """
    if answer is None:
        return frozenset()
    if isinstance(answer, BooleanAnswer):
        if matching.mode == "lexical":
            return frozenset({"true" if answer.value else "false"})
        return frozenset({("bool", answer.value)})
    key = matching.key
    if view == "values":
        return frozenset(matching.keys([c for row in answer.rows for c in row if c is not None]))
    order = sorted(range(len(answer.variables)), key=lambda i: answer.variables[i])
    return frozenset(
        tuple(key(row[i]) for i in order) for row in answer.rows if any(c is not None for c in row)
    )


# --------------------------------------------------------------------------- SPARQL JSON


#: binding ``type`` values outside SPARQL JSON that released benchmark files use (QALD-6
#: hybrid, QALD-7/8 multilingual): read by :func:`tolerant_cells` instead of being refused.
NONSTANDARD_BINDING_TYPES = ("number", "text", "list", "string", "date", "boolean")


def tolerant_cells(cell: Any) -> tuple[list[Term], str]:
    """Terms for a binding whose ``type`` is not SPARQL JSON's (see
    :data:`NONSTANDARD_BINDING_TYPES`), with a note saying how it was read:

    - ``number``: a literal typed ``xsd:integer`` / ``xsd:decimal`` / ``xsd:double`` by its
      lexical form (a value that is no number stays a simple literal);
    - ``text`` / ``string``: a simple literal; ``date``: ``xsd:date`` / ``xsd:dateTime`` when the
      text is one, else simple; ``boolean``: ``xsd:boolean``;
    - ``list``: one term per element (a JSON list, or a string split on commas / semicolons /
      newlines), each an IRI when it is an absolute http(s) IRI, else a simple literal: the
      caller turns them into one row each.
    Raises ValueError for anything else."""

    kind = cell.get("type")
    value = cell.get("value")
    if value is None:
        raise ValueError(f"binding without 'value': {cell!r}")
    if kind == "list":
        if isinstance(value, list):
            parts = [str(v).strip() for v in value]
        else:
            parts = [p.strip() for p in re.split(r"[,;\n]", str(value))]
        terms = [guess_term(p) for p in parts if p]
        return terms, f"binding type 'list' read as {len(terms)} value(s), one row each"
    text = str(value).strip() if not isinstance(value, bool) else ("true" if value else "false")
    if kind == "number":
        if isinstance(value, bool) or not NUMBER_PATTERN.match(text):
            return [Lit(text)], f"binding type 'number' with non-numeric value {text!r} read as a simple literal"
        if _re_int(text):
            dt = "integer"
        elif "e" in text.lower():
            dt = "double"
        else:
            dt = "decimal"
        return [Lit(text, XSD + dt)], f"binding type 'number' read as xsd:{dt}"
    if kind in ("text", "string"):
        return [Lit(str(value))], f"binding type {kind!r} read as a simple literal"
    if kind == "date":
        dt = "date" if DATE_PATTERN.match(text) else "dateTime" if DATETIME_PATTERN.match(text) else None
        if dt is None:
            return [Lit(text)], f"binding type 'date' with value {text!r} read as a simple literal"
        return [Lit(text, XSD + dt)], f"binding type 'date' read as xsd:{dt}"
    if kind == "boolean":
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"binding type 'boolean' with value {text!r}")
        return [Lit(text.lower(), XSD + "boolean")], "binding type 'boolean' read as xsd:boolean"
    raise ValueError(f"unknown binding type {kind!r} (expected uri, literal, typed-literal or bnode)")


def _re_int(text: str) -> bool:
    t = text.strip().lstrip("+-")
    return t.isdigit()


def from_results_json(doc: Any, notes: list[str] | None = None) -> Answer:
    """An answer from a SPARQL 1.1 Query Results JSON document (``{"head":..., "results":...}``
    or ``{"head":..., "boolean": true}``).

    When ``notes`` is a list, bindings of the non-standard types benchmark files use
    (``number``, ``text``, ``list``, ...; see :func:`tolerant_cells`) are read instead of
    refused, and a note per distinct reading is appended; a ``list`` cell becomes one row per
    element (the row's other cells repeated). Without ``notes`` they raise ValueError."""
    if not isinstance(doc, dict):
        raise ValueError(f"expected a SPARQL results object, got {type(doc).__name__}")
    if "boolean" in doc:
        b = doc["boolean"]
        if isinstance(b, str):
            if b.lower() not in ("true", "false"):
                raise ValueError(f"boolean answer must be true or false, got {b!r}")
            b = b.lower() == "true"
        if not isinstance(b, bool):
            raise ValueError(f"boolean answer must be true or false, got {b!r}")
        return BooleanAnswer(b)
    head = doc.get("head") or {}
    if not isinstance(head, dict):
        raise ValueError(f"'head' must be an object, got {type(head).__name__}")
    raw_vars = head.get("vars") or []
    if not isinstance(raw_vars, list) or not all(isinstance(v, str) for v in raw_vars):
        raise ValueError(f"'head.vars' must be a list of variable names, got {_short(raw_vars)}")
    variables = list(raw_vars)
    results = doc.get("results")
    if results is None:
        if not variables and not doc.get("head"):
            raise ValueError("neither 'results' nor 'boolean' in SPARQL results object")
        return TableAnswer(tuple(variables), ())
    bindings = results.get("bindings") if isinstance(results, dict) else None
    if bindings is None:
        raise ValueError("'results' has no 'bindings' list")
    if not isinstance(bindings, list):
        raise ValueError("'results.bindings' is not a list")
    # variables used in bindings but missing from head.vars are kept, not dropped
    for b in bindings:
        if not isinstance(b, dict):
            raise ValueError(f"binding is not an object: {b!r}")
        for v in b:
            if v not in variables:
                variables.append(v)
    if notes is None:
        rows = tuple(tuple(from_sparql_json(b[v]) if v in b else None for v in variables) for b in bindings)
        return TableAnswer(tuple(variables), rows)
    out: list[tuple[Term | None, ...]] = []
    for b in bindings:
        options: list[list[Term | None]] = []
        for v in variables:
            if v not in b:
                options.append([None])
                continue
            c = b[v]
            if isinstance(c, dict) and c.get("type") in NONSTANDARD_BINDING_TYPES:
                terms, note = tolerant_cells(c)
                if note not in notes:
                    notes.append(note)
                options.append(list(terms) or [None])
            else:
                options.append([from_sparql_json(c)])
        rows_b: list[tuple[Term | None, ...]] = [()]
        for opts in options:
            rows_b = [r + (t,) for r in rows_b for t in opts]
        out.extend(rows_b)
    return TableAnswer(tuple(variables), tuple(out))


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def to_results_json(answer: Answer) -> dict[str, Any]:
    if isinstance(answer, BooleanAnswer):
        return {"head": {}, "boolean": answer.value}
    variables = answer.variables
    if answer.__class__ is TextColumn:  # bare strings, as to_sparql_json writes their guessed terms (none made)
        v = variables[0]
        bindings = [{v: {"type": "uri" if guessed_iri(t) else "literal", "value": t}} for t in answer.texts]
    elif len(variables) == 1:  # the common one-column table, without zip per row
        v = variables[0]
        bindings = [{v: to_sparql_json(row[0])} if row[0] is not None else {} for row in answer.rows]
    else:
        bindings = [{v: to_sparql_json(c) for v, c in zip(variables, row) if c is not None} for row in answer.rows]
    return {"head": {"vars": list(variables)}, "results": {"bindings": bindings}}


def merge(answers: Sequence[Answer]) -> Answer | None:
    """QALD files may hold several result objects per question: concatenate their rows."""
    if not answers:
        return None
    if len(answers) == 1:
        return answers[0]
    if all(isinstance(a, BooleanAnswer) for a in answers):
        return answers[0]
    variables: list[str] = []
    for a in answers:
        if isinstance(a, TableAnswer):
            variables += [v for v in a.variables if v not in variables]
    rows = []
    for a in answers:
        if isinstance(a, TableAnswer):
            idx = [a.variables.index(v) if v in a.variables else None for v in variables]
            rows += [tuple(r[i] if i is not None else None for i in idx) for r in a.rows]
    return TableAnswer(tuple(variables), tuple(rows))
