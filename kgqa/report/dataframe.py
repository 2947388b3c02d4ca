"""Per-question records of evaluations, and a pandas DataFrame of them (``kgqa.to_dataframe``).

One record per (run, question) with the columns, in this order: ``run``, ``id``, ``outcome``,
``message``, one column per measure label (None where the measure has no per-question value),
``tp``, ``fp``, ``fn``, ``question``, ``gold_sparql``, ``predicted_sparql``, ``gold_answer``
and ``predicted_answer`` (SPARQL results JSON as compact text), ``error`` and ``error_flags``
(the taxonomy label of :mod:`kgqa.analyze.taxonomy`, flags joined by ``+``), then every
characteristic of :func:`kgqa.analyze.characteristics.question_characteristics` (derived names
as they are, dataset fields as ``groups.KEY`` / ``metadata.KEY``). pandas is optional: only
:func:`to_dataframe` needs it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgqa import lazy
from kgqa.analyze.characteristics import question_characteristics
from kgqa.analyze.comparison import load_evaluations
from kgqa.analyze.taxonomy import classify
from kgqa.score.evaluate import Evaluation

__all__ = ["records", "to_dataframe"]


def _as_list(obj: Any) -> list[Evaluation]:
    if isinstance(obj, Evaluation):
        return [obj]
    if isinstance(obj, (str, Path)):
        return load_evaluations([obj])
    if isinstance(obj, dict):
        return [Evaluation.from_json(d) for d in obj["runs"]] if "runs" in obj else [Evaluation.from_json(obj)]
    out = list(obj)
    bad = [type(x).__name__ for x in out if not isinstance(x, Evaluation)]
    if bad:
        raise TypeError(f"expected Evaluation objects, got {', '.join(sorted(set(bad)))}")
    return out


def _compact(v: Any) -> str | None:
    return None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def records(evals: Evaluation | Sequence[Evaluation] | str | Path | dict, *, characteristics: bool = True,
            taxonomy: bool = True) -> list[dict[str, Any]]:
    """The per-question records (module docstring) of one or more evaluations, a saved
    evaluation file (``--save``) or its parsed JSON."""
    evs = _as_list(evals)
    labels: list[str] = []
    for e in evs:
        for s in e.measures:
            if s.label not in labels:
                labels.append(s.label)
    out = []
    for e in evs:
        for q in e.questions:
            d = q.details or {}
            rec: dict[str, Any] = {"run": e.run, "id": q.id, "outcome": q.outcome, "message": q.message or None}
            for lab in labels:
                rec[lab] = q.scores.get(lab)
            c = q.counts
            rec.update({"tp": c.tp if c else None, "fp": c.fp if c else None, "fn": c.fn if c else None})
            rec.update({
                "question": d.get("question"), "gold_sparql": d.get("gold_sparql"),
                "predicted_sparql": d.get("predicted_sparql"),
                "gold_answer": _compact(d.get("gold_answer")), "predicted_answer": _compact(d.get("predicted_answer")),
            })
            if taxonomy:
                lab = classify(q)
                rec["error"] = lab.label
                rec["error_flags"] = "+".join(lab.flags)
            if characteristics:
                for k, v in question_characteristics(q).items():
                    rec.setdefault(k, v)
            out.append(rec)
    return out


def to_dataframe(evals: Evaluation | Sequence[Evaluation] | str | Path | dict, *, characteristics: bool = True,
                 taxonomy: bool = True):
    """A ``pandas.DataFrame`` of :func:`records` (one row per run and question). Raises
    ImportError with the install command when pandas is missing."""
    try:
        pd = lazy.pandas()
    except ImportError:  # pragma: no cover - exercised by monkeypatching in tests
        raise ImportError("kgqa.to_dataframe needs pandas: pip install pandas (or pip install 'kgqa[pandas]')") from None
    recs = records(evals, characteristics=characteristics, taxonomy=taxonomy)
    columns: list[str] = []
    for r in recs:
        for k in r:
            if k not in columns:
                columns.append(k)
    return pd.DataFrame.from_records(recs, columns=columns)
