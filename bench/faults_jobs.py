"""The fault suite's job rows (issue 39): a stop or crash of the web server or of any of its
workers, and eight processes creating one store, against real ``kgqa web`` processes and a
slow live system on loopback. Each row counts experiments lost or failed for the fault,
questions asked twice (an experiment evaluated twice asks every question again), processes
left behind, and compares every score with the CLI's evaluation of the same system. Called by
``bench/faults.py`` (``--only jobs``).

Run alone: ``python bench/faults.py --only jobs`` (some 5 minutes on 2 cores).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for p in (str(REPO), str(REPO / "tests")):
    if p not in sys.path:
        sys.path.insert(0, p)

from kgqa.load import registry  # noqa: E402
from kgqa.store import Store  # noqa: E402
from kgqa.store import runner  # noqa: E402
from webjobs import (  # noqa: E402
    N_QUESTIONS, asked, children, client, finished, poll, running_worker, server, slow_system, submit,
)
from webserver import _alive, descendants  # noqa: E402

Row = Callable[[str, str, str, str, bool], None]
DEMO = registry.PACKAGE_DIR / "demo" / "data"
EXPECTED = "0 lost or failed, 0 evaluated twice, 0 orphans, scores = CLI"
AT_KILL = 8  # questions one cut experiment may ask again (see _scenario)


def jobs_rows(row: Row, tmp: Path, data: Path) -> None:
    cli = _cli_scores(tmp)
    for name, fault in (("kill -9 of the experiment worker mid-run", _kill_worker),
                        ("SIGTERM of the server mid-run, then a restart", _stop_server(signal.SIGTERM)),
                        ("Ctrl-C (SIGINT to the server and its workers) mid-run, then a restart",
                         _stop_server(signal.SIGINT)),
                        ("kill -9 of the server mid-run, then a restart", _kill_server)):
        d = tmp / f"jobs-{len(list(tmp.glob('jobs-*')))}"
        d.mkdir()
        try:
            observed, ok = _scenario(d, fault, cli)
        except Exception as err:  # noqa: BLE001 - a row that broke says so
            observed, ok = f"{type(err).__name__}: {err}", False
        row("jobs", name, EXPECTED, observed, ok)
    _checker_row(row, tmp)
    _store_creation_row(row, tmp)


def _cli_scores(tmp: Path) -> dict:
    """The aggregate of the CLI's evaluation of the slow system (its own process of it)."""
    with slow_system(tmp, latency=0.0) as system:
        inp = runner.ExperimentInputs(dataset="demo", run=None, run_name="cli", kg=str(DEMO / "kg.ttl"),
                                      system_url=f"http://127.0.0.1:{system.port}/", system_protocol="gerbil")
        return runner.evaluate_inputs(inp).evaluation.aggregate


def _scenario(d: Path, fault, cli: dict) -> tuple[str, bool]:
    with slow_system(d) as system:
        srv = server(d).start()
        try:
            with client(srv) as c:
                ids = submit(c, system, 3)
            orphans = fault(srv, ids)
            with server(d):
                exps = finished(d / "exp.sqlite", ids)
        finally:
            srv.stop()
        n_asked = asked(system)
    with Store(d / "exp.sqlite") as st:
        aggs = [st.get(e.id, results=False).aggregate for e in exps]
    bad = [e for e in exps if e.status != "finished"]
    # questions a cut run may ask again: in flight (the live client's concurrency, 4) and answered
    # while the store journal's last write ran (as bench_workers.AT_KILL); an experiment
    # evaluated twice asks all N_QUESTIONS again, more than the allowance of all three together
    twice = max(0, n_asked - N_QUESTIONS * len(exps) - AT_KILL * len(exps))
    same = all(a == cli for a in aggs)
    observed = (f"{len(exps) - len(bad)}/{len(exps)} finished, {len(bad)} failed, {twice} evaluated twice "
                f"({n_asked} questions asked for {len(exps)} x {N_QUESTIONS}), {orphans} orphans, "
                f"scores {'=' if same else '!='} CLI")
    return observed, not bad and twice == 0 and orphans == 0 and same


def _kill_worker(srv, ids) -> int:
    _eid, pid = running_worker(srv.store, ids)
    os.kill(pid, signal.SIGKILL)
    finished(srv.store, ids)  # on the same server: the pool is rebuilt, the job retried
    return 0


def _stop_server(sig: int):
    def fault(srv, ids) -> int:
        running_worker(srv.store, ids)
        kids = descendants(srv.proc.pid)
        for p in [srv.proc.pid, *kids]:  # as a terminal's Ctrl-C: the whole foreground group
            if sig == signal.SIGTERM and p != srv.proc.pid:
                continue
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
        srv.proc.wait(timeout=60)
        return _orphans(kids, srv)
    return fault


def _kill_server(srv, ids) -> int:
    running_worker(srv.store, ids)
    kids = descendants(srv.proc.pid)
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    return _orphans(kids, srv)


def _orphans(kids: list[int], srv) -> int:
    """The server's processes still alive 30 s after it ended (then killed)."""
    try:
        poll(lambda: not [p for p in kids if _alive(p)], timeout=30)
    except AssertionError:
        pass
    left = [p for p in kids if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    srv.proc = None
    srv._logf.close()
    return len(left)


def _checker_row(row: Row, tmp: Path) -> None:
    d = tmp / "jobs-checker"
    d.mkdir()
    with server(d) as srv, client(srv) as c:
        c.post("/new", data={"csrf": c.csrf, "dataset": "demo", "profile": "kgqa"},
               files={"run_file": ("bad.json", b"{not json", "application/json")})
        checkers = [p for p in descendants(srv.proc.pid) if p not in children(srv.proc.pid)]
        for p in checkers:
            os.kill(p, signal.SIGKILL)
        good = c.post("/new", data={"csrf": c.csrf, "dataset": "demo", "profile": "kgqa"},
                      files={"run_file": ("strong.json", (DEMO / "runs" / "strong.json").read_bytes(),
                                          "application/json")})
    row("jobs", f"kill -9 of the upload checkers ({len(checkers)}), then a good upload", "HTTP 303 (accepted)",
        f"HTTP {good.status_code}", good.status_code == 303)


def _create(path: str, q) -> None:
    try:
        st = Store(path)
        q.put(("ok", st.create(dataset="demo", run_name="r", profile="kgqa", system_url="http://x.example/")))
    except Exception as err:  # noqa: BLE001 - counted by the row
        q.put(("error", f"{type(err).__name__}: {err}"))


def _store_creation_row(row: Row, tmp: Path, rounds: int = 5) -> None:
    ctx = multiprocessing.get_context("spawn")
    errors, stored = [], 0
    for r in range(rounds):
        path = str(tmp / f"jobs-race-{r}.sqlite")
        q = ctx.Queue()
        procs = [ctx.Process(target=_create, args=(path, q)) for _ in range(8)]
        for p in procs:
            p.start()
        got = [q.get(timeout=120) for _ in procs]
        for p in procs:
            p.join()
        errors += [g[1] for g in got if g[0] != "ok"]
        with Store(path) as st:  # each of the round's 8 processes opened the new store and recorded one
            stored += st.count()
        with sqlite3.connect(path) as con:
            errors += [f"integrity: {r[0]}" for r in con.execute("PRAGMA integrity_check") if r[0] != "ok"]
    row("jobs", f"8 processes create one new SQLite store at once ({rounds} rounds)",
        f"{8 * rounds}/{8 * rounds} opened and recorded, integrity ok",
        f"{8 * rounds - len(errors)}/{8 * rounds} opened, {stored} recorded"
        + (f"; first error: {errors[0][:120]}" if errors else ""), not errors and stored == 8 * rounds)
