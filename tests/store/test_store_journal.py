"""A live system's answers journalled in the store (issue 39, schema 6): what a worker on any
machine resumes a killed worker's experiment from. A record per question (a later one replaces
it), written only while the worker holds the lease, kept in memory while the store is away,
gone with the experiment's record; schema 5 stores get the table."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import create_engine, text

from kgqa.store import Store, StoreError, schema
from kgqa.store.journal import StoreJournal
from kgqa.store.store import owner_id


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "s.sqlite") as st:
        yield st


def new(st: Store) -> str:
    return st.create(dataset="demo", run_name="r", profile="kgqa", system_url="http://x.example/")


def rec(qid: str, outcome: str = "ok", **kw) -> dict:
    return {"id": qid, "outcome": outcome, "question": f"question {qid}", **kw}


def test_answers_journalled_by_one_worker_are_read_by_the_next(store):
    eid = new(store)
    first = owner_id()
    assert store.claim(eid, first)
    with StoreJournal(store, eid, first).open_journal({}) as j:
        assert j.records == {} and j.dropped == 0
        j.append_many([rec("q1"), rec("q2", "timeout", transient=True)])
        j.append(rec("q2", answer={"head": {"vars": []}, "results": {"bindings": []}}))  # asked again: replaces
        j.append_many([rec("q3", question="Wer schrieb \u201eFaust\u201c?")])
    assert set(store.journal(eid)) == {"q1", "q2", "q3"}
    store.release([first])
    second = owner_id()
    assert store.claim(eid, second)
    again = StoreJournal(store, eid, second).open_journal({"url": "http://x.example/"})
    assert again.records == {"q1": rec("q1"), "q2": rec("q2", answer={"head": {"vars": []}, "results": {"bindings": []}}),
                             "q3": rec("q3", question="Wer schrieb \u201eFaust\u201c?")}
    assert StoreJournal(store, eid, second).open_journal({}, fresh=True).records == {}  # --fresh: forgotten
    assert store.journal(eid) == {}


def test_a_worker_that_lost_the_lease_journals_nothing_more(store):
    eid = new(store)
    first, second = owner_id(), owner_id()
    assert store.claim(eid, first)
    j = StoreJournal(store, eid, first).open_journal({})
    j.append(rec("q1"))
    assert j.flush() and not j.lost
    assert store.claim(eid, second, stale_s=-1)  # its lease lapsed: taken over
    j.append_many([rec("q1", "malformed_response"), rec("q2")])
    j.close()
    assert j.lost and store.journal(eid) == {"q1": json.dumps(rec("q1"))}
    assert not store.journal_write(eid, {"q3": "{}"}, owner=first)
    assert store.journal_write(eid, {"q3": json.dumps(rec("q3"))}, owner=second)


def test_the_journal_goes_with_the_experiments_record(store):
    failed, deleted, other = new(store), new(store), new(store)
    for eid in (failed, deleted, other):
        assert store.journal_write(eid, {"q1": json.dumps(rec("q1"))})
    store.fail(failed, "the system failed")
    store.delete(deleted)
    assert store.journal(failed) == {} and store.journal(deleted) == {}
    assert list(store.journal(other)) == ["q1"]
    assert not store.journal_write(failed, {"q2": "{}"})  # a recorded experiment takes no more answers
    with store.engine.connect() as c:
        assert c.execute(text("SELECT count(*) FROM journal")).scalar() == 1


def test_many_answers_in_one_batch(store):
    eid = new(store)
    batch = {f"q{i}": json.dumps(rec(f"q{i}")) for i in range(1234)}  # more than one INSERT's rows
    assert store.journal_write(eid, batch)
    assert store.journal(eid) == batch


class AwayOnce:
    """A store whose first journal write fails as a database that is away does."""

    def __init__(self, store: Store):
        self.store, self.calls = store, 0

    def journal(self, eid):
        return self.store.journal(eid)

    def journal_write(self, eid, records, *, owner=None):
        self.calls += 1
        if self.calls == 1:
            err = StoreError("store", "database error: OperationalError: connection refused")
            err.operational = True
            raise err
        return self.store.journal_write(eid, records, owner=owner)


def test_answers_the_store_could_not_take_go_with_the_next_batch(store):
    eid = new(store)
    away = AwayOnce(store)
    j = StoreJournal(away, eid).open_journal({})
    j.append(rec("q1"))  # handed over at once; the store is away: kept, the evaluation goes on
    j.append(rec("q2"))
    assert j.flush() or j.flush()  # (its writer thread, or this first flush, found the store away)
    j.close()
    assert away.calls == 2 and set(store.journal(eid)) == {"q1", "q2"} and j.pending == {}


def test_without_a_writer_thread_each_batch_is_written_by_the_caller(store, monkeypatch):
    """A worker under a memory cap may not get a thread: the answers are written all the same."""
    eid = new(store)

    def no_thread(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr("threading.Thread.start", no_thread)
    j = StoreJournal(store, eid).open_journal({})
    j.append(rec("q1"))
    assert list(store.journal(eid)) == ["q1"]  # written before append returned
    j.close()


def test_a_schema_5_store_gets_the_journal_table(tmp_path):
    path = tmp_path / "v5.sqlite"
    eid = new(Store(path))
    eng = create_engine(f"sqlite:///{path}")
    with eng.begin() as c:  # what kgqa with schema version 5 wrote
        c.execute(text("DROP TABLE journal"))
        c.execute(text("UPDATE kgqa_schema SET version = 5"))
    eng.dispose()
    s = Store(path)
    assert s.schema_found == 5 and s.get(eid).run_name == "r"
    assert s.journal_write(eid, {"q1": "{}"}) and s.journal(eid) == {"q1": "{}"}
    with s.engine.begin() as c:
        schema.MIGRATIONS[5](c)  # idempotent: run again, the table and its rows stay
        assert c.execute(text("SELECT version FROM kgqa_schema")).scalar() == schema.VERSION == 6
    assert s.journal(eid) == {"q1": "{}"}
    s.close()
