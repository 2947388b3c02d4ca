"""Asking a live QA system every question of a dataset: how a run gets produced.

:func:`ask` sends every question (every requested language) to ``url`` under one of the
contracts of :mod:`kgqa.execute.systems.protocols` and returns an :class:`AskResult` whose
``run`` kgqa scores like any run file. Per question it keeps the raw response body, the parsed
query and answers, the elapsed time, the HTTP status, the number of attempts and an outcome:

- ``ok``: a 2xx response that follows the contract;
- ``http_error``: a 4xx (at once), or 429 / 5xx (except 501, 505) / a connection failure still
  failing after ``retries`` more attempts; also a server asking (``Retry-After``) to wait longer
  than ``max_backoff``;
- ``timeout``: no complete response within ``timeout`` seconds for one attempt (not retried:
  a slow system stays slow);
- ``malformed_response``: a 2xx whose body does not follow the contract (see the protocols
  module), e.g. not JSON, or the answer to another question;
- ``refused``: kgqa refused to go on: a redirect to another host, port or scheme (only the
  origin of ``url`` is ever contacted), more than 5 redirects, or a body over
  ``max_response_bytes``.

A failed question becomes a :class:`~kgqa.model.Prediction` with that failure as its
``status`` (``http_error``, ``timeout``, ``malformed_response``, ``refused``), never an empty
answer; scoring treats it by the profile's ``failures`` rule.

Scheduling: at most ``concurrency`` requests in flight (GERBIL itself sends one at a time);
with ``rps``, request starts (retries included) at least ``1/rps`` s apart; retries wait
``backoff * 2**k`` s (capped at ``max_backoff``) with equal jitter, or exactly the server's
``Retry-After``. Same-origin redirects are followed (307/308 keep the method; a POST is not
turned into a GET: a 301/302/303 answer to a GERBIL POST is an ``http_error`` naming the
target). Proxy settings of the environment are ignored (``trust_env=False``).

Resume: with a ``journal`` path every finished question is appended to it at once (flushed
and fsync'd, see :mod:`kgqa.execute.systems.journal`); a rerun on the same journal asks only
the questions without a record (``retry_failed`` asks the failed ones again too, ``fresh``
starts over).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import socket
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx

from kgqa.execute.endpoint import RETRY_STATUSES, RateLimiter, backoff_wait, read_capped, retry_after_seconds
from kgqa.execute.systems.journal import Journal
from kgqa.execute.systems.protocols import (
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
    headers: dict[str, str] = field(default_factory=dict)

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

    def describe(self) -> str:
        """The client settings as they enter the signature, e.g. ``c4,t60,r3``."""
        parts = [f"c{self.concurrency}", f"t{self.timeout:g}", f"r{self.retries}"]
        if self.rps:
            parts.append(f"rps{self.rps:g}")
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

    @property
    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(r["outcome"] for r in self.records).items()))

    def signature_parts(self) -> dict[str, str]:
        """``system``, ``protocol``, the languages asked (``asked``) and the ``client``
        settings, for the evaluation signature."""
        return {"system": self.url, "protocol": self.protocol, "asked": ",".join(self.langs),
                "client": self.settings.describe()}


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


class _Asker:
    def __init__(self, url: str, protocol: str, settings: AskSettings, dataset_iri: str):
        self.url = httpx.URL(url)
        self.origin = _origin(self.url)
        self.protocol = protocol
        self.s = settings
        self.dataset_iri = dataset_iri
        self.requests = 0
        self.limiter = RateLimiter(settings.rps) if settings.rps else None

    async def _read(self, response: httpx.Response) -> bytes:
        cap = self.s.max_response_bytes
        return await read_capped(response, cap, lambda: _Refused(f"response larger than {cap} bytes; not read further"))

    async def _send(self, client: httpx.AsyncClient, q: Question) -> tuple[httpx.Response, bytes]:
        if self.protocol == "gerbil":
            request = client.build_request("POST", self.url, data=gerbil_request(q),
                                           headers={"Accept": "application/json"})
        else:
            request = client.build_request("GET", self.url, params=text2sparql_request(q, self.dataset_iri),
                                           headers={"Accept": "application/json"})
        for _hop in range(MAX_REDIRECTS + 1):
            self.requests += 1
            response = await client.send(request, stream=True)
            try:
                if response.status_code in REDIRECTS and "location" in response.headers:
                    target = response.url.join(response.headers["location"])
                    if _origin(target) != self.origin:
                        raise _Refused(f"HTTP {response.status_code} redirect to {target} refused: kgqa only "
                                       f"contacts {self.url.scheme}://{self.url.netloc.decode()}")
                    if request.method == "POST" and response.status_code not in (307, 308):
                        raise _HttpError(f"HTTP {response.status_code} redirect of a POST to {target}: not "
                                         "followed (it would drop the question); use that URL", response.status_code)
                    request = client.build_request(request.method, target, headers=request.headers,
                                                   content=request.content if request.method == "POST" else None)
                    continue
                body = await self._read(response)
                return response, body
            finally:
                await response.aclose()
        raise _Refused(f"more than {MAX_REDIRECTS} redirects")

    def _parse(self, body: bytes, q: Question) -> Parsed:
        if self.protocol == "gerbil":
            return parse_gerbil(body, q)
        return parse_text2sparql(body, q, self.dataset_iri)

    async def ask(self, client: httpx.AsyncClient, q: Question) -> dict[str, Any]:
        t0 = time.monotonic()
        rec: dict[str, Any] = {"id": q.id, "item": q.item, "lang": q.lang, "question": q.text}
        last = ""
        status: int | None = None

        def done(outcome: str, message: str = "", **kw: Any) -> dict[str, Any]:
            rec.update(outcome=outcome, message=message, http_status=status, attempts=attempts,
                       elapsed=round(time.monotonic() - t0, 6),
                       at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"), **kw)
            return rec

        attempts = 0
        for k in range(self.s.retries + 1):
            if self.limiter is not None:
                await self.limiter.acquire()
            attempts += 1
            retry_after: float | None = None
            try:
                response, body = await asyncio.wait_for(self._send(client, q), self.s.timeout)
            except asyncio.TimeoutError:
                return done("timeout", f"no complete response within {self.s.timeout:g} s")
            except _Refused as e:
                return done("refused", str(e))
            except _HttpError as e:
                status = e.status
                return done("http_error", e.message)
            except httpx.TransportError as e:  # refused, reset, dropped, cut short, protocol junk: retried
                last = f"connection error: {type(e).__name__}: {e or 'no detail'}"
                status = None
            except httpx.DecodingError as e:
                return done("malformed_response", f"response body cannot be decoded: {e}")
            except httpx.HTTPError as e:  # anything else httpx raises ends this question, never the run
                return done("http_error", f"{type(e).__name__}: {e}")
            else:
                status = response.status_code
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
                retry_after = retry_after_seconds(response.headers.get("retry-after"))
                rec["raw"] = raw
            if k == self.s.retries:
                break
            if retry_after is not None:
                if retry_after > self.s.max_backoff:
                    return done("http_error", f"{last} (the server asks to retry after {retry_after:g} s, more "
                                              f"than the {self.s.max_backoff:g} s kgqa waits)")
                wait = retry_after
            else:
                wait = backoff_wait(k, self.s.backoff, self.s.max_backoff)
            await asyncio.sleep(wait)
        return done("http_error", f"{last} (gave up after {attempts} attempts)")


@functools.lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    """One verifying SSL context per process (certifi's CA bundle, as httpx uses by default)."""
    try:
        import certifi
    except ImportError:  # pragma: no cover - httpx depends on certifi
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


async def _ask_all(asker: _Asker, todo: list[Question],
                   commit: Callable[[list[dict[str, Any]]], None]) -> None:
    s = asker.s
    limits = httpx.Limits(max_connections=s.concurrency, max_keepalive_connections=s.concurrency)
    from kgqa import __version__

    headers = {"User-Agent": f"kgqa/{__version__} httpx/{httpx.__version__}", **s.headers}
    # TCP_NODELAY: httpx writes a POST's headers and body separately; with Nagle's algorithm the
    # body waits for the server's delayed ACK (about 40 ms per request on Linux loopback)
    # only the origin of the URL is ever contacted, so an http:// system never needs TLS (and
    # building a verifying SSL context costs tens of milliseconds per client)
    verify: Any = _ssl_context() if asker.url.scheme == "https" else False
    transport = httpx.AsyncHTTPTransport(limits=limits, trust_env=False, verify=verify,
                                         socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
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


def ask(dataset: Dataset, url: str, protocol: str = "gerbil", settings: AskSettings | None = None, *,
        journal: str | Path | None = None, name: str | None = None) -> AskResult:
    """Ask the system at ``url`` every question of ``dataset`` (see the module docstring) and
    return the run. With ``journal``, answers already journalled are reused and every new one
    is journalled as it arrives."""
    s = settings or AskSettings()
    try:
        protocol = check_protocol(protocol)
    except ValueError as e:
        raise InputError("--protocol", str(e)) from None
    if not url.startswith(("http://", "https://")):
        raise InputError("URL", f"a system URL starts with http:// or https://, got {url!r}")
    try:
        httpx.URL(url)
    except Exception as e:  # noqa: BLE001 - httpx raises several types for a bad URL
        raise InputError("URL", f"not a valid URL: {e}") from None
    questions, problems = questions_for(dataset, s.langs)
    dataset_iri = s.dataset_iri or default_dataset_iri(dataset)
    header = {"url": url, "protocol": protocol, "dataset": dataset_iri if protocol == "text2sparql" else dataset.name,
              "settings": s.describe()}
    j = Journal.open(Path(journal), header, fresh=s.fresh) if journal is not None else None
    known: dict[str, dict[str, Any]] = dict(j.records) if j is not None else {}
    if j is not None and j.dropped:
        problems.append(Problem(str(j.path), None, f"{j.dropped} unreadable journal line(s) dropped "
                                "(a write cut short); those questions are asked again", "warning"))
    ids = {q.id for q in questions}
    todo = [q for q in questions
            if q.id not in known or (s.retry_failed and known[q.id].get("outcome") != "ok")]
    asker = _Asker(url, protocol, s, dataset_iri)
    t0 = time.monotonic()
    try:
        with progress_bar(len(todo), "asking", enabled=s.progress, status=True) as bar:
            tally: Counter[str] = Counter()

            def commit(recs: list[dict[str, Any]]) -> None:
                if j is not None:
                    j.append_many(recs)
                for rec in recs:
                    known[rec["id"]] = rec
                    tally[rec["outcome"]] += 1
                bar(len(recs), status=" ".join(f"{k}:{v}" for k, v in sorted(tally.items())))

            if todo:
                _run_async(_ask_all(asker, todo, commit))
    finally:
        if j is not None:
            j.close()
    records = [known[q.id] for q in questions if q.id in known]
    extra = [rid for rid in known if rid not in ids]
    if extra:
        problems.append(Problem(str(journal), None, f"{len(extra)} journal record(s) for questions not asked now "
                                "(another --lang?); left out of the run", "warning"))
    run = Run(name or _run_name(url), [prediction_from_record(r) for r in records], "system",
              [Path(journal)] if journal is not None else [], problems,
              {"system": url, "protocol": protocol, "dataset": dataset_iri})
    return AskResult(run, records, url, protocol, s, dataset_iri, asked=len(todo), reused=len(questions) - len(todo),
                     requests=asker.requests, elapsed=time.monotonic() - t0, problems=problems,
                     langs=list(dict.fromkeys(q.lang for q in questions)))


def _run_name(url: str) -> str:
    u = httpx.URL(url)
    return f"{u.host}:{u.port}" if u.port else u.host
