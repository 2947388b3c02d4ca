"""The one retry policy of kgqa's HTTP clients: the SPARQL endpoint client
(:mod:`kgqa.execute.endpoint`) and the live-system client (:mod:`kgqa.execute.live.client`).

What is retried (both clients decide it the same way): HTTP 429, 5xx except 501 and 505
(:data:`RETRY_STATUSES`), and connection failures (refused, reset, dropped, cut short). A
client's attempt raises :class:`Retryable` for those; anything else it returns (or raises)
ends the question at once.

How (:meth:`RetryPolicy.run`): at most ``retries`` more attempts after the first. Before retry
``k`` (0, 1, ...) it waits exactly the server's ``Retry-After`` (seconds or HTTP-date,
:func:`retry_after_seconds`) when one was sent, else ``backoff * 2**k`` seconds capped at
``max_backoff`` with equal jitter (:func:`backoff_wait`). It gives up (:class:`GaveUp`, whose
message ends with the reason) when the attempts are used up, when the wait would pass the
caller's ``deadline`` ("waiting N s to retry would pass the timeout"), or when the server asks
to wait longer than ``max_backoff`` ("the server asks to retry after N s, more than the M s
kgqa waits"). Every attempt (retries included) first takes a slot from the rate limiter, when
there is one.

A failure kgqa gave up on this way is *transient*: the endpoint client never caches it, the
live-system client journals it as transient, and a rerun tries again.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

T = TypeVar("T")

#: HTTP statuses worth another attempt: 429 and 5xx except 501 (not implemented) and 505.
RETRY_STATUSES = frozenset({429} | set(range(500, 600)) - {501, 505})


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP-date (a date in
    the past gives 0); None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def backoff_wait(k: int, backoff: float, max_backoff: float) -> float:
    """Seconds to wait before retry ``k`` (0, 1, ...): ``backoff * 2**k`` capped at
    ``max_backoff``, with equal jitter (uniformly between half and all of it)."""
    base = min(max_backoff, backoff * (2 ** k))
    return base / 2 + random.uniform(0, base / 2)


class RateLimiter:
    """At most ``rps`` request starts per second, evenly spaced (no burst, not even at start).

    :meth:`acquire` reserves a start time ``1/rps`` s after the last reservation and waits for
    it (call it before a request, outside any per-attempt timeout). :meth:`sending` (called by
    :class:`PacedTransport` when the request's bytes actually go out) keeps the actual starts
    ``1/rps`` s apart too: a first request delayed by connection set-up would otherwise leave
    the next ones, reserved on time, to go out together with it. Used on one event loop only."""

    def __init__(self, rps: float):
        self.interval = 1.0 / rps
        self.next_at = 0.0
        self.next_send = 0.0

    async def _slot(self, attr: str) -> None:
        """Wait for the next free time in ``attr`` and take it."""
        now = time.monotonic()
        at = max(now, getattr(self, attr))
        setattr(self, attr, at + self.interval)
        if at > now:
            await asyncio.sleep(at - now)

    async def acquire(self) -> None:
        await self._slot("next_at")

    async def sending(self) -> None:
        await self._slot("next_send")
        self.next_at = max(self.next_at, self.next_send)  # later reservations start from the real send


class PacedTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose requests go out at the limiter's pace: each request's headers
    are written only after :meth:`RateLimiter.sending` (through httpcore's ``trace`` hook, so
    connection set-up happens before, not inside, the spacing)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, limiter: RateLimiter):
        self.inner = inner
        self.limiter = limiter

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        outer = request.extensions.get("trace")

        async def trace(name: str, info: dict[str, Any]) -> None:
            if name.endswith(".send_request_headers.started"):
                await self.limiter.sending()
            if outer is not None:
                r = outer(name, info)
                if inspect.isawaitable(r):
                    await r

        request.extensions["trace"] = trace
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Retryable(Exception):
    """An attempt that failed in a way worth retrying (:data:`RETRY_STATUSES`, a connection
    failure). ``retry_after``: the server's ``Retry-After`` in seconds; ``status``: the HTTP
    status (None for a connection failure)."""

    def __init__(self, message: str, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after
        self.status = status


class GaveUp(Exception):
    """The retries ended without success: ``message`` names the last failure and why kgqa
    stopped; ``last`` is that failure, ``attempts`` the attempts made."""

    def __init__(self, message: str, last: Retryable, attempts: int):
        super().__init__(message)
        self.message = message
        self.last = last
        self.attempts = attempts


@dataclass(frozen=True)
class RetryPolicy:
    """``retries`` further attempts, ``backoff`` / ``max_backoff`` seconds (module docstring)."""

    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0

    def __post_init__(self) -> None:
        if self.retries < 0 or self.backoff < 0 or self.max_backoff < 0:
            raise ValueError("retries, backoff and max_backoff must be >= 0")

    def wait(self, k: int, failure: Retryable) -> float:
        """Seconds to wait before retry ``k`` after ``failure``."""
        if failure.retry_after is not None:
            return failure.retry_after
        return backoff_wait(k, self.backoff, self.max_backoff)

    async def run(self, attempt: Callable[[int], Awaitable[T]], *, limiter: RateLimiter | None = None,
                  deadline: float | None = None) -> T:
        """``await attempt(k)`` for k = 0, 1, ... until it returns (its value is returned) or
        raises something other than :class:`Retryable` (propagated); raises :class:`GaveUp`
        when retrying ends (module docstring). ``deadline``: a ``time.monotonic()`` time no
        wait may pass."""
        for k in range(self.retries + 1):
            if limiter is not None:
                await limiter.acquire()
            try:
                return await attempt(k)
            except Retryable as r:
                failure = r
            attempts = k + 1
            if k == self.retries:
                raise GaveUp(f"{failure.message} (gave up after {attempts} attempts)", failure, attempts)
            wait = self.wait(k, failure)
            if deadline is not None and time.monotonic() + wait >= deadline:
                raise GaveUp(f"{failure.message} (gave up after {attempts} attempt(s): waiting {wait:.1f} s "
                             "to retry would pass the timeout)", failure, attempts)
            if failure.retry_after is not None and failure.retry_after > self.max_backoff:
                raise GaveUp(f"{failure.message} (the server asks to retry after {failure.retry_after:g} s, more "
                             f"than the {self.max_backoff:g} s kgqa waits)", failure, attempts)
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover
