"""Helpers of the job-survival tests and fault rows (issue 39): a slow live system, the
experiments it is asked for through a real ``kgqa web``, the worker evaluating one (from its
lease in the store), and the processes below a server."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import httpx

from kgqa import api
from kgqa.store import Store
from waiting import wait_until
from webserver import WebServer, descendants

N_QUESTIONS = 30  # the demo dataset


@contextmanager
def slow_system(tmp: Path, latency: float = 0.15):
    """A live system on loopback answering the demo dataset's gold queries, ``latency`` s a
    question (an experiment takes some 5 s: long enough to be interrupted)."""
    from systemprocs import faulty

    answers = tmp / "answers.json"
    answers.write_text(json.dumps([{"question": it.question("en"), "query": it.sparql}
                                   for it in api.load_dataset("demo").items]), encoding="utf-8")
    with faulty(answers, latency=latency) as proc:
        yield proc


def server(tmp: Path, *args: str) -> WebServer:
    return WebServer(tmp / "exp.sqlite", tmp, "--allow-system-urls", "--allowed-url-host", "127.0.0.1", *args)


@contextmanager
def client(srv: WebServer):
    with httpx.Client(base_url=srv.base, timeout=60) as c:
        c.csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/new").text).group(1)
        yield c


def submit(c: httpx.Client, system, n: int) -> list[str]:
    """``n`` live-system experiments on the demo dataset and KG: their ids."""
    ids = []
    for i in range(n):
        r = c.post("/new", data={"csrf": c.csrf, "dataset": "demo", "profile": "kgqa", "kg": "demo",
                                 "system_url": f"http://127.0.0.1:{system.port}/", "system_protocol": "gerbil",
                                 "run_name": f"live-{i}"})
        assert r.status_code == 303, r.text[:800]
        ids.append(r.headers["location"].rsplit("/", 1)[1])
    return ids


def poll(what, timeout: float = 180.0, every: float = 0.1):
    """``what()`` once it is truthy (a store row, a process list: no event to wait on)."""
    return wait_until(what, timeout=timeout, every=every)


def running_worker(store_path: Path, ids: list[str], min_done: int = 3) -> tuple[str, int]:
    """(experiment, pid of the worker evaluating it) once one has answered ``min_done`` questions."""
    def find():
        with Store(store_path) as st:
            for eid in ids:
                e = st.get(eid, results=False)
                if e.status == "running" and e.claimed_by and e.progress_done >= min_done:
                    return eid, int(e.claimed_by.split(":")[1])
        return None

    return poll(find)


def finished(store_path: Path, ids: list[str], timeout: float = 300.0) -> list:
    """The experiments once every one is done."""
    def done():
        with Store(store_path) as st:
            exps = [st.get(i, results=False) for i in ids]
        return exps if all(e.done for e in exps) else None

    return poll(done, timeout=timeout)


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (a server's fork server and resource tracker)."""
    kids = []
    for p in descendants(pid):
        try:
            if int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(p)
        except OSError:
            continue
    return kids


def asked(system) -> int:
    """Question requests the live system received."""
    from systemprocs import count

    return count(system)["total"]


#: address space a capped worker gets beyond what it maps once its store is open (worker_setup
#: opens it before the cap): too little for the demo evaluation re-executed on its KG (measured:
#: every headroom from 0 to 128 MB fails it "out of memory", the failure recorded)
CAP_HEADROOM_MB = 16


def capped_run(url: str, eid: str, extra_mb: float, kg: str) -> None:
    """One job in a worker capped at what it maps now plus ``extra_mb``."""
    from kgqa.web.jobs import open_store, run_in_worker, worker_setup

    open_store(url).get("")  # what worker_setup loads before the cap, so that the headroom is the evaluation's
    with open("/proc/self/status", encoding="ascii") as f:
        mapped_kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
    worker_setup(mapped_kb / 1024 + extra_mb, store_url=url)
    run_in_worker(url, eid, {"demo": kg}, 30.0)


def fork_capped(url: str, eid: str, extra_mb: float, kg: str) -> int:
    import kgqa.api  # noqa: F401 - what a server has loaded before it forks its workers
    from kgqa.store import runner  # noqa: F401

    p = multiprocessing.get_context("fork").Process(target=capped_run, args=(url, eid, extra_mb, kg))
    p.start()
    p.join()
    return p.exitcode


def capped_worker(url: str, eid: str, extra_mb: float, kg: str) -> int:
    """The exit status of a worker forked, as a server forks its workers, from a fresh small
    parent (not from this test process, whose size depends on the tests it ran before)."""
    here = str(Path(__file__).resolve().parent)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    code = f"import sys; from webjobs import fork_capped; sys.exit(fork_capped({url!r}, {eid!r}, {extra_mb!r}, {kg!r}))"
    return subprocess.run([sys.executable, "-c", code], env=env, timeout=600).returncode
