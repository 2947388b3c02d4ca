"""Scale (issue 17): answers-only evaluation of N synthetic items, kgqa against a naive loop and
pytrec_eval, each in its own child process (wall and CPU time, peak RSS from getrusage), and the
JSON encoding of an evaluation.

    python bench/bench_scale.py [--sizes 10000,100000,1000000] [--profiles text2sparql,kgqa]
                                [--json-items 200000] [--skip-json] [--breakdown]

Items have 1-5 IRI answers; the run gets about half of them right plus some wrong ones. The naive
loop computes the same mean set F1 with json.loads and Python sets; pytrec_eval
(pytrec-eval-terrier) computes set_F on the same qrels/run. kgqa runs in memory and, with
``--stream``, reading the dataset one question at a time. Every row prints the mean F1, which
must agree, so the ratios compare the same work. Children run with the checkout as working
directory, so this checkout's kgqa is the one timed.

Targets printed with a verdict: at 10^5 items kgqa within 3x of the naive loop (text2sparql)
and 4x (kgqa profile); at 10^6 items the text2sparql profile in <= 60 s and <= 2 GB peak RSS
(the streamed mode: the in-memory one is printed too); JSON of 200,000 evaluated items
encoded in <= 5 s. ``--breakdown`` adds a row per profile saying where kgqa's CPU time goes
(imports, profile, dataset, run, set-up check, scoring); those rows are no target.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD_KGQA = """
import sys, kgqa
e = kgqa.evaluate(sys.argv[1], sys.argv[2], profile=sys.argv[3], dataset_format="jsonl", run_format="jsonl",
                  stream=sys.argv[4] == "stream")
label = {"text2sparql": "set_F", "kgqa": "F1"}.get(sys.argv[3], "F1")
print(e.aggregate.get(label))
"""

CHILD_CLI = """
import contextlib, io, re, sys
from kgqa.cli import main
table = io.StringIO()
with contextlib.redirect_stdout(table):
    try:
        main(["evaluate", sys.argv[1], sys.argv[2], "-p", "text2sparql", *sys.argv[3:]])
    except SystemExit as e:
        if e.code not in (0, None):
            raise
row = next(x for x in table.getvalue().splitlines() if x.lstrip("│ ").startswith("run"))
print(re.findall(r"[0-9]+[.][0-9]+", row)[2])  # set_F as printed
"""

CHILD_PHASES = """
import sys, time
T = time.process_time
t0 = T()
import kgqa
from kgqa.api import get_profile, load_dataset, load_run, select_language
from kgqa.score.evaluate import evaluate
from kgqa.score.setup_check import check_setup
t1 = T()
profile = get_profile(sys.argv[3])
t2 = T()
ds = load_dataset(sys.argv[1], format="jsonl")
t3 = T()
run = load_run(sys.argv[2], format="jsonl")
t4 = T()
units = select_language(ds, None)
check_setup(units, [run], kg="not needed", lang="all", full_dataset=ds)
t5 = T()
evaluate(units, run, profile)
t6 = T()
print(f"imports {t1 - t0:.2f}, profile {t2 - t1:.2f}, dataset {t3 - t2:.2f}, run {t4 - t3:.2f}, "
      f"set-up check {t5 - t4:.2f}, scoring {t6 - t5:.2f} (CPU s)")
"""

CHILD_NAIVE = """
import json, sys
gold = {}
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line); gold[r["id"]] = set(r["answers"])
total = 0.0
for line in open(sys.argv[2], encoding="utf-8"):
    r = json.loads(line); s = set(r["answer"]); g = gold[r["id"]]
    tp = len(s & g)
    p = tp / len(s) if s else 0.0
    rc = tp / len(g) if g else 0.0
    total += 2 * p * rc / (p + rc) if p + rc else 0.0
print(total / len(gold))
"""

CHILD_PYTREC = """
import json, sys, pytrec_eval
qrels = {}
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line); qrels[r["id"]] = {a: 1 for a in r["answers"]}
run = {}
for line in open(sys.argv[2], encoding="utf-8"):
    r = json.loads(line); run[r["id"]] = {a: 1.0 for a in r["answer"]}
res = pytrec_eval.RelevanceEvaluator(qrels, {"set_F"}).evaluate(run)
print(sum(v["set_F"] for v in res.values()) / len(qrels))
"""

CHILD_JSON = """
import sys, time, kgqa
from kgqa.report.evaluation import to_json
e = kgqa.evaluate(sys.argv[1], sys.argv[2], profile="kgqa", dataset_format="jsonl", run_format="jsonl")
t = time.perf_counter()
text = to_json([e])
print(f"{time.perf_counter() - t:.3f} {len(text.encode()) / 1e6:.0f}")
"""


def make(n: int, folder: Path, seed: int = 0) -> tuple[Path, Path]:
    rnd = random.Random(seed)
    ds, run = folder / f"ds{n}.jsonl", folder / f"run{n}.jsonl"
    if ds.exists() and run.exists():
        return ds, run
    with ds.open("w", encoding="utf-8") as fd, run.open("w", encoding="utf-8") as fr:
        for i in range(n):
            gold = [f"http://example.org/e{rnd.randrange(10 * n)}" for _ in range(rnd.randint(1, 5))]
            gold = list(dict.fromkeys(gold))
            keep = [g for g in gold if rnd.random() < 0.5]
            wrong = [f"http://example.org/w{rnd.randrange(10 * n)}" for _ in range(rnd.randint(0, 2))]
            fd.write(json.dumps({"id": str(i), "question": f"q{i}", "answers": gold}) + "\n")
            fr.write(json.dumps({"id": str(i), "answer": keep + wrong}) + "\n")
    return ds, run


def child(code: str, *args: str) -> tuple[float, float, float, str, float]:
    """(wall seconds, CPU seconds, peak RSS MB, stdout, forked MB) of ``code`` run in a fresh
    interpreter. CPU counts the processes it forked too (kgqa scores and writes with two where
    it can); peak RSS is the interpreter's own, forked MB the largest forked process's (0: none)."""
    wrapper = ("import resource, sys, time\n"
               "t = time.perf_counter()\n"
               f"exec(compile({code!r}, 'child', 'exec'))\n"
               "u = resource.getrusage(resource.RUSAGE_SELF)\n"
               "c = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
               "sys.stderr.write(f'@@{time.perf_counter() - t} {u.ru_utime + u.ru_stime + c.ru_utime + c.ru_stime} '\n"
               "                 f'{u.ru_maxrss / 1024} {c.ru_maxrss / 1024}\\n')\n")
    r = subprocess.run([sys.executable, "-c", wrapper, *args], capture_output=True, text=True, cwd=str(REPO),
                       env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    if r.returncode != 0:
        return float("nan"), float("nan"), float("nan"), (r.stderr.strip().splitlines() or ["failed"])[-1], 0.0
    line = next(x for x in r.stderr.splitlines() if x.startswith("@@"))
    wall, cpu, rss, forked = (float(v) for v in line[2:].split())
    return wall, cpu, rss, r.stdout.strip(), forked


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--profiles", default="text2sparql,kgqa")
    ap.add_argument("--json-items", type=int, default=200_000)
    ap.add_argument("--skip-json", action="store_true")
    ap.add_argument("--data", help="folder for the generated files (kept; default: a temporary one)")
    ap.add_argument("--breakdown", action="store_true",
                    help="also print where kgqa's time goes (CPU seconds per phase, in memory) per profile")
    args = ap.parse_args()
    tmp = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="kgqa-scale-"))
    tmp.mkdir(parents=True, exist_ok=True)
    profiles = [p for p in args.profiles.split(",") if p]
    targets: list[str] = []
    print(f"{'n':>9} {'tool':<26} {'wall s':>8} {'CPU s':>7} {'peak MB':>8} {'fork MB':>8} {'vs naive':>9}  mean F1")
    for n in (int(x) for x in args.sizes.split(",")):
        ds, run = make(n, tmp)
        naive = child(CHILD_NAIVE, str(ds), str(run))
        rows = [("naive loop", naive), ("pytrec_eval", child(CHILD_PYTREC, str(ds), str(run)))]
        for prof in profiles:
            rows.append((f"kgqa {prof}", child(CHILD_KGQA, str(ds), str(run), prof, "memory")))
            rows.append((f"kgqa {prof} --stream", child(CHILD_KGQA, str(ds), str(run), prof, "stream")))
        if "text2sparql" in profiles:  # what a user types: the CLI, no flags (bounded memory by default)
            rows.append(("kgqa CLI (no flags)", child(CHILD_CLI, str(ds), str(run))))
            rows.append(("kgqa CLI --save", child(CHILD_CLI, str(ds), str(run), "--save", str(tmp / "saved.json"))))
        if args.breakdown:
            rows += [(f"  phases {prof}", child(CHILD_PHASES, str(ds), str(run), prof)) for prof in profiles]
        for name, (wall, cpu, rss, out, forked) in rows:
            ratio = wall / naive[0] if naive[0] == naive[0] and naive[0] > 0 else float("nan")
            print(f"{n:>9} {name:<26} {wall:8.2f} {cpu:7.2f} {rss:8.0f} {forked:8.0f} {ratio:8.1f}x  {out}")
            if n == 100_000 and name in ("kgqa text2sparql", "kgqa kgqa"):
                goal = 3 if "text2sparql" in name else 4
                targets.append(f"10^5 items, {name} within {goal}x of the naive loop: {ratio:.1f}x "
                               f"({wall:.2f} s vs {naive[0]:.2f} s) -> {verdict(ratio <= goal)}")
            if n == 1_000_000 and name.startswith("kgqa CLI"):
                pytrec = rows[1][1][0]
                fork = f", forked process {forked:.0f} MB (most of it pages shared with the parent)" if forked else ""
                targets.append(f"10^6 items, text2sparql, {name[9:]}: {wall:.1f} s, {rss:.0f} MB peak{fork} (<= 2048 MB: "
                               f"{verdict(rss <= 2048)}); {wall / pytrec:.2f}x pytrec_eval's {pytrec:.1f} s "
                               f"(<= 1.0x: {verdict(wall <= pytrec)})")
            if n == 1_000_000 and name == "kgqa text2sparql --stream":
                targets.append(f"10^6 items, text2sparql (streamed): {wall:.1f} s, {rss:.0f} MB peak "
                               f"(<= 60 s and <= 2048 MB) -> {verdict(wall <= 60 and rss <= 2048)}")
    if not args.skip_json:
        ds, run = make(args.json_items, tmp)
        wall, cpu, rss, out, _forked = child(CHILD_JSON, str(ds), str(run))
        try:
            secs, mb = out.split()
            targets.append(f"JSON of {args.json_items:,} evaluated items: {float(secs):.2f} s encoding, {mb} MB "
                           f"(<= 5 s) -> {verdict(float(secs) <= 5)}")
        except ValueError:
            targets.append(f"JSON encoding failed: {out}")
    print("\ntargets:")
    for t in targets:
        print("  " + t)


if __name__ == "__main__":
    main()
