"""Training and prediction speed of the reference systems (kgqa.baselines) on CPU.

    nice -n 5 .venv/bin/python bench/bench_baselines.py [--data ../shared/data] [--train 500]
        [--test 200] [--epochs 1] [--threads 1]

- ``retrieval`` and ``seq2seq`` (small preset, with and without copy, word and BPE tokens,
  one epoch unless ``--epochs``; decoding at most 32 words or 80 pieces): LC-QuAD 1.0 tagged by ``kgqa annotate`` (no KG), the first
  ``--train`` items to train on, the next ``--test`` to answer; a retrieval baseline trained on
  all but the last 1,000 tagged items also answers those 1,000 (the size of LC-QuAD 1.0's test
  set, which ``../shared/data`` does not hold);
- ``simple``: one-edge questions generated from CK25 (``kgqa.make.generate``, 200 graph queries),
  two thirds to train, one third to answer, entity detection and relation checks on the KG.

Prints training examples/s (examples x epochs / fit seconds) and predictions/s per system, and
the fit / predict seconds, each twice: by the wall clock and by the process's CPU time
(``time.process_time``, all its threads), which a loaded machine slows far less. Figures depend
on the machine: numbers in the docs say which machine gave them and its load.
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
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    data = Path(args.data)

    from kgqa.make.annotate import annotate_to_file
    from kgqa.load import load_dataset
    from kgqa.model import Dataset
    from kgqa.baselines import create

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tagged = Path(tmp) / "tagged.jsonl"
        annotate_to_file(str(data / "lcquad-1.0" / "train-data.json"), tagged, mode="tagged")
        ds = load_dataset(str(tagged))
        train = Dataset("train", ds.items[: args.train])
        test = Dataset("test", ds.items[args.train: args.train + args.test])
        rest, big = Dataset("rest", ds.items[:-1000]), Dataset("test1000", ds.items[-1000:])

        def timed(call):
            w, c = time.perf_counter(), time.process_time()
            call()
            return time.perf_counter() - w, time.process_time() - c

        def measure(name, system, tr, te, epochs=1, kg=None):
            fit, fit_cpu = timed(lambda: system.fit(tr, kg=kg))
            pred, pred_cpu = timed(lambda: system.predict(te, kg=kg))
            n = len(tr.items) * epochs
            rows.append((name, len(tr.items), epochs, fit, n / fit, n / fit_cpu, len(te.items), pred,
                         len(te.items) / pred, len(te.items) / pred_cpu))
            return system

        measure("retrieval (tagged LC-QuAD 1.0)", create("retrieval"), train, test)
        measure("retrieval: 1,000 LC-QuAD questions", create("retrieval"), rest, big)
        try:
            import torch

            torch.set_num_threads(args.threads)
            for copy, tokens in ((True, "word"), (False, "word"), (True, "bpe"), (False, "bpe")):
                # decoding stops at </s> or max_len: LC-QuAD 1.0 queries are at most 20 words, 65 BPE pieces
                measure(f"seq2seq small, {'copy' if copy else 'no copy'}, {tokens}",
                        create("seq2seq", copy=copy, tokens=tokens, epochs=args.epochs,
                               max_len=32 if tokens == "word" else 80), train, test, args.epochs)
        except ImportError:
            print("seq2seq skipped: PyTorch is not installed (pip install torch)")
        from kgqa.make.generate import GenerateOptions, generate

        kg = data / "ck25" / "graphs" / "prod-inst.ttl"
        gen = generate(str(kg), GenerateOptions(n=200, edges=(1, 1), seed=3, functions=("none",))).dataset
        tr = Dataset("tr", [it for i, it in enumerate(gen.items) if i % 3])
        te = Dataset("te", [it for i, it in enumerate(gen.items) if not i % 3])
        measure("simple (generated CK25, one edge)", create("simple"), tr, te, kg=str(kg))

    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}, "
          f"torch threads {args.threads}")
    head = (f"{'system':38} {'train':>6} {'epochs':>6} {'fit s':>8} {'train ex/s':>11} {'ex/CPU s':>9} {'test':>6} "
            f"{'pred s':>8} {'pred/s':>9} {'pred/CPU s':>10}")
    print(head)
    print("-" * len(head))
    for name, n, ep, fit, exs, exc, m, pred, ps, pc in rows:
        print(f"{name:38} {n:>6} {ep:>6} {fit:8.2f} {exs:11.1f} {exc:9.1f} {m:>6} {pred:8.2f} {ps:9.1f} {pc:10.1f}")
    print(json.dumps({"rows": rows}, default=str))


if __name__ == "__main__":
    main()
