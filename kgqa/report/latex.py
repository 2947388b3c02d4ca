"""LaTeX table fragments (booktabs) for papers: aggregate scores, system comparisons,
breakdowns and paraphrase curves.

Each function returns a ``table`` environment with a ``tabular`` using ``\\toprule``,
``\\midrule`` and ``\\bottomrule`` (``\\usepackage{booktabs}`` in the preamble; nothing else
is needed). In every score column the best value is bold (``\\textbf``; ties all bold);
significance marks are superscript letters (``\\textsuperscript{ab}``: the system is
significantly better than systems a and b, letters as in :mod:`kgqa.analyze.comparison`).
Numbers come from :mod:`kgqa.report.numbers` (the digits of every other format; ``--`` where
undefined); all text, the numbers' ``<`` included, goes through :func:`escape`.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgqa.analyze.breakdown import BreakdownTable
from kgqa.analyze.paraphrase import ParaphraseTable
from kgqa.analyze.comparison import MultiComparison
from kgqa.report import numbers
from kgqa.report.model import ComparisonReport, Report, ReportCell, as_comparison_report, evaluation_report
from kgqa.score.evaluate import Evaluation

__all__ = ["escape", "evaluations_latex", "comparison_latex", "breakdown_latex", "paraphrase_latex", "table",
           "report_latex"]

_ESCAPES = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "Δ": r"$\Delta$",
}


def escape(text: object) -> str:
    """Text safe inside a LaTeX tabular cell: the ten special characters (``\\ & % $ # _ { } ~
    ^``) and ``< >`` are written as commands."""
    return "".join(_ESCAPES.get(ch, ch) for ch in str(text))


MISSING = "--"


def _num(v: float | None, digits: int | None = None) -> str:
    return numbers.score(v, digits, missing=MISSING)


def _ci(low: float | None, high: float | None) -> str:
    """A CI in small type after a number (nothing when undefined)."""
    text = numbers.ci(low, high)
    return r" {\scriptsize" + text + "}" if text else ""


def table(header: Sequence[str], rows: Sequence[Sequence[str]], *, align: str | None = None, caption: str | None = None,
          label: str | None = None, caption_tex: str | None = None) -> str:
    """A ``table`` environment with a booktabs ``tabular``; ``header`` and ``rows`` are already
    LaTeX (escaped by the caller); ``caption`` is plain text (escaped here), ``caption_tex``
    LaTeX used as is."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = [r"\begin{table}[t]", r"\centering"]
    if caption_tex:
        lines.append(r"\caption{" + caption_tex + "}")
    elif caption:
        lines.append(r"\caption{" + escape(caption) + "}")
    if label:
        lines.append(r"\label{" + label + "}")
    lines += [r"\begin{tabular}{" + align + "}", r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(r) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def cell_latex(c: ReportCell, *, ci: bool = True) -> str:
    """One cell of a :class:`~kgqa.report.model.Report`: the number (``\\textbf`` when best),
    its letters as a superscript, its CI in small type; text escaped."""
    if c.kind == "text":
        return escape(c.text())
    t = escape(c.number(missing=MISSING))
    t = r"\textbf{" + t + "}" if c.best else t
    if c.letters:
        t += r"\textsuperscript{" + escape(c.letters) + "}"
    return t + (_ci(c.low, c.high) if ci else "")


_HEADINGS = {"run": "Run", "n": "$n$", "system": "System"}


def report_latex(report: Report, *, caption: str | None = None, label: str | None = None, caption_tex: str | None = None,
                 ci: bool = True) -> str:
    """A :class:`~kgqa.report.model.Report` as a booktabs table (a system is named with its
    letter when the report has a legend)."""
    rows = []
    for r in report.rows:
        cells = [cell_latex(c, ci=ci) for c in r]
        if report.legend and r[0].text() in report.legend:
            cells[0] += f" ({report.legend[r[0].text()]})"
        rows.append(cells)
    head = [_HEADINGS.get(h) or escape(h) for h in report.keys] + [escape(h) for h in report.columns]
    out = table(head, rows, caption=caption, label=label, caption_tex=caption_tex)
    if report.notes and not report.legend:  # an evaluation's notes (engine-dependent ranges) go with its table
        out += "\n\\begin{flushleft}\\footnotesize\n" + "\\\\\n".join(escape(n) for n in report.notes) \
            + "\n\\end{flushleft}\n"
    return out


def evaluations_latex(evals: Sequence[Evaluation], *, caption: str | None = None, label: str | None = None) -> str:
    """Aggregate scores: one row per run, one column per measure label, best bold."""
    cap = caption or f"Scores on {evals[0].dataset} (profile {evals[0].profile})."
    return report_latex(evaluation_report(evals), caption=cap, label=label)


def comparison_latex(cmp: MultiComparison | ComparisonReport, *, caption: str | None = None, label: str | None = None,
                     ci: bool = True) -> str:
    """Systems x measures: mean (best bold per column) with significance superscripts and,
    when ``ci``, the bootstrap CI in small type; then a table of the paired tests."""
    cr = as_comparison_report(cmp)
    cap = escape(caption) if caption else (
        f"Mean per question with {cr.conf}\\% bootstrap CIs. Superscripts: significantly better than the lettered "
        f"system (Holm-adjusted $p<{cr.alpha}$). Best in bold."
    )
    out = report_latex(cr.summary, caption_tex=cap, label=label, ci=ci)
    names = {"bootstrap": "$p_{\\mathrm{boot}}$", "randomization": "$p_{\\mathrm{rand}}$",
             "wilcoxon": "$p_{\\mathrm{W}}$", "mcnemar": "$p_{\\mathrm{McN}}$"}
    head = ["Measure", "Comparison", "$\\Delta$", f"{cr.conf}\\% CI"] + [names[t] for t in cr.tests] + ["Holm", "BH", "W/T/L"]
    prow = []
    for r in cr.pairs.rows:
        measure, a, b, _n, d, *ps, wtl, _better = r
        prow.append([escape(measure.text()), f"{escape(a.text())} vs {escape(b.text())}", escape(d.number(missing=MISSING)),
                     d.ci(missing=MISSING)] + [escape(p.number(missing=MISSING)) for p in ps] + [escape(wtl.text())])
    out += "\n" + table(head, prow, align="ll" + "r" * (len(head) - 2),
                        caption="Paired tests (Holm, BH: adjusted p of the primary test).")
    if cr.facts:  # tests left out and why, outcome counts, signatures: printed with the tables
        out += ("\n\\begin{flushleft}\\footnotesize\n" + "\\\\\n".join(escape(f) for f in cr.facts)
                + "\n\\end{flushleft}\n")
    return out


def breakdown_latex(bt: BreakdownTable, *, caption: str | None = None, label: str | None = None) -> str:
    """Cells of a breakdown: n and mean [CI] per run; best mean per key row is not marked
    (rows are different populations), best per run column is."""
    header = [escape(bt.key)]
    for r in bt.runs:
        header += [f"{escape(r)} $n$", escape(f"{r} {bt.measure}") if len(bt.runs) > 1 else escape(bt.measure)]
    rows = []
    for k in bt.keys:
        row = [escape(k)]
        for r in bt.runs:
            c = bt.cells[r].get(k)
            if c is None:
                row += ["0", "--"]
            else:
                row += [numbers.count(c.n), _num(c.mean) + _ci(c.low, c.high)]
        rows.append(row)
    cap = caption or f"{bt.measure} by {bt.key} (mean with bootstrap CI)."
    return table(header, rows, caption=cap, label=label)


def paraphrase_latex(pt: ParaphraseTable, *, caption: str | None = None, label: str | None = None) -> str:
    """Mean score at each paraphrase rank and its ratio to rank 1, per run."""
    header = ["Rank"]
    for r in pt.runs:
        header += [f"{escape(r)} groups", f"{escape(r)} mean", f"{escape(r)} ratio"]
    depth = max((len(c) for c in pt.curves.values()), default=0)
    rows = []
    for k in range(depth):
        row = [str(k + 1)]
        for r in pt.runs:
            c = pt.curves[r]
            row += ([numbers.count(c[k].n_groups), _num(c[k].mean), _num(c[k].ratio_to_rank1, 3)]
                    if k < len(c) else ["0", MISSING, MISSING])
        rows.append(row)
    cap = caption or f"Paraphrase robustness: mean {pt.measure} of the k-th best paraphrase ({pt.group_key} groups)."
    return table(header, rows, caption=cap, label=label)
