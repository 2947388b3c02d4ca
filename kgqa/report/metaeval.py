"""Renderers of the measure-validation results (``kgqa sensitivity``, ``kgqa axioms``): Markdown,
LaTeX and rich renderables. They read the result objects of :mod:`kgqa.metaeval` by their
fields (no import of the validate package: report is a flow stage)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from kgqa.report import numbers
from kgqa.report.fit import Grid
from kgqa.report.latex import escape


def _cell(row, m: str, spread: bool) -> str:
    v = row.scores[m]
    if v != v:  # NaN
        return "-"
    text = numbers.value(v)
    if spread and row.transform != "T0" and m in row.spread:
        sd, lo, hi = row.spread[m]
        if sd == sd and hi - lo > 0:
            text += f" ±{numbers.value(sd)}"
    return text + row.marks.get(m, "")


def _label(row) -> str:
    return "T0" if row.transform == "T0" else f"{row.transform} {row.rate * 100:g}%"


def sensitivity_markdown(table) -> str:
    lines = ["| Transf. | " + " | ".join(table.measures) + " |",
             "|---|" + "---:|" * len(table.measures)]
    for r in table.rows:
        lines.append(f"| {_label(r)} | " + " | ".join(_cell(r, m, True) for m in table.measures) + " |")
    lines.append("")
    lines.append(f"Mean over seeds {', '.join(map(str, table.seeds))} (± population std). † drop >= 0.10 x rate, "
                 "‡ drop >= 0.50 x rate, relative to T0.")
    lines += table.notes
    lines.append(f"signature: {table.signature}")
    return "\n".join(lines) + "\n"


def sensitivity_latex(table) -> str:
    cols = "l" + "r" * len(table.measures)
    lines = ["\\begin{table}", "\\centering", f"\\begin{{tabular}}{{{cols}}}", "\\toprule",
             "Transf. & " + " & ".join(escape(m) for m in table.measures) + " \\\\", "\\midrule"]
    for r in table.rows:
        cells = []
        for m in table.measures:
            v = r.scores[m]
            c = numbers.score(v, missing="--")
            if r.transform != "T0" and m in r.spread and r.spread[m][2] - r.spread[m][1] > 0:
                c += f"\\,{{\\scriptsize$\\pm${numbers.score(r.spread[m][0])}}}"
            mk = r.marks.get(m, "")
            c += {"†": "$^{\\dagger}$", "‡": "$^{\\ddagger}$"}.get(mk, "")
            cells.append(c)
        lbl = "$T_0$" if r.transform == "T0" else (f"$T_{{{r.transform[1:]},{r.rate * 100:g}\\%}}$"
                                                   if r.transform[:1] == "T" and r.transform[1:].isdigit()
                                                   else f"{escape(r.transform)} {r.rate * 100:g}\\%")
        lines.append(lbl + " & " + " & ".join(cells) + " \\\\")
        if r.transform == "T0":
            lines.append("\\midrule")
    lines += ["\\bottomrule", "\\end{tabular}",
              f"\\caption{{Sensitivity to synthetic degradations (mean over {len(table.seeds)} seeds). "
              "$^{\\dagger}$: drop $\\geq 0.10\\times$ rate, $^{\\ddagger}$: drop $\\geq 0.50\\times$ rate, "
              "relative to $T_0$.}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def sensitivity_renderables(table) -> list[Any]:
    """The sensitivity table, its legend, notes and signature as rich renderables."""
    measures = list(table.measures)
    t = Grid("sensitivity to synthetic degradations", ["transf."], measures,
             [[_label(r), *[_cell(r, m, True) for m in measures]] for r in table.rows], numeric=set(measures),
             transpose=False)
    return [t, Text(f"mean over seeds {', '.join(map(str, table.seeds))} (± population std); † drop >= 0.10 x rate, "
                    "‡ drop >= 0.50 x rate, relative to T0"),
            *(Text(n) for n in table.notes), Text(f"signature: {table.signature}")]


def axioms_markdown(report) -> str:
    lines = ["| Measure | A1 | A2 | A3 | Instance level | Partial reward | Table 1 (A1 A2 A3) |",
             "|---|:-:|:-:|:-:|:-:|:-:|:-:|"]
    for m in report.measures:
        paper = " ".join(m.paper[:3]) if m.paper else "-"
        agree = "" if m.agrees_with_paper is None else (" (agrees)" if m.agrees_with_paper else " (differs)")
        lines.append(f"| {m.measure} | " + " | ".join(m.symbols) + f" | {'●' if m.instance_level else '○'} | "
                     f"{'●' if m.partial_reward else '○'} | {paper}{agree} |")
    lines.append("")
    lines.append("● satisfied, ◐ only A1.a, ◑ partial (never reversed, strict for the gold query), ○ violated.")
    for m in report.measures:
        for a, v in m.verdicts.items():
            if v.verdict == "satisfied" and not v.excused:
                continue
            line = f"- {m.measure} {a}: {v.verdict} ({v.detail}; {v.strict} strict, {v.ties} ties, {v.reversed} reversed"
            line += f", {v.excused} excused)" if v.excused else ")"
            if v.counterexample is not None:
                ce = v.counterexample
                line += (f". Counterexample: {ce.explain(m.measure)}. Better: `{_one_line(ce.better.query)}`; "
                         f"worse: `{_one_line(ce.worse.query)}`")
            if v.excused_example is not None:
                line += f". Excused (paper reading): {v.excused_example.explain(m.measure)}"
            lines.append(line)
    lines.append("")
    lines.append(f"reading: {report.reading}; pairs: " + ", ".join(f"{a} {n}" for a, n in report.pairs.items()))
    lines.append(f"signature: {report.signature}")
    return "\n".join(lines) + "\n"


def _one_line(q: str | None) -> str:
    return "(none)" if q is None else " ".join(q.split())


def axioms_latex(report) -> str:
    lines = ["\\begin{table}", "\\centering", "\\begin{tabular}{lccccc}", "\\toprule",
             "Measure & A1 & A2 & A3 & Instance level & Partial reward \\\\", "\\midrule"]
    sym = {"●": "$\\bullet$", "○": "$\\circ$", "◐": "$\\bullet^{a}$", "◑": "$\\frac{1}{2}$", "-": "--"}
    for m in report.measures:
        lines.append(escape(m.measure) + " & " + " & ".join(sym[s] for s in m.symbols) + " & "
                     + ("$\\bullet$" if m.instance_level else "$\\circ$") + " & "
                     + ("$\\bullet$" if m.partial_reward else "$\\circ$") + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}",
              "\\caption{Axioms: $\\bullet$ satisfied, $\\bullet^{a}$ only A1.a, $\\frac{1}{2}$ partial, "
              "$\\circ$ violated.}", "\\end{table}"]
    return "\n".join(lines) + "\n"




def axioms_renderables(report) -> list[Any]:
    """The axioms table and the Markdown legend/details (as plain text) as rich renderables."""
    t = Table(title=f"axioms ({report.reading} reading)")
    for c in ("measure", "A1", "A2", "A3", "instance level", "partial reward", "Table 1"):
        t.add_column(c)
    for m in report.measures:
        paper = " ".join(m.paper[:3]) if m.paper else "-"
        t.add_row(m.measure, *m.symbols, "●" if m.instance_level else "○", "●" if m.partial_reward else "○", paper)
    text = axioms_markdown(report)
    return [t, Text(text[text.index("● satisfied"):])]
