"""Asking a live QA system every question of a dataset: how a run gets produced.

:func:`ask` sends every question (every requested language) to ``url`` under one of the
contracts of :mod:`kgqa.execute.live.protocols` and returns an :class:`AskResult` whose
``run`` kgqa scores like any run file. Per question it keeps the raw response body, the parsed
query and answers, the elapsed time, the HTTP status, the number of attempts and an outcome:

- ``ok``: a 2xx response that follows the contract;
- ``http_error``: a 4xx (at once), or 429 / 5xx (except 501, 505) / a connection failure still
  failing after ``retries`` more attempts; also a server asking (``Retry-After``) to wait longer
  than ``max_backoff`` (the retry policy of :mod:`kgqa.execute.retry`, the same as the SPARQL
  endpoint client's);
- ``timeout``: no complete response within ``timeout`` seconds for one attempt (not retried
  in the session: a slow system stays slow);
- ``malformed_response``: a 2xx whose body does not follow the contract (see the protocols
  module), e.g. not JSON, or the answer to another question;
- ``refused``: kgqa refused to go on: a redirect to another host, port or scheme (only the
  origin of ``url`` is ever contacted), more than 5 redirects, or a body over
  ``max_response_bytes`` (counted while decompressing, chunk by chunk: a gzip bomb never
  inflates past the cap, so memory stays within ``concurrency x max_response_bytes``).

Transient and definitive failures: a ``timeout``, and an ``http_error`` kgqa gave up on after
retries (429, 5xx, connection errors, a ``Retry-After`` too long) are journalled as
``"transient": true`` and asked again by the next run on the same journal; the other failures
(4xx, ``malformed_response``, ``refused``) are final unless ``retry_failed``.

A system that fails: when every question, or more than ``max_failures`` of them (a fraction,
default 0.5), failed, :func:`ask` raises :class:`SystemFailed` (an InputError naming the
commonest failure, e.g. "connection refused at http://127.0.0.1:9/ for 50 of 50 questions")
instead of returning a run that would score as zeros; ``allow_failures`` returns the run
anyway (the journal is written either way, so a rerun resumes).

Echo checks: a response that echoes the question is checked against the question asked
ignoring case, whitespace and punctuation (:func:`~kgqa.execute.live.protocols.same_text`);
``echo_check=False`` ignores echoes (as GERBIL and the official Text2SPARQL client do).

Credentials: userinfo in ``url`` is sent (HTTP basic auth) and ``headers`` with every request;
a query string in ``url`` is kept on every request (Text2SPARQL parameters are added to it).
None of them is written: records, messages, the run, its files and the signature carry the URL
with userinfo and credential-like query values (``key``, ``token``, ``secret``, ``pass``,
``auth``, ``sig``, ``session``, ``cred`` in the name) replaced by ``***`` (:func:`display_url`), any
copy of those secrets (or of a header value) in a message or a raw response body is replaced
too, and the signature names the system by scheme, host and port only (:func:`origin_of`).

A failed question becomes a :class:`~kgqa.model.Prediction` with that failure as its
``status`` (``http_error``, ``timeout``, ``malformed_response``, ``refused``), never an empty
answer; scoring treats it by the profile's ``failures`` rule.

Scheduling: at most ``concurrency`` requests in flight (GERBIL itself sends one at a time);
with ``rps``, request starts (retries and redirect hops included) at least ``1/rps`` s apart,
measured when the request's bytes go out (no burst at start); retries wait
``backoff * 2**k`` s (capped at ``max_backoff``) with equal jitter, or exactly the server's
``Retry-After``. Same-origin redirects are followed (307/308 keep the method; a POST is not
turned into a GET: a 301/302/303 answer to a GERBIL POST is an ``http_error`` naming the
target). Proxy settings of the environment are ignored (``trust_env=False``).

Resume: with a ``journal`` path every finished question is appended to it at once (flushed
and fsync'd, see :mod:`kgqa.execute.live.journal`); a rerun on the same journal asks only
the questions without a record and those whose failure was transient (``retry_failed`` asks
every failed one again, ``fresh`` starts over). A journal that other sessions may add to
while this one asks (a stored experiment taken over from a worker that lost its lease,
:class:`kgqa.store.journal.StoreJournal` with ``taken``) is looked up before each question is
asked: a question answered there meanwhile is not asked again. Every record names the client settings it was
asked under (``client``), and the signature names those of the answers' session(s), not the
settings of the last command. Ctrl-C raises :class:`AskInterrupted` (a KeyboardInterrupt
naming the journal and what is in it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import re
import socket
import ssl
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import unquote
import base64

import httpx

from kgqa import lazy, __version__

from kgqa.execute.retry import (
    RETRY_STATUSES,
    GaveUp,
    PacedTransport,
    RateLimiter,
    Retryable,
    RetryPolicy,
    retry_after_seconds,
)
from kgqa.execute.live.journal import Journal, open_journal
from kgqa.execute.live.protocols import (
    Parsed,
    Question,
    check_protocol,
    gerbil_request,
    parse_gerbil,
    parse_text2sparql,
    text2sparql_request,
)
from kgqa.model import Dataset, InputError, Prediction, Problem, Run, Status
from kgqa.model.answer import from_results_json, to_results_json
from kgqa.model.progress import progress_bar
from kgqa.model.urlguard import Guard, GuardedAsyncTransport, UrlRefused

#: outcome of asking -> the status of the prediction it becomes
OUTCOME_STATUS = {
    "ok": Status.OK,
    "http_error": Status.HTTP_ERROR,
    "timeout": Status.TIMEOUT,
    "malformed_response": Status.MALFORMED_RESPONSE,
    "refused": Status.REFUSED,
}
MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)
SNIPPET = 300


@dataclass
class AskSettings:
    """How :func:`ask` talks to the system (see the module docstring)."""

    langs: list[str] | None = None
    concurrency: int = 4
    timeout: float = 60.0
    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0
    rps: float | None = None
    dataset_iri: str | None = None
    max_response_bytes: int = 16 * 1024 * 1024
    retry_failed: bool = False
    fresh: bool = False
    progress: bool = True
    #: sent with every request, never written (values are secrets as far as kgqa knows)
    headers: dict[str, str] = field(default_factory=dict)
    #: fraction of failed questions above which :func:`ask` raises :class:`SystemFailed`
    max_failures: float = 0.5
    #: return the run however many questions failed
    allow_failures: bool = False
    #: check a response's echoed question (case, whitespace and punctuation ignored)
    echo_check: bool = True
    #: circuit breaker: this many questions in a row failing with a connection error (after
    #: their retries) stop the asking, the system being down; 0: never (off with allow_failures)
    breaker: int = 5

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise InputError("--concurrency", f"must be >= 1, got {self.concurrency}")
        if not self.timeout > 0:
            raise InputError("--timeout", f"must be > 0 seconds, got {self.timeout}")
        if self.retries < 0:
            raise InputError("--retries", f"must be >= 0, got {self.retries}")
        if self.rps is not None and not self.rps > 0:
            raise InputError("--rps", f"must be > 0, got {self.rps}")
        if self.backoff < 0 or self.max_backoff < 0:
            raise InputError("--backoff", "backoff times must be >= 0")
        if self.breaker < 0:
            raise InputError("breaker", f"must be >= 0, got {self.breaker}")
        if not 0 <= self.max_failures <= 1:
            raise InputError("--max-failures", f"must be a fraction between 0 and 1, got {self.max_failures}")
        for name, value in self.headers.items():
            if not name or any(c in name for c in " :\r\n") or any(c in str(value) for c in "\r\n"):
                raise InputError("--header", f"not a valid header: {name!r} (expected NAME:VALUE on one line)")

    @property
    def retry(self) -> RetryPolicy:
        return RetryPolicy(self.retries, self.backoff, self.max_backoff)

    def describe(self) -> str:
        """The client settings as they enter the signature, e.g. ``c4,t60,r3``."""
        parts = [f"c{self.concurrency}", f"t{self.timeout:g}", f"r{self.retries}"]
        if self.rps:
            parts.append(f"rps{self.rps:g}")
        if not self.echo_check:
            parts.append("noecho")
        return ",".join(parts)


@dataclass
class AskResult:
    """What :func:`ask` produced. ``records``: one per question in ask order (the journal
    records); ``asked``: questions sent in this session; ``reused``: taken from the journal;
    ``requests``: HTTP requests sent in this session (attempts and redirects included)."""

    run: Run
    records: list[dict[str, Any]]
    url: str
    protocol: str
    settings: AskSettings
    dataset_iri: str
    asked: int = 0
    reused: int = 0
    requests: int = 0
    elapsed: float = 0.0
    problems: list[Problem] = field(default_factory=list)
    #: the languages the questions were asked in (first appearance order)
    langs: list[str] = field(default_factory=list)
    #: questions left unasked because the circuit breaker opened (the system looked down)
    not_asked: int = 0

    @property
    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(r["outcome"] for r in self.records).items()))

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["outcome"] != "ok"]

    def failure_summary(self) -> str | None:
        """``"<commonest failure> at <url> for N of M questions"`` (plus the other failures),
        or None when every question was answered."""
        failed = self.failed
        if not failed:
            return None
        reasons = Counter(failure_reason(r) for r in failed).most_common()
        text = f"{reasons[0][0]} at {self.url} for {len(failed)} of {len(self.records)} questions"
        if len(reasons) > 1:
            text += " (also: " + "; ".join(f"{why}: {n}" for why, n in reasons[1:4]) + \
                (f"; {len(reasons) - 4} more" if len(reasons) > 4 else "") + ")"
        if len(reasons) == 1 and len(failed) == len(self.records) and reasons[0][0] in _WRONG_DOOR:
            text += "; " + _WRONG_DOOR[reasons[0][0]].format(protocol=self.protocol, method=_METHOD.get(self.protocol, "request"))
        if self.not_asked:
            text += (f"; stopped after {self.settings.breaker} questions in a row failed to connect, "
                     f"{self.not_asked} question(s) not asked (the system looks down)")
        return text

    def signature_parts(self) -> dict[str, str]:
        """``system`` (scheme, host and port only), ``protocol``, the languages asked
        (``asked``) and the ``client`` settings the answers were obtained under (those of every
        session that produced one, ``+``-joined), for the evaluation signature."""
        by_time = sorted(self.records, key=lambda r: str(r.get("at") or ""))  # sessions in the order they ran
        client = list(dict.fromkeys(r.get("client") or self.settings.describe() for r in by_time))
        return {"system": origin_of(self.url), "protocol": self.protocol, "asked": ",".join(self.langs),
                "client": "+".join(client) or self.settings.describe()}


#: the method each protocol asks with (protocols.py's docstring)
_METHOD = {"gerbil": "POST", "text2sparql": "GET"}
#: a failure of every question that says the URL serves another protocol than the one asked
_WRONG_DOOR = {
    "HTTP 405": "the URL does not take {protocol}'s {method}: does it serve another protocol? (`kgqa system "
                "serve` serves gerbil at / unless --protocol text2sparql is given, and both at /gerbil and "
                "/text2sparql)",
}


class SystemFailed(InputError):
    """The system failed every question, or more than ``max_failures`` of them: ``result``
    holds what it answered (journalled too)."""

    def __init__(self, result: AskResult):
        self.result = result
        super().__init__("live system", f"{result.failure_summary()}; not scored (a failing system is not a run of "
                                     "zeros): fix the system or its URL and rerun (transient failures are asked "
                                     "again), or pass --allow-failures to score it anyway")


class AskInterrupted(KeyboardInterrupt):
    """Ctrl-C while asking: ``journal`` (None without one) holds ``answered`` questions."""

    def __init__(self, journal: Path | None, answered: int, total: int):
        super().__init__(f"interrupted with {answered} of {total} questions answered")
        self.journal = journal
        self.answered = answered
        self.total = total


# --------------------------------------------------------------------------- credentials

_SECRET_PARAM = re.compile(r"key|token|secret|pass|auth|sig|session|cred", re.IGNORECASE)


def display_url(url: str) -> str:
    """``url`` as kgqa writes it: userinfo as ``***`` and the values of credential-like query
    parameters (module docstring) as ``***``."""
    try:
        u = httpx.URL(url)
    except Exception:  # noqa: BLE001 - an invalid URL is reported by ask(); never echo it whole
        return re.sub(r"//[^/@]*@", "//***@", url)
    if u.userinfo:
        u = u.copy_with(username="***", password=None)
    if not u.query:
        return str(u)
    parts = []
    for part in u.query.decode("ascii", "replace").split("&"):
        name, eq, _ = part.partition("=")
        parts.append(f"{name}=***" if eq and _SECRET_PARAM.search(unquote(name)) else part)
    return str(u.copy_with(query=None)) + "?" + "&".join(parts)


def origin_of(url: str) -> str:
    """``scheme://host:port`` of ``url``: how the signature names a system."""
    u = httpx.URL(url)
    scheme, host, port = _origin(u)
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"


def secrets_of(url: str, headers: dict[str, str]) -> list[str]:
    """The strings kgqa must never write for this system: the URL's password (and its username
    when it looks like a token: 8 characters or more), credential-like query values and the
    header values (ones under 3 characters cannot be told from ordinary text)."""
    u = httpx.URL(url)
    found = [u.password, *headers.values(), u.username if len(u.username) >= 8 else ""]
    # the credential of "Bearer TOKEN" / "Basic B64" / "Token X" alone, as a system may echo it
    found += [v.split(None, 1)[1].strip() for v in headers.values() if len(v.split(None, 1)) == 2
              and len(v.split(None, 1)[1].strip()) >= 8]
    found += [v for k, v in u.params.multi_items() if _SECRET_PARAM.search(k)]
    out = {x for x in found if x and len(x) >= 3}
    # also the percent-encoded and the basic-auth forms they may appear in
    if u.userinfo:
        out.add(u.userinfo.decode("ascii", "replace"))
        out.add(base64.b64encode(f"{u.username}:{u.password}".encode()).decode())
    return sorted(out, key=len, reverse=True)


#: the parts of a journal record that come from the dataset, not from the system: every other
#: part (the answers and the query too) is written with the credentials as ``***``
DATASET_FIELDS = frozenset({"id", "item", "lang", "question"})


def scrub(value: Any, secrets: list[str]) -> Any:
    """``value`` (a str, or a dict/list of them) with every secret replaced by ``***``."""
    if not secrets:
        return value
    if isinstance(value, str):
        for x in secrets:
            if x in value:
                value = value.replace(x, "***")
        return value
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, secrets) for v in value]
    return value


def is_transient(rec: dict[str, Any]) -> bool:
    """Whether a journal record's failure may pass by itself (asked again by a rerun): a
    timeout, or an http_error kgqa gave up on after retries (journals written before the
    ``transient`` field: a 429/5xx status or no status at all)."""
    if "transient" in rec:
        return bool(rec["transient"])
    if rec.get("outcome") == "timeout":
        return True
    return rec.get("outcome") == "http_error" and (rec.get("http_status") is None
                                                   or rec.get("http_status") in RETRY_STATUSES)


def failure_reason(rec: dict[str, Any]) -> str:
    """A failed record's reason, without attempt counts and waits (so one cause groups
    together): ``connection refused``, ``HTTP 503``, ``timeout``, ``malformed_response: ...``."""
    msg = str(rec.get("message") or "")
    low = msg.lower()
    if rec.get("outcome") == "timeout":
        return "timeout"
    if low.startswith("connection error"):
        for what in ("refused", "reset", "timed out", "name or service not known", "no route"):
            if what in low:
                return f"connection {what}" if what != "name or service not known" else "unknown host"
        return re.sub(r"\s*\((gave up|the server asks).*$", "", msg)
    if rec.get("outcome") == "http_error" and rec.get("http_status"):
        return f"HTTP {rec['http_status']}"
    first = re.sub(r"\s*\((gave up|the server asks).*$", "", msg)
    return f"{rec.get('outcome')}: {first[:80]}" if first else str(rec.get("outcome"))


# --------------------------------------------------------------------------- questions


def questions_for(dataset: Dataset, langs: list[str] | None = None) -> tuple[list[Question], list[Problem]]:
    """The requests to make for ``dataset``: per item with per-language ids (Text2SPARQL) one
    request per language (in ``langs``, or all); per item of a dataset with one id for all
    languages (QALD) one request in the single language of ``langs`` (default ``en``, or the
    item's first language when it has no English text). Items already split by language
    (``metadata["language"]``) are asked in their language."""
    out: list[Question] = []
    problems: list[Problem] = []
    has_lang_ids = any(it.lang_ids for it in dataset.items)
    if not has_lang_ids and langs and len(langs) > 1 and not all("language" in it.metadata for it in dataset.items):
        raise InputError("--lang", f"{dataset.name} has one id per question for all languages, so a run holds "
                                   f"one language: ask one language per run (as GERBIL does), e.g. --lang {langs[0]}")
    where = str(dataset.source[0]) if dataset.source else dataset.name
    for it in dataset.items:
        if it.lang_ids:
            for lang, lid in it.lang_ids.items():
                if langs is not None and lang not in langs:
                    continue
                text = it.questions.get(lang)
                if not text:
                    problems.append(Problem(where, lid, f"no question text in {lang}; not asked", "warning"))
                    continue
                out.append(Question(lid, lang, text, it.id))
            continue
        lang = it.metadata.get("language") if isinstance(it.metadata.get("language"), str) else None
        if lang is None:
            if langs:
                lang = langs[0]
            else:
                lang = "en" if "en" in it.questions else next(iter(it.questions), "en")
        elif langs is not None and lang not in langs:
            continue
        text = it.questions.get(lang)
        if not text:
            problems.append(Problem(where, it.id, f"no question text in {lang}; not asked", "warning"))
            continue
        out.append(Question(it.id, lang, text, str(it.metadata.get("item", it.id))))
    return out, problems


def default_dataset_iri(dataset: Dataset) -> str:
    """The ``dataset`` parameter of Text2SPARQL requests: the dataset's ``id`` (the
    Text2SPARQL YAML's ``dataset.id``, e.g. ``https://text2sparql.aksw.org/2025/corporate/``),
    else its name."""
    v = dataset.metadata.get("id")
    return str(v) if v else dataset.name


# --------------------------------------------------------------------------- one question


class _Refused(Exception):
    pass


class _HttpError(Exception):
    def __init__(self, message: str, status: int | None):
        super().__init__(message)
        self.message = message
        self.status = status


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, port


#: Content-Encodings kgqa decodes itself (see :func:`read_body`), with their zlib ``wbits``
DECODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
ACCEPT_ENCODING = "gzip, deflate"
_PIECE = 64 * 1024


async def read_body(response: httpx.Response, cap: int | None, too_large: Callable[[], Exception]) -> bytes:
    """The body of a streamed response, decoded (``gzip``, ``deflate``) chunk by chunk by
    kgqa itself so that no step inflates more than the bytes still allowed: raises
    ``too_large()`` as soon as the decoded body passes ``cap`` bytes (None or 0: no cap), so a
    request never holds more than ``cap`` plus one network chunk; another Content-Encoding is
    an :class:`httpx.DecodingError`."""
    codings = [c.strip().lower() for c in response.headers.get("content-encoding", "").split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if len(codings) > 1 or (codings and codings[0] not in DECODINGS):
        raise httpx.DecodingError(f"unsupported Content-Encoding {response.headers['content-encoding']!r} "
                                  f"(kgqa asks for {ACCEPT_ENCODING})")
    # pieces of at most 64 KiB, joined once the whole body is in: no buffer is ever grown (a
    # growing buffer fragments the allocator's heap, and peak RSS grows with every response)
    out: list[bytes] = []
    size = 0
    wbits = DECODINGS[codings[0]] if codings else None
    d = zlib.decompressobj(wbits) if wbits is not None else None
    fresh = True  # no output yet: a "deflate" body may be raw deflate instead of zlib

    def add(piece: bytes) -> None:
        nonlocal size
        size += len(piece)
        if cap and size > cap:
            # freed now, not when the cyclic collector gets to the exception's traceback (which
            # holds this frame): otherwise every refused body stays in memory for a while
            out.clear()
            raise too_large()
        out.append(piece)

    try:
        async for raw in response.aiter_raw():
            if d is None:
                add(raw)
                continue
            data = raw
            while data:
                room = (cap - size + 1) if cap else _PIECE
                try:
                    piece = d.decompress(data, max(1, min(room, _PIECE)))
                except zlib.error as e:
                    if fresh and wbits == zlib.MAX_WBITS:
                        wbits = -zlib.MAX_WBITS
                        d = zlib.decompressobj(wbits)
                        fresh = False
                        continue
                    raise httpx.DecodingError(f"{codings[0]} body cannot be decoded: {e}") from None
                fresh = False
                add(piece)
                data = d.unconsumed_tail
                if d.eof:
                    rest = d.unused_data
                    if rest and wbits == 16 + zlib.MAX_WBITS:  # another gzip member follows
                        d = zlib.decompressobj(wbits)
                        data = rest
                    else:
                        data = b""
    except BaseException:  # a cut-short or undecodable body: its pieces go at once (see add)
        out.clear()
        raise
    if d is not None:
        add(d.flush())
    return b"".join(out)


def _transport_detail(e: BaseException) -> str:
    """``ConnectError: connection refused`` rather than httpx's "All connection attempts
    failed": the errno of the first OS error in the exception's chain, when there is one."""
    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno:
            return f"{type(e).__name__}: {os.strerror(seen.errno).lower()}"
        seen = seen.__cause__ or seen.__context__
    return f"{type(e).__name__}: {e or 'no detail'}"


class _Asker:
    def __init__(self, url: str, protocol: str, settings: AskSettings, dataset_iri: str):
        self.url = httpx.URL(url)
        self.shown = display_url(url)
        self.origin = _origin(self.url)
        self.protocol = protocol
        self.s = settings
        self.dataset_iri = dataset_iri
        self.requests = 0
        self.limiter = RateLimiter(settings.rps) if settings.rps else None
        self.secrets = secrets_of(url, settings.headers)
        self.client_settings = settings.describe()

    async def _read(self, response: httpx.Response) -> bytes:
        cap = self.s.max_response_bytes
        return await read_body(response, cap, lambda: _Refused(f"response larger than {cap} bytes; not read further"))

    def _build(self, client: httpx.AsyncClient, method: str, url: httpx.URL, **kw: Any) -> httpx.Request:
        return client.build_request(method, url, headers={"Accept": "application/json",
                                                          "Accept-Encoding": ACCEPT_ENCODING}, **kw)

    async def _send(self, client: httpx.AsyncClient, q: Question) -> tuple[httpx.Response, bytes]:
        if self.protocol == "gerbil":
            request = self._build(client, "POST", self.url, data=gerbil_request(q))
        else:  # the URL's own query string (e.g. ?apikey=) is kept
            request = self._build(client, "GET", self.url.copy_merge_params(text2sparql_request(q, self.dataset_iri)))
        for _hop in range(MAX_REDIRECTS + 1):
            self.requests += 1
            response = await client.send(request, stream=True)
            try:
                if response.status_code in REDIRECTS and "location" in response.headers:
                    target = response.url.join(response.headers["location"])
                    if _origin(target) != self.origin:
                        raise _Refused(f"HTTP {response.status_code} redirect to {display_url(str(target))} refused: "
                                       f"kgqa only contacts {origin_of(str(self.url))}")
                    if request.method == "POST" and response.status_code not in (307, 308):
                        raise _HttpError(f"HTTP {response.status_code} redirect of a POST to "
                                         f"{display_url(str(target))}: not followed (it would drop the question); "
                                         "use that URL", response.status_code)
                    request = self._build(client, request.method, target,
                                          content=request.content if request.method == "POST" else None)
                    if request.method == "POST":
                        request.headers["Content-Type"] = "application/x-www-form-urlencoded"
                    continue
                body = await self._read(response)
                return response, body
            finally:
                await response.aclose()
        raise _Refused(f"more than {MAX_REDIRECTS} redirects")

    def _parse(self, body: bytes, q: Question) -> Parsed:
        if self.protocol == "gerbil":
            return parse_gerbil(body, q, echo_check=self.s.echo_check)
        return parse_text2sparql(body, q, self.dataset_iri, echo_check=self.s.echo_check)

    async def ask(self, client: httpx.AsyncClient, q: Question) -> dict[str, Any]:
        t0 = time.monotonic()
        rec: dict[str, Any] = {"id": q.id, "item": q.item, "lang": q.lang, "question": q.text}
        state: dict[str, Any] = {"attempts": 0, "status": None}

        def done(outcome: str, message: str = "", transient: bool = False, **kw: Any) -> dict[str, Any]:
            rec.update(outcome=outcome, message=message, http_status=state["status"], attempts=state["attempts"],
                       elapsed=round(time.monotonic() - t0, 6),
                       at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"), **kw)
            if outcome != "ok":
                rec["transient"] = transient
            rec["client"] = self.client_settings
            for key in rec:  # everything the system sent (answers and query included), not the dataset's
                if key not in DATASET_FIELDS:
                    rec[key] = scrub(rec[key], self.secrets)
            return rec

        async def attempt(k: int) -> dict[str, Any]:
            state["attempts"] = k + 1
            try:
                response, body = await asyncio.wait_for(self._send(client, q), self.s.timeout)
            except asyncio.TimeoutError:
                return done("timeout", f"no complete response within {self.s.timeout:g} s", transient=True)
            except _Refused as e:
                return done("refused", str(e))
            except UrlRefused as e:  # the URL rule (kgqa.model.urlguard): e.g. a non-public address
                return done("refused", f"{display_url(str(self.url))}: {e}")
            except _HttpError as e:
                state["status"] = e.status
                return done("http_error", e.message)
            except httpx.TransportError as e:  # refused, reset, dropped, cut short, protocol junk: retried
                state["status"] = None
                raise Retryable(f"connection error: {_transport_detail(e)}") from None
            except httpx.DecodingError as e:
                return done("malformed_response", f"response body cannot be decoded: {e}")
            except httpx.HTTPError as e:  # anything else httpx raises ends this question, never the run
                return done("http_error", f"{type(e).__name__}: {e}")
            status = state["status"] = response.status_code
            raw = body.decode("utf-8", "replace")
            if 200 <= status < 300:
                p = self._parse(body, q)
                extra: dict[str, Any] = {"raw": raw}
                if p.sparql is not None:
                    extra["sparql"] = p.sparql
                if p.answer is not None:
                    extra["answer"] = to_results_json(p.answer)
                if p.warnings:
                    extra["warnings"] = p.warnings
                if p.metadata:
                    extra["metadata"] = p.metadata
                return done(p.outcome, p.message, **extra)
            snippet = " ".join(raw[:SNIPPET].split())
            last = f"HTTP {status}" + (f": {snippet}" if snippet else "")
            if status not in RETRY_STATUSES:
                return done("http_error", last, raw=raw)
            rec["raw"] = raw
            raise Retryable(last, retry_after_seconds(response.headers.get("retry-after")), status)

        try:
            return await self.s.retry.run(attempt, limiter=self.limiter)
        except GaveUp as g:
            return done("http_error", g.message, transient=True)


@functools.lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    """One verifying SSL context per process (certifi's CA bundle, as httpx uses by default)."""
    try:
        certifi = lazy.certifi()
    except ImportError:  # pragma: no cover - httpx depends on certifi
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


def is_connection_failure(rec: dict[str, Any]) -> bool:
    """A question that failed because the system could not be reached (after its retries)."""
    return rec.get("outcome") != "ok" and failure_reason(rec).startswith(("connection", "unknown host"))


async def _ask_all(asker: _Asker, todo: list[Question], commit: Callable[[list[dict[str, Any]]], None],
                   tripped: Callable[[], bool] = lambda: False,
                   reuse: Callable[[str], dict[str, Any] | None] = lambda qid: None) -> None:
    s = asker.s
    limits = httpx.Limits(max_connections=s.concurrency, max_keepalive_connections=s.concurrency)

    headers = {"User-Agent": f"kgqa/{__version__} httpx/{httpx.__version__}", **s.headers}
    # TCP_NODELAY: httpx writes a POST's headers and body separately; with Nagle's algorithm the
    # body waits for the server's delayed ACK (about 40 ms per request on Linux loopback)
    # only the origin of the URL is ever contacted, so an http:// system never needs TLS (and
    # building a verifying SSL context costs tens of milliseconds per client)
    verify: Any = _ssl_context() if asker.url.scheme == "https" else False
    transport: httpx.AsyncBaseTransport = httpx.AsyncHTTPTransport(
        limits=limits, trust_env=False, verify=verify, socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    # the URL rule checked at every request, the connection pinned to the checked address
    transport = GuardedAsyncTransport(transport, Guard(str(asker.url)))
    if asker.limiter is not None:  # sends 1/rps apart, measured when the bytes go out
        transport = PacedTransport(transport, asker.limiter)
    loop = asyncio.get_running_loop()
    pending: asyncio.Queue = asyncio.Queue()

    async def journal_writer() -> None:
        # group commit on one writer thread: whatever answers arrived while the last batch was
        # being written go to disk together (one fsync), in arrival order; a slow disk never
        # stalls the requests in flight
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="kgqa-journal") as writer:
            while True:
                batch = [await pending.get()]
                while not pending.empty():
                    batch.append(pending.get_nowait())
                if batch[-1] is None:
                    batch.pop()
                    stop = True
                else:
                    stop = False
                try:
                    if batch:
                        await loop.run_in_executor(writer, commit, [rec for rec, _ in batch])
                except BaseException as e:  # noqa: BLE001 - handed to every waiting worker
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(e)
                    if not isinstance(e, Exception):
                        raise
                else:
                    for _, fut in batch:
                        fut.set_result(None)
                if stop:
                    return

    async with httpx.AsyncClient(follow_redirects=False, timeout=None, headers=headers, trust_env=False,
                                 transport=transport) as client:
        it = iter(todo)
        writer_task = asyncio.create_task(journal_writer())

        async def worker() -> None:
            # one shared iterator: each question is taken by one worker, which takes its next
            # question only once its last answer is on disk
            for q in it:
                if tripped():  # the circuit breaker opened: leave the rest unasked
                    return
                rec = reuse(q.id)  # (journalled meanwhile by another session: not asked again)
                if rec is None:
                    rec = await asker.ask(client, q)
                done = loop.create_future()
                pending.put_nowait((rec, done))
                await done

        try:
            await asyncio.gather(*(worker() for _ in range(min(s.concurrency, len(todo)) or 1)))
        finally:
            pending.put_nowait(None)
            await writer_task


def _run_async(coro) -> None:
    """Run ``coro`` on a fresh event loop in a worker thread (works inside notebooks, whose
    thread already runs a loop). Ctrl-C cancels it: requests in flight are abandoned, answers
    already received are still journalled, then KeyboardInterrupt propagates."""
    loop = asyncio.new_event_loop()
    box: dict[str, Any] = {}

    def runner() -> None:
        asyncio.set_event_loop(loop)
        try:
            box["task"] = loop.create_task(coro)
            loop.run_until_complete(box["task"])
        except BaseException as e:  # noqa: BLE001 - handed to the calling thread
            box["error"] = e
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    t = threading.Thread(target=runner, name="kgqa-ask", daemon=True)
    t.start()
    try:
        while t.is_alive():
            t.join(0.2)
    except KeyboardInterrupt:
        task = box.get("task")
        if task is not None:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop closed meanwhile: nothing left to cancel
                pass
        t.join(30)
        raise
    err = box.get("error")
    if err is not None:
        raise err


# --------------------------------------------------------------------------- the run


def prediction_from_record(rec: dict[str, Any]) -> Prediction:
    """The prediction a journal record stands for: the failure as ``status`` (with the
    message), or the parsed query / answers; everything the client saw in
    ``metadata["system"]`` (outcome, HTTP status, attempts, language, question, warnings, the
    raw response)."""
    status = OUTCOME_STATUS.get(rec.get("outcome"), Status.MALFORMED_RESPONSE)
    answer = None
    if status is Status.OK and rec.get("answer") is not None:
        answer = from_results_json(rec["answer"])
    system = {k: rec[k] for k in ("outcome", "http_status", "attempts", "lang", "question", "warnings", "at", "raw")
              if k in rec and rec[k] is not None}
    md: dict[str, Any] = {"system": system}
    md.update(rec.get("metadata") or {})
    return Prediction(rec["id"], sparql=rec.get("sparql") if status is Status.OK else None, answer=answer,
                      elapsed=rec.get("elapsed"), status=status, message=rec.get("message", ""), metadata=md)


def _reuse_from(j: Any, again: Callable[[dict[str, Any]], bool]) -> tuple[Callable[[str], Any], set[str]]:
    """(what :func:`_ask_all` asks before each question, the questions it reused): the record
    that journal ``j`` received from another session meanwhile (``j.taken``: a stored
    experiment's journal after a take-over), unless it is to be asked again."""
    taken = getattr(j, "taken", None)
    skipped: set[str] = set()

    def reuse(qid: str) -> dict[str, Any] | None:
        rec = taken(qid) if taken is not None else None
        if rec is None or again(rec):
            return None
        skipped.add(qid)
        return rec

    return reuse, skipped


def ask(dataset: Dataset, url: str, protocol: str = "gerbil", settings: AskSettings | None = None, *,
        journal: str | Path | Any = None, name: str | None = None) -> AskResult:
    """Ask the system at ``url`` every question of ``dataset`` (see the module docstring) and
    return the run. With ``journal`` (a path, or a journal that opens itself:
    :func:`~kgqa.execute.live.journal.open_journal`), answers already journalled are reused
    (transient failures are asked again) and every new one is journalled as it arrives. Raises
    :class:`SystemFailed` when too many questions failed (unless ``allow_failures``) and
    :class:`AskInterrupted` on Ctrl-C."""
    s = settings or AskSettings()
    try:
        protocol = check_protocol(protocol)
    except ValueError as e:
        raise InputError("--protocol", str(e)) from None
    if not url.startswith(("http://", "https://")):
        raise InputError("URL", f"a system URL starts with http:// or https://, got {display_url(url)!r}")
    try:
        httpx.URL(url)
    except Exception as e:  # noqa: BLE001 - httpx raises several types for a bad URL
        raise InputError("URL", f"not a valid URL: {scrub(str(e), [url])}") from None
    shown = display_url(url)
    questions, problems = questions_for(dataset, s.langs)
    dataset_iri = s.dataset_iri or default_dataset_iri(dataset)
    header = {"url": shown, "protocol": protocol,
              "dataset": dataset_iri if protocol == "text2sparql" else dataset.name, "settings": s.describe()}
    j = open_journal(journal, header, fresh=s.fresh) if journal is not None else None
    jpath = j.path if isinstance(j, Journal) else None  # (None: a journal that is not a file)
    known: dict[str, dict[str, Any]] = dict(j.records) if j is not None else {}
    if j is not None and j.dropped:
        problems.append(Problem(j.where, None, f"{j.dropped} unreadable journal line(s) dropped "
                                "(a write cut short); those questions are asked again", "warning"))
    ids = {q.id for q in questions}

    def again(rec: dict[str, Any]) -> bool:
        return rec.get("outcome") != "ok" and (s.retry_failed or is_transient(rec))

    todo = [q for q in questions if q.id not in known or again(known[q.id])]
    asker, (reuse, skipped) = _Asker(url, protocol, s, dataset_iri), _reuse_from(j, again)

    t0 = time.monotonic()
    try:
        with progress_bar(len(todo), "asking", enabled=s.progress, status=True) as bar:
            tally: Counter[str] = Counter()
            in_a_row = [0]  # questions in a row that could not reach the system
            limit = 0 if s.allow_failures else s.breaker

            def commit(recs: list[dict[str, Any]]) -> None:
                if j is not None:
                    j.append_many(recs)
                for rec in recs:
                    known[rec["id"]] = rec
                    tally[rec["outcome"]] += 1
                    in_a_row[0] = in_a_row[0] + 1 if is_connection_failure(rec) else 0
                bar(len(recs), status=" ".join(f"{k}:{v}" for k, v in sorted(tally.items())))

            if todo:
                try:
                    _run_async(_ask_all(asker, todo, commit, lambda: bool(limit) and in_a_row[0] >= limit, reuse))
                except KeyboardInterrupt:
                    answered = sum(1 for q in questions if q.id in known and known[q.id].get("outcome") == "ok")
                    raise AskInterrupted(jpath, answered, len(questions)) from None
    finally:
        if j is not None:
            j.close()
    records = [known[q.id] for q in questions if q.id in known]
    extra = [rid for rid in known if rid not in ids]
    if extra and j is not None:
        problems.append(Problem(j.where, None, f"{len(extra)} journal record(s) for questions not asked now "
                                "(another --lang?); left out of the run", "warning"))
    run = Run(name or _run_name(url), [prediction_from_record(r) for r in records], "system",
              [jpath] if jpath is not None else [], problems,
              {"system": shown, "protocol": protocol, "dataset": dataset_iri})
    result = AskResult(run, records, shown, protocol, s, dataset_iri, asked=len(todo) - len(skipped),
                       reused=len(questions) - len(todo) + len(skipped), requests=asker.requests,
                       elapsed=time.monotonic() - t0, problems=problems,
                       langs=list(dict.fromkeys(q.lang for q in questions)), not_asked=len(questions) - len(records))
    n_failed = len(result.failed)
    if not s.allow_failures and (result.not_asked or n_failed and (n_failed == len(records)
                                                                   or n_failed > s.max_failures * len(records))):
        raise SystemFailed(result)
    return result


def _run_name(url: str) -> str:
    u = httpx.URL(url)
    return f"{u.host}:{u.port}" if u.port else u.host
