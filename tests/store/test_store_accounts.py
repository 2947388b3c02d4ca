"""Accounts in the store (schema 5): argon2id hashes, sessions kept as hashes of their tokens,
the audit log, frozen leaderboards, experiments' submitters, and the migration from schema 4."""

from __future__ import annotations

import pytest
from argon2 import PasswordHasher
from sqlalchemy import create_engine, text

from kgqa.model import InputError
from kgqa.store import Store, schema
from kgqa.store import accounts as store_accounts
from kgqa.store.accounts import Accounts


@pytest.fixture(autouse=True)
def _cheap_hashes(monkeypatch):
    monkeypatch.setattr(store_accounts, "HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))


def test_accounts_passwords_sessions_and_the_audit_log(tmp_path):
    st = Store(tmp_path / "s.sqlite")
    acc = Accounts(st)
    assert not acc.any()
    acc.add("org", "organiser", "a long secret")
    acc.add("team-1", "participant", "another secret")
    assert acc.any() and [a.name for a in acc.list()] == ["org", "team-1"]
    assert acc.verify("org", "a long secret").organiser and acc.verify("org", "wrong") is None
    assert acc.verify("nobody", "a long secret") is None and acc.verify("", "") is None
    for name, role, pw, said in (("org", "participant", "a long secret", "exists already"),
                                 ("x y", "participant", "a long secret", "account name"),
                                 ("z", "admin", "a long secret", "role"), ("z", "participant", "short", "10 characters")):
        with pytest.raises(InputError, match=said):
            acc.add(name, role, pw)
    token = acc.open_session("team-1")
    assert acc.session(token).name == "team-1" and acc.session(token + "x") is None and acc.session("") is None
    with st.engine.connect() as c:
        stored = [r[0] for r in c.execute(text("SELECT token_sha256 FROM sessions"))]
        hashes = [r[0] for r in c.execute(text("SELECT password FROM accounts"))]
    assert token not in stored and len(stored[0]) == 64
    assert all(h.startswith("$argon2id$") and "secret" not in h for h in hashes)
    acc.set_password("team-1", "a new secret!")  # ends its sessions
    assert acc.session(token) is None and acc.verify("team-1", "a new secret!") is not None
    lapsed = acc.open_session("org", ttl_s=-1)
    assert acc.session(lapsed) is None
    acc.log("org", "freeze", "ck25", "at now")
    acc.log(None, "account-add", "team-1")
    assert [(r["account"], r["action"]) for r in acc.log_page()] == [(None, "account-add"), ("org", "freeze")]
    assert acc.log_count() == 2 and len(acc.log_page(account="org")) == 1
    at = acc.freeze("ck25", "org", "2026-12-01T00:00:00+00:00")
    assert acc.frozen() == {"ck25": at} and acc.freeze("ck25", "org") != at and acc.unfreeze("ck25") and acc.frozen() == {}
    assert acc.publish("ck25", ["ck25:2-en", "ck25:3-en", "ck25:2-en"], "org") == ["ck25:2-en", "ck25:3-en"]
    assert acc.publish("ck25", ["ck25:3-en"], "org") == [] and acc.published("ck25") == {"ck25:2-en", "ck25:3-en"}
    assert acc.published("demo") == frozenset()
    assert acc.remove("team-1") and acc.get("team-1") is None and not acc.remove("team-1")
    st.close()


def test_submitters_filter_listings_and_counts(tmp_path):
    st = Store(tmp_path / "s.sqlite")
    ids = {n: [st.create(dataset="demo", run_name=f"{n}{i}", profile="kgqa", system_url="http://x", submitter=n)
               for i in range(k)] for n, k in (("a", 2), ("b", 3))}
    plain = st.create(dataset="demo", run_name="cli", profile="kgqa", system_url="http://x")
    assert st.get(plain).submitter is None and st.get(ids["a"][0]).submitter == "a"
    assert st.count() == 6 and st.count(submitter="a") == 2 and st.count(submitter="b") == 3
    assert {e.id for e in st.list(submitter="b")} == set(ids["b"])
    assert st.count(submitter="a", since="2000-01-01") == 2 and st.count(submitter="a", since="2999-01-01") == 0
    page = st.list_page(submitter="b", limit=2)
    assert len(page.experiments) == 2 and all(e.submitter == "b" for e in page.experiments)
    st.close()


def test_a_schema_4_store_gets_the_account_tables_and_is_left_as_it_was(tmp_path):
    path = tmp_path / "v4.sqlite"
    st = Store(path)
    eid = st.create(dataset="demo", run_name="r", profile="kgqa", system_url="http://x")
    st.close()
    eng = create_engine(f"sqlite:///{path}")
    with eng.begin() as c:  # what kgqa with schema version 4 wrote
        for t in ("sessions", "audit", "freezes", "published", "accounts"):
            c.execute(text(f"DROP TABLE {t}"))
        c.execute(text("DROP INDEX ix_experiments_submitter"))
        c.execute(text("ALTER TABLE experiments DROP COLUMN submitter"))
        c.execute(text("UPDATE kgqa_schema SET version = 4"))
    eng.dispose()
    s = Store(path)
    assert s.schema_found == 4 and s.get(eid).submitter is None and s.get(eid).run_name == "r"
    with s.engine.connect() as c:
        assert c.execute(text("SELECT version FROM kgqa_schema")).scalar() == schema.VERSION == 6
        names = {r[0] for r in c.execute(text("SELECT name FROM sqlite_master"))}
    assert {"accounts", "sessions", "audit", "freezes", "published", "ix_experiments_submitter"} <= names
    assert not Accounts(s).any()  # no accounts: the server stays a local one
    s.close()
    # idempotent: the migration run again on a store that has its tables changes nothing
    eng = create_engine(f"sqlite:///{path}")
    with eng.begin() as c:
        schema.MIGRATIONS[4](c)
        c.execute(text("UPDATE kgqa_schema SET version = 4"))
    eng.dispose()
    assert Store(path).schema_found == 4 and Store(path).schema_found == schema.VERSION
