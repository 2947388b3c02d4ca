"""Whole reports of evaluations in every format (what ``kgqa report``, ``kgqa compare`` and
``kgqa evaluate --by/--save`` print): the analysis (comparison, breakdowns, paraphrase curves,
error taxonomy) is computed here from the analyze stage and rendered by the renderers of this
package. Text formats come back as a string; ``table`` as a rich renderable to print.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.text import Text
from kgqa.load import jsonio
from kgqa.model.gcpause import during
from kgqa.load.jsonio import write_atomic
from kgqa.model import InputError
from kgqa.score.evaluate import Evaluation
from kgqa.analyze.breakdown import breakdown_table
from kgqa.analyze.characteristics import parse_bins as _parse, to_jsonable
from kgqa.analyze.paraphrase import ParaphraseTable, paraphrase_table
from kgqa.analyze.comparison import compare_evaluations
from kgqa.analyze.taxonomy import taxonomy_counts, taxonomy_left_out
from kgqa.report import analysis as A, latex as L
from kgqa.report.dataframe import records
from kgqa.report.evaluation import SignatureLine, renderables, to_json_chunks, to_markdown
from kgqa.report.html import html_report
from kgqa.report.latex import comparison_latex
from kgqa.report.safe import csv_cell

if TYPE_CHECKING:  # the comparison imports scipy: only what compares evaluations pays for it
    from kgqa.analyze.comparison import MultiComparison

FORMATS = ("table", "md", "latex", "json", "csv", "html")


class Wide:
    """A renderable that wants a console at least ``min_width`` columns wide (comparison tables:
    legible, and identical output, when piped). Printers look for it in ``table`` reports."""

    def __init__(self, renderable: Any, min_width: int = 130):
        self.renderable = renderable
        self.min_width = min_width

    def __rich__(self) -> Any:
        return self.renderable


def parse_bins(specs: Sequence[str] | None) -> dict:
    """``["hops=1,2,3", "length=4"]`` -> bins for numeric breakdown keys (InputError on a bad spec)."""

    try:
        return _parse(list(specs or []))
    except ValueError as e:
        raise InputError("bins", str(e)) from None


def breakdowns(evals: Sequence[Evaluation], by: Sequence[str], bins: dict | None = None, *, seed: int = 0,
               measure: str | None = None, resamples: int = 10_000, paraphrase_curve: bool = False) -> list:
    """One breakdown table per key of ``by`` (see :func:`kgqa.analyze.breakdown.breakdown_table`);
    with ``paraphrase_curve``, ``paraphrase`` (the paraphrase group key) gives the paraphrase rank
    curve (:func:`kgqa.analyze.paraphrase.paraphrase_table`) instead of one row per group."""

    tables = []
    for key in by:
        group = key.removeprefix("groups.")
        if paraphrase_curve and group == "paraphrase":
            pt = paraphrase_table(evals, measure=measure, group_key=group)
            if pt is not None and any(pt.curves.values()):
                tables.append(pt)
                continue
        try:
            tables.append(breakdown_table(evals, key, measure=measure, bins=bins or {}, seed=seed, resamples=resamples))
        except ValueError as e:
            raise InputError("by", str(e)) from None
    return tables


def comparison(evals: Sequence[Evaluation], *, baseline: str | None = None, seed: int = 0,
               measures: Sequence[str] | None = None, family: str = "measure",
               resamples: int = 10_000) -> MultiComparison:
    """:func:`kgqa.analyze.comparison.compare_evaluations` with bad arguments as InputError."""

    try:
        return compare_evaluations(evals, baseline=baseline, seed=seed, measures=measures, family=family,
                                   resamples=resamples, trials=resamples)
    except ValueError as e:
        raise InputError("compare", str(e)) from None


def comparison_text(cmp: MultiComparison, fmt: str) -> Any:
    """A comparison alone: ``md``, ``latex``, ``json`` text, or (``table``) a rich renderable."""

    if fmt == "json":
        return jsonio.dumps(cmp.to_json()) + "\n"
    if fmt == "latex":
        return comparison_latex(cmp)
    if fmt == "md":
        return A.comparison_markdown(cmp)
    return comparison_renderable(cmp)


def comparison_renderable(cmp: MultiComparison) -> list[Any]:
    """The comparison's summary and pair tables and notes, as rich renderables: the signatures
    last, each a :class:`~kgqa.report.evaluation.SignatureLine` (one line, never wrapped or cut
    by kgqa, as under an evaluation's table; print them with ``print_renderable``)."""

    summary, pairs, notes = A.comparison_grids(cmp)  # grids fit the width they are printed at
    label = "signature: "
    body = Group(summary, pairs, *(Text(n, style="dim") for n in notes if not n.startswith(label)))
    return [body, *(SignatureLine(n[len(label):], label) for n in notes if n.startswith(label))]


def breakdown_text(tables: Sequence[Any], fmt: str) -> Any:
    """Breakdown tables as Markdown (``md``) or a rich renderable (``table``)."""

    if fmt == "md":
        return "\n" + "\n".join(A.paraphrase_markdown(t) if isinstance(t, ParaphraseTable) else A.breakdown_markdown(t)
                                 for t in tables)
    if fmt == "table":
        return Group(*(A.paraphrase_rich(t) if isinstance(t, ParaphraseTable) else A.breakdown_rich(t) for t in tables))
    raise InputError("by", f"breakdowns are printed with --format table or md (got {fmt}); "
                           "for other formats save the evaluation (--save) and use kgqa report")


@during
def save_evaluations(evals: Sequence[Evaluation], path: Path) -> None:
    """Write evaluations as JSON for ``kgqa report`` / ``kgqa show`` (``{"runs": [...]}``, one
    run too), atomically."""

    write_atomic(Path(path), _then_newline(to_json_chunks(list(evals), scratch=Path(path).parent)))


def _then_newline(chunks):
    yield from chunks
    yield "\n"


def _json(evals: list[Evaluation], cmp: MultiComparison | None, bts: list, pt: Any) -> str:
    doc: dict = {"runs": [e.to_json() for e in evals]}
    if cmp is not None:
        doc["comparison"] = cmp.to_json()
    doc["taxonomy"] = taxonomy_counts(evals)
    if left_out := taxonomy_left_out(evals):
        doc["taxonomy_left_out"] = left_out
    if bts:
        doc["breakdowns"] = [
            {"key": b.key, "measure": b.measure, "bins": b.bins,
             "cells": {r: [{"key": to_jsonable(c.key), "n": c.n, "mean": to_jsonable(c.mean),
                            "low": to_jsonable(c.low), "high": to_jsonable(c.high)} for c in b.cells[r].values()]
                       for r in b.runs}}
            for b in bts
        ]
    if pt is not None:
        doc["paraphrase"] = {"group_key": pt.group_key, "measure": pt.measure,
                             "curves": {r: [{"rank": p.rank, "mean": to_jsonable(p.mean), "groups": p.n_groups,
                                             "ratio_to_rank1": to_jsonable(p.ratio_to_rank1)} for p in c]
                                        for r, c in pt.curves.items()}}
    return jsonio.dumps(doc) + "\n"


def _csv(evals: list[Evaluation]) -> str:
    recs = records(evals)
    cols: list[str] = []
    for r in recs:
        for k in r:
            if k not in cols:
                cols.append(k)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in recs:
        w.writerow({k: csv_cell("" if v is None else repr(v) if isinstance(v, float) else v) for k, v in r.items()})
    return buf.getvalue()


def _latex(evals: list[Evaluation], cmp: MultiComparison | None, bts: list, pt: Any) -> str:
    parts = [L.evaluations_latex(evals)]
    if cmp is not None:
        parts.append(L.comparison_latex(cmp))
    parts += [L.breakdown_latex(b) for b in bts]
    if pt is not None:
        parts.append(L.paraphrase_latex(pt))
    return "\n".join(parts)


def _markdown(evals: list[Evaluation], cmp: MultiComparison | None, bts: list, pt: Any) -> str:
    parts = ["## Scores", "", to_markdown(evals)]
    if cmp is not None:
        parts.append(A.comparison_markdown(cmp))
    parts += [A.breakdown_markdown(b) for b in bts]
    if pt is not None:
        parts.append(A.paraphrase_markdown(pt))
    parts.append(A.taxonomy_markdown(taxonomy_counts(evals), taxonomy_left_out(evals)))
    return "\n".join(parts)


def _table(evals: list[Evaluation], cmp: MultiComparison | None, bts: list, pt: Any) -> list[Any]:
    parts: list[Any] = list(renderables(evals))
    if cmp is not None:
        parts += comparison_renderable(cmp)
    parts += [A.breakdown_rich(b) for b in bts]
    if pt is not None:
        parts.append(A.paraphrase_rich(pt))
    parts.append(A.taxonomy_rich(taxonomy_counts(evals), taxonomy_left_out(evals)))
    return parts


@during
def render_report(evals: Sequence[Evaluation], fmt: str, *, by: Sequence[str] = (), bins: dict | None = None,
                  baseline: str | None = None, seed: int = 0, measure: str | None = None,
                  compare_measures: Sequence[str] | None = None, family: str = "measure",
                  resamples: int = 10_000, full_json: str | None = None) -> Any:
    """The report of ``evals`` in ``fmt`` (``md``, ``latex``, ``json``, ``csv``, ``html`` text;
    ``table``: a list of rich renderables, :class:`Wide` ones to print at least that wide). With
    two or more evaluations it includes the comparison."""

    if fmt not in FORMATS:
        raise InputError("format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    if resamples < 1:
        raise InputError("resamples", f"expected a positive integer, got {resamples}")
    evals = list(evals)
    if not evals:
        raise InputError("report", "no evaluation to report")
    if fmt == "csv":  # per-question rows only
        return _csv(evals)
    cmp = comparison(evals, baseline=baseline, seed=seed, measures=compare_measures, family=family,
                     resamples=resamples) if len(evals) > 1 else None
    if fmt == "html":  # html_report makes its own breakdowns and paraphrase table

        try:
            return html_report(evals, by=by or None, bins=bins or {}, measure=measure, baseline=baseline, seed=seed,
                               comparison=cmp, resamples=resamples, full_json=full_json)
        except ValueError as e:
            raise InputError("report", str(e)) from None
    bts = breakdowns(evals, by, bins, seed=seed, measure=measure, resamples=resamples)
    pt = paraphrase_table(evals, measure=measure)
    if pt is not None and not any(pt.curves.values()):
        pt = None
    if fmt == "json":
        return _json(evals, cmp, bts, pt)
    if fmt == "latex":
        return _latex(evals, cmp, bts, pt)
    if fmt == "md":
        return _markdown(evals, cmp, bts, pt)
    return _table(evals, cmp, bts, pt)
