"""A stored experiment as a file: JSON (the experiment record and its evaluation), CSV
(per-question rows), Markdown, LaTeX, or the self-contained HTML report. Rendering is the
report stage's (:mod:`kgqa.report`), the same as ``kgqa report``."""

from __future__ import annotations

import json
from dataclasses import replace
from html import escape

from kgqa.store.store import Experiment
from kgqa.analyze.taxonomy import taxonomy_counts, taxonomy_left_out
from kgqa.report import evaluation as R
from kgqa.report.analysis import taxonomy_markdown
from kgqa.report.html import html_report
from kgqa.report.latex import evaluations_latex
from kgqa.report.safe import md_cell

#: format -> (file extension, media type)
FORMATS: dict[str, tuple[str, str]] = {
    "json": ("json", "application/json"),
    "csv": ("csv", "text/csv"),
    "md": ("md", "text/markdown"),
    "latex": ("tex", "application/x-latex"),
    "html": ("html", "text/html"),
}


def export(e: Experiment, fmt: str, *, evaluation=None, resamples: int = 2_000) -> str:
    """The text of experiment ``e`` in ``fmt`` (one of :data:`FORMATS`)."""

    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; one of: {', '.join(FORMATS)}")
    if fmt == "json":
        doc = {"experiment": e.summary(), "evaluation": e.evaluation_json()}
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    ev = evaluation if evaluation is not None else e.evaluation()
    if fmt == "csv":
        return R.to_csv([ev])
    if fmt == "md":  # names are the uploader's: no raw HTML from them reaches a Markdown renderer

        ev = replace(ev, run=escape(ev.run, quote=False))  # entities: literal text in every renderer
        return (f"# {md_cell(ev.run)} on {md_cell(ev.dataset)}\n\nExperiment `{e.id}`, created {e.created}.\n\n"
                + R.to_markdown([ev]) + "\n" + taxonomy_markdown(taxonomy_counts([ev]), taxonomy_left_out([ev])))
    if fmt == "latex":
        return evaluations_latex([ev])

    return html_report([ev], resamples=resamples)
