"""A synthetic GraphQuestions ``.res`` file (the columns of the dataset's ``evaluate.py``) and a
minimal reader for the analyze tests. F1 follows the authors' ``computeF1`` (an empty
prediction has precision 1, recall 0, F1 0); the tests list the expected F1 per question and
derive every breakdown and paraphrase number from those by hand."""

from __future__ import annotations

import json
from pathlib import Path

RES = Path(__file__).parent / "fixtures" / "analyze" / "graphquestions_synthetic.res"

# hand-computed F1 = 2 |gold & pred| / (|gold| + |pred|), 0 for an empty prediction
EXPECTED_F1 = {
    "252000000": 1.0,  # {a} vs {a}
    "252000001": 0.5,  # {a} vs {a,x,y}: 2*1/(1+3)
    "252000100": 0.0,  # empty prediction
    "253000000": 0.0,  # {b} vs {x}
    "253000100": 1.0,
    "254000000": 0.4,  # 3 gold, {c,p}: 2*1/(3+2)
    "254000001": 0.2,  # 3 gold, 7 predicted, 1 right: 2/10
    "254000100": 0.6,  # 3 gold, 7 predicted, 3 right: 6/10
    "254000101": 0.0,
    "255000000": 0.8,  # {f,g} vs {f,g,h}: 4/5
}


def _f1(gold: list[str], pred: list[str]) -> float:
    if not pred:
        return 0.0
    p = sum(e in gold for e in pred) / len(pred)
    r = sum(e in pred for e in gold) / len(gold)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def read_res(path: Path = RES) -> tuple[dict[str, float], dict[str, dict]]:
    """(qid -> F1, qid -> characteristics: edges, function, cardinality, commonness)."""
    scores: dict[str, float] = {}
    chars: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        qid, _time, gold, pred, structure, function, card, commonness = line.split("\t")
        scores[qid] = _f1(json.loads(gold), json.loads(pred))
        chars[qid] = {
            "edges": int(structure.split(",")[1]),
            "function": function,
            "cardinality": int(card),
            "commonness": float(commonness),
        }
    return scores, chars
