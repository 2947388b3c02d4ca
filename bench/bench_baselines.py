"""Training and prediction speed of the reference systems (kgqa.systems) on CPU.

    nice -n 19 .venv/bin/python bench/bench_baselines.py [--data ../shared/data] [--train 500]
        [--test 200] [--epochs 1] [--threads 2]

- ``retrieval`` and ``seq2seq`` (small preset, with and without copy, one epoch unless
  ``--epochs``): LC-QuAD 1.0 tagged by ``kgqa annotate`` (no KG), the first ``--train`` items
  to train on, the next ``--test`` to answer; the retrieval baseline also answers a 1,000-item
  slice (the size of LC-QuAD 1.0's test set);
- ``simple``: one-edge questions generated from CK25 (``kgqa.generate``, 200 graph queries),
  two thirds to train, one third to answer, entity detection and relation checks on the KG.

Prints training examples/s (examples x epochs / fit seconds) and predictions/s per system, and
the fit / predict seconds. Figures depend on the machine and its load: numbers in the docs say
which machine gave them.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--train", type=int, default=500)
    ap.add_argument("--test", type=int, default=200)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    data = Path(args.data)

    from kgqa.build.annotate import annotate_to_file
    from kgqa.load import load_dataset
    from kgqa.model import Dataset
    from kgqa.systems import create

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tagged = Path(tmp) / "tagged.jsonl"
        annotate_to_file(str(data / "lcquad-1.0" / "train-data.json"), tagged, mode="tagged")
        ds = load_dataset(str(tagged))
        train = Dataset("train", ds.items[: args.train])
        test = Dataset("test", ds.items[args.train: args.train + args.test])
        big = Dataset("test1000", ds.items[-1000:])

        def measure(name, system, tr, te, epochs=1, kg=None):
            t0 = time.perf_counter()
            system.fit(tr, kg=kg)
            fit = time.perf_counter() - t0
            t0 = time.perf_counter()
            system.predict(te, kg=kg)
            pred = time.perf_counter() - t0
            rows.append((name, len(tr.items), epochs, fit, len(tr.items) * epochs / fit, len(te.items), pred,
                         len(te.items) / pred))
            return system

        r = measure("retrieval (tagged LC-QuAD 1.0)", create("retrieval"), train, test)
        t0 = time.perf_counter()
        r.predict(big, check=False)
        rows.append(("retrieval: 1,000 questions", "", "", "", "", 1000, time.perf_counter() - t0,
                     1000 / (time.perf_counter() - t0)))
        try:
            import torch

            torch.set_num_threads(args.threads)
            for copy in (True, False):
                measure(f"seq2seq small, {'copy' if copy else 'no copy'}",
                        create("seq2seq", copy=copy, epochs=args.epochs), train, test, args.epochs)
        except ImportError:
            print("seq2seq skipped: PyTorch is not installed (pip install torch)")
        from kgqa.generate import GenerateOptions, generate

        kg = data / "ck25" / "graphs" / "prod-inst.ttl"
        gen = generate(str(kg), GenerateOptions(n=200, edges=(1, 1), seed=3, functions=("none",))).dataset
        tr = Dataset("tr", [it for i, it in enumerate(gen.items) if i % 3])
        te = Dataset("te", [it for i, it in enumerate(gen.items) if not i % 3])
        measure("simple (generated CK25, one edge)", create("simple"), tr, te, kg=str(kg))

    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}, "
          f"torch threads {args.threads}")
    head = f"{'system':36} {'train':>6} {'epochs':>6} {'fit s':>8} {'train ex/s':>11} {'test':>6} {'pred s':>8} {'pred/s':>9}"
    print(head)
    print("-" * len(head))
    for name, n, ep, fit, exs, m, pred, ps in rows:
        fit_s = f"{fit:8.2f}" if fit != "" else f"{'':8}"
        ex_s = f"{exs:11.1f}" if exs != "" else f"{'':11}"
        print(f"{name:36} {n!s:>6} {ep!s:>6} {fit_s} {ex_s} {m:>6} {pred:8.2f} {ps:9.1f}")
    print(json.dumps({"rows": rows}, default=str))


if __name__ == "__main__":
    main()
