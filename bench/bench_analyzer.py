"""Analyzer throughput on every shared gold query vs pyoxigraph's parser and rdflib's, in one
process.

    .venv/bin/python bench/bench_analyzer.py [--data ../shared/data] [--repeat 5]

What is measured, per query text, over all gold SPARQL of the shared datasets (QALD-9 train and
test, QALD-10, DB25, CK25, RuBQ 1.0 dev and test; see tests/sparql_gold.py):

- kgqa: ``kgqa.sparql.analyze(text)``, the entry point every consumer calls (lexer, tolerant
  parser with spans and validity checks, the facts of ``QueryInfo``), with its per-text result
  cache emptied before each batch of 100 queries, so every text is parsed (a text repeated
  within a batch is served by the cache, as it is for a consumer). What the parser keeps
  between texts (IRI objects, the tokens and declarations of a PREFIX prologue seen before)
  is kept across rounds; the first round (those tables empty, as in a fresh process) is printed
  too.
- pyoxigraph: it has no parse-only call (0.5.x exposes no ``Query``), so ``Store().query(text)``
  on an empty in-memory store: parse and plan, the result never iterated, errors caught.
  Queries the sandbox refuses (SERVICE: an engine must not be sent them) are left out, and kgqa
  is measured again on the same subset for the ratio.
- rdflib: ``parseQuery`` (parse only, no algebra), errors caught.
- kgqa analyze + ``canonical_form`` on top of it, for reference.

Each rate is the best of ``--repeat`` rounds; within a round the contenders take turns every
100 queries, so that other processes slow them alike; the ratio to pyoxigraph is printed from
the best rates and per round (its median is the steadier figure on a loaded machine).
Targets: analyze >= 0.5x pyoxigraph, >= 20x rdflib.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from sparql_gold import gold_queries  # noqa: E402

from kgqa.sparql import analyze, canonical_form  # noqa: E402
from kgqa.sparql import parser as _parser  # noqa: E402
from kgqa.sparql.analyzer import _analyze_cached  # noqa: E402

TARGET_OXIGRAPH = 0.5
TARGET_RDFLIB = 20.0


def rates(fns: dict, queries: list[str], repeat: int, batch: int = 100) -> tuple[dict, dict, list]:
    """Best-of-``repeat`` queries/s per function, first-round queries/s, and per round the
    ratio of the first function's rate to the second's. Within a round the contenders take
    turns batch by batch (``batch`` queries each), so that load from other processes falls on
    all of them alike; analyze's result cache is emptied before each batch."""
    names = list(fns)
    best = {name: float("inf") for name in names}
    first: dict[str, float] = {}
    paired: list[float] = []
    for _ in range(repeat):
        total = dict.fromkeys(names, 0.0)
        for k in range(0, len(queries), batch):
            chunk = queries[k : k + batch]
            for name in names:
                fn = fns[name]
                _analyze_cached.cache_clear()
                t0 = time.perf_counter()
                for q in chunk:
                    fn(q)
                total[name] += time.perf_counter() - t0
        for name in names:
            first.setdefault(name, len(queries) / total[name])
            best[name] = min(best[name], total[name])
        if len(names) > 1:
            paired.append(total[names[1]] / total[names[0]])
    return {name: len(queries) / t for name, t in best.items()}, first, paired


def verdict(ratio: float, target: float) -> str:
    return "met" if ratio >= target else "NOT met"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("KGQA_DATA_DIR") or str(ROOT.parent / "shared" / "data")
    ap.add_argument("--data", default=default)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-rdflib", action="store_true", help="skip rdflib (slow: ~5 s a round)")
    args = ap.parse_args()
    queries = [q for _, q in gold_queries(Path(args.data))]
    if not queries:
        print(f"no gold queries under {args.data}", file=sys.stderr)
        return 2
    logging.disable(logging.CRITICAL)
    import pyoxigraph

    from kgqa.execute.sandbox import refusal

    store = pyoxigraph.Store()

    def oxigraph_parse(q: str) -> None:
        try:
            store.query(q)
        except Exception:
            pass

    def analyze_and_canonical(q: str) -> None:
        canonical_form(analyze(q))

    safe = [q for q in queries if refusal(q) is None]
    _parser._IRIS.clear()  # the first round starts as a fresh process does
    _parser._HEADS.clear()
    ox, ox_first, ox_paired = rates({"kgqa": analyze, "oxigraph": oxigraph_parse}, safe, args.repeat)
    all_fns = {"kgqa": analyze, "canonical": analyze_and_canonical}
    if not args.no_rdflib:
        from rdflib.plugins.sparql.parser import parseQuery

        def rdflib_parse(q: str) -> None:
            try:
                parseQuery(q)
            except Exception:
                pass

        all_fns["rdflib"] = rdflib_parse
    al, _, _ = rates(all_fns, queries, max(1, args.repeat // 2) if not args.no_rdflib else args.repeat)

    print(f"gold queries: {len(queries)} ({len(set(queries))} distinct); "
          f"{len(safe)} without SERVICE, compared with pyoxigraph {pyoxigraph.__version__}")
    print("kgqa: kgqa.sparql.analyze(text), result cache emptied every 100 texts; "
          "pyoxigraph: Store().query(text) on an empty store (parse + plan, no parse-only call)")
    print(f"kgqa analyze:                {ox['kgqa']:9.0f} queries/s   "
          f"(first round, parser tables empty: {ox_first['kgqa']:.0f}/s)")
    print(f"pyoxigraph Store.query:      {ox['oxigraph']:9.0f} queries/s")
    ratio = ox["kgqa"] / ox["oxigraph"]
    rounds = " ".join(f"{r:.2f}" for r in ox_paired)
    print(f"ratio analyze/pyoxigraph:    {ratio:9.2f}x   target >= {TARGET_OXIGRAPH}x: "
          f"{verdict(ratio, TARGET_OXIGRAPH)}   (best rates; per round: {rounds}; "
          f"median {statistics.median(ox_paired):.2f}x)")
    print(f"kgqa analyze (all queries):  {al['kgqa']:9.0f} queries/s")
    print(f"kgqa analyze + canonical:    {al['canonical']:9.0f} queries/s")
    if "rdflib" in al:
        r = al["kgqa"] / al["rdflib"]
        print(f"rdflib parseQuery:           {al['rdflib']:9.0f} queries/s")
        print(f"ratio analyze/rdflib:        {r:9.1f}x   target >= {TARGET_RDFLIB:g}x: {verdict(r, TARGET_RDFLIB)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
