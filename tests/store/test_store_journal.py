"""A live system's answers journalled in the store (issue 39, schema 6): what a worker on any
machine resumes a killed worker's experiment from. A record per question (a later one replaces
it), written while the worker holds the lease (after it lost it: only questions without a
record), kept in memory while the store is away, gone with the experiment's record; schema 5
stores get the table; a database outage longer than the lease on a real PostgreSQL."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import create_engine, text

from kgqa.execute.live import AskSettings, ask
from kgqa.load import load_dataset
from kgqa.store import Store, StoreError, schema
from kgqa.store.journal import StoreJournal
from kgqa.store.runner import wait_for_store
from kgqa.store.store import AWAY_GRACE_S, owner_id
from pgserver import PgServer, pg  # noqa: F401 (pg: a fixture)
from systemprocs import count, faulty


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


def test_a_worker_that_lost_the_lease_adds_only_answers_the_journal_lacks(store):
    """A database outage longer than the lease: another worker took the experiment over. The
    first still journals the answers it holds (facts about the live system) for questions with
    no record, never replacing the new owner's, and nothing once the experiment is recorded."""
    eid = new(store)
    first, second = owner_id(), owner_id()
    assert store.claim(eid, first)
    j = StoreJournal(store, eid, first).open_journal({})
    j.append(rec("q1"))
    assert j.flush() and not j.lost
    assert store.claim(eid, second, stale_s=-1)  # its lease lapsed: taken over
    j.append_many([rec("q1", "malformed_response"), rec("q2")])
    j.close()
    assert j.lost and store.journal(eid) == {"q1": json.dumps(rec("q1")), "q2": json.dumps(rec("q2"))}
    assert not store.journal_write(eid, {"q2": "{}", "q3": json.dumps(rec("q3"))}, owner=first)  # not held
    assert store.journal(eid)["q2"] == json.dumps(rec("q2")) and "q3" in store.journal(eid)
    assert store.journal_write(eid, {"q3": json.dumps(rec("q3", "timeout"))}, owner=second)  # the owner replaces
    assert json.loads(store.journal(eid)["q3"])["outcome"] == "timeout"
    assert len(store.journal(eid)) == 3  # one row a question
    store.fail(eid, "recorded by the new owner")
    assert not store.journal_write(eid, {"q4": "{}"}, owner=first) and store.journal(eid) == {}


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


def test_answers_held_when_the_asking_ended_in_an_outage_are_written_before_the_record(store):
    """A run that finished asking while the store was away holds its last answers in memory:
    the runner waits the store out for them (:meth:`StoreJournal.settle`) before it records
    the experiment, so a worker that takes it over meanwhile finds them in the journal."""
    eid = new(store)
    away = AwayOnce(store)
    j = StoreJournal(away, eid).open_journal({})
    j.pending["q1"] = json.dumps(rec("q1"))  # (what the closing flush could not write)
    assert wait_for_store(j.settle, 60) is None
    assert away.calls == 2 and store.journal(eid) == {"q1": json.dumps(rec("q1"))} and j.pending == {}


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


def _lapse(pg: PgServer, eid: str) -> None:
    """The lease of ``eid`` as an outage longer than the lease leaves it: its heartbeat old."""
    pg.sql(f"UPDATE experiments SET heartbeat = heartbeat - 1000 WHERE id = '{eid}'")


def retried(call):
    """``call()`` as the worker's heartbeat makes it: its first try after the restart may find a
    pooled connection the restart ended (an operational error; the pool then reconnects)."""
    try:
        return call()
    except StoreError as err:
        assert err.operational
        return call()


@pytest.mark.slow  # a PostgreSQL cluster starts, stops and starts again
def test_on_postgresql_an_outage_longer_than_the_lease_leaves_the_experiment_to_its_worker(pg):
    """bench/bench_workers.py's 40 s outage on a real PostgreSQL: the worker that found the
    database away takes no lapsed lease for a while once it is back, so the holder renews
    its own (and records its answers, asking nobody again); a holder that lost it all the same
    still journals what it holds, which the new owner reads; nothing once it is recorded."""
    with Store(pg.url) as holder, Store(pg.url) as other:
        eid = new(holder)
        first, second = owner_id(), owner_id()
        assert holder.claim(eid, first)
        assert holder.journal_write(eid, {"q1": json.dumps(rec("q1"))}, owner=first)
        pg.stop()
        with pytest.raises(StoreError) as away:
            other.claim_next(second)
        assert away.value.operational and other.away_at > 0
        pg.start()
        _lapse(pg, eid)  # (as if 40 s had passed)
        assert other.claim_next(second) is None and other.claim(eid, second) is None  # the grace
        assert [e.id for e in other.claimable()] == []
        assert retried(lambda: holder.heartbeat(eid, first))  # renewed on its return: its worker keeps it
        assert holder.journal_write(eid, {"q2": json.dumps(rec("q2"))}, owner=first)
        _lapse(pg, eid)
        other.away_at -= AWAY_GRACE_S  # the grace over: a lapsed lease is taken now
        got = other.claim_next(second)
        assert got is not None and (got.eid, got.lost_from) == (eid, first)
        assert not holder.heartbeat(eid, first)
        late = {"q2": json.dumps(rec("q2", "timeout")), "q3": json.dumps(rec("q3"))}
        assert not holder.journal_write(eid, late, owner=first)  # lost: only what the journal lacks
        assert other.journal(eid) == {"q1": json.dumps(rec("q1")), "q2": json.dumps(rec("q2")),
                                      "q3": json.dumps(rec("q3"))}
        other.fail(eid, "recorded", owner=second)
        assert not holder.journal_write(eid, {"q4": json.dumps(rec("q4"))}, owner=first)
        assert other.journal(eid) == {}


def test_a_worker_that_took_over_reads_what_the_lost_one_journals_meanwhile(store):
    """The new owner's journal watches the store (it took the lease over from a worker that
    may still write): an answer the lost worker journals after the new owner opened the
    journal is read (:meth:`StoreJournal.refresh`) and handed to the live client
    (:meth:`StoreJournal.taken`); the new owner's own records are never replaced."""
    eid = new(store)
    first, second = owner_id(), owner_id()
    assert store.claim(eid, first) and store.claim(eid, second, stale_s=-1)
    mine = StoreJournal(store, eid, second, watch=True).open_journal({})
    mine.append(rec("q2", "timeout", transient=True))
    assert mine.flush() and mine.taken("q1") is None
    assert not store.journal_write(eid, {"q1": json.dumps(rec("q1")), "q2": json.dumps(rec("q2"))}, owner=first)
    mine.refresh()  # (its writer thread reads too, every REFRESH_S: the same outcome)
    assert mine.taken("q1") == rec("q1") and mine.taken("q2") is None
    assert mine.records["q2"]["outcome"] == "timeout" and store.journal_ids(eid).__len__() == 2
    assert store.journal(eid, questions=["q1"]) == {"q1": json.dumps(rec("q1"))}
    mine.close()


@pytest.mark.slow  # a live system process answers CK25's 50 questions twice
def test_the_live_client_does_not_ask_what_the_lost_worker_journalled_meanwhile(store, shared_data):
    """ask() with a watching journal: the 20 answers a lost worker journals after the new
    owner opened the journal are not asked again; the run holds all 50."""
    ds = load_dataset("ck25")
    eid = new(store)
    first, second = owner_id(), owner_id()
    assert store.claim(eid, first) and store.claim(eid, second, stale_s=-1)
    s = AskSettings(progress=False, concurrency=4)
    with faulty(shared_data / "ck25-runs" / "WSE" / "ck25_answers.json") as srv:
        held = ask(ds, srv.url, "gerbil", s).records[:20]  # what the lost worker holds in memory
        late = {r["id"]: json.dumps(r) for r in held}

        class LateWrite(StoreJournal):
            def open_journal(self, header, *, fresh=False):
                super().open_journal(header, fresh=fresh)
                assert self.records == {}  # opened before the lost worker's write landed
                assert not self.store.journal_write(self.eid, late, owner=first)
                assert self.refresh() == 20
                return self

        before = count(srv)["total"]
        res = ask(ds, srv.url, "gerbil", s, journal=LateWrite(store, eid, second, watch=True))
        asked = count(srv)["total"] - before
    assert (asked, res.asked, res.reused, len(res.records)) == (30, 30, 20, 50)
    assert [r["id"] for r in res.records[:20]] == list(late)
