"""Full-measure scoring throughput on synthetic items with cached answers.

Builds N synthetic questions (default 100,000), each with a gold SPARQL query and gold answer,
and a run whose predicted queries are perturbed copies of the gold ones (a changed predicate
or entity, a dropped or reordered pattern, renamed variables, a missing closing brace), with
"cached" outcomes (answers already known, parse errors and timeouts included), then times
:func:`kgqa.score.evaluate.evaluate` with every answer, query, compound and GERBIL
sub-experiment measure. Generation is not timed. Prints items/s.

    .venv/bin/python bench/bench_scoring.py [--items 100000] [--measures SPEC] [--per-measure]
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from kgqa.model import BooleanAnswer, Dataset, IRI, Item, Literal, Outcome, Prediction, Run, Status, TableAnswer
from kgqa.score import measures, profiles
from kgqa.score.evaluate import evaluate

EX = "http://example.org/"
FULL = (
    "P,R,F1,F1(agg=micro),AnswerEM,Coverage,QueryEM,QueryEM(norm=whitespace),CanonicalEM,BLEU,BLEU(tokenize=nspm),"
    "CorpusBLEU,ROUGE_L,Exec,F1_Ans,F1_Sem,F1_Tri,F1_Tri(vars=aligned),GEK1,GEK2,GEK3,"
    "C2KB,C2KB(agg=micro),P2KB,P2KB(agg=micro),RE2KB,RE2KB(agg=micro),AT,AT(agg=micro),AIT2KB,AIT2KB(agg=micro)"
)


def _query(rng: random.Random, n_pat: int, ask: bool) -> tuple[str, list[tuple[str, str, str]]]:
    pats = []
    var_names = ["x", "y", "z", "w"]
    for i in range(n_pat):
        s = "?x" if i == 0 or rng.random() < 0.5 else f"?{var_names[min(i, 3)]}"
        p = f"dbo:p{rng.randrange(300)}"
        o = rng.choice([f"dbr:E{rng.randrange(20000)}", f"?{var_names[(i + 1) % 4]}", f'"v{rng.randrange(100)}"@en',
                        str(rng.randrange(1000))])
        pats.append((s, p, o))
    if rng.random() < 0.3:
        pats.append(("?x", "a", f"dbo:C{rng.randrange(50)}"))
    return _render(pats, ask, rng.random() < 0.2), pats


def _render(pats, ask: bool, count: bool, close: bool = True) -> str:
    body = " . ".join(" ".join(t) for t in pats)
    head = "PREFIX dbo: <http://dbpedia.org/ontology/> PREFIX dbr: <http://dbpedia.org/resource/> "
    if ask:
        q = f"{head}ASK WHERE {{ {body} }}"
    elif count:
        q = f"{head}SELECT (COUNT(DISTINCT ?x) AS ?c) WHERE {{ {body} }}"
    else:
        q = f"{head}SELECT DISTINCT ?x WHERE {{ {body} }}"
    return q if close else q[: q.rindex("}")]


def _perturb(rng: random.Random, pats, ask: bool) -> tuple[str, bool]:
    """A predicted query from the gold patterns; returns (query, parses)."""
    pats = list(pats)
    r = rng.random()
    if r < 0.25:
        i = rng.randrange(len(pats))
        s, p, o = pats[i]
        pats[i] = (s, f"dbo:p{rng.randrange(300)}", o)
    elif r < 0.4 and len(pats) > 1:
        pats.pop(rng.randrange(len(pats)))
    elif r < 0.55:
        rng.shuffle(pats)
    elif r < 0.65:
        ren = {"?x": "?a", "?y": "?b", "?z": "?c", "?w": "?d"}
        pats = [tuple(ren.get(t, t) for t in pat) for pat in pats]
    close = rng.random() >= 0.05
    return _render(pats, ask, False, close), close


def synthetic(n: int, seed: int = 7) -> tuple[Dataset, Run, dict[str, Outcome]]:
    rng = random.Random(seed)
    items, preds, outcomes = [], [], {}
    for i in range(n):
        qid = str(i)
        ask = rng.random() < 0.1
        gold_q, pats = _query(rng, rng.randint(1, 4), ask)
        if ask:
            gold_a = BooleanAnswer(rng.random() < 0.5)
        else:
            k = rng.randint(0, 5)
            gold_a = TableAnswer.single_column(
                [IRI(f"{EX}r{rng.randrange(50000)}") if rng.random() < 0.8 else Literal(str(rng.randrange(100)))
                 for _ in range(k)])
        items.append(Item(qid, questions={"en": f"question {i}"}, sparql=gold_q, answer=gold_a))
        pred_q, parses = _perturb(rng, pats, ask)
        preds.append(Prediction(qid, sparql=pred_q))
        if not parses:
            outcomes[qid] = Outcome(Status.PARSE_ERROR, None, "expected '}'")
        elif rng.random() < 0.02:
            outcomes[qid] = Outcome(Status.TIMEOUT, None, "timeout")
        elif isinstance(gold_a, BooleanAnswer):
            outcomes[qid] = Outcome.ok(gold_a if rng.random() < 0.7 else BooleanAnswer(not gold_a.value))
        else:
            rows = [r for r in gold_a.rows if rng.random() < 0.8] + [(IRI(f"{EX}r{rng.randrange(50000)}"),)] * (rng.random() < 0.3)
            outcomes[qid] = Outcome.ok(TableAnswer(("result",), tuple(rows)))
    return Dataset("synthetic", items), Run("synthetic", preds), outcomes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--measures", default=FULL)
    ap.add_argument("--profile", default="kgqa")
    ap.add_argument("--per-measure", action="store_true", help="also time each measure alone (fresh caches)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    ds, run, outcomes = synthetic(args.items, args.seed)
    t1 = time.perf_counter()
    ms = measures.parse_list(args.measures)
    prof = profiles.get(args.profile).with_measures(ms)
    print(f"generated {len(ds):,} items in {t1 - t0:.1f} s; {len(ms)} measures; profile {args.profile}")
    t2, c2 = time.perf_counter(), time.process_time()
    e = evaluate(ds, run, prof, predicted=outcomes)
    t3, c3 = time.perf_counter(), time.process_time()
    n = len(e.questions)
    print(f"scored {n:,} items x {len(ms)} measures in {t3 - t2:.2f} s: {n / (t3 - t2):,.0f} items/s "
          f"(CPU {c3 - c2:.2f} s: {n / (c3 - c2):,.0f} items/s of CPU time)")
    print("outcomes:", e.outcomes)
    for k in ("F1", "BLEU", "CorpusBLEU", "F1_Sem", "F1_Tri", "GEK1", "GEK2", "GEK3", "C2KB", "AT"):
        if k in e.aggregate:
            print(f"  {k:12s} {e.aggregate[k]:.4f}")
    if args.per_measure:
        from kgqa.score import gerbil_subexperiments, query_measures, tokenize
        from kgqa.sparql import analyzer

        for m in ms:
            for mod in (query_measures, gerbil_subexperiments, tokenize, analyzer):
                for v in vars(mod).values():
                    if hasattr(v, "cache_clear"):
                        v.cache_clear()
            p1 = profiles.get(args.profile).with_measures([m])
            s, c = time.perf_counter(), time.process_time()
            evaluate(ds, run, p1, predicted=outcomes)
            d, dc = time.perf_counter() - s, time.process_time() - c
            print(f"  {m.key:28s} {n / d:>12,.0f} items/s {n / dc:>12,.0f} items/s of CPU time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
