"""Terminal (rich) and Markdown renderings of analyses: system comparisons, breakdowns,
paraphrase rank curves, error taxonomy counts, and one question in full (``kgqa show``).

Number formats (shared by every report format): scores with 4 decimals, CIs as
``[low, high]`` with 3 decimals, p-values with 4 decimals or ``<0.0001``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from kgqa.analyze.characteristics import BreakdownTable, ParaphraseTable, question_characteristics
from kgqa.analyze.comparison import MultiComparison
from kgqa.analyze.taxonomy import ErrorLabel
from kgqa.score.evaluate import ScoredRun, QuestionScore
from kgqa.report.fit import Grid, fmt_number, print_grid
from kgqa.report.term import IriWrapped

__all__ = [
    "fnum", "fci", "fp", "test_names",
    "comparison_grids", "print_comparison", "comparison_markdown", "breakdown_rich", "breakdown_markdown",
    "paraphrase_rich", "paraphrase_markdown", "taxonomy_rich", "taxonomy_markdown", "question_panel",
]

TEST_NAMES = {"bootstrap": "boot", "randomization": "rand", "wilcoxon": "Wilcoxon", "mcnemar": "McNemar"}


def _nan(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def fnum(v: float | None, digits: int | None = None) -> str:
    return "n/a" if _nan(v) else fmt_number(float(v), digits)


def fci(low: float | None, high: float | None, digits: int | None = None) -> str:
    return "" if _nan(low) or _nan(high) else f"[{fmt_number(float(low), digits)}, {fmt_number(float(high), digits)}]"


def fp(p: float | None) -> str:
    if _nan(p):
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def test_names(cmp: MultiComparison) -> list[str]:
    """Tests present in any comparison, in a fixed order."""
    present = {t for m in cmp.measures for c in m.comparisons for t in c.p}
    return [t for t in ("bootstrap", "randomization", "wilcoxon", "mcnemar") if t in present]


# --------------------------------------------------------------------------- comparison


def _summary_rows(cmp: MultiComparison) -> list[list[str]]:
    rows = []
    for s in cmp.systems:
        row = [s]
        for m in cmp.measures:
            c = m.ci[s]
            row.append(f"{fnum(c.mean)}{('^' + m.letters[s]) if m.letters[s] else ''} {fci(c.low, c.high)}".strip())
        rows.append(row)
    return rows


def _pair_rows(cmp: MultiComparison) -> list[list[str]]:
    tests = test_names(cmp)
    rows = []
    for m in cmp.measures:
        for c in m.comparisons:
            row = [m.measure, f"{c.system_a} vs {c.system_b}", str(c.n), f"{c.diff.mean:+.4f}", fci(c.diff.low, c.diff.high)]
            row += [fp(c.p.get(t)) for t in tests]
            row += [fp(c.p_holm.get(c.primary)), fp(c.p_bh.get(c.primary)), f"{c.wtl.wins}/{c.wtl.ties}/{c.wtl.losses}",
                    (c.better or "") if c.significant else ""]
            rows.append(row)
    return rows


def _pair_header(cmp: MultiComparison) -> list[str]:
    return (["measure", "comparison", "n", "Δ mean", f"{int(cmp.confidence * 100)}% CI of Δ"]
            + [f"p {TEST_NAMES[t]}" for t in test_names(cmp)]
            + ["p Holm*", "p BH*", "W/T/L", "better"])


def _notes(cmp: MultiComparison) -> list[str]:
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
    if cmp.corpus_only:
        notes.append("Corpus-level measures (no per-question values, not tested): "
                     + ", ".join(f"{lab} " + "/".join(fnum(cmp.aggregates[s].get(lab)) for s in cmp.systems)
                                 for lab in cmp.corpus_only) + f" ({'/'.join(cmp.systems)}).")
    return notes


def _letters(cmp: MultiComparison) -> dict[str, str]:
    from kgqa.analyze.stats import system_letters

    return system_letters(cmp.systems)


def comparison_grids(cmp: MultiComparison) -> tuple[Grid, Grid, list[str]]:
    """(summary: measures x systems, pairwise tests, notes) for a terminal of any width
    (:mod:`kgqa.report.fit`). Systems are named by their letters in the pairs table (legend in
    the notes)."""
    conf = int(round(cmp.confidence * 100))
    letters = _letters(cmp)
    systems = [f"{escape(s)} ({letters[s]})" for s in cmp.systems]
    rows = []
    for m in cmp.measures:
        best = m.best()
        cells = []
        for s in cmp.systems:
            c = m.ci[s]
            text = f"{fnum(c.mean)}{('^' + m.letters[s]) if m.letters[s] else ''} {fci(c.low, c.high)}".strip()
            cells.append(f"[bold green]{text}[/]" if s == best and len(cmp.systems) > 1 else text)
        rows.append([escape(m.measure), str(m.n), *cells])
    summary = Grid(f"Mean [{conf}% CI] per measure (superscript: significantly better than)",
                   ["measure", "n"], systems, rows, numeric={"n", *systems}, transpose=False)
    tests = test_names(cmp)
    cols = [f"Δ [{conf}% CI]", *(f"p {TEST_NAMES[t]}" for t in tests), "Holm*", "BH*", "W/T/L"]
    prow = []
    for m in cmp.measures:
        for c in m.comparisons:
            prow.append([
                escape(m.measure), f"{letters[c.system_a]}-{letters[c.system_b]}",
                letters[c.better] if c.significant and c.better else "",
                f"{c.diff.mean:+.4f} {fci(c.diff.low, c.diff.high)}".strip(),
                *(fp(c.p.get(t)) for t in tests),
                fp(c.p_holm.get(c.primary)), fp(c.p_bh.get(c.primary)), f"{c.wtl.wins}/{c.wtl.ties}/{c.wtl.losses}",
            ])
    # "sig" is a key column: a table split to fit the terminal repeats it beside every block of p-values
    pairs = Grid("Paired tests" + (f" against {escape(cmp.baseline)}" if cmp.baseline else " (all pairs)"),
                 ["measure", "pair", "sig"], cols, prow, numeric=set(cols), transpose=False)
    return summary, pairs, _notes(cmp)


def print_comparison(console, cmp: MultiComparison) -> None:
    """The comparison on ``console``, fitted to its width (tables split, never squeezed)."""
    summary, pairs, notes = comparison_grids(cmp)
    print_grid(console, summary, transpose=False)
    print_grid(console, pairs, transpose=False)
    for n in notes:
        console.print(n, style="dim", highlight=False)


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: Sequence[str] | None = None) -> list[str]:
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    from kgqa.report.safe import md_table_cell as esc
    out = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return out


def comparison_markdown(cmp: MultiComparison) -> str:
    lines = ["## Comparison", ""]
    rows = []
    for row, s in zip(_summary_rows(cmp), cmp.systems):
        rows.append([row[0]] + [f"**{c}**" if m.best() == s else c for c, m in zip(row[1:], cmp.measures)])
    lines += _md_table(["system"] + [m.measure for m in cmp.measures], rows)
    lines += ["", "### Paired tests" + (f" against {cmp.baseline}" if cmp.baseline else " (all pairs)"), ""]
    lines += _md_table(_pair_header(cmp), _pair_rows(cmp), ["---", "---"] + ["---:"] * (len(_pair_header(cmp)) - 2))
    lines += [""] + [f"{n}  " for n in _notes(cmp)]
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------- breakdowns


def _same_n(bt: BreakdownTable, k: Any) -> int | None:
    ns = {bt.cells[r][k].n if k in bt.cells[r] else 0 for r in bt.runs}
    return ns.pop() if len(ns) == 1 else None


def _breakdown_rows(bt: BreakdownTable) -> list[list[str]]:
    """One row per cell key: key, n (when equal for every run, else blank and each cell says its
    n), then per run ``mean [low, high]``."""
    rows = []
    for k in bt.keys:
        n = _same_n(bt, k)
        row = [str(k), "" if n is None else str(n)]
        for r in bt.runs:
            c = bt.cells[r].get(k)
            if c is None:
                row.append("(n=0)")
                continue
            text = f"{fnum(c.mean)} {fci(c.low, c.high)}".strip()
            row.append(text if n is not None else f"{text} (n={c.n})")
        rows.append(row)
    return rows


def _breakdown_header(bt: BreakdownTable) -> list[str]:
    conf = int(round(bt.confidence * 100))
    return [bt.key, "n"] + [f"{r}: {bt.measure} [{conf}% CI]" if len(bt.runs) == 1 else r for r in bt.runs]


def breakdown_rich(bt: BreakdownTable) -> Grid:
    """The breakdown for a terminal of any width: key and n repeat in every block of runs."""
    conf = int(round(bt.confidence * 100))
    title = f"{bt.measure} by {bt.key}: mean [{conf}% CI]" + (f" (bins {bt.bins})" if bt.bins is not None else "")
    head = [escape(h) for h in _breakdown_header(bt)]
    return Grid(escape(title), head[:2], head[2:], [[escape(c) for c in r] for r in _breakdown_rows(bt)],
                numeric={"n", *head[2:]}, transpose=False)


def breakdown_markdown(bt: BreakdownTable) -> str:
    conf = int(round(bt.confidence * 100))
    lines = [f"### {bt.measure} by {bt.key}: mean [{conf}% CI]", ""] + _md_table(_breakdown_header(bt), _breakdown_rows(bt))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- paraphrases


def _paraphrase_rows(pt: ParaphraseTable) -> list[list[str]]:
    depth = max((len(c) for c in pt.curves.values()), default=0)
    rows = []
    for k in range(depth):
        row = [str(k + 1)]
        for r in pt.runs:
            c = pt.curves[r]
            row += [str(c[k].n_groups), fnum(c[k].mean), fnum(c[k].ratio_to_rank1, 3)] if k < len(c) else ["0", "", ""]
        rows.append(row)
    return rows


def _paraphrase_header(pt: ParaphraseTable) -> list[str]:
    h = ["rank"]
    for r in pt.runs:
        pre = f"{r} " if len(pt.runs) > 1 else ""
        h += [f"{pre}groups", f"{pre}mean {pt.measure}", f"{pre}ratio to rank 1"]
    return h


def paraphrase_rich(pt: ParaphraseTable) -> Grid:
    head = [escape(h) for h in _paraphrase_header(pt)]
    return Grid(escape(f"Paraphrase robustness: {pt.measure} by rank within '{pt.group_key}' groups"), head[:1],
                head[1:], _paraphrase_rows(pt), numeric=set(head), transpose=False)


def paraphrase_markdown(pt: ParaphraseTable) -> str:
    lines = [f"### Paraphrase robustness ({pt.measure}, groups: {pt.group_key})", ""]
    lines += _md_table(_paraphrase_header(pt), _paraphrase_rows(pt))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- taxonomy


def _taxonomy_grid(counts: dict[str, dict[str, int]]) -> tuple[list[str], list[list[str]]]:
    from kgqa.analyze.taxonomy import LABELS

    labels = [lab for lab in LABELS if any(lab in c for c in counts.values())]
    runs = list(counts)
    return runs, [[lab] + [str(counts[r].get(lab, 0)) for r in runs] for lab in labels]


def _left_out_note(left_out: Sequence[str]) -> str:
    return (f"not classified (streamed: their records lack the gold side; evaluate without --stream): "
            f"{', '.join(left_out)}" if left_out else "")


def taxonomy_rich(counts: dict[str, dict[str, int]], left_out: Sequence[str] = ()) -> Grid | Group:
    runs, rows = _taxonomy_grid(counts)
    cols = [escape(r) for r in runs]
    t = Grid("Error taxonomy (questions per label)", ["label"], cols, rows, numeric=set(cols), transpose=False)
    return Group(t, Text(_left_out_note(left_out))) if left_out else t


def taxonomy_markdown(counts: dict[str, dict[str, int]], left_out: Sequence[str] = ()) -> str:
    runs, rows = _taxonomy_grid(counts)
    note = _left_out_note(left_out)
    return "\n".join(["### Error taxonomy", ""] + _md_table(["label"] + runs, rows) + (["", note] if note else [])) + "\n"


# --------------------------------------------------------------------------- one question


def _answer_text(results: Any) -> str:
    if results is None:
        return "(none)"
    if "boolean" in results:
        return str(results["boolean"]).lower()
    rows = results.get("results", {}).get("bindings", [])
    if not rows:
        return "(empty)"
    lines = [", ".join(f"?{v}={b['value']}" for v, b in row.items()) for row in rows]
    return "\n".join(lines)


_EXPECTED = re.compile(r"expected one of (.*)$", re.S)


def short_message(message: str, keep: int = 8) -> str:
    """An engine message with a parser's long list of expected tokens cut to its first ``keep``
    (pyoxigraph lists every token and character class it could have read)."""
    m = _EXPECTED.search(message)
    if not m:
        return message
    tokens = re.findall(r"\[[^\]]*\]|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|[^,\s][^,]*", m.group(1))
    if len(tokens) <= keep:
        return message
    return message[:m.start(1)] + ", ".join(t.strip() for t in tokens[:keep]) + f", ... ({len(tokens) - keep} more)"


def _sparql(text: str) -> Syntax:
    return Syntax(text, "sparql", word_wrap=True)


def question_panel(e: ScoredRun, q: QuestionScore, label: ErrorLabel) -> Group:
    """Everything about one question: text, queries, answers, outcome, every measure,
    characteristics and the taxonomy label."""
    d = q.details or {}
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("run", Text(e.run))
    head.add_row("id", Text(q.id))
    head.add_row("question", Text(str(d.get("question") or "(none)")))
    head.add_row("outcome", Text(q.outcome + (f" ({short_message(q.message)})" if q.message else "")))
    # the taxonomy's reason often quotes the outcome's message: said once
    reason = label.reason.replace(q.message, "see outcome") if q.message else label.reason
    head.add_row("taxonomy", Text(label.label + (f" [{', '.join(label.flags)}]" if label.flags else "")
                                  + f": {reason}"))
    if q.counts is not None:
        c = q.counts
        head.add_row("counts", f"tp {c.tp} · fp {c.fp} · fn {c.fn} · system {c.sys_size} · gold {c.gold_size}")
    scores = Table(title="measures", show_header=True)
    scores.add_column("measure")
    scores.add_column("value", justify="right")
    for s in e.measures:
        scores.add_row(Text(s.label), fnum(q.scores.get(s.label)) if s.label in q.scores else "(corpus-level / undefined)")
    chars = Table(title="characteristics", show_header=True)
    chars.add_column("name")
    chars.add_column("value")
    for k, v in question_characteristics(q).items():
        chars.add_row(Text(k), Text(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v))
    parts: list[Any] = [head]
    # queries and answers wrap at spaces, and inside an IRI only after '/' or '#'
    for title, key in (("gold SPARQL", "gold_sparql"), ("predicted SPARQL", "predicted_sparql")):
        text = d.get(key)
        parts.append(Panel(IriWrapped(text, make=_sparql) if text else "(none)", title=title))
    parts.append(Panel(IriWrapped(_answer_text(d.get("gold_answer"))), title="gold answer"))
    parts.append(Panel(IriWrapped(_answer_text(d.get("predicted_answer"))), title="predicted answer"))
    parts += [scores, chars]
    return Group(*parts)


def print_question(console: Console, e: ScoredRun, q: QuestionScore, label: ErrorLabel) -> None:
    console.print(question_panel(e, q, label))
