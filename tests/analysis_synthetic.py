"""A synthetic GraphQuestions dataset and ``.res`` run for the analysis/report tests, written
to a temporary folder and read with kgqa's own loaders. The per-question F1 under the
GraphQuestions convention (lists; empty prediction F1 0) is computed by hand in ``F1``."""

from __future__ import annotations

import json
from pathlib import Path

NS = "PREFIX ns: <http://rdf.freebase.com/ns/> "
ONE = NS + "SELECT ?x WHERE { ns:m.e1 ns:r.a ?x }"
COUNT = NS + "SELECT (COUNT(?x) AS ?c) WHERE { ns:m.e2 ns:r.b ?x }"
TWO = NS + "SELECT ?x WHERE { ns:m.e3 ns:r.c ?y . ?y ns:r.d ?x } ORDER BY ?x LIMIT 2"

# qid: (function, num_edge, commonness, gold answers, predicted answers, gold sparql)
ROWS = {
    1000000: ("none", 1, -35.0, ["a"], ["a"], ONE),
    1000100: ("none", 1, -35.0, ["a"], ["a", "x", "y"], ONE),
    1000200: ("none", 1, -35.0, ["a"], [], ONE),
    2000000: ("count", 1, -25.0, ["b"], ["x"], COUNT),
    2000100: ("count", 1, -25.0, ["b"], ["b"], COUNT),
    3000000: ("argmax", 2, -15.0, ["c", "d"], ["c"], TWO),
    3000100: ("argmax", 2, -15.0, ["c", "d"], ["c", "d"], TWO),
    3000200: ("argmax", 2, -15.0, ["c", "d"], ["d", "z"], TWO),
    3000300: ("argmax", 2, -15.0, ["c", "d"], ["z"], TWO),
    4000000: (">", 1, -5.0, ["e"], ["e"], ONE),
}

# hand-computed: P = |pred in gold| / |pred|, R = |gold in pred| / |gold|, F1 = 2PR/(P+R)
F1 = {
    "1000000": 1.0,
    "1000100": 0.5,  # P 1/3, R 1
    "1000200": 0.0,  # empty prediction
    "2000000": 0.0,
    "2000100": 1.0,
    "3000000": 2 / 3,  # P 1, R 1/2
    "3000100": 1.0,
    "3000200": 0.5,  # P 1/2, R 1/2
    "3000300": 0.0,
    "4000000": 1.0,
}


def write(folder: Path) -> tuple[Path, Path]:
    data = []
    res = ["# qid\ttime\tanswers\tpredictions\tstructure\tfunction\tanswer_cardinality\tcommonness"]
    for qid, (fn, edges, common, gold, pred, sparql) in ROWS.items():
        data.append({"qid": qid, "question": f"question {qid}?", "answer": gold, "function": fn,
                     "commonness": common, "num_node": edges + 1, "num_edge": edges, "sparql_query": sparql})
        res.append(f"{qid}\t1.0\t{json.dumps(gold)}\t{json.dumps(pred)}\t{edges + 1},{edges}\t{fn}\t{len(gold)}\t{common}")
    ds = folder / "gq.json"
    ds.write_text(json.dumps(data), encoding="utf-8")
    run = folder / "system.res"
    run.write_text("\n".join(res) + "\n", encoding="utf-8")
    return ds, run


def evaluation(folder: Path, name: str = "system"):
    from kgqa.load import load_dataset, load_run
    from kgqa.score import profiles
    from kgqa.score.evaluate import evaluate

    ds_path, run_path = write(folder)
    ds = load_dataset(str(ds_path), format="graphquestions")
    run = load_run(str(run_path), format="graphquestions-res", dataset=ds)
    run.name = name
    return evaluate(ds, run, profiles.get("graphquestions"))
