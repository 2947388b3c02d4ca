"""Large KGs (issue 29): ``--kg FILE`` at or above the size threshold is bulk-loaded once into an
on-disk store in the cache, named by the KG's content fingerprint, and reopened by later runs
without reading the file again."""

from __future__ import annotations

import os

import pytest

from kgqa.execute import kgfile
from kgqa.execute.opener import open_engine
from kgqa.execute.embedded import EmbeddedEngine
from kgqa.execute.executor import Executor
from kgqa.model import InputError, Status

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
NT = "".join(f"<http://x/s{i}> <http://x/p> \"{i}\" .\n" for i in range(50))


def _count(engine) -> str:
    out = Executor(engine).execute_many([COUNT])[0]
    assert out.status is Status.OK
    return out.answer.rows[0][0].value


@pytest.fixture
def kg(tmp_path, monkeypatch):
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KGQA_KG_STORE_BYTES", "0")
    f = tmp_path / "kg.nt"
    f.write_text(NT, encoding="utf-8")
    return f


def test_a_large_file_goes_through_a_cached_store_reused_without_reading_the_file(kg, tmp_path, monkeypatch):
    e = open_engine(kg, workers=1)
    try:
        assert e.info.version.endswith("/rocksdb") and _count(e) == "50"
        fp = e.info.fingerprint
    finally:
        e.close()
    stores = [p for p in (tmp_path / "cache" / "kgs").iterdir() if p.is_dir()]
    assert [p.name for p in stores] == [fp.removeprefix("sha256:")[:40]]
    assert kgfile.read_manifest(stores[0]).fingerprint == fp == kgfile.fingerprint([kg])

    def no_reading(*a, **k):
        raise AssertionError("the file was read again")

    monkeypatch.setattr(kgfile, "file_digest", no_reading)
    monkeypatch.setattr(kgfile, "create_store", no_reading)
    e = open_engine(kg, workers=1)
    try:
        assert e.info.fingerprint == fp and _count(e) == "50"
    finally:
        e.close()


def test_same_answers_as_in_memory_and_the_same_fingerprint(kg, monkeypatch):
    disk = open_engine(kg, workers=1)
    monkeypatch.setenv("KGQA_KG_STORE_BYTES", "off")
    mem = open_engine(kg, workers=1)
    try:
        assert not mem.info.version.endswith("/rocksdb")
        assert mem.info.fingerprint == disk.info.fingerprint
        q = "SELECT ?o WHERE { <http://x/s7> <http://x/p> ?o }"
        assert Executor(mem).execute_many([q])[0].answer == Executor(disk).execute_many([q])[0].answer
    finally:
        disk.close()
        mem.close()


def test_changed_file_gets_its_own_store_and_a_copy_reuses_the_existing_one(kg, tmp_path):
    first = kgfile.cached_store([kg])
    copy = tmp_path / "copy.nt"
    copy.write_bytes(kg.read_bytes())
    assert kgfile.cached_store([copy]) == first  # same content: same store, hashed once
    kg.write_text(NT + "<http://x/extra> <http://x/p> \"x\" .\n", encoding="utf-8")
    os.utime(kg, ns=(1, 1))
    second = kgfile.cached_store([kg])
    assert second != first and kgfile.read_manifest(second).quads == 51
    assert kgfile.cached_store([kg], graph="http://x/g") not in (first, second)


def test_a_killed_load_leaves_no_finished_looking_store(kg, tmp_path, monkeypatch):
    root = tmp_path / "cache" / "kgs"
    root.mkdir(parents=True)
    dead = root / "partial-999999999-deadbeef"  # no such process
    dead.mkdir()
    (dead / "junk").write_text("x")
    real = kgfile.create_store

    def killed(files, directory, *a, **k):
        real(files, directory, *a, **k)
        (directory / kgfile.MANIFEST).unlink()
        raise KeyboardInterrupt

    monkeypatch.setattr(kgfile, "create_store", killed)
    with pytest.raises(KeyboardInterrupt):
        kgfile.cached_store([kg])
    assert [p for p in root.iterdir() if p.is_dir()] == []  # the stale and the interrupted partial are gone
    monkeypatch.setattr(kgfile, "create_store", real)
    assert kgfile.is_store_dir(kgfile.cached_store([kg]))


def test_threshold_setting(monkeypatch, kg):
    monkeypatch.setenv("KGQA_KG_STORE_BYTES", "off")
    assert kgfile.disk_store_threshold() is None
    monkeypatch.setenv("KGQA_KG_STORE_BYTES", str(10 ** 9))
    e = open_engine(kg, workers=1)
    try:
        assert isinstance(e, EmbeddedEngine) and not e.info.version.endswith("/rocksdb")
    finally:
        e.close()
    monkeypatch.delenv("KGQA_KG_STORE_BYTES")
    assert kgfile.disk_store_threshold() == kgfile.DISK_STORE_BYTES
    monkeypatch.setenv("KGQA_KG_STORE_BYTES", "lots")
    with pytest.raises(InputError, match="KGQA_KG_STORE_BYTES"):
        kgfile.disk_store_threshold()


def test_unwritable_cache_is_a_clear_error(kg, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="KGQA_KG_STORE_BYTES=off"):
        kgfile.cached_store([kg], root=blocker / "kgs")
