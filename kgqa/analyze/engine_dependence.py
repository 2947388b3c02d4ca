"""Engine-dependent scores: which questions' scores would change on another SPARQL engine,
and over which range.

:func:`annotate` takes an evaluation and the query assessments of
:mod:`kgqa.execute.engine_findings` (predicted and gold queries) and

- marks each affected question: ``details["engine_dependent"]`` is the reason (gold-side
  reasons are prefixed ``gold:``), ``details["engine_dependence"]`` the assessment(s);
- gives each of its scores as a range ``details["score_range"] = {label: [min, max]}`` over
  the answers the query can legally return, with ``details["score_range_kind"]``: ``exact``
  when every legal answer is scored (at most ``bound`` of them: ties at an ``ORDER BY ...
  LIMIT`` cut, ``LIMIT`` without ``ORDER BY``, IRI comparisons, GROUP_CONCAT orders) or, for a
  choice of tied rows with more legal answers, when the count measures (P, R, F1, exact match)
  are solved exactly by :mod:`kgqa.analyze.score_range`; ``bound`` when the range is only
  sound (never narrower than the truth): rows sharing many values, legal answers kgqa cannot
  list (``SAMPLE``, ``RAND()``, a subquery's ``LIMIT``: every answer measure gets [0, 1]), or
  a measure that is no function of the counts over too many answers. Measures of the query
  text keep their value;
- sets ``evaluation.engine_dependence``: counts (flagged, confirmed, with a range, by kind) and,
  for measures that are means of per-question values, the aggregate range obtained with every
  flagged question at its minimum / maximum.

:func:`exclude` gives the dataset without the flagged questions (``--exclude-engine-dependent``).
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import chain, compress
from collections.abc import Mapping
from typing import Any

from kgqa.execute.engine_findings import DEFAULT_BOUND, Choice, QueryAssessment, assess_many
from kgqa.model import Dataset, Outcome, Prediction, Run
from kgqa.model.answer import Answer, TableAnswer, answer_items
from kgqa.score.evaluate import Evaluation, QuestionList, evaluate, compared_items, gold_items
from kgqa.score.profiles import Profile
from kgqa.analyze.score_range import count_range, reachable
from kgqa.score.measures import ItemContext
from kgqa.score.rules import Counts


#: answer measures whose per-question value is a function of the counts (TP, FP, FN)
COUNT_MEASURES = frozenset({"P", "R", "F1", "AnswerEM", "Accuracy"})
_UNKNOWN = object()  # legal answers not computable


def _side(a: QueryAssessment | None, bound: int):
    """How one side's legal answers are described: None (its one answer), a list of answers,
    a :class:`Choice` (too many to list), or ``_UNKNOWN``."""
    if a is None:
        return None
    if a.open or (a.choice is not None and a.alternatives) or (a.choice is None and not a.alternatives):
        return _UNKNOWN
    if a.choice is not None:
        return a.choice.answers(bound) if a.choice.count() <= bound else a.choice
    return list(a.alternatives)


def _question_range(qid: str, scores: Mapping[str, float | None], item, pa: QueryAssessment | None,
                    ga: QueryAssessment | None, g_out: Outcome | None, p_out: Outcome | None, run: Run,
                    profile: Profile, bound: int) -> tuple[dict[str, tuple[float, float]], str] | None:
    """The range of every score of one flagged question over its legal answers, and its kind:
    ``exact`` (every legal answer scored, or the count measures solved exactly by
    :mod:`kgqa.analyze.score_range`) or ``bound`` (an interval holding every legal score).
    The score the question has (one legal answer) always lies inside. None: no score at all."""
    ds1 = Dataset("one", [item])
    sys_side, gold_side = _side(pa, bound), _side(ga, bound)
    own_pred = _as_prediction(qid, p_out, run)
    sys_list = [own_pred] if sys_side is None else (
        [Prediction(qid, answer=x) for x in sys_side] if isinstance(sys_side, list) else None)
    gold_list = [{qid: g_out} if g_out is not None else None] if gold_side is None else (
        [{qid: Outcome.ok(x)} for x in gold_side] if isinstance(gold_side, list) else None)
    # the system's choice of tied rows, also when it is short enough to list (both sides listed
    # would be too many pairs: each gold answer is then solved against the choice)
    sys_choice = sys_side if isinstance(sys_side, Choice) else (
        pa.choice if pa is not None and pa.choice is not None and not pa.alternatives and not pa.open else None)
    per_label: dict[str, list[float]] = {}
    kind = "exact"
    if sys_list is not None and gold_list is not None and len(sys_list) * len(gold_list) <= bound:
        for pred in sys_list:  # every legal answer (pair) scored
            for gmap in gold_list:
                for label, v in _scores_for(ds1, pred, profile, gmap).items():
                    if v is not None:
                        per_label.setdefault(label, []).append(v)
    elif sys_choice is not None and gold_list is not None and len(gold_list) <= bound \
            and (sys_choice is sys_side or len(gold_list) * _pool_rows(sys_choice) <= PAIR_BUDGET) \
            and profile.view in ("values", "tuples"):
        for gmap in gold_list:  # each legal gold answer against the system's choice, solved exactly
            exact = _choice_range(ds1, item, sys_choice, gmap, own_pred, profile, per_label)
            kind = kind if exact else "bound"
    else:
        kind = "bound"
    # measures the choice cannot change keep their value; the others without a computed range
    # get the widest one (every answer measure lies in [0, 1])
    for spec in profile.measures:
        v = scores.get(spec.label)
        if spec.label in per_label or v is None:
            continue
        if _answer_dependent(spec):
            per_label[spec.label] = [0.0, 1.0]
            kind = "bound"
        else:
            per_label[spec.label] = [v]
    if not per_label:
        return None
    rng = {label: (min(vs), max(vs)) for label, vs in per_label.items()}
    # the scored answer is one of the legal answers: its value lies inside the range
    for label, v in scores.items():
        if label in rng and v is not None:
            lo, hi = rng[label]
            rng[label] = (min(lo, v), max(hi, v))
    return rng, kind


def _answer_dependent(spec) -> bool:
    i = spec.measure.inputs
    return i.answers or i.execution or spec.measure.defn.convention != "query"


#: Most (gold answer x pool row) pairs solved exactly when both sides choose among tied rows;
#: beyond it the range is a sound bound (the solving time grows with both).
PAIR_BUDGET = 100_000


def _pool_rows(choice: Choice) -> int:
    return sum(len(pool) for pool, _k in choice.groups)


#: the compared items of the last choices seen (a choice is solved against each legal gold answer)
_ITEMS: dict[tuple[int, int], tuple[Choice, Profile, tuple]] = {}


def _choice_items(choice: Choice, profile: Profile) -> tuple[frozenset, list]:
    """The compared items of ``choice``'s fixed rows and of each pool row (made once per choice
    and profile, however many gold answers it is solved against)."""

    key = (id(choice), id(profile))
    hit = _ITEMS.get(key)
    if hit is not None and hit[0] is choice and hit[1] is profile:
        return hit[2]

    def items(rows) -> frozenset:
        return compared_items(TableAnswer(choice.variables, tuple(rows)), profile)

    made = (items(choice.fixed), [([items([r]) for r in pool], k) for pool, k in choice.groups])
    if len(_ITEMS) > 8:
        _ITEMS.clear()
    _ITEMS[key] = (choice, profile, made)
    return made


def _choice_range(ds1: Dataset, item, choice: Choice, gmap: Mapping[str, Outcome] | None, own_pred: Prediction,
                  profile: Profile, per_label: dict[str, list[float]]) -> bool:
    """Add to ``per_label`` the [min, max] of every count measure over ``choice`` (too many
    answers to list) against the gold answer of ``gmap``, and the values of the measures the
    choice cannot change; True when that is exact (see :mod:`kgqa.analyze.score_range`)."""

    gold = gold_items(item, gmap or {}, profile)
    if gold is None or not isinstance(gold, frozenset):
        return False
    fixed, groups = _choice_items(choice, profile)
    reach, exact = reachable(groups, fixed, gold)
    tp0 = len(fixed & gold)
    fp0 = len(fixed) - tp0
    own = _scores_for(ds1, own_pred, profile, gmap) if any(
        spec.measure.name not in COUNT_MEASURES and not _answer_dependent(spec) for spec in profile.measures) else {}
    for spec in profile.measures:
        if spec.measure.name in COUNT_MEASURES:
            r = count_range(reach, tp0, fp0, len(gold), _count_value(spec.measure))
            if r is not None:
                per_label.setdefault(spec.label, []).extend(r)
        elif not _answer_dependent(spec) and own.get(spec.label) is not None:
            per_label.setdefault(spec.label, []).append(own[spec.label])
    return exact


def _count_value(measure):
    """``(tp, fp, fn) -> value`` of a count measure (its own item function on those counts)."""

    def value(tp: int, fp: int, fn: int) -> float | None:
        c = Counts(tp, fp, fn, tp + fp, tp + fn, tp, tp)
        same = 0 if fp == 0 and fn == 0 else 1  # what exact match compares: the collections
        ctx = ItemContext("", None, Outcome.ok(None), 0, same, c, False)
        return measure.item_value(ctx)

    return value


def _scores_for(ds1: Dataset, pred: Prediction, profile: Profile, gold: Mapping[str, Outcome] | None) -> dict[str, float]:
    e = evaluate(ds1, Run("alt", [pred]), profile, gold=gold)
    return dict(e.questions[0].scores) if e.questions else {}


def _as_prediction(qid: str, outcome: Outcome | None, run: Run) -> Prediction:
    if outcome is not None:
        return Prediction(qid, answer=outcome.answer, status=outcome.status, message=outcome.message)
    p = run.get(qid)
    return p if p is not None else Prediction(qid, status=Outcome.missing().status, message="no entry in the run")


def annotate(evaluation: Evaluation, dataset: Dataset, run: Run, profile: Profile, *,
             predicted: Mapping[str, QueryAssessment] | None = None,
             gold: Mapping[str, QueryAssessment] | None = None,
             predicted_outcomes: Mapping[str, Outcome] | None = None,
             gold_outcomes: Mapping[str, Outcome] | None = None,
             bound: int = DEFAULT_BOUND) -> Evaluation:
    """Mark engine-dependent questions of ``evaluation`` in place (see the module docstring)
    and return it. ``predicted_outcomes`` / ``gold_outcomes``: the executed outcomes the
    evaluation used (a gold answer that was not executed is stored and depends on no engine)."""
    predicted = predicted or {}
    gold = gold or {}
    predicted_outcomes = predicted_outcomes or {}
    gold_outcomes = gold_outcomes or {}
    kinds: Counter[str] = Counter()
    n_flagged = n_confirmed = n_range = n_bound = same_query = 0
    flagged_ids: set[str] = set()
    ranges: dict[str, dict[str, tuple[float, float]]] = {}
    questions = evaluation.questions
    ids = _ids(questions)
    for i, qid in enumerate(ids):
        pa = predicted.get(qid)
        ga = gold.get(qid) if qid in gold_outcomes else None
        pa = pa if pa is not None and pa.dependent else None
        ga = ga if ga is not None and ga.dependent else None
        if pa is None and ga is None:
            continue
        if pa is not None and ga is not None and _same_query(qid, dataset, run, pa, ga):
            same_query += 1  # one query, one engine: both sides get the same answer wherever it runs
            continue
        q = questions[i]  # (only flagged questions are made into objects)
        n_flagged += 1
        reasons = []
        info: dict[str, Any] = {}
        for side, a in (("predicted", pa), ("gold", ga)):
            if a is None:
                continue
            reasons.append(a.reason if side == "predicted" else f"gold: {a.reason}")
            info[side] = a.to_json()
            kinds.update({f.kind for f in a.findings})
        if any(a is not None and a.confirmed for a in (pa, ga)):
            n_confirmed += 1
        q.details["engine_dependent"] = "; ".join(reasons)
        flagged_ids.add(q.id)
        q.details["engine_dependence"] = info
        if q.id not in dataset:
            continue
        found = _question_range(q.id, q.scores, dataset[q.id], pa, ga, gold_outcomes.get(q.id),
                                predicted_outcomes.get(q.id), run, profile, bound)
        if found is None:
            continue
        rng, kind = found
        n_range += 1
        ranges[q.id] = rng
        q.details["score_range"] = {k: [lo, hi] for k, (lo, hi) in rng.items()}
        q.details["score_range_kind"] = kind
        n_bound += kind == "bound"
    evaluation.engine_dependence = {
        "questions": n_flagged,
        "confirmed": n_confirmed,
        "with_range": n_range,
        "with_bound": n_bound,  # of those, ranges that are sound bounds rather than exact
        "kinds": dict(sorted(kinds.items())),
        "ids": [qid for qid in ids if qid in flagged_ids],  # (q.details is built on access)
        "aggregate_range": _aggregate_range(evaluation, ranges),
    }
    if same_query:  # not flagged: the predicted query is the gold query, executed on the same engine
        evaluation.engine_dependence["same_query"] = same_query
    return evaluation


#: Findings whose choice one engine makes the same way each time the same query runs on the same
#: data (a cut through ties, a LIMIT without ORDER BY, IRI comparisons, GROUP_CONCAT order);
#: not SAMPLE or RAND()/NOW()/UUID(), which may differ between two runs of one query.
_REPEATABLE = frozenset({"order-limit", "limit-without-order", "comparison", "group-concat"})


def _same_query(qid: str, dataset: Dataset, run: Run, pa: QueryAssessment, ga: QueryAssessment) -> bool:
    """The predicted query is the gold query (up to white space), both executed here, with only
    repeatable findings: whatever an engine chooses, it chooses it for both sides, so the score
    cannot differ between engines."""
    p = run.get(qid)
    if p is None or not p.sparql or qid not in dataset or not dataset[qid].sparql:
        return False
    if " ".join(p.sparql.split()) != " ".join(dataset[qid].sparql.split()):
        return False
    return all(f.kind in _REPEATABLE for a in (pa, ga) for f in a.findings)


def _aggregate_range(evaluation: Evaluation, ranges: Mapping[str, Mapping[str, tuple[float, float]]]) -> dict[str, list[float]]:
    """For each measure whose aggregate is the mean of its per-question values: the aggregate
    with every question that has a range at its minimum, and at its maximum."""
    out: dict[str, list[float]] = {}
    index: dict[str, int] | None = None
    for spec in evaluation.measures:
        label = spec.label
        agg = evaluation.aggregate.get(label)
        if agg is None or (isinstance(agg, float) and math.isnan(agg)) or spec.over != "all":
            continue
        if index is None and ranges and isinstance(evaluation.questions, QuestionList):
            index = {qid: i for i, qid in enumerate(evaluation.questions.ids)}
        values, value_of = _label_values(evaluation.questions, label, index or {})
        if not values:
            continue
        total = math.fsum(values)
        if abs(total / len(values) - agg) > 1e-12:
            continue  # not a plain mean of per-question values
        moved = [(v, r[label]) for qid, r in ranges.items() if label in r and (v := value_of(qid)) is not None]
        if not moved:
            out[label] = [total / len(values), total / len(values)]
        elif math.isfinite(total) and all(math.isfinite(x) for v, r in moved for x in (v, *r)):
            # fsum is correctly rounded: adding -old and new to the values sums exactly as replacing old by new
            lo = math.fsum(chain(values, (-v for v, _ in moved), (r[0] for _, r in moved)))
            hi = math.fsum(chain(values, (-v for v, _ in moved), (r[1] for _, r in moved)))
            out[label] = [lo / len(values), hi / len(values)]
        else:
            out[label] = _replaced_means(evaluation.questions, label, ranges)
    return out


def _replaced_means(questions, label: str, ranges: Mapping[str, Mapping[str, tuple[float, float]]]) -> list[float]:
    """The mean of ``label`` with every question in ``ranges`` at its minimum, and at its maximum
    (one value per question id, replaced)."""
    vals = {q.id: q.scores[label] for q in questions if q.scores.get(label) is not None}
    lo = dict(vals)
    hi = dict(vals)
    for qid, r in ranges.items():
        if label in r and qid in vals:
            lo[qid], hi[qid] = r[label]
    return [math.fsum(lo.values()) / len(lo), math.fsum(hi.values()) / len(hi)]


def _ids(questions) -> list[str]:
    """The question ids of an evaluation, without making question objects of a
    :class:`~kgqa.score.evaluate.QuestionList`."""
    return questions.ids if isinstance(questions, QuestionList) else [q.id for q in questions]


def _label_values(questions, label: str, index: Mapping[str, int]) -> tuple[list[Any], Any]:
    """The values of ``label`` of the questions that have one, and ``value_of(id)`` (None when
    that question has none). A :class:`~kgqa.score.evaluate.QuestionList` is read from its
    column (``index``: id -> position) where :meth:`~kgqa.score.evaluate.QuestionList.column`
    gives one; otherwise, as for any list, from the question objects."""
    column = questions.column(label) if isinstance(questions, QuestionList) else None
    if column is not None:
        vals, present = column

        def value_of(qid: str) -> Any:
            i = index.get(qid)
            return vals[i] if i is not None and present[i] else None

        return list(compress(vals, present)), value_of
    by_id = {q.id: q.scores[label] for q in questions if q.scores.get(label) is not None}
    return list(by_id.values()), by_id.get


def exclude(dataset: Dataset, ids: list[str] | set[str]) -> Dataset:
    """``dataset`` without the questions ``ids`` (e.g. the engine-dependent ones)."""
    drop = set(ids)
    return Dataset(dataset.name, [it for it in dataset.items if it.id not in drop], dataset.format,
                   dataset.source, dataset.problems, {**dataset.metadata, "excluded": sorted(drop)})


def check(evaluation: Evaluation, dataset: Dataset, run: Run, profile: Profile, execution, runner, *,
          bound: int = DEFAULT_BOUND) -> Evaluation:
    """Assess every executed query of ``execution`` (an :class:`kgqa.execute.executor.Execution`)
    with ``runner`` (the :class:`~kgqa.execute.executor.Executor` that executed them: variants run
    through the same policy, sandbox and cache) and :func:`annotate` ``evaluation``. Queries
    without a static finding execute nothing."""

    pred_queries = {}
    for qid in execution.predicted:
        p = run.get(qid)
        if p is not None and p.sparql:
            pred_queries[qid] = p.sparql
    gold_queries = {qid: dataset[qid].sparql for qid in execution.gold if qid in dataset and dataset[qid].sparql}
    policy = runner.policy  # the one trust rule: variants go through the sandbox as their originals did
    pa = assess_many(pred_queries, execution.predicted, runner, untrusted=policy.untrusted("predicted"))
    ga = assess_many(gold_queries, execution.gold, runner, untrusted=policy.untrusted("gold"))
    return annotate(evaluation, dataset, run, profile, predicted=pa, gold=ga,
                    predicted_outcomes=execution.predicted, gold_outcomes=execution.gold, bound=bound)


def rescore_without(evaluation: Evaluation, dataset: Dataset, run: Run, profile: Profile, execution=None, *,
                    signature_extra: Mapping[str, Any] | None = None,
                    extras: Mapping[str, Mapping[str, Any]] | None = None) -> Evaluation:
    """``--exclude-engine-dependent``: the evaluation again without the questions
    ``evaluation`` marks engine-dependent (listed in ``skipped`` with their reason), with the
    same per-question ``extras`` (KG answer types) the evaluation had; the signature says
    ``exclude:engine-dependent``."""
    known = (evaluation.engine_dependence or {}).get("ids")  # annotate's list: no details built for the rest
    marked = set(known) if known is not None else None
    flagged = {q.id: q.details["engine_dependent"] for q in evaluation.questions
               if (marked is None or q.id in marked) and "engine_dependent" in q.details}
    e = evaluate(exclude(dataset, flagged), run, profile,
                 predicted=getattr(execution, "predicted", None), gold=getattr(execution, "gold", None),
                 signature_extra={**(signature_extra or {}), "exclude": "engine-dependent"},
                 execution=getattr(execution, "counts", None), extras=extras)
    e.skipped = [s for s in e.skipped if s["id"] not in flagged or not s["reason"].startswith("in the run but")]
    e.skipped += [{"id": qid, "reason": f"engine-dependent: {why}"} for qid, why in flagged.items()]
    e.unknown_ids = [u for u in e.unknown_ids if u not in flagged]
    e.engine_dependence = {**(evaluation.engine_dependence or {}), "excluded": len(flagged)}
    return e
