"""Evaluation workers that take experiments from the store (``kgqa worker``, issue 39).

The store is the queue. A worker process asks it for the oldest open experiment nobody holds
(:meth:`kgqa.store.Store.claim_next`: a compare-and-set on the row, read ``FOR UPDATE SKIP
LOCKED`` on PostgreSQL), renews the lease while it evaluates (:class:`Heartbeat`) and records
only while it holds it; an idle worker asks again with backoff (:data:`IDLE_MAX_S` at most).
So ``kgqa web --workers 0`` (pages only) and any number of ``kgqa worker`` processes on any
number of machines share one PostgreSQL store, and:

- a worker stopped with Ctrl-C or SIGTERM ends its evaluating processes and gives their leases
  back (the experiments stay open, and the next worker takes them, none failed for the stop);
- a worker killed (``kill -9``, the out-of-memory killer) leaves its lease: a worker on the
  same machine takes it at once (the holder's process is gone), one elsewhere once it lapses
  (:data:`~kgqa.store.store.LEASE_S`, 30 s); a live system is then asked only the questions
  not in the experiment's journal, which is in the store (:class:`kgqa.store.journal.StoreJournal`),
  so a worker on any machine resumes it; an experiment whose worker was lost
  :data:`MAX_LOSSES` times fails, saying so;
- a store that goes away (a PostgreSQL restart or outage, a full disk) is waited out: an idle
  worker keeps asking with backoff, a busy one records the result once it is back
  (:func:`kgqa.store.runner.wait_for_store`). An outage longer than the lease lapses every
  lease, but none is taken for :data:`~kgqa.store.store.AWAY_GRACE_S` after a worker found the
  store away: the holders renew theirs first (their heartbeat tries every second while the
  store is away) and keep their experiments; should another worker take one over all the same,
  the first still journals the answers it holds, which the new owner reads.

:func:`serve_workers` is the supervisor ``kgqa worker`` runs: ``processes`` evaluating
processes (:func:`worker_loop`), each restarted when it dies, all ending with it.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait as wait_any
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.exc import DBAPIError

from kgqa.load.formats import FORMAT_MODULES
from kgqa.model.urlguard import UrlRule, resolve_addresses
from kgqa.store import runner
from kgqa.store.store import LEASE_S, Claim, LostClaim, Store, StoreError, owner_id

#: a worker lost this many times on one experiment (its process killed, its machine gone)
#: fails it, naming how the worker ended
MAX_LOSSES = 3

#: the longest pause (s) between two asks of an idle worker (``KGQA_WORKER_IDLE_S``)
IDLE_MAX_S = float(os.environ.get("KGQA_WORKER_IDLE_S") or 2.0)

#: what the worker processes import before their first job (forked ready from one process): what
#: an evaluation imports on first use (every dataset format, the executor, the live-system client,
#: the scorer's measures and analyses, numpy), else each new process's first experiment paid ~110 imports (0.2 s of
#: CPU, 1 s on a busy machine), once per worker process: what 3 workers started together pay
#: at once
WORKER_MODULES = ["kgqa.load", "kgqa.store.runner", "kgqa.api", "kgqa.score.evaluate", *FORMAT_MODULES,
                  "kgqa.execute.executor", "kgqa.execute.engine_findings", "kgqa.score.answer_measures",
                  "kgqa.analyze.characteristics", "kgqa.analyze.engine_dependence", "kgqa.analyze.breakdown",
                  "kgqa.model.labels", "kgqa.execute.live.client", "numpy"]


def lost_message(times: int, how: str) -> str:
    """Why an experiment failed whose worker process was lost ``times`` times."""
    why = ""
    if "SIGKILL" in how:
        why = (" (SIGKILL: sent by an operator, or by the system's out-of-memory killer when the machine ran out "
               "of memory; kgqa web --worker-memory-mb caps each worker so that such a run fails with "
               "'out of memory' instead)")
    return f"the evaluation process ended abruptly {times} times while evaluating this experiment: {how}{why}"


class Heartbeat:
    """Renews a worker's lease every third of :data:`~kgqa.store.store.LEASE_S` while it
    evaluates (a store that is away is skipped and tried again). One daemon thread per process
    beats for every job that process holds; start it (:meth:`ensure_thread`) before a memory
    cap applies, since a thread may not be able to start under the cap (its stack and thread
    state need memory the cap may no longer grant)."""

    _jobs: dict[int, "Heartbeat"] = {}
    _lock = threading.Lock()
    _thread: threading.Thread | None = None
    _pid = 0

    def __init__(self, store: Store, eid: str, owner: str):
        self.store, self.eid, self.owner = store, eid, owner

    @classmethod
    def ensure_thread(cls) -> None:
        """The process's beating thread (started once per process; a forked child starts its own)."""
        with cls._lock:
            if cls._pid != os.getpid() or cls._thread is None or not cls._thread.is_alive():
                cls._jobs = {}
                cls._pid = os.getpid()
                cls._thread = threading.Thread(target=cls._run, name="kgqa-heartbeat", daemon=True)
                cls._thread.start()

    def start(self) -> None:
        self.ensure_thread()
        with self._lock:
            self._jobs[id(self)] = self

    def stop(self) -> None:
        with self._lock:
            self._jobs.pop(id(self), None)

    @classmethod
    def _run(cls) -> None:
        pause = LEASE_S / 3
        while not threading.Event().wait(pause):
            with cls._lock:
                beats = list(cls._jobs.values())
            pause = LEASE_S / 3
            for b in beats:
                try:
                    if not b.store.heartbeat(b.eid, b.owner):
                        b.stop()  # taken over: the next write of the run raises LostClaim
                except (DBAPIError, StoreError, MemoryError):
                    # the store is away: tried again every second, so the lease is renewed as soon as it
                    # is back (within the grace other workers give it, kgqa.store.store.AWAY_GRACE_S)
                    pause = min(pause, 1.0)


def die_with(server_pid: int) -> None:
    """End this process when the process ``server_pid`` (its server or supervisor) ends,
    however it ends (``kill -9`` included): on Linux the kernel kills it when its parent (a
    fork server, which exits with the server) dies (``PR_SET_PDEATHSIG``); everywhere a
    daemon thread watches the server's pid once a second."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:  # the parent died before the call
            os._exit(1)

    def watch() -> None:
        while True:
            threading.Event().wait(1.0)
            try:
                os.kill(server_pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass

    threading.Thread(target=watch, name="kgqa-server-watch", daemon=True).start()


@dataclass
class WorkerSettings:
    """What a worker offers: ``kgs`` (KG name -> ``--kg`` value, as ``kgqa web --kg``), the
    default per-query ``timeout``, and ``allowed_url_hosts``: the hosts a stored live system
    or endpoint URL may name even when loopback or private (as ``kgqa web --allowed-url-host``;
    otherwise public hosts only, every redirect hop checked)."""

    kgs: dict[str, str] = field(default_factory=dict)
    timeout: float = 30.0
    allowed_url_hosts: list[str] = field(default_factory=list)

    def url_rule(self) -> UrlRule:
        """Public hosts, the listed ones and the hosts of the worker's own endpoint KGs."""
        own = {urlsplit(v).hostname or "" for v in self.kgs.values() if str(v).startswith(("http://", "https://"))}
        hosts = {h.strip().strip("[]").lower() for h in [*self.allowed_url_hosts, *own] if h.strip()}
        return UrlRule(public_only=True, allowed_hosts=frozenset(hosts))


def refusal(e: Any, rule: UrlRule) -> str | None:
    """Why this worker will not ask the URLs stored experiment ``e`` names (None: it will)."""
    for url, what in ((e.system_url, "system URL"), (e.kg if not e.kg_file else None, "kg endpoint")):
        if not url or not url.startswith(("http://", "https://")):
            continue
        parts = urlsplit(url)
        host = parts.hostname or ""
        try:
            addrs = resolve_addresses(host, parts.port or (443 if parts.scheme == "https" else 80))
        except (OSError, UnicodeError, ValueError):
            continue  # asked, and failed as the run says
        why = rule.refusal(host, addrs, True)
        if why:
            return (f"{what} {url}: {why}; this worker asks public hosts only (start kgqa worker with "
                    f"--allowed-url-host {host} to let it ask this one)")
    return None


def run_claimed(store: Store, claim: Claim, settings: WorkerSettings, *, system_url: str | None = None,
                kg_url: str | None = None, url_rule: UrlRule | None = None, lost: str | None = None) -> str:
    """Evaluate the experiment of ``claim`` (the lease this process holds), renewing the lease
    meanwhile. ``lost``: how the worker last evaluating it ended, when known. Returns what
    became of it: ``finished``, ``failed`` or ``lost`` (another worker took it over)."""
    eid, owner = claim.eid, claim.owner
    if claim.lost_from and claim.attempts >= MAX_LOSSES:
        how = lost or (f"its worker ({claim.lost_from}) was killed, or its machine went away (its lease lapsed "
                       "or its process was gone)")
        store.fail(eid, lost_message(claim.attempts, how), owner=owner)
        return "failed"
    beat = Heartbeat(store, eid, owner)
    beat.start()
    try:
        ok = runner.run_experiment(store, eid, kgs=settings.kgs, timeout=settings.timeout, system_url=system_url,
                                   kg_url=kg_url, owner=owner, url_rule=url_rule,
                                   takeover=claim.lost_from is not None)
    except LostClaim:
        return "lost"
    finally:
        beat.stop()
    return "finished" if ok else "failed"


def work_once(store: Store, settings: WorkerSettings, rule: UrlRule) -> tuple[str, str] | None:
    """Take the next experiment of the queue and evaluate it: (its id, what became of it), or
    None when there was nothing to take. A store error propagates (the experiment, if any,
    stays open for the next worker)."""
    claim = store.claim_next(owner_id())
    if claim is None:
        return None
    e = store.get(claim.eid, results=False)
    why = refusal(e, rule) if e is not None else None
    if why:
        store.fail(claim.eid, why, owner=claim.owner)
        return claim.eid, "failed"
    return claim.eid, run_claimed(store, claim, settings, url_rule=rule)


def worker_loop(url: str, settings: WorkerSettings, say: Callable[[str], None], *,
                stopping: Callable[[], bool] = lambda: False) -> None:
    """The body of one evaluating process: take experiments until ``stopping()`` (or for
    ever), asking an empty queue or an absent store again with backoff (0.05 s doubling up
    to :data:`IDLE_MAX_S`); on PostgreSQL an idle process is woken at once when an experiment
    is queued (:meth:`~kgqa.store.Store.wait_for_work`)."""
    store: Store | None = None
    rule = settings.url_rule()
    pause, away = 0.05, False
    while not stopping():
        try:
            if store is None:
                store = Store(url)
            t0 = time.monotonic()
            got = work_once(store, settings, rule)
            if away:
                say("the store answers again")
            away = False
        except (DBAPIError, StoreError, LostClaim) as err:
            if not away:  # said once per outage
                say(f"the store does not answer; asking again with backoff: {type(err).__name__}: {str(err)[:200]}")
            got, away = None, True
            pause = max(pause, 0.5)
        if got is not None:
            say(f"experiment {got[0]} {got[1]} ({time.monotonic() - t0:.1f} s)")
            pause = 0.05
            continue
        if store is not None and not away and store.wait_for_work(pause):
            pause = 0.05  # an experiment was queued (PostgreSQL NOTIFY): take it now
            continue
        if store is None or away:
            time.sleep(pause)  # noqa: polling an absent store
        pause = min(pause * 2, IDLE_MAX_S)


def _process(url: str, settings: WorkerSettings, supervisor: int) -> None:
    """An evaluating process of :func:`serve_workers`: Ctrl-C is the supervisor's to handle,
    SIGTERM ends it at once (the supervisor gives its lease back), and it ends with the
    supervisor however that ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    Heartbeat.ensure_thread()
    die_with(supervisor)
    pid = os.getpid()

    def say(line: str) -> None:
        print(f"kgqa worker [{pid}]: {line}", file=sys.stderr, flush=True)

    worker_loop(url, settings, say)


#: The longest temporary folder a fork server's socket fits under: its path is the folder,
#: ``/pymp-XXXXXXXX/listener-XXXXXXXX`` (32 bytes) and a NUL, in the 108 bytes of an AF_UNIX address.
SOCKET_DIR_MAX = 75


def process_context(preload: list[str]) -> Any:
    """How worker processes start (``kgqa worker``'s and the web server's): on Linux a fork
    server that imports ``preload`` once, each worker forked from it ready (a spawned worker
    imports them again: about a second of CPU each); spawned elsewhere, and where the
    temporary folder's path is too long for the fork server's socket (a deep ``TMPDIR``: the
    fork server would fail with "AF_UNIX path too long")."""
    if not sys.platform.startswith("linux") or len(os.fsencode(tempfile.gettempdir())) > SOCKET_DIR_MAX:
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(preload)
    return ctx


def serve_workers(url: str, settings: WorkerSettings, *, processes: int = 1,
                  say: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True)) -> int:
    """``kgqa worker``: ``processes`` evaluating processes on the store at ``url`` until
    SIGINT or SIGTERM, each restarted when it dies (its experiment goes to the next worker);
    on the signal every process is ended and its lease given back. Returns how many leases
    were given back."""
    with Store(url) as st:  # opened (migrated) once here: a wrong URL is said before any process starts
        url, shown = st.url, repr(st)
    ctx = process_context(WORKER_MODULES)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    stop: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        stop.append(signum)
        try:
            os.write(wake_w, b"x")
        except OSError:
            pass

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    procs: dict[int, Any] = {}
    ended: list[int] = []
    try:
        say(f"kgqa worker: {processes} process(es) on {shown} (Ctrl-C to stop; leases are given back)")
        while not stop:
            for _ in range(processes - len(procs)):
                p = ctx.Process(target=_process, args=(url, settings, os.getpid()), daemon=False)
                p.start()
                procs[p.pid] = p
            _supervise(procs, wake_r, say, ended)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        given = _stop(list(procs.values()), url, ended)
        os.close(wake_r)
        os.close(wake_w)
    say(f"kgqa worker: stopped ({signal.Signals(stop[0]).name if stop else 'error'}); "
        f"{given} experiment(s) given back to the queue")
    return given


def _supervise(procs: dict[int, Any], wake: int, say: Callable[[str], None], ended: list[int]) -> None:
    """Wait until a process ends (said; a fresh one starts in its place) or a signal wakes the
    supervisor."""
    ready = wait_any([p.sentinel for p in procs.values()] + [wake])
    for pid, p in list(procs.items()):
        if p.sentinel in ready:
            p.join()
            code = p.exitcode
            how = f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit status {code}"
            say(f"kgqa worker: process {pid} ended ({how}); its experiment goes to the next worker, a fresh "
                "process starts")
            ended.append(pid)
            del procs[pid]
            time.sleep(0.5)  # noqa: not a crash loop at full speed


def _stop(procs: list[Any], url: str, ended: list[int]) -> int:
    """End ``procs`` (SIGTERM, then SIGKILL after 10 s) and give the leases of every process
    this supervisor started back (the live ones ended here, and those that ended before)."""
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(10)
        if p.is_alive():
            p.kill()
            p.join()
    host = socket.gethostname()
    pids = [p.pid for p in procs] + ended
    if not pids:
        return 0
    try:
        with Store(url) as st:
            return st.release(prefixes=[f"{host}:{pid}:" for pid in pids])
    except (DBAPIError, StoreError):
        return 0  # the store is away: their processes are gone, the next worker here takes them at once
