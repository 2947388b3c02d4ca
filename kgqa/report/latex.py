"""LaTeX table fragments (booktabs) for papers: aggregate scores, system comparisons,
breakdowns and paraphrase curves.

Each function returns a ``table`` environment with a ``tabular`` using ``\\toprule``,
``\\midrule`` and ``\\bottomrule`` (``\\usepackage{booktabs}`` in the preamble; nothing else
is needed). In every score column the best value is bold (``\\textbf``; ties all bold);
significance marks are superscript letters (``\\textsuperscript{ab}``: the system is
significantly better than systems a and b, letters as in :mod:`kgqa.analyze.comparison`).
All text from the data goes through :func:`escape`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kgqa.analyze.characteristics import BreakdownTable, ParaphraseTable
from kgqa.analyze.comparison import MultiComparison
from kgqa.score.evaluate import ScoredRun

__all__ = ["escape", "evaluations_latex", "comparison_latex", "breakdown_latex", "paraphrase_latex", "table"]

_ESCAPES = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "Δ": r"$\Delta$",
}


def escape(text: object) -> str:
    """Text safe inside a LaTeX tabular cell: the ten special characters (``\\ & % $ # _ { } ~
    ^``) and ``< >`` are written as commands."""
    return "".join(_ESCAPES.get(ch, ch) for ch in str(text))


def _nan(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _num(v: float | None, digits: int = 4) -> str:
    return "--" if _nan(v) else f"{v:.{digits}f}"


def _p(p: float | None) -> str:
    if _nan(p):
        return "--"
    return r"\textless{}0.0001" if p < 1e-4 else f"{p:.4f}"


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


def _bold_best(values: Sequence[float | None], texts: Sequence[str]) -> list[str]:
    defined = [v for v in values if not _nan(v)]
    if len(defined) < 2:
        return list(texts)
    best = max(defined)
    return [r"\textbf{" + t + "}" if (not _nan(v) and v == best) else t for v, t in zip(values, texts)]


def evaluations_latex(evals: Sequence[ScoredRun], *, caption: str | None = None, label: str | None = None) -> str:
    """Aggregate scores: one row per run, one column per measure label, best bold."""
    labels: list[str] = []
    for e in evals:
        for s in e.measures:
            if s.label not in labels:
                labels.append(s.label)
    cols = [_bold_best([e.aggregate.get(lab) for e in evals], [_num(e.aggregate.get(lab)) for e in evals]) for lab in labels]
    rows = [[escape(e.run), str(len(e.questions))] + [cols[j][i] for j in range(len(labels))] for i, e in enumerate(evals)]
    cap = caption or f"Scores on {evals[0].dataset} (profile {evals[0].profile})."
    return table(["Run", "$n$"] + [escape(lab) for lab in labels], rows, caption=cap, label=label)


def comparison_latex(cmp: MultiComparison, *, caption: str | None = None, label: str | None = None,
                     ci: bool = True) -> str:
    """Systems x measures: mean (best bold per column) with significance superscripts and,
    when ``ci``, the bootstrap CI in small type; then a table of the paired tests."""
    cols = []
    for m in cmp.measures:
        means = [m.ci[s].mean for s in cmp.systems]
        texts = _bold_best(means, [_num(v) for v in means])
        cells = []
        for s, t in zip(cmp.systems, texts):
            cell = t + (r"\textsuperscript{" + m.letters[s] + "}" if m.letters[s] else "")
            c = m.ci[s]
            if ci and not _nan(c.low):
                cell += r" {\scriptsize[" + f"{c.low:.3f}, {c.high:.3f}" + "]}"
            cells.append(cell)
        cols.append(cells)
    letters = [chr(ord("a") + i) if i < 26 else str(i) for i in range(len(cmp.systems))]
    rows = [[f"{escape(s)} ({letters[i]})"] + [cols[j][i] for j in range(len(cmp.measures))] for i, s in enumerate(cmp.systems)]
    conf = int(round(cmp.confidence * 100))
    cap = escape(caption) if caption else (
        f"Mean per question with {conf}\\% bootstrap CIs. Superscripts: significantly better than the lettered "
        f"system (Holm-adjusted $p<{cmp.alpha}$). Best in bold."
    )
    out = table(["System"] + [escape(m.measure) for m in cmp.measures], rows, caption_tex=cap, label=label)
    # paired tests
    tests = [t for t in ("bootstrap", "randomization", "wilcoxon", "mcnemar")
             if any(t in c.p for m in cmp.measures for c in m.comparisons)]
    names = {"bootstrap": "$p_{\\mathrm{boot}}$", "randomization": "$p_{\\mathrm{rand}}$",
             "wilcoxon": "$p_{\\mathrm{W}}$", "mcnemar": "$p_{\\mathrm{McN}}$"}
    head = ["Measure", "Comparison", "$\\Delta$", f"{conf}\\% CI"] + [names[t] for t in tests] + ["Holm", "BH", "W/T/L"]
    prow = []
    for m in cmp.measures:
        for c in m.comparisons:
            prow.append([escape(m.measure), f"{escape(c.system_a)} vs {escape(c.system_b)}", f"{c.diff.mean:+.4f}",
                         "--" if _nan(c.diff.low) else f"[{c.diff.low:.3f}, {c.diff.high:.3f}]"]
                        + [_p(c.p.get(t)) for t in tests]
                        + [_p(c.p_holm.get(c.primary)), _p(c.p_bh.get(c.primary)), f"{c.wtl.wins}/{c.wtl.ties}/{c.wtl.losses}"])
    out += "\n" + table(head, prow, align="ll" + "r" * (len(head) - 2),
                        caption="Paired tests (Holm, BH: adjusted p of the primary test).")
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
                ci = "" if _nan(c.low) else r" {\scriptsize[" + f"{c.low:.3f}, {c.high:.3f}" + "]}"
                row += [str(c.n), _num(c.mean) + ci]
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
            row += [str(c[k].n_groups), _num(c[k].mean), _num(c[k].ratio_to_rank1, 3)] if k < len(c) else ["0", "--", "--"]
        rows.append(row)
    cap = caption or f"Paraphrase robustness: mean {pt.measure} of the k-th best paraphrase ({pt.group_key} groups)."
    return table(header, rows, caption=cap, label=label)
