"""Cache and disk trouble end in one clear line naming the file, never a traceback, and lose
nothing that can be kept (issue 24, scope 4): a corrupt or truncated cache, KGQA_CACHE_DIR
pointing at a file, a read-only cache, a full disk at start or mid-run (the run goes on without
storing, the failed ROLLBACK no longer hides why), and ``-o`` on a full disk."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import warnings

import pytest

import kgqa.execute.cache as cache_mod
from kgqa.execute.cache import CacheError, CachedEngine, ResultCache
from kgqa.execute.embedded import EmbeddedEngine
from kgqa.load.jsonio import OutputError, write_atomic
from kgqa.model import InputError, Status

from conftest import run_cli


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    kg = tmp_path_factory.mktemp("kg") / "kg.nt"
    kg.write_text('<http://x/a> <http://x/p> "a" .\n', encoding="utf-8")
    with EmbeddedEngine.from_files([kg], workers=1) as e:
        yield e


def filled_cache(path, engine, n=50):
    with ResultCache(path) as c:
        CachedEngine(engine, c).execute_many([f"SELECT * WHERE {{ ?s ?p ?o }} LIMIT {i + 1}" for i in range(n)])


def test_corrupt_file(tmp_path):
    p = tmp_path / "results.sqlite"
    p.write_bytes(os.urandom(5000))
    with pytest.raises(CacheError, match="corrupt or truncated") as e:
        ResultCache(p)
    assert str(p) in str(e.value) and "--no-cache" in str(e.value)
    assert isinstance(e.value, InputError)  # the CLI prints it as one line, exit 2


@pytest.mark.parametrize("keep", [4096, 20000])
def test_truncated_file(tmp_path, engine, keep):
    p = tmp_path / "results.sqlite"
    filled_cache(p, engine)
    data = p.read_bytes()
    assert len(data) > keep
    p.write_bytes(data[:keep])
    with pytest.raises(CacheError, match="corrupt or truncated"):
        with ResultCache(p) as c:  # either opening or the first read finds it
            CachedEngine(engine, c).execute_many([f"SELECT * WHERE {{ ?s ?p ?o }} LIMIT {i + 1}" for i in range(50)])


def test_cache_dir_is_a_file(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x", encoding="utf-8")
    with pytest.raises(CacheError, match="is a file, not a folder"):
        ResultCache(f / "results.sqlite")


def test_read_only_cache(tmp_path, engine, monkeypatch):
    p = tmp_path / "results.sqlite"
    filled_cache(p, engine)
    real = sqlite3.connect

    def read_only(database, *a, **kw):  # what a read-only file system gives SQLite
        return real(f"file:{database}?mode=ro", *a, uri=True, **kw)

    monkeypatch.setattr(cache_mod.sqlite3, "connect", read_only)
    with pytest.raises(CacheError, match="read-only") as e:
        ResultCache(p)
    assert str(p) in str(e.value)


def test_disk_full_at_start(tmp_path, monkeypatch):
    real = sqlite3.connect

    def tiny_disk(*a, **kw):
        db = real(*a, **kw)
        db.execute("PRAGMA max_page_count = 1")
        return db

    monkeypatch.setattr(cache_mod.sqlite3, "connect", tiny_disk)
    with pytest.raises(CacheError, match="the disk is full"):
        ResultCache(tmp_path / "results.sqlite")


def test_disk_full_mid_run_goes_on_without_storing(tmp_path, engine):
    c = ResultCache(tmp_path / "results.sqlite")
    ce = CachedEngine(engine, c)
    ce.execute_many(["ASK { ?s ?p ?o }"])
    pages = c._db.execute("PRAGMA page_count").fetchone()[0]
    c._db.execute(f"PRAGMA max_page_count = {pages}")  # the disk is now full
    queries = [f"SELECT * WHERE {{ ?s ?p ?o }} LIMIT {i + 1} # {'x' * 3000}" for i in range(200)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outs = ce.execute_many(queries)
    assert [o.status for o in outs] == [Status.OK] * 200  # every result kept for the report
    assert c.write_error is not None and "disk is full" in c.write_error
    msgs = [str(w.message) for w in caught if "result cache" in str(w.message)]
    assert len(msgs) == 1 and str(c.path) in msgs[0] and "disk is full" in msgs[0]
    assert ce.execute_many(queries[:3])[0].status is Status.OK  # and it keeps going, quietly
    c.close()


def test_output_on_a_full_disk(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    target.write_text('{"old": true}', encoding="utf-8")

    def full(*a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("kgqa.load.jsonio.os.replace", full)
    with pytest.raises(OutputError, match="cannot write: No space left on device") as e:
        write_atomic(target, ["{}"])
    assert str(target) in str(e.value)
    assert target.read_text(encoding="utf-8") == '{"old": true}'
    assert sorted(x.name for x in tmp_path.iterdir()) == ["out.json"]  # no temporary file left


def test_cli_prints_one_line_for_a_corrupt_cache(tmp_path, monkeypatch, capsys):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "results.sqlite").write_bytes(b"SQLite format 3\x00" + os.urandom(3000))
    ds = tmp_path / "ds.jsonl"
    ds.write_text(json.dumps({"id": "1", "question": "q", "answers": ["http://x/a"]}) + "\n", encoding="utf-8")
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"id": "1", "sparql": "SELECT ?x WHERE { ?x ?p ?o }"}) + "\n", encoding="utf-8")
    kg = tmp_path / "kg.nt"
    kg.write_text('<http://x/a> <http://x/p> "a" .\n', encoding="utf-8")
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    code, _, err = run_cli(capsys, "evaluate", str(ds), str(run), "--kg", str(kg))  # the kgqa command's main
    assert code == 2
    assert "Traceback" not in err
    assert "result cache unusable" in err and "results.sqlite" in err
