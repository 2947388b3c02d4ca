"""Benchmark: ``kgqa generate`` of ``--n`` graph queries (default 200, seed 1) on each of the
seven real KGs in ``$KGQA_DATA_DIR/kgs`` (see its README) and on CK25's KG, embedded engine,
no result cache, one run each. Printed per KG: wall seconds (from opening the file to the
dataset built: loading, schema induction, lexicon, generation), CPU seconds (this process and
its oxigraph workers, reaped when generation closes the KG: the figure that does not depend on
the machine's load), graph queries generated, the
function mix (none/count/superlative/comparative, %), and what generation gave up on, or the
reason it generated nothing.

``--out DIR`` writes each KG's dataset (``DIR/<kg>.jsonl``) and summary (``DIR/<kg>.summary.json``)
so that two runs can be diffed byte for byte (a speed change must not change what is generated).

Usage: ``python bench/bench_generate_kgs.py [--n 200] [--seed 1] [--only organs-it,ck25] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from generate_kgs import KG_FILES, kg_options  # noqa: E402


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (the engine's workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("KGQA_DATA_DIR") or str(REPO.parent / "shared" / "data"))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="", help="write DIR/<kg>.jsonl and DIR/<kg>.summary.json")
    args = ap.parse_args(argv)
    from kgqa.make.generate import GenerateOptions, generate
    from kgqa.model.problems import InputError

    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    names = [n for n in KG_FILES if not args.only or n in args.only.split(",")]
    print(f"kgqa generate -n {args.n} --seed {args.seed}, embedded engine, no cache")
    print(f"{'KG':18} {'seconds':>8} {'cpu s':>8} {'queries':>8}  none/count/sup/comp %  notes")
    for name in names:
        path = Path(args.data) / KG_FILES[name]
        t0, c0 = time.perf_counter(), cpu_seconds()
        try:
            res = generate(path, GenerateOptions(n=args.n, seed=args.seed),
                           output=out / f"{name}.jsonl" if out is not None else None, **kg_options(name))
        except InputError as e:
            print(f"{name:18} {time.perf_counter() - t0:8.1f} {cpu_seconds() - c0:8.1f} {0:8d}  -  {e}")
            continue
        secs, cpu = time.perf_counter() - t0, cpu_seconds() - c0
        s = res.summary
        k = max(1, s["graph_queries"])
        mix = "/".join(f"{100 * s['function_class'].get(c, 0) / k:.0f}" for c in ("none", "count", "superlative", "comparative"))
        notes = ", ".join(r for r in s["rejected"] if r.startswith("gave-up"))
        if out is not None:
            (out / f"{name}.summary.json").write_text(json.dumps(s, indent=1, sort_keys=True, default=str) + "\n")
        print(f"{name:18} {secs:8.1f} {cpu:8.1f} {s['graph_queries']:8d}  {mix:22} {notes}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
