"""One self-contained HTML report of one or more evaluations.

The file has no external resource: CSS and a few lines of JS (the per-question filter) are inline
and every figure is a matplotlib PNG embedded as a ``data:image/png;base64`` URI; the only links
are in-page anchors and, where an answer is cut, the saved evaluation JSON beside the report.
Light and dark themes follow the system. Sections:

1. scores: one row per run (aggregate of every measure, outcome counts, signature);
2. comparison (two or more runs): means with bootstrap CIs and significance letters, paired
   tests (:func:`kgqa.analyze.comparison.compare_evaluations`), and a bar chart of the
   headline measure with CI whiskers;
3. outcomes: counts per run and a stacked bar chart;
4. score distribution: histogram of the headline measure per run;
5. breakdowns: per characteristic, a table (n, mean, CI per run) and a bar chart with CI
   whiskers; by default the :data:`~kgqa.analyze.characteristics.DEFAULT_BREAKDOWNS` that have
   at least two cells;
6. paraphrase robustness (when the dataset has a paraphrase/template group): rank table and
   rank curve per run;
7. error taxonomy: counts per label and run, stacked bar chart;
8. per question (``per_question=True``): id, question, outcome, taxonomy label, every measure,
   gold and predicted answers truncated to 120 characters, full queries and the first
   :data:`ANSWER_ROWS` rows of each answer in collapsible ``<details>``, with search and an
   outcome/label filter.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any
import math

from kgqa import lazy
from kgqa.analyze.breakdown import BreakdownTable, breakdown_table
from kgqa.analyze.characteristics import DEFAULT_BREAKDOWNS, headline_measure, per_question_scores
from kgqa.analyze.paraphrase import ParaphraseTable, paraphrase_table
from kgqa.analyze.comparison import MultiComparison, compare_evaluations
from kgqa.analyze.taxonomy import LABELS, classify_evaluation, taxonomy_counts
from kgqa.report import analysis as A
from kgqa.report import numbers
from kgqa.report.htmltable import Raw as _Raw, escape as _e, report_table, table as _table
from kgqa.report.model import comparison_report, evaluation_report
from kgqa.score.evaluate import Evaluation, require_items

__all__ = ["html_report", "report_table"]

_CSS = """
:root{color-scheme:light dark;--fg:#222;--bg:#fff;--muted:#555;--line:#ccc;--head:#f0f0f0;--zebra:#fafafa;
--code:#f4f4f4;--best:#0a6b2b;--sig:#a33;--link:#225}
@media (prefers-color-scheme:dark){:root{--fg:#e4e4e4;--bg:#16181c;--muted:#aaa;--line:#3a3d44;--head:#23262c;
--zebra:#1b1e23;--code:#202329;--best:#5fd38a;--sig:#ff8a80;--link:#9ab8ff}img{background:#fff;border-radius:4px}}
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1300px;
color:var(--fg);background:var(--bg);line-height:1.45;padding:0 1em}
a{color:var(--link)}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:2px solid var(--line);padding-bottom:.2em;margin-top:2em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}
th,td{border:1px solid var(--line);padding:.25em .6em;vertical-align:top}
th{background:var(--head);text-align:left;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.id{white-space:nowrap}
td{max-width:28em;overflow-wrap:break-word}
tr:nth-child(even) td{background:var(--zebra)}.best{font-weight:bold;color:var(--best)}
.note{color:var(--muted);font-size:.85em;margin:.2em 0}.sig{font-size:.75em;vertical-align:super;color:var(--sig)}
.signature{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;background:var(--code);
padding:.4em .6em;border-radius:4px;overflow-wrap:anywhere;user-select:all;margin:.3em 0}
img{max-width:100%;height:auto;display:block;margin:.5em 0}
.figs{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}.figs > *{min-width:0;max-width:100%}.figs img{max-width:min(100%,760px)}
.fig-wide{width:100%;max-width:900px}
pre{white-space:pre-wrap;word-break:break-all;background:var(--code);padding:.4em;margin:.2em 0;font-size:.85em;
max-height:24em;overflow:auto}
code{font-size:.85em}
details summary{cursor:pointer;color:var(--link)}
.filters{display:flex;gap:.6em;flex-wrap:wrap;align-items:center;margin:.6em 0}
.filters input,.filters select{font:inherit;padding:.2em .4em}
"""

#: Rows of an answer shown in the per-question details before the rest is only counted.
ANSWER_ROWS = 20

_FILTER_JS = """
function kgqaFilter(box){
  var root=box.closest('details');var q=root.querySelector('input').value.toLowerCase();
  var o=root.querySelector('select').value;
  root.querySelectorAll('tr[data-outcome]').forEach(function(tr){
    var ok=(!q||tr.textContent.toLowerCase().indexOf(q)>=0)&&(!o||tr.dataset.outcome===o||tr.dataset.label===o);
    tr.style.display=ok?'':'none';});
}
"""

_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd"]


def _trunc(s: str | None, n: int = 120) -> str:
    if s is None:
        return ""
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"


# --------------------------------------------------------------------------- figures


def _figure(width: float, height: float):
    try:
        Figure = lazy.matplotlib_figure().Figure
    except ImportError:
        raise ImportError("HTML reports need matplotlib: pip install 'matplotlib>=3.8'") from None
    fig = Figure(figsize=(width, height), dpi=100)
    return fig, fig.add_subplot(1, 1, 1)


def _png(fig, alt: str) -> str:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", metadata={"Software": None})
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def _grouped_bars(ax, keys: list[str], runs: list[str], means: dict[str, list[float]],
                  lows: dict[str, list[float]], highs: dict[str, list[float]]) -> None:
    width = 0.8 / max(1, len(runs))
    for i, r in enumerate(runs):
        xs = [j + (i - (len(runs) - 1) / 2) * width for j in range(len(keys))]
        m = [0.0 if math.isnan(v) else v for v in means[r]]
        lo = [0.0 if (math.isnan(a) or math.isnan(v)) else max(0.0, v - a) for v, a in zip(means[r], lows[r])]
        hi = [0.0 if (math.isnan(b) or math.isnan(v)) else max(0.0, b - v) for v, b in zip(means[r], highs[r])]
        ax.bar(xs, m, width=width * 0.95, label=r, color=_COLORS[i % len(_COLORS)], yerr=[lo, hi], capsize=3,
               error_kw={"elinewidth": 1, "ecolor": "#333"})
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(keys, rotation=20 if max((len(k) for k in keys), default=0) > 8 else 0, ha="right"
                       if max((len(k) for k in keys), default=0) > 8 else "center")
    ax.grid(axis="y", alpha=0.3)
    if len(runs) > 1:
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))


def fig_breakdown(bt: BreakdownTable) -> str:
    """Bar chart of a breakdown: one bar per cell and run, whiskers = the bootstrap CI."""
    nan = float("nan")
    keys = [str(k) for k in bt.keys]
    means = {r: [bt.cells[r][k].mean if k in bt.cells[r] else nan for k in bt.keys] for r in bt.runs}
    lows = {r: [bt.cells[r][k].low if k in bt.cells[r] else nan for k in bt.keys] for r in bt.runs}
    highs = {r: [bt.cells[r][k].high if k in bt.cells[r] else nan for k in bt.keys] for r in bt.runs}
    fig, ax = _figure(max(5.0, 0.9 * len(keys) * max(1, len(bt.runs)) ** 0.5 + 2), 3.2)
    _grouped_bars(ax, keys, bt.runs, means, lows, highs)
    ax.set_ylabel(bt.measure)
    ax.set_title(f"{bt.measure} by {bt.key} ({int(bt.confidence * 100)}% CI)", fontsize=10)
    return _png(fig, f"{bt.measure} by {bt.key}")


def fig_comparison(cmp: MultiComparison, measure: str) -> str:
    m = next(x for x in cmp.measures if x.measure == measure)
    fig, ax = _figure(max(6.0, 1.2 * len(cmp.systems) + 2.5), 3.6)
    tops: list[float] = []
    for i, s in enumerate(cmp.systems):
        c = m.ci[s]
        lo = 0.0 if c.low != c.low else c.mean - c.low
        hi = 0.0 if c.high != c.high else c.high - c.mean
        ax.bar([i], [c.mean], color=_COLORS[i % len(_COLORS)], yerr=[[lo], [hi]], capsize=4)
        top = c.high if c.high == c.high else c.mean
        if m.letters[s]:
            # above the whisker's cap, never on it
            ax.annotate(m.letters[s], (i, top), textcoords="offset points", xytext=(0, 8), ha="center",
                        va="bottom", fontsize=10, color="#a33", fontweight="bold")
        tops.append(top)
    ax.set_xticks(range(len(cmp.systems)))
    long = max(len(s) for s in cmp.systems) > 8
    ax.set_xticklabels(cmp.systems, rotation=20 if long else 0, ha="right" if long else "center")
    ax.set_ylabel(measure)
    if tops:  # head room for the letters
        ax.set_ylim(0, max(max(tops) * 1.18, 0.05))
    ax.set_title(f"{measure}: mean with {int(cmp.confidence * 100)}% bootstrap CI", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return _png(fig, f"comparison of {measure}")


def fig_rank_curve(pt: ParaphraseTable) -> str:
    fig, ax = _figure(5.5, 3.2)
    for i, r in enumerate(pt.runs):
        c = pt.curves[r]
        ax.plot([p.rank for p in c], [p.mean for p in c], marker="o", label=r, color=_COLORS[i % len(_COLORS)])
    ax.set_xlabel("paraphrase rank (best first)")
    ax.set_ylabel(f"mean {pt.measure}")
    ax.set_title(f"Paraphrase rank curve ({pt.group_key} groups)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig, "paraphrase rank curve")


def fig_distribution(evals: Sequence[Evaluation], measure: str) -> str:
    np = lazy.numpy()
    values = {e.run: list(per_question_scores(e, measure).values()) for e in evals}
    allv = [v for vs in values.values() for v in vs]
    lo, hi = (min(allv), max(allv)) if allv else (0.0, 1.0)
    if 0.0 <= lo and hi <= 1.0:
        lo, hi = 0.0, 1.0
    edges = np.linspace(lo, hi if hi > lo else lo + 1.0, 11)
    fig, ax = _figure(5.5, 3.2)
    width = (edges[1] - edges[0]) * 0.8 / max(1, len(values))
    for i, (r, vs) in enumerate(values.items()):
        counts, _ = np.histogram(vs, bins=edges)
        xs = edges[:-1] + (edges[1] - edges[0]) * 0.1 + i * width
        ax.bar(xs, counts, width=width, align="edge", label=r, color=_COLORS[i % len(_COLORS)])
    ax.set_xlabel(measure)
    ax.set_ylabel("questions")
    ax.set_title(f"Distribution of per-question {measure}", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    if len(values) > 1:
        ax.legend(fontsize=8)
    return _png(fig, f"distribution of {measure}")


def _stacked(runs: list[str], labels: list[str], counts: Mapping[str, Mapping[str, int]], title: str, alt: str) -> str:
    fig, ax = _figure(7.0, 0.55 * len(runs) + 1.6)
    left = [0] * len(runs)
    for i, lab in enumerate(labels):
        vals = [counts[r].get(lab, 0) for r in runs]
        ax.barh(range(len(runs)), vals, left=left, label=lab, color=_COLORS[i % len(_COLORS)])
        left = [a + b for a, b in zip(left, vals)]
    ax.set_yticks(range(len(runs)))
    ax.set_yticklabels(runs)
    ax.invert_yaxis()
    ax.set_xlabel("questions")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _png(fig, alt)


# --------------------------------------------------------------------------- tables


def _scores_section(evals: Sequence[Evaluation]) -> str:
    report = evaluation_report(evals)
    body = report_table(report, row_notes="outcomes") + "".join(f'<p class="note">{_e(n)}</p>' for n in report.notes)
    sigs = "".join(f'<p class="note">signature (select to copy):</p><div class="signature">{_e(s)}</div>'
                   for s in report.signatures)
    skipped = ""
    for e in evals:
        if e.skipped:
            skipped += f'<p class="note">{_e(e.run)}: {len(e.skipped)} skipped (first: {_e(e.skipped[0]["id"])}: ' \
                       f'{_e(e.skipped[0]["reason"])})</p>'
    return "<h2 id=\"scores\">Scores</h2>\n" + body + sigs + skipped


def _comparison_section(cmp: MultiComparison, measure: str) -> str:
    cr = comparison_report(cmp)
    out = ["<h2 id=\"comparison\">Comparison</h2>", report_table(cr.summary),
           f"<h3>{_e(cr.pairs.title)}</h3>",
           _table(A.pair_header(cr), A.pair_rows(cr), numeric_from=2)]
    out += [f'<p class="note">{_e(n)}</p>' for n in cr.notes]
    if any(m.measure == measure for m in cmp.measures):
        out.append(fig_comparison(cmp, measure))
    return "\n".join(out)


def _outcome_section(evals: Sequence[Evaluation]) -> str:
    labels = sorted({k for e in evals for k in e.outcomes}, key=lambda k: (k != "ok", k))
    rows = [[e.run] + [e.outcomes.get(k, 0) for k in labels] for e in evals]
    fig = _stacked([e.run for e in evals], labels, {e.run: e.outcomes for e in evals}, "Outcomes per run", "outcomes")
    return "<h2 id=\"outcomes\">Outcomes</h2>\n" + _table(["run", *labels], rows) + fig


def _breakdown_section(bts: Sequence[BreakdownTable]) -> str:
    out = ["<h2 id=\"breakdowns\">Breakdowns</h2>"]
    for bt in bts:
        rows = A._breakdown_rows(bt)
        out.append(f"<h3>{_e(bt.measure)} by {_e(bt.key)}</h3>")
        out.append('<div class="figs">' + _table(A._breakdown_header(bt), rows) + fig_breakdown(bt) + "</div>")
    return "\n".join(out)


def _paraphrase_section(pt: ParaphraseTable) -> str:
    note = ""
    skipped = {r: n for r, n in pt.ungrouped.items() if n}
    if skipped:
        note = '<p class="note">Questions without a group key (left out): ' + _e(", ".join(f"{r} {n}" for r, n in skipped.items())) + "</p>"
    return ("<h2 id=\"paraphrase\">Paraphrase robustness</h2>\n"
            f'<p class="note">Per group of paraphrases (group key <code>{_e(pt.group_key)}</code>), scores sorted best '
            "first; mean at each rank over the groups with that many members, and its ratio to rank 1 (Su et al. 2016).</p>"
            + '<div class="figs">' + _table(A._paraphrase_header(pt), A._paraphrase_rows(pt)) + fig_rank_curve(pt) + "</div>" + note)


def _taxonomy_section(evals: Sequence[Evaluation], counts: dict[str, dict[str, int]]) -> str:
    runs, rows = A._taxonomy_grid(counts)
    labels = [lab for lab in LABELS if any(lab in c for c in counts.values())]
    fig = _stacked(runs, labels, counts, "Error taxonomy", "error taxonomy")
    return ("<h2 id=\"taxonomy\">Error taxonomy</h2>\n" + _table(["label", *runs], rows) + fig)


def _answer_short(results: Any) -> str:
    if results is None:
        return ""
    if "boolean" in results:
        return str(results["boolean"]).lower()
    rows = results.get("results", {}).get("bindings", [])
    return _trunc("; ".join(", ".join(b["value"] for b in row.values()) for row in rows) or "(empty)")


def answer_text(results: Any, max_rows: int = ANSWER_ROWS) -> tuple[str, int]:
    """An answer (SPARQL results JSON) as readable text, one row per line with the variables
    named, cut after ``max_rows`` rows; returns the text and the number of rows left out."""
    if results is None:
        return "(none)", 0
    if not isinstance(results, dict):
        return _trunc(json.dumps(results, ensure_ascii=False), 500), 0
    if "boolean" in results:
        return str(results["boolean"]).lower(), 0
    rows = (results.get("results") or {}).get("bindings") or []
    lines = []
    for row in rows[:max_rows]:
        cells = []
        for var, cell in (row.items() if isinstance(row, dict) else []):
            v = cell.get("value", "") if isinstance(cell, dict) else cell
            cells.append(f"?{var} = {_trunc(str(v), 200)}")
        lines.append("  ".join(cells))
    return ("\n".join(lines) or "(empty)"), max(0, len(rows) - max_rows)


def _answer_block(results: Any, full_json: str | None) -> str:
    text, more = answer_text(results)
    tail = ""
    if more:
        where = f' (every row in <a href="{_e(full_json)}">the saved evaluation</a>)' if full_json else \
            " (every row in the saved evaluation JSON)"
        tail = f'<p class="note">… {more:,} more row(s){where}</p>'
    return f"<pre>{_e(text)}</pre>{tail}"


def _questions_section(evals: Sequence[Evaluation], full_json: str | None = None) -> str:
    out = ["<h2 id=\"questions\">Per question</h2>"]
    for e in evals:
        labels = [s.label for s in e.measures if any(s.label in q.scores for q in e.questions)]
        tax = classify_evaluation(e)
        rows, attrs = [], []
        for q in e.questions:
            d = q.details or {}
            full = (
                "<details><summary>full</summary>"
                f"<b>gold SPARQL</b><pre>{_e(d.get('gold_sparql') or '(none)')}</pre>"
                f"<b>predicted SPARQL</b><pre>{_e(d.get('predicted_sparql') or '(none)')}</pre>"
                f"<b>gold answer</b>{_answer_block(d.get('gold_answer'), full_json)}"
                f"<b>predicted answer</b>{_answer_block(d.get('predicted_answer'), full_json)}"
                f"<b>taxonomy</b>: {_e(tax[q.id].reason)}</details>"
            )
            rows.append([q.id, _trunc(d.get("question"), 120), q.outcome, tax[q.id].label,
                         *(numbers.score(q.scores.get(lab)) for lab in labels),
                         _answer_short(d.get("gold_answer")), _answer_short(d.get("predicted_answer")), _Raw(full)])
            attrs.append(f'data-outcome="{_e(q.outcome)}" data-label="{_e(tax[q.id].label)}"')
        kinds = sorted({q.outcome for q in e.questions} | {t.label for t in tax.values()})
        options = "".join(f'<option value="{_e(k)}">{_e(k)}</option>' for k in kinds)
        out.append(f"<details open><summary><b>{_e(e.run)}</b> ({len(e.questions)} questions)</summary>")
        out.append('<div class="filters"><input type="search" placeholder="search id, question, answer…" '
                   'oninput="kgqaFilter(this)" aria-label="search questions">'
                   f'<select onchange="kgqaFilter(this)" aria-label="outcome or label"><option value="">every outcome '
                   f"and label</option>{options}</select></div>")
        out.append(_table(["id", "question", "outcome", "taxonomy", *labels, "gold answer", "predicted answer", ""],
                          rows, numeric_from=4, numeric_to=4 + len(labels), row_attrs=attrs))
        out.append("</details>")
    return "\n".join(out)


def html_report(
    evals: Sequence[Evaluation],
    *,
    by: Sequence[str] | None = None,
    bins: Mapping[str, int | list[float]] | None = None,
    measure: str | None = None,
    baseline: str | None = None,
    seed: int = 0,
    per_question: bool = True,
    title: str | None = None,
    comparison: MultiComparison | None = None,
    resamples: int = 10_000,
    full_json: str | None = None,
) -> str:
    """The HTML report (module docstring) as a string. ``full_json``: a link (relative to the
    report) to the saved evaluation holding every answer row the report cuts. ``by`` lists the breakdown keys (default:
    the default breakdowns with at least two cells), ``measure`` the headline measure (default
    :func:`~kgqa.analyze.characteristics.headline_measure`)."""
    evals = list(evals)
    if not evals:
        raise ValueError("an HTML report needs at least one evaluation")
    require_items(evals, "the HTML report")
    measure = measure or headline_measure(evals)
    parts: list[str] = [_scores_section(evals)]
    toc = [("scores", "Scores")]
    if len(evals) > 1:
        cmp = comparison or compare_evaluations(evals, baseline=baseline, seed=seed, resamples=resamples, trials=resamples)
        parts.append(_comparison_section(cmp, measure))
        toc.append(("comparison", "Comparison"))
    parts.append(_outcome_section(evals))
    toc.append(("outcomes", "Outcomes"))
    parts.append("<h2 id=\"distribution\">Score distribution</h2>\n" + fig_distribution(evals, measure))
    toc.append(("distribution", "Score distribution"))
    keys = list(by) if by else list(DEFAULT_BREAKDOWNS)
    bts = []
    for k in keys:
        bt = breakdown_table(evals, k, measure=measure, bins=bins, seed=seed, resamples=resamples)
        if by or len(bt.keys) >= 2:
            bts.append(bt)
    if bts:
        parts.append(_breakdown_section(bts))
        toc.append(("breakdowns", "Breakdowns"))
    pt = paraphrase_table(evals, measure=measure)
    if pt is not None and any(pt.curves.values()):
        parts.append(_paraphrase_section(pt))
        toc.append(("paraphrase", "Paraphrase robustness"))
    parts.append(_taxonomy_section(evals, taxonomy_counts(evals)))
    toc.append(("taxonomy", "Error taxonomy"))
    if per_question:
        parts.append(_questions_section(evals, full_json))
        toc.append(("questions", "Per question"))
    title = title or f"kgqa report · {evals[0].dataset} · profile {evals[0].profile}"
    nav = " · ".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in toc)
    head = (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{_e(title)}</title>\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<style>{_CSS}</style>\n<script>{_FILTER_JS}</script>\n</head>\n<body>\n<h1>{_e(title)}</h1>\n"
            f'<p class="note">runs: {_e(", ".join(e.run for e in evals))} · headline measure: {_e(measure)} · '
            f"seed {seed}</p>\n<p>{nav}</p>\n")
    return head + "\n".join(parts) + "\n</body>\n</html>\n"
