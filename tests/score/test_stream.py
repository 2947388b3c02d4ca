"""Streaming must not change a single number (issue 17): a JSONL dataset scored with
``stream=True`` (read one question at a time, no item kept) and in memory gives the same
aggregates, per-question scores, outcomes, counts, skips and problems, bit for bit, on real
benchmarks under every profile."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import kgqa
from conftest import pairs
from kgqa.load import load_dataset, load_run
from kgqa.load.generic import item_to_json, prediction_to_json
from kgqa.model import InputError
from kgqa.score import profiles

PROFILES = profiles.names()


def _bits(v):
    """A float's exact identity (repr is the shortest round-trip form; NaN compared as NaN)."""
    if isinstance(v, float):
        return "nan" if math.isnan(v) else repr(v)
    return v


def _question(q):
    c = q.counts
    counts = None if c is None else (c.tp, c.fp, c.fn, c.sys_size, c.gold_size, c.sys_hits, c.gold_hits)
    return q.id, q.outcome, q.message, {k: _bits(v) for k, v in q.scores.items()}, counts


def assert_same(a, b):
    assert {k: _bits(v) for k, v in a.aggregate.items()} == {k: _bits(v) for k, v in b.aggregate.items()}
    assert [_question(q) for q in a.questions] == [_question(q) for q in b.questions]
    assert a.outcomes == b.outcomes
    assert a.skipped == b.skipped
    assert a.measure_skips == b.measure_skips
    assert a.missing_ids == b.missing_ids and a.unknown_ids == b.unknown_ids
    assert a.problems == b.problems
    assert str(a.signature) == str(b.signature)
    assert [w.code for w in a.setup_warnings] == [w.code for w in b.setup_warnings]


def _write_jsonl(path: Path, docs) -> Path:
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    return path


def _as_jsonl(tmp: Path, dataset_spec, run_spec, run_format=None, drop_every: int = 7):
    """The dataset and run as JSONL files; the run loses every ``drop_every``-th entry and gains
    one the dataset lacks, so missing and unknown ids are exercised too."""
    ds = load_dataset(dataset_spec)
    run = load_run(run_spec, format=run_format, dataset=ds)
    d = _write_jsonl(tmp / "ds.jsonl", (item_to_json(it) for it in ds.items))
    preds = [prediction_to_json(p) for i, p in enumerate(run.predictions) if i % drop_every != 3]
    preds.append({"id": "not-in-the-dataset", "answer": ["http://example.org/x"]})
    r = _write_jsonl(tmp / "run.jsonl", preds)
    return d, r


CASES = {
    "qald9-self": lambda s: (s / "qald-9" / "qald-9-test-multilingual.json", s / "qald-9" / "qald-9-test-multilingual.json", "qald-json"),
    "ck25-wse": lambda s: ("ck25", s / "ck25-runs" / "WSE" / "ck25_system_result_set.json", None),
    "ck25-wse-answers": lambda s: ("ck25", s / "ck25-runs" / "WSE" / "ck25_answers.json", None),
}


@pairs(("profile", "case"), PROFILES, sorted(CASES))
def test_streamed_equals_in_memory_on_real_data(shared_data, tmp_path, case, profile):
    ds_spec, run_spec, run_format = CASES[case](shared_data)
    d, r = _as_jsonl(tmp_path, str(ds_spec), str(run_spec), run_format)
    from kgqa.score.setup_check import SetupError

    try:
        in_memory = kgqa.evaluate(str(d), str(r), profile=profile, dataset_format="jsonl", run_format="jsonl")
    except SetupError as e:  # queries only, no KG, answer measures only: both modes refuse alike
        assert "--kg" in str(e)
        with pytest.raises(SetupError, match="--kg"):
            kgqa.evaluate(str(d), str(r), profile=profile, dataset_format="jsonl", run_format="jsonl", stream=True)
        return
    streamed = kgqa.evaluate(str(d), str(r), profile=profile, dataset_format="jsonl", run_format="jsonl", stream=True)
    assert len(in_memory.questions) > 20  # a real comparison, not two empty ones
    assert in_memory.missing_ids and in_memory.unknown_ids == ["not-in-the-dataset"]
    assert_same(in_memory, streamed)


def test_streamed_equals_in_memory_with_bad_lines_duplicates_and_languages(tmp_path):
    """Problems (bad JSON, a record without an id, a duplicate id) and per-language units are
    read the same way by both modes; a language selection too."""
    lines = [
        {"id": "1", "question": "a?", "answers": ["http://x/1", "http://x/2"]},
        "not json",
        {"question": "no id"},
        {"id": "1", "question": "duplicate", "answers": ["http://x/9"]},
        {"id": "2", "questions": {"en": "b?", "de": "b de?"}, "lang_ids": {"en": "2-en", "de": "2-de"},
         "answers": ["7", "2020-01-05"]},
        {"id": "3", "question": "c?", "answers": True},
    ]
    ds = tmp_path / "ds.jsonl"
    ds.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    run = _write_jsonl(tmp_path / "run.jsonl", [
        {"id": "1", "answer": ["http://x/1"]}, {"id": "2-en", "answer": ["7.0", "2020-01-05T00:00:00Z"]},
        {"id": "2-de", "answer": []}, {"id": "3", "answer": False}, {"id": "zzz", "answer": ["q"]}])
    for profile in PROFILES:
        for lang in (None, "de"):
            a = kgqa.evaluate(str(ds), str(run), profile=profile, lang=lang)
            b = kgqa.evaluate(str(ds), str(run), profile=profile, lang=lang, stream=True)
            assert_same(a, b)
            assert len(a.problems) == 3, a.problems
    for stream in (False, True):  # a language no item has is refused by both
        with pytest.raises(InputError, match="no question in language"):
            kgqa.evaluate(str(ds), str(run), lang="fr", stream=stream)


def test_stream_keeps_no_items_and_says_what_it_cannot_do(tmp_path, shared_data):
    d = _write_jsonl(tmp_path / "ds.jsonl", [{"id": "1", "question": "q", "answers": ["http://x/1"]}])
    r = _write_jsonl(tmp_path / "run.jsonl", [{"id": "1", "answer": ["http://x/1"]}])
    e = kgqa.evaluate(str(d), str(r), stream=True)
    q = e.questions[0]
    assert q.record.question is None and q.record.predicted_answer is not None  # run side only
    assert e.aggregate["F1"] == 1.0
    with pytest.raises(InputError, match="cannot be streamed"):
        kgqa.evaluate(str(shared_data / "qald-9" / "qald-9-test-multilingual.json"), str(r), stream=True)
    with pytest.raises(InputError, match="drop --stream"):
        kgqa.evaluate(str(d), str(r), stream=True, kg=str(tmp_path / "kg.nt"))


def test_what_reads_the_items_refuses_a_streamed_evaluation(tmp_path):
    """Breakdowns, the error taxonomy and the HTML report read the dataset items a streamed
    evaluation does not keep: they say so instead of putting every question under "(none)"."""
    from typer.testing import CliRunner

    from kgqa.analyze.breakdown import breakdown_table
    from kgqa.analyze.taxonomy import classify_evaluation, taxonomy_counts
    from kgqa.cli import _register, app
    from kgqa.report.html import html_report

    d = _write_jsonl(tmp_path / "ds.jsonl", [{"id": str(i), "question": "q", "answers": ["http://x/1"],
                                              "answer_type": "resource"} for i in range(4)])
    r = _write_jsonl(tmp_path / "run.jsonl", [{"id": str(i), "answer": ["http://x/1"]} for i in range(3)])
    e = kgqa.evaluate(str(d), str(r), stream=True)
    assert e.streamed and kgqa.evaluate(str(d), str(r)).streamed is False
    for call in (lambda: breakdown_table([e], "answer_type"), lambda: classify_evaluation(e),
                 lambda: html_report([e])):
        with pytest.raises(ValueError, match="streamed evaluation does not keep"):
            call()
    assert taxonomy_counts([e]) == {}
    from kgqa.report.render import render_report  # ... and a report names the run it left out
    full = kgqa.evaluate(str(d), str(r))
    full.run = "in-memory"
    md = render_report([e, full], "md")
    assert "| in-memory |" in md.split("### Error taxonomy")[1] and "evaluate without --stream): run" in md
    assert json.loads(render_report([e, full], "json"))["taxonomy_left_out"] == [e.run]
    assert "taxonomy_left_out" not in json.loads(render_report([full], "json"))
    assert "not classified" not in render_report([full], "md")
    assert type(e).from_json(e.to_json()).streamed  # kept through --save
    _register()
    res = CliRunner().invoke(app, ["evaluate", str(d), str(r), "--stream", "--by", "answer_type"])
    assert isinstance(res.exception, InputError) and "drop --stream" in str(res.exception)
