"""Accounts of a hosted challenge, kept in the experiment store (schema 5): organisers and
participants with argon2id-hashed passwords (argon2-cffi; the password is never stored nor
logged), server-side login sessions (the store keeps the SHA-256 of each session's random
token, never the token), the audit log (who did what when) and leaderboards frozen from the web.

A store without accounts serves a single user (``kgqa web`` on loopback as it always did); once
it holds an account, ``kgqa web`` asks everyone to log in (:mod:`kgqa.web.accounts`).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass
from functools import cache
from datetime import datetime, timezone
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from kgqa.model import InputError
from kgqa.store.schema import accounts as T_ACC
from kgqa.store.schema import audit as T_AUDIT
from kgqa.store.schema import freezes as T_FREEZE
from kgqa.store.schema import published as T_PUB
from kgqa.store.schema import sessions as T_SES
from kgqa.store.store import Store

ROLES = ("organiser", "participant")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")
#: the shortest password an account may have
MIN_PASSWORD = 10
#: how long a login lasts (seconds): 12 hours
SESSION_S = 12 * 3600

#: argon2id with the library's parameters (RFC 9106's low-memory choice: 64 MiB, 3 passes); a hash
#: made with other parameters is redone at the next login
HASHER = PasswordHasher()


@cache
def _dummy(hasher: PasswordHasher) -> str:
    """A hash verified for unknown names: refusing one takes as long as a wrong password."""
    return hasher.hash(secrets.token_urlsafe(16))


@dataclass(frozen=True)
class Account:
    name: str
    role: str
    created: str

    @property
    def organiser(self) -> bool:
        return self.role == "organiser"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def check_name(name: str) -> str:
    if not NAME.match(name or ""):
        raise InputError("account name", f"expected 1-80 letters, digits, '.', '_' or '-' (starting with a letter "
                                         f"or digit), got {name!r}")
    return name


def check_password(password: str) -> str:
    if len(password or "") < MIN_PASSWORD:
        raise InputError("password", f"expected at least {MIN_PASSWORD} characters")
    return password


class Accounts:
    """The accounts, sessions, audit log and frozen leaderboards of ``store``."""

    def __init__(self, store: Store):
        self.store = store
        self.engine = store.engine

    # ------------------------------------------------------------------ accounts

    def add(self, name: str, role: str, password: str) -> Account:
        """A new account; raises :class:`InputError` for a bad name, role or password, or a
        name already taken."""
        check_name(name)
        if role not in ROLES:
            raise InputError("role", f"expected one of {', '.join(ROLES)}, got {role!r}")
        check_password(password)
        created = _now()
        try:
            with self.engine.begin() as c:
                c.execute(insert(T_ACC).values(name=name, role=role, password=HASHER.hash(password), created=created))
        except IntegrityError:
            raise InputError(name, "an account of this name exists already") from None
        return Account(name, role, created)

    def set_password(self, name: str, password: str) -> None:
        """A new password for ``name``; its open sessions end."""
        check_password(password)
        with self.engine.begin() as c:
            n = c.execute(update(T_ACC).where(T_ACC.c.name == name).values(password=HASHER.hash(password))).rowcount
            c.execute(delete(T_SES).where(T_SES.c.account == name))
        if n != 1:
            raise InputError(name, "no such account")

    def remove(self, name: str) -> bool:
        """Delete an account and its sessions (its experiments stay, with its name)."""
        with self.engine.begin() as c:
            c.execute(delete(T_SES).where(T_SES.c.account == name))
            return c.execute(delete(T_ACC).where(T_ACC.c.name == name)).rowcount == 1

    def get(self, name: str) -> Account | None:
        with self.engine.connect() as c:
            r = c.execute(select(T_ACC.c.name, T_ACC.c.role, T_ACC.c.created).where(T_ACC.c.name == name)).first()
        return Account(*r) if r else None

    def list(self) -> list[Account]:
        with self.engine.connect() as c:
            return [Account(*r) for r in c.execute(select(T_ACC.c.name, T_ACC.c.role, T_ACC.c.created)
                                                   .order_by(T_ACC.c.role, T_ACC.c.name))]

    def any(self) -> bool:
        """The store holds at least one account (``kgqa web`` then asks everyone to log in)."""
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(T_ACC)).scalar() > 0

    def verify(self, name: str, password: str) -> Account | None:
        """The account when ``password`` is its password (None otherwise; an unknown name takes
        as long as a wrong password). Rehashes a hash made with older parameters."""
        with self.engine.connect() as c:
            r = c.execute(select(T_ACC).where(T_ACC.c.name == name)).first() if NAME.match(name or "") else None
        stored = r.password if r is not None else _dummy(HASHER)
        try:
            HASHER.verify(stored, password or "")
        except (VerificationError, InvalidHashError):
            return None
        if r is None:
            return None
        if HASHER.check_needs_rehash(stored):
            with self.engine.begin() as c:
                c.execute(update(T_ACC).where(T_ACC.c.name == name).values(password=HASHER.hash(password)))
        return Account(r.name, r.role, r.created)

    # ------------------------------------------------------------------ sessions

    def open_session(self, name: str, ttl_s: float = SESSION_S) -> str:
        """A new login session of ``name``: the random token the cookie carries."""
        token = secrets.token_urlsafe(32)
        with self.engine.begin() as c:
            c.execute(delete(T_SES).where(T_SES.c.expires < time.time()))  # lapsed sessions go as new ones come
            c.execute(insert(T_SES).values(token_sha256=_sha(token), account=name, created=_now(),
                                           expires=time.time() + ttl_s))
        return token

    def session(self, token: str) -> Account | None:
        """The account logged in with ``token`` (None: no such session, or it lapsed)."""
        if not token or len(token) > 128:
            return None
        q = (select(T_ACC.c.name, T_ACC.c.role, T_ACC.c.created).select_from(T_SES.join(T_ACC, T_ACC.c.name == T_SES.c.account))
             .where(T_SES.c.token_sha256 == _sha(token), T_SES.c.expires >= time.time()))
        with self.engine.connect() as c:
            r = c.execute(q).first()
        return Account(*r) if r else None

    def close_session(self, token: str) -> None:
        with self.engine.begin() as c:
            c.execute(delete(T_SES).where(T_SES.c.token_sha256 == _sha(token)))

    # ------------------------------------------------------------------ audit log

    def log(self, account: str | None, action: str, target: str | None = None, detail: str | None = None) -> None:
        """One audit entry: ``account`` did ``action`` (login, submit, freeze, ...) on
        ``target`` (an experiment id, a dataset, an account)."""
        with self.engine.begin() as c:
            c.execute(insert(T_AUDIT).values(at=_now(), account=account, action=action[:40],
                                             target=(target or None) and target[:200], detail=detail))

    def log_page(self, *, limit: int = 100, offset: int = 0, account: str | None = None) -> list[dict[str, Any]]:
        """Audit entries, newest first."""
        q = select(T_AUDIT).order_by(T_AUDIT.c.id.desc()).limit(limit).offset(offset)
        if account is not None:
            q = q.where(T_AUDIT.c.account == account)
        with self.engine.connect() as c:
            return [dict(r._mapping) for r in c.execute(q)]

    def log_count(self) -> int:
        with self.engine.connect() as c:
            return int(c.execute(select(func.count()).select_from(T_AUDIT)).scalar() or 0)

    # ------------------------------------------------------------------ frozen leaderboards

    def freeze(self, dataset: str, by: str | None, at: str | None = None) -> str:
        """Freeze ``dataset``'s leaderboards at ``at`` (default: now); returns the time."""
        at = at or _now()
        with self.engine.begin() as c:
            if c.execute(update(T_FREEZE).where(T_FREEZE.c.dataset == dataset).values(at=at, by=by)).rowcount == 0:
                c.execute(insert(T_FREEZE).values(dataset=dataset, at=at, by=by))
        return at

    def unfreeze(self, dataset: str) -> bool:
        with self.engine.begin() as c:
            return c.execute(delete(T_FREEZE).where(T_FREEZE.c.dataset == dataset)).rowcount == 1

    def publish(self, dataset: str, questions: list[str], by: str | None) -> list[str]:
        """Publish the outcomes of ``questions`` of hidden-gold ``dataset``; returns those not
        published before."""
        new = [q for q in dict.fromkeys(questions) if q and q not in self.published(dataset)]
        if new:
            with self.engine.begin() as c:
                c.execute(insert(T_PUB), [dict(dataset=dataset, question=q[:200], at=_now(), by=by) for q in new])
        return new

    def published(self, dataset: str) -> frozenset[str]:
        """The questions of ``dataset`` published from the web."""
        with self.engine.connect() as c:
            return frozenset(q for (q,) in c.execute(select(T_PUB.c.question).where(T_PUB.c.dataset == dataset)))

    def frozen(self) -> dict[str, str]:
        """dataset -> the ISO time its leaderboards were frozen at."""
        with self.engine.connect() as c:
            return {d: at for d, at in c.execute(select(T_FREEZE.c.dataset, T_FREEZE.c.at))}
