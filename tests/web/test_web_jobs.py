"""Jobs that survive (issue 39): real ``kgqa web`` processes, a real slow live system, real
signals. A killed worker, a stopped server and a killed server leave every queued and running
experiment to finish once, none failed for it; no process outlives its server; a killed upload
checker does not fail the next upload; eight processes create one store at once."""

from __future__ import annotations

import multiprocessing
import os
import signal

import pytest

from kgqa.execute.live.client import AskSettings
from kgqa.load import registry
from kgqa.store import Store
from webjobs import CAP_HEADROOM_MB, N_QUESTIONS, capped_worker, asked, children, client, finished, poll, running_worker, server, slow_system, submit
from webserver import WebServer, _alive, descendants

DEMO = registry.PACKAGE_DIR / "demo" / "data"


@pytest.fixture
def system(tmp_path):
    with slow_system(tmp_path) as proc:
        yield proc


def assert_all_finished_once(exps, system) -> None:
    assert [e.status for e in exps] == ["finished"] * len(exps), [(e.status, e.error) for e in exps]
    assert len({e.headline_value for e in exps}) == 1  # the same system, the same numbers
    total = asked(system)
    # every question once per experiment; the questions in flight when a process was killed (at
    # most the client's concurrency per experiment) may be asked again: their answers never came
    in_flight = AskSettings().concurrency
    assert N_QUESTIONS * len(exps) <= total <= (N_QUESTIONS + in_flight) * len(exps), total


@pytest.mark.slow
def test_kill_9_of_the_worker_retries_its_experiment_and_fails_nothing(tmp_path, system):
    with server(tmp_path) as srv, client(srv) as c:
        ids = submit(c, system, 3)
        eid, pid = running_worker(srv.store, ids)
        os.kill(pid, signal.SIGKILL)
        exps = finished(srv.store, ids)
    assert_all_finished_once(exps, system)
    killed = next(e for e in exps if e.id == eid)
    assert killed.attempts == 1 and killed.claimed_by is None
    assert "out of memory" not in srv.output()


@pytest.mark.slow
def test_sigterm_of_the_server_leaves_every_experiment_to_the_next_start(tmp_path, system):
    srv = server(tmp_path).start()
    with client(srv) as c:
        ids = submit(c, system, 3)
    running_worker(srv.store, ids)
    srv.stop()  # SIGTERM; raises when a process it started outlives it
    with Store(srv.store) as st:
        left = [st.get(i, results=False) for i in ids]
    assert {e.status for e in left} <= {"pending", "running"}, [(e.status, e.error) for e in left]
    assert all(e.claimed_by is None for e in left)  # the leases were given back
    with server(tmp_path):
        exps = finished(tmp_path / "exp.sqlite", ids)
    assert_all_finished_once(exps, system)
    assert all(e.attempts == 0 for e in exps)


@pytest.mark.slow
def test_kill_9_of_the_server_leaves_no_process_and_the_restart_resumes(tmp_path, system):
    srv = server(tmp_path).start()
    with client(srv) as c:
        ids = submit(c, system, 2)
    running_worker(srv.store, ids)
    # half of the first experiment answered: asking it all again after the restart would exceed
    # the bound below (the answers are journalled as they come; the restart resumes from them)
    poll(lambda: asked(system) >= N_QUESTIONS // 2, every=0.02)
    kids = descendants(srv.proc.pid)
    assert kids
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    poll(lambda: not [p for p in kids if _alive(p)], timeout=30)  # the workers noticed and ended
    srv.proc = None
    srv._logf.close()
    with server(tmp_path):
        exps = finished(tmp_path / "exp.sqlite", ids)
    assert_all_finished_once(exps, system)
    with Store(tmp_path / "exp.sqlite") as st:
        assert [st.journal(i) for i in ids] == [{}, {}]  # each journal deleted once its experiment was recorded


@pytest.mark.slow
def test_a_killed_upload_checker_does_not_fail_the_next_upload(tmp_path):
    with WebServer(tmp_path / "exp.sqlite", tmp_path) as srv, client(srv) as c:
        bad = c.post("/new", data={"csrf": c.csrf, "dataset": "demo", "profile": "kgqa"},
                     files={"run_file": ("bad.json", b"{not json", "application/json")})
        assert bad.status_code == 400  # read by the checking processes: they run now, no experiment pool yet
        checkers = [p for p in descendants(srv.proc.pid) if p not in children(srv.proc.pid)]  # below the fork server
        assert checkers
        for p in checkers:
            os.kill(p, signal.SIGKILL)
        good = c.post("/new", data={"csrf": c.csrf, "dataset": "demo", "profile": "kgqa"},
                      files={"run_file": ("strong.json", (DEMO / "runs" / "strong.json").read_bytes(),
                                          "application/json")})
        assert good.status_code == 303, good.text[:800]


def _create(path: str, q) -> None:
    try:
        st = Store(path)
        q.put(("ok", st.create(dataset="demo", run_name="r", profile="kgqa", system_url="http://x.example/")))
    except Exception as err:  # noqa: BLE001 - reported to the test
        q.put(("error", f"{type(err).__name__}: {err}"))


@pytest.mark.slow
def test_eight_processes_create_one_store_at_once(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    for round_ in range(1):  # (the old code failed 23 of 40 opens in 5 rounds: bench/faults_jobs.py)
        path = str(tmp_path / f"s{round_}.sqlite")
        q = ctx.Queue()
        procs = [ctx.Process(target=_create, args=(path, q)) for _ in range(8)]
        for p in procs:
            p.start()
        got = [q.get(timeout=120) for _ in procs]
        for p in procs:
            p.join()
        assert [g for g in got if g[0] != "ok"] == []
        with Store(path) as st:
            assert st.count() == 8


@pytest.mark.slow
def test_a_worker_past_its_memory_cap_fails_the_experiment_saying_out_of_memory(tmp_path):
    st = Store(tmp_path / "s.sqlite")
    sha = st.put_file((DEMO / "runs" / "strong.json").read_bytes())
    kg = str(DEMO / "kg.ttl")
    ids = {mb: st.create(dataset="demo", run_name="s", run_file=sha, run_filename="strong.json", profile="kgqa",
                         kg="demo", options={"reexecute": True}) for mb in (CAP_HEADROOM_MB, 1024)}
    for mb, eid in ids.items():
        assert capped_worker(st.url, eid, mb, kg) == 0
    capped, roomy = st.get(ids[CAP_HEADROOM_MB]), st.get(ids[1024])
    assert capped.status == "failed" and capped.error.startswith("out of memory") and "--worker-memory-mb" in capped.error
    assert roomy.status == "finished" and roomy.aggregate["F1"] > 0.8


def test_a_server_without_workers_leaves_experiments_to_kgqa_worker(tmp_path):
    from kgqa.web.jobs import EXTERNAL_CREDENTIALS, Jobs

    with Store(tmp_path / "s.sqlite") as st:
        jobs = Jobs(st, {}, workers=0)
        jobs.start()
        plain = st.create(dataset="demo", run_name="r", profile="kgqa", system_url="http://x.example/")
        secret = st.create(dataset="demo", run_name="r", profile="kgqa", system_url="http://u:pw@x.example/")
        jobs.submit(plain, system_url="http://x.example/")
        jobs.submit(secret, system_url="http://u:pw@x.example/")
        assert jobs.resume() == 0  # nothing queued here
        left, failed = st.get(plain), st.get(secret)
        jobs.shutdown()
    assert (left.status, left.claimed_by) == ("pending", None)  # for a kgqa worker to take
    # a worker reads everything from the store, which never keeps credentials: said at once
    assert failed.status == "failed" and failed.error == EXTERNAL_CREDENTIALS
