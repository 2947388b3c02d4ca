"""A JSON input may escape a lone surrogate ("\\ud800"), which Python keeps in a str but which has
no UTF-8 form: the result cache, the JSON writer and a whole executed evaluation handle it
instead of failing with a traceback."""

from __future__ import annotations

import json

import kgqa
from kgqa.demo import DATA
from kgqa.execute.cache import ResultCache, query_hash
from kgqa.load import jsonio
from kgqa.model import Outcome, Status, TableAnswer
from kgqa.model.terms import Literal

LONE = "\ud800"


def test_cache_hashes_and_skips_what_sqlite_cannot_store(tmp_path):
    c = ResultCache(tmp_path / "c.sqlite")
    assert query_hash("q" + LONE) != query_hash("q\ud801") != query_hash("q")
    ok = Outcome(Status.OK, TableAnswer(("x",), ((Literal("fine"),),)), "", 0.1)
    odd = Outcome(Status.OK, TableAnswer(("x",), ((Literal("bad" + LONE),),)), "", 0.1)
    # the row SQLite refuses is skipped, the others are stored (one transaction, then one by one)
    assert c.put_many("k", [("Q1", ok), ("Q2", odd), ("Q3" + LONE, ok)]) == 1
    q1, q2, q3 = c.get_many("k", ["Q1", "Q2", "Q3" + LONE])
    assert q1 is not None and q1.answer == ok.answer
    assert q2 is None and q3 is None


def test_json_writer_escapes_a_lone_surrogate():
    doc = {"query": "SELECT \"" + LONE + "\"", "label": "Zürich"}
    text = jsonio.dumps(doc)
    text.encode("utf-8")  # has a UTF-8 form
    assert json.loads(text) == doc
    assert jsonio.dumps({"label": "Zürich"}) == '{\n  "label": "Zürich"\n}'  # unchanged otherwise


def test_an_executed_run_with_a_lone_surrogate_is_an_outcome(tmp_path):
    ds = tmp_path / "ds.jsonl"
    ds.write_text(json.dumps({"id": "1", "question": "q", "sparql": "ASK { ?s ?p ?o }"}) + "\n", encoding="utf-8")
    run = tmp_path / "run.jsonl"
    run.write_text('{"id": "1", "query": "SELECT ?s WHERE { ?s ?p \\"\\ud800\\" }"}\n', encoding="utf-8")
    for cache in (None, str(tmp_path / "cache.sqlite"), str(tmp_path / "cache.sqlite")):  # cold, then warm
        e = kgqa.evaluate(str(ds), str(run), kg=str(DATA / "kg.ttl"), dataset_format="jsonl", run_format="jsonl",
                          cache=cache)
        q = e.questions[0]
        assert q.outcome == "exec_error" and "surrogates not allowed" in q.message
        assert e.aggregate["F1"] == 0.0
        from kgqa.report.evaluation import to_json

        assert json.loads(to_json([e]))  # the report is written, the text escaped


def test_files_and_the_terminal_get_the_escape(tmp_path):
    import subprocess
    import sys

    jsonio.write_atomic(tmp_path / "x.md", ["a" + LONE + "b"])
    assert (tmp_path / "x.md").read_text(encoding="utf-8") == "a\\ud800b"
    ds, run = tmp_path / "ds.jsonl", tmp_path / "run.jsonl"
    ds.write_text('{"id": "1", "question": "q", "answers": ["http://x/\\ud800"]}\n', encoding="utf-8")
    run.write_text('{"id": "1", "answer": ["http://x/\\ud800", "http://x/b"]}\n', encoding="utf-8")

    def cli(*args: str) -> str:
        r = subprocess.run([sys.executable, "-m", "kgqa.cli", *args], capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
        return r.stdout.decode("utf-8")

    assert "?answer=http://x/\\ud800" in cli("show", str(ds), str(run), "--id", "1")
    # scored: the surrogate IRI matches itself, one of two answers right
    assert "| 0.5000 | 1.0000 | 0.6667 |" in cli("evaluate", str(ds), str(run), "-f", "md")
