"""Leases on experiments (issue 39): one worker at a time evaluates an experiment, a lost
worker's lease is taken over (and counted), a stopped worker's is given back (not counted),
a worker that lost its lease records nothing; schema 3 stores get the lease columns."""

from __future__ import annotations

import multiprocessing
import socket

import pytest
from sqlalchemy import create_engine, text

from kgqa.store import Store, schema
from kgqa.store.store import LostClaim, owner_gone, owner_id


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "s.sqlite") as st:
        yield st


def new(st: Store, **kw) -> str:
    return st.create(dataset="demo", run_name="r", profile="kgqa", system_url="http://x.example/", **kw)


def dead_pid() -> int:
    p = multiprocessing.get_context("spawn").Process(target=int)
    p.start()
    p.join()
    return p.pid


def test_one_worker_holds_an_experiment_at_a_time(store):
    eid = new(store)
    a, b = owner_id(), owner_id()
    got = store.claim(eid, a)
    assert got is not None and got.attempts == 0 and got.lost_from is None
    assert store.claim(eid, b) is None  # held by a live worker with a fresh heartbeat
    assert store.heartbeat(eid, a) and not store.heartbeat(eid, b)
    assert [e.id for e in store.claimable()] == []
    store.start(eid, 0, "starting", owner=a)
    store.progress(eid, 1, 2, "", owner=a)
    with pytest.raises(LostClaim):
        store.progress(eid, 1, 2, "", owner=b)
    store.fail(eid, "boom", owner=a)
    e = store.get(eid)
    assert e.status == "failed" and e.claimed_by is None and store.claim(eid, b) is None


def test_a_stale_or_dead_workers_lease_is_taken_over_and_counted(store):
    eid, eid2 = new(store), new(store)
    stale = owner_id()
    assert store.claim(eid, stale)
    got = store.claim(eid, owner_id(), stale_s=-1)  # its heartbeat is older than the lease
    assert got is not None and got.attempts == 1 and got.lost_from == stale
    with pytest.raises(LostClaim):  # the old worker's result is not recorded
        store.progress(eid, 1, 2, "", owner=stale)
    gone = f"{socket.gethostname()}:{dead_pid()}:abcd"
    assert owner_gone(gone) and not owner_gone(owner_id()) and not owner_gone("elsewhere:1:ab")
    assert store.claim(eid2, gone)
    assert [e.id for e in store.claimable()] == [eid2]  # its holder is a process of this machine that is gone
    got = store.claim(eid2, owner_id())
    assert got is not None and got.attempts == 1


def test_a_given_back_lease_is_not_counted(store):
    eid = new(store)
    pid_prefix = f"{socket.gethostname()}:4242:"
    assert store.claim(eid, pid_prefix + "aa")
    assert store.release(prefixes=[pid_prefix]) == 1
    e = store.get(eid)
    assert e.claimed_by is None and e.status == "pending"
    got = store.claim(eid, owner_id())
    assert got is not None and got.attempts == 0


def test_an_experiment_created_with_an_owner_is_not_claimable(store):
    mine = owner_id()
    eid = new(store, owner=mine)
    assert store.claimable() == [] and store.claim(eid, owner_id()) is None


def test_a_schema_3_store_gets_the_lease_columns(tmp_path):
    path = tmp_path / "v3.sqlite"
    eid = new(Store(path))
    eng = create_engine(f"sqlite:///{path}")
    with eng.begin() as c:  # what kgqa with schema version 3 wrote
        for col in ("claimed_by", "heartbeat", "attempts"):
            c.execute(text(f"ALTER TABLE experiments DROP COLUMN {col}"))
        c.execute(text("UPDATE kgqa_schema SET version = 3"))
    eng.dispose()
    s = Store(path)
    assert s.schema_found == 3
    assert s.get(eid).attempts == 0 and s.claim(eid, owner_id()) is not None
    with s.engine.connect() as c:
        assert c.execute(text("SELECT version FROM kgqa_schema")).scalar() == schema.VERSION == 6
    assert Store(path).schema_found == schema.VERSION  # opened again: nothing to do
