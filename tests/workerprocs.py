"""Real processes for the worker tests and bench/bench_workers.py (issue 39): ``kgqa worker``
processes on a store, a slow live system served by ``kgqa system serve`` (tests/slowqa.py),
the experiments they evaluate (created in the store as ``kgqa web --workers 0`` creates
them), and the numbers one CLI evaluation of each gives."""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import kgqa
from kgqa.load import registry
from kgqa.store import Store
from systemprocs import CLI, adapter
from systemprocs import env as clean_env
from webserver import _alive, descendants

REPO = Path(__file__).resolve().parents[1]
DEMO = registry.PACKAGE_DIR / "demo" / "data"
RUNS = ("strong", "medium", "weak")
N_QUESTIONS = 30  # the demo dataset
FINISHED = re.compile(r"experiment (\w+) finished")


class Worker:
    """``kgqa worker --store URL ARGS`` in a session of its own, its output in ``log``;
    ``env``: variables set for it (``TMPDIR`` of its own: as on another machine)."""

    def __init__(self, url: str, tmp: Path, *args: str, processes: int = 1, env: dict[str, str] | None = None):
        self.log = tmp / f"worker-{len(list(tmp.glob('worker-*.log')))}.log"
        e = clean_env()
        e.setdefault("KGQA_CACHE_DIR", str(tmp / "cache"))
        e.update(env or {})
        self._fh = open(self.log, "ab")
        self.proc = subprocess.Popen(CLI + ["worker", "--store", url, "--processes", str(processes),
                                            "--allowed-url-host", "127.0.0.1", *args],
                                     env=e, stdout=self._fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        self.pid = self.proc.pid

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def processes(self) -> list[int]:
        """The processes below it (its fork server, resource tracker, evaluating processes)."""
        return descendants(self.pid)

    def signal(self, sig: int, timeout: float = 60.0) -> list[int]:
        """Send ``sig`` to the worker (only the worker: as a service manager does), wait for it
        to end; returns its processes still alive 30 s later (orphans; then killed)."""
        kids = self.processes()
        if self.proc.poll() is None:
            os.kill(self.pid, sig)
        self.proc.wait(timeout=timeout)
        self._fh.close()
        return orphans(kids)

    def stop(self) -> list[int]:
        return self.signal(signal.SIGTERM)


def finishes(workers: list[Worker]) -> Counter:
    """How often each experiment was finished, from every worker's log."""
    return Counter(m.group(1) for w in workers for m in FINISHED.finditer(w.output()))


@contextmanager
def slow_system(tmp: Path, latency: float = 0.1):
    """``kgqa system serve --python tests/slowqa.py:answer`` on a free loopback port; its
    ``asked`` file gets one line per question it is asked."""
    log = tmp / f"asked-{len(list(tmp.glob('asked-*')))}.txt"
    log.touch()
    old = {k: os.environ.get(k) for k in ("KGQA_SLOWQA_LATENCY", "KGQA_SLOWQA_LOG")}
    os.environ.update(KGQA_SLOWQA_LATENCY=str(latency), KGQA_SLOWQA_LOG=str(log))
    try:
        proc = adapter("--python", str(REPO / "tests" / "slowqa.py") + ":answer", "--protocol", "gerbil")
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    proc.asked = log
    try:
        yield proc
    finally:
        proc.stop()


def asked(system) -> int:
    return system.asked.read_text(encoding="utf-8").count("\n")


def create(st: Store, system_url: str | None, n_runs: int, n_live: int,
           reexecute: bool | None = None) -> dict[str, tuple]:
    """``n_live`` live-system experiments (first: the queue takes the oldest first), then
    ``n_runs`` run-file experiments cycling through the demo runs, half re-executed on the demo
    KG (all, or none, with ``reexecute``). Returns {id: the key of its CLI evaluation}."""
    keys: dict[str, tuple] = {}
    for i in range(n_live):
        keys[st.create(dataset="demo", run_name=f"live-{i}", profile="kgqa", kg="demo", system_url=system_url,
                       system_protocol="gerbil")] = ("live",)
    shas = {r: st.put_file((DEMO / "runs" / f"{r}.json").read_bytes()) for r in RUNS}
    for i in range(n_runs):
        run, again = RUNS[i % 3], (i // 3) % 2 == 1 if reexecute is None else reexecute
        keys[st.create(dataset="demo", run_name=run, run_file=shas[run], run_filename=f"{run}.json", profile="kgqa",
                       kg="demo", options={"reexecute": again})] = (run, again)
    return keys


def cli_scores(keys: set[tuple], system_url: str | None) -> dict[tuple, dict]:
    """The aggregate one CLI evaluation (``kgqa.evaluate``, the call ``kgqa evaluate`` makes) of
    each kind of experiment gives, NaN as the store writes it (null)."""
    kg = registry.available_kgs()["demo"]
    out = {}
    for key in keys:
        if key == ("live",):
            ev = kgqa.evaluate("demo", kg=kg, system=system_url, protocol="gerbil")
        else:
            run, reexecute = key
            ev = kgqa.evaluate("demo", str(DEMO / "runs" / f"{run}.json"), kg=kg, reexecute=reexecute)
        out[key] = {k: (v if isinstance(v, float) and math.isfinite(v) else None) if v is not None else None
                    for k, v in ev.aggregate.items()}
    return out


def wait_all(url: str, ids: list[str], timeout: float = 600.0, every: float = 0.2) -> list:
    """The experiments once every one is done."""
    deadline = time.monotonic() + timeout
    wanted = set(ids)
    with Store(url) as st:
        while True:  # one query a poll (the open experiments), not one per experiment
            if not wanted & {e.id for e in st.unfinished()}:
                return [st.get(i, results=False) for i in ids]
            if time.monotonic() > deadline:
                exps = [st.get(i, results=False) for i in ids]
                raise AssertionError(f"not done within {timeout} s: {[(e.id, e.status) for e in exps if not e.done]}")
            time.sleep(every)


def owner_pid(e) -> int | None:
    return int(e.claimed_by.split(":")[1]) if e.claimed_by else None


def orphans(kids: list[int], wait_s: float = 30.0) -> list[int]:
    """The processes of ``kids`` still alive ``wait_s`` seconds on (killed then: an orphan
    is counted, never left running)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and [p for p in kids if _alive(p)]:
        time.sleep(0.05)
    left = [p for p in kids if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    return left
