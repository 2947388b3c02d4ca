"""Shared by the experiment scripts: training, scoring, timing and the Markdown table."""

from __future__ import annotations

import os
import platform
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def hardware() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} logical CPUs (shared), no GPU"


def raw_of(ds: Any) -> Any:
    """The same items with the text that was tagged (``metadata.raw_question``) and no mentions."""
    from kgqa.model import Dataset

    items = []
    for it in ds.items:
        md = {k: v for k, v in it.metadata.items() if k not in ("mentions", "annotation")}
        items.append(replace(it, questions={"en": it.metadata.get("raw_question") or it.question("en")}, metadata=md))
    return Dataset(ds.name + "-raw", items, ds.format)


def tag_end_of(ds: Any) -> Any:
    """The same items in ``kgqa annotate --mode tag-end`` form: the question that was tagged
    (``metadata.raw_question``), then `` <sep> element mention`` for each mention (in the order
    ``kgqa annotate`` keeps: the query's); items kept raw (nothing tagged) stay as they are."""
    from kgqa.baselines.inputs import SEP
    from kgqa.model import Dataset

    items = []
    for it in ds.items:
        md, mentions = it.metadata, it.metadata.get("mentions") or []
        if md.get("annotation") != "tagged" or not mentions:
            items.append(it)
            continue
        text = md.get("raw_question") or it.question("en")
        text += "".join(f" {SEP} {m['element']} {m['text']}" for m in mentions)
        items.append(replace(it, questions={"en": text}, metadata={**md, "annotation": "tag-end"}))
    return Dataset(ds.name + "-tag-end", items, ds.format)


def run_system(kind: str, train: Any, valid: Any, test: Any, measures: list[str] | None, kg: Any = None,
               profile: str = "kgqa", name: str | None = None, progress: bool = False, **config: Any) -> dict[str, Any]:
    """Fit, predict, score (``measures``, or the ``profile``'s): the aggregate measures, the
    seconds each step took and the evaluation itself (``evaluation``; its run named ``name``)."""
    import kgqa
    from kgqa.baselines import create

    t0 = time.perf_counter()
    system = create(kind, **config)
    system.show_progress = progress  # seq2seq: a bar on a terminal, else a line per epoch
    system.fit(train, valid, kg=kg)
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    run = system.predict(test, kg=kg)
    pred = time.perf_counter() - t0
    if name:
        run = replace(run, name=name)
    e = kgqa.evaluate(test, run, kg=str(kg) if kg else None, measures=measures, profile=profile)
    return {**{m: e.aggregate.get(m) for m in measures or e.aggregate}, "fit_s": fit, "predict_s": pred,
            "evaluation": e}


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """Floats up to 1 as percentages with one decimal; columns whose header ends in `` s`` as
    seconds."""
    seconds = {i for i, h in enumerate(header) if h.endswith(" s")}

    def cell(i: int, v: Any) -> str:
        if i in seconds and isinstance(v, (int, float)):
            return f"{v:.1f}" if v < 10 else f"{v:.0f}"
        if isinstance(v, float):
            return f"{100 * v:.1f}" if v <= 1.0 else f"{v:.0f}"
        return "" if v is None else str(v)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(i, v) for i, v in enumerate(r)) + " |" for r in rows]
    return "\n".join(lines)


def commit() -> str:
    """The checkout's commit (``+dirty`` with uncommitted changes), or ``unknown``."""
    import subprocess

    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def out_arg(out: str | Path) -> str:
    """``out`` as a command line shows it: relative to the repository where it lies in it."""
    path = Path(out).resolve()
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def write_report(out: str | Path, title: str, cmd: str, note: str, table: str, seconds: float) -> None:
    """Print the table and write it as Markdown: title, the command, the note (seed, data,
    hardware: ``{minutes}`` is replaced by the run's minutes), the table."""
    text = (f"# {title}\n\n`{cmd}`\n\nMade by kgqa commit {commit()}.\n\n"
            f"{note.replace('{minutes}', f'{seconds / 60:.1f}')}\n\n{table}\n")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(text, encoding="utf-8")
    print(table)
    print(f"wrote {out} ({seconds / 60:.1f} min)")
