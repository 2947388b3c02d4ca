"""Experiments evaluated in worker processes (``kgqa web --workers N``, one by default).

Each experiment runs :func:`kgqa.store.runner.run_experiment` in a process of its own pool
(started by :func:`worker_context`, so the server's threads are never forked): scoring and
executing never hold the server's GIL, so pages stay responsive while experiments run. The
worker opens the store by URL and records progress, the result or the failure there, as the
CLI does.

Jobs survive a crash (issue 39). The store is the queue: a worker first takes the
experiment's lease (:meth:`kgqa.store.Store.claim`, a compare-and-set on its row naming the
worker's host and pid) and renews it while it evaluates (a heartbeat thread); it records
only while it holds the lease. So no experiment is evaluated twice, whichever servers and
workers run at once, and none is lost:

- a server that stops (Ctrl-C, SIGTERM) ends its workers and gives their leases back: the
  next start resumes every queued and running experiment, none failed for the stop;
- a worker that dies (``kill -9``, the system's out-of-memory killer) breaks its pool: the
  server builds a fresh pool and queues the same experiments again; the dead worker's
  experiment is retried, and fails (naming how its worker ended) only after its worker was
  lost :data:`MAX_LOSSES` times on it;
- a server that dies (``kill -9``): its workers notice their parent is gone
  (``PR_SET_PDEATHSIG`` on Linux, and a watch of the server's pid) and exit; the restarted
  server takes over their leases at once (their processes are gone);
- a live system's answers are journalled in the store as they arrive
  (:class:`kgqa.store.journal.StoreJournal`): an experiment taken over after a kill asks only
  the questions not answered yet;
- a store that cannot be reached: workers wait for it (:func:`kgqa.store.runner.wait_for_store`),
  and the server's watch thread queues whatever no live worker holds once it is back.

Each worker's address space can be capped (``--worker-memory-mb``): running out of it is a
``MemoryError`` the experiment fails with, saying so.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

try:
    import resource
except ImportError:  # pragma: no cover - not on Windows
    resource = None

from sqlalchemy.exc import DBAPIError

from kgqa import lazy
from kgqa.model.urlguard import UrlRule
from kgqa.store import Store, StoreError, runner
from kgqa.store.store import LEASE_S, ImmutableError, LostClaim, owner_id
from kgqa.store.worker import (
    MAX_LOSSES, WORKER_MODULES, Heartbeat, die_with, lost_message, process_context,
)

_STORES: dict[str, Store] = {}


def run_in_worker(url: str, eid: str, kgs: dict[str, str], timeout: float, system_url: str | None = None,
                  kg_url: str | None = None, lost: str | None = None, url_rule: UrlRule | None = None) -> str:
    """The body of one job, in a worker process: the store opened once per process;
    ``system_url`` / ``kg_url`` the live system's / SPARQL endpoint's URL with its credentials
    (never stored); ``lost``: how the worker last evaluating it ended (a job queued again
    after its pool broke); ``url_rule``: what every request of the job may reach (each redirect
    hop). Returns what became of it: ``finished``, ``failed``, ``held`` (a
    live worker has it, or it is done) or ``lost`` (another worker took it over)."""

    store = open_store(url)
    owner = owner_id()
    claim = store.claim(eid, owner)
    if claim is None:
        return "held"
    if lost and claim.lost_from and claim.attempts >= MAX_LOSSES:
        store.fail(eid, lost_message(claim.attempts, lost), owner=owner)
        return "failed"
    beat = Heartbeat(store, eid, owner)
    beat.start()
    try:
        ok = runner.run_experiment(store, eid, kgs=kgs, timeout=timeout, system_url=system_url, kg_url=kg_url,
                                   owner=owner, url_rule=url_rule, takeover=claim.lost_from is not None)
    except LostClaim:
        return "lost"
    finally:
        beat.stop()
    return "finished" if ok else "failed"


def _init(memory_mb: float = 0.0, server_pid: int | None = None, store_url: str | None = None) -> None:
    worker_setup(memory_mb, server_pid, store_url)


def open_store(url: str) -> Store:
    """The worker process's store for ``url`` (opened once per process)."""
    store = _STORES.get(url)
    if store is None:
        store = _STORES[url] = Store(url)
    return store


def worker_setup(memory_mb: float = 0.0, server_pid: int | None = None, store_url: str | None = None) -> None:
    """What every worker process of the server does first: ignore Ctrl-C (the server stops its
    workers itself), run below the server's priority (pages stay responsive while workers parse
    and score), cap its address space at ``memory_mb`` MB (0: no cap), and end when the
    server does (:func:`die_with`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # threads before the memory cap: a thread may not start under it (its stack and state need
    # memory the cap no longer grants), and a start that fails that way can hang
    Heartbeat.ensure_thread()
    if server_pid:
        die_with(server_pid)
    try:
        os.nice(5)
    except OSError:
        pass
    if memory_mb and memory_mb > 0:
        if resource is None:  # not on Windows: no memory cap there
            return
        # one BLAS thread: OpenBLAS reserves buffers per thread and aborts the process when it
        # cannot (instead of a MemoryError the experiment fails with)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        # and loaded before the cap: OpenBLAS reserves its buffers when it loads, and a load
        # under the cap ends the process ("Memory allocation still failed") instead of raising
        lazy.numpy()
        if store_url:  # and the store, read once: recording a failure never needs memory the cap took
            open_store(store_url).get("")

        cap = int(memory_mb * 1024 * 1024)
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


#: why a server without workers (``--workers 0``) fails an experiment whose URL had credentials
EXTERNAL_CREDENTIALS = (
    "this server's experiments are evaluated by kgqa worker processes, which read everything they ask from "
    "the store, and the store never keeps the credentials of a URL: name a system or endpoint URL without "
    "credentials, or start kgqa web with --workers 1 or more to evaluate it in the server")


class _Stopping(Exception):
    """The server is stopping: nothing more is queued."""


class Jobs:
    """Experiments of ``store`` evaluated in ``workers`` processes (0: none here; ``kgqa
    worker`` processes on the store take them, :mod:`kgqa.store.worker`). ``refuse(e)``: why
    this server must not run a stored experiment any more (None: run it), asked before each
    run (a resumed experiment may name a system URL this server was not started to ask).
    ``finished(eid)``: called (in a pool's thread) when a worker here finished experiment
    ``eid`` (the server starts its leaderboard's tests then)."""

    def __init__(self, store: Store, kgs: dict[str, str], *, workers: int = 1, timeout: float = 30.0,
                 refuse: Callable[[Any], str | None] = lambda e: None, memory_mb: float = 0.0,
                 url_rule: UrlRule | None = None, finished: Callable[[str], None] | None = None):
        self.store = store
        self.finished = finished
        self.url_rule = url_rule
        self.kgs = dict(kgs)
        self.workers = max(0, workers)
        self.timeout = timeout
        self.refuse = refuse
        self.memory_mb = memory_mb
        self._pool: ProcessPoolExecutor | None = None
        self._procs: dict[int, Any] = {}  # pid -> Process of the current pool (their exit codes)
        self._queued: dict[str, tuple[str | None, str | None]] = {}  # eid -> its URLs as given
        self._lock = threading.RLock()
        self._renew_lock = threading.Lock()
        self._stopping = threading.Event()
        self._watch: threading.Thread | None = None

    def _get_pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._stopping.is_set():  # no fresh pool once the server stops (it would outlive it)
                raise _Stopping
            if self._pool is None:
                self._pool = ProcessPoolExecutor(self.workers, mp_context=worker_context(), initializer=_init,
                                                 initargs=(self.memory_mb, os.getpid(), self.store.url))
                self._procs = {}
            return self._pool

    def start(self) -> None:
        """Watch the store (every third of the lease) for experiments no live worker holds:
        left by a worker or server that died, or added while the store was away."""
        if self._watch is None and self.workers:
            self._watch = threading.Thread(target=self._watch_store, name="kgqa-jobs-watch", daemon=True)
            self._watch.start()

    def _watch_store(self) -> None:
        while not self._stopping.wait(LEASE_S / 3):
            try:
                self.resume()
            except (DBAPIError, StoreError):
                continue  # the store is away: asked again next time

    def submit(self, eid: str, system_url: str | None = None, kg_url: str | None = None) -> None:
        """Evaluate ``eid`` in a worker; ``system_url`` / ``kg_url``: its live system's / SPARQL
        endpoint's URL as given, with the credentials the store does not keep (handed to the
        worker, held nowhere else)."""
        e = self.store.get(eid, results=False)
        why = self.refuse(e) if e is not None else None
        if not why and not self.workers and e is not None and e.withheld_message():
            why = EXTERNAL_CREDENTIALS
        if why:
            self._fail(eid, why)
            return
        if not self.workers:
            return  # left in the store for the kgqa worker processes
        with self._lock:
            if eid in self._queued or self._stopping.is_set():
                return
            self._queued[eid] = (system_url, kg_url)
        self._send(eid)

    def _send(self, eid: str, lost: str | None = None) -> None:
        try:
            self._submit(eid, lost)
        except _Stopping:
            pass  # the experiment stays open: the next start resumes it

    def _submit(self, eid: str, lost: str | None) -> None:
        system_url, kg_url = self._queued[eid]
        job = (run_in_worker, self.store.url, eid, self.kgs, self.timeout, system_url, kg_url, lost, self.url_rule)
        for attempt in range(2):
            with self._lock:
                pool = self._get_pool()
                try:
                    fut = pool.submit(*job)
                    self._procs.update(getattr(pool, "_processes", None) or {})
                    break
                except (RuntimeError, BrokenProcessPool):  # broken meanwhile: a fresh one
                    if attempt:
                        raise
            self._renew(pool)  # outside the lock: ending the pool joins its manager thread
        fut.add_done_callback(lambda f: self._done(eid, f, pool))

    def _done(self, eid: str, fut: Future, pool: ProcessPoolExecutor) -> None:
        if self._stopping.is_set() or fut.cancelled():
            return
        err = fut.exception()
        if isinstance(err, BrokenProcessPool):  # a worker died: a fresh pool, the job queued again
            # (from a thread of its own: this callback runs in the broken pool's manager thread,
            # which ending the pool joins)
            threading.Thread(target=self._requeue, args=(eid, pool), name="kgqa-jobs-requeue", daemon=True).start()
            return
        with self._lock:
            self._queued.pop(eid, None)
        if err is None:
            if fut.result() == "finished" and self.finished is not None:
                self._announce(eid)
            return
        if isinstance(err, (DBAPIError, StoreError, LostClaim)):  # the store is away, or another worker has it
            print(f"kgqa web: experiment {eid}: left for later: {type(err).__name__}: {err}", file=sys.stderr)
            return
        print(f"kgqa web: experiment {eid}: worker failed: {type(err).__name__}: {err}", file=sys.stderr)
        self._fail(eid, f"internal error: the evaluation process failed ({type(err).__name__}: {err})")

    def _announce(self, eid: str) -> None:
        try:
            self.finished(eid)  # type: ignore[misc]
        except Exception as err:  # a page computes what the hook would have: nothing lost
            print(f"kgqa web: experiment {eid}: after it finished: {type(err).__name__}: {err}", file=sys.stderr)

    def _requeue(self, eid: str, pool: ProcessPoolExecutor) -> None:
        try:
            lost = self._renew(pool)
            if not self._stopping.is_set():
                self._send(eid, lost.get(eid))
        except (DBAPIError, StoreError) as err:  # the store is away: the watch thread queues it once it is back
            with self._lock:
                self._queued.pop(eid, None)
            print(f"kgqa web: experiment {eid}: left for later: {type(err).__name__}: {err}", file=sys.stderr)

    def _renew(self, pool: ProcessPoolExecutor) -> dict[str, str]:
        """Replace the broken ``pool`` (once, whichever job notices first). Returns, for each
        experiment whose worker died (rather than being ended by the broken pool), how it
        ended; the leases of the workers the pool ended are given back."""
        with self._renew_lock:
            with self._lock:
                if self._pool is not pool:
                    return getattr(pool, "_kgqa_lost", {})
                procs, self._pool = dict(self._procs), None
            stop_pool(pool)
            pool._kgqa_lost = self._lost(procs)  # type: ignore[attr-defined]  (the pool's other jobs read it)
            return pool._kgqa_lost  # type: ignore[attr-defined]

    def _lost(self, procs: dict[int, Any]) -> dict[str, str]:
        """{experiment: how its worker ended} for the ended worker processes ``procs`` that held
        a lease; the workers ended by the broken pool itself give theirs back."""
        host = socket.gethostname()
        lost: dict[str, str] = {}
        for pid, p in procs.items():
            code = p.exitcode
            if code == -signal.SIGTERM:  # ended by the broken pool, not lost
                self._release([pid])
                continue
            how = f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit status {code}"
            for e in self.store.unfinished():
                if e.claimed_by and e.claimed_by.startswith(f"{host}:{pid}:"):
                    lost[e.id] = how
        return lost

    def _release(self, pids: list[int]) -> None:
        host = socket.gethostname()
        try:
            self.store.release(prefixes=[f"{host}:{pid}:" for pid in pids])
        except (DBAPIError, StoreError):
            pass  # the next server takes the leases over (their processes are gone)

    def _fail(self, eid: str, message: str) -> None:
        try:
            self.store.fail(eid, message)
        except (ImmutableError, KeyError):
            pass

    def resume(self) -> int:
        """Queue the experiments no live worker holds: left pending or running by a previous
        server (stopped, killed) or by a worker that died."""
        n = 0
        if not self.workers:  # the kgqa worker processes take them
            return 0
        for e in self.store.claimable():
            if e.id not in self._queued:
                self.submit(e.id)
                n += 1
        return n

    def shutdown(self) -> None:
        """Stop at once: queued experiments stay pending, running ones are ended and their
        leases given back (both resume on the next start)."""
        self._stopping.set()
        with self._lock:
            pool, self._pool = self._pool, None
            pids = list(self._procs)
        stop_pool(pool)
        self._release(pids)


def worker_context() -> Any:
    """How the server starts its worker processes (experiments, upload checks): as ``kgqa
    worker`` does (:func:`kgqa.store.worker.process_context`), a fork server started fresh on
    Linux, so the server's threads are never forked."""
    return process_context(WORKER_MODULES)


def stop_pool(pool: ProcessPoolExecutor | None) -> None:
    """End ``pool`` at once: queued work is cancelled and its processes are terminated, idle ones
    too (``shutdown(wait=False)`` alone left them running after the server had exited)."""
    if pool is None:
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(5)
        if p.is_alive():
            p.kill()
            p.join()
    pool.shutdown(wait=True)  # its manager thread sees the ended processes and releases the queues
