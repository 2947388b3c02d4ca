"""Library first: what a command of the evaluation side prints is one ``kgqa.api`` call, so a
notebook gets the same result with the same call; and the CLI's option groups
(``kgqa/cli/options.py``) check their input once, with the message the command prints."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import squash
from kgqa import api
from kgqa.cli import app, command
from kgqa.cli.options import ExecutionOptions, OutputFormat, OutputOptions, SystemOptions, parse_options
from kgqa.demo import DATA
from kgqa.model import InputError

runner = CliRunner()
command()  # registers every command on app
QUESTIONS = str(DATA / "questions.json")
RUNS = [str(DATA / "runs" / "strong.json"), str(DATA / "runs" / "weak.json")]


@pytest.fixture(scope="module")
def evals():
    return api.evaluate_many(QUESTIONS, RUNS, kg=str(DATA / "kg.ttl"), reexecute=True)


def test_find_question_and_why_there_is_none(evals):
    qid = evals[0].questions[0].id
    found = api.find_question(evals, qid)
    assert [(e.run, q.id) for e, q in found] == [(e.run, qid) for e in evals]
    assert [e.run for e, _ in api.find_question(evals, qid, run=evals[1].run)] == [evals[1].run]
    with pytest.raises(InputError, match="no run named 'nope'"):
        api.find_question(evals, qid, run="nope")
    with pytest.raises(InputError, match="no question 'zzz' in the evaluation"):
        api.find_question(evals, "zzz")


def test_evaluation_formats_are_the_cli_output(evals, tmp_path):
    saved = tmp_path / "e.json"
    api.save_evaluations(evals, saved)
    for fmt in ("json", "csv", "md"):
        r = runner.invoke(app, ["report", str(saved), "-f", fmt, "-o", "-"])
        assert r.exit_code == 0, r.output
        assert r.stdout.strip() == str(api.render_report(api.load_evaluations(saved), fmt)).strip()
    for fmt in ("json", "csv"):
        r = runner.invoke(app, ["evaluate", QUESTIONS, *RUNS, "--kg", str(DATA / "kg.ttl"), "--reexecute", "-f", fmt])
        assert r.exit_code == 0, r.output
        # the same call right after the command, so both see the same result cache (the counts
        # of executed queries and cache hits in the output depend on what ran before)
        again = api.evaluate_many(QUESTIONS, RUNS, kg=str(DATA / "kg.ttl"), reexecute=True)
        assert r.stdout.strip() == api.render_evaluations(again, fmt).strip()
    with pytest.raises(InputError, match="expected one of table, json, csv, md"):
        api.render_evaluations(evals, "latex")


def test_comparison_rendered_is_what_compare_prints(evals, tmp_path):
    cmp = api.compare(evals, seed=3, resamples=200)
    r = runner.invoke(app, ["compare", QUESTIONS, *RUNS, "--kg", str(DATA / "kg.ttl"), "--reexecute", "--seed", "3",
                            "--resamples", "200", "-f", "latex"])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == api.render_comparison(cmp, "latex").strip() == cmp.to_latex().strip()


def test_axioms_json_is_what_the_command_writes():
    r = runner.invoke(app, ["axioms", "F1", "GEK3", "-f", "json"])
    assert r.exit_code == 0, r.output
    report = api.check_axioms(["F1", "GEK3"])
    assert json.loads(r.stdout) == json.loads(api.render_validation(report, "json")) == report.to_json()
    with pytest.raises(InputError, match="--dataset needs --kg"):
        api.check_axioms(["F1"], dataset=QUESTIONS)


def test_degrade_writes_the_run_the_command_writes(tmp_path):
    out = tmp_path / "cli.jsonl"
    r = runner.invoke(app, ["degrade", QUESTIONS, "-t", "T1", "--rate", "0.5", "--seed", "4", "-o", str(out)])
    assert r.exit_code == 0, r.output
    d = api.degrade(QUESTIONS, "T1", 0.5, 4)
    api.write_run(d.run, tmp_path / "api.jsonl")
    assert (tmp_path / "api.jsonl").read_bytes() == out.read_bytes()
    assert squash(d.summary()) in squash(r.output)
    assert len(d.changed) == d.drawn > 0


def test_export_dataset_refuses_its_own_input(tmp_path):
    src = tmp_path / "ds.jsonl"
    api.export_dataset(QUESTIONS, "jsonl", src)
    assert len(api.load_dataset(src)) == len(api.load_dataset(QUESTIONS))
    with pytest.raises(InputError, match="refusing to overwrite an input file"):
        api.export_dataset(src, "jsonl", src)


@given(st.dictionaries(st.text("abcxyz_", min_size=1, max_size=8), st.text("abc xyz=_", max_size=8), max_size=5))
def test_parse_options_reads_every_pair(pairs):
    parsed = parse_options([f"{k}={v}" for k, v in pairs.items()], "--dataset-option")
    assert parsed == {k: {"true": True, "false": False}.get(v.strip().lower(), v.strip()) for k, v in pairs.items()}


@given(st.text(max_size=12).filter(lambda s: s not in ("stored", "executed")))
def test_gold_answers_is_checked_once_with_the_flag(value):
    with pytest.raises(InputError) as e:
        ExecutionOptions(gold_answers=value)
    assert str(e.value).startswith("--gold-answers") and "expected stored or executed" in str(e.value)


def test_breakdowns_need_a_text_format_and_no_stream():
    with pytest.raises(InputError, match="--by"):
        OutputOptions(fmt=OutputFormat.json, by=["hops"])
    assert OutputOptions(fmt=OutputFormat.md, by=["hops"]).stream(None) is False
    assert OutputOptions().stream(None) is None
    with pytest.raises(InputError, match="--stream"):
        OutputOptions(by=["hops"]).stream(True)


def test_no_run_and_no_system_is_a_usage_error():
    with pytest.raises(InputError, match="give one or more run files"):
        SystemOptions().settings([], "all")
    assert SystemOptions().settings(["a.json"], "all") is None
    s = SystemOptions(system="http://127.0.0.1:9/", header=["X-Key: v"], retries=1).settings(None, "en")
    assert (s.headers, s.retries, s.langs) == ({"X-Key": "v"}, 1, ["en"])
