"""Benchmark: the 50 CK25 gold queries (normalised) on

1. raw pyoxigraph, in-process, sequential (query + materialise every row) — the floor;
2. kgqa's embedded engine (worker processes, real timeouts, typed terms), with 1 worker and
   with one worker per core;
3. rdflib (in-process, sequential).

Goals (issue 3): kgqa / raw <= 1.5x; kgqa >= 50x faster than rdflib.

Usage: ``python bench/bench_engines.py [--data ../shared/data] [--repeat 5] [--no-rdflib]``.
Times are the median of ``--repeat`` passes over all queries (rdflib: one pass); worker-pool
start-up is reported separately and not included.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import yaml


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = os.environ.get("KGQA_DATA_DIR") or str(Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--data", default=default_data)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-rdflib", action="store_true")
    args = ap.parse_args(argv)

    import pyoxigraph as ox

    from kgqa.execute.embedded import EmbeddedEngine, usable_cores
    from kgqa.execute.normalise import normalise
    from kgqa.model import Status

    ck25 = Path(args.data) / "ck25"
    ttl = ck25 / "graphs" / "prod-inst.ttl"
    doc = yaml.safe_load((ck25 / "questions.yml").read_text(encoding="utf-8"))
    queries = [normalise(q["query"]["sparql"]).text for q in doc["questions"]]
    print(f"CK25: {len(queries)} gold queries (normalised), KG {ttl.name}")

    store = ox.Store()
    store.load(path=str(ttl))

    def raw() -> None:
        for q in queries:
            r = store.query(q, use_default_graph_as_union=True)
            if isinstance(r, ox.QueryBoolean):
                bool(r)
            else:
                [tuple(sol) for sol in r]

    t_raw = _median_time(raw, args.repeat)
    print(f"raw pyoxigraph, in-process, sequential : {t_raw * 1000:8.1f} ms")

    results = {}
    for workers in sorted({1, usable_cores()}):
        t0 = time.perf_counter()
        eng = EmbeddedEngine.from_files([ttl], workers=workers)
        startup = time.perf_counter() - t0
        outs = eng.execute_many(queries)
        assert all(o.status is Status.OK for o in outs), [o.message for o in outs if o.message]
        t = _median_time(lambda: eng.execute_many(queries, timeout=60), args.repeat)
        eng.close()
        results[workers] = t
        print(f"kgqa embedded, {workers} worker(s)            : {t * 1000:8.1f} ms   "
              f"ratio to raw {t / t_raw:5.2f}x  (load + pool start {startup * 1000:.0f} ms)")
    best = min(results.values())
    one = results[1]
    print(f"goal kgqa/raw <= 1.5x: 1 worker {one / t_raw:.2f}x, best {best / t_raw:.2f}x -> "
          f"{'met' if one / t_raw <= 1.5 else 'NOT met'} (1 worker)")

    if not args.no_rdflib:
        import rdflib

        g = rdflib.Graph()
        t0 = time.perf_counter()
        g.parse(str(ttl), format="turtle")
        load = time.perf_counter() - t0
        done, failed, t_rdf, t_kgqa_same = 0, 0, 0.0, 0.0
        eng = EmbeddedEngine.from_files([ttl], workers=1)
        for q in queries:
            t0 = time.perf_counter()
            try:
                res = g.query(q)
                list(res) if res.type != "ASK" else bool(res)
            except Exception as e:  # noqa: BLE001 - rdflib does not support everything
                failed += 1
                print(f"  rdflib failed: {type(e).__name__}: {str(e)[:80]}", file=sys.stderr)
                continue
            t_rdf += time.perf_counter() - t0
            done += 1
            t_kgqa_same += _median_time(lambda q=q: eng.execute(q, timeout=60), 3)
        eng.close()
        speedup = t_rdf / t_kgqa_same if t_kgqa_same else float("nan")
        print(f"rdflib {rdflib.__version__}, in-process, sequential : {t_rdf * 1000:8.1f} ms on {done} queries "
              f"({failed} failed; load {load:.1f} s)")
        print(f"kgqa embedded, 1 worker, same queries   : {t_kgqa_same * 1000:8.1f} ms   "
              f"kgqa is {speedup:.0f}x faster (goal >= 50x: {'met' if speedup >= 50 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
