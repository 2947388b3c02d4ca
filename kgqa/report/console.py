"""The command line's console rendering: rich tables and renderables of evaluations,
comparisons, questions, measures, profiles, datasets, audits and stored experiments.

``kgqa.api`` holds the public library API; what only a terminal needs lives here, and the
command line (:mod:`kgqa.cli`) imports it directly (the one kgqa stage it may import besides
the API: it renders output). Each function formats; none computes a score.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kgqa.model import InputError
from kgqa.score.evaluate import Evaluation
from kgqa.report import analysis, audit, evaluation, listings, tables
from kgqa.report.analysis import print_question  # one question in full, its taxonomy label by default
from kgqa.report.output import write_output
from kgqa.report.render import Wide, breakdown_text, breakdowns, parse_bins

__all__ = ["print_evaluations", "breakdown_report", "print_comparison", "print_rendered", "print_question", "print_measures", "print_profiles", "datasets_table", "audit_renderables", "experiments_table", "experiment_table",
           "write_output"]


def print_evaluations(console: Any, evaluations: Sequence[Evaluation], *, per_question: bool = False) -> None:
    """The evaluations' terminal tables (scores, outcomes, signature; ``per_question``: every
    question too) on a rich ``console``."""
    evaluation.terminal(console, list(evaluations), per_question=per_question)


def breakdown_report(evaluations: Sequence[Evaluation], by: Sequence[str], bins: Sequence[str] | None = None,
                     fmt: str = "md", *, seed: int = 0) -> Any:
    """Scores broken down by each characteristic of ``by`` (``bins``: ``NAME=e0,e1,...`` or
    ``NAME=Q`` for a numeric key), with the paraphrase curve: Markdown text, or (``table``) a
    rich renderable."""
    return breakdown_text(breakdowns(list(evaluations), by, parse_bins(bins), seed=seed, paraphrase_curve=True), fmt)


def print_comparison(console: Any, comparison: Any) -> None:
    """A comparison's tables (a :class:`kgqa.Comparison`) on ``console``, fitted to its width (split, never squeezed)."""
    analysis.print_comparison(console, comparison.result)


def print_rendered(console: Any, rendered: Any, wide: Callable[[], Any] | None = None) -> None:
    """Print what the ``render_*`` functions give for ``table`` (a renderable or a list of them)
    on ``console``; the ones that want a wide console on ``wide()``."""
    for r in rendered if isinstance(rendered, list) else [rendered]:
        evaluation.print_renderable(wide() if wide is not None and isinstance(r, Wide) else console, r)


def print_measures(console: Any, names: Sequence[str] = ()) -> None:
    """The registered measures, one line each; with ``names``, their whole definitions."""
    try:
        listings.print_measures(console, list(names))
    except ValueError as e:
        raise InputError("measures", str(e)) from None


def print_profiles(console: Any, names: Sequence[str] = ()) -> None:
    """The scoring profiles, one row each; with ``names``, what each selects and its signature."""
    listings.print_profiles(console, list(names))


def datasets_table() -> Any:
    """The registered datasets (``kgqa datasets list``) as a rich renderable: name, items,
    format, where their files resolve, description."""
    return tables.registry_table()


def audit_renderables(report: Any, show_all: bool = False) -> list[Any]:
    """The terminal rendering of an :func:`audit` report (rich renderables): header, verdict
    counts and the table of problem queries (every query with ``show_all``)."""
    return audit.audit_renderables(report, show_all)


def experiments_table(experiments: Sequence[Any]) -> Any:
    """``kgqa experiments list``: one row per stored experiment (a rich renderable)."""
    return tables.experiments_grid(experiments)


def experiment_table(summary: Mapping[str, Any]) -> Any:
    """``kgqa experiments show``: one experiment's summary, one key per row (a rich table)."""
    return tables.experiment_table(summary)
