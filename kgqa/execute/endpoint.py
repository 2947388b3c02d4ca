"""A remote SPARQL endpoint as an :class:`~kgqa.execute.engine.Engine` (SPARQL 1.1 Protocol over httpx).

Requests. A query is sent as ``POST`` with an ``application/x-www-form-urlencoded`` body
(``query=...``) or, with ``method="GET"``, as URL parameters; every configured
``default_graphs`` IRI goes out as a ``default-graph-uri`` and every ``named_graphs`` IRI as a
``named-graph-uri`` parameter. SELECT/ASK ask for SPARQL results JSON (preferred) or XML;
CONSTRUCT/DESCRIBE ask for N-Triples/Turtle/RDF-XML and come back as a
:data:`~kgqa.execute.engine.GRAPH_VARIABLES` table, one row per triple. With
``allow_update=True`` an update is sent as ``update=...`` and a success is an empty table.

Outcomes (the engine contract of :mod:`kgqa.execute.engine`):

- the sandbox (:func:`kgqa.execute.sandbox.refusal`) runs first: a refused query is
  ``REFUSED`` and no request is made;
- 2xx with SPARQL results JSON (also Virtuoso's ``typed-literal`` cells) or XML -> ``OK``;
  over ``max_rows`` rows -> ``EXEC_ERROR`` (:func:`~kgqa.execute.engine.too_many_rows_message`);
  a Virtuoso "anytime" partial result (``X-SQL-State`` response header) -> ``TIMEOUT``, never a
  partial table; an ASK answered as a one-row table (Virtuoso without ``CaseMode=2``) -> boolean;
- an HTML page instead of results -> ``EXEC_ERROR`` "endpoint returned text/html, not SPARQL
  results"; another content type, or JSON/XML that does not parse (truncated) -> ``EXEC_ERROR``;
- HTTP 400 whose body reports a syntax/compile error (Virtuoso ``37000``/``SP0xx``, "parse
  error", "syntax error", "MalformedQuery", "Invalid SPARQL query", ...) -> ``PARSE_ERROR``;
- HTTP 429, 5xx (except 501/505) and connection failures (refused, reset, dropped, body cut
  short) are retried under kgqa's one retry policy (:mod:`kgqa.execute.retry`, shared with the
  live-system client): at most ``retries`` more attempts, waiting ``backoff * 2**k`` seconds
  (k = 0, 1, ...; capped at ``max_backoff``) with equal jitter (uniformly between half and all
  of it), or exactly the ``Retry-After`` the server sent (seconds or HTTP-date; one longer
  than ``max_backoff`` ends the retries). A Virtuoso 5xx
  that reports a deterministic query error (SQLSTATE classes 22, 37, 42, e.g. ``22012``
  division by zero) is not retried; Virtuoso's ``S1T00`` (server-side timeout) is ``TIMEOUT``
  and its ``37000`` (SPARQL compiler) is ``PARSE_ERROR`` whatever the HTTP status.
  When the attempts are used up, or the next wait would pass the deadline -> ``EXEC_ERROR``
  with the HTTP status and the first 300 characters of the body (or the connection error);
  other 4xx -> ``EXEC_ERROR`` at once;
- ``timeout`` is one deadline for the whole query, retries and waits included: when it passes
  the request is cancelled (the connection is closed) and the outcome is ``TIMEOUT``.
- Failures after retries (5xx, 429, connection errors) are *transient*
  (:func:`kgqa.execute.engine.transient`): reported, never cached, retried by a rerun.
- Bodies are streamed and reading stops at ``max_response_bytes`` (counted after HTTP content
  decoding, so a gzip bomb is cut off too; gzip/deflate are inflated a piece of at most
  :data:`PIECE` bytes at a time) -> ``EXEC_ERROR`` "response body larger than ...
  (response byte cap; ...)"; nothing more is read or kept.
- A 2xx results body is parsed as it arrives, in a worker thread, never on the event loop
  (:mod:`kgqa.execute.results_stream`): reading stops at the first row over ``max_rows`` or
  the first variable over :data:`~kgqa.execute.results_stream.DEFAULT_MAX_COLUMNS` (variables
  the head does not declare count) -> ``EXEC_ERROR`` with the cap named; the per-query
  ``timeout`` covers reading and parsing.

Scheduling. All requests of one engine share one event loop (a daemon thread) and one
``httpx.AsyncClient``; at most ``concurrency`` queries are in flight (a query's clock starts
when it gets its slot); with ``rps`` set, requests (retries included) start at least
``1/rps`` seconds apart; attempts go to the ``urls`` in round-robin order, so a retry goes to
the next replica. ``execute_many`` returns outcomes in input order.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import re
import threading
import time
import zlib
from dataclasses import replace
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

import httpx

from kgqa import lazy, __version__ as kgqa_version

from kgqa.execute.engine import (
    too_large_response_message,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_MAX_ROWS,
    DEFAULT_TIMEOUT,
    GRAPH_VARIABLES,
    EngineInfo,
    format_bytes,
    too_many_rows_message,
    transient,
)
from kgqa.execute.results_stream import DEFAULT_MAX_COLUMNS, CapExceeded, JsonResultsStream
from kgqa.execute.results_xml import XmlResultsStream
from kgqa.execute.retry import RETRY_STATUSES, GaveUp, PacedTransport, RateLimiter, RetryPolicy, retry_after_seconds
from kgqa.execute.retry import Retryable as _Retryable
from kgqa.execute.sandbox import UPDATE_KEYWORDS, refusal
from kgqa.sparql.lexer import tokenize
from kgqa.model.answer import Answer, BooleanAnswer, TableAnswer
from kgqa.model.outcome import Outcome, Status
from kgqa.model.terms import BNode, IRI, Literal, Term, XSD_STRING
from kgqa.model.urlguard import Guard, GuardedAsyncTransport, UrlRefused
from kgqa.execute.live.client import display_url, scrub, secrets_of
from kgqa.execute.policy import refused_outcome

KIND = "sparql-endpoint"


def scrub_answer(answer: Answer | None, secrets: Sequence[str]) -> Answer | None:
    """``answer`` with every credential in ``secrets`` written ``***`` in its IRIs and literals
    (an endpoint or system that echoes its API key never has it written: journal, cache, store)."""
    if not secrets or not isinstance(answer, TableAnswer):
        return answer

    def clean(t: Any) -> Any:
        if isinstance(t, (IRI, Literal)) and any(x in t.value for x in secrets):
            v = t.value
            for x in secrets:
                v = v.replace(x, "***")
            return replace(t, value=v)
        return t

    if not any(isinstance(t, (IRI, Literal)) and any(x in t.value for x in secrets) for row in answer.rows for t in row):
        return answer
    return TableAnswer(answer.variables, tuple(tuple(clean(t) for t in row) for row in answer.rows))
BODY_SNIPPET = 300

ACCEPT_RESULTS = ("application/sparql-results+json, application/sparql-results+xml;q=0.9, "
                  "application/json;q=0.8, application/xml;q=0.5, text/xml;q=0.5")
ACCEPT_GRAPH = ("application/n-triples, text/turtle;q=0.9, application/rdf+xml;q=0.8, "
                "application/sparql-results+json;q=0.5")

JSON_TYPES = frozenset({"application/sparql-results+json", "application/json"})
XML_TYPES = frozenset({"application/sparql-results+xml", "application/xml", "text/xml"})
RDF_TYPES = frozenset({"application/n-triples", "text/plain+ntriples", "text/turtle", "application/x-turtle",
                       "application/rdf+xml", "application/n-quads", "application/trig"})

#: Markers in an HTTP 400 body that say the engine rejected the query text.
PARSE_ERROR_MARKERS = re.compile(
    r"SP0\d\d|SPARQL compiler|Virtuoso 37000|parse error|syntax error|malformed ?query|"
    r"MalformedQueryException|Invalid SPARQL query|Lexical error|Encountered \"|QueryParseException|"
    r"unexpected token|expected one of",
    re.IGNORECASE,
)
_VIRTUOSO_ERROR = re.compile(r"Virtuoso\s+([0-9A-Z]{5})\s+Error")
#: Largest piece of a decoded response body handled at once (inflating, parsing).
PIECE = 1 << 20


# --------------------------------------------------------------------------- helpers


def query_form(query: str) -> str:
    """``select`` / ``ask`` / ``construct`` / ``describe`` / ``update`` / ``unknown``: the first
    keyword after the prologue (``PREFIX``/``BASE`` declarations), by token scan."""
    toks = tokenize(query)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "KEYWORD" and t.value == "PREFIX":
            i += 3  # PREFIX pname: <iri>
            continue
        if t.kind == "KEYWORD" and t.value == "BASE":
            i += 2
            continue
        if t.kind == "KEYWORD":
            w = t.value
            if w in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
                return w.lower()
            if w in UPDATE_KEYWORDS:
                return "update"
        elif t.kind == "ERROR" and t.value.upper() == "DEFINE":  # Virtuoso pragma: DEFINE name value
            i += 3
            continue
        return "unknown"
    return "unknown"


def _snippet(body: bytes | str, n: int = BODY_SNIPPET) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return text.strip()[:n]


def _html_title(body: bytes) -> str:
    m = re.search(rb"<title[^>]*>(.*?)</title>", body[:20000], re.IGNORECASE | re.DOTALL)
    return " ".join(m.group(1).decode("utf-8", "replace").split())[:120] if m else ""


def _ox_term(t: Any) -> Term:
    ox = lazy.pyoxigraph()

    if isinstance(t, ox.NamedNode):
        return IRI(t.value)
    if isinstance(t, ox.BlankNode):
        return BNode(t.value)
    if isinstance(t, ox.Literal):
        if t.language:
            return Literal(t.value, None, t.language)
        dt = t.datatype.value
        return Literal(t.value, None if dt == XSD_STRING else dt)
    raise ValueError(f"unsupported RDF term in a graph result: {t!r}")


def _parse_graph(body: bytes, ctype: str, max_rows: int | None = None) -> TableAnswer:
    """A CONSTRUCT/DESCRIBE result as a table, one row per triple; stops at ``max_rows`` + 1
    triples (:class:`CapExceeded`)."""
    ox = lazy.pyoxigraph()

    fmt = ox.RdfFormat.from_media_type(ctype)
    if fmt is None:
        raise ValueError(f"unsupported RDF media type {ctype}")
    rows = []
    try:
        for q in ox.parse(body, format=fmt):
            if max_rows is not None and len(rows) >= max_rows:
                raise CapExceeded(too_many_rows_message(max_rows))
            rows.append((_ox_term(q.subject), _ox_term(q.predicate), _ox_term(q.object)))
    except SyntaxError as e:
        raise ValueError(f"malformed {ctype} graph result: {e}") from None
    return TableAnswer(GRAPH_VARIABLES, tuple(rows))


class _Failure(Exception):
    """A final, non-retryable outcome found while handling a response."""

    def __init__(self, outcome_status: Status, message: str):
        super().__init__(message)
        self.status = outcome_status
        self.message = message


async def read_capped(response: httpx.Response, cap: int | None, too_large: Callable[[], Exception]) -> bytes:
    """The (content-decoded) body of a streamed response, read chunk by chunk; raises
    ``too_large()`` as soon as more than ``cap`` bytes arrived (no cap: ``None`` or 0)."""
    chunks: list[bytes] = []
    n = 0
    stream = response.aiter_bytes()
    try:
        async for chunk in stream:
            n += len(chunk)
            if cap and n > cap:
                raise too_large()
            chunks.append(chunk)
    finally:
        await stream.aclose()
    return b"".join(chunks)


# --------------------------------------------------------------------------- engine


class SparqlEndpoint:
    """A SPARQL 1.1 Protocol endpoint (or replicas of one) as a kgqa engine; see the module
    docstring for the request, outcome, retry and scheduling rules.

    ``info`` is ``EngineInfo(kind="sparql-endpoint", version=<first token of the server's
    Server header, e.g. "Virtuoso/07.20.3229", or "unknown">, fingerprint=<the sorted URLs
    plus the default-/named-graph IRIs>)``. The version is learnt from the first response; the
    first read of ``info`` before any response sends one ``ASK {}`` probe so that the value
    (and so every cache key) is the same for the whole session.
    """

    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        default_graphs: Iterable[str] = (),
        named_graphs: Iterable[str] = (),
        method: str = "POST",
        concurrency: int = 8,
        retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        rps: float | None = None,
        headers: Mapping[str, str] | None = None,
        allow_service: bool = False,
        allow_update: bool = False,
        max_response_bytes: int | None = DEFAULT_MAX_RESPONSE_BYTES,
    ):
        self.urls: tuple[str, ...] = (urls,) if isinstance(urls, str) else tuple(urls)
        if not self.urls:
            raise ValueError("SparqlEndpoint needs at least one URL")

        for u in self.urls:
            if not u.startswith(("http://", "https://")):
                raise ValueError(f"endpoint URL must start with http:// or https://, got {display_url(u)!r}")
        # credentials in a URL (userinfo, a token in the query) or in a header are sent, never
        # written: the fingerprint (so every signature and cache key) and every message show
        # them as *** (the rule of live systems' URLs, kgqa.execute.live.client)
        self.shown: tuple[str, ...] = tuple(display_url(u) for u in self.urls)
        self._secrets = sorted({x for u in self.urls for x in secrets_of(u, dict(headers or {}))}, key=len,
                               reverse=True)
        self.method = method.upper()
        if self.method not in ("POST", "GET"):
            raise ValueError(f"method must be POST or GET, got {method!r}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if retries < 0 or backoff < 0:
            raise ValueError("retries and backoff must be >= 0")
        if rps is not None and rps <= 0:
            raise ValueError(f"rps must be > 0, got {rps}")
        self.default_graphs = tuple(default_graphs)
        self.named_graphs = tuple(named_graphs)
        self.concurrency = concurrency
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.rps = rps
        self.allow_service = allow_service
        self.allow_update = allow_update
        # None: the default cap; 0: no cap (as on the command line, "off")
        self.max_response_bytes = DEFAULT_MAX_RESPONSE_BYTES if max_response_bytes is None else (max_response_bytes or None)

        self.headers = {"User-Agent": f"kgqa/{kgqa_version} httpx/{httpx.__version__}", **(headers or {})}
        self._server: str | None = None
        self._rr = itertools.count()
        #: attempts made (HTTP requests sent or tried), for tests and reports
        self.requests_sent = 0
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kgqa-endpoint", daemon=True)
        self._thread.start()
        self._client: httpx.AsyncClient = self._call(self._setup())

    async def _setup(self) -> httpx.AsyncClient:
        self._sem = asyncio.Semaphore(self.concurrency)
        self._limiter = RateLimiter(self.rps) if self.rps else None
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        # with rps, sends are spaced when their bytes go out (no burst behind a slow first connect)
        # every request (redirect hops included) checked with the URL rule and sent to the
        # address that was checked (kgqa.model.urlguard)
        transport: httpx.AsyncBaseTransport = GuardedAsyncTransport(httpx.AsyncHTTPTransport(limits=limits),
                                                                    Guard(self.urls))
        if self._limiter:
            transport = PacedTransport(transport, self._limiter)
        return httpx.AsyncClient(headers=self.headers, limits=limits, follow_redirects=False, timeout=None,
                                 transport=transport)

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    # ------------------------------------------------------------------ info

    @property
    def fingerprint(self) -> str:
        parts = list(sorted(self.shown))
        parts += [f"default-graph-uri={g}" for g in self.default_graphs]
        parts += [f"named-graph-uri={g}" for g in self.named_graphs]
        return " ".join(parts)

    @property
    def info(self) -> EngineInfo:
        if self._server is None and not self._closed:
            self.probe()
        return EngineInfo(KIND, self._server or "unknown", self.fingerprint, self.limits())

    def limits(self) -> str:
        """Safety settings for execution signatures, e.g. ``service=refused,body=256MiB``."""
        return (f"service={'allowed' if self.allow_service else 'refused'},"
                f"update={'allowed' if self.allow_update else 'refused'},"
                f"body={format_bytes(self.max_response_bytes).replace(' ', '')}")

    def probe(self, timeout: float = 10.0) -> Outcome:
        """Send ``ASK {}`` (outside the sandbox: it is kgqa's own query) and record the server
        version; the outcome says whether the endpoint answers."""
        out = self._call(self._run("ASK {}", timeout, 1, sandbox=False))
        if self._server is None:
            self._server = "unknown"
        return out

    # ------------------------------------------------------------------ execution

    def execute(self, query: str, timeout: float = DEFAULT_TIMEOUT, max_rows: int = DEFAULT_MAX_ROWS) -> Outcome:
        if self._closed:
            raise RuntimeError("SparqlEndpoint is closed")
        return self._call(self._run(query, timeout, max_rows))

    def execute_many(self, queries: Sequence[str], timeout: float = DEFAULT_TIMEOUT,
                     max_rows: int = DEFAULT_MAX_ROWS,
                     progress: Callable[[int], None] | None = None,
                     on_outcome: Callable[[int, Outcome], None] | None = None) -> list[Outcome]:
        """Outcomes in input order; ``on_outcome(i, outcome)`` is called (in the calling
        thread) as each query finishes."""
        if self._closed:
            raise RuntimeError("SparqlEndpoint is closed")
        futures = [asyncio.run_coroutine_threadsafe(self._run(q, timeout, max_rows), self._loop) for q in queries]
        index = {id(f): i for i, f in enumerate(futures)}
        try:
            if progress is not None or on_outcome is not None:
                for f in concurrent.futures.as_completed(futures):
                    if on_outcome is not None:
                        on_outcome(index[id(f)], f.result())
                    if progress is not None:
                        progress(1)
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            raise

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._call(self._client.aclose())
            self._call(self._loop.shutdown_asyncgens())  # bodies left unread at a cap: close their streams
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            if not self._thread.is_alive():
                self._loop.close()

    def __enter__(self) -> "SparqlEndpoint":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    async def _run(self, query: str, timeout: float, max_rows: int, sandbox: bool = True) -> Outcome:
        t0 = time.monotonic()
        if sandbox:
            reason = refusal(query, allow_service=self.allow_service, allow_update=self.allow_update)
            if reason is not None:
                return refused_outcome(query, reason, time.monotonic() - t0)
        form = query_form(query)
        async with self._sem:
            start = time.monotonic()
            state = {"attempts": 0, "last": ""}
            try:
                async with asyncio.timeout(timeout):
                    status, answer, message = await self._attempts(query, form, start + timeout, max_rows, state)
            except TimeoutError:
                last = f"; last failure: {state['last']}" if state["last"] else ""
                msg = f"no complete response within {timeout:g} s ({state['attempts']} attempt(s)){last}"
                return Outcome(Status.TIMEOUT, None, transient(msg) if state["last"] else msg,
                               time.monotonic() - start)
            except MemoryError:
                return Outcome(Status.EXEC_ERROR, None, transient("memory limit: out of memory reading the response"),
                               time.monotonic() - start)
            except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
                raise
            except Exception as e:  # noqa: BLE001 - no single query may end the run
                # says nothing about the query: not cached, a rerun tries again
                return Outcome(Status.EXEC_ERROR, None, transient(f"{type(e).__name__}: {e}"), time.monotonic() - start)
            return Outcome(status, answer, message, time.monotonic() - start)

    def _params(self, query: str, form: str) -> list[tuple[str, str]]:
        key = "update" if form == "update" and self.allow_update else "query"
        params = [(key, query)]
        if key == "update":
            params += [("using-graph-uri", g) for g in self.default_graphs]
            params += [("using-named-graph-uri", g) for g in self.named_graphs]
        else:
            params += [("default-graph-uri", g) for g in self.default_graphs]
            params += [("named-graph-uri", g) for g in self.named_graphs]
        return params

    async def _attempts(self, query: str, form: str, deadline: float, max_rows: int,
                        state: dict) -> tuple[Status, Answer | None, str]:
        params = self._params(query, form)
        accept = ACCEPT_GRAPH if form in ("construct", "describe") else ACCEPT_RESULTS

        async def attempt(k: int) -> tuple[Status, Answer | None, str]:
            url = self.urls[next(self._rr) % len(self.urls)]  # a retry goes to the next replica
            state["attempts"] = k + 1
            self.requests_sent += 1
            try:
                return await self._attempt(url, params, accept, form, max_rows, deadline)
            except _Failure as f:
                return f.status, None, f.message
            except _Retryable as r:
                state["last"] = r.message
                raise

        policy = RetryPolicy(self.retries, self.backoff, self.max_backoff)
        try:
            return await policy.run(attempt, limiter=self._limiter, deadline=deadline)
        except GaveUp as g:
            return Status.EXEC_ERROR, None, transient(g.message)

    async def _attempt(self, url: str, params: list[tuple[str, str]], accept: str, form: str,
                       max_rows: int, deadline: float) -> tuple[Status, Answer | None, str]:
        if not self._secrets:
            return await self._attempt_once(url, params, accept, form, max_rows, deadline)
        try:  # the messages name the URL and echo the server, answers may echo it: without the credentials
            status, answer, message = await self._attempt_once(url, params, accept, form, max_rows, deadline)
            return status, scrub_answer(answer, self._secrets), self._scrub(message)
        except (_Retryable, _Failure) as e:
            e.message = self._scrub(e.message)
            e.args = (e.message,)
            raise

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets)

    async def _attempt_once(self, url: str, params: list[tuple[str, str]], accept: str, form: str,
                            max_rows: int, deadline: float) -> tuple[Status, Answer | None, str]:
        headers = {"Accept": accept}
        try:
            for _hop in range(6):
                if self.method == "GET":
                    request = self._client.build_request("GET", url, params=params, headers=headers)
                else:
                    request = self._client.build_request("POST", url, data=dict_multi(params), headers=headers)
                response = await self._client.send(request, stream=True)
                try:
                    server = response.headers.get("server")
                    if self._server is None:
                        self._server = server.split()[0] if server and server.split() else "unknown"
                    code = response.status_code
                    if code in (301, 302, 303, 307, 308) and "location" in response.headers:
                        target = str(response.url.join(response.headers["location"]))
                        if self.method == "GET" or code in (307, 308):
                            url = target
                            continue
                        raise _Failure(Status.EXEC_ERROR,
                                       f"HTTP {code} redirect to {target}: a POST cannot follow it; "
                                       "use that URL as the endpoint")
                    if 200 <= code < 300:
                        return await self._read_answer(response, form, max_rows)
                    body = await self._read_capped(response)
                finally:
                    await response.aclose()
                return self._interpret(response, body, form, max_rows)
            raise _Failure(Status.EXEC_ERROR, f"too many redirects from {url}")
        except UrlRefused as e:  # the first URL or a redirect hop the URL rule does not allow
            raise _Failure(Status.EXEC_ERROR, f"request to {url} refused: {e}") from None
        except httpx.TimeoutException as e:  # only when httpx times out before our deadline
            raise _Retryable(f"{type(e).__name__} from {url}: {e}") from None
        except httpx.TransportError as e:
            raise _Retryable(f"connection error from {url}: {type(e).__name__}: {e or 'no detail'}") from None
        except (httpx.DecodingError, zlib.error) as e:
            raise _Failure(Status.EXEC_ERROR, f"undecodable response body from {url}: {e}") from None
        except httpx.HTTPError as e:
            raise _Failure(Status.EXEC_ERROR, f"{type(e).__name__} from {url}: {e}") from None

    async def _read_capped(self, response: httpx.Response) -> bytes:
        """The (content-decoded) body, read chunk by chunk; stops at ``max_response_bytes``."""
        cap = self.max_response_bytes
        return await read_capped(response, cap, lambda: _Failure(
            Status.EXEC_ERROR, too_large_response_message(response.status_code, cap)))

    async def _pieces(self, response: httpx.Response) -> AsyncIterator[bytes]:
        """The body, content-decoded, in pieces of at most :data:`PIECE` bytes, counted against
        ``max_response_bytes`` as they are decoded: gzip and deflate are inflated here at most a
        piece at a time (a small gzip of millions of rows never inflates at once); other codings
        are httpx's. Raises the response byte cap's :class:`_Failure` at once."""
        cap = self.max_response_bytes
        enc = response.headers.get("content-encoding", "").strip().lower()
        inflate = None
        if enc in ("gzip", "x-gzip"):
            inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif enc == "deflate":
            inflate = zlib.decompressobj()
        source = response.aiter_raw() if inflate is not None or enc in ("", "identity") else response.aiter_bytes()
        n = 0
        try:
            async for chunk in source:
                while chunk:
                    if inflate is None:
                        piece, chunk = chunk[:PIECE], chunk[PIECE:]
                    else:
                        piece = inflate.decompress(chunk, PIECE)
                        chunk = inflate.unconsumed_tail
                    n += len(piece)
                    if cap and n > cap:
                        raise _Failure(Status.EXEC_ERROR, too_large_response_message(response.status_code, cap))
                    if piece:
                        yield piece
        finally:
            await source.aclose()

    async def _read_answer(self, response: httpx.Response, form: str,
                           max_rows: int) -> tuple[Status, Answer | None, str]:
        """The answer of a 2xx response, parsed incrementally off the event loop (a worker
        thread) with the row, column and byte caps enforced while reading; the per-query
        timeout (around the whole attempt) interrupts it between pieces."""
        code = response.status_code
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        sql_state = response.headers.get("x-sql-state")
        if sql_state:
            msg = response.headers.get("x-sql-message", "")
            raise _Failure(Status.TIMEOUT,
                           f"endpoint returned incomplete results (X-SQL-State {sql_state}: {msg.strip()[:200]})")
        if form == "update":
            return Status.OK, TableAnswer((), ()), ""
        pieces = self._pieces(response)
        first = b""
        try:
            async for piece in pieces:  # enough of the body to tell what it is
                first += piece
                if len(first) >= 200:
                    break
            head = first[:200].lstrip().lower()
            sniff = ctype in ("", "text/plain")
            if ctype == "text/html" or (sniff and head.startswith((b"<!doctype html", b"<html"))):
                async for piece in pieces:
                    if len(first) >= 20000:
                        break
                    first += piece
                title = _html_title(first)
                raise _Failure(Status.EXEC_ERROR, "endpoint returned text/html, not SPARQL results"
                               + (f" (HTTP {code}, page title: {title})" if title else f" (HTTP {code})"))
            if ctype in RDF_TYPES and form in ("construct", "describe"):
                chunks = [first]
                async for piece in pieces:
                    chunks.append(piece)
                answer: Answer = await asyncio.to_thread(_parse_graph, b"".join(chunks), ctype, max_rows)
                return Status.OK, answer, ""
            if ctype in JSON_TYPES or (sniff and head.startswith(b"{")):
                parser: JsonResultsStream | XmlResultsStream = JsonResultsStream(max_rows, DEFAULT_MAX_COLUMNS)
            elif ctype in XML_TYPES or (sniff and head.startswith((b"<?xml", b"<sparql"))):
                parser = XmlResultsStream(max_rows, DEFAULT_MAX_COLUMNS)
            else:
                raise _Failure(Status.EXEC_ERROR, f"endpoint returned {ctype or 'no content type'}, not SPARQL "
                                                  f"results: {_snippet(first, 200)}")
            batch = first
            async for piece in pieces:  # hand the parser about 256 KiB at a time
                batch += piece
                if len(batch) >= PIECE // 4:
                    await asyncio.to_thread(parser.feed, batch)
                    batch = b""
            if batch:
                await asyncio.to_thread(parser.feed, batch)
            answer = await asyncio.to_thread(parser.close)
        except CapExceeded as e:
            raise _Failure(Status.EXEC_ERROR, e.message) from None
        except ValueError as e:
            raise _Failure(Status.EXEC_ERROR, str(e)) from None
        finally:
            await pieces.aclose()
        if form == "ask" and isinstance(answer, TableAnswer):
            answer = _ask_from_table(answer)
        elif form in ("construct", "describe") and isinstance(answer, TableAnswer) and len(answer.variables) == 3:
            answer = TableAnswer(GRAPH_VARIABLES, answer.rows)
        return Status.OK, answer, ""

    def _interpret(self, response: httpx.Response, body: bytes, form: str,
                   max_rows: int) -> tuple[Status, Answer | None, str]:
        """The outcome of a non-2xx response (its body read up to the byte cap)."""
        code = response.status_code
        text = _snippet(body)
        where = f"HTTP {code} {response.reason_phrase}".strip()
        vm = _VIRTUOSO_ERROR.search(body[:2000].decode("utf-8", "replace"))
        if vm and vm.group(1).startswith("S1T"):
            raise _Failure(Status.TIMEOUT, f"{where}: {text}")
        if (code == 400 and PARSE_ERROR_MARKERS.search(body[:4000].decode("utf-8", "replace"))) or (
                vm and vm.group(1).startswith("37")):
            raise _Failure(Status.PARSE_ERROR, f"{where}: {text}")
        if code in RETRY_STATUSES:
            if vm and vm.group(1)[:2] in ("22", "37", "42"):
                raise _Failure(Status.EXEC_ERROR, f"{where}: {text}")
            raise _Retryable(f"{where}: {text}", retry_after_seconds(response.headers.get("retry-after")))
        raise _Failure(Status.EXEC_ERROR, f"{where}: {text}")


def dict_multi(params: list[tuple[str, str]]) -> dict[str, str | list[str]]:
    """Form fields for httpx: a repeated key becomes a list (several default-graph-uri)."""
    out: dict[str, str | list[str]] = {}
    for k, v in params:
        if k in out:
            prev = out[k]
            out[k] = (prev if isinstance(prev, list) else [prev]) + [v]
        else:
            out[k] = v
    return out


def _ask_from_table(answer: TableAnswer) -> Answer:
    """Virtuoso without ``CaseMode=2`` answers ASK as a one-column table (``1``/``0``); anything
    else is left as it is."""
    if len(answer.variables) != 1:
        return answer
    if len(answer.rows) == 1 and isinstance(answer.rows[0][0], Literal):
        v = answer.rows[0][0].value.strip().lower()
        if v in ("1", "true"):
            return BooleanAnswer(True)
        if v in ("0", "false"):
            return BooleanAnswer(False)
    return answer
