"""Reyd & Zouaq (2023) shape on LC-QuAD 1.0: seq2seq with and without copy x raw / tagged /
tag-end questions, on the original-like (iid, or a given pair's ``original``), unknown-URI and
unknown-template splits made by ``kgqa split``; the retrieval baseline beside them. BLEU,
QueryEM (whitespace: token sequences), F1_Sem, F1_Tri, no KG needed (LC-QuAD stores no answers).

    nice -n 5 .venv/bin/python bench/experiments/reyd_zouaq.py [--data ../shared/data]
        [--train FILE --test FILE] [--cpu] [--epochs 12] [--seed 0] [--threads 2]
        [--out bench/experiments/results/reyd-zouaq.md] [--splits iid,uri,template]
        [--inputs raw,tagged,tag-end] [--preset small] [--rows FILE.jsonl] [--work DIR]

Inputs (the paper's three annotations): ``raw`` (the question that was tagged), ``tagged``
(``kgqa annotate --mode tagged``: the gold query's KB elements in place of their mentions),
``tag-end`` (``kgqa annotate --mode tag-end``: the raw question, then ``<sep> element mention``
for each element). seq2seq + copy is not run on raw questions: they hold no KB element to copy
(the paper's table has ``/`` there); rows of such runs already in a rows file are still shown.

Resumable: each finished run appends its row to ``--rows`` (default: the ``--out`` file with
``.rows.jsonl``) and the Markdown table is rewritten after each; a rerun with the same options
skips the runs whose row is there (a row is keyed by split, system, input and the options that
change a run: seed, epochs, preset, limit, ``--set``, the given pair). ``--work`` keeps the tagged
file between runs. Progress: a line ``[k/N] split | system | input`` before each run with the
minutes so far and an estimate of those left; seq2seq training shows a rich bar (loss, time
left) on a terminal, else a line per epoch (``--no-progress``: neither).

With ``--train FILE --test FILE`` (a given pair, e.g. two parts of LC-QuAD 1.0 train made by
``kgqa split --by iid``): both are tagged (items that cannot be tagged keep their raw form and
are scored; the table's input column then says ``tagged (N of M raw)``); the ``original`` split
is the given pair (the last 10% of train for validation), and the ``uri`` and ``template``
splits are made by ``kgqa split`` of train and test together (0.8/0.1/0.1). ``--cpu`` is the
CPU preset: d_model 64, feed-forward 128, at most 40 decoded tokens, 8 epochs, at most 1,000
training items; about 10 CPU-minutes for the whole table with one torch thread.

Steps: ``kgqa annotate --mode tagged`` (no KG: LC-QuAD's intermediary questions) of LC-QuAD 1.0
train (the tagged items; raw = the same items with the text that was tagged; tag-end = the same
mentions written after the question), then ``kgqa split --by iid|uri|template --ratios
0.8,0.1,0.1 --seed SEED`` of the tagged file; each system is trained on train (seq2seq keeps the
epoch with the lowest validation loss) and scored on test. Prints the table and writes it as
Markdown with the command, seed, times and hardware.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, hardware, markdown_table, raw_of, run_system, tag_end_of, write_report  # noqa: E402

sys.path.insert(0, str(ROOT))
MEASURES = ["BLEU", "QueryEM(norm=whitespace)", "F1_Sem", "F1_Tri"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--epochs", type=int, default=None, help="seq2seq epochs (default 12; --cpu: 8)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--preset", default="small")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--splits", default="iid,uri,template")
    ap.add_argument("--systems", default="retrieval,seq2seq,seq2seq+copy")
    ap.add_argument("--inputs", default="raw,tagged,tag-end")
    ap.add_argument("--limit", type=int, default=0, help="train on the first N training items only (0: all)")
    ap.add_argument("--set", action="append", default=[], help="seq2seq option KEY=VALUE (e.g. d_model=64)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "experiments" / "results" / "reyd-zouaq.md"))
    ap.add_argument("--rows", default="", help="finished rows, one JSON object a line (default: OUT.rows.jsonl)")
    ap.add_argument("--work", default="", help="folder that keeps the tagged LC-QuAD file between runs")
    ap.add_argument("--table-only", action="store_true", help="train nothing: the table of the rows file's runs")
    ap.add_argument("--train", default="", help="a given training file (with --test): splits original,uri,template")
    ap.add_argument("--test", default="", help="a given test file (with --train)")
    ap.add_argument("--cpu", action="store_true", help="the CPU preset: --epochs 8 --limit 1000 --set d_model=64 --set ff=128 --set max_len=40")
    ap.add_argument("--no-progress", action="store_true", help="no line per seq2seq epoch")
    ap.add_argument("--no-times", action="store_true", help="no fit/predict seconds columns (tables the docs keep and CI compares)")
    args = ap.parse_args()
    if bool(args.train) != bool(args.test):
        sys.exit("give --train and --test together (a given train/test pair)")
    if args.epochs is None:
        args.epochs = 8 if args.cpu else 12
    if args.cpu:
        args.limit = args.limit or 1000
        args.set = sorted({*args.set, "d_model=64", "ff=128", "max_len=40"})
    if args.train and args.splits == "iid,uri,template":
        args.splits = "original,uri,template"
    rows_path = Path(args.rows or Path(args.out).with_suffix(".rows.jsonl"))
    rows_path.parent.mkdir(parents=True, exist_ok=True)
    settings = {"seed": args.seed, "epochs": args.epochs, "preset": args.preset, "limit": args.limit,
                "set": sorted(args.set), **({"given": [file_digest(args.train), file_digest(args.test)]} if args.train else {})}
    done = {}
    if rows_path.exists():
        for n, line in enumerate(rows_path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                rec = json.loads(line)
                done[(rec["split"], rec["system"], rec["input"], json.dumps(rec["settings"], sort_keys=True))] = rec["row"]
            except (ValueError, KeyError) as e:
                sys.exit(f"{rows_path}: line {n}: expected a JSON object with split, system, input, settings, row ({e})")

    from kgqa.make.annotate import annotate_to_file
    from kgqa.make.splits import split_dataset
    from kgqa.load import load_dataset
    from kgqa.model import Dataset

    if "seq2seq" in args.systems:
        import torch

        torch.set_num_threads(args.threads)
    start = time.perf_counter()
    given = given_pair(args) if args.train else None
    if given is not None:
        report, tagged = given["report"], given["all"]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            tagged_path = Path(args.work or tmp) / "lcquad-1.0-train-tagged.jsonl"
            report_path = tagged_path.with_suffix(".summary.json")
            if args.work and tagged_path.exists() and report_path.exists():
                report = json.loads(report_path.read_text(encoding="utf-8"))
            else:
                tagged_path.parent.mkdir(parents=True, exist_ok=True)
                report = annotate_to_file(str(Path(args.data) / "lcquad-1.0" / "train-data.json"), tagged_path,
                                          mode="tagged", unannotated="drop")
                report_path.write_text(json.dumps({k: report[k] for k in ("annotated", "items")}), encoding="utf-8")
            tagged = load_dataset(str(tagged_path))
    print(f"annotated {report['annotated']}/{report['items']} items (tagged, no KG)", flush=True)
    rows: list[list] = []
    plan = []  # (split, train, validation, test) per split
    for by in args.splits.split(","):
        if by == "original":
            if given is None:
                sys.exit("--splits original needs a given pair: --train FILE --test FILE")
            tr, va, te = given["train"], given["validation"], given["test"]
        else:
            parts, _ = split_dataset(tagged, by, (0.8, 0.1, 0.1), seed=args.seed)
            tr, va, te = parts["train"], parts["validation"], parts["test"]
        if args.limit:
            tr = Dataset(tr.name, tr.items[: args.limit], tr.format)
        print(f"split {by}: train {len(tr)}, validation {len(va)}, test {len(te)}", flush=True)
        plan.append((by, tr, va, te))
    runs = [(by, inputs, name) for by, *_ in plan for inputs in args.inputs.split(",") for name in args.systems.split(",")
            if not (inputs == "raw" and name == "seq2seq+copy")]
    clock = Clock(runs)
    for by, tr, va, te in plan:
        for inputs in args.inputs.split(","):
            form = {"raw": raw_of, "tagged": lambda d: d, "tag-end": tag_end_of}[inputs]
            trx, vax, tex = form(tr), form(va), form(te)
            for name in args.systems.split(","):
                label, kind, cfg = SYSTEMS[name]
                key = (by, label, inputs, json.dumps(settings if kind == "seq2seq" else
                                                     {"seed": args.seed, **({"given": settings["given"]} if args.train else {})},
                                                     sort_keys=True))
                if key in done:
                    rows.append(done[key])
                    clock.skip((by, inputs, name))
                    print("  (done) " + " | ".join(map(str, done[key])), flush=True)
                    continue
                if inputs == "raw" and name == "seq2seq+copy":
                    print(f"  (not run) {by} | {label} | raw: a raw question holds no KB element to copy "
                          "(the paper's '/')", flush=True)
                    continue
                if args.table_only:
                    print(f"  (not run) {by} | {label} | {inputs}", flush=True)
                    continue
                clock.start((by, inputs, name), kind)
                if kind == "seq2seq":
                    cfg = {**cfg, "epochs": args.epochs, "seed": args.seed, "preset": args.preset, "device": args.device,
                           **{k: json.loads(v) for k, v in (x.split("=", 1) for x in args.set)}}
                res = run_system(kind, trx, vax if kind == "seq2seq" else None, tex, MEASURES,
                                 progress=not args.no_progress, **cfg)
                clock.done(kind)
                fallback = sum(1 for it in tex.items if it.metadata.get("annotation") == "raw") if inputs != "raw" else 0
                shown = f"{inputs} ({fallback} of {len(tex.items)} raw)" if fallback else inputs
                row = [by, label, shown, *(res[m] for m in MEASURES), round(res["fit_s"]), round(res["predict_s"], 1)]
                rows.append(row)
                with rows_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({"split": by, "system": label, "input": inputs, "settings": json.loads(key[3]),
                                        "row": row}) + "\n")
                print("  " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row), flush=True)
                report_table(args, rows, report, start)
    report_table(args, rows, report, start)


SYSTEMS = {"retrieval": ("retrieval", "retrieval", {}),
           "seq2seq": ("seq2seq", "seq2seq", {"copy": False}),
           "seq2seq+copy": ("seq2seq + copy", "seq2seq", {"copy": True})}


class Clock:
    """The grid's own progress: a line before each run, ``[k/N] split | system | input``, with
    the minutes so far and an estimate of those left (the mean time of the finished runs of
    each kind times the runs of that kind still to do)."""

    def __init__(self, runs: list[tuple[str, str, str]]):
        self.todo = list(runs)
        self.n, self.k = len(runs), 0
        self.t0 = time.perf_counter()
        self.times: dict[str, list[float]] = {}
        self.began = 0.0

    def skip(self, run: tuple[str, str, str]) -> None:
        if run in self.todo:
            self.todo.remove(run)
            self.n -= 1

    def start(self, run: tuple[str, str, str], kind: str) -> None:
        self.todo.remove(run)
        self.k += 1
        left = [SYSTEMS[name][1] for *_, name in self.todo] + [kind]
        known = all(self.times.get(x) for x in left)
        eta = sum(sum(self.times[x]) / len(self.times[x]) for x in left) / 60 if known else None
        so_far = (time.perf_counter() - self.t0) / 60
        print(f"[{self.k}/{self.n}] {run[0]} | {SYSTEMS[run[2]][0]} | {run[1]} ({so_far:.1f} min so far"
              + (f", about {eta:.1f} min left)" if eta is not None else ")"), flush=True)
        self.began = time.perf_counter()

    def done(self, kind: str) -> None:
        self.times.setdefault(kind, []).append(time.perf_counter() - self.began)



def file_digest(path: str) -> str:
    """What names a given file in a row's key: its contents (sha256, 16 hex digits), not where
    it lies, so rows made from /tmp/lcquad-pair are found again from any folder holding the
    same split."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError as e:
        sys.exit(f"{path}: cannot read the given file ({e.strerror})")


def given_pair(args: argparse.Namespace) -> dict:
    """The given train/test files tagged (untaggable items kept raw), train's last 10% for validation."""
    from kgqa.load import load_dataset
    from kgqa.make.annotate import annotate_to_file
    from kgqa.model import Dataset

    out: dict = {}
    items = annotated = 0
    with tempfile.TemporaryDirectory() as tmp:
        for part, path in (("train", args.train), ("test", args.test)):
            rep = annotate_to_file(path, Path(tmp) / f"{part}.jsonl", mode="tagged", unannotated="raw")
            items, annotated = items + rep["items"], annotated + rep["annotated"]
            out[part] = load_dataset(str(Path(tmp) / f"{part}.jsonl"))
    cut = len(out["train"].items) - max(1, len(out["train"].items) // 10)
    tr = out["train"]
    out["train"], out["validation"] = Dataset(tr.name, tr.items[:cut]), Dataset(tr.name + "-validation", tr.items[cut:])
    out["all"] = Dataset("given", tr.items + out["test"].items)
    out["report"] = {"items": items, "annotated": annotated}
    return out


def report_table(args: argparse.Namespace, rows: list[list], report: dict, start: float) -> None:
    """Write the Markdown table of the rows so far (the command, seed, times, hardware)."""
    header = ["split", "system", "input", "BLEU", "QueryEM", "F1_Sem", "F1_Tri", "fit s", "predict s"]
    if args.no_times:
        header, rows = header[:-2], [r[:-2] for r in rows]
    table = markdown_table(header, rows)
    total = time.perf_counter() - start
    out = Path(args.out).resolve()
    out_arg = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    given = f" --train {args.train} --test {args.test}" if args.train else ""
    cmd = (f"nice -n 5 .venv/bin/python bench/experiments/reyd_zouaq.py{given} --epochs {args.epochs} --seed {args.seed} "
           f"--threads {args.threads} --preset {args.preset} --splits {args.splits} --systems {args.systems} --inputs {args.inputs}"
           + (f" --limit {args.limit}" if args.limit else "")
           + "".join(f" --set {x}" for x in args.set) + (" --no-times" if args.no_times else "") + f" --out {out_arg}")
    note = (f"Seed {args.seed}; seq2seq preset `{args.preset}`{' with ' + ', '.join(args.set) if args.set else ''}, "
            f"{args.epochs} epochs (best validation loss kept); "
            f"{report['annotated']}/{report['items']} items tagged without a KG; {{minutes}} min in this invocation "
            "(rows read back from the rows file cost nothing; each row's fit and predict seconds are its own) on "
            f"{hardware()}, torch threads {args.threads}. Measures in %.")
    write_report(args.out, "Reyd & Zouaq shape on LC-QuAD 1.0", cmd, note, table, total)

if __name__ == "__main__":
    main()
