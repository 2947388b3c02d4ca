"""Linearity of every profile (issue 17): time per item at growing sizes, each run in its own
child process (wall time of the scoring and peak RSS from getrusage).

    python bench/bench_linear.py [--sizes 10000,30000,100000] [--profiles kgqa,gerbil,...]
                                 [--repo PATH]   # score with another checkout (a baseline)

The synthetic items look like LC-QuAD / DBNQA: every item has its own gold query built from one
of nine templates (one-hop, two-hop, type-constrained, count, ASK, literal filter, ORDER BY, a
UNION, a reverse hop) with full DBpedia IRIs or prefixed names, entities drawn from 10 x N so
that almost every query text is distinct, a gold answer of 0-5 IRIs or literals (or a boolean),
and a predicted query that is a perturbed copy (another entity or predicate, a dropped or
reordered pattern, renamed variables, a truncated query, whitespace, keyword case) with its
"cached" outcome (answers mostly right, parse errors and timeouts included). Generation is not
timed; the child times :func:`kgqa.score.evaluate.evaluate` only, and its peak RSS includes the
generated data (``data MB`` is the peak before scoring).

A profile is called linear when (CPU time per item at the largest size) / (CPU time per item at
the smallest size) <= 1.3. The scoring is single-threaded, so its CPU time is the work done; the
same ratio of wall time is printed beside it, but on a shared 2-core machine wall time mostly
measures the other processes (wall / CPU between 1 and 6 was seen in one run).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROFILES = ("kgqa", "gerbil", "qald", "text2sparql", "graphquestions", "ictir2022")
LINEAR = 1.3

DBO, DBR, DBP = "http://dbpedia.org/ontology/", "http://dbpedia.org/resource/", "http://dbpedia.org/property/"
PREFIXES = ("PREFIX dbo: <http://dbpedia.org/ontology/> PREFIX dbr: <http://dbpedia.org/resource/> "
            "PREFIX dbp: <http://dbpedia.org/property/> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> ")
WORDS = ("North", "River", "Saint", "John", "Maria", "Castle", "Lake", "Union", "Royal", "Grand", "New", "Old",
         "Park", "Hill", "Bridge", "Tower", "Garden", "Valley", "Port", "Fort", "Mount", "Green", "Red", "Black")
PROPS = ("birthPlace", "deathPlace", "country", "team", "author", "director", "starring", "spouse", "location",
         "almaMater", "genre", "producer", "writer", "league", "capital", "leader", "religion", "party",
         "award", "child", "college", "hometown", "nationality", "successor", "predecessor", "city", "owner")
CLASSES = ("Person", "Film", "City", "Country", "Book", "Band", "SoccerClub", "University", "River", "Company")


def _entity(rng, n: int, prefixed: bool) -> str:
    k = rng.randrange(10 * n)
    name = f"{WORDS[k % len(WORDS)]}_{WORDS[(k // 7) % len(WORDS)]}_{k}"
    return f"dbr:{name}" if prefixed else f"<{DBR}{name}>"


def _prop(rng, prefixed: bool) -> str:
    ns, pfx = (DBO, "dbo") if rng.random() < 0.7 else (DBP, "dbp")
    local = rng.choice(PROPS) + (str(rng.randrange(40)) if rng.random() < 0.3 else "")
    return f"{pfx}:{local}" if prefixed else f"<{ns}{local}>"


def gold_query(rng, n: int) -> tuple[str, str]:
    """(query, form) from one of nine LC-QuAD-like templates."""
    pf = rng.random() < 0.5
    e, e2 = _entity(rng, n, pf), _entity(rng, n, pf)
    p, p2 = _prop(rng, pf), _prop(rng, pf)
    cls = f"dbo:{rng.choice(CLASSES)}" if pf else f"<{DBO}{rng.choice(CLASSES)}>"
    head = PREFIXES if pf else ""
    t = rng.randrange(9)
    if t == 0:
        return f"{head}SELECT DISTINCT ?uri WHERE {{ {e} {p} ?uri }}", "select"
    if t == 1:
        return f"{head}SELECT DISTINCT ?uri WHERE {{ ?uri {p} {e} }}", "select"
    if t == 2:
        return f"{head}SELECT DISTINCT ?uri WHERE {{ {e} {p} ?x . ?x {p2} ?uri }}", "select"
    if t == 3:
        return f"{head}SELECT DISTINCT ?uri WHERE {{ ?uri {p} {e} . ?uri rdf:type {cls} }}".replace(
            "rdf:type", "rdf:type" if pf else "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"), "select"
    if t == 4:
        return f"{head}SELECT (COUNT(DISTINCT ?uri) AS ?c) WHERE {{ ?uri {p} {e} }}", "count"
    if t == 5:
        return f"{head}ASK WHERE {{ {e} {p} {e2} }}", "ask"
    if t == 6:
        lit = f'"{rng.choice(WORDS)} {rng.randrange(1000)}"@en'
        return f"{head}SELECT DISTINCT ?uri WHERE {{ ?uri {p} ?v . FILTER(?v = {lit}) }}", "select"
    if t == 7:
        return f"{head}SELECT DISTINCT ?uri WHERE {{ ?uri {p} {e} . ?uri {p2} ?n }} ORDER BY DESC(?n) LIMIT 1", "select"
    return f"{head}SELECT DISTINCT ?uri WHERE {{ {{ {e} {p} ?uri }} UNION {{ ?uri {p2} {e} }} }}", "select"


def perturb(rng, q: str, n: int) -> str:
    r = rng.random()
    if r < 0.3:
        return q
    if r < 0.45:  # another entity
        for mark in ("dbr:", f"<{DBR}"):
            i = q.find(mark)
            if i >= 0:
                j = i + len(mark)
                while j < len(q) and q[j] not in " >}":
                    j += 1
                return q[:i] + _entity(rng, n, mark == "dbr:") + q[j + (mark != "dbr:"):]
        return q
    if r < 0.55:  # another predicate
        for mark in ("dbo:", "dbp:", f"<{DBO}", f"<{DBP}"):
            i = q.find(mark, q.find("WHERE") if "WHERE" in q else 0)
            if i >= 0:
                j = q.find(" ", i)
                return q[:i] + _prop(rng, not mark.startswith("<")) + q[j:]
        return q
    if r < 0.63:
        return q.replace("?uri", "?x1")
    if r < 0.7:
        return " ".join(q.split("  ")).replace(" . ", " .\n  ")
    if r < 0.75:
        return q.replace("SELECT", "select").replace("WHERE", "where")
    if r < 0.82 and " . " in q:  # drop the second pattern
        a, _, b = q.partition(" . ")
        return a + " }" + (b[b.index("}") + 1:] if "}" in b else "")
    if r < 0.9:
        return q[: max(10, int(len(q) * rng.uniform(0.5, 0.95)))]
    return q.replace("DISTINCT ", "")


def synthetic(n: int, seed: int = 17):
    import random

    from kgqa.model import BooleanAnswer, Dataset, IRI, Item, Literal, Outcome, Prediction, Run, Status, TableAnswer

    rng = random.Random(seed)
    items, preds, outcomes = [], [], {}
    for i in range(n):
        qid = f"q{i}"
        gq, form = gold_query(rng, n)
        if form == "ask":
            gold = BooleanAnswer(rng.random() < 0.5)
        elif form == "count":
            gold = TableAnswer(("c",), ((Literal(str(rng.randrange(100)), "http://www.w3.org/2001/XMLSchema#integer"),),))
        else:
            gold = TableAnswer.single_column(
                [IRI(f"{DBR}A{rng.randrange(10 * n)}") if rng.random() < 0.85 else Literal(f"v{rng.randrange(500)}", language="en")
                 for _ in range(rng.randint(0, 5))])
        items.append(Item(qid, questions={"en": f"What is the thing number {i}?"}, sparql=gq, answer=gold))
        pq = perturb(rng, gq, n)
        preds.append(Prediction(qid, sparql=pq))
        if pq.count("{") != pq.count("}"):
            outcomes[qid] = Outcome(Status.PARSE_ERROR, None, "expected '}'")
        elif rng.random() < 0.02:
            outcomes[qid] = Outcome(Status.TIMEOUT, None, "timeout")
        elif isinstance(gold, BooleanAnswer):
            outcomes[qid] = Outcome.ok(gold if rng.random() < 0.8 else BooleanAnswer(not gold.value))
        elif pq == gq:
            outcomes[qid] = Outcome.ok(gold)
        else:
            rows = [r for r in gold.rows if rng.random() < 0.7]
            rows += [(IRI(f"{DBR}A{rng.randrange(10 * n)}"),)] * (rng.random() < 0.4)
            outcomes[qid] = Outcome.ok(TableAnswer(gold.variables, tuple(rows)))
    return Dataset("synthetic-lcquad", items), Run("synthetic", preds), outcomes


CHILD = """
import resource, sys, time
sys.path.append({bench!r})
from bench_linear import synthetic
from kgqa.score import profiles
from kgqa.score.evaluate import evaluate
n, name = int(sys.argv[1]), sys.argv[2]
ds, run, outcomes = synthetic(n)
prof = profiles.get(name)
data_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t, c = time.perf_counter(), time.process_time()
e = evaluate(ds, run, prof, predicted=outcomes)
wall, cpu = time.perf_counter() - t, time.process_time() - c
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
first = next(iter(e.aggregate.items()))
import kgqa
print("@kgqa", kgqa.__file__)
print(f"@@ {{wall}} {{cpu}} {{peak}} {{data_mb}} {{len(e.questions)}} {{first[0]}}={{first[1]:.4f}}")
"""


def child(repo: Path, n: int, profile: str) -> tuple[float, float, float, float, str]:
    """(scoring wall s, scoring CPU s, peak RSS MB, peak RSS before scoring MB, note) in a fresh
    interpreter."""
    code = CHILD.format(bench=str(Path(__file__).resolve().parent))
    # cwd=repo: `python -c` puts the working directory first on sys.path, before PYTHONPATH, so
    # run from anywhere else a checkout's kgqa in the working directory would be timed instead
    r = subprocess.run([sys.executable, "-c", code, str(n), profile], capture_output=True, text=True,
                       env={"PYTHONPATH": str(repo), "PATH": "/usr/bin:/bin"}, cwd=str(repo))
    line = next((x for x in r.stdout.splitlines() if x.startswith("@@")), None)
    if r.returncode != 0 or line is None:
        nan = float("nan")
        return nan, nan, nan, nan, (r.stderr.strip().splitlines() or ["failed"])[-1]
    _, wall, cpu, peak, data, nq, note = line.split(maxsplit=6)
    where = next((x.split(maxsplit=1)[1] for x in r.stdout.splitlines() if x.startswith("@kgqa ")), "")
    if not Path(where).resolve().is_relative_to(repo):
        note += f" (WARNING: kgqa imported from {where}, not {repo})"
    return float(wall), float(cpu), float(peak), float(data), f"{nq} scored, {note}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,30000,100000")
    ap.add_argument("--profiles", default=",".join(PROFILES))
    ap.add_argument("--repo", default=str(REPO), help="checkout whose kgqa is timed (default: this one)")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    repo = Path(args.repo).resolve()
    print(f"kgqa from {repo}")
    print(f"{'profile':<15} {'n':>8} {'wall s':>8} {'us/item':>8} {'cpu s':>8} {'cpu us/item':>11} "
          f"{'peak MB':>8} {'data MB':>8}  note")
    verdicts = []
    for prof in args.profiles.split(","):
        wall_per, cpu_per = {}, {}
        for n in sizes:
            wall, cpu, peak, data, note = child(repo, n, prof)
            wall_per[n], cpu_per[n] = wall / n, cpu / n
            print(f"{prof:<15} {n:>8} {wall:8.2f} {1e6 * wall / n:8.1f} {cpu:8.2f} {1e6 * cpu / n:11.1f} "
                  f"{peak:8.0f} {data:8.0f}  {note}", flush=True)
        growth = wall_per[sizes[-1]] / wall_per[sizes[0]]
        cpu_growth = cpu_per[sizes[-1]] / cpu_per[sizes[0]]
        ok = cpu_growth <= LINEAR
        verdicts.append((prof, growth, cpu_growth, ok))
        print(f"{prof:<15} growth {sizes[-1]:,}/{sizes[0]:,} of time per item: cpu {cpu_growth:.2f}, wall {growth:.2f} "
              f"-> {'linear' if ok else 'NOT linear'} (target: cpu growth <= {LINEAR})", flush=True)
    print("summary (growth of CPU time per item, wall in parentheses):",
          ", ".join(f"{p} {c:.2f} ({g:.2f}){'' if ok else ' NOT linear'}" for p, g, c, ok in verdicts))
    return 0 if all(ok for *_, ok in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
