"""Benchmark: `kgqa generate` throughput (graph queries accepted per second) on CK25's KG,
embedded engine vs SPARQL endpoints, in one process.

Settings (each runs ``generate(..., GenerateOptions(n=--n, seed=--seed))`` from scratch, no result
cache, the median wall time of ``--repeat`` runs is kept):

- ``embedded``: ``prod-inst.ttl`` loaded into kgqa's embedded pyoxigraph engine (worker
  processes); the baseline;
- ``endpoint (local oxigraph over HTTP)``: the same KG behind ``tests/faultserver.py``'s
  threaded HTTP server answering from an in-memory pyoxigraph store (no added latency), through
  kgqa's ``SparqlEndpoint``: the cost of the SPARQL protocol (HTTP, JSON results) alone;
- ``endpoint (Virtuoso 7)``: a private Virtuoso (tests/virtuoso.py) serving the same file, when
  ``virtuoso-t`` is installed (``.ci/virtuoso.sh``); skipped otherwise, with the reason.

Printed per setting: wall time, graph queries/s, SPARQL queries/s (every query the generator
ran: schema induction, grounding, validation, minimization, commonness, labels), the ratio to
the embedded baseline, and how many of the generated SPARQL queries equal the embedded run's
(the same seed draws the same candidates on every engine; differences are engine behaviour).

``--before REF`` first runs the same bench on the kgqa of git revision ``REF`` (e.g. ``main``)
and prints its lines prefixed ``[before REF]``: graph queries/s before and after a change.

Usage: ``python bench/bench_generate.py [--data ../shared/data] [--n 200] [--seed 1] [--repeat 3]
[--no-virtuoso] [--before main]``.
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


def timed(fn, repeat: int):
    times, res = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = os.environ.get("KGQA_DATA_DIR") or str(REPO.parent / "shared" / "data")
    ap.add_argument("--data", default=default_data)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-virtuoso", action="store_true")
    ap.add_argument("--before", metavar="REF", help="also run this bench on the kgqa of git revision REF, first")
    args = ap.parse_args(argv)
    if args.before:
        from _before import run_before

        rest = [a for a in (argv if argv is not None else sys.argv[1:])]
        i = rest.index("--before")
        run_before(args.before, Path(__file__), rest[:i] + rest[i + 2:])
        print("[after: this checkout]")

    import pyoxigraph as ox

    sys.path.insert(0, str(REPO / "tests"))
    from faultserver import FaultServer, oxigraph_handler

    sys.path.insert(0, str(REPO / "bench"))
    from kgqa.make.generate import KGAccess, GenerateOptions, generate

    ttl = Path(args.data) / "ck25" / "graphs" / "prod-inst.ttl"
    if not ttl.is_file():
        print(f"CK25 KG not found at {ttl}", file=sys.stderr)
        return 1
    opts = GenerateOptions(n=args.n, seed=args.seed)
    print(f"kgqa generate on CK25 ({ttl.name}), n={args.n} graph queries, seed {args.seed}; "
          f"median of {args.repeat} runs")

    rows = []

    def run(label: str, open_kg) -> None:
        def once():
            with open_kg() as kg:
                return generate(kg, opts)

        t, res = timed(once, args.repeat)
        rows.append((label, t, res))

    run("embedded (pyoxigraph workers)", lambda: KGAccess.open(ttl))
    store = ox.Store()
    store.load(path=str(ttl), format=ox.RdfFormat.TURTLE)
    with FaultServer(oxigraph_handler(store), lifetime=3600, max_requests=10**7) as server:
        run("endpoint (local oxigraph over HTTP)", lambda: KGAccess.open(server.url()))
    if not args.no_virtuoso:
        from virtuoso import CK25_GRAPH, ISQL_BIN, VIRTUOSO_BIN, start_virtuoso

        if VIRTUOSO_BIN and ISQL_BIN:
            with tempfile.TemporaryDirectory() as d:
                v = start_virtuoso(Path(d), [ttl], CK25_GRAPH)
                try:
                    run("endpoint (Virtuoso 7)", lambda: KGAccess.open(v.sparql_url, CK25_GRAPH))
                finally:
                    v.stop()
        else:
            print(" (Virtuoso not installed: run .ci/virtuoso.sh; that setting is skipped)")

    base_t, base_res = rows[0][1], rows[0][2]
    base_q = [it.sparql for it in base_res.dataset.items]
    print(f" {'setting':38} {'wall s':>8} {'graph q/s':>10} {'SPARQL q/s':>11} {'vs embedded':>12} {'same SPARQL':>12}")
    for label, t, res in rows:
        n = res.summary["graph_queries"]
        same = sum(a == b for a, b in zip((it.sparql for it in res.dataset.items), base_q))
        print(f" {label:38} {t:8.2f} {n / t:10.1f} {res.queries / t:11.1f} {base_t / t:11.2f}x "
              f"{same:>6}/{len(base_q)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
