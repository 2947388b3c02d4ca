"""Score a trained ``e2e`` folder on the hand-written CK25 development set (docs/baselines.md).

    python bench/experiments/e2e_dev.py models/e2e [--show] [--set KEY=VALUE ...] [-o run.jsonl]

``bench/experiments/e2e_dev_ck25.json`` (QALD JSON) holds 40 questions a person would ask about
the CK25 KG (``ck25/graphs/prod-inst.ttl``), written from the KG and its vocabulary, not from
CK25's questions, each with a gold query checked by executing it (lists, counts, superlatives,
two-hop constraints, filters, multi-column answers, yes/no; ``category`` in each record). The
same figures come from the CLI::

    kgqa baseline predict models/e2e bench/experiments/e2e_dev_ck25.json -o dev.jsonl
    kgqa evaluate bench/experiments/e2e_dev_ck25.json dev.jsonl -p text2sparql --kg KG

This script prints set_F (the text2sparql profile) and, with ``--show``, each question, its
category, its F1 and the predicted query; per category the mean F1.
"""

from __future__ import annotations

import argparse
import os
from collections import defaultdict
from pathlib import Path

import kgqa
from kgqa.api import write_run
from kgqa.baselines import load_system

DEV = Path(__file__).with_name("e2e_dev_ck25.json")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--show", action="store_true")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    kg = str(Path(os.environ.get("KGQA_DATA_DIR", "../shared/data")) / "ck25/graphs/prod-inst.ttl")
    dev = kgqa.load_dataset(str(DEV))
    system = load_system(args.folder)
    for kv in args.set:
        key, value = kv.split("=", 1)
        system.config[key] = float(value)
    run = system.predict(dev, kg=kg)
    if args.output:
        write_run(run, args.output)
    ev = kgqa.evaluate(dev, run, profile="text2sparql", kg=kg)
    per = {q.id.split(":")[0]: q.scores.get("set_F") or 0.0 for q in ev.questions}
    by_cat: dict[str, list[float]] = defaultdict(list)
    queries = {p.id: p.sparql for p in run.predictions}
    for it in dev.items:
        f1 = float(per.get(it.id, 0.0))
        by_cat[it.metadata.get("category", "?")].append(f1)
        if args.show:
            print(f"{it.id} [{it.metadata.get('category')}] F1 {f1:.2f}  {it.questions['en']}\n    {queries.get(it.id)}")
    print("  ".join(f"{c} {sum(v) / len(v):.2f} (n={len(v)})" for c, v in by_cat.items()))
    agg = ev.aggregate
    print(f"{args.folder}: dev set_F {agg['set_F']:.4f} (P {agg['set_P']:.4f}, R {agg['set_recall']:.4f}) "
          f"{' '.join(args.set)}")


if __name__ == "__main__":
    main()
