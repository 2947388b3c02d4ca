"""Sensitivity of measures to synthetic degradations (Linjordet, Balog, Setty, ICTIR 2022,
Table 3).

For a dataset with a KG, :func:`sensitivity` scores the gold run (``T0``: every prediction is
the gold query) and, for every transformation ``T`` of :mod:`kgqa.metaeval.degrade`, every rate
and every seed, the degraded run. Predicted and gold queries are executed on the same KG (the
gold answers are the executed gold queries, the paper's method) after the normaliser, with the
sandbox in front of predicted queries, through a :class:`~kgqa.execute.cache.CachedEngine` and
an in-process memo, so a query text is executed once whatever the number of seeds.

A cell is the mean over seeds of the run's aggregate score; ``spread`` keeps the population
standard deviation, minimum and maximum over seeds. Marks, as in the paper's Table 3 (whose
caption gives the thresholds as scores, e.g. "≤ 0.990 for T_{i,10%}"): with
``drop = (score(T0) - score) / score(T0)``,

- ``‡`` (sensitive) when ``drop >= 0.50 · rate``,
- ``†`` (moderately sensitive) when ``drop >= 0.10 · rate``,
- ``""`` otherwise (also when the score did not drop, or T0 is 0 or undefined).

Comparisons allow 1e-9 for floating point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kgqa.metaeval.degrade import Context, Degradation, build_context, degrade, get as get_transform
from kgqa.execute.executor import Executor
from kgqa.model import Dataset, Prediction, Run
from kgqa.score import profiles
from kgqa.score.evaluate import Evaluation, evaluate
from kgqa.score.measures import Measure, mean_of_defined, parse_list

__all__ = [
    "DEFAULT_MEASURES", "DEFAULT_TRANSFORMS", "SensitivityRow", "SensitivityTable",
    "sensitivity", "mark", "gold_run",
]

#: Table 3's columns: Query EM, Answer EM, BLEU (instance), ROUGE-L, Exec, F1_Ans, F1_Sem,
#: F1_Tri, GEK-1/2/3.
DEFAULT_MEASURES = "QueryEM,AnswerEM,BLEU,ROUGE_L,Exec,F1_Ans,F1_Sem,F1_Tri,GEK1,GEK2,GEK3"
DEFAULT_TRANSFORMS = ("T1", "T2", "T3")

MODERATE, SENSITIVE = 0.10, 0.50
EPS = 1e-9


def mark(t0: float, score: float, rate: float) -> str:
    """``‡``, ``†`` or ``""`` for ``score`` against the T0 score at ``rate`` (module docstring)."""
    if t0 is None or score is None or math.isnan(t0) or math.isnan(score) or t0 <= 0 or rate <= 0:
        return ""
    drop = (t0 - score) / t0
    if drop <= EPS:
        return ""
    if drop >= SENSITIVE * rate - EPS:
        return "‡"
    if drop >= MODERATE * rate - EPS:
        return "†"
    return ""


def gold_run(dataset: Dataset) -> Run:
    """T0: every item with a gold query predicts exactly that query."""
    return Run(f"{dataset.name}-T0", [Prediction(it.id, sparql=it.sparql) for it in dataset.items
                                      if it.sparql and it.sparql.strip()])


@dataclass
class SensitivityRow:
    """One row: ``scores`` (mean over seeds) and ``marks`` by measure label; ``spread``:
    label -> (population std, min, max) over seeds; ``changed``: items changed per seed;
    ``applicable``: items the transformation applies to."""

    transform: str
    rate: float
    scores: dict[str, float]
    marks: dict[str, str]
    spread: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    changed: list[int] = field(default_factory=list)
    applicable: int | None = None


@dataclass
class SensitivityTable:
    rows: list[SensitivityRow]
    measures: list[str]
    signature: str
    seeds: list[int]
    notes: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"rows": [{"transform", "rate", "scores", "marks"}], "signature"}`` (NaN -> null)."""
        return {
            "rows": [
                {"transform": r.transform, "rate": r.rate,
                 "scores": {m: _json(r.scores[m]) for m in self.measures},
                 "marks": {m: r.marks.get(m, "") for m in self.measures}}
                for r in self.rows
            ],
            "signature": self.signature,
        }

    def row(self, transform: str, rate: float = 0.0) -> SensitivityRow:
        for r in self.rows:
            if r.transform == transform and abs(r.rate - rate) < 1e-12:
                return r
        raise KeyError(f"no row {transform} at rate {rate}")


def _json(v: float) -> float | None:
    return None if v is None or math.isnan(v) else v


def _mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return math.fsum(xs) / len(xs) if xs else float("nan")


def _spread(xs: Sequence[float]) -> tuple[float, float, float]:
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return (float("nan"),) * 3
    m = math.fsum(xs) / len(xs)
    return (math.sqrt(math.fsum((x - m) ** 2 for x in xs) / len(xs)), min(xs), max(xs))


def sensitivity(
    dataset: Dataset,
    runner: Executor,
    *,
    transforms: Sequence[str] = DEFAULT_TRANSFORMS,
    rates: Sequence[float] = (0.1, 0.2),
    seeds: Sequence[int] = (0, 1, 2),
    measures: str | Sequence[Measure] = DEFAULT_MEASURES,
    profile: str = "kgqa",
    among: str = "applicable",
    context: Context | None = None,
) -> SensitivityTable:
    """The sensitivity table (module docstring). ``measures`` is a measure list spec or bound
    measures; ``profile`` the scoring convention (term matching, answer view, failure rules)."""
    ms = parse_list(measures) if isinstance(measures, str) else list(measures)
    prof = profiles.get(profile).with_measures(ms)
    labels = [s.label for s in prof.measures]
    ts = [get_transform(t) for t in transforms]
    gold = runner.run({it.id: it.sparql for it in dataset.items if it.sparql and it.sparql.strip()},
                      untrusted=runner.policy.untrusted("gold"))
    ctx = context or build_context(dataset, ts, runner, gold=gold)

    def score(run: Run) -> Evaluation:
        predicted = runner.run({p.id: p.sparql for p in run.predictions if p.sparql is not None})
        return evaluate(dataset, run, prof, predicted=predicted, gold=gold)

    base = score(gold_run(dataset))
    t0 = {k: base.aggregate[k] for k in labels}
    base_values = {q.id: q.scores for q in base.questions}
    incremental = all(s.measure.defn.aggregate is mean_of_defined for s in prof.measures)

    def aggregate(d: Degradation) -> dict[str, float]:
        """Aggregates of a degraded run. When every measure averages its per-question values
        (mean_of_defined), only the changed items are scored again and the unchanged ones keep
        their T0 values (the same numbers as a full evaluation, much faster on large answers)."""
        if not incremental:
            return score(d.run).aggregate
        changed = set(d.changed)
        sub_ds = Dataset(dataset.name, [it for it in dataset.items if it.id in changed])
        sub_run = Run(d.run.name, [p for p in d.run.predictions if p.id in changed])
        sub = score_subset(sub_ds, sub_run)
        values = dict(base_values)
        values.update({q.id: q.scores for q in sub.questions})
        return {k: mean_of_defined([], [v.get(k) for v in values.values()]) for k in labels}

    def score_subset(sub_ds: Dataset, sub_run: Run) -> Evaluation:
        predicted = runner.run({p.id: p.sparql for p in sub_run.predictions if p.sparql is not None})
        return evaluate(sub_ds, sub_run, prof, predicted=predicted, gold=gold)
    rows = [SensitivityRow("T0", 0.0, t0, {k: "" for k in labels}, {k: (0.0, t0[k], t0[k]) for k in labels}, [0], None)]
    notes: list[str] = []
    for t in ts:
        for rate in rates:
            per_seed: dict[str, list[float]] = {k: [] for k in labels}
            changed: list[int] = []
            applicable = None
            for seed in seeds:
                d: Degradation = degrade(dataset, t, rate, seed, ctx, among=among)
                agg = aggregate(d)
                for k in labels:
                    per_seed[k].append(agg[k])
                changed.append(len(d.changed))
                applicable = d.applicable
            scores = {k: _mean(per_seed[k]) for k in labels}
            rows.append(SensitivityRow(t.name, float(rate), scores, {k: mark(t0[k], scores[k], rate) for k in labels},
                                       {k: _spread(per_seed[k]) for k in labels}, changed, applicable))
        if t.name == "T3" and ctx.partners is not None:
            n = sum(1 for v in ctx.partners.values() if v)
            notes.append(f"T3: {n} of {len(ctx.partners)} items have another query with exactly the same answer")
    sig = base.signature.with_parts(
        runner.signature_parts(), measures="+".join(s.measure.full for s in prof.measures),
        degrade=",".join(t.name for t in ts), rates=",".join(f"{r:g}" for r in rates),
        seeds=",".join(str(s) for s in seeds), among=among)
    return SensitivityTable(rows, labels, sig, list(seeds), notes, list(base.skipped))
