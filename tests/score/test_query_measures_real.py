"""Query and compound measures on real data: CK25 gold queries and three real systems' queries,
executed in-process on the CK25 KG with the project's embedded engine (pyoxigraph)."""

from __future__ import annotations

import math

import pytest

from kgqa.execute.opener import open_engine
from kgqa.execute.executor import Executor
from kgqa.load import load_dataset, load_run
from kgqa.model import Prediction, Run, Status
from kgqa.score import measures, profiles
from kgqa.score.evaluate import evaluate
from kgqa.score.query_measures import floor

GAMMA = 1e-4
TEAMS = ("INFAI", "WSE", "AIFB")
QUERY = ("QueryEM,QueryEM(norm=whitespace),CanonicalEM,BLEU,BLEU(tokenize=nspm),CorpusBLEU,ROUGE_L,Exec,F1_Ans,"
         "F1_Sem,F1_Tri,F1_Tri(vars=aligned),GEK1,GEK1(tokenize=nspm),GEK2,GEK3,GEK3(vars=aligned)")
SUBS = ",".join(f"{s}{a}" for s in ("C2KB", "P2KB", "RE2KB", "AT", "AIT2KB") for a in ("", "(agg=micro)"))


# its module fixture (a real evaluation) is made once: every test of it on one xdist worker
# every CK25 gold query executed as a run (long, real data): CI's slow part; test_query_measures
# covers the measures in the README's command
pytestmark = [pytest.mark.xdist_group("query-measures-real"), pytest.mark.slow]

@pytest.fixture(scope="module")
def ck25(shared_data):
    ds = load_dataset(str(shared_data / "ck25" / "questions.yml")).by_language(["en"])
    runs = {"gold": Run("gold", [Prediction(it.id, sparql=it.sparql) for it in ds])}
    for team in TEAMS:
        runs[team] = load_run(str(shared_data / "ck25-runs" / team / "ck25_answers.json"), dataset=ds)
    engine = open_engine(str(shared_data / "ck25" / "graphs" / "prod-inst.ttl"), workers=2)
    try:
        executions = {name: Executor(engine).execute_run(ds, run, gold="executed") for name, run in runs.items()}
    finally:
        engine.close()
    return ds, runs, executions


def _evaluate(ck25, name, spec, profile="kgqa", gold="executed"):
    ds, runs, executions = ck25
    ex = executions[name]
    prof = profiles.get(profile).with_measures(measures.parse_list(spec))
    return evaluate(ds, runs[name], prof, predicted=ex.predicted, gold=ex.gold if gold == "executed" else None)


def test_gold_queries_as_a_run_score_one_on_every_query_and_compound_measure(ck25):
    e = _evaluate(ck25, "gold", QUERY + "," + SUBS)
    assert len(e.questions) == 50 and e.outcomes.get("ok", 0) + e.outcomes.get("empty", 0) == 50
    assert e.skipped == []
    for k, v in e.aggregate.items():
        assert v == 1.0, k
    for q in e.questions:
        assert all(v == 1.0 for v in q.scores.values()), (q.id, q.scores)
    ds, runs, executions = ck25
    ex = executions["gold"]
    for name in ("ictir2022", "gerbil"):  # every measure of these profiles, as the profile labels them
        e = evaluate(ds, runs["gold"], profiles.get(name), predicted=ex.predicted, gold=ex.gold)
        assert e.aggregate and all(v == 1.0 for v in e.aggregate.values()), (name, e.aggregate)


def test_with_stored_gold_answers_exactly_items_25_41_50_differ(ck25):
    e = _evaluate(ck25, "gold", "F1_Ans,GEK1,GEK2,GEK3,F1_Sem,Exec", profile="qald", gold="stored")
    differ = sorted(q.id for q in e.questions if q.scores["F1_Ans"] != 1.0)
    assert differ == ["ck25:25-en", "ck25:41-en", "ck25:50-en"]
    for q in e.questions:
        assert q.scores["F1_Sem"] == 1.0 and q.scores["Exec"] == 1.0
        for k in ("GEK1", "GEK2", "GEK3"):
            assert q.scores[k] == pytest.approx(floor(q.scores["F1_Ans"], GAMMA)), (q.id, k)


def test_real_runs_get_gek_and_gerbil_scores_in_one_report(ck25, capsys):
    table = {}
    for team in TEAMS:
        e = _evaluate(ck25, team, QUERY + "," + SUBS)
        assert len(e.questions) == 50
        agg = e.aggregate
        for key in [m.key for m in measures.parse_list(QUERY + "," + SUBS)]:
            assert key in agg and 0.0 <= agg[key] <= 1.0, (team, key, agg.get(key))
        ok = e.outcomes.get("ok", 0) + e.outcomes.get("empty", 0)
        assert agg["Exec"] == pytest.approx(ok / 50)
        for q in e.questions:
            s = q.scores
            executed = q.outcome in ("ok", "empty")
            assert s["Exec"] == (1.0 if executed else 0.0)
            # the compounds are the floored products of their per-question components
            for gek, sem in (("GEK1", "BLEU"), ("GEK2", "F1_Sem"), ("GEK3", "F1_Tri"), ("GEK3(vars=aligned)", "F1_Tri(vars=aligned)")):
                want = floor(s[sem], GAMMA) * (floor(s["F1_Ans"], GAMMA) if executed else GAMMA ** 2)
                assert s[gek] == pytest.approx(want, rel=1e-9), (team, q.id, gek)
            # canonically equal queries have the same IRIs, patterns and answers
            if s["CanonicalEM"] == 1.0:
                assert s["F1_Sem"] == s["F1_Tri"] == s["F1_Tri(vars=aligned)"] == s["F1_Ans"] == 1.0, (team, q.id)
            if not executed:
                assert s["F1_Ans"] == 0.0
        table[team] = (agg["GEK1"], agg["GEK2"], agg["GEK3"], agg["Exec"], agg["F1_Ans"], agg["F1_Sem"], agg["F1_Tri"])
    # AIFB's queries use an undeclared ':' prefix: 46 of 50 fail to parse, the rest answer nothing right
    aifb = _evaluate(ck25, "AIFB", "Exec,F1_Ans")
    assert aifb.outcomes.get("parse_error", 0) >= 40
    fails = aifb.outcomes.get("parse_error", 0)
    for g in table["AIFB"][:3]:
        assert g <= (fails * GAMMA**2 + (50 - fails) * GAMMA) / 50 + 1e-15
    for team in ("INFAI", "WSE"):
        assert table[team][1] > 100 * table["AIFB"][1]
    with capsys.disabled():
        print("\nCK25 (en, executed gold)   GEK1    GEK2    GEK3    Exec    F1_Ans  F1_Sem  F1_Tri")
        for team, vals in table.items():
            print(f"  {team:24s}" + "".join(f"{v:8.4f}" for v in vals))


def test_failed_queries_keep_their_semantic_scores(ck25):
    """A query that fails to parse still yields IRIs and patterns (tolerant analyzer)."""
    ds, runs, executions = ck25
    e = _evaluate(ck25, "AIFB", "F1_Sem,BLEU,Exec")
    failed = [q for q in e.questions if q.outcome == "parse_error"]
    assert failed and all(q.scores["Exec"] == 0.0 for q in failed)
    assert any(q.scores["F1_Sem"] > 0 for q in failed)
    assert all(q.scores["BLEU"] > 0 for q in failed)
    assert all(executions["AIFB"].predicted[q.id].status is Status.PARSE_ERROR for q in failed)
    assert not math.isnan(e.aggregate["F1_Sem"])
