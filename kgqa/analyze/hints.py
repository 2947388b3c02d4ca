"""Hints that make a surprising score explain itself, printed once per evaluation.

Today: questions the tuple view scores wrong although one column of the system's table is
exactly the gold answer (an IRI plus its label, say). Official tools flatten answers to values,
so users comparing with published numbers see far lower scores without knowing why.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgqa.analyze.taxonomy import classify
from kgqa.score.evaluate import ScoredRun


def extra_column_ids(e: ScoredRun) -> list[str]:
    """Ids of questions labelled ``extra_columns`` by the error taxonomy."""
    return [q.id for q in e.questions if q.scores and classify(q).label == "extra_columns"]


def hints(evals: Sequence[ScoredRun]) -> list[str]:
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
