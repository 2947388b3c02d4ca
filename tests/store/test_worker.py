"""Evaluation workers taking experiments from the store (``kgqa worker``, issue 39): the queue's
"next job" claim (oldest first, each experiment to one worker, a lost worker's taken over and
counted), concurrent claims on PostgreSQL, and real ``kgqa worker`` processes on a real
PostgreSQL: three workers, 30 experiments (10 of them a live system served by ``kgqa system
serve``), one worker killed with SIGKILL mid-run: every experiment finishes once with the
numbers of one CLI evaluation, no process left behind."""

from __future__ import annotations

import json
import multiprocessing
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter

import pytest

from kgqa.store import Store
from kgqa.store.store import LostClaim, owner_id
from pgserver import pg  # noqa: F401 (a fixture)
from webserver import descendants
from workerprocs import N_QUESTIONS, Worker, asked, cli_scores, create, finishes, slow_system, wait_all


#: questions a cut run may have asked without their answer reaching the store: those in flight
#: (the live client's concurrency, 4) and those answered while the journal's last write ran
AT_KILL = 12


def new(st: Store) -> str:
    return st.create(dataset="demo", run_name="r", profile="kgqa", system_url="http://x.example/")


def dead_owner() -> str:
    p = multiprocessing.get_context("spawn").Process(target=int)
    p.start()
    p.join()
    return owner_id().split(":")[0] + f":{p.pid}:dead"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux's")
def test_a_temporary_folder_too_deep_for_the_fork_servers_socket_spawns_workers(tmp_path, monkeypatch):
    """A ``TMPDIR`` deeper than an AF_UNIX address allows ("AF_UNIX path too long" from the fork
    server): workers are spawned instead, and they run."""
    from kgqa.store.worker import SOCKET_DIR_MAX, WORKER_MODULES, process_context

    shallow = tmp_path / "t"
    shallow.mkdir()
    deep = tmp_path / ("d" * max(1, SOCKET_DIR_MAX + 1 - len(str(tmp_path)) - 1))
    deep.mkdir()
    for folder, method in ((shallow, "forkserver"), (deep, "spawn")):
        monkeypatch.setattr(tempfile, "tempdir", str(folder))
        if method == "forkserver" and len(str(folder)) > SOCKET_DIR_MAX:
            continue  # pytest's own folder is already too deep here
        ctx = process_context(WORKER_MODULES)
        assert ctx.get_start_method() == method, folder
    ctx = process_context(WORKER_MODULES)  # the deep folder: a worker starts and answers
    with ctx.Pool(1) as pool:
        assert pool.apply(abs, (-3,)) == 3


def test_the_queue_gives_the_oldest_free_experiment_once_and_takes_over_a_lost_one(tmp_path):
    with Store(tmp_path / "s.sqlite") as st:
        a, b, c = new(st), new(st), new(st)
        assert st.claim(a, owner_id())  # held by a live worker: skipped
        got = st.claim_next("w1")
        assert got is not None and got.attempts == 0 and got.lost_from is None
        if got.eid == c:  # (created in the same second: the id decides)
            b, c = c, b
        assert got.eid == b and st.claim_next("w2").eid == c
        assert st.claim_next("w3") is None  # nothing free
        gone = dead_owner()
        assert st.claim(c, gone) is None  # (held by w2)
        st.release(["w2"])
        assert st.claim(c, gone)  # now held by a process of this machine that is gone
        again = st.claim_next("w4")
        assert (again.eid, again.attempts, again.lost_from) == (c, 1, gone)  # a lost worker, counted
        st.fail(b, "x", owner="w1")  # done: never offered again
        st.release(["w4"])
        assert st.claim_next("w5").eid == c and st.claim_next("w6") is None


def test_a_worker_whose_experiment_was_recorded_by_its_successor_records_nothing(tmp_path):
    """An outage longer than the lease: another worker took the experiment over and recorded it
    before the first could; the first's write says it lost the lease (not an ImmutableError its
    run would take for the experiment's own failure, crashing its process)."""
    with Store(tmp_path / "s.sqlite") as st:
        eid = new(st)
        first, second = owner_id(), owner_id()
        assert st.claim(eid, first) and st.claim(eid, second, stale_s=-1)  # its heartbeat lapsed
        st.fail(eid, "recorded by the second", owner=second)
        with pytest.raises(LostClaim):
            st.fail(eid, "the first's result", owner=first)
        assert st.get(eid).error == "recorded by the second"


def _drain(url: str, taken: list, errors: list) -> None:
    try:
        with Store(url) as st:
            while (got := st.claim_next(owner_id())) is not None:
                taken.append(got.eid)
    except Exception as err:  # noqa: BLE001 - reported by the test
        errors.append(err)


@pytest.mark.slow  # a PostgreSQL cluster starts
def test_concurrent_claims_on_postgresql_give_each_experiment_to_one_worker(pg):
    with Store(pg.url) as st:
        ids = {new(st) for _ in range(60)}
    taken: list[str] = []
    errors: list[Exception] = []
    threads = [threading.Thread(target=_drain, args=(pg.url, taken, errors)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert Counter(taken) == Counter({i: 1 for i in ids})


@pytest.mark.slow
def test_on_postgresql_a_queued_experiment_wakes_an_idle_worker_and_answers_are_journalled(pg):
    with Store(pg.url) as idle, Store(pg.url) as web:
        assert idle.wait_for_work(5.0)  # the first call starts listening: ask the queue again
        assert not idle.wait_for_work(0.05)  # nothing queued meanwhile
        woken: list[bool] = []
        waiter = threading.Thread(target=lambda: woken.append(idle.wait_for_work(600.0)))
        waiter.start()
        eid = new(web)  # NOTIFY kgqa_queue with the new row
        waiter.join()
        assert woken == [True]
        owner = owner_id()
        assert idle.claim(eid, owner)
        assert idle.release([owner]) == 1
        assert idle.wait_for_work(600.0)  # a lease given back wakes too
        # the journal on PostgreSQL: a later record of a question replaces the first (upsert)
        assert web.journal_write(eid, {"q1": '{"id": "q1", "outcome": "timeout"}', "q2": '{"id": "q2"}'})
        assert web.journal_write(eid, {"q1": '{"id": "q1", "outcome": "ok"}'})
        assert idle.journal(eid) == {"q1": '{"id": "q1", "outcome": "ok"}', "q2": '{"id": "q2"}'}
        web.fail(eid, "x")
        assert idle.journal(eid) == {}


@pytest.mark.slow
def test_three_workers_on_postgresql_finish_30_experiments_once_after_one_is_killed(pg, tmp_path):
    pg.sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")  # a fresh store
    # 0.5 s a question: the victim, seen with 10 answers journalled, cannot finish its other 20
    # before the kill (at 0.2 s it did once, at load 4: attempts stayed 0)
    with slow_system(tmp_path, latency=0.5) as system, Store(pg.url) as st:
        keys = create(st, system.url, n_runs=20, n_live=10)
        ids = list(keys)
        workers = [Worker(pg.url, tmp_path) for _ in range(3)]
        try:
            # a live experiment half asked: its worker is killed (the whole kgqa worker, with SIGKILL)
            eid, victim = _half_asked(st, ids, keys, workers)
            orphans = victim.signal(signal.SIGKILL)
            exps = wait_all(pg.url, ids)
        finally:
            left = [w.stop() for w in workers if w is not victim]
        n_asked = asked(system)
        cli = cli_scores(set(keys.values()), system.url)
    assert [(e.id, e.status, e.error) for e in exps if e.status != "finished"] == []
    assert {e.id: e.aggregate for e in exps} == {i: cli[keys[i]] for i in ids}  # the CLI's numbers, each
    done = finishes(workers)
    assert done == Counter({i: 1 for i in ids}), done  # none evaluated twice, none lost
    assert orphans == [] and left == [[], []]
    killed = next(e for e in exps if e.id == eid)
    assert killed.attempts == 1 and killed.claimed_by is None  # taken over from the killed worker, counted
    # every question once per live experiment; those cut by the kill (AT_KILL at most) again: the
    # killed run's journal in the store gave its answers to the next worker
    assert 10 * N_QUESTIONS <= n_asked <= 10 * N_QUESTIONS + AT_KILL, n_asked
    with Store(pg.url) as st:
        assert st.journal(eid) == {}  # deleted once recorded
    assert all("given back" in w.output() for w in workers if w is not victim)


@pytest.mark.slow
def test_a_worker_on_another_machine_resumes_a_killed_workers_live_experiment_from_the_store(pg, tmp_path):
    """The live system's answers are journalled in the store, not in a folder of the machine that
    asked: a second worker with a temporary folder of its own (as on another machine) takes the
    experiment of a worker killed with SIGKILL mid-run and asks the system only the questions
    with no answer in the store, then records the numbers of one CLI evaluation."""
    pg.sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with slow_system(tmp_path, latency=1.0) as system, Store(pg.url) as st:  # (8 s of asking: killed mid-way)
        (eid,) = create(st, system.url, n_runs=0, n_live=1)
        first = Worker(pg.url, tmp_path, env={"TMPDIR": str(tmp_path / "a")})
        _wait(lambda: len(st.journal(eid)) >= 10, first)
        assert first.signal(signal.SIGKILL) == []  # no process left behind
        answered = {json.loads(r)["question"] for r in st.journal(eid).values()}  # (nothing written after the kill)
        assert 10 <= len(answered) < N_QUESTIONS
        second = Worker(pg.url, tmp_path, env={"TMPDIR": str(tmp_path / "b")})
        try:
            (e,) = wait_all(pg.url, [eid])
        finally:
            assert second.stop() == []
        asked_lines = system.asked.read_text(encoding="utf-8").splitlines()
        assert st.journal(eid) == {}  # deleted once recorded
        cli = cli_scores({("live",)}, system.url)[("live",)]
    assert (e.status, e.error, e.attempts) == ("finished", None, 1)  # taken over from the killed worker, counted
    assert e.aggregate == cli
    again = [q for q, n in Counter(asked_lines).items() if n > 1]
    assert set(again).isdisjoint(answered)  # no question answered in the store was asked again
    assert len(set(asked_lines)) == N_QUESTIONS and len(again) <= AT_KILL
    assert finishes([first, second]) == Counter({eid: 1})
    assert not list((tmp_path / "b").glob("kgqa-journals-*")) and not list((tmp_path / "a").glob("kgqa-journals-*"))


def _half_asked(st: Store, ids: list[str], keys: dict, workers: list[Worker]) -> tuple[str, Worker]:
    """(a live experiment with at least 10 answers journalled, the worker evaluating it)."""
    live = [i for i in ids if keys[i] == ("live",)]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        for eid in live:
            if len(st.journal(eid)) >= 10:
                e = st.get(eid, results=False)
                if e.claimed_by and not e.done:
                    pid = int(e.claimed_by.split(":")[1])
                    for w in workers:
                        if pid in descendants(w.pid):
                            return eid, w
        time.sleep(0.02)
    raise AssertionError("no live experiment was half asked")


@pytest.mark.slow
def test_sigterm_of_a_worker_gives_its_experiment_back_and_the_next_worker_finishes_it(tmp_path):
    url = str(tmp_path / "s.sqlite")
    with slow_system(tmp_path, latency=0.3) as system, Store(url) as st:
        keys = create(st, system.url, n_runs=0, n_live=1)
        eid = next(iter(keys))
        w1 = Worker(url, tmp_path)
        _wait(lambda: len(st.journal(eid)) >= 5, w1)
        assert w1.stop() == []  # SIGTERM: ends at once, no process left
        left = st.get(eid, results=False)
        assert (left.status, left.claimed_by, left.attempts) == ("running", None, 0)  # given back, not counted
        assert "1 experiment(s) given back" in w1.output()
        w2 = Worker(url, tmp_path)
        try:
            (e,) = wait_all(url, [eid])
        finally:
            w2.stop()
        n_asked = asked(system)
        assert e.status == "finished" and e.attempts == 0
        assert e.aggregate == cli_scores({("live",)}, system.url)[("live",)]
        assert N_QUESTIONS <= n_asked <= N_QUESTIONS + AT_KILL  # resumed from the journal
        assert finishes([w1, w2]) == Counter({eid: 1})


def _wait(what, worker: Worker, timeout: float = 120.0) -> None:
    """Until ``what()`` holds; a failure says whether ``worker`` still runs and what it printed."""
    deadline = time.monotonic() + timeout
    while not what():
        if time.monotonic() > deadline:
            state = "running" if worker.proc.poll() is None else f"ended with {worker.proc.returncode}"
            raise AssertionError(f"not within {timeout} s; the worker is {state}; its output:\n{worker.output()[-4000:]}")
        time.sleep(0.02)


def _count(path: str) -> int:
    """The experiments another process reads (it opens the store and closes its last connection)."""
    code = ("import sqlite3, sys; con = sqlite3.connect(sys.argv[1]); "
            "print(con.execute('SELECT count(*) FROM experiments').fetchone()[0]); con.close()")
    return int(subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True).stdout)


def test_a_second_store_on_one_sqlite_file_keeps_the_first_ones_writes_visible(tmp_path):
    """Opening a store again in one process (a test's poll, a worker's helper) read the file's
    header with a descriptor of its own, whose close dropped SQLite's locks: another process
    closing its last connection then deleted the WAL the first store still wrote to, and its
    writes were never seen elsewhere (a test waited 600 s for a finished experiment)."""
    path = str(tmp_path / "s.sqlite")
    with Store(path) as first:
        new(first)
        with Store(path) as second:
            new(second)
        assert _count(path) == 2
        new(first)  # after the other process closed its connection
        assert _count(path) == 3
