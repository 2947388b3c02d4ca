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


def test_a_streamed_reading_shows_its_count_on_a_terminal_and_nothing_in_a_pipe(tmp_path):
    """Scoring a streamed dataset one question at a time shows a bar counting the questions read
    (ticked every DatasetStream.TICK) on a terminal; it is gone when scoring ends, and a pipe
    gets none of it."""
    import subprocess
    import sys

    from kgqa.load.stream import DatasetStream
    from ptyrun import _run_in_pty, screen

    tick = 64  # the bar's tick, set in the command's process (a real one, 4096, needs 8,000+ questions)
    assert DatasetStream.TICK > tick
    n = 2 * tick + 5
    ds, run = tmp_path / "ds.jsonl", tmp_path / "run.jsonl"
    ds.write_text("".join(json.dumps({"id": str(i), "question": f"q{i}", "answers": [f"http://x/{i}"]}) + "\n"
                          for i in range(n)), encoding="utf-8")
    run.write_text("".join(json.dumps({"id": str(i), "answer": [f"http://x/{i}"]}) + "\n" for i in range(n)),
                   encoding="utf-8")
    env = {"KGQA_STREAM_BYTES": "1000", "KGQA_CACHE_DIR": str(tmp_path / "cache")}
    args = ["evaluate", str(ds), str(run), "-p", "qald"]  # not kgqa.score.lean's path: items read one by one
    kgqa = [sys.executable, "-c", f"from kgqa.load.stream import DatasetStream; DatasetStream.TICK = {tick}; "
                                  "from kgqa.cli import main; main()"]
    code, raw = _run_in_pty([*kgqa, *args], 100, 50, None, env, 300.0)
    shown = screen(raw)
    assert code == 0, shown
    assert "reading ds" in raw
    assert "reading ds" not in shown and "streamed" in shown and f"n:{n}" in shown.replace("\n", "")
    piped = subprocess.run([*kgqa, *args], capture_output=True, text=True, env={**__import__("os").environ, **env})
    assert piped.returncode == 0 and "reading ds" not in piped.stderr + piped.stdout


def test_the_bar_is_ticked_every_tick_units_and_a_hidden_one_never(tmp_path):
    from kgqa.load.stream import DatasetStream
    from kgqa.model.progress import ticked

    ds = tmp_path / "ds.jsonl"
    ds.write_text("".join(json.dumps({"id": str(i), "question": {"en": f"q{i}", "de": f"f{i}"}, "answers": ["x"]})
                          + "\n" for i in range(2 * DatasetStream.TICK + 5)), encoding="utf-8")

    class Bar:
        def __init__(self, shown):
            self.shown, self.ticks = shown, []

        def __bool__(self):
            return self.shown

        def __call__(self, k):
            self.ticks.append(k)

    stream = DatasetStream([ds])
    shown, hidden = Bar(True), Bar(False)
    units = list(ticked(stream._units(), shown, DatasetStream.TICK))
    assert [u.id for u in units] == [u.id for u in stream] and len(units) == 2 * DatasetStream.TICK + 5
    assert shown.ticks == [DatasetStream.TICK] * 2
    plain = stream._units()
    assert ticked(plain, hidden, DatasetStream.TICK) is plain and hidden.ticks == []


def test_a_streamed_evaluation_has_no_extra_column_hint_to_look_for(files):
    """A streamed question's record holds no gold answer, so the taxonomy never labels it
    extra_columns: the hint passes it over (it classified every question: 24 s at 10^6)."""
    from kgqa.analyze.hints import extra_column_ids
    from kgqa.analyze.taxonomy import classify

    ds, run = files
    (e,) = kgqa.evaluate_many(ds, [run])
    assert e.streamed and e.signature.get("view") == "tuples"
    assert extra_column_ids(e) == [] == [q.id for q in e.questions if classify(q).label == "extra_columns"]
