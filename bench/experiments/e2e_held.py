"""Held-back accuracy of trained ``e2e`` folders with the current code (docs/baselines.md).

    python bench/experiments/e2e_held.py models/e2e-ammo [--one-edge] [--set KEY=VALUE ...]

Answers the held-back generated questions a folder keeps (``held_out.json``) and prints how many
return exactly the gold query's answer (and how many of those about the schema, ids ``s...``,
whose query no training question has: they are held back with all their wordings). ``--one-edge`` keeps only the skeletons of one triple
pattern and answers only the held-back questions of two edges (an intermediate ``?y``): what the
graph candidates answer for relations no training question combined. ``--set`` overrides a
config value (``--set hop_base=0`` turns the two-edge graph candidates off).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kgqa.baselines import load_system
from kgqa.baselines.e2e import held_out_accuracy, held_out_of


def one_edge_only(system) -> None:
    """Keep the skeletons of one triple pattern (their flipped twins are made again and cut)."""
    for _ in range(2):
        system.entries = [e for e in system.entries if system._patterns(e) == 0]
        system._vectorize()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--one-edge", action="store_true")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    for folder in args.folders:
        system = load_system(folder)
        for kv in args.set:
            key, value = kv.split("=", 1)
            system.config[key] = float(value)
        held = held_out_of(folder)
        if args.one_edge:
            one_edge_only(system)
            held = [it for it in held if "?y" in (it.sparql or "")]
        kg = json.loads((Path(folder) / "manifest.json").read_text())["kg"]
        h = held_out_accuracy(system, held, kg)
        print(f"{folder}: {h['correct']}/{h['items']} ({h['accuracy']:.1%})"
              f"{' one-edge skeletons, two-edge questions' if args.one_edge else ''} {' '.join(args.set)}")
        schema = [it for it in held if it.id.startswith("s")]  # questions about the schema (ids s...)
        if schema and not args.one_edge:
            s = held_out_accuracy(system, schema, kg)
            print(f"    of which about the schema: {s['correct']}/{s['items']}; graph-query questions: "
                  f"{h['correct'] - s['correct']}/{h['items'] - s['items']}")


if __name__ == "__main__":
    main()
