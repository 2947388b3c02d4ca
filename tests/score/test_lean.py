"""Issue 29: the lean path of a streamed answers-only evaluation (kgqa.score.lean) gives the same
evaluation as the general path, or declines.

- hypothesis: random JSONL datasets and runs (IRIs with percent escapes, numbers in several
  lexical forms, language-tagged and typed literals, duplicates inside answers, empty and null
  answers, questions missing from the run, run ids the dataset lacks, duplicate ids, blank
  lines, records the lean path does not read) under every profile it applies to (text2sparql,
  kgqa, text2sparql with IRI links): the streamed evaluation's JSON (aggregates, every
  question's scores, counts, outcome, message and record, skips, problems, signature) is the
  same with the lean path as without it, and its aggregates are those of the in-memory
  evaluation;
- the lean path is taken for flat records and declined for what it does not read (so the
  comparison above compares two paths);
- a rule's (P, R, F) computed a column at a time equals the rule applied question by question.
"""

from __future__ import annotations

import json
import math
import os
import struct
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples

import kgqa.score.lean as lean
from kgqa.load import load_dataset, load_run
from kgqa.load.generic import line_start_near
from kgqa.load.stream import open_stream
from kgqa.model import fork
from kgqa.model.terms import IriLinks
from kgqa.report import evaluation as report
from kgqa.report.evaluation import to_json, to_json_chunks
from kgqa.score import profiles
from kgqa.score.evaluate import evaluate
from kgqa.score.rules import RULE_COLUMNS, RULES, Counts, CountsColumn

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

_ANSWER = st.sampled_from([
    "http://x/a", "http://x/a%20b", "http://x/a b", "http://x/%C3%A9", "http://x/é", "https://x/a", "urn:x:1",
    "8", "8.0", "+8", "08", "1e3", "-0", "0", "2020-01-05", "true", "Berlin", "berlin", '"Berlin"@en',
    '"8"^^<http://www.w3.org/2001/XMLSchema#integer>', "_:b0", "", " ", "é",
])
_IDS = st.sampled_from([str(i) for i in range(8)] + [" 3 ", "x"])
_ANSWERS = st.one_of(st.none(), st.just([]), st.lists(_ANSWER, min_size=1, max_size=5))

_DATASET_LINE = st.one_of(
    st.builds(lambda i, a: {"id": i, "question": f"q {i}", "answers": a}, _IDS, _ANSWERS),
    st.builds(lambda i, a: {"id": i, "question": f"q {i}", "answers": a, "sparql": "ASK {}"}, _IDS, _ANSWERS),
    st.builds(lambda i: {"id": i, "question": f"q {i}"}, _IDS),
)
#: lines the lean path does not read (the whole evaluation then goes by the general path)
_ODD_DATASET_LINE = st.sampled_from([
    "", "   ", "not json", '{"id": "9", "question": "q", "answers": ["a"], "metadata": {"features": '
    '["RESULT_ORDER_MATTERS"]}}', '{"id": "9", "question": "q", "answers": [1]}', '{"id": "9", "question": " "}',
    '{"id": "9", "question": "q", "answers": ["a"], "answer_type": "resource"}', "[1]",
    '{"id": "9", "question": "q", "answers": ["a"], "sparql": 5}', '{"id": " ", "question": "q", "answers": []}',
    '{"id": "9", "question": "q", "answers": null, "query": ["x"]}',
])


def _run_line(i: str, gold: list | None):
    """A run line for question ``i`` (gold answers ``gold``): answers (the common case; some of
    the gold ones and others), a query alone, nulls, a failure."""
    return st.one_of(
        st.builds(lambda keep, a: {"id": i, "answer": [g for g, k in zip(gold or [], keep) if k] + a},
                  st.lists(st.booleans(), min_size=5, max_size=5), st.lists(_ANSWER, max_size=2)),
        st.builds(lambda a: {"id": i, "answer": a}, _ANSWERS),
        st.just({"id": i, "query": "SELECT * {}"}),
        st.just({"id": i, "answer": None, "query": None}),
        st.just({"id": i, "error": "timeout", "status": "timeout"}),
        st.builds(lambda a: {"id": i, "answers": a}, _ANSWERS),  # read by the general run loader
        st.builds(lambda a: {"id": i, "answer": a, "elapsed": 0.25}, _ANSWERS),
    )


_PROFILES = [profiles.get("text2sparql"), profiles.get("kgqa"),
             profiles.get("text2sparql").with_links(IriLinks.from_pairs([("http://x/a", "urn:x:1")]))]


def _write(folder: Path, name: str, lines: list) -> Path:
    path = folder / name
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def _streamed(ds: Path, run: Path, profile, lean_on: bool, parallel: bool = False) -> tuple[dict, list]:
    """The streamed evaluation (lean path on or off; ``parallel``: every file split in two byte
    ranges, the second scored by a forked process) and [[lean path taken], stream count,
    languages, problems, [forked]]."""
    taken: list = []
    forked: list = []
    real, real_fork = lean.score_flat, fork.forked

    def fork_spy(*a):
        out = real_fork(*a)
        forked.append(out is not None)
        return out

    def spy(*a, **kw):
        out = real(*a, **kw) if lean_on else None
        taken.append(out is not None)
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lean, "score_flat", spy)
        mp.setattr(fork, "forked", fork_spy)
        if parallel:
            mp.setattr(lean, "PARALLEL_BYTES", 0)
            mp.setattr(lean, "CHUNK_BYTES", 40)  # ranges of a line or two
            mp.setattr(report, "PARALLEL_RECORDS", 1)
            mp.setattr(report, "_BATCH", 2)  # records written two at a time, batches dealt to two processes
            mp.setattr(fork, "can_fork", lambda: True)  # also under xdist (its threads do not matter here)
        stream = open_stream(ds)
        e = evaluate(stream, load_run(run, format="jsonl"), profile)
        # --save's writer (records made from the columns) writes what the question objects give
        chunks = "".join(to_json_chunks([e]))
        halves = "".join(to_json_chunks([e], scratch=ds.parent))  # in two processes where parallel
        assert chunks == to_json([e]) == "".join(to_json_chunks([e])) == halves
        return e.to_json(), [taken, stream.count, stream.languages, stream.problems, forked]


def _same(a: dict, b: dict) -> None:
    assert json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


@examples(150, quick=10)  # each example scores files both ways, some with a process pool
def test_lean_equals_general(folder, examples):
    @settings(SETTINGS, max_examples=examples)
    @given(st.lists(_DATASET_LINE, min_size=1, max_size=10, unique_by=lambda r: r["id"].strip()),
           st.sampled_from(["", "", "", "dup", "odd"]), _ODD_DATASET_LINE, st.integers(0, len(_PROFILES) - 1),
           st.booleans(), st.data())
    def check(ds_lines, twist, odd_line, which, parallel, data):
        _lean_equals_general(folder, ds_lines, twist, odd_line, which, parallel, data)

    check()


def _lean_equals_general(folder, ds_lines, twist, odd_line, which, parallel, data):
    # each question answered once, twice, or not at all (missing); an id the dataset lacks
    golds = [(r["id"], r.get("answers")) for r in ds_lines] + [("10", None), ("x", None)]
    run_lines = [data.draw(_run_line(i, gold)) for i, gold in golds
                 for _ in range(data.draw(st.sampled_from([1, 1, 1, 0, 2])))]
    run_lines = run_lines or [{"id": "10", "answer": ["a"]}]
    profile = _PROFILES[which]
    if twist == "dup":  # an id twice: the general path lists the second as a problem
        ds_lines = ds_lines + [{**ds_lines[0], "id": " " + ds_lines[0]["id"]}]
    odd = [odd_line] if twist == "odd" else []
    ds = _write(folder, "ds.jsonl", ds_lines + odd)
    run = _write(folder, "run.jsonl", run_lines)
    fast, (taken, *read_fast, forked) = _streamed(ds, run, profile, True, parallel)
    slow, (_, *read_slow, _) = _streamed(ds, run, profile, False)
    _same(fast, slow)
    assert read_fast[:2] == read_slow[:2] and [str(p) for p in read_fast[2]] == [str(p) for p in read_slow[2]]
    size = ds.stat().st_size  # a second process where the split leaves it a line
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lean, "CHUNK_BYTES", 40)
        scored = parallel and len(lean._ranges(ds, size)) >= 2
    writes = len(fast["questions"]) >= 3  # --save's records: two batches or more
    assert forked == ([True] if scored else []) + ([True] if parallel and writes else [])
    ids = [r["id"].strip() for r in ds_lines]
    blank = odd in ([""], ["   "])  # a blank line is skipped by both paths
    assert taken == [(not odd or blank) and len(set(ids)) == len(ids)]  # which path scored it
    memory = evaluate(load_dataset(ds, format="jsonl"), load_run(run, format="jsonl"), profile)
    for label, value in memory.aggregate.items():
        got = fast["aggregate"][label]
        assert (got is None and math.isnan(value)) or got == value


def test_lean_path_taken_and_declined(folder):
    ds = _write(folder, "a.jsonl", [{"id": "1", "question": "q", "answers": ["http://x/a", "b"]},
                                    {"id": "2", "question": "q", "answers": ["c"]}, {"id": "3", "question": "q"}])
    run = _write(folder, "ar.jsonl", [{"id": "1", "answer": ["b", "b", "z"]}, {"id": "7", "answer": ["c"]}])
    fast, (taken, count, langs, problems, _) = _streamed(ds, run, profiles.get("text2sparql"), True)
    assert taken == [True] and count == 3 and langs == ["en"] and problems == []
    q = {x["id"]: x for x in fast["questions"]}
    assert q["1"]["counts"] == {"tp": 1, "fp": 1, "fn": 1, "sys": 2, "gold": 2}
    assert q["1"]["scores"]["set_F"] == 0.5 and q["2"]["outcome"] == "missing"
    assert fast["missing_ids"] == ["2"] and fast["unknown_ids"] == ["7"]
    assert fast["skipped"][0]["id"] == "3" and fast["aggregate"]["set_P"] == 0.25
    dup = _write(folder, "b.jsonl", [{"id": "1", "question": "q", "answers": []}, {"id": "1", "question": "q"}])
    slow, (taken, *_rest) = _streamed(dup, run, profiles.get("text2sparql"), True)
    assert taken == [False] and "duplicate" in " ".join(slow["problems"])
    assert not lean.applies(profiles.get("qald")) and lean.applies(profiles.get("text2sparql"))


def test_failed_child_is_replaced(folder):
    """A forked process that fails (here: raises) has its byte ranges scored by the parent."""
    ds = _write(folder, "c.jsonl", [{"id": str(i), "question": "q", "answers": [f"a{i % 3}", "b"]} for i in range(50)])
    run = _write(folder, "cr.jsonl", [{"id": str(i), "answer": [f"a{i % 2}"]} for i in range(0, 50, 2)])
    parent, real = os.getpid(), lean._scan
    calls: list = []

    def scan(paths, start, end, *rest):
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        calls.append((start, end))
        return real(paths, start, end, *rest)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lean, "_scan", scan)
        fast, (taken, count, *_rest, forked) = _streamed(ds, run, profiles.get("text2sparql"), True, True)
    slow, _info = _streamed(ds, run, profiles.get("text2sparql"), False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lean, "CHUNK_BYTES", 40)
        ranges = lean._ranges(ds, ds.stat().st_size)
    assert taken == [True] and forked == [True, True] and count == 50  # scoring, writing
    assert len(ranges) > 10 and sorted(calls) == ranges  # every range scored here, once
    _same(fast, slow)


def test_failed_writer_child_is_replaced(folder):
    """--save's batches are written by the parent when the forked writer fails."""
    ds = _write(folder, "w.jsonl", [{"id": str(i), "question": "q", "answers": ["a", f"b{i}"]} for i in range(9)])
    run = _write(folder, "wr.jsonl", [{"id": str(i), "answer": ["a", "\ud800"]} for i in range(9)])
    e = evaluate(open_stream(ds), load_run(run, format="jsonl"), profiles.get("text2sparql"))
    parent, real = os.getpid(), report._batch_text

    def write(*a):
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return real(*a)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(report, "PARALLEL_RECORDS", 1)
        mp.setattr(report, "_BATCH", 2)
        mp.setattr(fork, "can_fork", lambda: True)
        whole = "".join(to_json_chunks([e], scratch=folder))
        here: list = []

        def mine(*a):
            if os.getpid() == parent:
                here.append(a[1])
            return real(*a)

        class ChildFirst(fork.Deal):  # this process takes its first batch once the child has one
            def __init__(self, n):
                super().__init__(n)
                self.n = n

            def take(self, front):
                for _ in range(1000):  # at most 10 s
                    if not front or struct.unpack_from("qq", self._mem)[1] < self.n:
                        break
                    time.sleep(0.01)
                return super().take(front)

        mp.setattr(report, "_batch_text", mine)
        mp.setattr(fork, "Deal", ChildFirst)
        shared = "".join(to_json_chunks([e], scratch=folder))
        mp.setattr(report, "_batch_text", write)
        replaced = "".join(to_json_chunks([e], scratch=folder))
    assert whole == shared == replaced == to_json([e]) and len(json.loads(whole)["runs"][0]["questions"]) == 9
    assert here == list(range(len(here))) and len(here) < 5  # the first batches here (if any), the rest there


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6)), max_size=30))
def test_rule_columns_equal_the_rules(rows):
    rows = [(min(t, s, g), s, g) for t, s, g in rows]
    column = CountsColumn([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    assert list(column) == [Counts(t, s - t, g - t, s, g, t, t) for t, s, g in rows] == column[:]
    for name, fn in RULE_COLUMNS.items():
        cols = fn(column.tp, column.sys_size, column.gold_size)
        for i, c in enumerate(column):
            assert tuple(col[i] for col in cols) == RULES[name](c)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text("ab\r\né", max_size=6), max_size=8), st.floats(0, 1), st.integers(1, 5))
def test_byte_ranges_split_at_lines(chunks, share, block):
    """Two byte ranges from ``line_start_near`` give the file's lines, each once, in order."""
    from kgqa.load import generic

    text = "\n".join(chunks)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f.jsonl"
        path.write_bytes(text.encode())
        size = path.stat().st_size
        split = line_start_near(path, int(size * share))
        assert split == size or split == 0 or path.read_bytes()[split - 1:split] == b"\n"
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(generic, "_BLOCK", block)  # blocks end inside lines too
            whole = [ln for b in generic.iter_text_blocks(path) for ln in b]
            parts = [ln for b in generic.iter_text_blocks(path, 0, split) for ln in b] + \
                [ln for b in generic.iter_text_blocks(path, split) for ln in b]
    assert [x for x in parts if x] == [x for x in whole if x]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["1", "2", "3", " 2", "4"]), st.booleans()), min_size=1, max_size=12),
       st.integers(1, 4))
def test_block_of_common_records_keeps_first_of_each_id(rows, cut):
    """A block whose every line is the common record is taken whole when its ids are new (the
    rest line by line): the same predictions, first of each id, and the same problems (line
    numbers, files) whatever the block size, over two files."""
    from kgqa.load import generic

    lines = [{"id": i, "answer": ["a"]} if ok else {"id": i, "answer": [1]} for i, ok in rows]
    with tempfile.TemporaryDirectory() as d:
        a = _write(Path(d), "a.jsonl", lines[:cut])
        b = _write(Path(d), "b.jsonl", lines[cut:] or [{"id": "9", "answer": []}])
        seen = []
        for block in (1, 30, 1 << 20):
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(generic, "_BLOCK", block)
                run = load_run([a, b], format="jsonl")
            seen.append(([(p.id, p.answer) for p in run.predictions], [str(p) for p in run.problems]))
    assert seen[0] == seen[1] == seen[2]
    ids = [p for p, _ in seen[0][0]]
    every = [r["id"].strip() for r in lines[:cut] + (lines[cut:] or [{"id": "9"}])]
    assert ids == list(dict.fromkeys(every)) and sum("duplicate" in p for p in seen[0][1]) == len(every) - len(ids)
