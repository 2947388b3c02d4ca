"""Seeded synthetic evaluations for the comparison tests and bench/bench_compare.py: ``systems``
runs x ``n`` questions with the per-question scores of kgqa's default profile (P, R, F1 with the
small-denominator fractions real set answers give, binary AnswerEM and Coverage, and a
corpus-only microF1). Pure Python arithmetic on a seeded ``random.Random``: the same arguments
always give the same floats."""

from __future__ import annotations

import random

from kgqa.score.evaluate import Evaluation, QuestionScore
from kgqa.score.measures import parse
from kgqa.score.profiles import MeasureSpec

LABELS = ("P", "R", "F1", "AnswerEM", "Coverage")


def synthetic_evals(n: int = 10_000, systems: int = 3, seed: int = 0, missing: int = 0,
                    dataset: str = "synthetic", skill_step: float = 0.08, answer_step: float = 0.05) -> list[Evaluation]:
    """``systems`` evaluations of the same ``n`` questions (ids ``q0``..). Each question has 1-5
    gold answers; system ``s`` answers with probability 0.75 + answer_step * s, 1-5 answers of
    which each is right with probability 0.45 + skill_step * s (small steps: close systems). ``missing`` > 0 leaves that many questions out of the last
    system (they are dropped from paired tests)."""
    rng = random.Random(seed)
    gold = [rng.randint(1, 5) for _ in range(n)]
    specs = [MeasureSpec(label, parse(label)) for label in LABELS] + [MeasureSpec("microF1", parse("F1(agg=micro)"))]
    out: list[Evaluation] = []
    for s in range(systems):
        skill = 0.45 + skill_step * s
        qs: list[QuestionScore] = []
        for i in range(n):
            if s == systems - 1 and i < missing:
                continue
            g = gold[i]
            if rng.random() < 0.75 + answer_step * s:
                k = rng.randint(1, 5)
                tp = sum(1 for _ in range(min(k, g)) if rng.random() < skill)
            else:
                k = tp = 0
            p = tp / k if k else 0.0
            r = tp / g
            f1 = 2 * tp / (k + g) if tp else 0.0
            scores = {"P": p, "R": r, "F1": f1, "AnswerEM": float(tp == g == k), "Coverage": float(k > 0)}
            qs.append(QuestionScore(f"q{i}", "ok" if k else "empty", scores))
        agg = {label: sum(q.scores[label] for q in qs) / len(qs) for label in LABELS}
        agg["microF1"] = agg["F1"]
        outcomes: dict[str, int] = {}
        for q in qs:
            outcomes[q.outcome] = outcomes.get(q.outcome, 0) + 1
        out.append(Evaluation("kgqa:synthetic", "kgqa", dataset, f"sys{s}", specs, agg, qs, [],
                              dict(sorted(outcomes.items()))))
    return out
