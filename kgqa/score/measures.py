"""Measures: small declarative objects in a registry (as in ir_measures).

A registered :class:`MeasureDef` has a name, documented parameters with defaults, a
definition (shown by ``kgqa measures`` and in the README), the convention it comes from,
and two functions: ``item(ctx, **params)`` gives the per-question value (or None where the
measure is undefined for that question) and ``aggregate(ctxs, values, **params)`` the corpus
value (mean of the defined per-question values unless the measure says otherwise, e.g. micro
averages and QALD's F of averaged P and R).

A :class:`Measure` is a definition bound to parameter values; its ``key`` is the name alone
when every parameter has its default, else ``Name(k=v,...)`` in a canonical order, which is
what JSON output and signatures use. :func:`parse` reads the same syntax back.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgqa.model import InputError, Item, Outcome, Prediction
from kgqa.model.registry import Registry
from kgqa.score.rules import Counts
from kgqa.model.suggest import did_you_mean


@dataclass(slots=True)
class ItemContext:
    """Everything a measure may look at for one question (built by the evaluator).

    ``gold_items``/``sys_items`` are the compared collections under the profile's term
    matching and answer view; ``counts`` their counts; ``failed`` is True when the outcome
    is a failure (error, timeout, refused, missing) that the profile scores as zero;
    ``ranked`` holds the comparison keys of the system's ranked answers, best first, and
    ``gold_values`` the gold answer's flattened value keys they are looked up in.
    ``prediction`` is the run's entry (predicted SPARQL in ``prediction.sparql``; None when the
    run lacks the question) and ``gold_outcome`` the executed gold query's outcome, if any.
    ``extra`` carries per-question data later stages attach (e.g. answer item types)."""

    id: str
    item: Item
    outcome: Outcome
    gold_items: Any
    sys_items: Any
    counts: Counts
    failed: bool
    ranked: Sequence[Any] = field(default_factory=list)
    gold_values: frozenset = frozenset()
    prediction: Prediction | None = None
    gold_outcome: Outcome | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: what several measures compute from the same question, computed once and kept for as
    #: long as the context (see :func:`kgqa.score.query_measures.question_memo`)
    memo: dict[Any, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Columns:
    """What vector measures (:attr:`MeasureDef.vector`) read of the questions they score, one
    list each, aligned: ``counts`` (``ctx.counts``), ``failed`` (``ctx.failed``), ``labels``
    (``ctx.outcome.label``) and ``equal`` (``ctx.gold_items == ctx.sys_items``). ``shared`` is a
    dict the measures scored on the same questions share (e.g. each rule's (P, R, F) computed
    once)."""

    counts: Sequence[Counts]
    failed: Sequence[bool]
    labels: Sequence[str]
    equal: Sequence[bool]
    shared: dict[Any, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.counts)


@dataclass(frozen=True)
class Inputs:
    """What a measure needs of a question, as typed fields the evaluator plans from.

    - ``answers``: a gold answer (stored, executed from the gold query, or graded qrels);
    - ``query``: the gold SPARQL query (the prediction's own query may be absent: it then
      predicted nothing);
    - ``execution``: the outcome of executing the predicted query when the run gives a query
      (a run entry with a query but no answer needs ``kg=``);
    - ``kg_types``: rdf:type classes of answer items looked up on the KG (needs ``kg=``);
    - ``ranked``: a ranked answer list; never missing (a table answer's first-occurrence
      order serves), so it documents the measure rather than gating it.

    The evaluator skips a question *for one measure* when an input that measure needs is
    missing, and lists why (``Evaluation.measure_skips``); other measures still score it."""

    answers: bool = True
    query: bool = False
    execution: bool = False
    kg_types: bool = False
    ranked: bool = False

    def __or__(self, other: "Inputs") -> "Inputs":
        return Inputs(**{k: getattr(self, k) or getattr(other, k) for k in self.__dataclass_fields__})

    @classmethod
    def union(cls, inputs: "Iterable[Inputs]") -> "Inputs":
        """What all of ``inputs`` need together (nothing for none)."""
        out = cls(answers=False)
        for i in inputs:
            out = out | i
        return out

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k for k in self.__dataclass_fields__ if getattr(self, k))


ANSWERS = Inputs()
QUERY = Inputs(answers=False, query=True)

ItemFn = Callable[..., float | None]
AggFn = Callable[..., float]


def mean_of_defined(ctxs: Sequence[ItemContext], values: Sequence[float | None], **_: Any) -> float:
    vals = [v for v in values if v is not None]
    return math.fsum(vals) / len(vals) if vals else float("nan")


@dataclass(frozen=True)
class Param:
    name: str
    default: Any
    choices: tuple[Any, ...] | None = None
    doc: str = ""

    def check(self, value: Any) -> Any:
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"parameter {self.name}={value!r}: expected one of {', '.join(map(str, self.choices))}")
        if isinstance(self.default, bool):
            if not isinstance(value, bool):
                raise ValueError(f"parameter {self.name}={value!r}: expected true or false")
        elif isinstance(self.default, int) and not isinstance(value, int):
            raise ValueError(f"parameter {self.name}={value!r}: expected an integer")
        elif isinstance(self.default, float) and not isinstance(value, (int, float)):
            raise ValueError(f"parameter {self.name}={value!r}: expected a number")
        return value


@dataclass(frozen=True)
class MeasureDef:
    name: str
    definition: str
    convention: str
    item: ItemFn | None
    aggregate: AggFn = mean_of_defined
    params: tuple[Param, ...] = ()
    binary: bool = False
    #: what the measure needs per question (:class:`Inputs`), or a function of the bound
    #: parameters returning one (e.g. AIT2KB needs KG types only with source=kg)
    inputs: Inputs | Callable[..., Inputs] = ANSWERS
    #: what ``aggregate`` reads of one question, kept in place of its whole context:
    #: ``fold(ctx, **params)``; ``aggregate`` then receives these instead of the contexts. None:
    #: the contexts themselves are kept, unless ``aggregate`` is :func:`mean_of_defined`, which
    #: reads only the values (so an evaluation keeps nothing per question but its scores)
    fold: Callable[..., Any] | None = None
    #: the values (and what ``fold`` keeps) of many questions at once, for a measure whose
    #: ``item`` and ``fold`` read nothing of a question but what :class:`Columns` holds (counts,
    #: failed flag, outcome label, whether the compared collections are equal):
    #: ``vector(columns, **params) -> (values, folds)``, equal item for item to ``item(ctx)`` and
    #: ``fold(ctx)`` (folds: None items without a fold). The evaluator then calls neither
    #: ``item`` nor ``fold`` per question.
    vector: Callable[..., tuple[list[Any], list[Any]]] | None = None
    #: with ``vector``: the questions that ``vector`` does not cover, by their item:
    #: ``gate(item)`` True -> that question is scored by ``item`` and ``fold`` on its context
    #: (e.g. NDCG on the few questions flagged RESULT_ORDER_MATTERS); ``vector`` gives the values
    #: of the others. Measures sharing a gate function share its call per question.
    gate: Callable[[Item], bool] | None = None
    #: with ``vector``: ``vectorized(**params)`` False -> these parameters have no vector form
    #: (every question is scored by ``item``/``fold``); None: every parameter value has one
    vectorized: Callable[..., bool] | None = None

    @property
    def needs(self) -> tuple[str, ...]:
        """The input names with default parameters (shown by ``kgqa measures``)."""
        return self().inputs.names

    def __call__(self, **params: Any) -> "Measure":
        return Measure(self, self._bind(params))

    def _bind(self, params: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
        known = {p.name: p for p in self.params}
        for k in params:
            if k not in known:
                names = ", ".join(known) or "none"
                raise ValueError(f"measure {self.name} has no parameter {k!r} (parameters: {names})")
        return tuple((p.name, p.check(params.get(p.name, p.default))) for p in self.params)


@dataclass(frozen=True)
class Measure:
    defn: MeasureDef
    params: tuple[tuple[str, Any], ...]

    @property
    def name(self) -> str:
        return self.defn.name

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def key(self) -> str:
        """``Name`` when all parameters are defaults, else ``Name(k=v,...)``: the JSON key."""
        changed = [(k, v) for (k, v), p in zip(self.params, self.defn.params) if v != p.default]
        if not changed:
            return self.defn.name
        return f"{self.defn.name}(" + ",".join(f"{k}={_fmt(v)}" for k, v in changed) + ")"

    @property
    def full(self) -> str:
        """Name with every parameter, for signatures."""
        if not self.params:
            return self.defn.name
        return f"{self.defn.name}(" + ",".join(f"{k}={_fmt(v)}" for k, v in self.params) + ")"

    @property
    def inputs(self) -> Inputs:
        """What this measure (with these parameters) needs of a question."""
        i = self.defn.inputs
        return i if isinstance(i, Inputs) else i(**self.kwargs)

    def item_value(self, ctx: ItemContext) -> float | None:
        if self.defn.item is None:
            return None
        return self.defn.item(ctx, **self.kwargs)

    @property
    def vector(self) -> Callable[..., tuple[list[Any], list[Any]]] | None:
        """The definition's vector form when it applies to these parameters (else None)."""
        d = self.defn
        if d.vector is None or (d.vectorized is not None and not d.vectorized(**self.kwargs)):
            return None
        return d.vector

    @property
    def folder(self) -> Callable[..., Any] | None:
        """``fold(ctx, **params)`` keeping what :meth:`aggregate` reads of a question (the
        definition's fold, else the whole context), or None when it reads the values only."""
        d = self.defn
        if d.fold is not None:
            return d.fold
        return None if d.aggregate is mean_of_defined else _whole_context

    def aggregate(self, ctxs: Sequence[Any], values: Sequence[float | None]) -> float:
        """The corpus value from the per-question values and what :attr:`folder` kept of each
        question (``ctxs``: the contexts themselves for a measure without a fold)."""
        return self.defn.aggregate(ctxs, values, **self.kwargs)

    def __str__(self) -> str:
        return self.key


def _whole_context(ctx: ItemContext, **_: Any) -> ItemContext:
    return ctx


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


#: Modules that register measures (each registers its own).
MEASURE_MODULES: list[str] = [
    "kgqa.score.answer_measures",
    "kgqa.score.query_measures",
    "kgqa.score.gerbil_subexperiments",
    "kgqa.score.webqsp",
    "kgqa.score.cwq",
    "kgqa.score.mintaka",
    "kgqa.score.qald",
]

#: Every registered measure definition by name (loads MEASURE_MODULES on first use).
REGISTRY: Registry[MeasureDef] = Registry("measure", modules=MEASURE_MODULES, case_insensitive=True)


def nothing_scored(script: str, why: str) -> InputError:
    """The error an official script's measure raises when no question of the dataset can be
    scored (a table of zeros or NaN would hide a set-up mistake): name the script and why."""
    return InputError("dataset", f"{script} scores no question of this dataset: {why}; check that the dataset "
                                 "and the run are the files the script reads (and the profile is the right one)")


def register(defn: MeasureDef) -> MeasureDef:
    return REGISTRY.register(defn.name, defn)


def all_measures() -> list[MeasureDef]:
    return sorted(REGISTRY.values(), key=lambda d: (d.convention, d.name))


def split_list(text: str) -> list[str]:
    """Split a comma-separated measure list, ignoring commas inside parentheses."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return [m for m in out if m]


def _value(text: str) -> Any:
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    try:
        return ast.literal_eval(t)
    except (ValueError, SyntaxError):
        return t


def parse(spec: str, extra_names: Sequence[str] = ()) -> Measure:
    """``"F1"``, ``"F1(rule=gerbil,agg=micro)"``, ``"Hits(k=5)"`` -> a bound :class:`Measure`.
    Raises ValueError with the known names / parameters on a bad spec."""
    s = spec.strip()
    name, params = s, {}
    if "(" in s:
        if not s.endswith(")"):
            raise ValueError(f"measure {spec!r}: expected Name(param=value,...)")
        name, inner = s[: s.index("(")].strip(), s[s.index("(") + 1 : -1]
        for part in split_list(inner):
            if "=" not in part:
                raise ValueError(f"measure {spec!r}: parameter {part!r} is not of the form name=value")
            k, v = part.split("=", 1)
            params[k.strip()] = _value(v)
    defn = REGISTRY.find(name)
    if defn is None:
        known = REGISTRY.names()
        raise ValueError(f"unknown measure {name!r}{did_you_mean(name, [*known, *extra_names])}; "
                         f"known: {', '.join(known)}")
    return defn(**params)


def parse_list(text: str | Sequence[str]) -> list[Measure]:
    specs = split_list(text) if isinstance(text, str) else [s for t in text for s in split_list(t)]
    return [parse(s) for s in specs]
