"""One URL rule for every request kgqa sends (SPARQL endpoints, live systems, downloads), applied
to every redirect hop and pinned to the address that was checked (issue 34, scope 4).

- :class:`UrlRule`: which addresses a URL may reach. ``public_only`` (the web server: only
  public hosts, plus ``allowed_hosts``, its ``--allowed-url-host``) or, by default, the trust the
  first URL had: a request that starts at a public host stays on public hosts (a redirect of
  ``https://public.example/sparql`` to ``127.0.0.1`` or ``169.254.169.254`` is refused), while a
  user's own local endpoint (``--kg http://localhost:8890/sparql``) keeps working.
- :func:`check_address`: why an address is not public (loopback, private, link-local, ...).
- :class:`Guard` and the transports :class:`GuardedAsyncTransport` / :class:`GuardedTransport`:
  each request resolves its host once, checks every address with the rule and connects to
  the checked address (the URL's host name stays in the ``Host`` header and the TLS server
  name, so certificates are verified for the name): no second DNS look-up between the check
  and the connection (DNS rebinding).

The rule in force in a process is :func:`current_rule` (the default :class:`UrlRule`), set for
a block by :func:`using` (the web's job workers); a guard takes the rule in force when it is
made.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[..., list]


class UrlRefused(Exception):
    """A URL (first request or redirect hop) the rule does not let kgqa contact."""


def check_address(addr: Address) -> str | None:
    """Why ``addr`` is not a public address (``loopback``, ``private``, ...), or None."""
    if getattr(addr, "ipv4_mapped", None):
        addr = addr.ipv4_mapped  # type: ignore[union-attr]
    for attr, word in (("is_loopback", "loopback"), ("is_unspecified", "unspecified"), ("is_link_local", "link-local"),
                       ("is_multicast", "multicast"), ("is_private", "private"), ("is_reserved", "reserved")):
        if getattr(addr, attr):
            return word
    if not addr.is_global:
        return "non-global"
    return None


def resolve_addresses(host: str, port: int, resolve: Resolver = socket.getaddrinfo) -> list[Address]:
    """The addresses of ``host`` (itself when it is an IP literal), in the resolver's order."""
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    infos = resolve(host, port, type=socket.SOCK_STREAM)
    out: list[Address] = []
    for info in infos:
        a = ipaddress.ip_address(info[4][0].split("%")[0])
        if a not in out:
            out.append(a)
    return out


@dataclass(frozen=True)
class UrlRule:
    """Which addresses kgqa may contact. ``public_only``: public addresses only (the web
    server); otherwise a request chain may leave public addresses only when its first URL was
    not public (the user's own local service). ``allowed_hosts`` (lower-case names or IP
    literals): always allowed."""

    public_only: bool = False
    allowed_hosts: frozenset[str] = frozenset()

    def allowed(self, host: str) -> bool:
        return host.rstrip(".").lower().strip("[]") in self.allowed_hosts

    def refusal(self, host: str, addrs: list[Address], strict: bool) -> str | None:
        """Why ``host`` (resolved to ``addrs``) may not be contacted, or None."""
        if not strict or self.allowed(host):
            return None
        for a in sorted(addrs, key=str):
            why = check_address(a)
            if why:
                shown = host if host.strip("[]") == str(a) else f"{host} ({a})"
                return f"{shown} is a {why} address"
        return None

    def strict_for(self, url: str, resolve: Resolver = socket.getaddrinfo) -> bool:
        """Whether requests that start at ``url`` must stay on public addresses: always with
        ``public_only``; else when ``url``'s host is public (or cannot be resolved now)."""
        if self.public_only:
            return True
        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return True
        if not host:
            return True
        try:
            addrs = resolve_addresses(host, port, resolve)
        except (OSError, UnicodeError):
            return True
        return all(check_address(a) is None for a in addrs)


#: How long (s) a guard reuses the addresses it checked for a host (one look-up per host and
#: minute, not per request; the connection goes to a checked address either way)
RESOLVE_TTL = 60.0

_RULE = UrlRule()
_RULE_LOCK = threading.Lock()


def current_rule() -> UrlRule:
    """The rule in force in this process (:class:`UrlRule` by default)."""
    return _RULE


@contextmanager
def using(rule: UrlRule) -> Iterator[UrlRule]:
    """Make ``rule`` the process's rule for the block (the web's job workers: public hosts only)."""
    global _RULE
    with _RULE_LOCK:
        old, _RULE = _RULE, rule
    try:
        yield rule
    finally:
        with _RULE_LOCK:
            _RULE = old


class Guard:
    """The rule applied to the requests of one client that starts at ``origin``: every request
    (redirect hops included) is checked and pinned by :meth:`pin`."""

    def __init__(self, origin: str | Sequence[str], rule: UrlRule | None = None,
                 resolve: Resolver = socket.getaddrinfo):
        self.rule = rule or current_rule()
        self.resolve = resolve
        origins = [origin] if isinstance(origin, str) else list(origin)
        # several origins (endpoint replicas): strict when every one of them is public
        self.strict = all(self.rule.strict_for(o, resolve) for o in origins)
        self._seen: dict[tuple[str, int], tuple[float, list[Address]]] = {}
        self._lock = threading.Lock()

    def check(self, url: str) -> None:
        """Raise :class:`UrlRefused` when ``url`` may not be contacted (resolving its host)."""
        u = httpx.URL(url)
        self._addresses(u)

    def known(self, url: httpx.URL) -> bool:
        """Whether :meth:`pin` needs no DNS look-up for ``url`` (an IP literal, or a host
        looked up less than :data:`RESOLVE_TTL` seconds ago)."""
        host = url.host
        try:
            ipaddress.ip_address(host.strip("[]"))
            return True
        except ValueError:
            pass
        with self._lock:
            seen = self._seen.get((host, url.port or (443 if url.scheme == "https" else 80)))
        return seen is not None and time.monotonic() - seen[0] < RESOLVE_TTL

    def _addresses(self, url: httpx.URL) -> list[Address]:
        host = url.host
        if url.scheme not in ("http", "https") or not host:
            raise UrlRefused(f"{url.scheme}: URLs are not contacted (http and https only)")
        port = url.port or (443 if url.scheme == "https" else 80)
        now = time.monotonic()
        with self._lock:
            seen = self._seen.get((host, port))
        if seen is not None and now - seen[0] < RESOLVE_TTL:
            addrs = seen[1]
        else:
            try:
                addrs = resolve_addresses(host, port, self.resolve)
            except (OSError, UnicodeError) as e:
                raise httpx.ConnectError(f"cannot resolve {host!r}: {e}") from None
            with self._lock:
                self._seen[(host, port)] = (now, addrs)
        why = self.rule.refusal(host, addrs, self.strict)
        if why:
            hint = ("start the server with --allowed-url-host " + host + " to allow it") if self.rule.public_only \
                else "a request that starts at a public host is not followed to a non-public address"
            raise UrlRefused(f"{why} ({hint})")
        if not addrs:
            raise httpx.ConnectError(f"{host!r} resolves to no address")
        return addrs

    def pin(self, request: httpx.Request) -> list[httpx.Request]:
        """``request`` checked, as one copy per checked address of its host (to be tried in
        order): each copy's URL names the address, the host name is kept in ``Host`` and as the
        TLS server name. An IP literal's request is itself."""
        addrs = self._addresses(request.url)
        host = request.url.host
        if len(addrs) == 1 and str(addrs[0]) == host.strip("[]"):
            return [request]
        out = []
        for a in addrs:
            pinned = httpx.Request(request.method, request.url.copy_with(host=str(a)), headers=request.headers,
                                   stream=request.stream, extensions=dict(request.extensions))
            if request.url.scheme == "https":
                pinned.extensions["sni_hostname"] = host
            out.append(pinned)
        return out


class GuardedAsyncTransport(httpx.AsyncBaseTransport):
    """An async transport whose every request is checked and pinned by ``guard`` (DNS looked
    up in a thread, once per request) before ``inner`` sends it."""

    def __init__(self, inner: httpx.AsyncBaseTransport, guard: Guard):
        self.inner = inner
        self.guard = guard

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.guard.known(request.url):  # an IP literal or a recent look-up: no DNS, no thread
            tries = self.guard.pin(request)
        else:
            tries = await asyncio.get_running_loop().run_in_executor(None, self.guard.pin, request)
        for i, pinned in enumerate(tries):  # the next checked address when one cannot be reached
            try:
                return await self.inner.handle_async_request(pinned)
            except httpx.ConnectError:
                if i == len(tries) - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        await self.inner.aclose()


class GuardedTransport(httpx.BaseTransport):
    """The synchronous :class:`GuardedAsyncTransport` (downloads)."""

    def __init__(self, inner: httpx.BaseTransport, guard: Guard):
        self.inner = inner
        self.guard = guard

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        tries = self.guard.pin(request)
        for i, pinned in enumerate(tries):
            try:
                return self.inner.handle_request(pinned)
            except httpx.ConnectError:
                if i == len(tries) - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        self.inner.close()


def guarded_client(origin: str, **kw: Any) -> httpx.Client:
    """A synchronous client for requests that start at ``origin``, every hop guarded."""
    return httpx.Client(transport=GuardedTransport(httpx.HTTPTransport(), Guard(origin)), **kw)
