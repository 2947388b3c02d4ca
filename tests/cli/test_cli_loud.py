"""The command line says out loud what went wrong (issue 24, CLI): no traceback on the paths
found, errors for set-ups that cannot give a meaningful score, warnings that name the file,
suggestions that help, and registry KG names that work."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from conftest import run_cli as run_main
from kgqa.demo import DATA

RUNS = DATA / "runs"


def run_cli(capsys, monkeypatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.setenv("COLUMNS", "200")
    return run_main(capsys, *args)


# --------------------------------------------------------------------------- no traceback


def test_named_run_with_store_records_the_file_under_its_name(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(RUNS / "strong.json", tmp_path / "sysA.json")
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "demo", "A=sysA.json", "--store", "exp.sqlite")
    assert code == 0, err
    assert "recorded experiment(s)" in err
    from kgqa.store import Store

    [e] = Store(str(tmp_path / "exp.sqlite")).list()
    assert e.run_name == "A" and e.run_filename == "sysA.json" and e.status == "finished"


class _CommitThenInterrupt:
    """A sqlite3 connection whose first COMMIT of result rows is followed by Ctrl-C: the cache's
    ROLLBACK then fails with "cannot rollback - no transaction is active"."""

    def __init__(self, db):
        self._db, self._armed = db, False

    def __getattr__(self, name):
        return getattr(self._db, name)

    def executemany(self, sql, rows):
        self._armed = self._armed or "INTO results" in sql
        return self._db.executemany(sql, rows)

    def execute(self, sql, *args):
        result = self._db.execute(sql, *args)
        if sql == "COMMIT" and self._armed:
            raise KeyboardInterrupt
        return result


def test_ctrl_c_while_the_cache_commits_prints_the_resume_command(tmp_path, capsys, monkeypatch):
    from kgqa.execute import cache as cache_module

    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    real_connect = sqlite3.connect

    class Shim:
        def __getattr__(self, name):
            return getattr(sqlite3, name)

        @staticmethod
        def connect(*a, **kw):
            return _CommitThenInterrupt(real_connect(*a, **kw))

    monkeypatch.setattr(cache_module, "sqlite3", Shim())
    args = ["evaluate", "demo", str(RUNS / "weak.json"), "--kg", str(DATA / "kg.ttl"), "--reexecute"]
    code, out, err = run_cli(capsys, monkeypatch, *args)
    assert code == 130
    assert "Traceback" not in err and "cannot rollback" not in err
    assert "interrupted:" in err and "resume with: kgqa evaluate demo" in err.replace("\n", " ")


def test_plain_ctrl_c_exits_130_with_the_resume_command(capsys, monkeypatch):
    from kgqa import api

    def interrupted(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "evaluate_many", interrupted)
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "demo", str(RUNS / "weak.json"))
    assert code == 130
    assert f"resume with: kgqa evaluate demo {RUNS / 'weak.json'}" in err.replace("\n", "")


def test_a_file_that_cannot_be_written_is_one_error_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "demo", str(RUNS / "weak.json"),
                             "--save", str(tmp_path / "a-file" / "r.json"))
    assert code == 2 and "Traceback" not in err and err.startswith("error:") and "a-file" in err


# --------------------------------------------------------------------------- loud defaults


def test_a_run_of_another_dataset_is_an_error_in_the_library_and_the_cli(capsys, monkeypatch, shared_data):
    import kgqa
    from kgqa.score.setup_check import SetupError

    with pytest.raises(SetupError, match="no entry of .*weak.json matches a question id"):
        kgqa.evaluate("ck25", str(RUNS / "weak.json"))
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "ck25", str(RUNS / "weak.json"))
    assert code == 2 and out == "" and "check that the run belongs to this dataset" in err


def test_queries_without_a_kg_are_an_error_naming_kg_unless_only_query_measures(capsys, monkeypatch,
                                                                                  shared_data):
    run = str(shared_data / "ck25-runs" / "WSE" / "ck25_answers.json")
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "ck25", run, "-p", "text2sparql")
    assert code == 2 and "--kg" in err and "have a query but no answer" in err
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "ck25", run, "-m", "BLEU", "-f", "json")
    assert code == 0 and json.loads(out)["runs"][0]["aggregate"]["BLEU"] > 0


def test_kg_takes_a_registry_name(capsys, monkeypatch, shared_data):
    run = str(shared_data / "ck25-runs" / "WSE" / "ck25_answers.json")
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "ck25", run, "--kg", "ck25", "-p", "text2sparql",
                             "-f", "json")
    assert code == 0, err
    (doc,) = json.loads(out)["runs"]
    assert doc["execution"]["executed"] + doc["execution"]["cache_hits"] == 50
    assert round(doc["aggregate"]["set_F"], 4) == 0.3105
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "ck25", run, "--kg", "ck52")
    assert code == 2 and "ck52" in err and "Traceback" not in err


def test_a_copy_of_the_gold_answers_is_refused_with_the_flag_to_go_on(capsys, monkeypatch, shared_data):
    copy = shared_data / "ck25-runs" / "INFAI" / "ck25_system_result_set.json"
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "ck25", str(copy), "-p", "text2sparql")
    assert code == 2 and "--allow-gold-copy to score it anyway" in err and "set_F" not in out
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "ck25", str(copy), "-p", "text2sparql",
                             "--allow-gold-copy")
    assert code == 0
    assert f"{copy}: the answers equal the dataset's gold answers on 50 of 50 questions: a copy of the gold " \
           "answers?" in err
    genuine = shared_data / "ck25-runs" / "WSE" / "ck25_system_result_set.json"
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "ck25", str(genuine), "-p", "text2sparql")
    assert code == 0 and "copy of the gold" not in err
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "ck25", str(copy), "-p", "text2sparql", "--strict",
                             "--allow-gold-copy")
    assert code == 3


def test_an_unknown_language_is_refused_with_did_you_mean(capsys, monkeypatch, shared_data):
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "qald-9-test", str(RUNS / "weak.json"),
                             "--lang", "english")
    assert code == 2 and "did you mean 'en'?" in err and "qald-9-test has de, en, es" in err


def test_an_empty_run_file_says_it_is_empty(tmp_path, capsys, monkeypatch):
    empty = tmp_path / "run.json"
    empty.write_bytes(b"")
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "demo", str(empty))
    assert code == 2 and "the run file is empty (0 bytes)" in err and "cannot tell" not in err
    empty.write_text("  \n\n", encoding="utf-8")
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "demo", str(empty))
    assert code == 2 and "empty (only white space)" in err


@pytest.mark.parametrize(("typed", "suggested"), [
    ("F2", "F1"), ("BLUE", "BLEU"), ("gek", "GEK1"), ("ThisIsNoMeasureAtAll", None), ("Recallishness", None),
])
def test_measure_suggestions_by_prefix_and_distance(capsys, monkeypatch, typed, suggested):
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "demo", str(RUNS / "weak.json"), "-m", typed)
    assert code == 2 and f"unknown measure '{typed}'" in err
    if suggested:
        assert f"; did you mean '{suggested}'" in err
    else:  # a long unknown name is close to nothing (it used to get "did you mean 'R'?")
        assert "did you mean" not in err


def test_suggestions_are_close_matches():
    from kgqa.model.suggest import close_matches

    assert close_matches("F2", ["F1", "F1_Ans", "R", "P"])[0] == "F1"
    assert close_matches("Recallishness", ["R", "P", "F1"]) == []
    assert close_matches("lcquad", ["lcquad-1.0-train", "qald-10"]) == ["lcquad-1.0-train"]
    assert close_matches("ck52", ["ck25", "db25"]) == ["ck25"]
    assert close_matches("precision", ["Micro Precision", "R"]) == ["Micro Precision"]
    assert close_matches("", ["a"]) == [] and close_matches("x", []) == []


def test_demo_next_steps_work_from_any_directory(tmp_path, monkeypatch):
    from kgqa.cli.evaluate import next_steps

    steps = [cmd for cmd, _ in next_steps(RUNS, cwd=tmp_path)]
    assert all(str(RUNS.resolve()) in cmd for cmd in steps)
    inside = [cmd for cmd, _ in next_steps(RUNS, cwd=RUNS.parents[2])]
    assert inside[0] == "kgqa show demo demo/data/runs/weak.json --id 12"
    weird = tmp_path / "my runs"
    weird.mkdir()
    cmd = next_steps(weird, cwd=Path("/"))[0][0]  # quoted, absolute or relative to / (the temp folder's place)
    assert f"'{weird.resolve()}'/weak.json" in cmd or f"'{weird.resolve().relative_to('/')}'/weak.json" in cmd


def test_demo_next_step_command_runs_from_another_directory(tmp_path, capsys, monkeypatch):
    from kgqa.cli.evaluate import next_steps

    monkeypatch.chdir(tmp_path)
    import shlex

    cmd = shlex.split(next_steps(RUNS)[1][0])
    code, out, err = run_cli(capsys, monkeypatch, *cmd[1:], "-f", "json")
    assert code == 0, err
    assert json.loads(out)["runs"][0]["run"] == "A"


def test_control_characters_are_escaped_in_printed_output(tmp_path, capsys, monkeypatch):
    run = json.loads((RUNS / "weak.json").read_text(encoding="utf-8"))
    run["questions"].append({**run["questions"][0], "id": "\x1b[2J\x1b[31mwiped"})
    run_file = tmp_path / "evil.json"
    run_file.write_text(json.dumps(run), encoding="utf-8")
    code, out, err = run_cli(capsys, monkeypatch, "evaluate", "demo", "\x1b]0;owned\x07[red]x[bold]=" + str(run_file),
                             "-q")
    assert code == 0, err
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "\\x1b]0;owned\\x07[red]x[bold]" in out  # the run's name, markup shown as written
    assert "\\x1b[2J\\x1b[31mwiped" in out  # a run id not in the dataset
