"""The public API (kgqa.api, re-exported by kgqa): the issue's done-when checks, per-measure
skipping, the Evaluator's one engine, and the CLI giving the library's signature."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

import kgqa
from kgqa.demo import DATA
from kgqa.model import Dataset, InputError, Item, Prediction, Run, TableAnswer
from kgqa.model.terms import IRI

pytestmark = pytest.mark.xdist_group("api")

DEMO_RUNS = [DATA / "runs" / f"{r}.json" for r in ("strong", "medium", "weak")]


def test_import_is_cheap_and_lazy():
    code = "import sys, kgqa; print(sorted(m for m in sys.modules if m.startswith('kgqa')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['kgqa']"
    assert {"evaluate", "compare", "Evaluator", "load_dataset", "load_run"} <= set(dir(kgqa))


def test_ck25_official_set_f_from_the_result_set(shared_data):
    e = kgqa.evaluate("ck25", str(shared_data / "ck25-runs" / "WSE" / "ck25_system_result_set.json"),
                      profile="text2sparql")
    assert f"{e.aggregate['set_F']:.4f}" == "0.3203"
    assert str(e.signature) == ("kgqa:0.1.0|profile:text2sparql|match:lexical|view:values|fail:empty|missing:empty|"
                                "qrels:yes|lang:all|gold:stored|n:50")
    assert e.signature["profile"] == "text2sparql" and e.signature.parts["n"] == "50"
    assert len(e.questions) == 50  # per-language units: no by_language() to forget


def test_ck25_executed_answers_reproduce_the_official_per_question_scores(shared_data, tmp_path):
    official = json.loads((shared_data / "ck25-runs" / "WSE" / "ck25_eval.json").read_text())
    e = kgqa.evaluate("ck25", str(shared_data / "ck25-runs" / "WSE" / "ck25_answers.json"), profile="text2sparql",
                      kg=str(shared_data / "ck25" / "graphs" / "prod-inst.ttl"), cache=tmp_path / "c.sqlite",
                      engine_options={"workers": 1})
    same = [q.id for q in e.questions if q.scores["set_F"] == pytest.approx(official[q.id]["set_F"], abs=1e-9)]
    assert len(same) >= 48  # as tests/execute/test_real_execution.py: the official tool's own KG differences
    assert e.execution["executed"] + e.execution["cache_hits"] + e.execution["refused"] == 50
    assert e.signature["engine"].startswith("oxigraph-") and e.signature["answers"] == "run-first"


def test_compare_to_every_format():
    evals = kgqa.evaluate_many(DATA / "questions.json", DEMO_RUNS)
    assert [e.run for e in evals] == ["strong", "medium", "weak"]
    cmp = kgqa.compare(evals, resamples=200)
    df = cmp.to_dataframe()
    assert list(df.columns) == ["measure", "system", "n", "mean", "low", "high", "letters", "aggregate"]
    f1 = df[(df.measure == "F1")].set_index("system")
    assert f1.loc["strong", "mean"] == pytest.approx(evals[0].aggregate["F1"])
    assert f1.loc["strong", "letters"] == "bc" and f1.loc["weak", "letters"] == ""
    assert cmp.to_markdown().startswith("## Comparison")
    assert "\\begin{table" in cmp.to_latex()
    assert cmp.to_json()["systems"] == ["strong", "medium", "weak"]
    assert "strong" in cmp.to_table() and "Paired tests" in cmp.to_table()
    # to_html: test_compare_to_html (slow: the report's figures)
    # seeded: the same call, the same numbers
    assert kgqa.compare(evals, resamples=200).to_json() == cmp.to_json()
    with pytest.raises(InputError, match="baseline"):
        kgqa.compare(evals, baseline="nope")


@pytest.mark.slow  # the HTML report's ten figures cost ~4 s; quick: tests/report/test_report_html.py (the report
# to_html renders) and tests/cli/test_cli_analysis.py::test_report_writes_report_html_by_default
def test_compare_to_html():
    cmp = kgqa.compare(kgqa.evaluate_many(DATA / "questions.json", DEMO_RUNS), resamples=200)
    assert cmp.to_html().lstrip().lower().startswith("<!doctype html")


def test_evaluation_conveniences(tmp_path):
    e = kgqa.evaluate(DATA / "questions.json", DEMO_RUNS[0])
    kgqa.save_evaluations(e, tmp_path / "e.json")
    (back,) = kgqa.load_evaluations(tmp_path / "e.json")
    assert isinstance(back, kgqa.Evaluation) and back.aggregate == e.aggregate and back.signature == e.signature
    assert back.questions[3].record == e.questions[3].record  # typed records survive the round trip
    assert isinstance(e, kgqa.Evaluation) and e.run == "strong"
    df = e.to_dataframe(characteristics=False)
    assert len(df) == 30 and df.F1.mean() == pytest.approx(e.aggregate["F1"])
    html = e._repr_html_()
    assert "<table>" in html and "F1" in html and str(e.signature) in html
    assert e.to_json()["signature"] == str(e.signature)
    assert "| strong | 30 |" in e.to_markdown()


def test_one_shape_per_call(tmp_path):
    """kgqa.evaluate returns one Evaluation, kgqa.evaluate_many a list; the public Evaluation is
    the scorer's class; a saved file is always {"runs": [...]}, and a bare object (older files) reads."""
    from kgqa.score.evaluate import Evaluation as Scored

    assert kgqa.Evaluation is Scored
    one = kgqa.evaluate(DATA / "questions.json", DEMO_RUNS[0])
    (many,) = kgqa.evaluate_many(DATA / "questions.json", DEMO_RUNS[:1])
    assert type(one) is Scored and type(many) is Scored and one.aggregate == many.aggregate
    with pytest.raises(TypeError, match="evaluate_many"):
        kgqa.evaluate(DATA / "questions.json", DEMO_RUNS[:2])
    with pytest.raises(TypeError, match="kgqa.evaluate\\(dataset, run\\)"):
        kgqa.evaluate_many(DATA / "questions.json", DEMO_RUNS[0])
    with pytest.raises(TypeError, match="not neither"):
        kgqa.evaluate(DATA / "questions.json")
    kgqa.save_evaluations(one, tmp_path / "one.json")
    doc = json.loads((tmp_path / "one.json").read_text())
    assert list(doc) == ["runs"] and doc["runs"][0]["run"] == "strong"
    (tmp_path / "old.json").write_text(json.dumps(doc["runs"][0]))  # what kgqa wrote for one run before
    (old,) = kgqa.load_evaluations(tmp_path / "old.json")
    assert old.aggregate == one.aggregate and old.signature == one.signature


def test_names_paths_and_loaded_objects_give_the_same_numbers():
    ds = kgqa.load_dataset(DATA / "questions.json")
    run = kgqa.load_run(DEMO_RUNS[1], dataset=ds)
    a = kgqa.evaluate(str(DATA / "questions.json"), str(DEMO_RUNS[1]), profile="gerbil")
    b = kgqa.evaluate(ds, run, profile=kgqa.get_profile("gerbil"))
    assert a.aggregate == b.aggregate and str(a.signature) == str(b.signature)
    m = kgqa.evaluate(ds, run, measures="F1(rule=qald),AnswerEM")
    assert list(m.aggregate) == ["F1(rule=qald)", "AnswerEM"]
    assert m.signature["measures"] == "F1(rule=qald,agg=macro)+AnswerEM"  # every parameter named


def _no_answer_dataset() -> tuple[Dataset, Run]:
    """LC-QuAD-like: gold queries, no gold answers; a run of queries only."""
    q1 = "SELECT ?x WHERE { <http://ex/a> <http://ex/p> ?x }"
    q2 = "SELECT ?x WHERE { ?x <http://ex/q> <http://ex/b> }"
    ds = Dataset("lc", [Item("1", {"en": "a?"}, sparql=q1), Item("2", {"en": "b?"}, sparql=q2),
                        Item("3", {"en": "c?"}, answer=TableAnswer.single_column([IRI("http://ex/c")]))])
    run = Run("sys", [Prediction("1", sparql=q1), Prediction("2", sparql=q1), Prediction("3", sparql=q2)])
    return ds, run


def test_a_question_is_skipped_per_measure_not_per_item():
    ds, run = _no_answer_dataset()
    e = kgqa.evaluate(ds, run, measures="QueryEM,BLEU,F1_Sem,F1_Tri,F1")
    assert e.aggregate["QueryEM"] == 0.5  # questions 1 (equal) and 2 (different); 3 has no gold query
    assert 0 < e.aggregate["BLEU"] < 1 and 0 < e.aggregate["F1_Sem"] < 1
    assert e.aggregate["F1"] == 0.0  # only question 3 has a gold answer; its run entry was not executed
    assert e.measure_skips["F1"] == {"no gold answer (execute the gold queries with --kg)": ["1", "2"]}
    assert e.measure_skips["QueryEM"] == {"no gold query": ["3"]}
    assert e.signature["n"] == "3" and e.skipped == []
    assert [w.code for w in e.setup_warnings] == ["no-kg"]  # F1 cannot score them: said, not an error
    # with answer measures only, a run of queries without a KG cannot be scored: an error naming kg
    from kgqa.score.setup_check import SetupError

    with pytest.raises(SetupError, match="--kg"):
        kgqa.evaluate(ds, run, measures="F1")
    assert kgqa.Evaluation.from_json(e.to_json()).measure_skips == e.measure_skips


def test_evaluator_reuses_one_engine_and_cache_across_runs(tmp_path):
    with kgqa.Evaluator(DATA / "questions.json", "kgqa", kg=DATA / "kg.ttl", reexecute=True,
                        cache=tmp_path / "c.sqlite", engine_options={"workers": 1}) as ev:
        first = ev.evaluate(DEMO_RUNS[0])
        executor = ev.executor
        again = ev.evaluate(DEMO_RUNS[0])
        assert ev.executor is executor
    assert first.execution["executed"] > 0 and again.execution["executed"] == 0
    assert again.execution["cache_hits"] == first.execution["executed"] + first.execution["cache_hits"]
    assert first.aggregate == again.aggregate


def test_nothing_is_executed_when_no_measure_needs_it(tmp_path):
    ds, run = _no_answer_dataset()
    e = kgqa.evaluate(ds, run, measures="QueryEM,F1_Tri", kg=DATA / "kg.ttl", cache=False)
    assert e.execution is None and "engine" not in e.signature.parts  # numbers do not depend on a KG


def test_bad_arguments_are_said_out_loud(shared_data):
    with pytest.raises(InputError, match="unknown profile 'nope'"):
        kgqa.evaluate(DATA / "questions.json", DEMO_RUNS[0], profile="nope")
    with pytest.raises(InputError, match="unknown measure 'F9'"):
        kgqa.evaluate(DATA / "questions.json", DEMO_RUNS[0], measures="F9")
    with pytest.raises(InputError, match="need a KG"):
        kgqa.evaluate(DATA / "questions.json", DEMO_RUNS[0], gold_answers="executed")
    with pytest.raises(InputError, match=r"language\(s\) de; ck25 has en"):
        kgqa.evaluate("ck25", str(shared_data / "ck25-runs" / "WSE" / "ck25_system_result_set.json"), lang="de")


def test_cli_and_library_signatures_are_identical(capsys, tmp_path, monkeypatch):
    from kgqa.cli import main

    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path))
    args = [str(DATA / "questions.json"), str(DEMO_RUNS[1])]
    try:
        main(["evaluate", *args, "--kg", str(DATA / "kg.ttl"), "-p", "gerbil", "-m", "F1,Exec", "-f", "json"])
    except SystemExit as e:
        assert not e.code
    (cli,) = json.loads(capsys.readouterr().out)["runs"]
    lib = kgqa.evaluate(*args, kg=DATA / "kg.ttl", profile="gerbil", measures="F1,Exec")
    assert cli["signature"] == str(lib.signature)
    assert "measures:F1(rule=kgqa,agg=macro)+Exec" in cli["signature"] and "engine:oxigraph-" in cli["signature"]
    assert cli["aggregate"] == {k: (None if math.isnan(v) else v) for k, v in lib.aggregate.items()}


def test_gold_queries_run_only_when_a_measure_reads_gold_answers(tmp_path):
    ds, run = _no_answer_dataset()
    with kgqa.Evaluator(ds, measures="Exec", kg=DATA / "kg.ttl", cache=False, engine_options={"workers": 1}) as ev:
        e = ev.evaluate(run)
    assert e.execution["executed"] + e.execution["cache_hits"] == 3  # the run's 3 queries, no gold query
    assert e.aggregate["Exec"] == 1.0 and e.signature["gold"] == "stored"
    with kgqa.Evaluator(ds, measures="Exec,F1", kg=DATA / "kg.ttl", cache=False, engine_options={"workers": 1}) as ev:
        e = ev.evaluate(run)
    assert e.execution["executed"] + e.execution["cache_hits"] == 5  # and the 2 gold queries without answers


def test_evaluator_closes_only_what_it_opened(tmp_path):
    from kgqa.execute.executor import Executor

    with kgqa.Evaluator(DATA / "questions.json", "kgqa", kg=DATA / "kg.ttl", cache=False,
                        engine_options={"workers": 1}) as ev:
        ev.evaluate(DEMO_RUNS[0])
        opened = ev.executor
    assert opened.engine._closed  # opened from a KG path: closed with the evaluator
    given = Executor.open(DATA / "kg.ttl", cache=False, workers=1)
    try:
        with kgqa.Evaluator(DATA / "questions.json", "kgqa", kg=given) as ev:
            ev.evaluate(DEMO_RUNS[0])
        assert not given.engine._closed  # the caller's: still open, still answers
        assert given.run({"q": "ASK { ?s ?p ?o }"})["q"].answer.value is True
    finally:
        given.close()


def _gold_as_run(ds, path):
    import json

    path.write_text("".join(json.dumps({"id": it.id, "query": it.sparql}) + "\n" for it in ds.items if it.sparql),
                    encoding="utf-8")
    return path


def test_lcquad_gold_as_its_own_run_without_a_kg_scores_one_on_query_measures(tmp_path):
    """Issue 12: query measures need no stored answers and no KG (LC-QuAD ships none)."""
    from conftest import REPO

    ds = kgqa.load_dataset(REPO / "tests" / "fixtures" / "lcquad" / "lcquad1-test.json")
    assert len(ds.items) >= 3 and all(it.answer is None for it in ds.items)
    run = _gold_as_run(ds, tmp_path / "run.jsonl")
    e = kgqa.evaluate(ds, run, measures="QueryEM,BLEU,F1_Sem,F1_Tri")
    assert e.signature["n"] == str(len(ds.items)) and e.skipped == []
    assert e.aggregate == {"QueryEM": 1.0, "BLEU": 1.0, "F1_Sem": 1.0, "F1_Tri": 1.0}
    assert all(s.get("QueryEM") == 1.0 for s in (q.scores for q in e.questions))


def test_every_documented_name_is_in_the_public_api():
    """docs/reference/python-api.md documents kgqa.api's public names: each is in __all__ and exists."""
    import re

    from conftest import REPO
    from kgqa import api

    page = (REPO / "docs" / "reference" / "python-api.md").read_text(encoding="utf-8")
    block = page[page.index("::: kgqa.api"):]
    documented = re.findall(r"^        - (\w+)$", block, flags=re.M)
    assert len(documented) > 20 and "evaluate_many" in documented
    assert [n for n in documented if n not in api.__all__] == []
    assert all(getattr(api, n, None) is not None for n in api.__all__)
