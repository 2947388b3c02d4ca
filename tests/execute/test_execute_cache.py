"""The SQLite result cache: lookup rules, CachedEngine counts, concurrent writers, kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from multiprocessing import get_context


from kgqa.execute.cache import CachedEngine, ResultCache, default_cache_path, engine_key
from kgqa.execute.engine import EngineInfo, too_many_rows_message
from kgqa.model import BooleanAnswer, Outcome, Status, TableAnswer
from kgqa.model.terms import XSD_DATE, BNode, IRI, Literal

INFO = EngineInfo("fake", "1", "sha256:" + "ab" * 32)
KEY = engine_key(INFO)


class FakeEngine:
    """Answers from a dict; counts calls. ``SLOW`` queries time out under small limits."""

    def __init__(self, answers: dict[str, Outcome]):
        self.info = INFO
        self.answers = answers
        self.calls: list[str] = []

    def execute(self, query, timeout=30.0, max_rows=100_000):
        self.calls.append(query)
        if query == "SLOW" and timeout < 5:
            return Outcome(Status.TIMEOUT, None, f"timeout after {timeout:g} s", timeout)
        o = self.answers.get(query, Outcome(Status.PARSE_ERROR, None, "bad query", 0.01))
        if o.status is Status.OK and isinstance(o.answer, TableAnswer) and len(o.answer) > max_rows:
            return Outcome(Status.EXEC_ERROR, None, too_many_rows_message(max_rows), 0.01)
        return o

    def execute_many(self, queries, timeout=30.0, max_rows=100_000, progress=None):
        out = [self.execute(q, timeout, max_rows) for q in queries]
        if progress is not None and queries:
            progress(len(queries))
        return out

    def close(self):
        pass


TABLE = TableAnswer(("x", "y"), (
    (IRI("http://x/a%40b"), Literal("hallo", None, "de")),
    (BNode("b0"), Literal("2020-01-05", XSD_DATE)),
    (Literal("plain"), None),
))
ANSWERS = {
    "Q1": Outcome(Status.OK, TABLE, "", 0.5),
    "Q2": Outcome(Status.OK, BooleanAnswer(False), "", 0.1),
    "Q3": Outcome(Status.EXEC_ERROR, None, "division by zero", 0.2),
    "SLOW": Outcome(Status.OK, TableAnswer(("n",), ((Literal("1"),),)), "", 6.0),
    "REF": Outcome(Status.REFUSED, None, "refused: SERVICE", 0.0),
}


def test_default_location(monkeypatch, tmp_path):
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_path() == tmp_path / "c" / "results.sqlite"
    monkeypatch.delenv("KGQA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert default_cache_path() == tmp_path / "x" / "kgqa" / "results.sqlite"


def test_round_trip_keeps_terms_and_statuses(tmp_path):
    c = ResultCache(tmp_path / "r.sqlite")
    for q, o in ANSWERS.items():
        c.put(KEY, q, o)
    assert c.get(KEY, "Q1") == ANSWERS["Q1"]
    assert c.get(KEY, "Q2") == ANSWERS["Q2"]
    assert c.get(KEY, "Q3") == ANSWERS["Q3"]
    assert c.get(KEY, "REF") is None  # refusals are not cached
    assert c.get("other-engine", "Q1") is None and c.get(KEY, "Q1 ") is None
    assert c.stats().entries == 4 and c.stats().by_engine == {KEY: {"ok": 3, "exec_error": 1}}
    c.close()
    import sqlite3

    assert sqlite3.connect(tmp_path / "r.sqlite").execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    c2 = ResultCache(tmp_path / "r.sqlite")  # persistent
    assert c2.get(KEY, "Q1") == ANSWERS["Q1"]
    assert c2.clear("fake-*") == 4 and c2.get(KEY, "Q1") is None


def test_timeouts_and_row_caps(tmp_path):
    c = ResultCache(tmp_path / "r.sqlite")
    c.put(KEY, "T", Outcome(Status.TIMEOUT, None, "timeout after 2 s", 2.0), timeout=2.0)
    assert c.get(KEY, "T", timeout=1.0).status is Status.TIMEOUT
    assert c.get(KEY, "T", timeout=2.0).status is Status.TIMEOUT
    assert c.get(KEY, "T", timeout=10.0) is None  # a larger limit re-runs
    c.put(KEY, "BIG", Outcome(Status.EXEC_ERROR, None, too_many_rows_message(100), 1.0), max_rows=100)
    assert c.get(KEY, "BIG", max_rows=50).message == too_many_rows_message(50)
    assert c.get(KEY, "BIG", max_rows=100).status is Status.EXEC_ERROR
    assert c.get(KEY, "BIG", max_rows=1000) is None  # a larger cap re-runs
    c.put(KEY, "Q1", ANSWERS["Q1"])  # 3 rows
    assert c.get(KEY, "Q1", max_rows=2) == Outcome(Status.EXEC_ERROR, None, too_many_rows_message(2), 0.5)
    assert c.get(KEY, "Q1", max_rows=3) == ANSWERS["Q1"]
    assert c.get(KEY, "Q1", timeout=0.1) == ANSWERS["Q1"]  # answers do not depend on the limit


def test_cached_engine_second_execution_executes_nothing(tmp_path):
    c = ResultCache(tmp_path / "r.sqlite")
    fake = FakeEngine(ANSWERS)
    ce = CachedEngine(fake, c)
    qs = ["Q1", "Q2", "Q3", "Q1", "bad", "SLOW", "REF"]
    first = ce.execute_many(qs, timeout=1.0)
    assert [o.status for o in first] == [Status.OK, Status.OK, Status.EXEC_ERROR, Status.OK,
                                         Status.PARSE_ERROR, Status.TIMEOUT, Status.REFUSED]
    assert ce.counts == {"executed": 5, "cache_hits": 1, "errors": 2, "timeouts": 1, "refused": 1}
    assert sorted(fake.calls) == sorted(["Q1", "Q2", "Q3", "bad", "SLOW", "REF"])  # Q1 once
    ce2 = CachedEngine(FakeEngine(ANSWERS), ResultCache(tmp_path / "r.sqlite"))
    ticks = []
    second = ce2.execute_many(qs, timeout=1.0, progress=ticks.append)
    assert second == first and sum(ticks) == len(qs)
    assert ce2.counts == {"executed": 0, "cache_hits": 6, "errors": 2, "timeouts": 1, "refused": 1}
    assert ce2.engine.calls == ["REF"]  # refusals are decided afresh, never cached
    third = ce2.execute_many(["SLOW"], timeout=10.0)  # larger limit: re-run
    assert third[0].status is Status.OK and ce2.counts["executed"] == 1


def _writer(path: str, worker: int, n: int) -> None:
    c = ResultCache(path)
    for i in range(n):
        c.put(KEY, f"w{worker}-q{i}", Outcome(Status.OK, TableAnswer(("x",), ((Literal(str(i)),),)), "", 0.0))
        c.put(KEY, "shared", Outcome(Status.OK, BooleanAnswer(bool(i % 2)), "", 0.0))
    c.close()


def test_concurrent_writers(tmp_path):
    path = str(tmp_path / "r.sqlite")
    ResultCache(path).close()
    ctx = get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 40)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    c = ResultCache(path)
    assert c.stats().entries == 3 * 40 + 1
    assert c.get(KEY, "w2-q39").answer.rows == ((Literal("39"),),)
    assert c.integrity() == "ok"


def test_kill_minus_9_mid_write_leaves_whole_entries(tmp_path):
    path = tmp_path / "r.sqlite"
    script = textwrap.dedent(f"""
        import sys
        from kgqa.execute.cache import ResultCache
        from kgqa.model import Outcome, Status, TableAnswer
        from kgqa.model.terms import Literal
        c = ResultCache({str(path)!r})
        big = TableAnswer(("x",), tuple((Literal("v" * 200 + str(i)),) for i in range(2000)))
        i = 0
        while True:
            c.put_many("k", [(f"q{{i}}-{{j}}", Outcome(Status.OK, big, "", 0.0)) for j in range(5)])
            i += 1
            print(i, flush=True)  # committed
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    for line in proc.stdout:  # killed while it writes its fourth transaction
        if int(line) == 3:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    c = ResultCache(path)
    assert c.integrity() == "ok"
    n = c.stats().entries
    assert n >= 15 and n % 5 == 0  # whole transactions only
    for i in range(n // 5):
        for j in range(5):
            o = c.get("k", f"q{i}-{j}")
            assert o is not None and len(o.answer) == 2000
    c.put("k", "after", ANSWERS["Q2"])  # the next run resumes
    assert c.get("k", "after") == ANSWERS["Q2"]
