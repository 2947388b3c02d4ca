"""How close to its limit each timeout fires: the wall-clock checks that left the tests.

The tests (``tests/execute/test_endpoint.py``, ``tests/execute/test_execute_embedded.py``,
``tests/execute/test_execute_batching.py``, ``tests/execute/test_virtuoso.py``) check that a timeout *happens* (the status, the message, that
nothing was waited for beyond the deadline in requests made); how *soon* after the limit it
happens depends on the machine, so it is measured here, on a quiet machine, instead:

- ``endpoint slow server``: a server that answers after 30 s, ``timeout=0.5``;
- ``endpoint dripping body``: a body sent 8 bytes per 50 ms (~4 s), ``timeout=0.6``;
- ``endpoint retries in deadline``: 503 after 0.3 s on every request, 50 retries, ``timeout=1.0``;
- ``endpoint Retry-After past deadline``: ``Retry-After: 3600`` with ``timeout=5`` (gives up at once);
- ``embedded explosive query``: a 5-way cross product on the CK25 KG, ``timeout=1.5``.

Each row prints the limit, the wall time and the overshoot (wall - limit); the exit status is 1
when an overshoot is over ``--slack`` seconds (default 1.0). The embedded row needs
``$KGQA_DATA_DIR/ck25/graphs/prod-inst.ttl`` (skipped without it).

Usage: ``python bench/bench_timeouts.py [--slack 1.0]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from faultserver import FaultServer, Reply  # noqa: E402

from kgqa.execute.endpoint import SparqlEndpoint  # noqa: E402
from kgqa.model import Status  # noqa: E402

Q = "SELECT ?x WHERE { ?x ?p ?o }"
EXPLOSIVE = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"
DRIP = {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "v" * 40}}] * 12}}


def _timed(call):
    t = time.monotonic()
    out = call()
    return out, time.monotonic() - t


def endpoint_rows() -> list[tuple[str, float, float, str]]:
    rows = []
    def answer(reply):
        return lambda s: setattr(s, "handler", lambda r: reply())

    cases = [
        ("endpoint slow server", 0.5, answer(lambda: Reply.ask(True, delay=30)), "ASK {}", {}),
        ("endpoint dripping body", 0.6, answer(lambda: Reply.json(DRIP, drip=0.05, chunk=8)), Q, {}),
        ("endpoint retries in deadline", 1.0, answer(lambda: Reply.error(503, "busy", delay=0.3)), Q,
         {"retries": 50, "backoff": 0.05}),
        ("endpoint Retry-After past deadline", 0.0,
         lambda s: s.script("/sparql", [Reply.error(429, "quota", headers={"Retry-After": "3600"})]), Q, {}),
    ]
    for name, limit, setup, query, kw in cases:
        with FaultServer(lifetime=120) as server:
            setup(server)
            kw = {"backoff": 0.01, **kw}
            with SparqlEndpoint(server.url("/sparql"), **kw) as e:
                out, wall = _timed(lambda: e.execute(query, timeout=limit or 5))
        rows.append((name, limit, wall, out.status.value))
    return rows


def embedded_rows(kg: Path) -> list[tuple[str, float, float, str]]:
    from kgqa.execute.embedded import EmbeddedEngine

    rows = []
    with EmbeddedEngine.from_files([kg], workers=2) as engine:
        out, wall = _timed(lambda: engine.execute(EXPLOSIVE, timeout=1.5))
        rows.append(("embedded explosive query", 1.5, wall, out.status.value))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slack", type=float, default=1.0, help="largest acceptable overshoot in seconds")
    args = ap.parse_args()
    rows = endpoint_rows()
    kg = Path(os.environ.get("KGQA_DATA_DIR", REPO.parent / "shared" / "data")) / "ck25" / "graphs" / "prod-inst.ttl"
    if kg.is_file():
        rows += embedded_rows(kg)
    else:
        print(f"(embedded row skipped: {kg} not found)")
    bad = 0
    print(f"{'case':38} {'limit s':>8} {'wall s':>8} {'over s':>8}  status")
    for name, limit, wall, status in rows:
        over = wall - limit
        flag = "" if over <= args.slack and status != Status.OK.value else "  <-- over the slack" \
            if over > args.slack else "  <-- no timeout"
        bad += bool(flag)
        print(f"{name:38} {limit:8.2f} {wall:8.2f} {over:8.2f}  {status}{flag}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
