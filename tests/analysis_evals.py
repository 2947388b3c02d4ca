"""Hand-built Evaluations for comparison and report tests."""

from __future__ import annotations

from kgqa.score.evaluate import Evaluation, QuestionScore
from kgqa.score.measures import parse
from kgqa.score.profiles import MeasureSpec


def make_eval(run: str, f1: dict[str, float], em: dict[str, float] | None = None, dataset: str = "toy",
              details: dict[str, dict] | None = None) -> Evaluation:
    em = em if em is not None else {k: float(v == 1.0) for k, v in f1.items()}
    specs = [MeasureSpec("F1", parse("F1")), MeasureSpec("AnswerEM", parse("AnswerEM")),
             MeasureSpec("microF1", parse("F1(agg=micro)"))]
    qs = [QuestionScore(k, "ok" if v > 0 else "empty", {"F1": v, "AnswerEM": em[k]}, "", None,
                        (details or {}).get(k, {})) for k, v in f1.items()]
    agg = {"F1": sum(f1.values()) / len(f1), "AnswerEM": sum(em.values()) / len(em), "microF1": 0.5}
    outcomes: dict[str, int] = {}
    for q in qs:
        outcomes[q.outcome] = outcomes.get(q.outcome, 0) + 1
    return Evaluation("kgqa:test", "kgqa", dataset, run, specs, agg, qs, [], dict(sorted(outcomes.items())))
