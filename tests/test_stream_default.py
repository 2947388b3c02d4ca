"""Bounded memory by default (issue 29): a large JSONL dataset is streamed without --stream, with
a note saying so; anything that needs the dataset in memory keeps it there; scores are equal."""

from __future__ import annotations

import json

import pytest

import kgqa
from kgqa.api import Evaluator, stream_threshold
from kgqa.model import InputError


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setenv("KGQA_STREAM_BYTES", "1000")
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    ds, run = tmp_path / "ds.jsonl", tmp_path / "run.jsonl"
    with ds.open("w") as f, run.open("w") as g:
        for i in range(300):
            f.write(json.dumps({"id": str(i), "question": f"q{i}", "answers": [f"http://x/{i}", f"http://x/{i}b"]}) + "\n")
            g.write(json.dumps({"id": str(i), "answer": [f"http://x/{i}"] if i % 3 else []}) + "\n")
    return ds, run


def test_large_jsonl_streams_by_itself_with_the_same_scores(files):
    ds, run = files
    auto = kgqa.evaluate(ds, run, profile="text2sparql")
    kept = kgqa.evaluate(ds, run, profile="text2sparql", stream=False)
    assert auto.notes and "read one question at a time" in auto.notes[0] and not kept.notes
    assert json.dumps(auto.aggregate) == json.dumps(kept.aggregate) and str(auto.signature) == str(kept.signature)
    assert [q.scores for q in auto.questions] == [q.scores for q in kept.questions]
    with Evaluator(ds, "kgqa") as ev:
        assert ev.stream and ev.streamed_why


def test_what_needs_the_dataset_keeps_it_in_memory(files, tmp_path, monkeypatch):
    ds, run = files
    with Evaluator(ds, "kgqa", kg="kgqa/demo/data/kg.ttl") as ev:  # execution needs the items
        assert not ev.stream and ev.streamed_why is None
    from conftest import REPO

    qald = sorted((REPO / "tests" / "fixtures" / "qald").glob("*.json"), key=lambda p: -p.stat().st_size)[0]
    assert qald.stat().st_size > 1000
    with Evaluator(qald, "kgqa") as ev:  # only JSONL is read line by line
        assert not ev.stream
    with Evaluator(ds, "kgqa", stream=False) as ev:
        assert not ev.stream
    monkeypatch.setenv("KGQA_STREAM_BYTES", "off")
    assert stream_threshold() is None
    with Evaluator(ds, "kgqa") as ev:
        assert not ev.stream
    monkeypatch.setenv("KGQA_STREAM_BYTES", "big")
    with pytest.raises(InputError, match="KGQA_STREAM_BYTES"):
        Evaluator(ds, "kgqa")


def test_cli_streams_by_default_and_breakdowns_keep_the_dataset(files, capsys):
    from kgqa.cli import main

    ds, run = files
    for args, streamed in (([], True), (["--no-stream"], False), (["--by", "answer_cardinality"], False)):
        with pytest.raises(SystemExit) as e:
            main(["evaluate", str(ds), str(run), "-p", "text2sparql", *args])
        out, err = capsys.readouterr()
        assert e.value.code in (0, None), err
        assert ("streamed:" in err) == streamed, (args, err)
