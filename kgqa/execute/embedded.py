"""The embedded engine: pyoxigraph, with real timeouts, in worker processes.

pyoxigraph cannot cancel a running query, so queries never run in the calling process. An
:class:`EmbeddedEngine` keeps ``workers`` processes (default: the usable CPU cores), each
holding the KG:

- an **in-memory** KG (RDF files) is loaded once in the parent and the workers are forked
  from it, so they share its memory copy-on-write and start in milliseconds (where ``fork``
  is unavailable, each spawned worker loads the files itself);
- a **persistent store** directory is opened read-only (``Store.read_only``) by each worker.

``execute_many`` feeds the queries to idle workers; a query still running ``timeout`` seconds
after it was sent is answered ``TIMEOUT`` and its worker is killed (SIGKILL) and replaced by a
fresh one, so the run carries on. A worker that dies (e.g. out of memory) yields
``EXEC_ERROR`` and is replaced too. A query nested deeper than pyoxigraph's recursive parser
can take (:func:`kgqa.execute.nesting.nesting_problem`) is answered ``EXEC_ERROR`` "query too
deeply nested" without reaching a worker: definitive, so cached.

Safety: workers only ever call ``Store.query``, which cannot execute SPARQL Update; an
in-memory worker holds a private copy-on-write copy, a disk worker a read-only handle, so no
query can change the KG. Queries refused by :func:`kgqa.execute.sandbox.refusal` (Update
keywords, and ``SERVICE`` unless ``allow_service``) never reach a worker. On Linux, unless
``allow_service``, each worker also moves itself into empty user and network namespaces
(``unshare``), so even a query that slipped through could not reach the network
(``network_isolated`` says whether that succeeded).

``info.version`` is the pyoxigraph version, plus ``/rocksdb`` for a persistent store (its
iteration order differs from the in-memory store's, so ties under ``ORDER BY ... LIMIT`` can
resolve differently: CK25 q29 and q46) and ``/default-graph`` when the union default graph is off.

Queries see the union of all graphs as their default graph (``union_default_graph=True``,
what Virtuoso does without ``default-graph-uri``), so files loaded with ``--graph`` are
queryable without ``GRAPH``; ``FROM`` clauses still select graphs explicitly.

Result conversion (see :mod:`kgqa.execute.engine` for the outcome contract): SELECT ->
:class:`TableAnswer` over the projected variables; ASK -> :class:`BooleanAnswer`; CONSTRUCT /
DESCRIBE -> a table over ``subject, predicate, object``. Literals keep their datatype
(``xsd:string`` becomes no datatype) and language tag; an RDF 1.2 triple term becomes a
literal holding its N-Triples text.
"""

from __future__ import annotations

import ctypes
import faulthandler
import multiprocessing as mp
import warnings
import multiprocessing.connection as mpc
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyoxigraph as ox
from rich.console import Console

from kgqa.execute.engine import (DEFAULT_MAX_RESULT_BYTES, DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT,
                                 DEFAULT_WORKER_MEMORY, GRAPH_VARIABLES, EngineInfo, format_bytes,
                                 too_large_message, too_many_rows_message, transient)
from kgqa.execute.kgfile import Manifest, load_files, read_manifest
from kgqa.execute.nesting import nesting_problem
from kgqa.sparql.lexer import decode_codepoint_escapes
from kgqa.execute.sandbox import check, refusal
from kgqa.model.answer import BooleanAnswer, TableAnswer
from kgqa.model.gcpause import paused
from kgqa.model.outcome import Outcome, Status
from kgqa.model.problems import InputError
from kgqa.model.terms import RDF_LANGSTRING, XSD_STRING, BNode, IRI, Literal
from kgqa.execute.policy import refused_outcome

try:
    import resource
except ImportError:  # pragma: no cover - not on Windows: no memory limit there
    resource = None

#: Queries queued on a worker (sent in one message) before anything is known of their speed.
PIPELINE = 16
#: While a worker's queries are fast, its queue holds about this many seconds of work (at
#: most :data:`MAX_PIPELINE` queries): enough that it never waits for a busy parent.
QUEUE_SECONDS = 0.02
MAX_PIPELINE = 1024
#: Query text (characters) sent to a worker that has not answered everything yet: far below
#: the pipe's buffer, so the parent never blocks writing to a worker that is itself blocked
#: writing a large answer. A worker with an empty queue may get one query of any size. A
#: worker's queue is topped up once no more than half of this is left in it.
QUEUE_CHARS = 16384
#: An answer within this many seconds counts as fast (the worker may then get a queue).
FAST_QUERY = 0.01
#: A worker idle with nothing pending takes over the queue of a worker whose current query has
#: run this long.
STEAL_AFTER = 0.05

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_PR_SET_PDEATHSIG = 1


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# --------------------------------------------------------------------------- worker side


def _cell(t: Any):
    """Compact wire form of a term: an IRI is its string, a literal ``(value, datatype,
    language)``, a blank node ``(id,)``; see :func:`_decode`."""
    cls = type(t)
    if cls is ox.NamedNode:
        return t.value
    if cls is ox.Literal:
        lang = t.language
        if lang:
            return (t.value, None, lang)
        dt = t.datatype.value
        return (t.value, None if dt in (XSD_STRING, RDF_LANGSTRING) else dt, None)
    if cls is ox.BlankNode:
        return (t.value,)
    if t is None:
        return None
    return (str(t), None, None)  # RDF 1.2 triple term


def _decode(c: Any):
    if c.__class__ is str:
        return IRI(c)
    if c is None:
        return None
    if len(c) == 3:
        return Literal(*c)
    return BNode(c[0])


def has_dataset_clause(query: str) -> bool:
    """True when ``query`` has a ``FROM`` or ``FROM NAMED`` clause, read as the sandbox reads it
    (codepoint escapes decoded, glued forms such as ``FROMex:g`` that pyoxigraph accepts)."""
    if "from" not in decode_codepoint_escapes(query).lower():
        return False
    v = check(query, allow_service=True, allow_update=True)
    # a refused dataset clause (FROM <file:...>) never runs; say True so nothing falls back to the union
    return v.refused or bool(v.from_graphs or v.from_named)


def _cell_size(c: Any) -> int:
    if c is None:
        return 1
    if c.__class__ is str:
        return len(c)
    return sum(len(x) for x in c if x) + 1


def evaluate(store: ox.Store, query: str, max_rows: int, union: bool = True,
             max_bytes: int | None = None) -> tuple:
    """Run one query on ``store`` and return a picklable result message: ``("table", vars,
    rows)`` (cells in the compact form of :func:`_cell`), ``("bool", value)``, ``("parse",
    message)``, ``("error", message)`` or ``("memory", message)``. Used by the workers (and
    by benchmarks to time the same conversion in-process).

    A query with ``FROM`` / ``FROM NAMED`` is evaluated on the dataset it names (the union
    default graph is not used for it: SPARQL 1.1 section 13.2), so ``FROM <file:///etc/passwd>``
    gives an empty default graph, not the whole KG. ``max_bytes`` caps the result's size (sum
    of the lengths of every cell's text): over it, the result is an error, never a truncated
    table."""
    try:
        res = store.query(query, use_default_graph_as_union=union and not has_dataset_clause(query))
        if isinstance(res, ox.QueryBoolean):
            return ("bool", bool(res))
        rows = []
        size = 0
        cap = max_bytes or 0
        if isinstance(res, ox.QuerySolutions):
            variables = tuple(v.value for v in res.variables)
            width = len(variables)
            for sol in res:
                if len(rows) >= max_rows:
                    return ("error", too_many_rows_message(max_rows))
                row = tuple(map(_cell, sol))  # a solution iterates over its values in the order of ``variables``
                if len(row) != width:  # never seen; the rows' width is relied on (see _table)
                    row = tuple(_cell(sol[i]) for i in range(width))
                if cap:
                    size += sum(map(_cell_size, row))
                    if size > cap:
                        return ("error", too_large_message(cap))
                rows.append(row)
            return ("table", variables, rows)
        for tr in res:  # QueryTriples
            if len(rows) >= max_rows:
                return ("error", too_many_rows_message(max_rows))
            row = (_cell(tr.subject), _cell(tr.predicate), _cell(tr.object))
            if cap:
                size += sum(map(_cell_size, row))
                if size > cap:
                    return ("error", too_large_message(cap))
            rows.append(row)
        return ("table", GRAPH_VARIABLES, rows)
    except SyntaxError as e:
        return ("parse", str(e.args[0]) if e.args else str(e))
    except MemoryError as e:
        return ("memory", f"MemoryError: {e}")
    except Exception as e:  # noqa: BLE001 - every engine failure is an outcome
        return ("error", f"{type(e).__name__}: {e}")


def _limit_memory(allowance: int | None) -> bool:
    """Cap this worker's address space (RLIMIT_AS) at what it maps now (the KG shared with
    the parent, the interpreter) plus ``allowance`` bytes. Best effort; True when set."""
    if not allowance:
        return False
    if resource is None:  # not on Windows
        return False
    try:
        with open("/proc/self/statm") as fh:
            vsize = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = vsize + int(allowance)
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        return True
    except (OSError, ValueError):
        return False


def _isolate_network() -> bool:
    """Move this (single-threaded, freshly forked) process into new user + network
    namespaces: afterwards it has only a down loopback interface. Best effort."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) == 0
    except Exception:  # noqa: BLE001
        return False


def _batch_scheduling() -> None:
    """Mark this worker as CPU-bound for the scheduler (Linux ``SCHED_BATCH``): the same share of
    CPU time as before, but waking up (a new batch of queries) it does not preempt the parent,
    which feeds the workers; on a machine with no core to spare, a parent preempted right after
    sending waited a whole time slice (milliseconds) while the workers ran dry. Best effort."""
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except (AttributeError, OSError):
        pass


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, 9)
        except Exception:  # noqa: BLE001
            pass


def _worker_main(conn, store, store_dir, files, graph, base, isolate, union, close, pdeathsig,
                 memory=None, max_bytes=None, progress=None) -> None:
    for c in close:  # other workers' pipe ends inherited through fork
        try:
            c.close()
        except OSError:
            pass
    if pdeathsig:
        _die_with_parent()
    try:  # an abort under the memory limit is reported by the parent, not dumped by faulthandler
        faulthandler.disable()
    except Exception:  # noqa: BLE001
        pass
    os.environ["RUST_BACKTRACE"] = "0"  # an allocation failure under the memory limit: one line, not 60
    try:  # Ctrl-C in a terminal reaches the whole process group: the parent handles it
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):
        pass
    _batch_scheduling()
    isolated = _isolate_network() if isolate else False
    try:
        if store is None:
            if store_dir is not None:
                store = ox.Store.read_only(str(store_dir))
            else:
                store, _ = load_files(files, graph, base=base)
    except Exception as e:  # noqa: BLE001
        conn.send(("failed", f"{type(e).__name__}: {e}"))
        return
    limited = _limit_memory(memory)
    conn.send(("ready", isolated, limited))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        queries, max_rows = msg  # a batch of queries (or one)
        if queries.__class__ is str:
            queries = (queries,)
        try:
            _answer_batch(conn, store, queries, max_rows, union, max_bytes, progress)
        except (BrokenPipeError, OSError):
            return


#: A worker sends the answers it has at the end of each batch, half-way through when no next
#: batch is waiting yet (so the parent sends one meanwhile), and after any query that ends this
#: many seconds after its previous sending (so a slow query's answer is not held back).
FLUSH_INTERVAL = 0.005


def _answer_batch(conn, store, queries, max_rows, union, max_bytes, progress) -> None:
    """Evaluate ``queries`` in order; answers go back as lists of ``(result, elapsed)``. Before
    each query the shared ``progress`` array gets (queries started so far, start time) and after
    it a start time of 0: the parent reads from it which query runs and since when, without a
    message per query (see ``EmbeddedEngine._running``)."""
    out = []
    last = time.monotonic()
    n = len(queries)
    half = n // 2 - 1 if n >= 4 else -1  # answers at half-way too: the parent sends the next batch meanwhile
    for k, query in enumerate(queries):
        if progress is not None:
            progress[0] += 1.0
            progress[1] = t0 = time.monotonic()
        else:
            t0 = time.monotonic()
        res = evaluate(store, query, max_rows, union, max_bytes)
        t1 = time.monotonic()
        if progress is not None:
            progress[1] = 0.0
        out.append((res, t1 - t0))
        if k == n - 1 or t1 - last >= FLUSH_INTERVAL or (k == half and not conn.poll(0)):
            conn.send(out)
            out = []
            last = time.monotonic()


# --------------------------------------------------------------------------- parent side


#: Signals a worker raises itself (an abort on allocation failure under its memory limit, a
#: crash): the query's own doing, final at once. Any other death (SIGKILL from the kernel's OOM
#: killer or a person, SIGTERM, ...) came from outside: the query is run once more on a fresh
#: worker and is final only when that fails too.
SELF_INFLICTED = frozenset({signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE})


def killed_from_outside(code: int | None) -> bool:
    """Whether a worker's exit code says it was killed by a signal from outside (None: the
    pipe broke and the exit code is not known yet, counted as such)."""
    return code is None or (code < 0 and -code not in SELF_INFLICTED)


class _Worker:
    __slots__ = ("proc", "conn", "ready", "jobs", "chars", "started", "fast", "isolated", "limited", "progress",
                 "answered", "avg")

    def __init__(self, ctx, kwargs: dict[str, Any], siblings: list["_Worker"]):
        parent_end, child_end = ctx.Pipe(duplex=True)
        fork = ctx.get_start_method() == "fork"
        close = [w.conn for w in siblings] + [parent_end] if fork else []
        pdeathsig = threading.current_thread() is threading.main_thread()
        # (queries started, start time of the running one or 0): written by the worker only
        self.progress = ctx.RawArray("d", 2)
        self.answered = 0  # answers received from this worker
        self.proc = ctx.Process(target=_worker_main, name="kgqa-oxigraph-worker", daemon=True,
                                args=(child_end, kwargs["store"] if fork else None, kwargs["store_dir"],
                                      kwargs["files"], kwargs["graph"], kwargs["base"], kwargs["isolate"],
                                      kwargs["union"],
                                      close, pdeathsig, kwargs["memory"], kwargs["max_bytes"], self.progress))
        self.proc.start()
        child_end.close()
        self.conn = parent_end
        self.ready = False
        self.jobs: deque[int] = deque()  # indices sent to this worker and not answered yet, in order
        self.chars = 0  # characters of query text in ``jobs`` (kept by EmbeddedEngine._run)
        self.started = 0.0  # when the batch was sent (used while the worker has not started it)
        self.fast = True  # its last answers came within FAST_QUERY seconds: queue several queries
        self.avg: float | None = None  # recent mean seconds per query (while fast)
        self.isolated = False
        self.limited = False

    def capacity(self) -> int:
        """How many queries this worker's queue may hold now."""
        if not self.fast:
            return 1
        if self.avg is None:
            return PIPELINE
        return max(2, min(MAX_PIPELINE, int(QUEUE_SECONDS / max(self.avg, 1e-6))))

    def running(self) -> tuple[int, float] | None:
        """(position in ``jobs``, start time) of the query the worker runs now, or None (between
        queries, idle, or sending answers). Read seqlock-style: the count, the start, the count."""
        p = self.progress
        c1 = p[0]
        st = p[1]
        c2 = p[0]
        if c1 != c2 or st == 0.0:
            return None
        pos = int(c1) - self.answered - 1
        return (pos, st) if 0 <= pos < len(self.jobs) else None

    def last_started(self) -> int | None:
        """Position in ``jobs`` of the query started last (running, or finished and not yet
        answered), or None when every started query was answered."""
        pos = int(self.progress[0]) - self.answered - 1
        return pos if 0 <= pos < len(self.jobs) else None

    @property
    def job(self) -> tuple[int, float] | None:
        """The query running now (index, start time), else the next one (index, send time), or None."""
        r = self.running()
        if r is not None:
            return self.jobs[r[0]], r[1]
        return (self.jobs[0], self.started) if self.jobs else None

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.join(2)
        except (OSError, ValueError, AssertionError):
            pass
        try:
            self.conn.close()
        except OSError:
            pass

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.proc.join(1)
        if self.proc.is_alive():
            self.kill()
        else:
            self.conn.close()


class EmbeddedEngine:
    """pyoxigraph in worker processes. Build one with :meth:`from_files` or
    :meth:`from_store`; use it as a context manager or call :meth:`close`."""

    kind = "oxigraph"

    def __init__(self, *, manifest: Manifest, store: ox.Store | None = None,
                 store_dir: str | Path | None = None, files: Sequence[str | Path] = (),
                 graph: str | None = None, workers: int | None = None, allow_service: bool = False,
                 isolate_network: bool | None = None, union_default_graph: bool = True,
                 start_method: str | None = None, startup_timeout: float = 300.0,
                 memory_limit: int | None = DEFAULT_WORKER_MEMORY,
                 max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES):
        if store is None and store_dir is None:
            raise ValueError("EmbeddedEngine needs an in-memory store or a store directory")
        self.manifest = manifest
        version = ox.__version__ + ("/rocksdb" if store_dir is not None else "") + \
            ("" if union_default_graph else "/default-graph")
        self._version = version
        self.info = EngineInfo(self.kind, version, manifest.fingerprint)
        self.allow_service = allow_service
        # None: the default cap; 0: no cap (as on the command line, "off")
        self.memory_limit = DEFAULT_WORKER_MEMORY if memory_limit is None else (memory_limit or None)
        self.max_result_bytes = DEFAULT_MAX_RESULT_BYTES if max_result_bytes is None else (max_result_bytes or None)
        self.workers = max(1, workers if workers is not None else usable_cores())
        self.startup_timeout = startup_timeout
        if start_method is None:
            start_method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        if start_method != "fork" and store_dir is None and not files:
            raise ValueError("without fork, an in-memory engine needs the RDF files to load in each worker")
        self._ctx = mp.get_context(start_method)
        self._kwargs = dict(store=store if store_dir is None else None, store_dir=store_dir,
                            files=[str(f) for f in files], graph=graph, base=manifest.base,
                            isolate=(not allow_service) if isolate_network is None else isolate_network,
                            union=union_default_graph, memory=self.memory_limit,
                            max_bytes=self.max_result_bytes)
        self._store = store  # kept alive for forking replacements
        self._lock = threading.RLock()
        self._pool: list[_Worker] = []
        self._closed = False
        self.restarts = 0
        self._start_pool()
        self.info = EngineInfo(self.kind, version, manifest.fingerprint, self.limits())
        self._warn_isolation()

    # ------------------------------------------------------------------ constructors

    def sibling(self, workers: int = 1) -> "EmbeddedEngine":
        """Another engine over this one's KG with ``workers`` workers of its own (forked from the
        same in-memory store, or opening the same store directory read-only), the same limits
        and isolation: queries run on it while this one runs others (a caller's background
        read-ahead). The caller closes it."""
        if self._closed:
            raise RuntimeError("engine is closed")
        kw = self._kwargs
        return EmbeddedEngine(manifest=self.manifest, store=self._store, store_dir=kw["store_dir"], files=kw["files"],
                              graph=kw["graph"], workers=workers, allow_service=self.allow_service,
                              isolate_network=kw["isolate"], union_default_graph=kw["union"],
                              start_method=self._ctx.get_start_method(), startup_timeout=self.startup_timeout,
                              memory_limit=self.memory_limit or 0, max_result_bytes=self.max_result_bytes or 0)

    @classmethod
    def from_files(cls, paths: Sequence[str | Path], graph: str | None = None, *, progress: bool = False,
                   base: str | None = None, **options: Any) -> "EmbeddedEngine":
        """Load RDF files into memory (see :func:`kgqa.execute.kgfile.load_files`)."""
        store, manifest = load_files(paths, graph, progress=progress, base=base)
        return cls(manifest=manifest, store=store, files=paths, graph=graph, **options)

    @classmethod
    def from_store(cls, directory: str | Path, **options: Any) -> "EmbeddedEngine":
        """Open a persistent store made by ``kgqa kg load --store`` read-only."""
        manifest = read_manifest(directory)
        return cls(manifest=manifest, store_dir=Path(directory), **options)

    # ------------------------------------------------------------------ pool

    @property
    def quads(self) -> int:
        return self.manifest.quads

    @property
    def network_isolated(self) -> bool:
        """True when every ready worker runs without network access."""
        ready = [w for w in self._pool if w.ready]
        return bool(ready) and all(w.isolated for w in ready)

    @property
    def memory_limited(self) -> bool:
        """True when every ready worker runs under its address-space limit."""
        ready = [w for w in self._pool if w.ready]
        return bool(ready) and all(w.limited for w in ready)

    def isolation_problem(self) -> str | None:
        """Why the workers are not network-isolated (None when they are, or when isolation was
        not asked for because SERVICE is allowed)."""
        if not self._kwargs["isolate"] or self.network_isolated:
            return None
        if not sys.platform.startswith("linux"):
            return f"worker network isolation needs Linux namespaces (this is {sys.platform})"
        return ("worker network isolation is unavailable: unshare(CLONE_NEWUSER|CLONE_NEWNET) failed "
                "(unprivileged user namespaces disabled, e.g. kernel.unprivileged_userns_clone=0 or a "
                "container seccomp profile); SERVICE stays refused by the sandbox")

    def limits(self) -> str:
        """The engine's safety settings as printed in execution signatures, e.g.
        ``net=isolated,mem=2GiB/worker,result=64MiB``."""
        if not self._kwargs["isolate"]:
            net = "allowed"
        else:
            net = "isolated" if self.network_isolated else "NOT-isolated"
        mem = (format_bytes(self.memory_limit).replace(" ", "") + "/worker") if self.memory_limited else "unlimited"
        return f"net={net},mem={mem},result={format_bytes(self.max_result_bytes).replace(' ', '')}"

    _warned: set = set()

    def _warn_isolation(self) -> None:
        reason = self.isolation_problem()
        if reason is not None and reason not in EmbeddedEngine._warned:
            EmbeddedEngine._warned.add(reason)  # once per process
            warnings.warn(f"kgqa: {reason}", RuntimeWarning, stacklevel=3)
            try:
                Console(stderr=True).print(f"[yellow]warning:[/] {reason}", highlight=False)
            except Exception:  # noqa: BLE001
                pass

    def _spawn(self) -> _Worker:
        return _Worker(self._ctx, self._kwargs, self._pool)

    def _start_pool(self) -> None:
        for _ in range(self.workers):
            self._pool.append(self._spawn())
        deadline = time.monotonic() + self.startup_timeout
        for w in self._pool:
            self._await_ready(w, deadline)

    def _await_ready(self, w: _Worker, deadline: float) -> None:
        if w.ready:
            return
        if not w.conn.poll(max(0.0, deadline - time.monotonic())):
            self.close()
            raise RuntimeError(f"oxigraph worker did not start within {self.startup_timeout:g} s")
        self._on_message(w)

    def _on_message(self, w: _Worker) -> Any:
        """Receive from ``w``; handles the start-up handshake. Returns the message, or
        raises EOFError when the worker died."""
        msg = w.conn.recv()
        if not w.ready:
            if msg[0] == "failed":
                where = self._kwargs["store_dir"] or ", ".join(self._kwargs["files"]) or "(memory)"
                self.close()
                raise InputError(str(where), f"cannot open the KG in a worker: {msg[1]}")
            w.ready = True
            w.isolated = bool(msg[1])
            w.limited = bool(msg[2]) if len(msg) > 2 else False
            return None
        return msg

    def _replace(self, w: _Worker) -> None:
        w.kill()
        i = self._pool.index(w)
        self._pool[i] = self._spawn()
        self.restarts += 1

    # ------------------------------------------------------------------ Engine

    def execute(self, query: str, timeout: float = DEFAULT_TIMEOUT, max_rows: int = DEFAULT_MAX_ROWS) -> Outcome:
        return self.execute_many([query], timeout=timeout, max_rows=max_rows)[0]

    def execute_many(self, queries: Sequence[str], timeout: float = DEFAULT_TIMEOUT,
                     max_rows: int = DEFAULT_MAX_ROWS,
                     progress: Callable[[int], None] | None = None,
                     on_outcome: Callable[[int, Outcome], None] | None = None) -> list[Outcome]:
        """Outcomes in input order; ``on_outcome(i, outcome)`` is called as each query
        finishes (the result cache commits from it, so an interrupted batch keeps its work)."""
        if self._closed:
            raise RuntimeError("engine is closed")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        results: list[Outcome | None] = [None] * len(queries)
        pending: deque[int] = deque()
        for i, q in enumerate(queries):
            reason = refusal(q, allow_service=self.allow_service)
            deep = nesting_problem(q) if reason is None else None
            if reason is not None or deep is not None:
                if deep is not None:
                    results[i] = Outcome(Status.EXEC_ERROR, None, deep, 0.0)  # definitive: cached
                else:
                    results[i] = refused_outcome(q, reason)
                if on_outcome is not None:
                    on_outcome(i, results[i])
                if progress is not None:
                    progress(1)
            else:
                pending.append(i)
        with self._lock, paused():  # answers are acyclic: no collection walks them while they pile up
            self._run(queries, pending, results, timeout, max_rows, progress, on_outcome)
        return results  # type: ignore[return-value]

    # long function: the worker-pool event loop: sends, replies, timeouts, deaths and retries act on the same pending/busy state
    def _run(self, queries, pending, results, timeout, max_rows, progress, on_outcome=None) -> None:
        """Feed ``pending`` (indices into ``queries``) to the workers until every one has an outcome.

        Each worker gets a short queue (up to :data:`PIPELINE` queries, sent in one message, while
        its queries take under :data:`FAST_QUERY` seconds, else one at a time), so it never waits
        for the parent between queries, and it sends its answers in groups (at the end of a batch,
        or :data:`FLUSH_INTERVAL` after its last sending). Which query a worker runs and since when
        is read from memory it shares with the parent, and ``timeout`` is measured against that:
        the running query is answered TIMEOUT (or, when the worker dies, EXEC_ERROR) and the worker
        replaced; the rest of its queue, answered or not, goes back to ``pending``. A worker idle
        with nothing pending takes over the not-yet-started queue of a worker whose query has run
        :data:`STEAL_AFTER` seconds (whichever answer comes first is kept)."""
        def finish(i: int, outcome: Outcome) -> None:
            if results[i] is not None:  # answered already (a queue taken over by another worker)
                return
            results[i] = outcome
            if on_outcome is not None:
                on_outcome(i, outcome)
            if progress is not None:
                progress(1)

        def release(w: _Worker) -> None:  # w is being replaced: its unanswered queue goes back to pending
            rest = []
            for j in w.jobs:
                holders[j] -= 1
                if results[j] is None and holders[j] == 0:
                    rest.append(j)
            w.jobs.clear()
            w.chars = 0
            pending.extendleft(reversed(rest))

        def take(w: _Worker, pos: int) -> int:  # remove and return the query at ``pos`` of w's queue
            i = w.jobs[pos]
            del w.jobs[pos]
            w.chars -= len(queries[i])
            holders[i] -= 1
            return i

        terms = _Terms()  # the batch's distinct result cells, decoded once
        holders: dict[int, int] = {}  # index -> how many worker queues hold it (2 after a takeover)
        stolen: set[int] = set()  # taken over from a worker's queue (that worker may still answer them)
        died: dict[int, int | None] = {}  # index -> exit code of the worker killed from outside while running it
        while True:
            now = time.monotonic()
            ready_workers = [w for w in self._pool if w.ready]
            for w in ready_workers:
                cap = w.capacity()
                if not pending or len(w.jobs) > cap // 2:
                    continue
                size = w.chars if w.jobs else 0
                if size > QUEUE_CHARS // 2:  # refilled once half of it is answered: fewer, larger batches
                    continue
                room = min(cap - len(w.jobs), -(-len(pending) // len(ready_workers)))  # its share of what is left
                chunk: list[int] = []
                mine: list[int] = []
                while pending and len(chunk) < room:
                    i = pending[0]
                    if results[i] is not None:
                        pending.popleft()
                        continue
                    n = len(queries[i])
                    if size + n > QUEUE_CHARS and (w.jobs or chunk):
                        break
                    pending.popleft()
                    if holders.get(i) and i in w.jobs:  # taken over from this very worker
                        mine.append(i)
                    else:
                        chunk.append(i)
                        size += n
                pending.extendleft(reversed(mine))
                if not chunk:
                    continue
                try:
                    w.conn.send((tuple(queries[i] for i in chunk), max_rows))
                except (OSError, ValueError):  # worker died while idle: retry elsewhere
                    pending.extendleft(reversed(chunk))
                    release(w)
                    self._replace(w)
                    continue
                if not w.jobs:
                    w.started = time.monotonic()
                w.jobs.extend(chunk)
                w.chars = size
                for i in chunk:
                    holders[i] = holders.get(i, 0) + 1
            busy = [w for w in self._pool if w.jobs]
            starting = [w for w in self._pool if not w.ready]
            if not busy and not pending:
                return
            running = {id(w): w.running() for w in busy}
            waits = [(r[1] if r is not None else now) + timeout - now for r in running.values()]
            if not pending and any(w.ready and not w.jobs for w in self._pool):
                for w in busy:
                    r = running[id(w)]
                    if r is None or r[0] + 1 >= len(w.jobs):
                        continue
                    if now - r[1] >= STEAL_AFTER:
                        for j in list(w.jobs)[r[0] + 1:]:
                            if results[j] is None and j not in stolen and holders[j] == 1:
                                stolen.add(j)
                                pending.append(j)
                    else:
                        waits.append(r[1] + STEAL_AFTER - now)
                if pending:
                    continue
            wait_for = max(0.0, min(waits)) if waits else self.startup_timeout
            ready = mpc.wait([w.conn for w in busy + starting], timeout=wait_for)
            ready_ids = {id(c) for c in ready}
            for w in list(busy + starting):
                if id(w.conn) not in ready_ids:
                    continue
                while True:
                    try:
                        msg = self._on_message(w)
                    except (EOFError, OSError):
                        if w.proc.is_alive():
                            w.proc.join(0.5)
                        code = w.proc.exitcode if not w.proc.is_alive() else None
                        pos = w.last_started()
                        retry = None
                        if pos is not None:  # the query it was running (or sending the answer of)
                            r = w.running()
                            start = r[1] if r is not None else w.started
                            i = take(w, pos)
                            if killed_from_outside(code) and not died.get(i):
                                died[i] = code  # a signal or the OOM killer: asked again on a fresh worker
                                retry = i
                            else:
                                finish(i, Outcome(Status.EXEC_ERROR, None, self._death_message(code, died.get(i)),
                                                  time.monotonic() - start))
                        elif not w.jobs and not w.ready:
                            raise RuntimeError(f"oxigraph worker failed to start (exit code {code})")
                        release(w)
                        if retry is not None:
                            pending.appendleft(retry)
                        self._replace(w)
                        break
                    if msg is not None:
                        slow = False
                        total = 0.0
                        for res, elapsed in msg:
                            if not w.jobs:
                                break
                            i = w.jobs.popleft()
                            w.chars -= len(queries[i])
                            holders[i] -= 1
                            w.answered += 1
                            slow = slow or elapsed >= FAST_QUERY
                            total += elapsed
                            if results[i] is None:  # else answered already (see finish)
                                finish(i, _outcome(res, elapsed, terms))
                        w.fast = not slow
                        if msg:
                            mean = total / len(msg)
                            w.avg = mean if w.avg is None or slow else (w.avg + mean) / 2
                        w.started = time.monotonic()
                    if not w.jobs or not w.conn.poll(0):
                        break
            now = time.monotonic()
            for w in list(self._pool):
                if not w.jobs:
                    continue
                r = w.running()
                if r is not None and now - r[1] >= timeout:
                    i = take(w, r[0])
                    release(w)
                    self._replace(w)
                    finish(i, Outcome(Status.TIMEOUT, None,
                                      f"timeout: query ran longer than {timeout:g} s and was stopped",
                                      now - r[1]))

    def _death_message(self, code: int | None, first: int | None | bool = False) -> str:
        """Why a query has no answer: its worker died (``first``: the exit code of an earlier
        death from outside while running the same query, when it was retried)."""
        again = "" if first is False else \
            f"; the failure repeats: its worker was killed before (exit code {first}) and the query was run again"
        if self.memory_limit is not None and self.memory_limited and code in (-6, 134, -11, -9, 1):  # abort on allocation failure, or killed
            return transient(f"memory limit: the query needed more than {format_bytes(self.memory_limit)} "
                             f"(query worker died, exit code {code}{again}); raise it with --worker-memory")
        return transient(f"query worker died (exit code {code}{again}); the query may have exhausted memory")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for w in self._pool:
            w.stop()
        self._pool.clear()
        self._store = None
        self._kwargs["store"] = None

    def __enter__(self) -> "EmbeddedEngine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


class _Terms(dict):
    """Terms decoded from the workers' wire form (:func:`_decode`), each distinct cell once per
    batch of queries: terms are immutable, so answers share them (a run's answers repeat the
    same IRIs). Starts afresh beyond :data:`TERM_CACHE` entries."""

    __slots__ = ()

    def __missing__(self, c: Any):
        t = self[c] = _decode(c)
        return t


#: Distinct cells a :class:`_Terms` keeps before it is cleared.
TERM_CACHE = 1 << 16
_ANSWERS = {True: BooleanAnswer(True), False: BooleanAnswer(False)}


def _table(variables: tuple[str, ...], rows: tuple) -> TableAnswer:
    """A :class:`TableAnswer` over rows a worker built with one cell per variable (see
    :func:`evaluate`), without re-checking every row's length (as ``TableAnswer.single_column``)."""
    table = object.__new__(TableAnswer)
    object.__setattr__(table, "variables", variables)
    object.__setattr__(table, "rows", rows)
    return table


def _outcome(msg: tuple, elapsed: float, terms: _Terms | None = None) -> Outcome:
    kind = msg[0]
    if kind == "table":
        if terms is None:
            terms = _Terms()
        elif len(terms) > TERM_CACHE:
            terms.clear()
        variables = msg[1]
        if len(variables) == 1:
            rows = tuple([(terms[row[0]],) for row in msg[2]])
        else:
            rows = tuple([tuple([terms[c] for c in row]) for row in msg[2]])
        return Outcome(Status.OK, _table(variables, rows), "", elapsed)
    if kind == "bool":
        return Outcome(Status.OK, _ANSWERS[bool(msg[1])], "", elapsed)
    if kind == "parse":
        return Outcome(Status.PARSE_ERROR, None, msg[1], elapsed)
    if kind == "memory":
        return Outcome(Status.EXEC_ERROR, None, transient(f"memory limit: {msg[1]}"), elapsed)
    return Outcome(Status.EXEC_ERROR, None, msg[1], elapsed)
