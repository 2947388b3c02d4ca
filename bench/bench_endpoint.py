"""Benchmark: SparqlEndpoint throughput against a local endpoint with 50 ms latency per request.

The endpoint is ``tests/faultserver.py``'s threaded HTTP server answering from an in-memory
pyoxigraph store of CK25 (``prod-inst.ttl``) and sleeping ``--latency`` seconds before each
answer (a stand-in for a remote endpoint's network and queueing delay). Two modes: ``live``
(the server evaluates every request, in this process, on the same cores as the client: its
CPU time, 0.6 s for q40 alone, caps any speed-up) and ``replay`` (each reply is computed once in
an untimed warm-up and then served after the latency only, as a remote endpoint's evaluation
would not compete with the client). The goal is judged on ``replay``. The 50 CK25 gold
queries (normalised) go through ``SparqlEndpoint.execute_many`` with 1 and with 8 requests in
flight (``--concurrency``); each setting gets a fresh engine (one warm-up ``ASK {}`` probe, not
timed) and the median wall time of ``--repeat`` passes is reported, with queries/second and the
speed-up over one in flight. Every outcome must be OK and identical across settings.

Goal (issue 3): 8 in flight >= 5x the throughput of 1 in flight.

Usage: ``python bench/bench_endpoint.py [--data ../shared/data] [--latency 0.05]
[--concurrency 1,8] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = os.environ.get("KGQA_DATA_DIR") or str(REPO.parent / "shared" / "data")
    ap.add_argument("--data", default=default_data)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", default="1,8")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    import pyoxigraph as ox

    sys.path.insert(0, str(REPO / "tests"))
    from faultserver import FaultServer, oxigraph_handler

    from kgqa.execute.endpoint import SparqlEndpoint
    from kgqa.execute.normalise import normalise
    from kgqa.model import Status

    ck25 = Path(args.data) / "ck25"
    doc = yaml.safe_load((ck25 / "questions.yml").read_text())
    queries = [normalise(q["query"]["sparql"]).text for q in doc["questions"]]
    store = ox.Store()
    store.load(path=str(ck25 / "graphs" / "prod-inst.ttl"), format=ox.RdfFormat.TURTLE)
    levels = [int(c) for c in args.concurrency.split(",")]

    print(f"CK25 gold queries: {len(queries)}; endpoint latency {args.latency * 1000:.0f} ms per request; "
          f"median of {args.repeat} passes")
    reference = None
    speedups = {}
    for replay in (False, True):
        label = ("replay: each reply computed once, then served after the latency only"
                 if replay else "live: the local server evaluates every request on this machine's CPU")
        print(f" {label}")
        results: dict[int, float] = {}
        with FaultServer(oxigraph_handler(store, latency=args.latency, replay=replay), lifetime=3600) as server:
            if replay:  # fill the server's replay cache (not timed)
                with SparqlEndpoint(server.url(), concurrency=8) as warm:
                    warm.execute_many(queries, timeout=60)
            for c in levels:
                with SparqlEndpoint(server.url(), concurrency=c) as engine:
                    engine.probe()
                    server.max_in_flight = 0
                    times = []
                    for _ in range(args.repeat):
                        t0 = time.perf_counter()
                        outs = engine.execute_many(queries, timeout=60)
                        times.append(time.perf_counter() - t0)
                bad = [(i + 1, o.status.value, o.message[:80]) for i, o in enumerate(outs) if o.status is not Status.OK]
                if bad:
                    print(f"  {c} in flight: {len(bad)} queries failed: {bad[:3]}", file=sys.stderr)
                    return 1
                answers = [o.answer for o in outs]
                if reference is None:
                    reference = answers
                elif answers != reference:
                    print(f"  {c} in flight: answers differ from the first setting", file=sys.stderr)
                    return 1
                results[c] = statistics.median(times)
                print(f"  {c:>3} in flight: {results[c]:7.3f} s  {len(queries) / results[c]:7.1f} queries/s"
                      f"  (max in flight seen by the server: {server.max_in_flight})")
        base = levels[0]
        for c in levels[1:]:
            speedups[(replay, c)] = results[base] / results[c]
            print(f"  speed-up {c} vs {base} in flight: {speedups[(replay, c)]:.2f}x")
    if (True, 8) in speedups:
        ok = speedups[(True, 8)] >= 5
        print(f"goal (8 vs 1 in flight >= 5x, replay mode): {speedups[(True, 8)]:.2f}x "
              f"{'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
