"""A run: what one system produced for the questions of a dataset."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgqa.model.answer import Answer, TableAnswer
from kgqa.model.outcome import Outcome, Status
from kgqa.model.problems import Problem
from kgqa.model.terms import Term


#: The message of a run entry with a query and no answer, scored without executing the query:
#: its outcome is MISSING per question, counted ``not_executed`` (it is in the run).
QUERY_NOT_EXECUTED = "run has a query but no answer; execute it with --kg"


@dataclass(slots=True)
class Prediction:
    """A system's output for one question: predicted SPARQL and/or a predicted answer, an
    optional ranked list of answer terms (for Hits@k / MRR), timing and anything else.

    ``status`` is the outcome the *system* reports (e.g. a GERBIL run marking an error);
    execution by kgqa later turns ``sparql`` into an :class:`Outcome` of its own.
    ``bag`` is a graded result bag {answer key: grade} where the run format gives one
    (Text2SPARQL result sets): every key counts as retrieved.
    """

    id: str
    sparql: str | None = None
    answer: Answer | None = None
    ranked: list[Term] | None = None
    elapsed: float | None = None
    status: Status = Status.OK
    message: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    bag: dict[str, float] | None = None

    def outcome(self) -> Outcome:
        """The outcome from the stored answer alone (no execution)."""
        if self.status is not Status.OK:
            return Outcome(self.status, None, self.message, self.elapsed)
        if self.answer is None and self.ranked is None:
            if self.sparql is not None:
                return Outcome(Status.MISSING, None, QUERY_NOT_EXECUTED)
            return Outcome(Status.MISSING, None, "run entry has neither an answer nor a query")
        answer = self.answer
        if answer is None and self.ranked is not None:
            answer = TableAnswer.single_column(self.ranked)
        # Outcome(Status.OK, answer, "", self.elapsed) without the frozen dataclass's __init__
        # (a per-question hot path)
        out = _new(Outcome)
        _set_status(out, Status.OK)
        _set_answer(out, answer)
        _set_message(out, "")
        _set_elapsed(out, self.elapsed)
        return out


_new = object.__new__
_set_status, _set_answer, _set_message, _set_elapsed = (
    getattr(Outcome, f).__set__ for f in ("status", "answer", "message", "elapsed"))


@dataclass
class Run:
    name: str
    predictions: list[Prediction]
    format: str = ""
    source: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_id = {p.id: p for p in self.predictions}

    def __len__(self) -> int:
        return len(self.predictions)

    def __iter__(self):
        return iter(self.predictions)

    def get(self, item_id: str) -> Prediction | None:
        return self._by_id.get(item_id)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._by_id


def input_summary(kinds: Iterable[str]) -> str:
    """The input form of a set of questions (:mod:`kgqa.baselines.inputs`): one form
    (``tagged``) or the mix with counts (``mixed(raw=77,tagged=923)``); "" for none."""
    counts = Counter(k for k in kinds if k)
    if not counts:
        return ""
    if len(counts) == 1:
        return next(iter(counts))
    return "mixed(" + ",".join(f"{k}={n}" for k, n in sorted(counts.items())) + ")"


def run_input(run: "Run") -> str:
    """The ``input`` signature part of a run: the forms its predictions' ``metadata.input`` name
    (``raw``; ``tagged`` where the question carried its gold query's KB elements: an oracle
    linker), :func:`input_summary`; "" when none says (a run not made by a kgqa baseline) or
    the predictions are streamed (not a list)."""
    preds = run.predictions
    if not isinstance(preds, list):
        return str(run.metadata.get("input") or "")
    return input_summary(p.metadata.get("input", "") for p in preds if p.metadata)
