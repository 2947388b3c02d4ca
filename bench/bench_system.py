"""Benchmark: asking a live QA system with 8 requests in flight vs one at a time (GERBIL's way).

The system is kgqa's own adapter (``kgqa system serve --python``, a real uvicorn process on a
free loopback port) serving a callable that answers every question with a fixed SPARQL query
after ``--latency`` seconds (an ``asyncio.sleep``: a stand-in for a remote system's model and
network time, which does not compete with the client for the CPU). The questions are CK25's
50 (from ``--data``), or the built-in demo's 30 when the shared data is absent. Each setting
runs :func:`kgqa.execute.live.ask` ``--repeat`` times with a fresh journal (fsync per
response included) and reports the best wall time (as ``timeit`` does: the run least disturbed
by other processes on a shared machine; the median is printed too), questions per second and
the speed-up over one in flight, for both contracts. Every outcome must be ``ok``.

Goal (issue 13): 8 in flight >= 5x faster than sequential at 50 ms latency.

Usage: ``python bench/bench_system.py [--data ../shared/data] [--latency 0.05]
[--concurrency 1,8] [--repeat 5] [--protocols gerbil,text2sparql]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SYSTEM = '''
import asyncio
LATENCY = {latency!r}

async def answer(question, lang):
    await asyncio.sleep(LATENCY)
    return "SELECT ?x WHERE {{ ?x a <http://example.org/Thing> }}"
'''


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = os.environ.get("KGQA_DATA_DIR") or str(REPO.parent / "shared" / "data")
    ap.add_argument("--data", default=default_data)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", default="1,8")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--protocols", default="gerbil,text2sparql")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(REPO / "tests"))
    from systemprocs import adapter

    from kgqa.execute.live import AskSettings, ask
    from kgqa.load import load_dataset

    ck25 = Path(args.data) / "ck25" / "questions.yml"
    if ck25.exists():
        ds, label = load_dataset(str(ck25)), "CK25"
    else:
        from kgqa.demo import DATA

        ds, label = load_dataset(str(DATA / "questions.json")), "demo"
    levels = [int(c) for c in args.concurrency.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="kgqa-bench-system-"))
    mod = tmp / "slow_system.py"
    mod.write_text(SYSTEM.format(latency=args.latency), encoding="utf-8")
    n = len(ds.by_language())
    print(f"{label}: {n} questions; system latency {args.latency * 1000:.0f} ms per question "
          f"(kgqa system serve --python, uvicorn on 127.0.0.1); best and median of {args.repeat} passes")
    worst = None
    with adapter("--python", f"{mod}:answer") as srv:
        for protocol in args.protocols.split(","):
            base = None
            for c in levels:
                times = []
                for r in range(args.repeat):
                    s = AskSettings(concurrency=c, progress=False, timeout=30)
                    t0 = time.perf_counter()
                    res = ask(ds, srv.url + protocol, protocol, s, journal=tmp / f"{protocol}-{c}-{r}.jsonl")
                    times.append(time.perf_counter() - t0)
                    assert res.counts == {"ok": n}, res.counts
                best, med = min(times), statistics.median(times)
                base = base or best
                speedup = base / best
                print(f"  {protocol:12s} {c:2d} in flight: {best:6.3f} s (median {med:6.3f} s)  {n / best:7.1f} q/s  "
                      f"x{speedup:.2f}")
                if c == max(levels):
                    worst = speedup if worst is None else min(worst, speedup)
    goal = 5.0
    verdict = "meets" if worst is not None and worst >= goal else "MISSES"
    print(f"speed-up at {max(levels)} in flight (lowest over protocols): x{worst:.2f} — {verdict} the goal (>= x{goal:g})")
    return 0 if verdict == "meets" else 1


if __name__ == "__main__":
    sys.exit(main())
