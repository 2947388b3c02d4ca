"""A persistent result cache (SQLite, WAL) and :class:`CachedEngine`, the engine wrapper that
uses it and counts what happened.

**Location**: ``$KGQA_CACHE_DIR/results.sqlite``, by default ``~/.cache/kgqa/results.sqlite``
(``$XDG_CACHE_HOME/kgqa`` when that is set).

**Key**: (engine identity, sha256 of the exact query text). The engine identity is
``<kind>-<version>:kg=<fingerprint>`` with the *full* fingerprint (see
:class:`~kgqa.execute.engine.EngineInfo`); the query text is the one the engine receives,
i.e. after the normaliser. **Value**: the outcome: status, answer as SPARQL 1.1 results JSON,
message, elapsed seconds, plus the timeout and row cap it ran under.

**What a lookup with (timeout T, row cap R) returns**:

- ``OK``: a hit when its row count is <= R; a cached table with more than R rows is
  returned as the over-cap ``EXEC_ERROR`` (it would not fit the cap). OK results are returned
  whatever T is (the answer is known; timeouts protect runs, they are not part of the answer).
- ``EXEC_ERROR`` "result has more than C rows": a hit when R <= C, a miss otherwise (re-run with
  the larger cap).
- ``TIMEOUT`` under limit L: a hit when T <= L, a miss when T > L (re-run with the larger
  limit; the new outcome replaces the old).
- ``PARSE_ERROR`` and other ``EXEC_ERROR``: hits.
- ``REFUSED`` outcomes are never stored (they depend on sandbox settings, not on the KG).
- **Transient** failures are never stored (:func:`kgqa.execute.engine.is_transient`: HTTP
  5xx/429 after retries, connection errors, a worker killed by the memory limit), nor results
  over the byte cap, nor answers whose JSON exceeds :data:`MAX_ENTRY_BYTES`: a rerun executes
  them again.

**Preparations**: a second table remembers what preparing a query gave (normalised text,
rewrites, sandbox refusal, engine-dependence screen; see
:meth:`kgqa.execute.executor.Executor.prepare_many`), keyed by the sha256 of the query text,
the policy settings and a fingerprint of the preparing code (so any change to the lexer,
sandbox or normaliser makes them misses): a re-run whose results are all cached neither
tokenises nor normalises its queries. Engines still check every query they execute.

**Engine-dependence assessments**: a third table remembers what
:func:`kgqa.execute.engine_findings.assess_many` found for a query (static findings and
their confirmation by executing variants), keyed by the code that decides it, the engine key,
the policy and the query text, and stored with the states (:meth:`ResultCache.row_states`) of
the entries it was derived from: it is reused only while those entries are unchanged, so a
re-run whose results are all cached neither analyses its queries nor looks their variants up.

**Durability**: every store is one ``BEGIN IMMEDIATE`` transaction, so concurrent writers
(several processes, each with its own connection) serialise on SQLite's lock (``busy_timeout``
60 s) and a process killed mid-write leaves either the whole entry or nothing.
:class:`CachedEngine` commits outcomes *as they finish* (batched, at most every
:data:`COMMIT_INTERVAL` seconds, and once more when the batch ends or is interrupted), so a run
killed with ``kill -9`` or Ctrl-C resumes where it stopped. A row SQLite refuses (e.g. "string
or blob too big") is skipped, never fatal.

**Trouble**: a cache that cannot be opened or read (corrupt or truncated file,
``KGQA_CACHE_DIR`` naming a file, a read-only file system, a full disk) is a
:class:`CacheError`: one line naming the file and the ways out (another folder,
``--no-cache``). When storing fails during a run (the disk fills up), a warning names the file
once and the run goes on without storing: its results are still reported and written.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
import importlib
import inspect

from kgqa.load.jsonio import fast_loads as _loads  # orjson where it reads what json reads
from kgqa.execute.engine import (DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT, Engine, EngineInfo, is_transient,
                                 over_byte_cap, too_many_rows_message)
from kgqa.model.answer import Answer, TableAnswer, from_results_json, to_results_json

from kgqa.model.outcome import Outcome, Status
from kgqa.model.problems import InputError

SCHEMA_VERSION = 1
#: Answers whose results JSON is larger than this are not cached (SQLite's default blob limit
#: is 1 GB; a huge entry would also make every later lookup slow); 64 MiB.
MAX_ENTRY_BYTES = 64 << 20
#: CachedEngine commits finished outcomes at most this often (seconds).
COMMIT_INTERVAL = 0.05

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    engine      TEXT    NOT NULL,
    query_hash  TEXT    NOT NULL,
    query       TEXT    NOT NULL,
    status      TEXT    NOT NULL,
    answer      TEXT,
    n_rows      INTEGER,
    message     TEXT    NOT NULL DEFAULT '',
    elapsed     REAL,
    timeout     REAL,
    row_cap     INTEGER,
    capped      INTEGER NOT NULL DEFAULT 0,
    created     REAL    NOT NULL,
    PRIMARY KEY (engine, query_hash)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS prepared (
    key         TEXT    PRIMARY KEY,
    text        TEXT,
    rewrites    TEXT    NOT NULL DEFAULT '[]',
    refusal     TEXT,
    scan        INTEGER,
    created     REAL    NOT NULL
);
CREATE TABLE IF NOT EXISTS assessments (
    key         TEXT    PRIMARY KEY,
    basis       TEXT    NOT NULL,
    value       TEXT    NOT NULL,
    created     REAL    NOT NULL
);
"""


def default_cache_dir() -> Path:
    env = os.environ.get("KGQA_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kgqa"


def default_cache_path() -> Path:
    return default_cache_dir() / "results.sqlite"


def engine_key(info: EngineInfo) -> str:
    """The engine part of a cache key: kind, version and the full KG fingerprint."""
    return f"{info.kind}-{info.version}:kg={info.fingerprint}"


#: What SQLite raises for a row it cannot store (a value out of range, a lone surrogate, ...):
#: that row is skipped, never the whole run.
_ROW_REFUSED = (sqlite3.DataError, sqlite3.IntegrityError, sqlite3.InterfaceError, OverflowError, UnicodeEncodeError)


def query_hash(query: str) -> str:
    return hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest()


def code_fingerprint(modules: Sequence[str]) -> str | None:
    """sha256 over the source of the named modules (what decides something kept in the cache
    beside the results: any change to them makes it a miss); None when one is unreadable."""

    h = hashlib.sha256()
    for name in modules:
        try:
            with open(importlib.import_module(name).__file__, "rb") as fh:
                h.update(fh.read())
        except (OSError, TypeError, ImportError):
            return None
    return h.hexdigest()[:16]


class CacheError(InputError):
    """The result cache cannot be used: corrupt or truncated, ``KGQA_CACHE_DIR`` not a folder,
    read-only, or the disk is full. One line naming the file, what is wrong and the ways out."""

    def __init__(self, path: Path, problem: str):
        super().__init__(path, f"result cache unusable: {problem}; move or delete it, point KGQA_CACHE_DIR at "
                               "another folder, or run with --no-cache")


def _explain(e: BaseException, path: Path | None = None) -> str:
    """What a cache failure means, in words (the underlying message kept)."""
    text = str(e) or type(e).__name__
    low = text.lower()
    errno_ = getattr(e, "errno", None)
    if path is not None and "unable to open" in low and path.parent.is_dir() and not os.access(path.parent, os.W_OK):
        errno_ = 30
    if errno_ == 28 or "disk is full" in low or "disk full" in low:
        return f"the disk is full ({text})"
    if errno_ in (13, 30) or "readonly" in low or "read-only" in low:
        return f"it cannot be written: read-only file or file system ({text})"
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return f"the file is corrupt or truncated, or not a kgqa result cache ({text})"
    if isinstance(e, (NotADirectoryError, FileExistsError)):
        return f"its folder {getattr(e, 'filename', '') or ''} is a file, not a folder (KGQA_CACHE_DIR?)"
    return text


def _writer_failed(e: BaseException) -> bool:
    """A write failure of the cache itself (disk full, read-only, I/O), not of one row."""
    return isinstance(e, (sqlite3.OperationalError, sqlite3.DatabaseError, OSError)) and not isinstance(
        e, _ROW_REFUSED)


@dataclass(frozen=True)
class CacheStats:
    path: str
    entries: int
    size_bytes: int
    by_engine: dict[str, dict[str, int]]  # engine key -> status -> count


class ResultCache:
    """The SQLite result cache (see the module docstring). Thread-safe; open one per process."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock = threading.Lock()
        #: why storing stopped (disk full, read-only, ...): the run goes on without storing
        self.write_error: str | None = None
        try:
            self._open()
        except (sqlite3.Error, OSError) as e:
            db = getattr(self, "_db", None)
            if db is not None:
                db.close()
            raise CacheError(self.path, _explain(e, self.path)) from None
        if self._schema and self._schema != str(SCHEMA_VERSION):
            self._db.close()
            raise RuntimeError(f"{self.path}: result cache schema {self._schema}, this kgqa writes {SCHEMA_VERSION};"
                               " clear it with `kgqa cache clear`")

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None,
                                   check_same_thread=False)
        try:
            self._max_vars = self._db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        except (AttributeError, sqlite3.Error):  # Python < 3.11: SQLite's historic minimum
            self._max_vars = 999
        self._db.execute("PRAGMA busy_timeout = 60000")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.execute("PRAGMA cache_size = -32768")  # up to 32 MiB of pages: re-runs read many entries
        self._db.execute("PRAGMA mmap_size = 268435456")
        with self._lock:
            self._db.executescript(_SCHEMA)  # idempotent; each statement commits on its own
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        self._schema = row[0] if row else None

    def _rollback(self) -> None:
        """ROLLBACK when a transaction is open: SQLite ends one by itself on some errors
        (disk full), and a failing ROLLBACK must not hide why."""
        if self._db.in_transaction:
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def _stop_writing(self, e: BaseException) -> None:
        """The cache cannot store any more (disk full, read-only, I/O error): say so once and
        store nothing more; the run goes on (its results are still reported and written)."""
        if self.write_error is None:
            self.write_error = _explain(e)
            warnings.warn(f"kgqa: result cache {self.path}: cannot store outcomes: {self.write_error}; the run goes "
                          "on without storing them (a rerun executes them again)", RuntimeWarning, stacklevel=4)

    # ------------------------------------------------------------------ lookups

    def get(self, engine: str, query: str, timeout: float = DEFAULT_TIMEOUT,
            max_rows: int = DEFAULT_MAX_ROWS) -> Outcome | None:
        """The cached outcome for this query under these limits, or None (a miss)."""
        return self.get_many(engine, [query], timeout, max_rows)[0]

    def get_many(self, engine: str, queries: Sequence[str], timeout: float = DEFAULT_TIMEOUT,
                 max_rows: int = DEFAULT_MAX_ROWS, states: dict[str, str] | None = None) -> list[Outcome | None]:
        """Cached outcomes (None: a miss) for ``queries``: one SQLite query per
        :data:`LOOKUP_CHUNK` distinct keys, each distinct cached answer decoded once.
        ``states``: filled with the :meth:`row_states` of the entries read (query hash ->
        state), read together with them."""
        hashes = [query_hash(q) for q in queries]
        found: dict[str, tuple] = {}
        for row in self._select("SELECT query_hash, status, answer, n_rows, message, elapsed, timeout, row_cap, "
                                "capped, created FROM results WHERE engine = ? AND query_hash IN ({})",
                                list(dict.fromkeys(hashes)), engine):
            found[row[0]] = row
        if states is not None:
            states.update((h, _state(row[9], row[1], row[3])) for h, row in found.items())
        decoded: dict[str, Answer] = {}
        usable = self._usable
        return [usable(found.get(h), timeout, max_rows, decoded) for h in hashes]

    def row_states(self, engine: str, hashes: Sequence[str]) -> dict[str, str]:
        """For cached entries of ``engine`` among ``hashes`` (:func:`query_hash` of the query
        texts): a state that changes whenever the entry is replaced or deleted and stored again
        (when it was stored, its status and row count). What is derived from an entry (an
        engine-dependence assessment) is valid while its state is unchanged."""
        return {h: _state(created, status, n_rows) for h, created, status, n_rows in self._select(
            "SELECT query_hash, created, status, n_rows FROM results WHERE engine = ? AND query_hash IN ({})",
            list(dict.fromkeys(hashes)), engine)}

    def _select(self, sql: str, keys: list[str], *first: str) -> list[tuple]:
        """Rows of ``sql`` (whose ``{}`` is the list of placeholders for ``keys``, after the
        parameters ``first``), one SQLite query per :data:`LOOKUP_CHUNK` keys."""
        out: list[tuple] = []
        step = max(1, min(LOOKUP_CHUNK, self._max_vars - 1 - len(first)))
        try:
            with self._lock:
                for start in range(0, len(keys), step):
                    chunk = keys[start:start + step]
                    out.extend(self._db.execute(sql.format(",".join("?" * len(chunk))), [*first, *chunk]))
        except sqlite3.DatabaseError as e:  # a page found corrupt or truncated while reading
            raise CacheError(self.path, _explain(e)) from None
        return out

    @staticmethod
    def _usable(row: tuple | None, timeout: float, max_rows: int,
                decoded: dict[str, Answer] | None = None) -> Outcome | None:
        if row is None:
            return None
        _, status, answer, n_rows, message, elapsed, limit, row_cap, capped, _created = row
        st = _STATUS.get(status) or Status(status)
        if st is Status.TIMEOUT:
            return Outcome(st, None, message, elapsed) if limit is not None and timeout <= limit else None
        if capped:
            return Outcome(st, None, too_many_rows_message(max_rows), elapsed) if max_rows <= row_cap else None
        if st is Status.OK:
            if n_rows is not None and n_rows > max_rows:
                return Outcome(Status.EXEC_ERROR, None, too_many_rows_message(max_rows), elapsed)
            return Outcome(st, decode_answer(answer, decoded), "", elapsed)
        return Outcome(st, None, message, elapsed)

    # ------------------------------------------------------------------ preparations

    def get_prepared(self, keys: Sequence[str]) -> dict[str, tuple[str | None, list[str], str | None, bool | None]]:
        """Stored preparations (see :meth:`kgqa.execute.executor.Executor.prepare_many`) by key:
        ``(text or None when unchanged, rewrites, refusal or None, scan flag or None)``; one
        SQLite query per :data:`LOOKUP_CHUNK` keys."""
        out: dict[str, tuple[str | None, list[str], str | None, bool | None]] = {}
        for key, text, rewrites, refusal, scan in self._select(
                "SELECT key, text, rewrites, refusal, scan FROM prepared WHERE key IN ({})", list(dict.fromkeys(keys))):
            out[key] = (text, [] if rewrites == "[]" else _loads(rewrites), refusal,
                        None if scan is None else bool(scan))
        return out

    def put_prepared(self, entries: Sequence[tuple[str, str | None, list[str], str | None, bool | None]]) -> None:
        """Store preparations ``(key, text or None, rewrites, refusal or None, scan)`` in one
        transaction (none when SQLite refuses a row: they are prepared again next time)."""
        now = time.time()
        self._put_side("prepared", [(k, t, json.dumps(rw, ensure_ascii=False) if rw else "[]", r,
                                     None if sc is None else int(sc), now) for k, t, rw, r, sc in entries])

    # ------------------------------------------------------------------ engine-dependence assessments

    def get_assessments(self, keys: Sequence[str]) -> dict[str, tuple[str, str]]:
        """Stored engine-dependence assessments (see
        :func:`kgqa.execute.engine_findings.assess_many`) by key: ``(basis, value)``, the
        basis being the entries they were derived from with their :meth:`row_states`."""
        return {key: (basis, value) for key, basis, value in self._select(
            "SELECT key, basis, value FROM assessments WHERE key IN ({})", list(dict.fromkeys(keys)))}

    def put_assessments(self, entries: Sequence[tuple[str, str, str]]) -> None:
        """Store assessments ``(key, basis, value)`` in one transaction (none when SQLite
        refuses a row: they are assessed again next time)."""
        now = time.time()
        self._put_side("assessments", [(k, b, v, now) for k, b, v in entries])

    def _put_side(self, table: str, rows: list[tuple]) -> None:
        """INSERT OR REPLACE ``rows`` into a table beside the results (preparations,
        assessments) in one transaction; nothing is stored when SQLite refuses one."""
        if not rows or self.write_error is not None:
            return
        sql = f"INSERT OR REPLACE INTO {table} VALUES ({','.join('?' * len(rows[0]))})"
        with self._lock:
            self._write(lambda: self._db.executemany(sql, rows))

    def _write(self, work: Callable[[], object]) -> bool | None:
        """Run ``work`` in one ``BEGIN IMMEDIATE`` transaction (the lock held): True when it
        committed, False when SQLite refused a row (rolled back), None when the cache cannot be
        written any more (disk full, read-only; rolled back, see :meth:`_stop_writing`)."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            work()
            self._db.execute("COMMIT")
            return True
        except _ROW_REFUSED:
            self._rollback()
            return False
        except BaseException as e:
            self._rollback()
            if not _writer_failed(e):
                raise
            self._stop_writing(e)
            return None

    # ------------------------------------------------------------------ stores

    def put(self, engine: str, query: str, outcome: Outcome, timeout: float = DEFAULT_TIMEOUT,
            max_rows: int = DEFAULT_MAX_ROWS) -> None:
        self.put_many(engine, [(query, outcome)], timeout, max_rows)

    def put_many(self, engine: str, entries: Sequence[tuple[str, Outcome]], timeout: float = DEFAULT_TIMEOUT,
                 max_rows: int = DEFAULT_MAX_ROWS) -> int:
        """Store outcomes in one transaction; returns how many were stored. Skipped: REFUSED
        and MISSING, transient failures, results over the byte cap, answers over
        :data:`MAX_ENTRY_BYTES`, and any row SQLite refuses."""
        rows = []
        now = time.time()
        cap_msg = too_many_rows_message(max_rows)
        for query, o in entries:
            if o.status in (Status.REFUSED, Status.MISSING) or not cacheable(o):
                continue
            answer = n_rows = None
            if o.status is Status.OK and o.answer is not None:
                answer = json.dumps(to_results_json(o.answer), ensure_ascii=False, separators=(",", ":"))
                if len(answer) > MAX_ENTRY_BYTES:
                    continue
                n_rows = len(o.answer.rows) if isinstance(o.answer, TableAnswer) else 1
            capped = int(o.status is Status.EXEC_ERROR and o.message == cap_msg)
            rows.append((engine, query_hash(query), query, o.status.value, answer, n_rows, o.message,
                         o.elapsed, timeout, max_rows, capped, now))
        if not rows or self.write_error is not None:
            return 0
        sql = "INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
        stored = 0

        def one_by_one() -> None:  # one row was refused: store the others one by one
            nonlocal stored
            for r in rows:
                try:
                    self._db.execute(sql, r)
                    stored += 1
                except _ROW_REFUSED:
                    pass

        with self._lock:
            done = self._write(lambda: self._db.executemany(sql, rows))
            if done is not False:
                return len(rows) if done else 0
            return stored if self._write(one_by_one) else 0

    # ------------------------------------------------------------------ maintenance

    def stats(self) -> CacheStats:
        by: dict[str, dict[str, int]] = {}
        with self._lock:
            for engine, status, n in self._db.execute(
                    "SELECT engine, status, COUNT(*) FROM results GROUP BY engine, status ORDER BY engine, status"):
                by.setdefault(engine, {})[status] = n
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return CacheStats(str(self.path), sum(sum(d.values()) for d in by.values()), size, by)

    def clear(self, engine: str | None = None) -> int:
        """Delete all entries (or those of one engine key, or of engine keys starting with it
        when it ends in ``*``); returns how many were deleted."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if engine is None:
                    n = self._db.execute("DELETE FROM results").rowcount
                    self._db.execute("DELETE FROM prepared")
                    self._db.execute("DELETE FROM assessments")
                elif engine.endswith("*"):
                    n = self._db.execute("DELETE FROM results WHERE substr(engine, 1, ?) = ?",
                                         (len(engine) - 1, engine[:-1])).rowcount
                else:
                    n = self._db.execute("DELETE FROM results WHERE engine = ?", (engine,)).rowcount
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
            if engine is None:
                self._db.execute("VACUUM")
        return n

    def integrity(self) -> str:
        with self._lock:
            return self._db.execute("PRAGMA integrity_check").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> "ResultCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_STATUS = {s.value: s for s in Status}


def _state(created: float, status: str, n_rows: int | None) -> str:
    """An entry's state (:meth:`ResultCache.row_states`)."""
    return f"{created!r}/{status}/{n_rows}"

#: Keys looked up per SQLite query (bounded by SQLite's limit on bound variables).
LOOKUP_CHUNK = 4000
#: Answers (their results JSON text) decoded once and shared, at most this many remembered
#: between look-ups: many questions have the same answer (empty, a count, true). Answers are
#: immutable, so sharing one object is safe.
DECODE_MEMO_SIZE = 4096
_DECODE_MEMO_MAX_TEXT = 4096
_DECODED: OrderedDict[str, Answer] = OrderedDict()
_DECODE_LOCK = threading.Lock()


def decode_answer(text: str, seen: dict[str, Answer] | None = None) -> Answer:
    """The answer stored as results JSON ``text`` (:func:`~kgqa.model.answer.from_results_json`,
    read with orjson). Identical texts give the same object: within one look-up
    through ``seen``, across look-ups through a small memo of short texts."""
    if seen is not None:
        hit = seen.get(text)
        if hit is not None:
            return hit
    short = len(text) <= _DECODE_MEMO_MAX_TEXT
    hit = _DECODED.get(text) if short else None
    if hit is None:
        hit = from_results_json(_loads(text))
        if short:
            with _DECODE_LOCK:
                _DECODED[text] = hit
                if len(_DECODED) > DECODE_MEMO_SIZE:
                    _DECODED.popitem(last=False)
    if seen is not None:
        seen[text] = hit
    return hit


def cacheable(o: Outcome) -> bool:
    """Whether an outcome is definitive (may be cached): not transient, not over the result
    byte cap."""
    return not (is_transient(o) or over_byte_cap(o))


COUNT_KEYS = ("executed", "cache_hits", "errors", "timeouts", "refused")


class _Committer:
    """Collects finished outcomes and stores them in the cache at most every
    :data:`COMMIT_INTERVAL` seconds (and on :meth:`flush`)."""

    def __init__(self, cache: ResultCache, key: str, timeout: float, max_rows: int):
        self.cache, self.key, self.timeout, self.max_rows = cache, key, timeout, max_rows
        self.buffer: list[tuple[str, Outcome]] = []
        self.last = time.monotonic()
        self.lock = threading.Lock()

    def add(self, query: str, outcome: Outcome) -> None:
        with self.lock:
            self.buffer.append((query, outcome))
            due = time.monotonic() - self.last >= COMMIT_INTERVAL
        if due:
            self.flush()

    def flush(self) -> None:
        with self.lock:
            entries, self.buffer = self.buffer, []
            self.last = time.monotonic()
        if entries:
            self.cache.put_many(self.key, entries, self.timeout, self.max_rows)


class CachedEngine:
    """An :class:`~kgqa.execute.engine.Engine` that answers from a :class:`ResultCache` when it
    can, executes the rest on ``engine`` (each distinct query text once per batch) and stores
    the new outcomes. With ``cache=None`` it only counts.

    ``counts`` (cumulative over calls):

    - ``executed``: queries sent to the wrapped engine (cache misses; a query text repeated in
      one batch is executed once, its repeats count as ``cache_hits``);
    - ``cache_hits``: queries answered from the cache (or from a repeat in the same batch);
    - ``refused``: REFUSED outcomes (these never count as executed or cached);
    - ``errors``: PARSE_ERROR and EXEC_ERROR outcomes, ``timeouts``: TIMEOUT outcomes, whether
      fresh or from the cache.

    So ``executed + cache_hits + refused`` is the number of queries asked.
    """

    def __init__(self, engine: Engine, cache: ResultCache | None = None):
        self.engine = engine
        self.cache = cache
        self.info = engine.info
        self.key = engine_key(engine.info)
        self.counts: dict[str, int] = dict.fromkeys(COUNT_KEYS, 0)

    def execute(self, query: str, timeout: float = DEFAULT_TIMEOUT, max_rows: int = DEFAULT_MAX_ROWS) -> Outcome:
        return self.execute_many([query], timeout=timeout, max_rows=max_rows)[0]

    def execute_many(self, queries: Sequence[str], timeout: float = DEFAULT_TIMEOUT,
                     max_rows: int = DEFAULT_MAX_ROWS,
                     progress: Callable[[int], None] | None = None) -> list[Outcome]:
        cached = (self.cache.get_many(self.key, queries, timeout, max_rows) if self.cache is not None
                  else [None] * len(queries))
        results: list[Outcome | None] = list(cached)
        todo: dict[str, list[int]] = {}
        hits = 0
        for i, (q, c) in enumerate(zip(queries, cached)):
            if c is None:
                todo.setdefault(q, []).append(i)
            else:
                hits += 1
        if progress is not None and hits:
            progress(hits)
        distinct = list(todo)
        if distinct:
            outs = self._execute(distinct, timeout, max_rows, progress)
            for q, o in zip(distinct, outs):
                idx = todo[q]
                for i in idx:
                    results[i] = o
                if o.status is Status.REFUSED:
                    self.counts["refused"] += len(idx)
                else:
                    self.counts["executed"] += 1
                    hits += len(idx) - 1
                if progress is not None and len(idx) > 1:
                    progress(len(idx) - 1)
        self.counts["cache_hits"] += hits
        for o in results:
            assert o is not None
            if o.status in (Status.PARSE_ERROR, Status.EXEC_ERROR):
                self.counts["errors"] += 1
            elif o.status is Status.TIMEOUT:
                self.counts["timeouts"] += 1
        return results  # type: ignore[return-value]

    def _execute(self, distinct: list[str], timeout: float, max_rows: int,
                 progress: Callable[[int], None] | None) -> list[Outcome]:
        """Execute on the wrapped engine, committing outcomes to the cache as they finish:
        through the engine's ``on_outcome`` callback when it has one, else in chunks. On an
        interruption (Ctrl-C) what finished is committed before the exception propagates."""
        def inner_progress(n: int) -> None:
            if progress is not None:
                progress(n)

        if self.cache is None:
            return self.engine.execute_many(distinct, timeout=timeout, max_rows=max_rows, progress=inner_progress)
        committer = _Committer(self.cache, self.key, timeout, max_rows)
        try:
            if _accepts_on_outcome(self.engine):
                return self.engine.execute_many(distinct, timeout=timeout, max_rows=max_rows, progress=inner_progress,
                                                on_outcome=lambda i, o: committer.add(distinct[i], o))
            outs: list[Outcome] = []
            step = max(1, 4 * int(getattr(self.engine, "workers", 0) or getattr(self.engine, "concurrency", 0) or 4))
            for start in range(0, len(distinct), step):
                chunk = distinct[start:start + step]
                got = self.engine.execute_many(chunk, timeout=timeout, max_rows=max_rows, progress=inner_progress)
                for q, o in zip(chunk, got):
                    committer.add(q, o)
                outs.extend(got)
            return outs
        finally:
            committer.flush()

    def close(self) -> None:
        self.engine.close()


def _accepts_on_outcome(engine: Engine) -> bool:
    try:
        return "on_outcome" in inspect.signature(engine.execute_many).parameters
    except (TypeError, ValueError):
        return False

