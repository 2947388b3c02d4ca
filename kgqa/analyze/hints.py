"""Hints that make a surprising score explain itself, printed once per evaluation.

Today: questions the tuple view scores wrong although one column of the system's table is
exactly the gold answer (an IRI plus its label, say). Official tools flatten answers to values,
so users comparing with published numbers see far lower scores without knowing why.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgqa.analyze.taxonomy import classify
from kgqa.model import TableAnswer
from kgqa.score.evaluate import QuestionList, Evaluation


def extra_column_ids(e: Evaluation) -> list[str]:
    """Ids of questions labelled ``extra_columns`` by the error taxonomy. Only a predicted table
    of two or more columns can be: the others are passed over without classifying them (or
    making their objects: a million questions took 24 s and 0.3 GB for none), and so is every
    question of a streamed evaluation, whose records hold no gold answer to find in a column."""
    if getattr(e, "streamed", False):
        return []
    qs = e.questions
    if isinstance(qs, QuestionList):
        wide = [i for i in range(len(qs)) if _wide(qs.predicted_answer(i))]
        candidates = (qs[i] for i in wide)
    else:
        candidates = (q for q in qs if _wide(q.record.predicted_answer))
    return [q.id for q in candidates if q.scores and classify(q).label == "extra_columns"]


def _wide(answer: object) -> bool:
    return isinstance(answer, TableAnswer) and len(answer.variables) >= 2


def hints(evals: Sequence[Evaluation]) -> list[str]:
    """One line per thing worth knowing about these evaluations, each with its fix."""
    out = []
    for e in evals:
        if e.signature.get("view") != "tuples":
            continue
        ids = extra_column_ids(e)
        if ids:
            shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
            out.append(
                f"{e.run}: {len(ids)} question(s) ({shown}) hold the gold answer in one column plus extra "
                "columns (labels, names); the tuple view counts them wrong. To compare values as the "
                "official tools do: --view values, or the benchmark's profile (-p text2sparql, -p gerbil, -p qald)."
            )
    return out
