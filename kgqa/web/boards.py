"""A leaderboard's significance tests, computed off the request path (issue 39).
The same process computes a finished experiment's page data for the server
(:meth:`kgqa.web.views.Views.precompute_page`).

A leaderboard marks, among its top :data:`TESTED` experiments, which beat which significantly
on the headline measure (paired tests of every pair, Holm-adjusted; :func:`significance`).
Those tests read every top experiment's per-question results and cost seconds on a busy
machine, so no page request computes them: :class:`BoardTests` runs them in a process of its
own (below the server's priority, so pages keep the CPU) once per set of top experiments,
keyed by what the tests depend on: the headline measure and the ids of the top, in rank order
(finished experiments never change, so a result stays right for its key; boards ranking the
same experiments share it), when the first page of a new top is asked for or as soon as an
experiment finishes on a server that evaluates (:meth:`kgqa.web.views.Views.warm_board`).
Until the current top's result is in, the page shows the last result computed for that
board, saying so and when, or none, and reloads itself: never a number of another top
unlabelled.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from kgqa.analyze.letters import system_letters
from kgqa.store import Experiment, runner
from kgqa.web.jobs import open_store, stop_pool, worker_context, worker_setup

RESAMPLES = 2_000  # bootstrap / randomization resamples on pages (seeded; the CLI's default is 10,000)
TESTED = 12  # leaderboards test the top TESTED experiments pairwise (all pairs grow quadratically)
RETRY_S = 10.0  # a failed computation is tried again by a request at most this often


def unique_names(exps: list[Experiment]) -> list[str]:
    """Run names, with the id's start added where two experiments share one."""
    names = [e.run_name for e in exps]
    return [f"{n} ({e.id[:6]})" if names.count(n) > 1 else n for n, e in zip(names, exps)]


def renamed(ev: Any, name: str) -> Any:
    return replace(ev, run=name)


def significance(top: list[Experiment], evaluations: list[Any], headline: str | None) -> dict[str, Any]:
    """Letters and the comparison with the best among ``top`` (their ``evaluations``) on
    ``headline``, by experiment id: ``letters`` id -> (own letter, letters it beats),
    ``vs_best`` id -> {p, significant, test}; ``note``: why they could not be computed."""
    letters: dict[str, Any] = {}
    vs_best: dict[str, Any] = {}
    note = ""
    if len(top) >= 2 and headline:
        names = unique_names(top)
        ids = dict(zip(names, (e.id for e in top)))
        evals = [renamed(ev, name) for ev, name in zip(evaluations, names)]
        try:
            cmp = runner.compare(evals, measures=[headline], resamples=RESAMPLES)
            m = cmp.measures[0] if cmp.measures else None
        except ValueError as err:
            m, note = None, str(err)
        if m is not None:
            own = system_letters(cmp.systems)
            best = cmp.systems[0]
            for c in m.comparisons:
                if best in (c.system_a, c.system_b):
                    other = c.system_b if c.system_a == best else c.system_a
                    vs_best[ids[other]] = {"p": c.p_holm.get(c.primary),
                                           "significant": c.significant and c.better == best, "test": c.primary}
            letters = {ids[s]: (own[s], m.letters[s]) for s in cmp.systems}
    return {"letters": letters, "vs_best": vs_best, "note": note}


def tests_in_worker(url: str, ids: tuple[str, ...], headline: str | None) -> dict[str, Any]:
    """:func:`significance` of the experiments ``ids`` of store ``url``, in a worker process."""
    store = open_store(url)
    top = [store.get(i) for i in ids]
    if any(e is None or e.status != "finished" for e in top):  # deleted meanwhile: the board has a new top
        return {"letters": {}, "vs_best": {}, "note": "an experiment of this top was deleted"}
    return significance(top, [e.evaluation() for e in top], headline)


@dataclass(frozen=True)
class Tested:
    """A board's tests for one top (``ids``), computed at ``at`` (ISO, UTC)."""

    ids: tuple[str, ...]
    result: dict[str, Any]
    at: str


class BoardTests:
    """The significance tests of the leaderboards of ``store``, each computed once per top in
    a worker process (``memory_mb``: its address-space cap, as the experiment workers').

    A computation is keyed by what its result depends on, and by nothing else: the headline
    measure and the ids of the top experiments, in rank order (a finished experiment's results
    never change; :data:`RESAMPLES` and the seed are fixed). So boards that rank the same
    experiments (a frozen board and the live one before anything new finished, the organiser's
    view and a participant's) share one computation. The result holds letters and p-values
    only, never per-question data, so sharing it shows a hidden-gold view nothing more; the
    per-question outcomes it compares are read in the worker process and stay there."""

    def __init__(self, store: Any, memory_mb: float = 0.0):
        self.store = store
        self.memory_mb = memory_mb
        self._done: dict[tuple, Tested] = {}  # (headline, ids) -> its tests
        self._last: dict[tuple, Tested] = {}  # board -> the tests computed last for it
        self._pending: dict[tuple, set[tuple]] = {}  # (headline, ids) being computed -> the boards waiting
        self._failed: dict[tuple, tuple[float, str]] = {}  # key -> (when, why)
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.RLock()  # a done callback may run in the submitting thread
        self._idle = threading.Condition(self._lock)  # notified as each computation ends
        self._stopping = False
        #: computations started (one per key; a test counts them)
        self.started = 0

    def get(self, board: tuple, headline: str | None, top: list[Experiment]) -> tuple[Tested | None, bool]:
        """The tests of ``board`` (dataset, profile, frozen-at) for its current ``top``:
        (its tests, False) when computed; else (the last tests computed for the board or None,
        True) and the computation is started (unless the same one runs already)."""
        ids = tuple(e.id for e in top)
        key = (headline, ids)
        with self._lock:
            got = self._done.get(key)
            if got is None and (len(top) < 2 or not headline):  # nothing to test: no process needed
                got = self._keep(key, {"letters": {}, "vs_best": {}, "note": ""})
            if got is not None:
                self._last[board] = got
                return got, False
            last = self._last.get(board)
            failed = self._failed.get(key)
            if failed is not None and time.monotonic() - failed[0] < RETRY_S:
                note = f"the significance tests could not be computed ({failed[1]}); they are tried again shortly"
                return Tested(ids, {"letters": {}, "vs_best": {}, "note": note}, _now()), False
            if key in self._pending:
                self._pending[key].add(board)
            elif not self._stopping:
                self._pending[key] = {board}
                self._start(key)
        return last, True

    def _keep(self, key: tuple, result: dict[str, Any], boards: set[tuple] = frozenset()) -> Tested:
        """Record ``result`` for ``key``, the last result of ``boards`` (under the lock)."""
        got = Tested(key[1], result, _now())
        if len(self._done) > 256:
            self._done.clear()  # computed again at worst
        self._done[key] = got
        for b in boards:
            self._last[b] = got
        self._failed.pop(key, None)
        return got

    def submit(self, fn: Any, *args: Any) -> Future:
        """``fn(*args)`` in the process (started on first use; a fresh one after it broke).
        Raises RuntimeError once the server stops."""
        with self._lock:
            if self._stopping:
                raise RuntimeError("the server is stopping")
            if self._pool is not None and getattr(self._pool, "_broken", False):
                pool, self._pool = self._pool, None
                threading.Thread(target=stop_pool, args=(pool,), daemon=True).start()
            if self._pool is None:
                self._pool = ProcessPoolExecutor(1, mp_context=worker_context(), initializer=worker_setup,
                                                 initargs=(self.memory_mb, os.getpid(), self.store.url))
            return self._pool.submit(fn, *args)

    def _start(self, key: tuple) -> None:
        try:
            fut = self.submit(tests_in_worker, self.store.url, key[1], key[0])
            self.started += 1
        except Exception as err:  # a broken pool: a fresh one next time
            self._pool = None
            self._pending.pop(key, None)
            self._idle.notify_all()
            self._failed[key] = (time.monotonic(), f"{type(err).__name__}: {err}")
            return
        fut.add_done_callback(lambda f: self._finished(key, f))

    def settled(self, timeout: float | None = None) -> bool:
        """Wait until no computation is running (False: still one after ``timeout`` s)."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._pending, timeout)

    def _finished(self, key: tuple, fut: Future) -> None:
        with self._lock:
            boards = self._pending.pop(key, set())
            self._idle.notify_all()
            if fut.cancelled():
                return
            err = fut.exception()
            if err is None:
                self._keep(key, fut.result(), boards)
                return
            self._failed[key] = (time.monotonic(), f"{type(err).__name__}: {err}")

    def shutdown(self) -> None:
        with self._lock:
            self._stopping = True
            pool, self._pool = self._pool, None
        stop_pool(pool)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
