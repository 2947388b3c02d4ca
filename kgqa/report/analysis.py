"""Terminal (rich) and Markdown renderings of analyses: system comparisons, breakdowns,
paraphrase rank curves, error taxonomy counts, and one question in full (``kgqa show``).

Numbers are formatted by :mod:`kgqa.report.numbers` (the one format of every report); the
comparison's tables come from :func:`kgqa.report.model.comparison_report`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from kgqa.analyze.characteristics import question_characteristics
from kgqa.analyze.taxonomy import ErrorLabel, LABELS, classify
from kgqa.score.evaluate import Evaluation, QuestionScore
from kgqa.report import numbers
from kgqa.report.fit import Grid, print_grid
from kgqa.report.model import ComparisonReport, as_comparison_report
from kgqa.report.term import IriWrapped
from kgqa.sparql.analyzer import analyze
from kgqa.report.safe import md_table_cell, md_table_cell as esc

if TYPE_CHECKING:  # types only: computing these needs NumPy, printing one question does not
    from kgqa.analyze.breakdown import BreakdownTable
    from kgqa.analyze.comparison import MultiComparison
    from kgqa.analyze.paraphrase import ParaphraseTable

__all__ = [
    "test_names",
    "comparison_grids", "print_comparison", "comparison_markdown", "breakdown_rich", "breakdown_markdown",
    "paraphrase_rich", "paraphrase_markdown", "taxonomy_rich", "taxonomy_markdown", "question_panel",
]

TEST_NAMES = {"bootstrap": "boot", "randomization": "rand", "wilcoxon": "Wilcoxon", "mcnemar": "McNemar"}


def test_names(cmp: MultiComparison) -> list[str]:
    """Tests present in any comparison, in a fixed order."""
    present = {t for m in cmp.measures for c in m.comparisons for t in c.p}
    return [t for t in ("bootstrap", "randomization", "wilcoxon", "mcnemar") if t in present]


# --------------------------------------------------------------------------- comparison


def pair_header(cr: ComparisonReport) -> list[str]:
    """Headings of the paired tests in Markdown and HTML."""
    return (["measure", "comparison", "n", "Δ mean", f"{cr.conf}% CI of Δ"]
            + [f"p {TEST_NAMES[t]}" for t in cr.tests] + ["p Holm*", "p BH*", "W/T/L", "better"])


def pair_rows(cr: ComparisonReport) -> list[list[str]]:
    """The paired tests as text, one row per comparison (Markdown and HTML)."""
    rows = []
    for r in cr.pairs.rows:
        measure, a, b, n, d, *rest = r
        rows.append([measure.text(), f"{a.text()} vs {b.text()}", n.text(), d.number(), d.ci(),
                     *(c.text() for c in rest)])
    return rows


def comparison_grids(cmp: MultiComparison | ComparisonReport) -> tuple[Grid, Grid, list[str]]:
    """(summary: measures x systems, pairwise tests, notes) for a terminal of any width
    (:mod:`kgqa.report.fit`). Systems are named by their letters in the pairs table (legend in
    the notes)."""
    cr = as_comparison_report(cmp)
    s = cr.summary
    letters = s.legend
    systems = [f"{escape(r[0].text())} ({letters[r[0].text()]})" for r in s.rows]
    many = len(s.rows) > 1
    rows = []
    for j, measure in enumerate(s.columns, start=1):
        cells = [r[j] for r in s.rows]
        rows.append([escape(measure), numbers.count(cells[0].n if cells else None),
                     *(f"[bold green]{c.text()}[/]" if c.best and many else c.text() for c in cells)])
    summary = Grid(s.title, ["measure", "n"], systems, rows, numeric={"n", *systems}, transpose=False)
    cols = [f"Δ [{cr.conf}% CI]", *(f"p {TEST_NAMES[t]}" for t in cr.tests), "Holm*", "BH*", "W/T/L"]
    prow = []
    for r in cr.pairs.rows:
        measure, a, b, _n, d, *ps, wtl, better = r
        prow.append([escape(measure.text()), f"{letters[a.text()]}-{letters[b.text()]}",
                     letters[better.text()] if better.text() else "", d.text(), *(p.text() for p in ps), wtl.text()])
    # "sig" is a key column: a table split to fit the terminal repeats it beside every block of p-values
    pairs = Grid(escape(cr.pairs.title), ["measure", "pair", "sig"], cols, prow, numeric=set(cols), transpose=False)
    return summary, pairs, cr.notes


def print_comparison(console, cmp: MultiComparison) -> None:
    """The comparison on ``console``, fitted to its width (tables split, never squeezed)."""
    summary, pairs, notes = comparison_grids(cmp)
    print_grid(console, summary, transpose=False)
    print_grid(console, pairs, transpose=False)
    for n in notes:  # a signature is one line, never wrapped by kgqa (the terminal folds it; a copy gives it whole)
        console.print(n, style="dim", highlight=False, soft_wrap=n.startswith("signature: "))


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: Sequence[str] | None = None) -> list[str]:
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return out


def comparison_markdown(cmp: MultiComparison | ComparisonReport) -> str:
    cr = as_comparison_report(cmp)
    lines = ["## Comparison", "", cr.summary.to_markdown(escape=md_table_cell).rstrip("\n")]
    lines += ["", f"### {cr.pairs.title}", ""]
    lines += _md_table(pair_header(cr), pair_rows(cr), ["---", "---"] + ["---:"] * (len(pair_header(cr)) - 2))
    lines += [""] + [f"{n}  " for n in cr.notes]
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
            text = f"{numbers.score(c.mean)} {numbers.ci(c.low, c.high)}".strip()
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
            row += ([numbers.count(c[k].n_groups), numbers.score(c[k].mean), numbers.score(c[k].ratio_to_rank1, 3)]
                    if k < len(c) else ["0", "", ""])
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


_AT_LINE_COL = re.compile(r"(?:error at |at line |line )(\d+)[:,] ?(?:column )?(\d+)")


def outcome_text(outcome: str, message: str, query: str | None) -> str:
    """The outcome with its message on one line. A parse error names the position (line, column)
    and the token found there: kgqa's own parser's reading of the query as written when it finds
    the error (the engine may have seen a normalised text), else the engine's position, then
    what the engine expected (its list cut by :func:`short_message`)."""
    if not message:
        return outcome
    one_line = " ".join(short_message(message).split())
    if outcome != "parse_error" or not query:
        return f"{outcome} ({one_line})"
    own = analyze(query).error
    if own:
        return f"{outcome}: {' '.join(own.split())}"
    m = _AT_LINE_COL.search(message)
    if m is None:
        return f"{outcome} ({one_line})"
    line, col = int(m.group(1)), int(m.group(2))
    lines = query.split("\n")
    at = lines[line - 1][col - 1:] if 0 < line <= len(lines) and col >= 1 else ""
    token = at.split()[0][:24] if at.split() else ""
    found = f"at {token!r}" if token else "at the end of the query"
    rest = one_line[m.end():].lstrip(" :,") if message.startswith("error at") else one_line
    return f"{outcome} at line {line}, column {col}, {found}: {rest}"


def _sparql(text: str) -> Syntax:
    return Syntax(text, "sparql", word_wrap=True)


def question_panel(e: Evaluation, q: QuestionScore, label: ErrorLabel) -> Group:
    """Everything about one question: text, queries, answers, outcome, every measure,
    characteristics and the taxonomy label."""
    d = q.details or {}
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("run", Text(e.run))
    head.add_row("id", Text(q.id))
    head.add_row("question", Text(str(d.get("question") or "(none)")))
    head.add_row("outcome", Text(outcome_text(q.outcome, q.message, d.get("predicted_sparql"))))
    # the taxonomy's reason often quotes the outcome's message: said once
    reason = label.reason.replace(q.message, "see outcome") if q.message else label.reason
    head.add_row("taxonomy", Text(label.label + (f" [{', '.join(label.flags)}]" if label.flags else "")
                                  + f": {reason}"))
    if d.get("engine_dependent"):
        head.add_row("engine", Text(f"engine-dependent: {d['engine_dependent']}"))
    if q.counts is not None:
        c = q.counts
        head.add_row("counts", f"tp {c.tp} · fp {c.fp} · fn {c.fn} · system {c.sys_size} · gold {c.gold_size}")
    scores = Table(title="measures", show_header=True)
    scores.add_column("measure")
    scores.add_column("value", justify="right")
    rng = d.get("score_range") or {}
    if rng:
        scores.add_column(f"on another engine ({d.get('score_range_kind', 'range')})", justify="right")
    for s in e.measures:
        value = numbers.score(q.scores.get(s.label)) if s.label in q.scores else "(corpus-level / undefined)"
        if rng:
            lo_hi = rng.get(s.label)
            scores.add_row(Text(s.label), value,
                           f"[{numbers.score(lo_hi[0])}, {numbers.score(lo_hi[1])}]" if lo_hi else "")
        else:
            scores.add_row(Text(s.label), value)
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


def print_question(console: Console, e: Evaluation, q: QuestionScore, label: ErrorLabel | None = None) -> None:
    """One question in full on ``console`` (:func:`question_panel`; ``label``: its taxonomy
    label, by default :func:`kgqa.analyze.taxonomy.classify`'s)."""
    console.print(question_panel(e, q, label if label is not None else classify(q)))
