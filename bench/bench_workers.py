"""``kgqa worker`` on PostgreSQL (issue 39): throughput with 1 and 3 workers, and fault rows.

Real parts only: a private PostgreSQL cluster on a free loopback port (tests/pgserver.py), a
slow live system served by ``kgqa system serve`` (tests/slowqa.py, 0.2 s a question), real
``kgqa worker`` processes (one evaluating process each), experiments created in the store as
``kgqa web --workers 0`` creates them. Each fault row runs 3 workers on a fresh database with 9
experiments (3 live systems, 6 run files, half re-executed on the demo KG), injects the fault
mid-run, and counts: experiments not finished (lost or failed), experiments finished more
than once (each worker logs every experiment it finishes), processes left behind, questions
the live system was asked beyond once each (a killed run resumes from its journal), and
compares every score with one CLI evaluation (``kgqa.evaluate``) of the same inputs.

Throughput: 9 experiments queued for 1 and for 3 idle workers, two rows: latency-bound (live
systems answering in 1 s a question, ``--latency``: the workers mostly wait, so 3 workers
should finish close to 3 times as fast) and CPU-bound (run files re-executed on the demo KG: the
ratio is bounded by the cores free, and each worker's query engine already uses every core).
Each row gives the time, each experiment's own mean time (it grows when the workers compete
for the cores) and the mean load average during the run.

Rows: PostgreSQL restart; PostgreSQL outage (stopped 10 s, and 40 s: longer than the lease,
so every lease lapses, and the workers that hold them renew them before any other worker takes
one: kgqa.store.store.AWAY_GRACE_S); disk full and
freed (the database in a tablespace on an 48 MB tmpfs, filled mid-run, freed 10 s later:
needs root to mount, else the row says so); SIGINT (Ctrl-C to the worker's process group),
SIGTERM and kill -9 of a worker; kill -9 of one evaluating process of a worker.

Usage: ``python bench/bench_workers.py [--only throughput|faults] [--experiments N] [--latency S] [--row WORD]``
(some 8 minutes on 2 busy cores). Exit status 0 when every fault row passes.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for p in (str(REPO), str(REPO / "tests")):
    if p not in sys.path:
        sys.path.insert(0, p)

from kgqa.store import Store  # noqa: E402
from pgserver import PgServer, why_not  # noqa: E402
from webserver import descendants  # noqa: E402
from workerprocs import N_QUESTIONS, Worker, asked, cli_scores, create, finishes, orphans, slow_system, wait_all  # noqa: E402

LATENCY = 0.2
#: questions a cut run may ask again: in flight (the live client's concurrency, 4) and answered
#: while the store journal's last write ran
AT_KILL = 8
ROWS: list[tuple[str, str, str, bool]] = []
THROUGHPUT: list[tuple[str, ...]] = []
DISK_ROW = "disk full mid-run (tablespace on a 48 MB tmpfs), freed 10 s later"


def row(name: str, expected: str, observed: str, ok: bool) -> None:
    ROWS.append((name, expected, observed, ok))
    print(f"[{'PASS' if ok else 'FAIL'}] {name} -> {observed}", file=sys.stderr, flush=True)


class Bench:
    def __init__(self, pg: PgServer, system, tmp: Path):
        self.pg, self.system, self.tmp = pg, system, tmp
        self.n_db = 0
        self.cli: dict = {}
        self.rows: list[str] = []  # only the fault rows naming one of these words

    def database(self, tablespace: str | None = None) -> str:
        self.n_db += 1
        name = f"r{self.n_db}"
        self.pg.sql(f"CREATE DATABASE {name}" + (f" TABLESPACE {tablespace}" if tablespace else ""))
        return self.pg.url.rsplit("/", 1)[0] + f"/{name}"

    def folder(self) -> Path:
        d = self.tmp / f"run-{self.n_db}"
        d.mkdir(exist_ok=True)
        return d

    def scores(self, keys: dict) -> dict:
        todo = set(keys.values()) - set(self.cli)
        if todo:
            self.cli.update(cli_scores(todo, self.system.url))
        return self.cli

    # ------------------------------------------------------------------ throughput

    def throughput(self, n_workers: int, n: int, system, live: bool) -> dict:
        """``n_workers`` workers, started and idle, finish ``n`` experiments (all asking
        ``system`` when ``live``, else all run files re-executed on the demo KG) from when they
        are queued: the seconds, each experiment's own time (from the workers' logs: it grows
        when the workers compete for the cores) and the load average meanwhile."""
        url = self.database()
        with Store(url):
            pass  # the schema, before the workers start
        workers = [Worker(url, self.folder()) for _ in range(n_workers)]
        try:
            for w in workers:  # ready: its evaluating process started (fork server, tracker, process)
                while len(w.processes()) < 3:
                    time.sleep(0.05)
            time.sleep(3.0)  # noqa: their first asks of the empty queue (then they wait for a NOTIFY)
            load = LoadSampler()
            t0 = time.monotonic()
            with Store(url) as st:
                keys = create(st, system.url, n_runs=0 if live else n, n_live=n if live else 0, reexecute=True)
            exps = wait_all(url, list(keys), every=0.05)
            took = time.monotonic() - t0
            loadavg = load.stop()
        finally:
            for w in workers:
                w.stop()
        bad = [e for e in exps if e.status != "finished"]
        if bad:
            raise RuntimeError(f"{len(bad)} not finished: {bad[0].error}")
        times = [float(m.group(1)) for w in workers for m in re.finditer(r"finished \(([\d.]+) s\)", w.output())]
        return {"s": took, "per_exp": sum(times) / max(1, len(times)), "load": loadavg}

    # ------------------------------------------------------------------ faults

    def fault_row(self, name: str, fault, *, tablespace: str | None = None) -> None:
        if self.rows and not any(w in name for w in self.rows):
            return
        try:
            observed, ok = self._scenario(fault, tablespace)
        except Exception as err:  # noqa: BLE001 - a row that broke says so
            observed, ok = f"{type(err).__name__}: {str(err)[:300]}", False
        row(name, "9/9 finished, 0 failed, 0 twice, 0 orphans, scores = CLI", observed, ok)

    def _scenario(self, fault, tablespace: str | None) -> tuple[str, bool]:
        url = self.database(tablespace)
        before = asked(self.system)
        with Store(url) as st:
            keys = create(st, self.system.url, n_runs=6, n_live=3)
        ids = list(keys)
        workers = [Worker(url, self.folder()) for _ in range(3)]
        orphans: list[int] = []
        try:
            _running(url, ids)
            orphans += fault(workers, url) or []
            exps = wait_all(url, ids)
        finally:
            for w in workers:
                if w.proc.poll() is None:
                    orphans += w.stop()
        n_asked = asked(self.system) - before
        cli = self.scores(keys)
        bad = [e for e in exps if e.status != "finished"]
        twice = sum(n - 1 for n in finishes(workers).values() if n > 1)
        unlogged = [i for i in ids if finishes(workers)[i] == 0]
        same = all(e.aggregate == cli[keys[e.id]] for e in exps if e.status == "finished")
        extra = n_asked - 3 * N_QUESTIONS
        crashes = sum(w.output().count("Traceback (most recent call last)") for w in workers)
        observed = (f"{len(exps) - len(bad)}/{len(exps)} finished, {len(bad)} failed"
                    + (f" ({bad[0].error[:120]})" if bad else "")
                    + f", {twice} twice, {len(orphans)} orphans, scores {'=' if same else '!='} CLI, "
                      f"{extra} questions asked again, longest experiment {_longest(workers):.0f} s"
                    + (f", {crashes} tracebacks in the workers' logs" if crashes else ""))
        ok = (not bad and twice == 0 and not unlogged and not orphans and same and 0 <= extra <= 3 * AT_KILL
              and not crashes)
        return observed, ok


class LoadSampler:
    """The 1-minute load average, sampled every second until :meth:`stop` (its mean)."""

    def __init__(self) -> None:
        self.samples = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return sum(self.samples) / len(self.samples)


def throughput_row(bench: "Bench", label: str, n: int, system, live: bool) -> None:
    one = bench.throughput(1, n, system, live)
    three = bench.throughput(3, n, system, live)
    THROUGHPUT.append((label, f"1 worker {one['s']:.1f} s ({60 * n / one['s']:.1f}/min, {one['per_exp']:.1f} s each)",
                       f"3 workers {three['s']:.1f} s ({60 * n / three['s']:.1f}/min, {three['per_exp']:.1f} s each)",
                       f"ratio {one['s'] / three['s']:.2f}",
                       f"load average {one['load']:.1f} / {three['load']:.1f} on {os.cpu_count()} CPUs"))
    print("throughput:", *THROUGHPUT[-1], file=sys.stderr, flush=True)


def _longest(workers: list[Worker]) -> float:
    """The longest time an experiment took (from the workers' logs): a fault waited out shows."""
    times = [float(m.group(1)) for w in workers for m in re.finditer(r"finished \(([\d.]+) s\)", w.output())]
    return max(times, default=0.0)


def _running(url: str, ids: list[str], timeout: float = 300.0) -> None:
    """Until a live experiment has been asked for a while (the fault then lands mid-run)."""
    deadline = time.monotonic() + timeout
    with Store(url) as st:
        while time.monotonic() < deadline:
            for e in (st.get(i, results=False) for i in ids[:3]):
                if e.status == "running" and e.claimed_by and (e.progress_note or "").startswith("asking"):
                    time.sleep(1.0)  # some questions answered
                    return
            time.sleep(0.05)
    raise RuntimeError("no experiment started")


def _busy_worker(url: str, workers: list[Worker]) -> tuple[Worker, int]:
    """(a worker evaluating an experiment, the pid of its evaluating process)."""
    with Store(url) as st:
        for _ in range(600):
            for e in st.unfinished():
                if e.claimed_by and not e.done:
                    pid = int(e.claimed_by.split(":")[1])
                    for w in workers:
                        if pid in descendants(w.pid):
                            return w, pid
            time.sleep(0.05)
    raise RuntimeError("no busy worker")


def restart(bench: Bench):
    def fault(workers, url):
        bench.pg.stop()
        bench.pg.start()
    return fault


def outage(bench: Bench, seconds: float):
    def fault(workers, url):
        bench.pg.stop()
        time.sleep(seconds)  # noqa: the outage itself
        bench.pg.start()
    return fault


def disk_full(tiny: Path, seconds: float):
    def fault(workers, url):
        filler = tiny / "filler"
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * (1 << 20))
                    f.flush()
            except OSError:
                pass
        time.sleep(seconds)  # noqa: the disk stays full meanwhile
        filler.unlink()
    return fault


def signal_worker(sig: int, group: bool = False):
    def fault(workers, url):
        w, _pid = _busy_worker(url, workers)
        kids = w.processes()
        if group:  # as a terminal's Ctrl-C: the whole foreground group
            os.killpg(w.pid, sig)
            w.proc.wait(60)
            w._fh.close()
            return orphans(kids)
        return w.signal(sig)
    return fault


def kill_process(workers, url):
    _w, pid = _busy_worker(url, workers)
    os.kill(pid, signal.SIGKILL)


def table(rows: list[tuple[str, str, str, bool]]) -> str:
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{'fault':<{w[0]}} | {'expected':<{w[1]}} | observed", "-" * (sum(w) + 20)]
    lines += [f"{a:<{w[0]}} | {b:<{w[1]}} | {c}  {'PASS' if ok else 'FAIL'}" for a, b, c, ok in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["throughput", "faults"], default=None)
    ap.add_argument("--experiments", type=int, default=9, help="experiments of each throughput run (a multiple "
                    "of 3: each of 3 workers gets as many)")
    ap.add_argument("--latency", type=float, default=1.0, help="seconds the live system takes per answer in the "
                    "latency-bound throughput row")
    ap.add_argument("--row", action="append", default=[], help="only the fault rows whose name contains this")
    args = ap.parse_args(argv)
    why = why_not()
    if why:
        print(f"bench_workers: {why}", file=sys.stderr)
        return 2
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="kgqa-bench-workers-"))
    print(f"load average at start: {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} CPUs", file=sys.stderr)
    with PgServer() as pg, slow_system(tmp, latency=LATENCY) as system:
        bench = Bench(pg, system, tmp)
        bench.rows = args.row
        if args.only in (None, "throughput"):
            n = args.experiments
            with slow_system(tmp, latency=args.latency) as slow:
                throughput_row(bench, f"latency-bound: {n} live systems ({N_QUESTIONS} questions, {args.latency} s an "
                                      "answer, 4 in flight)", n, slow, live=True)
            throughput_row(bench, f"CPU-bound: {n} run files re-executed on the demo KG", n, system, live=False)
        if args.only in (None, "faults"):
            bench.fault_row("PostgreSQL restart mid-run", restart(bench))
            bench.fault_row("PostgreSQL outage mid-run (stopped 10 s, started again)", outage(bench, 10))
            bench.fault_row("PostgreSQL outage mid-run longer than the 30 s lease (stopped 40 s)", outage(bench, 40))
            if not args.row or any(w in DISK_ROW for w in args.row):
                tiny = pg.tiny_disk(48)
                if tiny is None:
                    row(DISK_ROW, "finished after the disk is freed",
                        "not run: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)", True)
                else:
                    bench.fault_row(DISK_ROW, disk_full(tiny, 10), tablespace="tiny1")
            bench.fault_row("SIGINT (Ctrl-C) to a worker's process group mid-run", signal_worker(signal.SIGINT, True))
            bench.fault_row("SIGTERM of a worker mid-run", signal_worker(signal.SIGTERM))
            bench.fault_row("kill -9 of a worker mid-run", signal_worker(signal.SIGKILL))
            bench.fault_row("kill -9 of a worker's evaluating process mid-run", kill_process)
    print(f"load average at end: {os.getloadavg()[0]:.1f} (1 min)", file=sys.stderr)
    for r in THROUGHPUT:
        print("throughput: " + " | ".join(r))
    if ROWS:
        print()
        print(table(ROWS))
    return 0 if all(r[3] for r in ROWS) else 1


if __name__ == "__main__":
    raise SystemExit(main())
