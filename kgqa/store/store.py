"""The experiment store: experiments and the files they were made from, in SQLite (default)
or PostgreSQL, through SQLAlchemy 2 Core.

An experiment is created ``pending`` with its inputs and settings, becomes ``running`` while it
is evaluated (with progress), and ends ``finished`` (results kept) or ``failed`` (the message
kept). A finished experiment is immutable: :meth:`Store.finish` and :meth:`Store.fail` only
change pending or running rows, and nothing else updates results. Re-running makes a new
experiment. Deleting is allowed (``kgqa experiments delete``).
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from functools import cached_property
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import and_, create_engine, delete, event, func, insert, make_url, or_, select, text, update
from sqlalchemy.engine import Engine
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.exc import OperationalError, IntegrityError

import kgqa
from kgqa.model import InputError
from kgqa.store import schema
from kgqa.store.schema import experiments as T_EXP
from kgqa.store.schema import files as T_FILES
from kgqa.store.schema import journal as T_JOURNAL
from kgqa.store.schema import results as T_RES
from kgqa.api import display_url
from kgqa.score.evaluate import Evaluation

STATUSES = ("pending", "running", "finished", "failed")
_OPEN = ("pending", "running")

#: A worker's lease on an experiment lapses when its heartbeat is older than this many seconds
#: (``KGQA_LEASE_SECONDS``); workers renew theirs every third of it.
LEASE_S = float(os.environ.get("KGQA_LEASE_SECONDS") or 30)

#: after this process found the store away (a database restart or outage, a full disk), it
#: takes no lapsed lease for this many seconds once the store answers again: nobody could renew
#: a lease while the store was away, so a lease that lapsed then says nothing about its holder;
#: a live holder renews it within this time (its heartbeat is tried again every second after a
#: failure, :class:`kgqa.store.worker.Heartbeat`), a dead one's is taken after it
AWAY_GRACE_S = LEASE_S / 2

#: the PostgreSQL channel on which a queued (or given back) experiment wakes idle workers
QUEUE_CHANNEL = "kgqa_queue"

#: journal rows written by one INSERT statement (:meth:`Store.journal_write`)
JOURNAL_ROWS = 500


def owner_id() -> str:
    """This process as a lease owner: ``host:pid:nonce``."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def owner_gone(owner: str) -> bool:
    """``owner`` (:func:`owner_id`) is a process of this machine that no longer runs (a zombie
    counts as gone). Owners on other machines are never judged here: their heartbeat is."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


@dataclass
class Claim:
    """A worker's lease on an experiment: ``attempts`` how often a worker was lost on it
    (this claim included when it took over ``lost_from``, a lost worker's lease)."""

    eid: str
    owner: str
    attempts: int
    lost_from: str | None = None


def default_store_path() -> Path:
    """``$KGQA_HOME/experiments.sqlite``, else ``$XDG_DATA_HOME/kgqa/experiments.sqlite``
    (``~/.local/share/kgqa/experiments.sqlite``)."""
    home = os.environ.get("KGQA_HOME")
    if home:
        return Path(home).expanduser() / "experiments.sqlite"
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg).expanduser() / "kgqa" / "experiments.sqlite"


def store_url(spec: str | Path | None) -> str:
    """A SQLAlchemy URL from ``--store``: a URL (``postgresql+psycopg://user@host/db``,
    ``sqlite:///file``) as is; anything else is a SQLite file path."""
    if spec is None:
        spec = default_store_path()
    s = str(spec)
    if "://" in s:
        return s
    p = Path(s).expanduser().resolve()
    _check_sqlite_path(p, s)
    p.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite+pysqlite:///{p}"


class StoreError(InputError):
    """The store cannot be read or written (disk full, read-only, locked, unreachable): one
    line naming the store and the cause, never SQLAlchemy's text with the statement and its
    parameters (which can be megabytes of an evaluation). ``operational``: the database could
    not be reached or written for now (a restart, a lock, a full disk): a writer may wait it out
    (:func:`kgqa.store.runner.wait_for_store`)."""

    operational: bool = False


#: Most characters of a database's own message kept in a :class:`StoreError`
MAX_DB_MESSAGE = 300

_FULL = ("database or disk is full", "no space left on device", "disk full", "could not extend file")


def store_error_message(e: BaseException) -> str:
    """One line for a database or file error of the store: the cause, truncated, without the
    statement or its parameters; a full disk says what to do."""
    text = " ".join(str(e).split("\n")[0].split())
    if isinstance(e, OSError) and e.strerror:
        text = e.strerror
    if len(text) > MAX_DB_MESSAGE:
        text = text[:MAX_DB_MESSAGE] + "..."
    if getattr(e, "errno", None) == errno.ENOSPC or any(w in text.lower() for w in _FULL):
        return (f"cannot write: No space left on device ({text}); the experiment was not recorded "
                "(the scores printed stand): free space or record it in another store (--store)")
    return f"database error: {type(e).__name__}: {text or 'no detail'}"


def _clear_error(ctx: Any, shown: str) -> None:
    """SQLAlchemy's ``handle_error`` hook: every database error but an integrity conflict
    (handled where it can happen) becomes a :class:`StoreError`."""
    if isinstance(ctx.sqlalchemy_exception, IntegrityError):
        return
    err = StoreError(shown, store_error_message(ctx.original_exception))
    err.operational = isinstance(ctx.sqlalchemy_exception, OperationalError)
    raise err from None


def _check_sqlite_path(p: Path, given: str) -> None:
    """A ``--store`` path must be a SQLite file kgqa can open or create: a directory, or a file
    that is something else (a run, a JSON file), is refused with the reason, before SQLite says
    "unable to open database file" or "file is not a database"."""
    if p.is_dir():
        raise InputError(given, f"is a directory; --store takes a SQLite file (e.g. {Path(given) / 'experiments.sqlite'}) "
                                "or a SQLAlchemy URL")
    if str(p) in _CHECKED:
        return
    if p.is_file() and p.stat().st_size:
        # read once per process, before SQLite opens it: closing any descriptor of a file drops
        # every POSIX lock this process holds on it, SQLite's included (another process closing
        # its last connection would then delete the WAL this process's connections still use)
        with open(p, "rb") as fh:
            head = fh.read(16)
        if head != b"SQLite format 3\x00":
            raise InputError(given, "is not a SQLite database (an existing file of another kind); --store takes "
                                    "a SQLite file kgqa created, a new file name, or a SQLAlchemy URL")
    _CHECKED.add(str(p))  # (a new file: SQLite creates it)


#: SQLite files this process has checked (and may hold open): never opened outside SQLite again
_CHECKED: set[str] = set()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _json(v: Any) -> str:
    def clean(x: Any) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(y) for k, y in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(y) for y in x]
        return x

    return json.dumps(clean(v), ensure_ascii=False, separators=(",", ":"))


@dataclass
class Experiment:
    """One stored experiment (a row of ``experiments``, JSON columns parsed)."""

    id: str
    status: str
    created: str
    finished: str | None
    dataset: str
    dataset_checksum: str | None
    dataset_file: str | None
    dataset_filename: str | None
    run_name: str
    run_file: str | None
    run_filename: str | None
    system_url: str | None
    system_protocol: str | None
    profile: str
    measures: str | None
    lang: str
    kg: str | None
    kg_file: str | None
    kg_filename: str | None
    gold_answers: str
    kg_fingerprint: str | None
    kgqa_version: str
    signature: str | None
    headline: str | None
    headline_value: float | None
    n_questions: int | None
    error: str | None
    progress_done: int
    progress_total: int
    progress_note: str | None
    claimed_by: str | None = None
    heartbeat: float | None = None
    attempts: int = 0
    submitter: str | None = None  # the account that submitted it (None: made without accounts)
    _evaluation: str | None = field(default=None, repr=False)
    _load: Any = field(default=None, repr=False, compare=False)  # fetches the results of a summary row
    # the JSON columns as stored, parsed when first read (a listing page shows few of them)
    _options: str | None = field(default=None, repr=False)
    _aggregate: str | None = field(default=None, repr=False)
    _outcomes: str | None = field(default=None, repr=False)
    _url_redacted: bool = field(default=False, repr=False)  # a URL stored with its credentials (older stores)

    @property
    def credentials_withheld(self) -> bool:
        """The live system's URL had credentials (userinfo, credential-like query values): they
        were used for the run started with them only; ``system_url`` shows them as ``***``."""
        return self._url_redacted or self.options.get("system_credentials") == "withheld"

    @property
    def kg_credentials_withheld(self) -> bool:
        """The SPARQL endpoint's URL (``kg``) had credentials: used for the run started with
        them only; ``kg`` shows them as ``***``."""
        return self.options.get("kg_credentials") == "withheld"

    def withheld_message(self) -> str | None:
        """Why this experiment cannot run again from the store alone (None: it can)."""
        for withheld, url in ((self.credentials_withheld, self.system_url), (self.kg_credentials_withheld, self.kg)):
            if withheld:
                return withheld_note(url)
        return None

    @cached_property
    def options(self) -> dict[str, Any]:
        """Further settings (timeout, formats, ...)."""
        return json.loads(self._options or "{}")

    @cached_property
    def aggregate(self) -> dict[str, float | None]:
        """{measure label: value} of a finished experiment."""
        return json.loads(self._aggregate or "{}")

    @cached_property
    def outcomes(self) -> dict[str, int]:
        """{outcome: count} of a finished experiment."""
        return json.loads(self._outcomes or "{}")

    @property
    def done(self) -> bool:
        return self.status in ("finished", "failed")

    def evaluation_json(self) -> dict[str, Any] | None:
        if self._evaluation is None and self._load is not None:
            self._evaluation = self._load(self.id)
        return json.loads(self._evaluation) if self._evaluation else None

    def evaluation(self):
        """The stored :class:`~kgqa.score.evaluate.Evaluation` (finished experiments)."""

        doc = self.evaluation_json()
        if doc is None:
            raise ValueError(f"experiment {self.id} has no results ({self.status})")
        return Evaluation.from_json(doc)

    def summary(self) -> dict[str, Any]:
        """What ``kgqa experiments list/show`` prints and the JSON export's header holds."""
        return {
            "id": self.id, "status": self.status, "created": self.created, "finished": self.finished,
            "dataset": self.dataset, "dataset_checksum": self.dataset_checksum,
            "dataset_file": self.dataset_filename, "run": self.run_name, "run_file": self.run_filename,
            "run_sha256": self.run_file, "system_url": self.system_url, "system_protocol": self.system_protocol,
            "profile": self.profile, "measures": self.measures, "lang": self.lang, "kg": self.kg,
            "kg_fingerprint": self.kg_fingerprint, "gold_answers": self.gold_answers, "options": self.options,
            "kgqa_version": self.kgqa_version, "signature": self.signature, "headline": self.headline,
            "headline_value": self.headline_value, "n_questions": self.n_questions, "aggregate": self.aggregate,
            "outcomes": self.outcomes, "error": self.error,
        }


def shown_url(url: str | None) -> str | None:
    """A live system's URL as the store keeps and shows it: userinfo and credential-like query
    values as ``***`` (:func:`kgqa.execute.live.client.display_url`)."""
    if not url:
        return url

    return display_url(url)


def withheld_note(url: str | None) -> str:
    """What an experiment whose ``url`` (as the store shows it) had credentials says when run
    again without them."""
    return f"the credentials of {url} are not kept in the store: start a new experiment with the full URL"


def _withheld(given: str | None, shown: str | None) -> bool:
    """``shown`` hides credentials of ``given`` (not a mere normalisation of the URL)."""
    return shown != given and "***" in (shown or "")


def _row(r: Any, load: Any = None) -> Experiment:
    m = r._mapping
    url = shown_url(m["system_url"])  # a store written before the URLs were kept redacted: shown so
    return Experiment(
        id=m["id"], status=m["status"], created=m["created"], finished=m["finished"], dataset=m["dataset"],
        dataset_checksum=m["dataset_checksum"], dataset_file=m["dataset_file"], dataset_filename=m["dataset_filename"],
        run_name=m["run_name"], run_file=m["run_file"], run_filename=m["run_filename"], system_url=url,
        system_protocol=m["system_protocol"], profile=m["profile"], measures=m["measures"], lang=m["lang"],
        kg=m["kg"], kg_file=m["kg_file"], kg_filename=m["kg_filename"], gold_answers=m["gold_answers"],
        kg_fingerprint=m["kg_fingerprint"],
        kgqa_version=m["kgqa_version"], signature=m["signature"], headline=m["headline"],
        headline_value=m["headline_value"], n_questions=m["n_questions"],
        error=m["error"],
        progress_done=m["progress_done"] or 0, progress_total=m["progress_total"] or 0,
        progress_note=m["progress_note"],
        claimed_by=m.get("claimed_by"), heartbeat=m.get("heartbeat"), attempts=m.get("attempts") or 0,
        submitter=m.get("submitter"),
        _url_redacted=url != m["system_url"] and "***" in (url or ""),
        _evaluation=m["results"] if "results" in m else None, _load=load,
        _options=m["options"], _aggregate=m["aggregate"], _outcomes=m["outcomes"],
    )


#: Every column but the per-question results: what listing pages and status polls read.
_SUMMARY = [c for c in T_EXP.c if c.name != "evaluation"]


#: What :meth:`Store.list` sorts by.
SORTS = {"created": T_EXP.c.created, "run": T_EXP.c.run_name, "dataset": T_EXP.c.dataset, "profile": T_EXP.c.profile,
         "status": T_EXP.c.status, "headline": T_EXP.c.headline_value}


class ImmutableError(RuntimeError):
    """An attempt to change a finished (or failed) experiment."""


class LostClaim(RuntimeError):
    """A worker's lease on an experiment was taken over (its heartbeat had stopped): it must
    stop evaluating it and record nothing."""


class Store:
    """The experiment store at ``spec`` (a SQLite path or a SQLAlchemy URL; default
    :func:`default_store_path`). Opening migrates the schema (:mod:`kgqa.store.schema`)."""

    def __init__(self, spec: str | Path | None = None):
        try:
            self.url = store_url(spec)
        except OSError as e:
            raise StoreError(str(spec), store_error_message(e)) from None
        # connections kept open for as many threads as a busy web server reads with (SQLAlchemy's 5
        # closed and reopened the rest, each reopening paying its PRAGMAs, under 50 users' pages)
        kw: dict[str, Any] = {"pool_size": 16, "max_overflow": 32}
        db = make_url(self.url).database or ""
        if self.url.startswith("sqlite") and (db in ("", ":memory:") or "memory" in db):
            kw = {}  # an in-memory database: one connection per thread (SQLAlchemy's pool for it)
        if self.url.startswith("sqlite"):
            kw["connect_args"] = {"check_same_thread": False, "timeout": 30}
        self.engine: Engine = create_engine(self.url, **kw)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        shown = self.url.split("///", 1)[1] if self.url.startswith("sqlite") and "///" in self.url else \
            self.engine.url.render_as_string(hide_password=True)
        #: when (time.time()) a database call of this store last found the database away
        self.away_at = 0.0
        event.listen(self.engine, "handle_error", lambda ctx: self._note_error(ctx, shown))
        self._listener: Any = None  # the connection waiting for queued experiments (wait_for_work)
        self.schema_found = schema.migrate(self.engine)

    def _note_error(self, ctx: Any, shown: str) -> None:
        """The ``handle_error`` hook: note when the database was away, then :func:`_clear_error`."""
        try:
            _clear_error(ctx, shown)
        except StoreError as err:
            if err.operational:
                self.away_at = time.time()
            raise

    def _lease_cutoff(self, stale_s: float) -> float:
        """Leases with a heartbeat older than this (time.time()) lapsed; none does within
        :data:`AWAY_GRACE_S` of this store finding the database away (their holders could not
        renew them meanwhile)."""
        now = time.time()
        return 0.0 if now - self.away_at < AWAY_GRACE_S else now - stale_s

    def __repr__(self) -> str:
        return f"Store({self.engine.url.render_as_string(hide_password=True)!r})"

    def close(self) -> None:
        self._stop_listening()
        self.engine.dispose()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ files

    def put_file(self, data: bytes) -> str:
        """Store ``data`` once (content-addressed); returns its sha256."""
        sha = hashlib.sha256(data).hexdigest()
        with self.engine.begin() as c:
            if c.execute(select(T_FILES.c.sha256).where(T_FILES.c.sha256 == sha)).first() is None:
                try:
                    c.execute(insert(T_FILES).values(sha256=sha, size=len(data), content=data, created=_now()))
                except IntegrityError:  # stored concurrently: same content, nothing to do
                    pass
        return sha

    def get_file(self, sha: str) -> bytes:
        with self.engine.connect() as c:
            data = c.execute(select(T_FILES.c.content).where(T_FILES.c.sha256 == sha)).scalar()
        if data is None:
            raise KeyError(f"no stored file {sha}")
        return bytes(data)

    # ------------------------------------------------------------------ experiments

    def create(self, *, dataset: str, run_name: str, profile: str, dataset_file: str | None = None,
               dataset_filename: str | None = None, dataset_checksum: str | None = None, run_file: str | None = None,
               run_filename: str | None = None, system_url: str | None = None, system_protocol: str | None = None,
               measures: str | None = None, lang: str = "all", kg: str | None = None, kg_file: str | None = None,
               kg_filename: str | None = None, gold_answers: str = "stored",
               options: dict[str, Any] | None = None, owner: str | None = None,
               submitter: str | None = None) -> str:
        """A new pending experiment; returns its id (the permalink ``/e/<id>``). A live
        system's URL is stored as :func:`shown_url` gives it: credentials in it are never
        stored; the run started with the URL as given uses them
        (:func:`kgqa.store.runner.run_experiment`'s ``system_url``). ``owner``: created
        leased to this worker (:meth:`claim`), so that no server's queue takes it up.
        ``submitter``: the account that submitted it (a hosted challenge)."""
        if run_file is None and system_url is None:
            raise ValueError("an experiment needs a run file or a system URL")
        shown = shown_url(system_url)
        if _withheld(system_url, shown):
            options = {**(options or {}), "system_credentials": "withheld"}
        if kg is not None and kg.startswith(("http://", "https://")):  # a SPARQL endpoint: the same rule
            kg_given, kg = kg, shown_url(kg)
            if _withheld(kg_given, kg):
                options = {**(options or {}), "kg_credentials": "withheld"}
        values = dict(
            status="pending", created=_now(), dataset=dataset, dataset_checksum=dataset_checksum,
            dataset_file=dataset_file, dataset_filename=dataset_filename, run_name=run_name, run_file=run_file,
            run_filename=run_filename, system_url=shown, system_protocol=system_protocol, profile=profile,
            measures=measures or None, lang=lang, kg=kg, kg_file=kg_file, kg_filename=kg_filename,
            gold_answers=gold_answers, options=_json(options or {}), kgqa_version=kgqa.__version__,
            progress_done=0, progress_total=0, claimed_by=owner, heartbeat=time.time() if owner else None,
            attempts=0, submitter=submitter,
        )
        for _ in range(5):
            eid = secrets.token_hex(5)
            try:
                with self.engine.begin() as c:
                    c.execute(insert(T_EXP).values(id=eid, **values))
                    self._announce(c)
                return eid
            except IntegrityError:
                continue
        raise RuntimeError("could not allocate an experiment id")

    def get(self, eid: str, *, results: bool = True) -> Experiment | None:
        """The experiment ``eid`` (None: no such one). ``results=False`` reads its summary only
        (status, aggregates, progress); the per-question results load when first asked for."""
        if results:
            q = select(*_SUMMARY, T_RES.c.evaluation.label("results")).select_from(
                T_EXP.outerjoin(T_RES, T_RES.c.id == T_EXP.c.id))
        else:
            q = select(*_SUMMARY)
        with self.engine.connect() as c:
            r = c.execute(q.where(T_EXP.c.id == eid)).first()
        return _row(r, None if results else self._results) if r is not None else None

    def _results(self, eid: str) -> str | None:
        with self.engine.connect() as c:
            return c.execute(select(T_RES.c.evaluation).where(T_RES.c.id == eid)).scalar()

    def list(self, *, dataset: str | None = None, profile: str | None = None, status: str | None = None,
             limit: int | None = None, offset: int = 0, sort: str = "created", descending: bool = True,
             after: str | None = None, before: str | None = None, submitter: str | None = None) -> list[Experiment]:
        """Experiments, newest first (or by ``sort``: one of :data:`SORTS`), optionally
        filtered, ``limit`` of them from ``offset`` or next to an experiment (``after`` /
        ``before`` an id: :meth:`list_page`). Summaries: the per-question results load when
        first asked for, so a page of a large store reads only its rows. ``submitter``: only
        the experiments this account submitted."""
        return self.list_page(dataset=dataset, profile=profile, status=status, limit=limit, offset=offset, sort=sort,
                              descending=descending, after=after, before=before, submitter=submitter).experiments

    def list_page(self, *, dataset: str | None = None, profile: str | None = None, status: str | None = None,
                  limit: int | None = None, offset: int = 0, sort: str = "created", descending: bool = True,
                  after: str | None = None, before: str | None = None, submitter: str | None = None) -> "Page":
        """A page of :meth:`list`: ``limit`` experiments from ``offset``, or (keyset paging,
        the seek method) the ``limit`` right after experiment ``after`` or right before
        ``before`` in the same order, with how many come before the page's first row. A seek
        reads only the page's rows however deep it is, and its pages neither skip nor repeat
        an experiment when others are added between page loads (ties are broken by id).
        Raises :class:`KeyError` when the ``after``/``before`` experiment is not in the store."""
        if sort not in SORTS:
            raise ValueError(f"cannot sort experiments by {sort!r}; one of: {', '.join(SORTS)}")
        keys = [(SORTS[sort], descending), (T_EXP.c.created, descending), (T_EXP.c.id, False)]
        order = list({c.name: (c, d) for c, d in keys}.values())  # created once when sorting by it
        return self._page(lambda q: self._filtered(q, dataset, profile, status, submitter=submitter), order, limit,
                          offset, after, before)

    def count(self, *, dataset: str | None = None, profile: str | None = None, status: str | None = None,
              until: str | None = None, submitter: str | None = None, since: str | None = None) -> int:
        """How many experiments :meth:`list` would give without a limit (``until``: created
        at or before this ISO time only; ``since``: at or after it; ``submitter``: submitted by
        this account only)."""
        q = self._filtered(select(func.count()).select_from(T_EXP), dataset, profile, status, until, submitter, since)
        with self.engine.connect() as c:
            return int(c.execute(q).scalar() or 0)

    @staticmethod
    def _filtered(q: Any, dataset: str | None, profile: str | None, status: str | None,
                  until: str | None = None, submitter: str | None = None, since: str | None = None) -> Any:
        if dataset is not None:
            q = q.where(T_EXP.c.dataset == dataset)
        if profile is not None:
            q = q.where(T_EXP.c.profile == profile)
        if status is not None:
            q = q.where(T_EXP.c.status == status)
        if until is not None:
            q = q.where(T_EXP.c.created <= until)
        if since is not None:
            q = q.where(T_EXP.c.created >= since)
        if submitter is not None:
            q = q.where(T_EXP.c.submitter == submitter)
        return q

    def boards(self) -> list[tuple[str, str, int]]:
        """(dataset, profile, finished experiments) for every leaderboard."""
        q = (select(T_EXP.c.dataset, T_EXP.c.profile, func.count())
             .where(T_EXP.c.status == "finished").group_by(T_EXP.c.dataset, T_EXP.c.profile)
             .order_by(T_EXP.c.dataset, T_EXP.c.profile))
        with self.engine.connect() as c:
            return [(d, p, int(n)) for d, p, n in c.execute(q)]

    def leaderboard(self, dataset: str, profile: str, *, limit: int | None = None, offset: int = 0,
                    after: str | None = None, before: str | None = None, until: str | None = None) -> list[Experiment]:
        """Finished experiments of ``dataset`` x ``profile``, best headline value first
        (undefined last; ties: older first); ``limit`` of them from ``offset`` (or next to an
        experiment: :meth:`leaderboard_page`), ranked in SQL."""
        return self.leaderboard_page(dataset, profile, limit=limit, offset=offset, after=after, before=before,
                                     until=until).experiments

    def leaderboard_page(self, dataset: str, profile: str, *, limit: int | None = None, offset: int = 0,
                         after: str | None = None, before: str | None = None, until: str | None = None) -> "Page":
        """A page of :meth:`leaderboard` (keyset paging as in :meth:`list_page`; ``offset`` of
        the page is the rank of its first row less one; ``until``: a frozen board, the
        experiments created at or before this ISO time only)."""
        order = [(T_EXP.c.headline_value, True), (T_EXP.c.created, False), (T_EXP.c.id, False)]
        return self._page(lambda q: self._filtered(q, dataset, profile, "finished", until), order, limit, offset, after,
                          before)

    def _page(self, filtered: Any, order: list[tuple[Any, bool]], limit: int | None, offset: int, after: str | None,
              before: str | None) -> "Page":
        """Rows of ``filtered(select ...)`` in ``order`` ((column, descending) pairs; the first
        column's undefined values last, the last column unique): by ``offset``, or after /
        before the row of experiment id ``after`` / ``before``."""
        with self.engine.connect() as c:
            cursor = after or before
            if cursor is None:
                q = filtered(select(*_SUMMARY)).order_by(*_order_by(order, True))
                if offset > 0:  # the rows skipped are sorted by their ids only, not whole: 1.5-3x faster
                    ids = filtered(select(T_EXP.c.id)).order_by(*_order_by(order, True)).offset(offset)
                    if limit is not None:
                        ids = ids.limit(limit)
                    q = select(*_SUMMARY).where(T_EXP.c.id.in_(ids.scalar_subquery())).order_by(*_order_by(order, True))
                elif limit is not None:
                    q = q.limit(limit)
                return Page([_row(r, self._results) for r in c.execute(q)], max(0, offset))
            vals = c.execute(select(*(col for col, _d in order)).where(T_EXP.c.id == cursor)).first()
            if vals is None:
                raise KeyError(f"no experiment {cursor}")
            forward = after is not None
            rows = _seek(c, filtered, order, list(vals), forward, limit)
            if not forward:
                rows.reverse()
                if limit is not None and len(rows) < limit:  # at the start: the first page, full
                    return self._page(filtered, order, limit, 0, None, None)
            if rows:
                n_before = _count(c, filtered, order, [rows[0]._mapping[col.name] for col, _d in order])
            else:  # nothing after the cursor: the (empty) page starts after every row
                n_before = int(c.execute(filtered(select(func.count()).select_from(T_EXP))).scalar() or 0)
            return Page([_row(r, self._results) for r in rows], n_before)

    def unfinished(self) -> list[Experiment]:
        """Pending or running experiments (to resume after a restart)."""
        with self.engine.connect() as c:
            return [_row(r, self._results)
                    for r in c.execute(select(*_SUMMARY).where(T_EXP.c.status.in_(_OPEN)).order_by(T_EXP.c.created))]

    def _update_open(self, eid: str, _results: str | None = None, _owner: str | None = None, **values: Any) -> None:
        """Change an open experiment; with ``_owner``, only while that worker holds its lease
        (:class:`LostClaim` otherwise)."""
        where = [T_EXP.c.id == eid, T_EXP.c.status.in_(_OPEN)]
        if _owner is not None:
            where.append(T_EXP.c.claimed_by == _owner)
            values.setdefault("heartbeat", time.time())
        with self.engine.begin() as c:
            n = c.execute(update(T_EXP).where(*where).values(**values)).rowcount
            if n == 1 and _results is not None:  # the results and the finished row in one transaction
                c.execute(insert(T_RES).values(id=eid, evaluation=_results))
            if n == 1 and values.get("status") in ("finished", "failed"):  # recorded: its journal goes
                c.execute(delete(T_JOURNAL).where(T_JOURNAL.c.experiment == eid))
        if n != 1:
            e = self.get(eid, results=False)
            if e is None:
                raise KeyError(f"no experiment {eid}")
            if _owner is not None and not e.done:
                raise LostClaim(f"experiment {eid} is evaluated by another worker now ({e.claimed_by})")
            if _owner is not None:  # (its lease lapsed, e.g. in a database outage, and another worker recorded it)
                raise LostClaim(f"experiment {eid} was recorded ({e.status}) by the worker that took it over")
            raise ImmutableError(f"experiment {eid} is {e.status} and can no longer change")

    def start(self, eid: str, total: int = 0, note: str = "started", *, owner: str | None = None) -> None:
        self._update_open(eid, _owner=owner, status="running", progress_done=0, progress_total=total,
                          progress_note=note)

    def progress(self, eid: str, done: int, total: int, note: str = "", *, owner: str | None = None) -> None:
        self._update_open(eid, _owner=owner, progress_done=done, progress_total=total, progress_note=note)

    def finish(self, eid: str, evaluation: Any, *, headline: str | None, kg_fingerprint: str | None = None,
               dataset_checksum: str | None = None, owner: str | None = None) -> None:
        """Record the results (an :class:`~kgqa.score.evaluate.Evaluation`); the experiment is
        immutable afterwards. ``owner``: only while this worker holds the lease."""
        doc = evaluation.to_json()
        hv = evaluation.aggregate.get(headline) if headline else None
        if hv is not None and not math.isfinite(hv):
            hv = None
        values: dict[str, Any] = dict(
            status="finished", finished=_now(), signature=evaluation.signature, headline=headline,
            headline_value=hv, n_questions=len(evaluation.questions), aggregate=_json(evaluation.aggregate),
            outcomes=_json(evaluation.outcomes), kg_fingerprint=kg_fingerprint, progress_note="finished",
        )
        if dataset_checksum is not None:
            values["dataset_checksum"] = dataset_checksum
        self._update_open(eid, _results=_json(doc), _owner=owner, claimed_by=None, **values)

    def fail(self, eid: str, message: str, *, owner: str | None = None) -> None:
        self._update_open(eid, _owner=owner, status="failed", finished=_now(), error=message, progress_note="failed",
                          claimed_by=None)

    # ------------------------------------------------------------------ leases (kgqa.store.claims)

    def claim(self, eid: str, owner: str, *, stale_s: float | None = None) -> "Claim | None":
        """Take the lease on open experiment ``eid`` for worker ``owner`` (:func:`owner_id`),
        atomically (compare-and-set on the lease column): when nobody holds it, or its holder's
        heartbeat is older than ``stale_s`` seconds, or its holder is a process of this machine
        that is gone. None: another live worker holds it, or it is done."""
        stale_s = LEASE_S if stale_s is None else stale_s
        with self.engine.connect() as c:
            row = c.execute(select(T_EXP.c.status, T_EXP.c.claimed_by, T_EXP.c.heartbeat, T_EXP.c.attempts)
                            .where(T_EXP.c.id == eid)).first()
        if row is None or row.status not in _OPEN:
            return None
        held = row.claimed_by
        lost = held is not None and ((row.heartbeat or 0) < self._lease_cutoff(stale_s) or owner_gone(held))
        if held is not None and not lost:
            return None
        attempts = (row.attempts or 0) + (1 if lost else 0)
        cond = T_EXP.c.claimed_by.is_(None) if held is None else T_EXP.c.claimed_by == held
        with self.engine.begin() as c:
            n = c.execute(update(T_EXP).where(T_EXP.c.id == eid, T_EXP.c.status.in_(_OPEN), cond)
                          .values(claimed_by=owner, heartbeat=time.time(), attempts=attempts)).rowcount
        return Claim(eid, owner, attempts, held if lost else None) if n == 1 else None

    def claim_next(self, owner: str, *, stale_s: float | None = None, batch: int = 16) -> "Claim | None":
        """Take the lease on the oldest open experiment nobody holds (or whose holder is lost,
        as :meth:`claim` judges it) for worker ``owner``: the queue's "next job" (``kgqa
        worker``). Each candidate is taken by the same compare-and-set as :meth:`claim`; on
        PostgreSQL the candidates are read ``FOR UPDATE SKIP LOCKED`` in the claiming
        transaction, so concurrent workers skip each other's candidates instead of racing for
        the same row. None: nothing to take now."""
        cutoff = self._lease_cutoff(LEASE_S if stale_s is None else stale_s)
        here = f"{socket.gethostname()}:"
        free = or_(T_EXP.c.claimed_by.is_(None), T_EXP.c.heartbeat.is_(None), T_EXP.c.heartbeat < cutoff,
                   T_EXP.c.claimed_by.startswith(here, autoescape=True))  # (this machine's: owner_gone decides)
        q = (select(T_EXP.c.id, T_EXP.c.claimed_by, T_EXP.c.heartbeat, T_EXP.c.attempts)
             .where(T_EXP.c.status.in_(_OPEN), free).order_by(T_EXP.c.created, T_EXP.c.id).limit(batch))
        if self.engine.dialect.name == "postgresql":  # one candidate row locked at a time, others' skipped
            with self.engine.begin() as c:
                seen: list[str] = []
                for _ in range(batch):
                    step = q.where(T_EXP.c.id.not_in(seen)) if seen else q
                    r = c.execute(step.limit(1).with_for_update(skip_locked=True)).first()
                    if r is None:
                        return None
                    got = self._take(c, r, owner, cutoff)
                    if got is not None:
                        return got
                    seen.append(r.id)
            return None
        with self.engine.connect() as c:  # SQLite: one writer at a time; each take its own transaction
            rows = c.execute(q).all()
        for r in rows:
            with self.engine.begin() as c:
                got = self._take(c, r, owner, cutoff)
            if got is not None:
                return got
        return None

    @staticmethod
    def _take(c: Any, r: Any, owner: str, cutoff: float) -> "Claim | None":
        """The compare-and-set of one candidate row ``r`` of :meth:`claim_next`."""
        held = r.claimed_by
        lost = held is not None and ((r.heartbeat or 0) < cutoff or owner_gone(held))
        if held is not None and not lost:
            return None
        cond = T_EXP.c.claimed_by.is_(None) if held is None else T_EXP.c.claimed_by == held
        attempts = (r.attempts or 0) + (1 if lost else 0)
        n = c.execute(update(T_EXP).where(T_EXP.c.id == r.id, T_EXP.c.status.in_(_OPEN), cond)
                      .values(claimed_by=owner, heartbeat=time.time(), attempts=attempts)).rowcount
        return Claim(r.id, owner, attempts, held if lost else None) if n == 1 else None

    def heartbeat(self, eid: str, owner: str) -> bool:
        """Renew ``owner``'s lease on ``eid``; False when it no longer holds it."""
        with self.engine.begin() as c:
            return c.execute(update(T_EXP).where(T_EXP.c.id == eid, T_EXP.c.claimed_by == owner)
                             .values(heartbeat=time.time())).rowcount == 1

    def release(self, owners: list[str] | None = None, *, eid: str | None = None, prefixes: list[str] = ()) -> int:
        """Give leases back without counting a lost worker (a server that stops its workers):
        those held by ``owners``, or by any owner starting with one of ``prefixes``
        (``host:pid:``), optionally of experiment ``eid`` only. Returns how many."""
        conds = [T_EXP.c.claimed_by.in_(owners)] if owners else []
        conds += [T_EXP.c.claimed_by.startswith(p, autoescape=True) for p in prefixes]
        if not conds:
            return 0
        q = update(T_EXP).where(or_(*conds), T_EXP.c.status.in_(_OPEN))
        if eid is not None:
            q = q.where(T_EXP.c.id == eid)
        with self.engine.begin() as c:
            n = c.execute(q.values(claimed_by=None, heartbeat=None)).rowcount
            if n:
                self._announce(c)
            return n

    # ------------------------------------------------------------------ waking idle workers

    def _announce(self, c: Any) -> None:
        """Wake the idle workers (:meth:`wait_for_work`) once the transaction on ``c`` commits:
        an experiment was queued or given back (PostgreSQL ``NOTIFY``; nothing on SQLite)."""
        if self.engine.dialect.name == "postgresql":
            c.execute(text(f"NOTIFY {QUEUE_CHANNEL}"))

    def wait_for_work(self, timeout: float) -> bool:
        """Wait until an experiment is queued or given back (:meth:`_announce`), ``timeout``
        seconds at most: True when one was announced. On PostgreSQL a connection of this store
        ``LISTEN``s (an idle worker starts a new experiment at once, on any machine, instead of
        at its next poll); on SQLite it sleeps ``timeout`` (one machine: the poll is cheap). The
        first call only starts listening and returns True (ask the queue again: an experiment
        queued before the listening began is not announced to it)."""
        if self.engine.dialect.name != "postgresql":
            time.sleep(timeout)  # noqa: polling an idle queue
            return False
        dbapi = self.engine.dialect.dbapi
        try:
            if self._listener is None:
                raw = self.engine.raw_connection()
                conn = raw.driver_connection
                raw.detach()  # this store's own connection from now on, never back in the pool
                conn.autocommit = True
                conn.execute(f"LISTEN {QUEUE_CHANNEL}")
                self._listener = conn
                return True
            return any(True for _ in self._listener.notifies(timeout=timeout, stop_after=1))
        except (dbapi.Error, StoreError, OSError):  # the database is away: poll until it is back
            self._stop_listening()
            time.sleep(timeout)  # noqa: polling an idle queue
            return False

    def _stop_listening(self) -> None:
        conn, self._listener = self._listener, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - a connection already broken
                pass

    def claimable(self, *, stale_s: float | None = None) -> list[Experiment]:
        """Open experiments no live worker holds (to queue; oldest first)."""
        cutoff = self._lease_cutoff(LEASE_S if stale_s is None else stale_s)
        return [e for e in self.unfinished()
                if e.claimed_by is None or (e.heartbeat or 0) < cutoff or owner_gone(e.claimed_by)]

    # ------------------------------------------------------------------ live-system journal

    def journal(self, eid: str, *, questions: list[str] | None = None) -> dict[str, str]:
        """The live-system answers journalled for experiment ``eid``: {question id: record
        (JSON text)} (:class:`kgqa.store.journal.StoreJournal`); ``questions``: only these."""
        q = select(T_JOURNAL.c.question, T_JOURNAL.c.record).where(T_JOURNAL.c.experiment == eid)
        if questions is None:
            with self.engine.connect() as c:
                return {k: r for k, r in c.execute(q)}
        out: dict[str, str] = {}
        with self.engine.connect() as c:
            for i in range(0, len(questions), JOURNAL_ROWS):  # (SQLite's limit on bound parameters)
                part = q.where(T_JOURNAL.c.question.in_(questions[i:i + JOURNAL_ROWS]))
                out.update({k: r for k, r in c.execute(part)})
        return out

    def journal_ids(self, eid: str) -> list[str]:
        """The questions experiment ``eid``'s journal has a record of (cheap: no records read)."""
        with self.engine.connect() as c:
            return list(c.execute(select(T_JOURNAL.c.question).where(T_JOURNAL.c.experiment == eid)).scalars())

    def journal_write(self, eid: str, records: dict[str, str], *, owner: str | None = None) -> bool:
        """Journal live-system answers of open experiment ``eid`` ({question id: record}; a
        question's record replaces an earlier one), in one transaction, while worker ``owner``
        holds its lease (the lease row is locked meanwhile, and its heartbeat renewed). False:
        ``owner`` no longer holds it (another worker took it over, e.g. after a database outage
        longer than the lease) or the experiment is recorded. A worker that lost the lease still
        adds its answers for questions the journal has no record of (they are facts about the
        live system, which the worker that took over then need not ask again), never replacing
        a row, and never once the experiment is recorded (that transaction deletes the journal;
        the experiment's row is locked by both)."""
        if not records:
            return True
        where = [T_EXP.c.id == eid, T_EXP.c.status.in_(_OPEN)]
        dialect = pg_dialect if self.engine.dialect.name == "postgresql" else sqlite_dialect
        rows = [{"experiment": eid, "question": q, "record": r} for q, r in records.items()]
        with self.engine.begin() as c:
            held = True
            if owner is not None:
                held = c.execute(update(T_EXP).where(*where, T_EXP.c.claimed_by == owner)
                                 .values(heartbeat=time.time())).rowcount == 1
            if not held or owner is None:  # (the row locked: a concurrent record waits, or is seen)
                if c.execute(update(T_EXP).where(*where).values(status=T_EXP.c.status)).rowcount != 1:
                    return False
            for i in range(0, len(rows), JOURNAL_ROWS):  # (SQLite's limit on bound parameters)
                stmt = dialect.insert(T_JOURNAL).values(rows[i:i + JOURNAL_ROWS])
                keys = [T_JOURNAL.c.experiment, T_JOURNAL.c.question]
                c.execute(stmt.on_conflict_do_update(index_elements=keys, set_={"record": stmt.excluded.record})
                          if held else stmt.on_conflict_do_nothing(index_elements=keys))
        return held

    def journal_clear(self, eid: str) -> None:
        """Forget experiment ``eid``'s journalled answers (a fresh start)."""
        with self.engine.begin() as c:
            c.execute(delete(T_JOURNAL).where(T_JOURNAL.c.experiment == eid))

    def delete(self, eid: str) -> bool:
        """Remove an experiment (its files stay while another experiment uses them)."""
        with self.engine.begin() as c:
            c.execute(delete(T_JOURNAL).where(T_JOURNAL.c.experiment == eid))
            c.execute(delete(T_RES).where(T_RES.c.id == eid))
            n = c.execute(delete(T_EXP).where(T_EXP.c.id == eid)).rowcount
            if n:
                used = set()
                for col in (T_EXP.c.run_file, T_EXP.c.dataset_file, T_EXP.c.kg_file):
                    used |= {r[0] for r in c.execute(select(col).where(col.is_not(None)))}
                orphans = [r[0] for r in c.execute(select(T_FILES.c.sha256)) if r[0] not in used]
                if orphans:
                    c.execute(delete(T_FILES).where(T_FILES.c.sha256.in_(orphans)))
        return bool(n)


@dataclass
class Page:
    """One page of a listing: its experiments and how many of the listing come before the
    first one (its offset; on a leaderboard, the first row's rank less one)."""

    experiments: list[Experiment]
    offset: int


def _order_by(order: list[tuple[Any, bool]], forward: bool) -> list[Any]:
    """ORDER BY of ``order`` read forward, or backward (every direction flipped; the first
    column's undefined values then come first)."""
    out = []
    for i, (col, desc) in enumerate(order):
        key = col.desc() if desc == forward else col.asc()
        out.append((key.nulls_last() if forward else key.nulls_first()) if i == 0 else key)
    return out


def _beyond(order: list[tuple[Any, bool]], vals: list[Any]) -> Any:
    """Rows strictly after ``vals`` in ``order`` (defined values only): ``c1 <= v1 AND (c1 < v1
    OR (c1 = v1 AND ...))`` for a descending first column, so an index on it bounds the scan."""
    (col, desc), v = order[0], vals[0]
    past = col < v if desc else col > v
    if len(order) == 1:
        return past
    return and_(col <= v if desc else col >= v, or_(past, and_(col == v, _beyond(order[1:], vals[1:]))))


def _segments(order: list[tuple[Any, bool]], vals: list[Any], forward: bool) -> list[Any]:
    """WHERE clauses, in reading order, of the rows after (``forward``) or before the row
    with the order-column values ``vals``. Undefined values of the first column come last
    (going forward); only the first column may have them."""
    dirs = order if forward else [(c, not d) for c, d in order]
    first, v = order[0][0], vals[0]
    if not first.nullable:
        return [_beyond(dirs, vals)]
    if v is not None:
        return [_beyond(dirs, vals), first.is_(None)] if forward else [_beyond(dirs, vals)]
    among_undefined = and_(first.is_(None), _beyond(dirs[1:], vals[1:]))
    return [among_undefined] if forward else [among_undefined, first.is_not(None)]


def _seek(c: Any, filtered: Any, order: list[tuple[Any, bool]], vals: list[Any], forward: bool,
          limit: int | None) -> list[Any]:
    """Up to ``limit`` rows right after (or, nearest first, right before) ``vals``."""
    rows: list[Any] = []
    for where in _segments(order, vals, forward):
        q = filtered(select(*_SUMMARY)).where(where).order_by(*_order_by(order, forward))
        if limit is not None:
            q = q.limit(limit - len(rows))
        rows += c.execute(q).all()
        if limit is not None and len(rows) >= limit:
            break
    return rows


def _count(c: Any, filtered: Any, order: list[tuple[Any, bool]], vals: list[Any]) -> int:
    """How many rows come before the row with the order-column values ``vals``."""
    return sum(int(c.execute(filtered(select(func.count()).select_from(T_EXP)).where(w)).scalar() or 0)
               for w in _segments(order, vals, False))


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()
