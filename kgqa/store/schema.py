"""The experiment store's tables (SQLAlchemy 2 Core) and its versioned schema migrations.

The schema version lives in the table ``kgqa_schema`` (one row). A new store gets the current
tables and is stamped :data:`VERSION`; an older store gets :data:`MIGRATIONS` applied in order,
each in its own transaction. A store written by a newer kgqa (a version above
:data:`VERSION`) is refused rather than guessed at. Never edit a released migration: add one.

The same code serves SQLite (default) and PostgreSQL (``postgresql+psycopg://...``).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    Column, Connection, Float, ForeignKey, Index, Integer, LargeBinary, MetaData, String, Table, Text, inspect,
    select, text,
)

metadata = MetaData()

schema_version = Table(
    "kgqa_schema", metadata,
    Column("id", Integer, primary_key=True),
    Column("version", Integer, nullable=False),
)

#: Uploaded files (runs, datasets, RDF), content-addressed: stored once whatever their name.
files = Table(
    "files", metadata,
    Column("sha256", String(64), primary_key=True),
    Column("size", Integer, nullable=False),
    Column("content", LargeBinary, nullable=False),
    Column("created", String(40), nullable=False),
)

#: One experiment: what was scored (inputs), how (settings), what came out (results).
experiments = Table(
    "experiments", metadata,
    Column("id", String(32), primary_key=True),
    Column("status", String(16), nullable=False),  # pending | running | finished | failed
    Column("created", String(40), nullable=False),
    Column("finished", String(40)),
    # inputs
    Column("dataset", String(200), nullable=False),       # registry name, or the uploaded file's name
    Column("dataset_checksum", String(80)),               # sha256 of the dataset file(s)
    Column("dataset_file", String(64), ForeignKey("files.sha256")),  # uploaded dataset (None: registry)
    Column("dataset_filename", String(255)),
    Column("run_name", String(200), nullable=False),
    Column("run_file", String(64), ForeignKey("files.sha256")),      # the run file (None: live system)
    Column("run_filename", String(255)),
    Column("system_url", Text),
    Column("system_protocol", String(40)),
    # settings
    Column("profile", String(80), nullable=False),
    Column("measures", Text),
    Column("lang", String(80), nullable=False, default="all"),
    Column("kg", Text),                                   # KG label (a configured name, an upload, an endpoint)
    Column("kg_file", String(64), ForeignKey("files.sha256")),
    Column("kg_filename", String(255)),
    Column("gold_answers", String(16), nullable=False, default="stored"),
    Column("options", Text),                              # JSON: further settings (timeout, ...)
    # results
    Column("kg_fingerprint", Text),
    Column("kgqa_version", String(40), nullable=False),
    Column("signature", Text),
    Column("headline", String(80)),                       # the measure leaderboards rank by
    Column("headline_value", Float),
    Column("n_questions", Integer),
    Column("aggregate", Text),                            # JSON {measure label: value}
    Column("outcomes", Text),                             # JSON {outcome: count}
    Column("evaluation", Text),                           # schema 1 only: the results now live in `results`
    Column("error", Text),
    # progress (only while pending/running)
    Column("progress_done", Integer, nullable=False, default=0),
    Column("progress_total", Integer, nullable=False, default=0),
    Column("progress_note", Text),
    # the lease of the worker evaluating it (schema 4; kgqa.store.claims): "host:pid:nonce", the
    # time of its last heartbeat (seconds since the epoch), and how often a worker was lost on it
    Column("claimed_by", String(160)),
    Column("heartbeat", Float),
    Column("attempts", Integer, nullable=False, default=0, server_default="0"),
    # the account that submitted it (schema 5; None: made without accounts, from the command line
    # or a local server)
    Column("submitter", String(80)),
)

#: The per-question results of a finished experiment (JSON: Evaluation.to_json()), apart from its
#: row so that listing and ranking read small rows only (schema 2; schema 1 kept them in
#: ``experiments.evaluation``).
results = Table(
    "results", metadata,
    Column("id", String(32), ForeignKey("experiments.id", ondelete="CASCADE"), primary_key=True),
    Column("evaluation", Text, nullable=False),
)

#: Accounts of a hosted challenge (schema 5): organisers and participants; ``password`` is an
#: argon2id hash (PHC string), never the password.
accounts = Table(
    "accounts", metadata,
    Column("name", String(80), primary_key=True),
    Column("role", String(16), nullable=False),  # organiser | participant
    Column("password", Text, nullable=False),
    Column("created", String(40), nullable=False),
)

#: Server-side login sessions (schema 5): the SHA-256 of the session cookie's random token (the
#: token itself is never stored), its account and when it lapses (seconds since the epoch).
sessions = Table(
    "sessions", metadata,
    Column("token_sha256", String(64), primary_key=True),
    Column("account", String(80), ForeignKey("accounts.name", ondelete="CASCADE"), nullable=False),
    Column("created", String(40), nullable=False),
    Column("expires", Float, nullable=False),
)

#: Who did what when (schema 5): logins, submissions, freezes, account changes.
audit = Table(
    "audit", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", String(40), nullable=False),
    Column("account", String(80)),
    Column("action", String(40), nullable=False),
    Column("target", String(200)),
    Column("detail", Text),
)

#: Leaderboards an organiser froze from the web (schema 5): a dataset's boards rank the
#: experiments created up to ``at``.
freezes = Table(
    "freezes", metadata,
    Column("dataset", String(200), primary_key=True),
    Column("at", String(40), nullable=False),
    Column("by", String(80)),
)

#: Questions of a hidden-gold dataset whose outcomes an organiser published from the web (schema 5;
#: besides those ``kgqa web --hidden-gold DATASET=ID,...`` names). Publishing is never undone: what
#: was shown cannot be unseen.
published = Table(
    "published", metadata,
    Column("dataset", String(200), primary_key=True),
    Column("question", String(200), primary_key=True),
    Column("at", String(40), nullable=False),
    Column("by", String(80)),
)

#: The answers of a live system an experiment asked, journalled as they arrive (schema 6): one row
#: per question (``record``: the live client's journal record, JSON; a later record of a question,
#: a transient failure asked again, replaces it). A worker that takes over an experiment (its
#: first worker killed, on this machine or another) asks only the questions without a row. Deleted
#: with the experiment's result (:meth:`kgqa.store.Store.finish`, ``fail``, ``delete``).
journal = Table(
    "journal", metadata,
    Column("experiment", String(32), ForeignKey("experiments.id", ondelete="CASCADE"), primary_key=True),
    Column("question", String(500), primary_key=True),
    Column("record", Text, nullable=False),
)

#: schema 5's tables and index (what :func:`_v4_to_v5` adds to an older store)
_ACCOUNT_TABLES = (accounts, sessions, audit, freezes, published)

Index("ix_experiments_submitter", experiments.c.submitter, experiments.c.created, experiments.c.id)
Index("ix_experiments_board", experiments.c.dataset, experiments.c.profile, experiments.c.status)
# listing pages at scale (issue 29): newest first, by status, and a board's ranking, from the index alone
# (schema 3: each sort's index ends with the id, the last tie-breaker, so that a numbered page
# skips its OFFSET rows in the index alone)
_LISTING = {
    "ix_experiments_created": (experiments.c.created, experiments.c.id),
    "ix_experiments_status_created_id": (experiments.c.status, experiments.c.created, experiments.c.id),
    "ix_experiments_status_board": (experiments.c.status, experiments.c.dataset, experiments.c.profile),  # covers boards()
    "ix_experiments_rank_id": (experiments.c.dataset, experiments.c.profile, experiments.c.status,
                               experiments.c.headline_value, experiments.c.created, experiments.c.id),
    "ix_experiments_headline_id": (experiments.c.headline_value, experiments.c.created, experiments.c.id),
    "ix_experiments_run_id": (experiments.c.run_name, experiments.c.created, experiments.c.id),
}
#: schema 2's listing indices that schema 3's (the same columns, then the id) replace
_SUPERSEDED = ("ix_experiments_status_created", "ix_experiments_rank", "ix_experiments_headline", "ix_experiments_run")
for _name, _cols in _LISTING.items():
    Index(_name, *_cols)


#: The version :data:`metadata` describes. A new store is created from :data:`metadata` and
#: stamped with it (Alembic's "create_all, then stamp head").
VERSION = 6

#: Upgrades of existing stores: ``MIGRATIONS[v]`` takes version ``v`` to ``v + 1`` (ALTER TABLE
#: ...). Append-only; when you change :data:`metadata`, add the migration doing the same to
#: older stores and raise :data:`VERSION`.
def _v1_to_v2(conn: Connection) -> None:
    """Listing pages of large stores (home, leaderboards, compare picker): the per-question
    results move to their own table (``results``), so an experiment's row is small; indices for
    newest-first, by-status and ranking queries."""
    results.create(conn, checkfirst=True)
    conn.execute(results.insert().from_select(
        ["id", "evaluation"],
        select(experiments.c.id, experiments.c.evaluation).where(experiments.c.evaluation.is_not(None))))
    conn.execute(experiments.update().where(experiments.c.evaluation.is_not(None)).values(evaluation=None))
    for ix in experiments.indexes:
        if ix.name in _LISTING:
            ix.create(conn, checkfirst=True)


def _v2_to_v3(conn: Connection) -> None:
    """Numbered (OFFSET) pages of large stores: the listing indices end with the id (the last
    tie-breaker of every order), so the rows a page skips are read from the index alone."""
    for name in _SUPERSEDED:
        conn.execute(text(f"DROP INDEX IF EXISTS {name}"))
    for ix in experiments.indexes:
        if ix.name in _LISTING:
            ix.create(conn, checkfirst=True)


def _v3_to_v4(conn: Connection) -> None:
    """Jobs that survive a crash: the lease columns (who evaluates an experiment, its last
    heartbeat, how often its worker was lost). Idempotent: a column already there is kept."""
    have = {c["name"] for c in inspect(conn).get_columns("experiments")}
    for name, ddl in (("claimed_by", "VARCHAR(160)"), ("heartbeat", "FLOAT"),
                      ("attempts", "INTEGER NOT NULL DEFAULT 0")):
        if name not in have:
            conn.execute(text(f"ALTER TABLE experiments ADD COLUMN {name} {ddl}"))


def _v4_to_v5(conn: Connection) -> None:
    """Accounts for a hosted challenge: the tables of accounts, login sessions, the audit log and
    frozen leaderboards, and who submitted each experiment (``submitter``, None for the
    experiments made before). Idempotent: a table, column or index already there is kept."""
    for table in _ACCOUNT_TABLES:
        table.create(conn, checkfirst=True)
    if "submitter" not in {c["name"] for c in inspect(conn).get_columns("experiments")}:
        conn.execute(text("ALTER TABLE experiments ADD COLUMN submitter VARCHAR(80)"))
    for ix in experiments.indexes:
        if ix.name == "ix_experiments_submitter":
            ix.create(conn, checkfirst=True)


def _v5_to_v6(conn: Connection) -> None:
    """Live-system answers journalled in the store (``journal``), so that a worker on any
    machine resumes a killed worker's experiment. Idempotent: a table already there is kept."""
    journal.create(conn, checkfirst=True)


MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4, 4: _v4_to_v5,
                                                       5: _v5_to_v6}


class SchemaError(RuntimeError):
    """The store's schema cannot be used by this kgqa (written by a newer version)."""


def current_version(conn: Connection) -> int:
    if not inspect(conn).has_table("kgqa_schema"):
        return 0
    v = conn.execute(select(schema_version.c.version).where(schema_version.c.id == 1)).scalar()
    return int(v or 0)


def migrate(engine) -> int:
    """Bring the store's schema to :data:`VERSION`; returns the version found before (0: new).
    One migrator at a time: PostgreSQL takes an advisory lock, SQLite a write lock (``BEGIN
    IMMEDIATE``) before looking at the schema, so processes that open a new store together
    wait for the first one's tables instead of creating them twice."""
    with engine.connect() as conn:  # the common case, an up-to-date store: read only, no lock
        if inspect(conn).has_table("kgqa_schema") and current_version(conn) == VERSION:
            return VERSION
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(7242)"))
        elif engine.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        found = _migrate(conn)
        conn.commit()
    return found


def _migrate(conn: Connection) -> int:
    """Create or upgrade the schema on ``conn`` (inside the migrators' lock)."""
    if not inspect(conn).has_table("kgqa_schema"):
        metadata.create_all(conn)
        conn.execute(schema_version.insert().values(id=1, version=VERSION))
        return 0
    found = current_version(conn)
    if found > VERSION:
        raise SchemaError(f"the store has schema version {found}, this kgqa knows up to {VERSION}: "
                          "upgrade kgqa to open it")
    for v in range(found, VERSION):
        if v not in MIGRATIONS:
            raise SchemaError(f"no migration from schema version {v} (store damaged?)")
        MIGRATIONS[v](conn)
        conn.execute(schema_version.update().where(schema_version.c.id == 1).values(version=v + 1))
    return found
