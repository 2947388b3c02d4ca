"""Score a run against a dataset under a profile.

Inputs come from the earlier stages: the dataset (load), the run (load) and, when queries
were executed, the outcomes of predicted and gold queries (execute). Output is an
:class:`Evaluation`: aggregate scores by the profile's labels, per-question scores and
outcomes, what was skipped and why, and a signature naming everything that changed the
numbers.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kgqa.model import Answer, BooleanAnswer, Dataset, Item, Outcome, Prediction, Run, Status, TableAnswer
from kgqa.model.answer import TextColumn, answer_items, from_results_json, to_results_json
from kgqa.model.terms import TermMatching
from kgqa.model.gcpause import during
from kgqa.model.signature import Signature
from kgqa.score.measures import Columns, Inputs, ItemContext
from kgqa.score import qrels
from kgqa.score.profiles import MeasureSpec, Profile
from kgqa.score.rules import Counts


#: why a question is skipped (``Evaluation.skipped``): no gold answer; not in the run under the
#: profile rule missing=skip (the lean path, :mod:`kgqa.score.lean`, says the same)
NO_GOLD = "no gold answer (execute the gold queries with --kg)"
SKIPPED_MISSING = "not in the run (profile rule missing=skip)"

@dataclass
class QuestionRecord:
    """What reports and analyses read of one scored question besides its scores, typed: the
    question text, gold and predicted SPARQL, gold and predicted answers (typed answers, not
    results JSON), the dataset's answer type, groups and scalar metadata, and elapsed seconds.
    Its JSON form is the ``details`` object of saved evaluations."""

    question: str | None = None
    gold_sparql: str | None = None
    predicted_sparql: str | None = None
    gold_answer: Answer | None = None
    predicted_answer: Answer | None = None
    answer_type: str | None = None
    groups: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    elapsed: float | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "question": self.question,
            "gold_sparql": self.gold_sparql,
            "predicted_sparql": self.predicted_sparql,
            "gold_answer": to_results_json(self.gold_answer) if self.gold_answer is not None else None,
            "predicted_answer": to_results_json(self.predicted_answer) if self.predicted_answer is not None else None,
        }
        if self.answer_type:
            d["answer_type"] = self.answer_type
        if self.groups:
            d["groups"] = dict(self.groups)
        if self.metadata:
            d["metadata"] = dict(self.metadata)
        if self.elapsed is not None:
            d["elapsed"] = self.elapsed
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> "QuestionRecord":
        """The record of a ``details`` object (answers that do not parse are left out)."""
        d = d or {}

        def answer(doc: Any) -> Answer | None:
            try:
                return from_results_json(doc) if doc is not None else None
            except ValueError:
                return None

        return cls(d.get("question"), d.get("gold_sparql"), d.get("predicted_sparql"), answer(d.get("gold_answer")),
                   answer(d.get("predicted_answer")), d.get("answer_type"), dict(d.get("groups") or {}),
                   dict(d.get("metadata") or {}), d.get("elapsed"))


@dataclass
class QuestionScore:
    """One scored question: ``scores`` by measure label (a measure that could not or did not
    score it is absent), the outcome label and message, answer ``counts``, and ``record``
    (:class:`QuestionRecord`, typed). ``details`` is the record's JSON form, rendered on first
    use (or the ``details`` object given, e.g. read from a saved evaluation)."""

    id: str
    outcome: str
    scores: dict[str, float | None]
    message: str = ""
    counts: Counts | None = None
    details: dict[str, Any] = None  # type: ignore[assignment]  # a property, see below
    record: QuestionRecord | None = None

    #: (item, prediction, outcome, gold outcome) the record is built from on first use
    _source = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "outcome": self.outcome, "scores": self.scores}
        if self.message:
            out["message"] = self.message
        if self.counts is not None:
            c = self.counts
            out["counts"] = {"tp": c.tp, "fp": c.fp, "fn": c.fn, "sys": c.sys_size, "gold": c.gold_size}
        if self.details:
            out["details"] = self.details
            if "engine_dependent" in self.details:  # issue 12: the reason, at the top level too
                out["engine_dependent"] = self.details["engine_dependent"]
        return out

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "QuestionScore":
        c = doc.get("counts")
        counts = None
        if c:
            sys_size, gold_size = c.get("sys", c["tp"] + c["fp"]), c.get("gold", c["tp"] + c["fn"])
            counts = Counts(c["tp"], c["fp"], c["fn"], sys_size, gold_size, c["tp"], c["tp"])
        return cls(str(doc["id"]), doc["outcome"], dict(doc.get("scores", {})), doc.get("message", ""), counts,
                   dict(doc.get("details", {})))


def _get_details(self: QuestionScore) -> dict[str, Any]:
    if self._details is None:
        self._details = self.record.to_json()
    return self._details


def _set_details(self: QuestionScore, value: dict[str, Any] | None) -> None:
    self._details = None if value is None or isinstance(value, property) else dict(value)


def _get_record(self: QuestionScore) -> QuestionRecord:
    """Built on first use: from the question's source objects when scored here, else from the
    ``details`` object given (e.g. read from a saved evaluation)."""
    if self._record is None:
        if self._source is not None:
            self._record, self._source = _record(*self._source), None
        else:
            self._record = QuestionRecord.from_json(self._details)
    return self._record


def _set_record(self: QuestionScore, value: QuestionRecord | None) -> None:
    self._record = None if isinstance(value, property) else value


QuestionScore.details = property(_get_details, _set_details)  # type: ignore[assignment]
QuestionScore.record = property(_get_record, _set_record)  # type: ignore[assignment]
QuestionScore._details = None
QuestionScore._record = None


def _run_side(source: Any) -> tuple[Prediction | None, Answer | None, float | None]:
    """(prediction, predicted answer, elapsed) of a question's source (see :class:`QuestionList`):
    what its record's run side holds, without making the record."""
    if source.__class__ is tuple:
        outcome = source[2]
        return source[1], outcome.answer, outcome.elapsed
    if source.status is Status.OK and source.answer is not None:  # Prediction.outcome()'s answer
        return source, source.answer, source.elapsed
    outcome = source.outcome()
    return source, outcome.answer, outcome.elapsed


def _same_value(a: Any, b: Any) -> bool:
    return a is b or (a is not None and b is not None and type(a) is type(b) and a == b)


class QuestionList(Sequence):
    """Per-question results of an evaluation held as columns (ids, outcome labels, messages,
    counts, one float array per measure), not as one object per question: 100,000 questions
    then take tens of megabytes instead of hundreds. Indexing or iterating gives
    :class:`QuestionScore` objects, each made on first access and kept (so changes made to one,
    e.g. by the engine-dependence check, stay)."""

    __slots__ = ("ids", "labels", "messages", "counts", "_columns", "_sources", "_made")

    def __init__(self, ids: list[str], labels: list[str], messages: list[str], counts: list[Counts | None],
                 columns: dict[str, Any], sources: list[tuple]):
        self.ids, self.labels, self.messages, self.counts = ids, labels, messages, counts
        #: label -> (values, present): values an array('d') (a list where a value is no float)
        self._columns = columns
        self._sources = sources
        self._made: list[QuestionScore | None] = [None] * len(ids)

    def __len__(self) -> int:
        return len(self.ids)

    def _make(self, i: int) -> QuestionScore:
        q = self._made[i]
        if q is None:
            scores = {label: vals[i] for label, (vals, present) in self._columns.items() if present[i]}
            q = QuestionScore(self.ids[i], self.labels[i], scores, self.messages[i], self.counts[i])
            source = self._sources[i]
            # a streamed question's stored answer: its prediction alone (see evaluate)
            q._source = source if source.__class__ is tuple else (None, source, source.outcome(), None)
            self._made[i] = q
        return q

    def column(self, label: str) -> tuple[Sequence[Any], Sequence[Any]] | None:
        """``label``'s scores by position as ``(values, present)`` (``values[i]`` counts only where
        ``present[i]``), read without making question objects; None when a question already made
        holds another value than its column (changed after scoring): read the objects then."""
        col = self._columns.get(label)
        for i, q in enumerate(self._made):
            if q is not None and not _same_value(q.scores.get(label), col[0][i] if col is not None and col[1][i] else None):
                return None
        return col if col is not None else ((), bytes(len(self.ids)))

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._make(k) for k in range(*i.indices(len(self.ids)))]
        if i < 0:
            i += len(self.ids)
        if not 0 <= i < len(self.ids):
            raise IndexError("question index out of range")
        return self._make(i)

    def __iter__(self) -> Iterator[QuestionScore]:
        return (self._make(i) for i in range(len(self.ids)))

    def json_at(self, i: int) -> dict[str, Any]:
        """``self[i].to_json()``, made without the question's objects where it was not made and
        it is a streamed question (its record: the run's side alone), and without keeping any."""
        q = self._made[i]
        source = self._sources[i]
        if q is not None or (source.__class__ is tuple and source[0] is not None):
            return (q or self._make_unkept(i)).to_json()
        pred, answer, elapsed = _run_side(source)
        # the two objects whose to_json define the layout, made here and not kept (the record:
        # the run's side alone, as a streamed question's record is)
        record = QuestionRecord(predicted_sparql=pred.sparql if pred is not None else None,
                                predicted_answer=answer, elapsed=elapsed)
        scores = {label: vals[i] for label, (vals, present) in self._columns.items() if present[i]}
        return QuestionScore(self.ids[i], self.labels[i], scores, self.messages[i], self.counts[i],
                             record=record).to_json()

    def predicted_answer(self, i: int) -> Answer | None:
        """``self[i].record.predicted_answer``, read from the question's source without making
        (or keeping) its objects where it was not made."""
        q = self._made[i]
        return q.record.predicted_answer if q is not None else _run_side(self._sources[i])[1]

    def _make_unkept(self, i: int) -> QuestionScore:
        q = self._make(i)
        self._made[i] = None
        return q

    def passing(self) -> Iterator[QuestionScore]:
        """Every question in order, without keeping the ones not made before (for writing them
        out once: a million questions then never stand as objects at the same time)."""
        for i in range(len(self.ids)):
            q = self._made[i]
            if q is None:
                q = self._make(i)
                self._made[i] = None
            yield q

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(other) == len(self) and all(a == b for a, b in zip(self, other))

    def __repr__(self) -> str:
        return f"QuestionList({len(self)} questions)"


_FLOAT, _NONE = {float}, {type(None)}


def _column(n: int, idx: list[int], values: list[float | None]) -> tuple[Any, bytearray]:
    """One measure's values for questions ``idx`` (of ``n``) as (array or list, present flags)."""
    kinds = set(map(type, values))
    if kinds == _FLOAT and len(idx) == n:  # every question has a float: the array is the values
        return array("d", values), bytearray(b"\x01") * n
    if kinds <= _NONE:  # no question has a value
        return array("d", bytes(8 * n)), bytearray(n)
    present = bytearray(n)
    if all(v is None or v.__class__ is float for v in values):
        vals: Any = array("d", bytes(8 * n))
    else:  # ints, bools, ...: kept as they are, so that output stays the same
        vals = [None] * n
    for k, v in zip(idx, values):
        if v is not None:
            vals[k] = v
            present[k] = 1
    return vals, present


@dataclass
class Evaluation:
    """One run scored on one dataset under one profile.

    ``aggregate``: measure label -> corpus value; ``questions``: per-question scores;
    ``skipped``: questions no measure could score (id, reason); ``measure_skips``: measure label
    -> reason -> ids of the questions that one measure could not score; ``signature``: a
    :class:`~kgqa.model.signature.Signature` naming everything that changed the numbers."""

    signature: Signature
    profile: str
    dataset: str
    run: str
    measures: list[MeasureSpec]
    aggregate: dict[str, float]
    questions: list[QuestionScore]
    skipped: list[dict[str, str]]
    outcomes: dict[str, int]
    unknown_ids: list[str] = field(default_factory=list)
    missing_ids: list[str] = field(default_factory=list)
    execution: dict[str, int] | None = None
    problems: list[str] = field(default_factory=list)
    measure_skips: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    #: set by kgqa.analyze.engine_dependence.annotate: counts and aggregate ranges
    engine_dependence: dict[str, Any] | None = None
    #: scored from a streamed dataset: per-question records hold the run's side only, so what
    #: reads the items (breakdowns, the error taxonomy) refuses it (see :func:`require_items`)
    streamed: bool = False
    #: what :func:`kgqa.score.setup_check.check_setup` found wrong with the set-up (ids that do
    #: not match, n = 0, queries without a KG, a failing endpoint, a score file given as a run)
    setup_warnings: tuple = field(default=(), compare=False)
    #: what kgqa decided by itself that the user should know (not a warning: e.g. that a large
    #: dataset was streamed)
    notes: tuple = field(default=(), compare=False)

    #: The notebook views (``dataframe``, ``markdown``, ``html``: functions of an evaluation),
    #: registered by :mod:`kgqa.api`: they render with the report stage, which scoring never imports.
    views: ClassVar[dict[str, Callable[..., Any]]] = {}

    def __post_init__(self) -> None:
        if not isinstance(self.signature, Signature):
            self.signature = Signature.parse(self.signature)

    def _view(self, name: str) -> Callable[..., Any]:
        if name not in self.views:
            raise RuntimeError(f"Evaluation.to_{name} renders with kgqa's report stage: import kgqa (or kgqa.api) first")
        return self.views[name]

    def to_dataframe(self, *, characteristics: bool = True):
        """One row per question (see :func:`kgqa.report.dataframe.to_dataframe`)."""
        return self._view("dataframe")(self, characteristics=characteristics)

    def to_markdown(self) -> str:
        """The scores as a Markdown table (see :func:`kgqa.report.evaluation.to_markdown`)."""
        return self._view("markdown")(self)

    def _repr_html_(self) -> str:
        return self._view("html")(self)

    def to_json(self) -> dict[str, Any]:
        out = self.to_json_head()
        out["questions"] = [q.to_json() for q in self.questions]
        return out

    def to_json_head(self) -> dict[str, Any]:
        """:meth:`to_json` with ``questions`` still None (in its place: written apart, a batch at
        a time, by :func:`kgqa.report.evaluation.to_json_chunks`)."""
        out: dict[str, Any] = {
            "signature": self.signature,
            "profile": self.profile,
            "dataset": self.dataset,
            "run": self.run,
            "aggregate": {k: _json_float(v) for k, v in self.aggregate.items()},
            "questions": None,
            "skipped": self.skipped,
            "outcomes": self.outcomes,
            "missing_ids": self.missing_ids,
            "unknown_ids": self.unknown_ids,
            "measures": {s.label: s.measure.full for s in self.measures},
        }
        over = {s.label: s.over for s in self.measures if s.over != "all"}
        if over:
            out["measures_over"] = over
        if self.execution is not None:
            out["execution"] = self.execution
        if self.problems:
            out["problems"] = self.problems
        if self.measure_skips:
            out["measure_skips"] = self.measure_skips
        if self.engine_dependence is not None:
            out["engine_dependence"] = self.engine_dependence
        if self.streamed:
            out["streamed"] = True
        return out

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "Evaluation":
        """Rebuild a saved evaluation (``--save``) for re-reporting without re-running."""
        from kgqa.score.measures import parse

        over = doc.get("measures_over", {})
        specs = [MeasureSpec(label, parse(full), over.get(label, "all")) for label, full in doc.get("measures", {}).items()]
        return cls(
            signature=doc["signature"], profile=doc["profile"], dataset=doc.get("dataset", ""),
            run=doc.get("run", ""), measures=specs,
            aggregate={k: (float("nan") if v is None else v) for k, v in doc["aggregate"].items()},
            questions=[QuestionScore.from_json(q) for q in doc["questions"]],
            skipped=list(doc.get("skipped", [])), outcomes=dict(doc.get("outcomes", {})),
            unknown_ids=list(doc.get("unknown_ids", [])), missing_ids=list(doc.get("missing_ids", [])),
            execution=doc.get("execution"), problems=list(doc.get("problems", [])),
            measure_skips={k: dict(v) for k, v in doc.get("measure_skips", {}).items()},
            engine_dependence=doc.get("engine_dependence"), streamed=bool(doc.get("streamed", False)),
        )


def require_items(evals: Sequence[Evaluation], what: str) -> None:
    """ValueError when one of ``evals`` was scored from a streamed dataset: ``what`` reads the
    questions' items (answer type, groups, metadata, gold query and answer), which it did not keep."""
    streamed = [e.run for e in evals if getattr(e, "streamed", False)]
    if streamed:
        raise ValueError(f"{what} reads each question's dataset item (answer type, groups, metadata, gold query and "
                         f"answer), which a streamed evaluation does not keep ({', '.join(streamed)}): evaluate "
                         "it without --stream")


def _json_float(v: float) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


# --------------------------------------------------------------------------- comparison


def _collect(answer: Answer | None, matching: TermMatching, view: str, qrels_side: str | None = None) -> Any:
    if answer.__class__ is TextColumn and view != "list":  # bare strings: keys without terms
        keys = matching.text_keys(answer.texts)
        return frozenset(keys) if view == "values" else frozenset(zip(keys))
    if answer.__class__ is TableAnswer and len(answer.variables) == 1 and view != "list":  # the common case
        keys = matching.column_keys(answer.rows)
        return frozenset(keys) if view == "values" else frozenset(zip(keys))
    if qrels_side is not None and isinstance(answer, BooleanAnswer):
        return qrels.boolean_bag(answer, qrels_side)  # Text2SPARQL client's ASK quirk
    if view == "list":
        if answer is None:
            return []
        if isinstance(answer, BooleanAnswer):
            return list(answer_items(answer, matching, "values"))
        return matching.keys([c for row in answer.rows for c in row if c is not None])
    if view == "tuples" and isinstance(answer, TableAnswer):
        if len(answer.variables) == 1:  # one cell a row: the row is (key,), unbound rows left out
            return frozenset(zip(matching.keys([row[0] for row in answer.rows if row[0] is not None])))
        # a row as the sorted multiset of its cells: neither column order nor names matter
        return frozenset(
            tuple(sorted((matching.key(c) for c in row), key=repr))
            for row in answer.rows
            if any(c is not None for c in row)
        )
    return answer_items(answer, matching, "values")


def _side(profile: Profile, side: str) -> str | None:
    return side if profile.qrels else None


def _counts(gold: Any, system: Any) -> Counts:
    if isinstance(gold, list):
        return Counts.from_lists(gold, system if isinstance(system, list) else list(system))
    return Counts.from_sets(gold, system)


def _ranked(pred: Prediction | None, outcome: Outcome, matching: TermMatching) -> list[Hashable]:
    if pred is not None and pred.ranked:
        return [matching.key(t) for t in pred.ranked]
    a = outcome.answer
    if isinstance(a, TableAnswer):
        seen: dict[Hashable, None] = {}  # insertion-ordered set: first occurrence ranks
        for row in a.rows:
            for c in row:
                if c is not None:
                    seen.setdefault(matching.key(c), None)
        return list(seen)
    if isinstance(a, BooleanAnswer):
        return list(answer_items(a, matching, "values"))
    return []


class _Ranked(Sequence):
    """The ranked answer keys of one question, computed on first use (few measures rank)."""

    __slots__ = ("_args", "_keys")

    def __init__(self, pred: Prediction | None, outcome: Outcome, matching: TermMatching):
        self._args: tuple | None = (pred, outcome, matching)
        self._keys: list[Hashable] = []

    def _get(self) -> list[Hashable]:
        if self._args is not None:
            self._keys, self._args = _ranked(*self._args), None
        return self._keys

    def __getitem__(self, i: Any) -> Any:
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._get())

    def __eq__(self, other: object) -> bool:
        return list(self._get()) == (list(other) if isinstance(other, Sequence) else other)

    def __repr__(self) -> str:
        return repr(self._get())


def _record(item: Item | None, pred: Prediction | None, outcome: Outcome, gold_outcome: Outcome | None) -> QuestionRecord:
    """What reports show of a question beyond its scores (full texts; reports truncate). A
    question of a streamed dataset (``item`` None) keeps only its predicted side."""
    if item is None:
        return QuestionRecord(predicted_sparql=pred.sparql if pred is not None else None,
                              predicted_answer=outcome.answer, elapsed=outcome.elapsed)
    return QuestionRecord(
        question=item.question("en"),
        gold_sparql=item.sparql,
        predicted_sparql=pred.sparql if pred is not None else None,
        gold_answer=gold_outcome.answer if gold_outcome is not None else item.answer,
        predicted_answer=outcome.answer,
        answer_type=item.answer_type or None,
        groups=dict(item.groups),
        metadata={k: v for k, v in item.metadata.items() if isinstance(v, (str, int, float, bool))},
        elapsed=outcome.elapsed,
    )


# --------------------------------------------------------------------------- evaluation


def _gold_side(item: Item, gold: Mapping[str, Outcome], profile: Profile) -> tuple[Answer | None, frozenset | None, str]:
    """The gold answer, graded gold, and why neither is there ("" when one is)."""
    if item.id in gold:
        g = gold[item.id]
        if g.status is not Status.OK:
            return None, None, f"gold query {g.status.value}: {g.message}".strip()
        gold_answer = g.answer
    else:
        gold_answer = item.answer
    qrels_gold = item.graded_gold() if profile.qrels and item.id not in gold else None
    if gold_answer is None and qrels_gold is None:
        return None, None, NO_GOLD
    return gold_answer, qrels_gold, ""


def compared_items(answer: Answer | None, profile: Profile) -> Any:
    """A system answer as the evaluator compares it under ``profile`` (its view and matching)."""
    return _collect(answer, profile.matching, profile.view, _side(profile, "system"))


def gold_items(item: Item, gold: Mapping[str, Outcome], profile: Profile) -> Any:
    """The gold collection the evaluator compares with (graded qrels, the executed gold answer
    in ``gold``, or the stored one); None when there is none."""
    gold_answer, qrels_gold, _why = _gold_side(item, gold, profile)
    if qrels_gold is not None:
        return qrels_gold
    return None if gold_answer is None else _collect(gold_answer, profile.matching, profile.view, _side(profile, "gold"))


def _missing_input(inputs: Inputs, item: Item, pred: Prediction | None, outcome: Outcome, gold_reason: str,
                   extra: Mapping[str, Any]) -> str:
    """Why a measure with ``inputs`` cannot score this question ("" when it can)."""
    if inputs.answers and gold_reason:
        return gold_reason
    if inputs.query and not (item.sparql and item.sparql.strip()):
        return "no gold query"
    if inputs.kg_types and "answer_types" not in extra:
        return "answer item types not looked up on a KG (execute with --kg)"
    if (inputs.execution and pred is not None and pred.status is Status.OK and outcome.status is Status.MISSING
            and pred.sparql is not None and pred.sparql.strip()):
        return "predicted query not executed (execute it with --kg)"
    return ""


@during
def evaluate(
    dataset: Dataset,
    run: Run,
    profile: Profile,
    *,
    predicted: Mapping[str, Outcome] | None = None,
    gold: Mapping[str, Outcome] | None = None,
    signature_extra: Mapping[str, Any] | None = None,
    execution: dict[str, int] | None = None,
    extras: Mapping[str, dict[str, Any]] | None = None,
) -> Evaluation:
    """Score ``run`` on ``dataset`` (already expanded to scoring units, see
    :meth:`Dataset.by_language`; :func:`kgqa.evaluate` does that for you).

    ``predicted`` holds outcomes of executed predicted queries (they take precedence over the
    run's stored answers for those ids); ``gold`` holds outcomes of executed gold queries (they
    replace stored gold answers for those ids). ``extras`` (question id -> dict) reaches
    measures as ``ctx.extra`` (e.g. ``answer_types`` looked up on the KG for AIT2KB).

    Each measure declares the inputs it needs (:class:`~kgqa.score.measures.Inputs`). A question
    is skipped *for one measure* when an input of that measure is missing (no gold answer, no
    gold query, answer types not looked up, predicted query not executed); the reasons are in
    ``measure_skips`` and the measure's mean is over the other questions. A question no measure
    can score is skipped entirely (``skipped``, with the reason). Run ids the dataset lacks are
    listed in ``unknown_ids``; dataset questions the run lacks get the profile's ``missing``
    rule and are listed in ``missing_ids``. ``signature_extra`` (a mapping or a
    :class:`~kgqa.model.signature.Signature`) adds the caller's parts (selection, engine,
    policy) to the signature after the profile's.
    """
    if not (predicted or gold or extras or isinstance(dataset, Dataset)):  # streamed, answers as stored
        from kgqa.score.lean import score_flat

        lean = score_flat(dataset, run, profile, signature_extra)
        if lean is not None:
            return lean
    predicted = predicted or {}
    gold = gold or {}
    extras = extras or {}
    m = profile.matching
    view = profile.view
    specs = list(profile.measures)
    measures = [s.measure for s in specs]
    # measures needing the same inputs share one check per question
    distinct = list(dict.fromkeys(mm.inputs for mm in measures))
    slot = [distinct.index(mm.inputs) for mm in measures]
    answers_only = all(i == Inputs() for i in distinct)
    processed_only = [s.over == "processed" for s in specs]
    # per measure: its item function, what keeps its aggregate's input (None: nothing is kept,
    # see Measure.fold) and its parameters, looked up once; a measure with a vector form
    # (MeasureDef.vector: counts only) is computed for all its questions at the end instead
    calls = [(mm.defn.item, mm.folder, mm.kwargs) for mm in measures]
    vectors = [mm.vector for mm in measures]
    per_question = [j for j, v in enumerate(vectors) if v is None]
    # vector measures scoring some questions one by one: (j, gate, params); what those gave
    gates: dict[Any, list[int]] = {}  # gate function -> the measures it lets through (one call each)
    for j, mm in enumerate(measures):
        if vectors[j] and mm.defn.gate:
            gates.setdefault(mm.defn.gate, []).append(j)
    exceptions: dict[int, dict[int, tuple[Any, Any]]] = {j: {} for js in gates.values() for j in js}
    gate_list = list(gates.items())
    gold_side, sys_side = _side(profile, "gold"), _side(profile, "system")
    zero_failures, zero_missing = profile.failures == "zero", profile.missing == "zero"
    by_qrels = profile.qrels
    streamed = not isinstance(dataset, Dataset)
    # per question kept: id, outcome label, message, counts, failed flag, the record's sources;
    # per measure: the positions it scored, their values and what its aggregate reads (fold)
    ids: list[str] = []
    outcome_labels: list[str] = []
    messages: list[str] = []
    counts: list[Counts] = []
    failed_flags: list[bool] = []
    equal: list[bool] = []
    sources: list[tuple] = []
    positions: list[list[int]] = [[] for _ in specs]
    values: list[list[float | None]] = [[] for _ in specs]
    folds: list[list[Any]] = [[] for _ in specs]
    measure_skips: dict[str, dict[str, list[str]]] = {}
    skipped: list[dict[str, str]] = []
    missing_ids: list[str] = []
    outcome_counter: Counter[str] = Counter()
    no_extra: Mapping[str, Any] = {}
    seen: set[str] | None = set() if streamed else None
    no_reasons = [""] * len(specs)
    gated = any(processed_only)
    dense = True  # every measure has scored every question so far (positions not yet listed)
    run_get = run._by_id.get if type(run) is Run else run.get
    column_keys, text_keys = m.column_keys, m.text_keys
    lexical = m.mode == "lexical" and m.links is None and m.labels is None  # text_keys(texts) is texts
    ok = Status.OK
    set_view = view != "list"
    for item in (dataset if streamed else dataset.items):
        iid = item.id
        if seen is not None:
            seen.add(iid)
        # ---- gold side
        if gold or (by_qrels and item.qrels):
            gold_answer, qrels_gold, gold_reason = _gold_side(item, gold, profile)
        else:  # _gold_side's common case: the stored answer, no graded gold
            gold_answer, qrels_gold = item.answer, None
            gold_reason = "" if gold_answer is not None else NO_GOLD
        # ---- system side
        pred = run_get(iid)
        executed = iid in predicted if predicted else False
        if executed:
            outcome = predicted[iid]
        elif pred is None:
            outcome = Outcome.missing()
        elif pred.status is ok and pred.answer is not None:
            outcome = None  # the stored answer: pred.outcome(), made only where it is read
        else:
            outcome = pred.outcome()
        extra = (dict(extras[iid]) if iid in extras else {}) if (per_question or not answers_only) else no_extra
        # ---- which measures can score it
        if answers_only:
            reasons = [gold_reason] * len(specs) if gold_reason else no_reasons
        else:
            outcome = outcome or pred.outcome()
            per_input = [_missing_input(i, item, pred, outcome, gold_reason, extra or no_extra) for i in distinct]
            reasons = [per_input[j] for j in slot]
        if reasons is not no_reasons and ((not specs and gold_reason) or (specs and all(reasons))):
            skipped.append({"id": iid, "reason": gold_reason or next(r for r in reasons if r)})
            continue
        if pred is None and not executed:
            missing_ids.append(iid)
            if profile.missing == "skip":
                skipped.append({"id": iid, "reason": SKIPPED_MISSING})
                outcome_counter["missing"] += 1
                continue
        if reasons is not no_reasons and any(reasons):
            for spec, r in zip(specs, reasons):
                if r:
                    measure_skips.setdefault(spec.label, {}).setdefault(r, []).append(iid)
        if outcome is None:
            failed = zero = False
            sys_answer = pred.answer
        else:
            status = outcome.status
            failed = status is not ok
            zero = failed and (zero_failures if status is not Status.MISSING else zero_missing)
            sys_answer = outcome.answer if not failed else None
        if qrels_gold is not None:
            gold_items = qrels_gold
        elif gold_answer.__class__ is TextColumn and set_view:  # bare strings: no term is made
            keys = gold_answer.texts if lexical else text_keys(gold_answer.texts)
            gold_items = frozenset(keys) if view == "values" else frozenset(zip(keys))
        elif gold_answer.__class__ is TableAnswer and len(gold_answer.variables) == 1 and set_view:
            keys = column_keys(gold_answer.rows)  # _collect's common case, inline
            gold_items = frozenset(keys) if view == "values" else frozenset(zip(keys))
        else:
            gold_items = _collect(gold_answer, m, view, gold_side)
        bag = pred.bag if (by_qrels and pred is not None and not executed) else None
        if isinstance(bag, dict) and not failed:
            sys_items: Any = frozenset(bag)
            label = (outcome or pred.outcome()).label
        elif sys_answer.__class__ is TextColumn and set_view:
            keys = sys_answer.texts if lexical else text_keys(sys_answer.texts)
            sys_items = frozenset(keys) if view == "values" else frozenset(zip(keys))
            label = "ok" if keys else "empty"
        elif sys_answer.__class__ is TableAnswer and len(sys_answer.variables) == 1 and set_view:
            keys = column_keys(sys_answer.rows)  # _collect's common case, inline
            sys_items = frozenset(keys) if view == "values" else frozenset(zip(keys))
            label = "ok" if keys else "empty"  # outcome.label of an OK outcome: is a cell bound?
        else:
            sys_items = _collect(sys_answer, m, view, sys_side)
            label = (outcome or pred.outcome()).label
        outcome_counter[label] += 1
        if gold_items.__class__ is frozenset and sys_items.__class__ is frozenset:  # _counts' common case
            c = Counts.from_sets(gold_items, sys_items)
        else:
            c = _counts(gold_items, sys_items)
        k = len(ids)
        if not (reasons is no_reasons and not gated):  # some measure does not score it
            if dense:  # until now every measure scored every question
                scored = list(range(k))
                positions = [scored.copy() for _ in specs]  # the int objects shared
                dense = False
            for j in range(len(specs)):
                if not (reasons[j] or (processed_only[j] and label != "ok")):
                    positions[j].append(k)
        gold_outcome = gold.get(iid) if gold else None
        gated_here = None
        for gate, js in gate_list:  # no comprehension (a frame per question) for the common no
            if gate(item):
                gated_here = (gated_here or []) + [j for j in js if dense or (positions[j] and positions[j][-1] == k)]
        if per_question or gated_here:
            outcome = outcome or pred.outcome()
            if qrels_gold is not None:
                gold_values = qrels_gold
            elif view == "values" and (gold_side is None or not isinstance(gold_answer, BooleanAnswer)):
                gold_values = gold_items  # the same set: answer_items(gold_answer, m, "values")
            else:
                gold_values = answer_items(gold_answer, m, "values")
            ctx = ItemContext(iid, item, outcome, gold_items, sys_items, c, zero,
                              _Ranked(pred, outcome, m) if not failed else [], gold_values, pred, gold_outcome, extra)
            # ---- every measure without a vector form, in one pass; the context is dropped afterwards
            for j in per_question:
                if dense or (positions[j] and positions[j][-1] == k):
                    item_fn, fold_fn, kw = calls[j]
                    values[j].append(item_fn(ctx, **kw) if item_fn is not None else None)
                    if fold_fn is not None:
                        folds[j].append(fold_fn(ctx, **kw))
            for j in gated_here or ():
                item_fn, fold_fn, kw = calls[j]
                exceptions[j][k] = (item_fn(ctx, **kw) if item_fn is not None else None,
                                    fold_fn(ctx, **kw) if fold_fn is not None else None)
        ids.append(iid)
        outcome_labels.append(label)
        messages.append(outcome.message if outcome is not None else "")
        counts.append(c)
        failed_flags.append(zero)
        equal.append(gold_items == sys_items)
        # a streamed dataset's items are not kept (their records then hold the outcome only); a
        # stored answer's source is its prediction alone (QuestionList._make makes the outcome)
        if streamed:
            sources.append(pred if outcome is None else (None, pred, outcome, None))
        else:
            sources.append((item, pred, outcome or pred.outcome(), gold_outcome))

    known = seen if seen is not None else dataset._by_id
    return _finish(dataset, run, profile, signature_extra, execution, streamed, calls, vectors, exceptions,
                   Columns(counts, failed_flags, outcome_labels, equal), ids, messages, sources,
                   None if dense else positions, values, folds, known, skipped, missing_ids, outcome_counter,
                   measure_skips)


def _finish(dataset: Any, run: Run, profile: Profile, signature_extra: Any, execution: dict[str, int] | None,
            streamed: bool, calls: list[tuple], vectors: list, exceptions: dict[int, dict[int, tuple[Any, Any]]],
            scored: Columns, ids: list[str], messages: Sequence[str], sources: list,
            positions: list[list[int]] | None, values: list[list[Any]], folds: list[list[Any]], known: Any,
            skipped: list[dict[str, str]], missing_ids: list[str], outcome_counter: Counter,
            measure_skips: dict[str, dict[str, list[str]]]) -> Evaluation:
    """The measures with a vector form, the aggregates, the per-question columns and the
    :class:`Evaluation` of the questions scored (``scored``: their columns; ``positions`` None:
    every measure scored every one of them)."""
    specs = list(profile.measures)
    counts, outcome_labels = scored.counts, scored.labels
    if positions is None:  # one list for every measure (never changed from here on)
        positions = [list(range(len(ids)))] * len(specs)
    unknown_ids = [p.id for p in run.predictions if p.id not in known]
    for uid in unknown_ids:
        skipped.append({"id": uid, "reason": "in the run but not in the dataset"})

    # ---- the measures with a vector form, over the questions each scores
    shared: list[tuple[list[int], Columns]] = []  # measures scored on the same questions share one
    for j, vector in enumerate(vectors):
        if vector is None:
            continue
        pos = positions[j]
        q = next((q for p, q in shared if p == pos), None)
        if q is None:
            if len(pos) == len(ids):  # all of them, in order
                q = scored
            else:
                q = Columns(*([col[k] for k in pos] for col in (counts, scored.failed, outcome_labels, scored.equal)))
            shared.append((pos, q))
        values[j], folds[j] = vector(q, **calls[j][2])
        if exceptions.get(j):  # the questions its gate let through, scored one by one
            at = {k: i for i, k in enumerate(pos)} if len(pos) != len(ids) else None
            values[j], folds[j] = vals, kept = list(values[j]), list(folds[j])  # vector's may be shared
            for k, (value, fold) in exceptions[j].items():
                i = k if at is None else at[k]
                vals[i], kept[i] = value, fold

    aggregate: dict[str, float] = {}
    columns: dict[str, Any] = {}
    for j, spec in enumerate(specs):
        columns[spec.label] = _column(len(ids), positions[j], values[j])
        kept = folds[j] if calls[j][1] is not None else [None] * len(values[j])
        aggregate[spec.label] = spec.measure.aggregate(kept, values[j]) if positions[j] else float("nan")
    questions = QuestionList(ids, outcome_labels, messages, counts, columns, sources)
    sig = Signature.build(profile.signature_parts()).with_parts(
        (signature_extra.parts if isinstance(signature_extra, Signature) else signature_extra) or {},
        n=len(ids))
    return Evaluation(
        signature=sig,
        profile=profile.name,
        dataset=dataset.name,
        run=run.name,
        measures=list(profile.measures),
        aggregate=aggregate,
        questions=questions,
        skipped=skipped,
        outcomes=dict(sorted(outcome_counter.items())),
        unknown_ids=unknown_ids,
        missing_ids=missing_ids,
        execution=execution,
        problems=[str(p) for p in (*dataset.problems, *run.problems)],  # a stream's, once read
        measure_skips=measure_skips,
        streamed=streamed,
    )
