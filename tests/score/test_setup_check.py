"""No silent zeros: the set-up check names the problem and the fix (issue 11, scope 6)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import no_data, run_cli

from kgqa.execute.engine import transient
from kgqa.model import Dataset, Item, Prediction, Run, TableAnswer
from kgqa.model.outcome import Outcome, Status
from kgqa.model.terms import IRI
from kgqa.score.setup_check import check_setup

DATA = Path(os.environ.get("KGQA_DATA_DIR", "../shared/data"))
ANS = TableAnswer.single_column([IRI("http://x/a")], "a")


def ds(n=4, **kw):
    return Dataset("d", [Item(id=str(i), questions={"en": f"q{i}"}, answer=ANS, **kw) for i in range(n)])


def codes(ws):
    return sorted(w.code for w in ws)


def test_a_good_setup_has_no_warnings():
    run = Run("r", [Prediction(id=str(i), answer=ANS) for i in range(4)])
    assert check_setup(ds(), [run]) == []


def test_ids_that_do_not_overlap_are_named_on_both_sides():
    run = Run("r", [Prediction(id=f"x{i}", answer=ANS) for i in range(4)])
    [w] = check_setup(ds(), [run])
    assert w.code == "ids" and w.error and "no entry of r matches a question id" in w.message
    assert "'0', '1', '2' (+1 more)" in w.message and "'x0', 'x1', 'x2'" in w.message


def test_under_half_of_the_ids_matching_is_a_warning():
    run = Run("r", [Prediction(id=str(i), answer=ANS) for i in range(1)] + [Prediction(id="x", answer=ANS)])
    [w] = check_setup(ds(), [run])
    assert w.code == "ids" and not w.error and "3 of 4 questions" in w.message and "'x'" in w.message


def test_language_suffixed_run_ids_suggest_lang():
    run = Run("r", [Prediction(id=f"{i}-en", answer=ANS) for i in range(4)])
    [w] = check_setup(ds(), [run])
    assert "--lang" in w.fix


def test_n_zero_names_the_languages():
    full = ds()
    empty = Dataset("d", [])
    [w] = check_setup(empty, [Run("r", [])], lang="de", full_dataset=full)
    assert w.code == "empty-dataset" and "--lang de" in w.message and "--lang en" in w.fix


def test_queries_without_answers_and_no_kg():
    run = Run("r", [Prediction(id=str(i), sparql="SELECT * {}") for i in range(4)])
    [w] = check_setup(ds(), [run])
    assert w.code == "no-kg" and w.error and "--kg" in w.fix
    [w] = check_setup(ds(), [run], query_measures=True)  # QueryEM/BLEU still score: a warning
    assert w.code == "no-kg" and not w.error
    assert check_setup(ds(), [run], kg="kg.ttl") == []


def test_same_transport_failure_is_reported_once():
    run = Run("r", [Prediction(id=str(i), sparql="SELECT * {}") for i in range(4)])
    bad = {str(i): Outcome(Status.EXEC_ERROR, None, transient(
        f"connection error from http://127.0.0.1:9/sparql: ConnectError: refused (gave up after {i + 1} attempts)"))
        for i in range(3)}
    bad["3"] = Outcome.ok(ANS)
    [w] = check_setup(ds(), [run], kg="http://127.0.0.1:9/sparql", executions={"r": bad})
    assert w.code == "transport" and w.message.count("ConnectError") == 1 and "3 of 4" in w.message


def test_official_eval_file_is_not_a_run():
    from kgqa.load import load_dataset, load_run

    path = DATA / "ck25-runs/WSE/ck25_eval.json"
    if not path.is_file():
        no_data(f"{path} not found (set KGQA_DATA_DIR)")
    d = load_dataset(DATA / "ck25/questions.yml").by_language(None)
    run = load_run(path, dataset=d)
    assert "not-a-run" in codes(check_setup(d, [run]))
    good = load_run(DATA / "ck25-runs/WSE/ck25_system_result_set.json", dataset=d)
    assert check_setup(d, [good]) == []


def test_cli_strict_exits_3(tmp_path, capsys):
    """``--strict`` makes the process exit 3 (a real process: the exit status is the claim); the
    warning without it and the error of a run that matches nothing are checked in this process."""
    dsf = tmp_path / "ds.jsonl"
    dsf.write_text("".join(f'{{"id": "{i}", "question": "q?", "answers": ["http://x/a"]}}\n' for i in (1, 2, 3)),
                   encoding="utf-8")
    runf = tmp_path / "run.jsonl"  # one of three questions answered (under half): a warning
    runf.write_text('{"id": "1", "answers": ["http://x/a"]}\n{"id": "9", "answers": ["http://x/a"]}\n',
                    encoding="utf-8")
    code, _, err = run_cli(capsys, "evaluate", str(dsf), str(runf))
    assert code == 0 and "set-up warning" in err and "'9'" in err
    args = [sys.executable, "-c", "from kgqa.cli import main; main()", "evaluate", str(dsf), str(runf)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "COLUMNS": "200"}
    strict = subprocess.run(args + ["--strict"], capture_output=True, text=True, env=env, timeout=120)
    assert strict.returncode == 3 and "set-up warning" in strict.stderr
    other = tmp_path / "other.jsonl"  # not one id in common: an error whatever --strict says
    other.write_text('{"id": "9", "answers": ["http://x/a"]}\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "evaluate", str(dsf), str(other))
    assert code == 2 and "error:" in err and "matches a question id" in err
    assert "Traceback" not in err


def test_answers_found_by_a_runs_own_queries_are_not_a_gold_copy():
    """A system whose own queries find the gold answers (a retrieval baseline on a templated
    benchmark: 31 of 34) is good, not a copy; the same answers beside the gold queries, or with
    no query at all, are flagged."""
    gold_q = "SELECT ?a WHERE { <http://x/s> <http://x/p> ?a }"
    d = ds(12, sparql=gold_q)
    own = Run("own", [Prediction(id=str(i), answer=ANS, sparql="SELECT ?x WHERE { ?x <http://x/q> ?y }")
                      for i in range(12)])
    assert "gold-copy" not in codes(check_setup(d, [own]))
    copied = Run("copied", [Prediction(id=str(i), answer=ANS, sparql="  " + gold_q.replace(" ", "\n ")) for i in range(12)])
    bare = Run("bare", [Prediction(id=str(i), answer=ANS) for i in range(12)])
    assert "gold-copy" in codes(check_setup(d, [copied])) and "gold-copy" in codes(check_setup(d, [bare]))
