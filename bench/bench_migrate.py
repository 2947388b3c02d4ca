"""Benchmark: ``kgqa migrate`` on synthetic SimpleQuestions-style records.

A synthetic pair: ``n`` facts ``(e_i, p_k, e_j)`` over ``n`` entities and 20 predicates in the
source; the target renames every IRI (links in both directions), flips 5 predicates, and puts
every 10th subject behind a redirect node. The records are the facts. Timed:

- ``migrate``: :func:`kgqa.make.migrate.migrate` (entity mapping, path enumeration with two-hop for
  the redirected ones, candidates, proposed rules, migrated query per record, agreement), no
  result cache;
- ``baseline``: the same number of one-hop path queries sent straight to pyoxigraph in this
  process (one ``SELECT ?p WHERE { <s> ?p <o> }`` per record): the floor for any method that
  asks the KG once per record.

Prints seconds, records per second and the ratio migrate / baseline.

``--before REF`` first runs the same bench on the kgqa of git revision ``REF`` (e.g. ``main``),
its lines prefixed ``[before REF]``: records/s before and after a change.

Usage: ``python bench/bench_migrate.py [--sizes 1000,5000] [--before main]``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import pyoxigraph as ox

from kgqa.make.migrate import KG, Links, migrate, read_triples

S = "http://src.example/"
T = "http://tgt.example/"
SAMEAS = "http://www.w3.org/2002/07/owl#sameAs"
REDIR = "http://dbpedia.org/ontology/wikiPageRedirects"


def make(n: int, d: Path, seed: int = 0) -> tuple[Path, Path, Path, list[tuple[str, str]]]:
    rng = random.Random(seed)
    facts = {(rng.randrange(n), rng.randrange(20), rng.randrange(n)) for _ in range(n)}
    facts = sorted((s, p, o) for s, p, o in facts if s != o)
    rec, tgt, lnk = d / "records.txt", d / "target.nt", d / "links.nt"
    pairs = []
    with open(rec, "w") as r, open(tgt, "w") as t:
        for s, p, o in facts:
            r.write(f"{S}e{s}\t{S}p{p}\t{S}e{o}\tq?\n")
            if p < 5:
                t.write(f"<{T}e{o}> <{T}inv{p}> <{T}e{s}> .\n")
            else:
                t.write(f"<{T}e{s}> <{T}p{p}> <{T}e{o}> .\n")
            pairs.append((f"{T}e{s}", f"{T}e{o}"))
        for i in range(0, n, 10):
            t.write(f"<{T}old{i}> <{REDIR}> <{T}e{i}> .\n")
    with open(lnk, "w") as f:
        for i in range(n):
            tgt_i = f"{T}old{i}" if i % 10 == 0 else f"{T}e{i}"
            a, b = (f"{S}e{i}", tgt_i) if i % 2 else (tgt_i, f"{S}e{i}")
            f.write(f"<{a}> <{SAMEAS}> <{b}> .\n")
    return rec, tgt, lnk, pairs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,5000")
    ap.add_argument("--before", metavar="REF", help="also run this bench on the kgqa of git revision REF, first")
    a = ap.parse_args()
    if a.before:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _before import run_before

        run_before(a.before, Path(__file__), ["--sizes", a.sizes])
        print("[after: this checkout]")
    for n in (int(x) for x in a.sizes.split(",")):
        with tempfile.TemporaryDirectory() as d:
            rec, tgt, lnk, pairs = make(n, Path(d))
            store = ox.Store()
            store.load(path=str(tgt), format=ox.RdfFormat.N_TRIPLES)
            t0 = time.perf_counter()
            for s, o in pairs:
                list(store.query(f"SELECT ?p WHERE {{ <{s}> ?p <{o}> }}"))
            base = time.perf_counter() - t0
            ds = read_triples(rec)
            kg = KG([tgt], cache=False)
            t0 = time.perf_counter()
            m = migrate(ds, kg, Links.load([lnk]))
            took = time.perf_counter() - t0
            kg.close()
            print(f"n={len(ds)} records: migrate {took:.2f} s ({len(ds) / took:.0f}/s), "
                  f"baseline {base:.3f} s, ratio {took / base:.1f}x; kept {len(m.dataset)}, "
                  f"{m.summary()['agreement']}")


if __name__ == "__main__":
    main()
