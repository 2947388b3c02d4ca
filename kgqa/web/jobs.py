"""Experiments evaluated in worker processes (``kgqa web --workers N``, one by default).

Each experiment runs :func:`kgqa.store.runner.run_experiment` in a process of its own pool
(started by :func:`worker_context`, so the server's threads are never forked): scoring and
executing never hold the server's GIL, so pages stay responsive while experiments run. The
worker opens the store by URL and records progress, the result or the failure there, as the
CLI does. A worker that dies (killed for memory) fails its experiment with a message instead
of leaving it "running".
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from kgqa.store import Store
from kgqa.model.urlguard import UrlRule

_STORES: dict[str, Store] = {}


def run_in_worker(url: str, eid: str, kgs: dict[str, str], timeout: float, system_url: str | None = None,
                  kg_url: str | None = None, url_rule: UrlRule | None = None) -> bool:
    """The body of one job, in a worker process: the store opened once per process;
    ``system_url`` / ``kg_url`` the live system's / SPARQL endpoint's URL with its credentials
    (never stored); ``url_rule``: what every request of the job may reach (each redirect hop)."""
    from kgqa.store import runner

    store = _STORES.get(url)
    if store is None:
        store = _STORES[url] = Store(url)
    return runner.run_experiment(store, eid, kgs=kgs, timeout=timeout, system_url=system_url, kg_url=kg_url,
                                 url_rule=url_rule)


def _init() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:  # below the server process: pages stay responsive while workers parse and score
        os.nice(5)
    except OSError:
        pass  # the server ends its workers itself


class Jobs:
    """Experiments of ``store`` evaluated in ``workers`` processes. ``refuse(e)``: why this
    server must not run a stored experiment any more (None: run it), asked before each run (a
    resumed experiment may name a system URL this server was not started to ask)."""

    def __init__(self, store: Store, kgs: dict[str, str], *, workers: int = 1, timeout: float = 30.0,
                 refuse: Callable[[Any], str | None] = lambda e: None, url_rule: UrlRule | None = None):
        self.store = store
        self.url_rule = url_rule
        self.kgs = dict(kgs)
        self.workers = max(1, workers)
        self.timeout = timeout
        self.refuse = refuse
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=worker_context(), initializer=_init)
        return self._pool

    def submit(self, eid: str, system_url: str | None = None, kg_url: str | None = None) -> None:
        """Evaluate ``eid`` in a worker; ``system_url`` / ``kg_url``: its live system's / SPARQL
        endpoint's URL as given, with the credentials the store does not keep (handed to the
        worker, held nowhere else)."""
        e = self.store.get(eid, results=False)
        why = self.refuse(e) if e is not None else None
        if why:
            self._fail(eid, why)
            return
        job = (run_in_worker, self.store.url, eid, self.kgs, self.timeout, system_url, kg_url, self.url_rule)
        try:
            fut = self._get_pool().submit(*job)
        except RuntimeError:  # a broken pool (a worker was killed): a fresh one
            self._pool = None
            fut = self._get_pool().submit(*job)
        fut.add_done_callback(lambda f: self._done(eid, f))

    def _done(self, eid: str, fut: Future) -> None:
        if fut.cancelled():
            return
        err = fut.exception()
        if err is not None:
            print(f"kgqa web: experiment {eid}: worker failed: {type(err).__name__}: {err}", file=sys.stderr)
            self._fail(eid, f"internal error: the evaluation process ended unexpectedly ({type(err).__name__}; "
                            "out of memory?)")
            if "Broken" in type(err).__name__:
                self._pool = None

    def _fail(self, eid: str, message: str) -> None:
        from kgqa.store.store import ImmutableError, StoreError

        try:
            self.store.fail(eid, message)
        except (ImmutableError, KeyError):
            pass
        except StoreError as e:  # disk full, database gone: one line in the server's log
            print(f"kgqa web: experiment {eid}: {e}", file=sys.stderr)

    def resume(self) -> int:
        """Re-queue experiments a previous server left pending or running (kill -9, restart)."""
        n = 0
        for e in self.store.unfinished():
            self.submit(e.id)
            n += 1
        return n

    def shutdown(self) -> None:
        """Stop at once: queued experiments stay pending, running ones are ended (both resume
        on the next start)."""
        pool, self._pool = self._pool, None
        stop_pool(pool)


#: what the server's worker processes import before their first job (see worker_context)
WORKER_MODULES = ["kgqa.load", "kgqa.store.runner", "kgqa.api", "kgqa.score.evaluate"]


def worker_context() -> Any:
    """How the server starts its worker processes (experiments, upload checks). On Linux a fork
    server: one process started fresh (the server's threads are never forked) imports
    :data:`WORKER_MODULES` once, and each worker is forked from it, ready, instead of being a
    fresh interpreter importing them again (spawned: about a second of CPU each). Elsewhere,
    spawned."""
    import multiprocessing

    if not sys.platform.startswith("linux"):
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(WORKER_MODULES)
    return ctx


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
