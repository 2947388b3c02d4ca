"""Reports of one or more evaluations: rich terminal tables, JSON, CSV, Markdown, an HTML table."""

from __future__ import annotations

import codecs
import csv
import html
import io
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from kgqa.load import jsonio
from kgqa.model.gcpause import during
from kgqa.report import numbers
from kgqa.report.fit import Grid
from kgqa.report.htmltable import report_table
from kgqa.report.model import evaluation_report, measure_labels as _labels
from kgqa.score.evaluate import Evaluation
from kgqa.analyze.hints import hints
from kgqa.model import fork
from kgqa.report.safe import csv_row


def _outcome_text(e: Evaluation) -> str:
    return ", ".join(f"{k} {v}" for k, v in e.outcomes.items()) or "none"


def renderables(evals: Sequence[Evaluation], *, per_question: bool = False, title: str | None = None) -> list[Any]:
    """Aggregate table (one row per run), outcome counts, skipped items and signatures, as rich
    renderables (markup text lines and tables)."""

    report = evaluation_report(evals, title=title)
    items: list[Any] = [report.to_grid()]
    for e in evals:
        line = f" outcomes: {_outcome_text(e)}"
        if e.execution is not None:
            line += " · execution: " + ", ".join(f"{k} {v}" for k, v in e.execution.items())
        ed = e.engine_dependence
        if ed and ed.get("questions"):
            line += f" · engine-dependent: {ed['questions']} ({_ids(ed.get('ids', []))})"
            if ed.get("excluded"):
                line += " excluded"
        if e.missing_ids:
            line += f" · missing from run: {len(e.missing_ids)} ({_ids(e.missing_ids)})"
        if e.unknown_ids:
            line += f" · not in dataset: {len(e.unknown_ids)} ({_ids(e.unknown_ids)})"
        other = [s for s in e.skipped if s["reason"] != "in the run but not in the dataset"]
        if other:
            line += f" · skipped: {len(other)} ({_ids([s['id'] for s in other])}: {other[0]['reason']})"
        items.append(Text.assemble((f"{e.run}:", "dim"), line))
        for label, reasons in e.measure_skips.items():
            for reason, ids in reasons.items():
                items.append(Text.assemble(
                    (f"{e.run}:", "dim"), f" {label} not scored for {len(ids)} question(s) ({_ids(ids)}): {reason}"))
        if e.problems:
            items.append(Text.assemble((f"{len(e.problems)} input problem(s)", "yellow"), f", first: {e.problems[0]}"))
    for note in report.notes:  # engine-dependent score ranges, under the table they qualify
        items.append(Text.assemble(("engine:", "yellow"), f" {note}"))

    for h in hints(evals):
        items.append(Text.assemble(("hint:", "yellow"), f" {h}"))
    sigs = sorted({str(e.signature) for e in evals})
    for s in sigs:
        items.append(SignatureLine(s))
    if per_question:
        for e in evals:
            items.append(question_table(e))
    return items


class SignatureLine:
    """A signature line that is never wrapped or cut by kgqa (the terminal folds it; a copy
    gives it whole): print it with :func:`print_renderable`."""

    def __init__(self, text: str, label: str = "signature: "):
        self.text = text
        self.label = label

    def __rich__(self):
        return Text(f"{self.label}{self.text}", style="dim", no_wrap=True, overflow="ignore")


def print_renderable(console: Console, r: Any) -> None:
    """``console.print(r)``, except that a :class:`SignatureLine` is printed as one unwrapped line."""
    if isinstance(r, SignatureLine):
        console.print(f"{r.label}{r.text}", style="dim", highlight=False, soft_wrap=True)
    else:
        console.print(r)


def terminal(console: Console, evals: Sequence[Evaluation], *, per_question: bool = False, title: str | None = None) -> None:
    """Print :func:`renderables` to ``console``."""
    for r in renderables(evals, per_question=per_question, title=title):
        print_renderable(console, r)


def _ids(ids: list[str], n: int = 5) -> str:
    return ", ".join(ids[:n]) + (", ..." if len(ids) > n else "")


def question_table(e: Evaluation) -> Grid:
    """One row per question (id, outcome, every measure), split into blocks that repeat id and
    outcome when it is wider than the terminal."""
    labels = [s.label for s in e.measures if any(s.label in q.scores for q in e.questions)]
    engine = any("engine_dependent" in (q.details or {}) for q in e.questions)
    cols = [escape(lab) for lab in labels] + (["engine-dependent (score range)"] if engine else [])
    rows = []
    for q in e.questions:
        style = "" if q.outcome == "ok" else "yellow"
        row = [escape(q.id), f"[{style}]{q.outcome}[/]" if style else q.outcome,
               *(numbers.score(q.scores.get(lab)) for lab in labels)]
        if engine:
            d = q.details or {}
            note = d.get("engine_dependent", "")
            rng = (d.get("score_range") or {}).get(labels[0]) if labels else None
            if note and rng:
                note += f" ({labels[0]} {numbers.score(rng[0])}-{numbers.score(rng[1])})"
            row.append(escape(note))
        rows.append(row)
    return Grid(escape(f"{e.run}: per question"), ["id", "outcome"], cols, rows,
                numeric={escape(lab) for lab in labels}, transpose=False)


@during
def to_json(evals: Sequence[Evaluation]) -> str:
    """The evaluations as one JSON document, always ``{"runs": [...]}`` (one run too), what
    ``--save`` writes and :func:`kgqa.analyze.comparison.load_evaluations` reads (which also reads
    a bare evaluation object, what kgqa before issue 38 wrote for one run)."""
    return jsonio.dumps({"runs": [e.to_json() for e in evals]})


_HOLE = "\x00kgqa-questions-{}\x00"
_BATCH = 5000


def to_json_chunks(evals: Sequence[Evaluation], scratch: Path | None = None) -> Iterator[str]:
    """:func:`to_json`'s text in pieces, the per-question records written a batch at a time, so
    writing a million questions never holds their whole document (``--save``, ``-f json -o``).
    The pieces join to exactly :func:`to_json`'s text (tested), except where a lone surrogate
    makes :func:`~kgqa.load.jsonio.dumps` escape a batch's non-ASCII characters (still the same
    JSON). ``scratch``: a folder where a forked process may write batches of a large
    evaluation's records (:data:`PARALLEL_RECORDS` or more) while this one writes others: this
    one takes batches from the front, the child from the back (:class:`kgqa.model.fork.Deal`),
    and its text is read back in order."""
    docs = []
    for i, e in enumerate(evals):
        d = e.to_json_head()
        d["questions"] = _HOLE.format(i)
        docs.append(d)
    text = jsonio.dumps({"runs": docs})
    for i, e in enumerate(evals):
        hole = '"' + jsonio.dumps(_HOLE.format(i))[1:-1] + '"'
        at = text.index(hole)
        line_start = text.rindex("\n", 0, at) + 1
        indent = at - line_start - len('"questions": ')
        yield text[:at]
        text = text[at + len(hole):]
        yield from _question_array(e, indent, scratch)
    yield text


#: an evaluation of this many questions or more has its records written by two processes
PARALLEL_RECORDS = 100_000


def _question_array(e: Evaluation, indent: int, scratch: Path | None = None) -> Iterator[str]:
    questions = e.questions
    n = len(questions)
    if not n:
        yield "[]"
        return
    pad = "\n" + " " * indent
    batches = -(-n // _BATCH)
    child = deal = None
    if scratch is not None and n >= PARALLEL_RECORDS and hasattr(questions, "json_at"):
        deal = fork.dealer(batches)
        if deal is not None:  # the child's batches go to a scratch file, read back in order
            spill = tempfile.TemporaryFile(dir=scratch)
            child = fork.forked(_write_batches, questions, deal, pad, spill.fileno())
            if child is None:
                spill.close()
    if child is None:
        yield from (_batch_text(questions, k, pad) for k in range(batches))
        yield pad + "]"
        return
    written = None
    try:
        mine = []
        while (k := deal.take(True)) is not None:  # type: ignore[union-attr]
            mine.append(k)
            yield _batch_text(questions, k, pad)
        written = child()
        done = {} if written is fork.FAILED else written
        decode = codecs.getincrementaldecoder("utf-8")().decode
        for k in range(len(mine), batches):
            if k in done:  # written by the child: its bytes, as written
                spill.seek(done[k][0])
                left = done[k][1]
                while left:
                    block = spill.read(min(left, 1 << 22))
                    if not block:
                        raise OSError(f"the scratch file of --save's records ended {left} bytes early")
                    left -= len(block)
                    yield decode(block)
            else:  # the child failed before writing it
                yield _batch_text(questions, k, pad)
        yield decode(b"", True)
    finally:
        if written is None:  # stopped early (an error, a closed generator): the child stops too
            deal.stop()  # type: ignore[union-attr]
            child()
        spill.close()
    yield pad + "]"


def _batch_text(questions: Any, k: int, pad: str) -> str:
    """The JSON text of batch ``k`` of the records (:data:`_BATCH` questions), each record on
    lines indented by ``pad``; batch 0 opens the array, the others continue it."""
    stop = min((k + 1) * _BATCH, len(questions))
    if hasattr(questions, "json_at"):  # columns: each record's JSON made straight from them
        batch = [questions.json_at(i) for i in range(k * _BATCH, stop)]
    else:
        batch = [q.to_json() for q in questions[k * _BATCH:stop]]
    # one list written at once (its records indented by 2), moved to the array's indent
    return ("[" if k == 0 else ",") + jsonio.dumps(batch)[1:-2].replace("\n", pad)


def _write_batches(questions: Any, deal: Any, pad: str, fd: int) -> dict[int, tuple[int, int]]:
    """The batches ``deal`` gives a forked child, written to ``fd`` as UTF-8 (a lone surrogate
    as its escape, as :func:`~kgqa.load.jsonio.write_atomic` writes it) in the order taken;
    batch number -> (offset, bytes) in the file."""
    out: dict[int, tuple[int, int]] = {}
    at = 0
    with os.fdopen(os.dup(fd), "wb") as fh:
        while (k := deal.take(False)) is not None:
            data = _batch_text(questions, k, pad).encode("utf-8", "backslashreplace")
            fh.write(data)
            out[k] = (at, len(data))
            at += len(data)
    return out


@during
def to_csv(evals: Sequence[Evaluation], neutralise: bool | None = None) -> str:
    """Per-question records, one row per (run, question): readable by pandas.read_csv. Text
    cells that a spreadsheet would run as a formula are neutralised
    (:func:`kgqa.report.safe.csv_cell`) unless ``neutralise=False`` / ``KGQA_CSV_FORMULAS=keep``."""

    labels = _labels(evals)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    engine = any("engine_dependent" in (q.details or {}) for e in evals for q in e.questions)
    w.writerow(csv_row(["run", "id", "outcome", *labels, "tp", "fp", "fn", "message",
                        *(["engine_dependent", "score_range"] if engine else [])], neutralise))
    for e in evals:
        for q in e.questions:
            c = q.counts
            w.writerow(csv_row([
                e.run, q.id, q.outcome, *("" if q.scores.get(lab) is None else repr(q.scores[lab]) for lab in labels),
                c.tp if c else "", c.fp if c else "", c.fn if c else "", q.message,
                *([(q.details or {}).get("engine_dependent", ""), _range_text(q.details or {})] if engine else []),
            ], neutralise))
    return buf.getvalue()


def _range_text(details: dict) -> str:
    """A question's engine-dependent score range as one CSV cell: ``F1=[0.0,1.0] ... (exact|bound)``."""
    rng = details.get("score_range") or {}
    if not rng:
        return ""
    return " ".join(f"{k}=[{lo!r},{hi!r}]" for k, (lo, hi) in rng.items()) + f" ({details.get('score_range_kind', '')})"


def to_markdown(evals: Sequence[Evaluation]) -> str:
    """The aggregate table (:func:`~kgqa.report.model.evaluation_report`) in Markdown; run names
    and labels are escaped (:func:`kgqa.report.safe.md_cell`)."""
    return evaluation_report(evals).to_markdown()


def to_html(evals: Sequence[Evaluation]) -> str:
    """A small HTML table of the aggregates (what a notebook shows for an evaluation)."""
    report = evaluation_report(evals)
    sigs = "".join(f"<div>{html.escape(n)}</div>" for n in report.notes)
    sigs += "".join(f"<div><code>{html.escape(s)}</code></div>" for s in report.signatures)
    skipped = sum(len(e.skipped) for e in evals)
    note = f"<div>{skipped} question(s) skipped (see <code>.skipped</code>)</div>" if skipped else ""
    return f"{report_table(report)}{note}{sigs}"
