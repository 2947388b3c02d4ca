"""Accounts on the web platform (a hosted challenge): who is logged in, what an anonymous
visitor may read, failed-login throttling and submission quotas.

A server whose store holds accounts (:mod:`kgqa.store.accounts`; ``kgqa web users add``) asks
everyone to log in: the :class:`Login` middleware reads the login cookie
(``kgqa_login_PORT``: a random token, HttpOnly, SameSite=Lax, Secure over https; the store keeps
its SHA-256 and the session's end), puts the account at ``request.state.user`` and sends an
anonymous visitor of anything but the login page, the static files and the leaderboards to the
login page. Organisers see and do everything; a participant sees and re-runs only the
experiments it submitted (others' answer 404, as if absent) and the public leaderboards. A
store without accounts serves one local user exactly as before (``request.state.user`` is None
and nothing is gated).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse

from kgqa.store.accounts import SESSION_S, Account, Accounts
from kgqa.web.security import SAFE_METHODS, cookies_of, plain_error

#: what an anonymous visitor of a server with accounts may read (path prefixes)
PUBLIC = ("/login", "/static/", "/leaderboards", "/leaderboard/")


def login_cookie(port: int | None) -> str:
    return f"kgqa_login_{port}"


def port_of(scope: Any, configured: int | None) -> int | None:
    """The port cookies are named after (as :class:`kgqa.web.security.Security` names them)."""
    return configured or (scope.get("server") or (None, 0))[1]


def cookie_header(port: int | None, token: str, *, secure: bool, max_age: int = int(SESSION_S)) -> str:
    """The Set-Cookie value of a login (an empty ``token`` with ``max_age=0`` ends it)."""
    return (f"{login_cookie(port)}={token}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Lax"
            + ("; Secure" if secure else ""))


def safe_next(target: str | None) -> str:
    """A local path to go to after logging in (anything else, an open redirect, gives ``/``)."""
    t = target or "/"
    if not t.startswith("/") or t.startswith("//") or "\\" in t or any(ord(ch) < 32 for ch in t):
        return "/"
    return t


class Login:
    """ASGI middleware (inside :class:`kgqa.web.security.Security`): the logged-in account of
    each request, and the login wall of a server with accounts (see the module docstring)."""

    def __init__(self, app: Any, *, accounts: Accounts | None, port: int | None = None):
        self.app = app
        self.accounts = accounts
        self.port = port

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self.accounts is None or scope.get("path", "").startswith("/static/"):
            return await self.app(scope, receive, send)
        state = scope.setdefault("state", {})
        port = port_of(scope, self.port)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        token = cookies_of(headers.get("cookie", "")).get(login_cookie(port), "")
        user = await run_in_threadpool(self.accounts.session, token) if token else None
        state["user"], state["login_token"] = user, token if user else None
        path = scope.get("path", "/")
        if user is None and not path.startswith(PUBLIC):
            if scope["method"] in SAFE_METHODS:
                query = scope.get("query_string", b"").decode("latin-1")
                target = quote(path + ("?" + query if query else ""), safe="")
                return await RedirectResponse(f"/login?next={target}", status_code=303)(scope, receive, send)
            return await plain_error(401, "log in first: this server has accounts (/login)")(scope, receive, send)
        await self.app(scope, receive, send)


class Throttle:
    """Failed logins per account name and per client address in a sliding window: past
    ``per_name`` (or ``per_client``) failures in ``window_s`` seconds, logins are refused until
    the oldest failure leaves the window (a password cannot be guessed at speed, and a
    participant's account is not locked for good by someone else's guesses)."""

    def __init__(self, per_name: int = 5, per_client: int = 20, window_s: float = 900.0):
        self.limits = {"name": per_name, "client": per_client}
        self.window_s = window_s
        self.failures: dict[tuple[str, str], deque[float]] = defaultdict(deque)
        self.lock = threading.Lock()

    def _trim(self, key: tuple[str, str], now: float) -> deque[float]:
        q = self.failures[key]
        while q and q[0] <= now - self.window_s:
            q.popleft()
        return q

    def wait_s(self, name: str, client: str) -> float:
        """Seconds until a login of ``name`` from ``client`` is taken (0: now)."""
        now = time.monotonic()
        with self.lock:
            waits = [q[0] + self.window_s - now for kind, v in (("name", name), ("client", client))
                     if len(q := self._trim((kind, v), now)) >= self.limits[kind]]
        return max(waits, default=0.0)

    def failed(self, name: str, client: str) -> None:
        now = time.monotonic()
        with self.lock:
            for key in (("name", name), ("client", client)):
                self._trim(key, now).append(now)
            if len(self.failures) > 10_000:  # keys whose failures all left the window go
                for key in [k for k, q in self.failures.items() if not q or q[-1] <= now - self.window_s]:
                    del self.failures[key]

    def succeeded(self, name: str) -> None:
        with self.lock:
            self.failures.pop(("name", name), None)


def day_start(now: datetime | None = None) -> datetime:
    now = now or datetime.now(timezone.utc)
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def quota_message(store: Any, user: Account | None, per_day: int, total: int) -> str | None:
    """Why ``user`` may submit no more experiments now (None: it may). Organisers, and servers
    without accounts, have no quota; a participant's day is the UTC day."""
    if user is None or user.organiser or not (per_day or total):
        return None
    if total and store.count(submitter=user.name) >= total:
        return f"{user.name} has used all {total} submissions this challenge allows"
    start = day_start()
    if per_day and store.count(submitter=user.name, since=start.isoformat(timespec="seconds")) >= per_day:
        resets = (start + timedelta(days=1)).isoformat(timespec="seconds")
        return f"{user.name} has used its {per_day} submissions of today (UTC); the quota resets at {resets}"
    return None


def sees(user: Account | None, e: Any) -> bool:
    """``user`` may see (and re-run) experiment ``e``: without accounts everyone, an organiser
    every experiment, a participant its own."""
    return user is None or user.organiser or e.submitter == user.name
