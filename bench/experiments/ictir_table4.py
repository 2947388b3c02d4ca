"""ICTIR'22 (Linjordet, Balog, Setty) Table 4 shape on a benchmark generated from CK25: systems
trained on 12.5 / 25 / 50 / 100% of the training split, every query and answer measure, the
answers obtained by executing the predicted queries on the shared CK25 KG.

    nice -n 19 .venv/bin/python bench/experiments/ictir_table4.py [--data ../shared/data]
        [--n 400] [--epochs 15] [--seed 0] [--threads 2] [--out bench/experiments/results/ictir-table4.md]

Steps: ``kgqa.make.generate`` (``--n`` graph queries of 1-2 edges, functions none/count, seed) on
``ck25/graphs/prod-inst.ttl``; ``kgqa split --by iid --ratios 0.8,0.1,0.1``; for each fraction
the first share of the (shuffled by the split) training items; systems: ``retrieval`` (raw
questions, entities re-grounded by label matching on the KG), ``seq2seq`` without copy (raw
questions, the paper's setting: NSpM-style translation) and ``simple`` (one-fact questions
only: it answers the rest with its one-triple guess). Measures: BLEU, ROUGE_L, QueryEM
(whitespace), F1_Ans, Exec, F1_Sem, F1_Tri, GEK1-3 (kgqa's definitions).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, hardware, markdown_table, out_arg, run_system, write_report  # noqa: E402

sys.path.insert(0, str(ROOT))
MEASURES = ["BLEU", "ROUGE_L", "QueryEM(norm=whitespace)", "F1_Ans", "Exec", "F1_Sem", "F1_Tri", "GEK1", "GEK2", "GEK3"]
FRACTIONS = (0.125, 0.25, 0.5, 1.0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--systems", default="retrieval,simple,seq2seq")
    ap.add_argument("--out", default=str(ROOT / "bench" / "experiments" / "results" / "ictir-table4.md"))
    ap.add_argument("--no-times", action="store_true", help="no fit/predict seconds columns (tables the docs keep and CI compares)")
    args = ap.parse_args()

    from kgqa.make.splits import split_dataset
    from kgqa.make.generate import GenerateOptions, generate
    from kgqa.model import Dataset

    start = time.perf_counter()
    kg = Path(args.data) / "ck25" / "graphs" / "prod-inst.ttl"
    ds = generate(str(kg), GenerateOptions(n=args.n, edges=(1, 2), seed=args.seed, functions=("none", "count"))).dataset
    parts, _ = split_dataset(ds, "iid", (0.8, 0.1, 0.1), seed=args.seed)
    tr, va, te = parts["train"], parts["validation"], parts["test"]
    print(f"generated {len(ds)} questions from CK25; train {len(tr)}, validation {len(va)}, test {len(te)}", flush=True)
    rows = []
    for frac in FRACTIONS:
        sub = Dataset(f"train-{frac}", tr.items[: max(1, round(frac * len(tr)))])
        for kind in args.systems.split(","):
            cfg = {}
            if kind == "seq2seq":
                import torch

                torch.set_num_threads(args.threads)
                cfg = {"copy": False, "epochs": args.epochs, "seed": args.seed}
            res = run_system(kind, sub, va if kind == "seq2seq" else None, te, MEASURES, kg=str(kg), **cfg)
            row = [f"{100 * frac:g}%", len(sub), kind, *(res[m] for m in MEASURES), round(res["fit_s"]),
                   round(res["predict_s"], 1)]
            rows.append(row)
            print("  " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row), flush=True)
    header = ["train share", "items", "system", "BLEU", "ROUGE-L", "QueryEM", "F1_Ans", "Exec", "F1_Sem", "F1_Tri",
              "GEK-1", "GEK-2", "GEK-3", "fit s", "predict s"]
    if args.no_times:
        header, rows = header[:-2], [r[:-2] for r in rows]
    table = markdown_table(header, rows)
    total = time.perf_counter() - start
    cmd = (f"nice -n 19 .venv/bin/python bench/experiments/ictir_table4.py --n {args.n} --epochs {args.epochs} "
           f"--seed {args.seed} --threads {args.threads} --systems {args.systems}" + (" --no-times" if args.no_times else "")
           + f" --out {out_arg(args.out)}")
    note = (f"Seed {args.seed}; {len(ds)} generated questions (train {len(tr)}, validation {len(va)}, test {len(te)}); "
            f"answers by executing every predicted query on CK25 (pyoxigraph, kgqa's sandbox); total "
            f"{{minutes}} min on {hardware()}, torch threads {args.threads}. Measures in %.")
    write_report(args.out, "ICTIR'22 Table 4 shape on a benchmark generated from CK25", cmd, note, table, total)

if __name__ == "__main__":
    main()
