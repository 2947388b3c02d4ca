"""What scoring produces, and the steps both scorers share.

:class:`Evaluation` (one run scored on one dataset under one profile) with its per-question
:class:`QuestionList`; :func:`collect` (an answer's compared form) and :func:`finish` (the
vector measures, aggregates and the Evaluation of the scored columns), used by the general
scorer (:func:`kgqa.score.evaluate.evaluate`) and the lean one (:mod:`kgqa.score.lean`) alike.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kgqa.model import Answer, BooleanAnswer, Item, Outcome, Prediction, Run, Status, TableAnswer
from kgqa.model.answer import TextColumn, answer_items, from_results_json, to_results_json
from kgqa.model.terms import TermMatching
from kgqa.model.signature import Signature
from kgqa.score import qrels
from kgqa.score.measures import Columns, parse
from kgqa.score.profiles import MeasureSpec, Profile
from kgqa.score.rules import Counts


#: why a question is skipped (``Evaluation.skipped``): no gold answer; not in the run under the
#: profile rule missing=skip (the lean path, :mod:`kgqa.score.lean`, says the same)
NO_GOLD = "no gold answer (execute the gold queries with --kg)"
SKIPPED_MISSING = "not in the run (profile rule missing=skip)"
#: The outcome count of a run entry with a query and no answer, scored without executing it
#: (query measures only, no ``--kg``): the entry is in the run, its answer was never asked for.
NOT_EXECUTED = "not_executed"

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


# --------------------------------------------------------------------------- shared by both scorers


def collect(answer: Answer | None, matching: TermMatching, view: str, qrels_side: str | None = None) -> Any:
    """The compared form of ``answer`` under ``view`` (``values``: a set of keys, ``tuples``: a
    set of rows, ``list``: a list), its terms matched by ``matching``; ``qrels_side``: the
    side of a Text2SPARQL qrels comparison (an ASK answer as that client reads it)."""
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



def finish(dataset: Any, run: Run, profile: Profile, signature_extra: Any, execution: dict[str, int] | None,
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
