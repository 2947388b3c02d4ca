"""GraphQuestions (Su et al. 2016, Sect. 7.4 and Figure 6) shape on a benchmark generated from
CK25: the baselines' average F1 broken down by function, structure (edges), commonness and
answer cardinality, as the paper breaks down SEMPRE, ParaSempre and Jacana.

    nice -n 5 .venv/bin/python bench/experiments/graphquestions_breakdown.py [--data ../shared/data]
        [--n 300] [--seed 0] [--systems retrieval,simple] [--epochs 10] [--threads 1]
        [--out bench/experiments/results/graphquestions-breakdown.md]

Steps: ``kgqa.make.generate`` (``--n`` graph queries of 1-3 edges, every function at GraphQuestions'
shares, seed) on ``ck25/graphs/prod-inst.ttl``; an even split by graph query as the paper's
(half the graph queries, with all their paraphrases, train; the other half test; the groups
are shuffled with the seed); each system trained on the train half and asked the test half,
every predicted query executed on CK25; scored with the ``graphquestions`` profile (average
F1 of evaluate.py) and broken down with ``kgqa evaluate --by function --by num_edges --by
commonness --by answer_cardinality`` (:func:`kgqa.analyze.breakdown.breakdown_table`:
mean and 95% bootstrap CI per cell, seeded). ``seq2seq`` (raw questions, no copy, the NSpM-style
setting) is accepted in ``--systems`` where the machine affords it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, hardware, markdown_table, out_arg, run_system, write_report  # noqa: E402

sys.path.insert(0, str(ROOT))
MEASURE = "Average F1"
KEYS = ("function", "num_edges", "commonness", "answer_cardinality")


def split_by_graph_query(ds, seed: int):
    """(train, test): the paraphrase groups (graph queries) shuffled with ``seed``, the first
    half of them train; every paraphrase of a graph query is in the same part (Su et al.)."""
    from kgqa.model import Dataset, InputError

    groups: dict[str, list] = {}
    for it in ds.items:
        g = it.groups.get("paraphrase")
        if g is None:
            raise InputError(ds.name, f"item {it.id}: expected groups.paraphrase (a generated dataset's graph query)")
        groups.setdefault(str(g), []).append(it)
    keys = sorted(groups, key=lambda k: int(k) if k.isdigit() else k)
    random.Random(seed).shuffle(keys)
    half = len(keys) // 2
    part = {k: ("train" if i < half else "test") for i, k in enumerate(keys)}
    train = [it for it in ds.items if part[str(it.groups["paraphrase"])] == "train"]
    test = [it for it in ds.items if part[str(it.groups["paraphrase"])] == "test"]
    return Dataset(ds.name + "-train", train), Dataset(ds.name + "-test", test)


LABELS = {"function": "function", "num_edges": "edges", "commonness": "commonness",
          "answer_cardinality": "answer cardinality"}


def summary_table(systems: list[str], overall: list[float], n: int, bts: list) -> str:
    """Average F1 in % of every system: all questions, then each cell of each breakdown (its n)."""
    rows = [["all", "", n, *overall]]
    for bt in bts:
        for k in bt.keys:
            cells = [bt.cells[r].get(k) for r in bt.runs]
            ns = {c.n for c in cells if c is not None}
            rows.append([LABELS.get(bt.key, bt.key), str(k), ns.pop() if len(ns) == 1 else "",
                         *(None if c is None else float(c.mean) for c in cells)])
    header = ["characteristic", "value", "n", *systems]
    lines = markdown_table(header, rows).splitlines()
    lines[1] = "|---|---|---:|" + "---:|" * len(systems)
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--systems", default="retrieval,simple")
    ap.add_argument("--commonness-bins", default="3", help="--bins value for commonness: edges e0,e1,... or Q quantiles")
    ap.add_argument("--out", default=str(ROOT / "bench" / "experiments" / "results" / "graphquestions-breakdown.md"))
    ap.add_argument("--no-times", action="store_true", help="no fit/predict seconds (tables the docs keep and CI compares)")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds per generator query (long: a query that times out under load changes the questions)")
    args = ap.parse_args()

    from kgqa.analyze.breakdown import breakdown_table
    from kgqa.analyze.characteristics import parse_bins
    from kgqa.make.generate import GenerateOptions, generate
    from kgqa.report.analysis import breakdown_markdown

    start = time.perf_counter()
    kg = Path(args.data) / "ck25" / "graphs" / "prod-inst.ttl"
    ds = generate(str(kg), GenerateOptions(n=args.n, edges=(1, 3), seed=args.seed), timeout=args.timeout).dataset
    tr, te = split_by_graph_query(ds, args.seed)
    queries = {str(it.groups["paraphrase"]) for it in ds.items}
    print(f"generated {len(ds)} questions ({len(queries)} graph queries) from CK25; "
          f"train {len(tr)}, test {len(te)}", flush=True)
    evals, rows = [], []
    for kind in args.systems.split(","):
        cfg = {}
        if kind == "seq2seq":
            import torch

            torch.set_num_threads(args.threads)
            cfg = {"copy": False, "epochs": args.epochs, "seed": args.seed}
        res = run_system(kind, tr, None, te, None, kg=str(kg), profile="graphquestions", name=kind, **cfg)
        evals.append(res["evaluation"])
        rows.append([kind, res["Average Recall"], res["Average Precision"], res[MEASURE], res["fit_s"], res["predict_s"]])
        print(f"  {kind}: average F1 {res[MEASURE]:.3f}", flush=True)
    bins = parse_bins([f"commonness={args.commonness_bins}"])
    bts = [breakdown_table(evals, key, measure=MEASURE, bins=bins, seed=args.seed) for key in KEYS]
    header = ["system", "Average Recall", "Average Precision", "Average F1", "fit s", "predict s"]
    if args.no_times:
        header, rows = header[:-2], [r[:-2] for r in rows]
    summary = summary_table([r[0] for r in rows], [r[3] for r in rows], len(te), bts)
    ci = "\n\n".join([markdown_table(header, rows), *(breakdown_markdown(bt).strip() for bt in bts)])
    Path(args.out).with_suffix(".ci.md").parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).with_suffix(".ci.md").write_text(f"# GraphQuestions shape: per-system figures and 95% bootstrap CIs\n\n{ci}\n",
                                                    encoding="utf-8")
    table = summary
    shares = Counter(str(it.metadata.get("function_class")) for it in te.items)
    multi = sum(1 for n in Counter(str(it.groups["paraphrase"]) for it in ds.items).values() if n > 1)
    total = time.perf_counter() - start
    cmd = (f"nice -n 5 .venv/bin/python bench/experiments/graphquestions_breakdown.py --n {args.n} --seed {args.seed} "
           f"--systems {args.systems} --commonness-bins {args.commonness_bins}"
           + (f" --epochs {args.epochs} --threads {args.threads}" if "seq2seq" in args.systems else "")
           + (" --no-times" if args.no_times else "") + f" --out {out_arg(args.out)}")
    note = (f"Seed {args.seed}; {len(ds)} generated questions from {len(queries)} graph queries (1-3 edges, every "
            f"function), split evenly by graph query: train {len(tr)}, test {len(te)} questions (test functions: "
            f"{', '.join(f'{k} {v}' for k, v in sorted(shares.items()))}); answers by executing every predicted "
            f"query on CK25 (kgqa's sandbox); profile `graphquestions` (average F1 of evaluate.py); breakdowns "
            f"as `kgqa evaluate --by` prints them (mean per cell as a fraction, 95% bootstrap CI, seed {args.seed}); "
            f"total {{minutes}} min on {hardware()}. Average F1 in %; the per-system recall and precision and the 95% bootstrap CI of every cell are in the `.ci.md` file beside this one. Only {multi} graph queries have more than one "
            f"question (an entity paraphrase where CK25 has an alternative label; no --lexicon or --paraphraser), so "
            f"the paper's paraphrase curve has next to nothing to rank.")
    write_report(args.out, "GraphQuestions shape on a benchmark generated from CK25", cmd, note, table, total)


if __name__ == "__main__":
    main()
