"""A small local HTTP server for fault-injection tests of SPARQL endpoint clients.

``FaultServer`` listens on 127.0.0.1 (a free port), serves every request on its own thread
(HTTP/1.1 keep-alive), records what it received and answers from a script:

- ``server.script(path, [Reply, ...])`` queues replies for requests to ``path`` (``"*"``:
  any path); each request pops the next one; when a queue is empty the ``handler`` (a callable
  ``RecordedRequest -> Reply``) answers, by default an empty SELECT result.
- a :class:`Reply` can wait before answering (``delay``), drip its body slowly
  (``drip``: seconds between chunks of ``chunk`` bytes), announce a longer body than it sends
  and then close (``truncate``: bytes actually sent), or close the connection without any
  answer (``drop``), or stream a body of any size from a generator without a Content-Length
  (``stream``: a callable returning an iterable of byte chunks; the connection is closed after
  it, or when the client stops reading).
- ``server.requests`` lists every request (method, path, form/query parameters, headers, arrival
  time); ``server.max_in_flight`` is the largest number of requests being handled at once.

The server is bounded and stops itself: after ``lifetime`` seconds (default 120) or
``max_requests`` requests it shuts down; waits are interrupted by shutdown. Use it as a context
manager.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

JSON_TYPE = "application/sparql-results+json"
XML_TYPE = "application/sparql-results+xml"


@dataclass
class Reply:
    status: int = 200
    body: bytes | str = b""
    content_type: str | None = JSON_TYPE
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drip: float = 0.0
    chunk: int = 16
    truncate: int | None = None
    drop: bool = False
    stream: Callable[[], object] | None = None

    @classmethod
    def json(cls, doc: object, **kw) -> "Reply":
        return cls(body=json.dumps(doc), content_type=JSON_TYPE, **kw)

    @classmethod
    def select(cls, variables: list[str], rows: list[dict[str, dict]], **kw) -> "Reply":
        return cls.json({"head": {"vars": variables}, "results": {"bindings": rows}}, **kw)

    @classmethod
    def ask(cls, value: bool, **kw) -> "Reply":
        return cls.json({"head": {}, "boolean": value}, **kw)

    @classmethod
    def error(cls, status: int, text: str = "", content_type: str = "text/plain", **kw) -> "Reply":
        return cls(status=status, body=text, content_type=content_type, **kw)


EMPTY_SELECT = Reply.select(["x"], [])


@dataclass
class RecordedRequest:
    method: str
    path: str
    params: dict[str, list[str]]
    headers: dict[str, str]
    at: float

    @property
    def query(self) -> str | None:
        q = self.params.get("query") or self.params.get("update")
        return q[0] if q else None


class FaultServer:
    def __init__(self, handler: Callable[[RecordedRequest], Reply] | None = None, *,
                 lifetime: float = 120.0, max_requests: int = 100_000):
        self.handler = handler or (lambda req: EMPTY_SELECT)
        self.max_requests = max_requests
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.streamed_completely = False
        self._queues: dict[str, deque[Reply]] = defaultdict(deque)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else Nagle + delayed ACK add ~40 ms per response

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                outer._serve(self, urlsplit(self.path).query)

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n).decode("utf-8", "replace") if n else ""
                ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
                if ctype == "application/sparql-query":
                    outer._serve(self, urlsplit(self.path).query, extra={"query": [body]})
                else:
                    outer._serve(self, body, extra=parse_qs(urlsplit(self.path).query, keep_blank_values=True))

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # not http.server's 5: concurrent clients would wait 1 s for a SYN retry

            def handle_error(self, request, client_address):  # a client hanging up is not an error here
                import sys

                if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError, TimeoutError)):
                    super().handle_error(request, client_address)

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="faultserver")
        self._thread.start()
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()

    # ------------------------------------------------------------------ public

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/sparql") -> str:
        return self.base + path

    def script(self, path: str, replies: list[Reply]) -> None:
        with self._lock:
            self._queues[path].extend(replies)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path]

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._timer.cancel()
        threading.Thread(target=self._httpd.shutdown, daemon=True).start()
        self._thread.join(timeout=5)
        self._httpd.server_close()

    def __enter__(self) -> "FaultServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ serving

    def _next_reply(self, req: RecordedRequest) -> Reply:
        with self._lock:
            for key in (req.path, "*"):
                if self._queues.get(key):
                    return self._queues[key].popleft()
        return self.handler(req)

    def _serve(self, h: BaseHTTPRequestHandler, qs: str, extra: dict[str, list[str]] | None = None) -> None:
        params = parse_qs(qs, keep_blank_values=True)
        for k, v in (extra or {}).items():
            params.setdefault(k, []).extend(v)
        req = RecordedRequest(h.command, urlsplit(h.path).path, params, dict(h.headers.items()), time.monotonic())
        with self._lock:
            self.requests.append(req)
            over = len(self.requests) > self.max_requests
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if over or self._stop.is_set():
                h.close_connection = True
                return
            reply = self._next_reply(req)
            self._write(h, reply)
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True
        finally:
            with self._lock:
                self.in_flight -= 1

    def _write(self, h: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.delay and self._stop.wait(reply.delay):
            h.close_connection = True
            return
        if reply.drop:
            h.close_connection = True
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if reply.stream is not None:
            h.send_response(reply.status)
            if reply.content_type:
                h.send_header("Content-Type", reply.content_type)
            for k, v in reply.headers.items():
                h.send_header(k, v)
            h.send_header("Connection", "close")
            h.end_headers()
            h.close_connection = True
            try:
                for chunk in reply.stream():
                    if self._stop.is_set():
                        break
                    h.wfile.write(chunk)
                self.streamed_completely = True
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass
            return
        body = reply.body.encode("utf-8") if isinstance(reply.body, str) else reply.body
        h.send_response(reply.status)
        if reply.content_type:
            h.send_header("Content-Type", reply.content_type)
        h.send_header("Content-Length", str(len(body)))
        h.send_header("Date", formatdate(usegmt=True))
        for k, v in reply.headers.items():
            h.send_header(k, v)
        h.end_headers()
        if reply.truncate is not None:
            h.wfile.write(body[: reply.truncate])
            h.wfile.flush()
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.drip:
            for i in range(0, len(body), reply.chunk):
                if self._stop.wait(reply.drip):
                    h.close_connection = True
                    return
                h.wfile.write(body[i: i + reply.chunk])
                h.wfile.flush()
            return
        h.wfile.write(body)


def oxigraph_handler(store, latency: float = 0.0, default_graph: str | None = None,
                     replay: bool = False) -> Callable[[RecordedRequest], Reply]:
    """A handler that answers SPARQL queries from a pyoxigraph ``Store`` (SPARQL results JSON,
    or N-Triples for CONSTRUCT/DESCRIBE) after ``latency`` seconds; errors become HTTP 400
    (parse) or 500 (evaluation) with the message as text. With ``replay``, the reply to a
    (query, graphs) request is computed once and then replayed (cost: ``latency`` only), which
    models a remote endpoint whose evaluation does not use the client machine's CPU."""
    import pyoxigraph as ox

    cache: dict[tuple, Reply] = {}

    def handle(req: RecordedRequest) -> Reply:
        key = (req.query, tuple(req.params.get("default-graph-uri", ())))
        if replay and key in cache:
            if latency:
                time.sleep(latency)
            return cache[key]
        reply = evaluate(req)
        if replay:
            cache[key] = reply
        return reply

    def evaluate(req: RecordedRequest) -> Reply:
        if latency:
            time.sleep(latency)
        q = req.query
        if q is None:
            return Reply.error(400, "no query parameter")
        graphs = req.params.get("default-graph-uri") or ([default_graph] if default_graph else [])
        try:
            kw = {"default_graph": [ox.NamedNode(g) for g in graphs]} if graphs else {"use_default_graph_as_union": True}
            result = store.query(q, **kw)
        except SyntaxError as e:
            return Reply.error(400, f"Parse error: {e}")
        except OSError as e:
            return Reply.error(500, f"Evaluation error: {e}")
        try:
            if isinstance(result, ox.QueryTriples):
                return Reply(body=result.serialize(format=ox.RdfFormat.N_TRIPLES), content_type="application/n-triples")
            return Reply(body=result.serialize(format=ox.QueryResultsFormat.JSON), content_type=JSON_TYPE)
        except OSError as e:
            return Reply.error(500, f"Evaluation error: {e}")

    return handle


def java_unicode_unescape(text: str) -> str:
    """``text`` as JavaCC's ``JavaCharStream`` (``JAVA_UNICODE_ESCAPE = true``, the option of
    Jena's SPARQL 1.1 grammar and Blazegraph's) hands it to the lexer: a backslash preceded by
    an even number of backslashes, then one or more ``u`` and four hex digits, is the character
    (Java Language Specification 3.3). Written character by character, as the stream reads it,
    independently of kgqa's sandbox."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        j = i
        while j < n and text[j] == "\\":
            j += 1
        run = j - i  # backslashes in a row
        out.append("\\" * (run - 1))  # all but the last are literal (pairs or the odd one out)
        k = j
        while k < n and text[k] == "u":
            k += 1
        digits = text[k:k + 4]
        if run % 2 == 1 and k > j and len(digits) == 4 and all(ch in "0123456789abcdefABCDEF" for ch in digits):
            out.append(chr(int(digits, 16)))
            i = k + 4
        else:
            out.append("\\")
            i = j
    return "".join(out)


def jena_handler(store) -> Callable[[RecordedRequest], Reply]:
    """A SPARQL endpoint that reads requests as Jena's SPARQL 1.1 parser does: the query text is
    decoded by :func:`java_unicode_unescape` before it is parsed; an update (``update=``, or an
    update keyword first in ``query=``) is applied to ``store`` (a pyoxigraph ``Store``); a
    ``SERVICE <http://127.0.0.1:...>`` clause is followed with one GET to that URL (never to
    another address), as a federating endpoint would; other queries are answered from ``store``.
    The decoded texts are in ``handler.decoded``."""
    import re as _re

    import httpx
    import pyoxigraph as ox

    decoded: list[str] = []
    service = _re.compile(r"SERVICE\s+(?:SILENT\s+)?<(http://127\.0\.0\.1:\d+/[^>]*)>", _re.IGNORECASE)
    update_first = _re.compile(r"^\s*(?:(?:PREFIX|BASE)\s[^<]*<[^>]*>\s*)*(INSERT|DELETE|LOAD|CLEAR|DROP|CREATE|"
                               r"ADD|MOVE|COPY|WITH)\b", _re.IGNORECASE)

    def handle(req: RecordedRequest) -> Reply:
        raw = req.query
        if raw is None:
            return Reply.error(400, "no query parameter")
        text = java_unicode_unescape(raw)
        decoded.append(text)
        try:
            if "update" in req.params or update_first.match(text):
                store.update(text)
                return Reply(status=204, body=b"", content_type=None)
            urls = service.findall(text)
            if urls:  # federate (pyoxigraph may not): the listener sees the call
                for url in urls:
                    httpx.get(url, params={"query": "ASK {}"}, timeout=5)
                return EMPTY_SELECT
            result = store.query(text)
        except SyntaxError as e:
            return Reply.error(400, f"Parse error: {e}")
        except OSError as e:
            return Reply.error(500, f"Evaluation error: {e}")
        if isinstance(result, ox.QueryTriples):
            return Reply(body=result.serialize(format=ox.RdfFormat.N_TRIPLES), content_type="application/n-triples")
        return Reply(body=result.serialize(format=ox.QueryResultsFormat.JSON), content_type=JSON_TYPE)

    handle.decoded = decoded  # type: ignore[attr-defined]
    return handle
