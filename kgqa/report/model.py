"""The report table model: a result table as plain data, built once and rendered to every format.

As ranx's ``Report``: :func:`evaluation_report` (one row per run) and :func:`comparison_report`
(means with CIs and significance letters, then the paired tests) compute *what* a table shows
(rows, columns, the best value of each column, significance letters, CIs, n, notes and
signatures) from the evaluations or the comparison; the renderers only *format* it:

- terminal: :meth:`Report.to_grid` (a :class:`~kgqa.report.fit.Grid` that fits any width);
- Markdown: :meth:`Report.to_markdown`; HTML and LaTeX: :func:`kgqa.report.html.report_table`,
  :func:`kgqa.report.latex.report_latex` (they import this module, so it never imports them);
- data: :meth:`Report.to_dict` (JSON-ready, numbers unrounded) and :meth:`Report.to_csv`.

Every number goes through :mod:`kgqa.report.numbers`, so a score has the same digits in every
format. A cell's plain text (:meth:`ReportCell.text`) is ``mean^letters [low, high]``; each
format marks ``best`` and ``letters`` its own way (bold, ``<span class="best">``,
``\\textbf``/``\\textsuperscript``).

>>> from kgqa.report.model import ReportCell
>>> ReportCell(0.31, "score", low=0.25, high=0.375, letters="ab").text()
'0.3100^ab [0.2500, 0.3750]'
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.markup import escape

from kgqa.report import numbers
from kgqa.analyze.letters import system_letters
from kgqa.report.fit import Grid
from kgqa.report.safe import csv_row, md_cell, md_table_cell

__all__ = ["ReportCell", "Report", "ComparisonReport", "evaluation_report", "comparison_report", "as_comparison_report",
           "measure_labels"]

#: kinds of cell and the number format of each
KINDS = ("text", "count", "score", "diff", "p")


@dataclass(frozen=True)
class ReportCell:
    """One cell: ``value`` of ``kind`` (text, count, score, diff or p), with its CI
    (``low``/``high``) when it has one, whether it is the best of its column, the letters of
    the systems it is significantly better than, and the n behind it."""

    value: Any = None
    kind: str = "text"
    low: float | None = None
    high: float | None = None
    best: bool = False
    letters: str = ""
    n: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"a report cell is one of {', '.join(KINDS)}, not {self.kind!r}")

    def number(self, missing: str | None = None) -> str:
        """The value alone, formatted by :mod:`kgqa.report.numbers` (``missing`` replaces the
        kind's own mark for an undefined value)."""
        kw = {} if missing is None else {"missing": missing}
        if self.kind == "score":
            return numbers.score(self.value, **kw)
        if self.kind == "diff":
            return numbers.diff(self.value, **kw)
        if self.kind == "p":
            return numbers.pvalue(self.value, **kw)
        if self.kind == "count":
            return numbers.count(self.value, **kw)
        return "" if self.value is None else str(self.value)

    def ci(self, missing: str = "") -> str:
        """``[low, high]``, or ``missing`` without a CI."""
        return numbers.ci(self.low, self.high, missing=missing)

    def text(self) -> str:
        """Plain text: ``number^letters [low, high]`` (the parts present)."""
        sup = f"^{self.letters}" if self.letters else ""
        return f"{self.number()}{sup} {self.ci()}".strip()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"value": None if numbers.undefined(self.value) else self.value, "kind": self.kind}
        if self.low is not None or self.high is not None:
            d["low"] = None if numbers.undefined(self.low) else self.low
            d["high"] = None if numbers.undefined(self.high) else self.high
        if self.best:
            d["best"] = True
        if self.letters:
            d["letters"] = self.letters
        if self.n is not None:
            d["n"] = self.n
        return d


def _text(value: Any) -> ReportCell:
    return ReportCell("" if value is None else str(value))


@dataclass
class Report:
    """A result table: ``keys`` name the key columns (run, n; repeated in every block of a split
    terminal table), ``columns`` the measure (or test) columns; ``rows[i]`` holds the key cells
    then the column cells. ``notes`` and ``signatures`` are printed under it. ``legend`` maps a
    system to its significance letter; ``row_notes`` is one short line per row (outcome counts)."""

    title: str
    keys: list[str]
    columns: list[str]
    rows: list[list[ReportCell]]
    notes: list[str] = field(default_factory=list)
    signatures: list[str] = field(default_factory=list)
    legend: dict[str, str] = field(default_factory=dict)
    row_notes: list[str] = field(default_factory=list)
    confidence: float | None = None

    @property
    def header(self) -> list[str]:
        return self.keys + self.columns

    def column(self, name: str) -> list[ReportCell]:
        j = self.header.index(name)
        return [r[j] for r in self.rows]

    # renderers: each only formats
    def to_grid(self):
        """A terminal table (:class:`~kgqa.report.fit.Grid`): best bold green, markup escaped."""

        many = len(self.rows) > 1
        cells = [[escape(c.text()) if j < len(self.keys) or not (c.best and many) else f"[bold green]{escape(c.text())}[/]"
                  for j, c in enumerate(r)] for r in self.rows]
        # numbers never wrap: every measure column, and the key columns of counts (n)
        numeric = [h for h, c in zip(self.keys, self.rows[0] if self.rows else []) if c.kind != "text"] + self.columns
        return Grid(escape(self.title), [escape(k) for k in self.keys], [escape(c) for c in self.columns], cells,
                    numeric={escape(h) for h in numeric})

    def to_markdown(self, *, signatures: bool = True, escape: Any = None) -> str:
        """A Markdown table (best bold), then the notes and signatures. Headings and text cells
        go through ``escape`` (default :func:`~kgqa.report.safe.md_cell`: no Markdown from the
        data); numbers only have ``|`` and line breaks made safe."""

        escape = escape or md_cell
        many = len(self.rows) > 1
        lines = ["| " + " | ".join(escape(h) for h in self.header) + " |",
                 "|---|" + "---:|" * (len(self.header) - 1)]
        for r in self.rows:
            cells = [escape(c.text()) if c.kind == "text" else md_table_cell(c.text()) for c in r]
            cells = [f"**{t}**" if c.best and many and t else t for c, t in zip(r, cells)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines += [f"{n}  " for n in self.notes]
        if signatures:
            lines += [f"signature: `{s}`" for s in self.signatures]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every number unrounded."""
        return {"title": self.title, "keys": self.keys, "columns": self.columns,
                "rows": [{h: c.to_dict() for h, c in zip(self.header, r)} for r in self.rows],
                "notes": self.notes, "signatures": self.signatures, "legend": self.legend}

    def to_csv(self) -> str:
        """One line per row, every number unrounded (``repr``), CIs as ``COLUMN low``/``COLUMN high``."""

        with_ci = [any(r[j].low is not None for r in self.rows) for j in range(len(self.header))]
        head: list[str] = []
        for h, ci in zip(self.header, with_ci):
            head += [h, f"{h} low", f"{h} high"] if ci else [h]
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(csv_row(head))

        def raw(v: Any) -> Any:
            return "" if numbers.undefined(v) else repr(v) if isinstance(v, float) else v

        for r in self.rows:
            line: list[Any] = []
            for c, ci in zip(r, with_ci):
                line += [raw(c.value), raw(c.low), raw(c.high)] if ci else [raw(c.value)]
            w.writerow(csv_row(line))
        return buf.getvalue()


def measure_labels(evals: Sequence[Any]) -> list[str]:
    """Every measure label of ``evals``, in first-seen order."""
    labels: list[str] = []
    for e in evals:
        for s in e.measures:
            if s.label not in labels:
                labels.append(s.label)
    return labels


def _best(values: Sequence[Any]) -> list[bool]:
    """The best of a column: the highest defined value (ties all best) when two or more are defined."""
    defined = [v for v in values if not numbers.undefined(v)]
    if len(defined) < 2:
        return [False] * len(values)
    top = max(defined)
    return [not numbers.undefined(v) and v == top for v in values]


def _outcomes(e: Any) -> str:
    return ", ".join(f"{k} {v}" for k, v in e.outcomes.items())


def engine_range_notes(evals: Sequence[Any]) -> list[str]:
    """One line per run whose score depends on the SPARQL engine: how many questions may be
    answered differently by another engine, and each mean measure's range with every such
    question at its lowest and at its highest legal score (``exact``, or a sound ``bound`` where
    the exact range could not be computed). Nothing for a run without a range that differs."""
    notes = []
    for e in evals:
        ed = getattr(e, "engine_dependence", None) or {}
        if ed.get("excluded"):
            notes.append(f"{e.run}: {ed['excluded']} engine-dependent question(s) excluded from the scores.")
            continue
        ranges = {k: v for k, v in (ed.get("aggregate_range") or {}).items() if v and v[0] != v[1]}
        if not ed.get("questions") or not ranges:
            continue
        shown = ", ".join(f"{k} [{numbers.score(lo)}, {numbers.score(hi)}]" for k, (lo, hi) in ranges.items())
        bound = ed.get("with_bound", 0)
        kind = ("exact" if not bound else f"a sound bound: {bound} of {ed.get('with_range', 0)} question ranges "
                "could not be computed exactly")
        notes.append(f"{e.run}: engine-dependent: {ed['questions']} question(s) may get another answer on another "
                     f"SPARQL engine; score range {shown} ({kind}).")
    return notes


def evaluation_report(evals: Sequence[Any], *, title: str | None = None) -> Report:
    """The aggregate table of ``evals`` (scored runs): one row per run (run, n, every measure),
    the best of each measure column marked, their signatures."""
    evals = list(evals)
    labels = measure_labels(evals)
    best = {lab: _best([e.aggregate.get(lab) for e in evals]) for lab in labels}
    rows = [[_text(e.run), ReportCell(len(e.questions), "count")]
            + [ReportCell(e.aggregate.get(lab), "score", best=best[lab][i], n=len(e.questions)) for lab in labels]
            for i, e in enumerate(evals)]
    head = evals[0] if evals else None
    return Report(title or (f"kgqa evaluate · profile {head.profile} · dataset {head.dataset}" if head else "kgqa evaluate"),
                  ["run", "n"], labels, rows, notes=engine_range_notes(evals),
                  signatures=sorted({str(e.signature) for e in evals}), row_notes=[_outcomes(e) for e in evals])


# --------------------------------------------------------------------------- comparison

TESTS = ("bootstrap", "randomization", "wilcoxon", "mcnemar")


@dataclass
class ComparisonReport:
    """A comparison as two tables: ``summary`` (one row per system: mean [CI] and letters per
    measure, the best mean of each measure marked) and ``pairs`` (one row per paired test:
    measure, systems, n, Δ with its CI, p of each test, Holm and BH, W/T/L, the significantly
    better system), with the notes under both."""

    summary: Report
    pairs: Report
    tests: list[str]
    baseline: str | None
    confidence: float
    alpha: float
    text_notes: list[str]
    #: corpus-level measures (not tested): label -> value per system, in the order of the summary
    corpus_only: dict[str, list[float | None]] = field(default_factory=dict)
    #: tests not computed and why, the outcome counts and the signatures (:func:`comparison_facts`)
    facts: list[str] = field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """The notes under the tables (numbers formatted now, at the current digits)."""
        if not self.corpus_only:
            return list(self.text_notes) + self.facts
        systems = [r[0].text() for r in self.summary.rows]
        return self.text_notes + [
            "Corpus-level measures (no per-question values, not tested): "
            + ", ".join(f"{lab} " + "/".join(numbers.score(v) for v in values) for lab, values in self.corpus_only.items())
            + f" ({'/'.join(systems)})."] + self.facts

    @property
    def conf(self) -> int:
        return int(round(self.confidence * 100))

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary.to_dict(), "pairs": self.pairs.to_dict(), "notes": self.notes}


def _comparison_notes(cmp: Any) -> list[str]:
    """The notes that hold no score (the corpus-level values are formatted when rendered)."""
    letters = ", ".join(f"{chr(ord('a') + i) if i < 26 else '?'} = {s}" for i, s in enumerate(cmp.systems))
    notes = [
        f"Means over the questions scored for every run, with {int(cmp.confidence * 100)}% percentile bootstrap "
        f"CIs (seed {cmp.seed}). Superscript letters: the system is significantly better than those systems "
        f"(primary test, Holm-adjusted p < {cmp.alpha}); {letters}.",
        "* Holm / BH: adjusted p of the primary test (McNemar for binary measures, else randomization), "
        f"family = {'all comparisons of all measures' if cmp.family == 'all' else 'the comparisons of one measure'}. "
        "W/T/L: questions where the first system scores higher / equal / lower.",
    ]
    dropped = {s: max(m.dropped.get(s, 0) for m in cmp.measures) for s in cmp.systems} if cmp.measures else {}
    if any(dropped.values()):
        notes.append("Questions left out because another run lacks a score for them: "
                     + ", ".join(f"{s} {n}" for s, n in dropped.items() if n) + ".")
    return notes


def comparison_facts(cmp: Any) -> list[str]:
    """What a reader needs beside the numbers: the tests left out where they cannot be computed
    honestly (with the reason), each system's outcome counts, and the signature(s)."""
    facts = []
    why: dict[str, list[str]] = {}
    for m in cmp.measures:
        for c in m.comparisons:
            if c.untested:
                why.setdefault(c.untested, [])
                if m.measure not in why[c.untested]:
                    why[c.untested].append(m.measure)
    for reason, measures in why.items():
        facts.append(f"No p-value where it cannot be computed honestly ({', '.join(measures)}): {reason}.")
    outcomes = getattr(cmp, "outcomes", {}) or {}
    if outcomes:
        facts.append("Outcomes: " + "; ".join(
            f"{s} " + (", ".join(f"{k} {v}" for k, v in counts.items()) or "none") for s, counts in outcomes.items())
            + ".")
    facts += [f"signature: {sig}" for sig in getattr(cmp, "signatures", []) or []]
    return facts


def comparison_report(cmp: Any) -> ComparisonReport:
    """The tables of a :class:`~kgqa.analyze.comparison.MultiComparison`. The best mean of a
    measure is :meth:`~kgqa.analyze.comparison.MeasureComparison.best` (first system in input
    order on ties) when there are two or more systems."""

    legend = system_letters(cmp.systems)
    conf = int(round(cmp.confidence * 100))
    many = len(cmp.systems) > 1
    best = {m.measure: m.best() for m in cmp.measures}
    rows = []
    for s in cmp.systems:
        row = [_text(s)]
        for m in cmp.measures:
            c = m.ci[s]
            row.append(ReportCell(c.mean, "score", low=c.low, high=c.high, best=many and best[m.measure] == s,
                                  letters=m.letters[s], n=m.n))
        rows.append(row)
    summary = Report(f"Mean [{conf}% CI] per measure (superscript: significantly better than)", ["system"],
                     [m.measure for m in cmp.measures], rows, legend=legend, confidence=cmp.confidence)
    tests = [t for t in TESTS if any(t in c.p for m in cmp.measures for c in m.comparisons)]
    prows = []
    for m in cmp.measures:
        for c in m.comparisons:
            prows.append([_text(m.measure), _text(c.system_a), _text(c.system_b), ReportCell(c.n, "count"),
                          ReportCell(c.diff.mean, "diff", low=c.diff.low, high=c.diff.high, n=c.n),
                          *(ReportCell(c.p.get(t), "p") for t in tests),
                          ReportCell(c.p_holm.get(c.primary), "p"), ReportCell(c.p_bh.get(c.primary), "p"),
                          _text(f"{c.wtl.wins}/{c.wtl.ties}/{c.wtl.losses}"),
                          _text((c.better or "") if c.significant else "")])
    pairs = Report("Paired tests" + (f" against {cmp.baseline}" if cmp.baseline else " (all pairs)"),
                   ["measure", "system_a", "system_b", "n"], ["diff", *tests, "holm", "bh", "wtl", "better"], prows,
                   legend=legend, confidence=cmp.confidence)
    corpus = {lab: [cmp.aggregates[s].get(lab) for s in cmp.systems] for lab in cmp.corpus_only}
    return ComparisonReport(summary, pairs, tests, cmp.baseline, cmp.confidence, cmp.alpha, _comparison_notes(cmp),
                            corpus, comparison_facts(cmp))


def as_comparison_report(cmp: Any) -> ComparisonReport:
    """``cmp`` itself when it is already a :class:`ComparisonReport` (built once, rendered to
    several formats), else :func:`comparison_report` of it."""
    return cmp if isinstance(cmp, ComparisonReport) else comparison_report(cmp)
