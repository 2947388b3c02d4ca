"""Reyd & Zouaq (2023) shape on LC-QuAD 1.0: seq2seq with and without copy x raw / tagged
questions, on the original-like (iid), unknown-URI and unknown-template splits made by
``kgqa split``; the retrieval baseline beside them. BLEU, QueryEM (whitespace: token
sequences), F1_Sem, F1_Tri, no KG needed (LC-QuAD stores no answers).

    nice -n 19 .venv/bin/python bench/experiments/reyd_zouaq.py [--data ../shared/data]
        [--epochs 12] [--seed 0] [--threads 2] [--out bench/experiments/results/reyd-zouaq.md]
        [--splits iid,uri,template] [--preset small]

Steps: ``kgqa annotate --mode tagged`` (no KG: LC-QuAD's intermediary questions) of LC-QuAD 1.0
train (the tagged items; raw = the same items with the text that was tagged), then
``kgqa split --by iid|uri|template --ratios 0.8,0.1,0.1 --seed SEED`` of the tagged file; each
system is trained on train (seq2seq keeps the epoch with the lowest validation loss) and
scored on test. Prints the table and writes it as Markdown with the command, seed, times and
hardware.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, hardware, markdown_table, raw_of, run_system, write_report  # noqa: E402

sys.path.insert(0, str(ROOT))
MEASURES = ["BLEU", "QueryEM(norm=whitespace)", "F1_Sem", "F1_Tri"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--preset", default="small")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--splits", default="iid,uri,template")
    ap.add_argument("--systems", default="retrieval,seq2seq,seq2seq+copy")
    ap.add_argument("--inputs", default="raw,tagged")
    ap.add_argument("--limit", type=int, default=0, help="train on the first N training items only (0: all)")
    ap.add_argument("--set", action="append", default=[], help="seq2seq option KEY=VALUE (e.g. d_model=64)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "experiments" / "results" / "reyd-zouaq.md"))
    args = ap.parse_args()

    from kgqa.build.annotate import annotate_to_file
    from kgqa.build.splits import split_dataset
    from kgqa.load import load_dataset
    from kgqa.model import Dataset

    if "seq2seq" in args.systems:
        import torch

        torch.set_num_threads(args.threads)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        tagged_path = Path(tmp) / "tagged.jsonl"
        report = annotate_to_file(str(Path(args.data) / "lcquad-1.0" / "train-data.json"), tagged_path, mode="tagged")
        tagged = load_dataset(str(tagged_path))
    print(f"annotated {report['annotated']}/{report['items']} LC-QuAD 1.0 items (tagged, no KG)", flush=True)
    rows = []
    for by in args.splits.split(","):
        parts, _ = split_dataset(tagged, by, (0.8, 0.1, 0.1), seed=args.seed)
        tr, va, te = parts["train"], parts["validation"], parts["test"]
        if args.limit:
            tr = Dataset(tr.name, tr.items[: args.limit], tr.format)
        print(f"split {by}: train {len(tr)}, validation {len(va)}, test {len(te)}", flush=True)
        for inputs in args.inputs.split(","):
            trx, vax, tex = (tr, va, te) if inputs == "tagged" else (raw_of(tr), raw_of(va), raw_of(te))
            systems = {"retrieval": ("retrieval", "retrieval", {}),
                       "seq2seq": ("seq2seq", "seq2seq", {"copy": False}),
                       "seq2seq+copy": ("seq2seq + copy", "seq2seq", {"copy": True})}
            for label, kind, cfg in (systems[name] for name in args.systems.split(",")):
                if kind == "seq2seq":
                    cfg = {**cfg, "epochs": args.epochs, "seed": args.seed, "preset": args.preset, "device": args.device,
                           **{k: json.loads(v) for k, v in (x.split("=", 1) for x in args.set)}}
                res = run_system(kind, trx, vax if kind == "seq2seq" else None, tex, MEASURES, **cfg)
                row = [by, label, inputs, *(res[m] for m in MEASURES), round(res["fit_s"]), round(res["predict_s"], 1)]
                rows.append(row)
                print("  " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row), flush=True)
    header = ["split", "system", "input", "BLEU", "QueryEM", "F1_Sem", "F1_Tri", "fit s", "predict s"]
    table = markdown_table(header, rows)
    total = time.perf_counter() - start
    cmd = (f"nice -n 19 .venv/bin/python bench/experiments/reyd_zouaq.py --epochs {args.epochs} --seed {args.seed} "
           f"--threads {args.threads} --preset {args.preset} --splits {args.splits} --systems {args.systems} --inputs {args.inputs}"
           + (f" --limit {args.limit}" if args.limit else "")
           + "".join(f" --set {x}" for x in args.set))
    note = (f"Seed {args.seed}; seq2seq preset `{args.preset}`{' with ' + ', '.join(args.set) if args.set else ''}, "
            f"{args.epochs} epochs (best validation loss kept); "
            f"{report['annotated']}/{report['items']} items tagged without a KG; total {{minutes}} min on "
            f"{hardware()}, torch threads {args.threads}. Measures in %.")
    write_report(args.out, "Reyd & Zouaq shape on LC-QuAD 1.0", cmd, note, table, total)

if __name__ == "__main__":
    main()
