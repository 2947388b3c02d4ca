"""A slow live QA system for ``kgqa system serve --python tests/slowqa.py:answer`` (the worker
tests and bench/bench_workers.py): it answers each demo question with the query of the demo's
``medium`` run (so scores are neither 0 nor 1) after ``KGQA_SLOWQA_LATENCY`` seconds (0.1 by
default), and appends each question it is asked to the file ``KGQA_SLOWQA_LOG`` (when set): how
often it was asked, counted by the test."""

from __future__ import annotations

import asyncio
import functools
import os

from kgqa import api
from kgqa.load import registry

MEDIUM = registry.PACKAGE_DIR / "demo" / "data" / "runs" / "medium.json"


@functools.lru_cache(maxsize=1)
def queries() -> dict[str, str]:
    ds = api.load_dataset("demo")
    run = {p.id: p.sparql for p in api.load_run(str(MEDIUM), dataset=ds).predictions}
    return {it.question("en"): run.get(it.id) or "" for it in ds.items}


async def answer(question: str, lang: str) -> str:
    await asyncio.sleep(float(os.environ.get("KGQA_SLOWQA_LATENCY") or 0.1))
    log = os.environ.get("KGQA_SLOWQA_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(question.replace("\n", " ") + "\n")
    return queries().get(question, "")
