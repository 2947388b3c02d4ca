"""The query measures as the evaluator computes them (per-question memo of feature comparisons
and n-gram statistics, corpus BLEU from summed statistics) give exactly the values of the
per-text functions and of sacrebleu itself, on real QALD-9 queries and perturbed copies; and
each query is analysed once per question whatever the number of measures."""

from __future__ import annotations

import random
import re

import pytest
from sacrebleu.metrics import BLEU as SacreBLEU

from kgqa.load import load_dataset
from kgqa.model import Prediction, Run
from kgqa.score import measures, profiles, query_measures as qm
from kgqa.score.evaluate import evaluate
from kgqa.score.gerbil_subexperiments import c2kb, p2kb, re2kb, ait_query, sub_counts
from kgqa.score.rules import gerbil_rule
from kgqa.score.tokenize import escape_ws, tokens


def _perturb(q: str | None, rnd: random.Random) -> str | None:
    if q is None:
        return None
    r = rnd.random()
    if r < 0.15:
        return q
    if r < 0.3:
        return re.sub(r"\s+", "  ", q)
    if r < 0.45:
        return q.replace("?", "?v_")
    if r < 0.6:
        iris = re.findall(r"<[^>]+>", q)
        return q.replace(rnd.choice(iris), "<http://dbpedia.org/resource/Other>") if iris else q + " LIMIT 5"
    if r < 0.75:
        return q[: max(1, int(len(q) * rnd.random()))]
    if r < 0.82:
        return "   "
    if r < 0.9:
        return q.replace(" . ", ' . ?x <http://dbpedia.org/ontology/p> "a\\\\b c"@en . ', 1)
    return q.upper()


@pytest.fixture(scope="module")
def qald(shared_data):
    ds = load_dataset(str(shared_data / "qald-9" / "qald-9-train-multilingual.json")).by_language(["en"])
    rnd = random.Random(3)
    run = Run("perturbed", [Prediction(it.id, sparql=_perturb(it.sparql, rnd), answer=it.answer)
                            for it in ds if rnd.random() < 0.95])
    return ds, run


SPEC = ("QueryEM(norm=whitespace),CanonicalEM,BLEU,BLEU(tokenize=nspm),BLEU(smooth=floor),BLEU(smooth=add-k),"
        "BLEU(smooth=none),ROUGE_L,ROUGE_L(tokenize=nspm,beta=2.0),F1_Sem,F1_Tri,F1_Tri(vars=aligned),"
        "CorpusBLEU,CorpusBLEU(tokenize=nspm),CorpusBLEU(smooth=floor),C2KB,P2KB(parse=tolerant),RE2KB,AIT2KB")


def _expected(pred: str | None, gold: str, key: str) -> float | None:
    p = pred if pred is not None and pred.strip() else None
    if key == "QueryEM(norm=whitespace)":
        return qm.query_em(p, gold, "whitespace")
    if key == "CanonicalEM":
        return qm.query_em(p, gold, "canonical")
    if key.startswith("BLEU"):
        m = measures.parse(key)
        return qm.bleu(p, gold, m.kwargs["tokenize"], m.kwargs["smooth"])
    if key.startswith("ROUGE_L"):
        m = measures.parse(key)
        return qm.rouge_l(p, gold, m.kwargs["tokenize"], m.kwargs["beta"])
    if key == "F1_Sem":
        return qm.f1_sem(p, gold)
    if key.startswith("F1_Tri"):
        return qm.f1_tri(p, gold, "aligned" if "aligned" in key else "ignored")
    fn, parse = {"C2KB": (c2kb, "strict"), "P2KB(parse=tolerant)": (p2kb, "tolerant"), "RE2KB": (re2kb, "strict"),
                 "AIT2KB": (ait_query, "strict")}[key]
    c = sub_counts((fn(gold, parse), fn(pred, parse) if pred is not None else frozenset()))
    return gerbil_rule(c)[2]


def test_every_query_measure_value_equals_the_per_text_function(qald):
    ds, run = qald
    prof = profiles.get("ictir2022").with_measures(measures.parse_list(SPEC))
    e = evaluate(ds, run, prof)
    by_id = {p.id: p.sparql for p in run.predictions}
    gold = {it.id: it.sparql for it in ds}
    n = 0
    for q in e.questions:
        g = gold[q.id]
        for key, v in q.scores.items():
            assert v == _expected(by_id.get(q.id), g, key), (q.id, key)
            n += 1
    assert n > 3000
    # corpus BLEU: sacrebleu's corpus_score on the joined token strings
    for key in ("CorpusBLEU", "CorpusBLEU(tokenize=nspm)", "CorpusBLEU(smooth=floor)"):
        m = measures.parse(key)
        scheme, smooth = m.kwargs["tokenize"], m.kwargs["smooth"]
        hyps, refs = [], []
        for it in ds:
            if it.sparql is None or not it.sparql.strip():
                continue
            p = by_id.get(it.id)
            p = p if p is not None and p.strip() else None
            hyps.append(" ".join(escape_ws(t) for t in tokens(p, scheme)) if p is not None else "")
            refs.append(" ".join(escape_ws(t) for t in tokens(it.sparql, scheme)))
        want = min(1.0, SacreBLEU(tokenize="none", smooth_method=smooth).corpus_score(hyps, [refs]).score / 100.0)
        assert e.aggregate[key] == want, key


def test_each_query_is_analysed_once_per_question(qald, monkeypatch):
    ds, run = qald
    calls: list[str] = []
    real = qm.analyze

    def counting(query, *a, **kw):
        calls.append(query)
        return real(query, *a, **kw)

    monkeypatch.setattr(qm, "analyze", counting)
    qm.query_features.cache_clear()
    prof = profiles.get("ictir2022").with_measures(
        measures.parse_list("F1_Sem,F1_Tri,GEK2,GEK3,C2KB,C2KB(agg=micro),P2KB,RE2KB,AIT2KB(part=R)"))
    evaluate(ds, run, prof)
    texts = {it.sparql for it in ds if it.sparql and it.sparql.strip()}
    texts |= {p.sparql for p in run.predictions if p.sparql and p.sparql.strip()}
    assert len(calls) == len(set(calls)) <= len(texts)
    qm.query_features.cache_clear()
