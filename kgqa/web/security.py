"""The web platform's edge: which requests reach the app at all (pure ASGI middleware).

- **Host allow-list** (DNS rebinding): a request whose ``Host`` names anything but the bound
  host, ``localhost``, ``127.0.0.1``, ``[::1]`` or an ``--allowed-host`` gets 421. A server
  bound to every interface (``0.0.0.0``, ``::``) also accepts IP literals: an address is not a
  DNS name, so no other site can rebind it.
- **Shared token** (``--token``): a fresh ``?token=`` link always wins over an old cookie; the
  cookie holds a value derived from the token with the server's secret (never the token), so a
  restart ends every cookie session.
- **CSRF**: every state-changing request (anything but GET/HEAD/OPTIONS) must come from this
  origin (``Origin``, else ``Referer``, when the client sends one) and carry the form token, an
  HMAC of the session cookie with a per-server secret: a token an attacker makes up (or sets in
  a cookie from another port of the same host) fails.
- **Cookies** are named per port (``kgqa_session_8800``: cookies are not port-scoped, so two
  servers on one host never clobber each other) and ``SameSite=Strict; HttpOnly``.
- **Security headers** on every response, errors (401, 403, 404, 413, 421, 500) included,
  and ``Server-Timing: app;dur=MS`` (the server's time to the response's start; benches read it).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import sys
import time
import traceback
from base64 import urlsafe_b64encode
from collections.abc import Iterable
from html import escape
from typing import Any
from urllib.parse import parse_qsl, urlsplit
import secrets
from base64 import b64encode
from html import unescape

from starlette.responses import HTMLResponse

from kgqa.store import StoreError
from kgqa.model import InputError

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARD = ("0.0.0.0", "::", "")
_SID = re.compile(r"^[A-Za-z0-9_-]{32,64}$")

#: The app's own pages: scripts and styles from /static only.
PAGE_CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
            "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'")


def security_headers(csp: str = PAGE_CSP) -> dict[bytes, bytes]:
    return {
        b"x-content-type-options": b"nosniff",
        b"referrer-policy": b"same-origin",
        b"x-frame-options": b"DENY",
        b"cross-origin-opener-policy": b"same-origin",
        b"cross-origin-resource-policy": b"same-origin",
        b"content-security-policy": csp.encode(),
    }


def _b64(data: bytes) -> str:
    return urlsafe_b64encode(data).decode().rstrip("=")


def split_host(value: str) -> tuple[str, int | None] | None:
    """``(hostname, port)`` of a ``Host`` header value (``[::1]:8800`` -> ``("::1", 8800)``);
    None when it is not one."""
    v = value.strip().lower()
    if not v or any(c in v for c in "/\\@?# \t"):
        return None
    try:
        parts = urlsplit("//" + v)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    return host.rstrip("."), port


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


class HostPolicy:
    """Which ``Host`` headers a server bound to ``bound`` accepts (see the module docstring)."""

    def __init__(self, bound: str | None, extra: Iterable[str] = ()):
        names = set(LOOPBACK_NAMES)
        b = (bound or "").strip("[]").lower()
        self.any_ip = b in WILDCARD
        if not self.any_ip:
            names.add(b)
        for h in extra:
            parsed = split_host(h)
            if parsed is None:
                raise InputError("--allowed-host", f"expected a host name (optionally :port), got {h!r}")
            names.add(parsed[0])
        self.names = frozenset(names)

    def allows(self, header: str | None) -> bool:
        parsed = split_host(header or "")
        if parsed is None:
            return False
        host = parsed[0]
        return host in self.names or (self.any_ip and _is_ip(host))


class Security:
    """The middleware (see the module docstring). ``secret``: the per-server HMAC key."""

    def __init__(self, app: Any, *, secret: bytes, hosts: HostPolicy, token: str | None = None,
                 port: int | None = None):
        self.app = app
        self.secret = secret
        self.hosts = hosts
        self.token = token
        self.port = port

    # -- tokens

    def csrf_for(self, sid: str) -> str:
        return _b64(hmac.new(self.secret, b"csrf:" + sid.encode(), hashlib.sha256).digest())

    def csrf_ok(self, sid: str | None, sent: str) -> bool:
        if not sid or not _SID.match(sid) or not sent:
            return False
        return hmac.compare_digest(self.csrf_for(sid).encode(), sent.encode("utf-8", "replace"))

    def _auth_value(self) -> str:
        return _b64(hmac.new(self.secret, b"auth:" + (self.token or "").encode(), hashlib.sha256).digest())

    # -- ASGI

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        port = self.port or (scope.get("server") or (None, 0))[1]
        session_cookie, auth_cookie = f"kgqa_session_{port}", f"kgqa_auth_{port}"
        cookies = cookies_of(headers.get("cookie", ""))
        set_cookies: list[str] = []
        started = False
        t0 = time.perf_counter()

        async def send_wrapper(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                hs = list(message.get("headers", []))
                have = {k.lower() for k, _ in hs}
                hs += [(k, v) for k, v in security_headers().items() if k not in have]
                hs += [(b"set-cookie", c.encode()) for c in set_cookies]
                hs.append((b"server-timing", f"app;dur={(time.perf_counter() - t0) * 1000:.1f}".encode()))
                message["headers"] = hs
            await send(message)

        async def refuse(status: int, message: str) -> None:
            await plain_error(status, message)(scope, receive, send_wrapper)

        if not self.hosts.allows(headers.get("host")):
            return await refuse(421, "This kgqa server does not answer to the host name "
                                     f"{headers.get('host', '(none)')!r} (DNS rebinding guard): open it as "
                                     "http://127.0.0.1:PORT/ or start it with --allowed-host NAME.")
        if self.token:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            bearer = headers.get("authorization", "")
            if "token" in query:  # a fresh link always wins over an old cookie
                ok = hmac.compare_digest(query["token"].encode("utf-8", "replace"), self.token.encode())
            elif auth_cookie in cookies:
                ok = hmac.compare_digest(cookies[auth_cookie].encode("utf-8", "replace"), self._auth_value().encode())
            elif bearer.startswith("Bearer "):
                ok = hmac.compare_digest(bearer[7:].strip().encode("utf-8", "replace"), self.token.encode())
            else:
                ok = False
            if not ok:
                return await refuse(401, "This kgqa server needs its token: open the link the server printed "
                                         "(…?token=…).")
            if cookies.get(auth_cookie) != self._auth_value():
                set_cookies.append(f"{auth_cookie}={self._auth_value()}; Path=/; HttpOnly; SameSite=Strict")
        if scope["method"] not in SAFE_METHODS:
            why = _cross_origin(headers, scope.get("scheme", "http"))
            if why:
                return await refuse(403, f"refused: {why} (state-changing requests must come from this server's "
                                         "own pages)")
        sid = cookies.get(session_cookie, "")
        if not _SID.match(sid):
            sid = secrets.token_urlsafe(32)
            set_cookies.append(f"{session_cookie}={sid}; Path=/; HttpOnly; SameSite=Strict")
            cookies.pop(session_cookie, None)  # a request without the cookie never passes the CSRF check
        state = scope.setdefault("state", {})
        state["csrf"] = self.csrf_for(sid)
        state["session"] = cookies.get(session_cookie)
        state["security"] = self
        try:
            await self.app(scope, receive, send_wrapper)
        except Exception as err:  # the 500 page carries the headers too (Starlette's own handler sits outside)
            traceback.print_exc(file=sys.stderr)
            if started:
                return
            if isinstance(err, StoreError):  # disk full, database unreachable: the cause, in one line
                await refuse(503, f"the experiment store failed: {err.problem.message}")
            else:
                await refuse(500, f"internal error: {type(err).__name__}")


def _cross_origin(headers: dict[str, str], scheme: str) -> str | None:
    """Why a state-changing request is not from this origin (None: it is, or the client sent
    neither Origin nor Referer, as non-browser clients do; the CSRF token still applies)."""
    host = headers.get("host", "").lower()
    origin = headers.get("origin")
    if origin is not None:
        o = origin.strip().lower()
        if o == "null":
            return "an opaque origin (Origin: null)"
        parts = urlsplit(o)
        if parts.scheme != scheme or parts.netloc != host:
            return f"the request came from another origin ({origin[:100]})"
        return None
    referer = headers.get("referer")
    if referer:
        parts = urlsplit(referer.strip().lower())
        if parts.scheme != scheme or parts.netloc != host:
            return f"the request came from another page ({parts.scheme}://{parts.netloc})"
    return None


def cookies_of(header: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in header.split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            out.setdefault(k.strip(), v.strip())
    return out


def plain_error(status: int, message: str):
    return HTMLResponse(f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>kgqa · {status}</title>'
                        f'<link rel="stylesheet" href="/static/style.css"></head><body><main><h1>{status}</h1>'
                        f'<p class="error" id="error">{escape(message)}</p><p><a href="/">Home</a></p></main>'
                        f"</body></html>", status_code=status)


_INLINE = re.compile(r"<(script|style)(\s[^>]*)?>(.*?)</\1\s*>", re.S | re.I)
_HANDLER = re.compile(r"""\s(on[a-z]+|style)\s*=\s*("([^"]*)"|'([^']*)')""", re.I)


def _sha(text: str) -> str:
    return "'sha256-" + b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def inline_csp(document: str) -> str:
    """A Content-Security-Policy for a self-contained HTML document (the HTML report) that
    allows exactly its own inline ``<script>``/``<style>`` blocks and inline event handlers and
    style attributes, by their SHA-256 (CSP level 3 ``'unsafe-hashes'`` for attributes), and
    nothing else: the page renders as the file does, byte for byte the same, and anything
    injected into it would not run."""

    scripts: set[str] = set()
    styles: set[str] = set()
    attr_scripts: set[str] = set()
    attr_styles: set[str] = set()
    for m in _INLINE.finditer(document):
        attrs = m.group(2) or ""
        if m.group(1).lower() == "script" and "src=" in attrs.lower():
            continue
        (scripts if m.group(1).lower() == "script" else styles).add(_sha(m.group(3)))
    for tag in re.finditer(r"<[a-zA-Z][^>]*>", _INLINE.sub("", document)):
        for m in _HANDLER.finditer(tag.group(0)):
            value = unescape(m.group(3) if m.group(3) is not None else m.group(4))
            (attr_styles if m.group(1).lower() == "style" else attr_scripts).add(_sha(value))
    script_src = " ".join(sorted(scripts) + (["'unsafe-hashes'"] + sorted(attr_scripts) if attr_scripts else []))
    style_src = " ".join(sorted(styles) + (["'unsafe-hashes'"] + sorted(attr_styles) if attr_styles else []))
    return (f"default-src 'none'; img-src data:; style-src {style_src or chr(39) + 'none' + chr(39)}; "
            f"script-src {script_src or chr(39) + 'none' + chr(39)}; frame-ancestors 'none'; form-action 'none'; "
            "base-uri 'none'; object-src 'none'")
