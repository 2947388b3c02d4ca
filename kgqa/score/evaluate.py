"""Score a run against a dataset under a profile.

Inputs come from the earlier stages: the dataset (load), the run (load) and, when queries
were executed, the outcomes of predicted and gold queries (execute). Output is an
:class:`Evaluation`: aggregate scores by the profile's labels, per-question scores and
outcomes, what was skipped and why, and a signature naming everything that changed the
numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any

from kgqa import lazy
from kgqa.model import Answer, BooleanAnswer, Dataset, Item, Outcome, Prediction, Run, Status, TableAnswer
from kgqa.model.answer import TextColumn, answer_items
from kgqa.model.terms import TermMatching
from kgqa.model.gcpause import during
from kgqa.model.run import QUERY_NOT_EXECUTED
from kgqa.model.signature import Signature
from kgqa.score.measures import Columns, Inputs, ItemContext
from kgqa.score import qrels
from kgqa.score.profiles import Profile
from kgqa.score.rules import Counts
from kgqa.score.scored import (NO_GOLD, NOT_EXECUTED, SKIPPED_MISSING, Evaluation, QuestionList, QuestionRecord, QuestionScore,
                               collect, finish, require_items)

#: The scorer, and the result types it returns (defined in :mod:`kgqa.score.scored`, which the
#: lean scorer shares).
__all__ = ["evaluate", "Evaluation", "QuestionList", "QuestionRecord", "QuestionScore", "require_items",
           "compared_items", "gold_items", "NO_GOLD", "SKIPPED_MISSING"]

#: the flat scorer (multiprocessing) only for the profiles it serves: answers-only scoring of a
#: dataset object never loads it
_lean = lazy.module("kgqa.score.lean")


# --------------------------------------------------------------------------- comparison


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
    return collect(answer, profile.matching, profile.view, _side(profile, "system"))


def gold_items(item: Item, gold: Mapping[str, Outcome], profile: Profile) -> Any:
    """The gold collection the evaluator compares with (graded qrels, the executed gold answer
    in ``gold``, or the stored one); None when there is none."""
    gold_answer, qrels_gold, _why = _gold_side(item, gold, profile)
    if qrels_gold is not None:
        return qrels_gold
    return None if gold_answer is None else collect(gold_answer, profile.matching, profile.view, _side(profile, "gold"))


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


# long function: the per-question scoring loop at 10^6 items: its steps are inlined (docs/speed.md)
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
        lean = _lean.score_flat(dataset, run, profile, signature_extra)
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
            gold_items = collect(gold_answer, m, view, gold_side)
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
            sys_items = collect(sys_answer, m, view, sys_side)
            label = (outcome or pred.outcome()).label
        if label == "missing" and outcome is not None and outcome.message == QUERY_NOT_EXECUTED:
            outcome_counter[NOT_EXECUTED] += 1  # a query-only entry, not executed: it is in the run
        else:
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
    return finish(dataset, run, profile, signature_extra, execution, streamed, calls, vectors, exceptions,
                   Columns(counts, failed_flags, outcome_labels, equal), ids, messages, sources,
                   None if dense else positions, values, folds, known, skipped, missing_ids, outcome_counter,
                   measure_skips)


