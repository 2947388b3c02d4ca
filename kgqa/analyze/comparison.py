"""Comparison of several evaluated systems (the analysis behind ``kgqa compare``).

For each measure that has per-question values in every evaluation (corpus-level measures such
as micro averages have none and are listed in ``corpus_only``), the per-question scores of the
systems are aligned on the question ids scored for every system
(:func:`kgqa.analyze.stats.common_ids`; ids dropped per system are reported) and

* each system's mean gets a percentile bootstrap CI (:func:`kgqa.analyze.stats.bootstrap_ci`);
* every pair (or every system against ``baseline``) gets the paired tests of
  :func:`kgqa.analyze.stats.compare_systems`: paired bootstrap CI of the difference and its
  p-value, approximate randomization ``p = (c+1)/(T+1)``, Wilcoxon signed rank, McNemar's
  exact test when the measure is binary (``MeasureDef.binary``), win/tie/loss;
* p-values are Holm- and BH-adjusted per test over a *family*: ``family="measure"`` (default)
  adjusts over the comparisons of one measure (what ranx does), ``family="all"`` over every
  comparison of every measure of the call;
* significance letters (ranx style): system ``i`` gets letter ``a, b, c, ...`` in input order;
  a system's mean carries the letters of the systems it beats with the primary test's
  Holm-adjusted ``p < alpha`` (primary: McNemar for binary measures, else randomization).

Everything is deterministic given ``seed``: every test of every pair uses the same seed (so the
bootstrap and sign-flip draws, the same for every series of the same length, are drawn once for
the whole call: :func:`kgqa.analyze.stats.compare_measures`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any
import json
from pathlib import Path

from kgqa.analyze import stats
from kgqa.analyze.characteristics import comparable_measures, per_question_scores
from kgqa.score.evaluate import Evaluation
from kgqa.model import InputError

__all__ = ["MeasureComparison", "MultiComparison", "compare_evaluations", "comparable_measures", "load_evaluations"]


@dataclass(frozen=True)
class MeasureComparison:
    """One measure: per-system CIs of the mean over the ``n`` common questions, the paired
    comparisons and the significance letters per system."""

    measure: str
    binary: bool
    n: int
    dropped: dict[str, int]
    ci: dict[str, stats.CI]
    comparisons: list[stats.PairedComparison]
    letters: dict[str, str]

    def best(self) -> str:
        """The system with the highest mean (first in input order on ties)."""
        return max(self.ci, key=lambda s: (self.ci[s].mean, -list(self.ci).index(s)))


@dataclass(frozen=True)
class MultiComparison:
    systems: list[str]
    baseline: str | None
    seed: int
    alpha: float
    confidence: float
    family: str
    measures: list[MeasureComparison]
    corpus_only: list[str] = field(default_factory=list)
    aggregates: dict[str, dict[str, float]] = field(default_factory=dict)
    #: the evaluations' signatures (distinct, sorted) and outcome counts per system
    signatures: list[str] = field(default_factory=list)
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Every number of the comparison, JSON-ready (NaN as null)."""
        def f(v: float) -> float | None:
            return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

        def ci(c: stats.CI) -> dict[str, Any]:
            return {"mean": f(c.mean), "low": f(c.low), "high": f(c.high), "n": c.n}

        return {
            "systems": self.systems,
            "baseline": self.baseline,
            "seed": self.seed,
            "alpha": self.alpha,
            "confidence": self.confidence,
            "family": self.family,
            "corpus_only": self.corpus_only,
            "aggregates": {s: {k: f(v) for k, v in a.items()} for s, a in self.aggregates.items()},
            "signatures": self.signatures,
            "outcomes": self.outcomes,
            "measures": [
                {
                    "measure": m.measure,
                    "binary": m.binary,
                    "n": m.n,
                    "dropped": m.dropped,
                    "systems": {s: {**ci(m.ci[s]), "letters": m.letters[s]} for s in self.systems},
                    "comparisons": [
                        {
                            "a": c.system_a, "b": c.system_b, "n": c.n,
                            "mean_a": c.mean_a, "mean_b": c.mean_b,
                            "diff": ci(c.diff),
                            "wins": c.wtl.wins, "ties": c.wtl.ties, "losses": c.wtl.losses,
                            "p": c.p, "p_holm": c.p_holm, "p_bh": c.p_bh,
                            "primary": c.primary, "significant": c.significant, "better": c.better,
                            "untested": c.untested or None,
                        }
                        for c in m.comparisons
                    ],
                }
                for m in self.measures
            ],
        }


def _binary(evals: Sequence[Evaluation], label: str) -> bool:
    for e in evals:
        for s in e.measures:
            if s.label == label:
                return bool(s.measure.defn.binary)
    return False


def system_names(evals: Sequence[Evaluation]) -> list[str]:
    names: list[str] = []
    for i, e in enumerate(evals):
        name = e.run or f"run{i + 1}"
        if name in names:
            k = 2
            while f"{name}#{k}" in names:
                k += 1
            name = f"{name}#{k}"
        names.append(name)
    return names


def compare_evaluations(
    evals: Sequence[Evaluation],
    *,
    baseline: str | None = None,
    measures: Sequence[str] | None = None,
    seed: int = 0,
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    trials: int = 10_000,
    family: str = "measure",
) -> MultiComparison:
    """Compare two or more evaluations of the same dataset (see the module docstring).

    ``baseline`` is a run name (the evaluations' ``run``; duplicates get ``#2``, ``#3``...);
    ``measures`` restricts the measure labels (default: every label with per-question values).
    Raises ValueError for fewer than two evaluations, an unknown baseline or measure, or
    evaluations of different datasets."""
    if len(evals) < 2:
        raise ValueError(f"comparing needs at least two runs, got {len(evals)}")
    if family not in ("measure", "all"):
        raise ValueError(f"family must be 'measure' or 'all', got {family!r}")
    datasets = sorted({e.dataset for e in evals})
    if len(datasets) > 1:
        raise ValueError(f"the runs were evaluated on different datasets: {', '.join(datasets)}")
    systems = system_names(evals)
    if baseline is not None and baseline not in systems:
        raise ValueError(f"baseline {baseline!r} is not one of the runs: {', '.join(systems)}")
    per_q, corpus_only = comparable_measures(evals)
    if measures:
        unknown = [m for m in measures if m not in per_q]
        if unknown:
            raise ValueError(
                f"measure(s) {', '.join(unknown)} have no per-question values in every run; "
                f"comparable: {', '.join(per_q) or 'none'}"
            )
        per_q = [m for m in per_q if m in measures]
    tables = []
    for label in per_q:
        scores = {s: per_question_scores(e, label) for s, e in zip(systems, evals)}
        ids, dropped = stats.common_ids(scores)
        if not ids:
            continue
        binary = _binary(evals, label)
        if binary and not all(stats.is_binary([scores[s][q] for q in ids]) for s in systems):
            binary = False
        tables.append((label, scores, binary, ids, dropped))
    # one call for every measure: series of the same length share their seeded draws
    compared = stats.compare_measures(
        [(label, scores, binary) for label, scores, binary, _, _ in tables], baseline=baseline, seed=seed,
        alpha=alpha, confidence=confidence, resamples=resamples, trials=trials,
    ) if tables else []
    results = [
        MeasureComparison(label, binary, len(ids), dropped, ci, comps, {})
        for (label, _, binary, ids, dropped), (comps, ci) in zip(tables, compared)
    ]
    if family == "all":
        results = _adjust_all(results, alpha)
    results = [replace(m, letters=stats.significance_letters(m.comparisons, systems)) for m in results]
    return MultiComparison(
        systems=systems, baseline=baseline, seed=seed, alpha=alpha, confidence=confidence, family=family,
        measures=results, corpus_only=corpus_only,
        aggregates={s: dict(e.aggregate) for s, e in zip(systems, evals)},
        signatures=sorted({str(e.signature) for e in evals}),
        outcomes={s: dict(e.outcomes) for s, e in zip(systems, evals)},
    )


def _adjust_all(results: list[MeasureComparison], alpha: float) -> list[MeasureComparison]:
    """Re-adjust every test's p-values over all comparisons of all measures."""
    flat = [(i, j, c) for i, m in enumerate(results) for j, c in enumerate(m.comparisons)]
    tests = sorted({t for _, _, c in flat for t in c.p})
    holm: dict[tuple[int, int], dict[str, float]] = {(i, j): {} for i, j, _ in flat}
    bh: dict[tuple[int, int], dict[str, float]] = {(i, j): {} for i, j, _ in flat}
    for t in tests:
        members = [(i, j, c) for i, j, c in flat if t in c.p]
        for (i, j, _), ph, pb in zip(members, stats.holm([c.p[t] for *_, c in members]),
                                     stats.benjamini_hochberg([c.p[t] for *_, c in members])):
            holm[(i, j)][t] = ph
            bh[(i, j)][t] = pb
    out: list[MeasureComparison] = []
    for i, m in enumerate(results):
        comps = []
        for j, c in enumerate(m.comparisons):
            ph = holm[(i, j)]
            significant = ph.get(c.primary, 1.0) < alpha and c.mean_a != c.mean_b
            better = (c.system_a if c.mean_a > c.mean_b else c.system_b) if significant else None
            comps.append(replace(c, p_holm=ph, p_bh=bh[(i, j)], significant=significant, better=better))
        out.append(replace(m, comparisons=comps))
    return out


def load_evaluations(paths: Sequence[Any]) -> list[Evaluation]:
    """Saved evaluations (``kgqa evaluate --save``, or ``--format json``): each file holds
    ``{"runs": [...]}`` (or, written before issue 38 for one run, one bare evaluation object). Raises :class:`~kgqa.model.InputError` naming the
    file (and the run index) when a file is unreadable or not a saved evaluation."""

    out: list[Evaluation] = []
    for p in paths:
        path = Path(p)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise InputError(path, f"cannot read: {e.strerror or e}") from None
        except json.JSONDecodeError as e:
            raise InputError(path, f"not JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
        docs = doc.get("runs") if isinstance(doc, dict) and "runs" in doc else [doc]
        if not isinstance(docs, list):
            raise InputError(path, "'runs' must be a list of saved evaluations")
        for i, d in enumerate(docs):
            where = f"run {i}" if len(docs) > 1 else None
            if not isinstance(d, dict) or not {"signature", "profile", "aggregate", "questions"} <= set(d):
                raise InputError(path, "not a saved kgqa evaluation: expected an object with signature, profile, "
                                 "aggregate and questions (write one with kgqa evaluate --save)", where)
            try:
                out.append(Evaluation.from_json(d))
            except (KeyError, TypeError, ValueError) as e:
                raise InputError(path, f"malformed saved evaluation: {e}", where) from None
    return out
