"""The request-body cap (``kgqa web --max-upload-mb``): an ASGI middleware."""

from __future__ import annotations

from typing import Any

from starlette.responses import HTMLResponse


class TooLarge(Exception):
    """Raised inside a request whose body grew past the cap (the middleware answers 413)."""


class BodyLimit:
    """Refuse request bodies above ``max_bytes`` (413): by Content-Length before reading, and
    by counting what arrives (chunked uploads)."""

    def __init__(self, app: Any, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    def _refuse(self) -> HTMLResponse:
        mb = self.max_bytes / (1024 * 1024)
        return HTMLResponse(f"<!DOCTYPE html><title>kgqa · 413</title><h1>413</h1><p id=\"error\">The upload is larger "
                            f"than this server accepts ({mb:g} MB in all; kgqa web --max-upload-mb).</p>",
                            status_code=413)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            return await self._refuse()(scope, receive, send)
        counter = _Counter(receive, send, self.max_bytes)
        try:
            await self.app(scope, counter.receive, counter.send)
        except TooLarge:
            if not counter.started:
                await self._refuse()(scope, receive, send)


class _Counter:
    """``receive`` counting the body's bytes (raises :class:`TooLarge` past ``cap``) and
    ``send`` noting whether the response has started."""

    def __init__(self, receive: Any, send: Any, cap: int):
        self._receive, self._send, self.cap = receive, send, cap
        self.seen = 0
        self.started = False

    async def receive(self) -> Any:
        message = await self._receive()
        if message["type"] == "http.request":
            self.seen += len(message.get("body", b""))
            if self.seen > self.cap:
                raise TooLarge
        return message

    async def send(self, message: Any) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)
