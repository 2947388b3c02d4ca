"""The adapter's web application (Starlette, served by uvicorn).

Routes:

- ``/`` serves the protocol chosen with ``protocol``; ``/gerbil`` and ``/text2sparql`` serve
  each contract whatever the choice;
- GERBIL QA: ``POST`` with an ``application/x-www-form-urlencoded`` UTF-8 body
  ``query=<question>&lang=<code>`` (``lang`` defaults to ``en``) -> QALD JSON
  ``{"questions": [{"id", "question", "query": {"sparql"}, "answers": [...]}]}``; ``answers``
  are the source's, or, when the source gave only a query and a KG is attached, the result of
  executing it (sandboxed: the query is untrusted); when that execution fails the response
  carries the query only (the caller can execute it) and the failure under ``kgqa_error``;
- Text2SPARQL: ``GET ?question=<text>&dataset=<IRI>`` -> ``{"dataset", "question", "query"}``;
  a source with no query for the question (a blank query in a replayed run) answers 200 with an
  empty ``query`` (GERBIL: ``"query": {"sparql": ""}``), which kgqa scores as a missing query,
  as it scores the run file: never a 500 that clients retry;
- ``GET /health`` -> ``{"status": "ok", "protocol", "source", "questions", "kg", "requests",
  "warnings"}`` (``requests``: questions received per contract, and responses per HTTP status).

Bad requests get a JSON ``{"error": ...}`` and a 4xx: 400 (missing or empty parameter, body
not UTF-8), 404 (question not in a replayed run), 405 (wrong method, from
Starlette), 413 (body over ``max_body`` bytes, or question over ``max_question`` characters),
414 (query string over ``max_body`` bytes), 415 (a GERBIL body that is not form-encoded). A
failure of the system itself is a 500 with its message.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kgqa.execute.live.protocols import gerbil_response, text2sparql_response
from kgqa.model import Status
from kgqa.service.sources import Reply, ServiceError

MAX_BODY = 64 * 1024
MAX_QUESTION = 4096


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class Adapter:
    def __init__(self, source: Any, *, protocol: str = "gerbil", runner: Any = None, kg: str | None = None,
                 max_body: int = MAX_BODY, max_question: int = MAX_QUESTION, warn: Any = None):
        self.source = source
        self.protocol = protocol
        self.runner = runner
        self.kg = kg
        self.max_body = max_body
        self.max_question = max_question
        self.counts: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self._exec_lock = threading.Lock()
        #: warnings said so far (each once; also in /health)
        self.warnings: list[str] = []
        self._warn = warn

    def warn_once(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            if self._warn is not None:
                self._warn(f"warning: {message}")

    # ------------------------------------------------------------------ helpers

    def _check_question(self, text: str | None, name: str) -> str:
        if text is None or not text.strip():
            raise ServiceError(400, f"missing or empty parameter {name!r} (the question text)")
        if len(text) > self.max_question:
            raise ServiceError(413, f"question longer than {self.max_question} characters")
        return text

    async def _body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None:
            try:
                if int(declared) > self.max_body:
                    raise ServiceError(413, f"request body over {self.max_body} bytes")
            except ValueError:
                raise ServiceError(400, "bad Content-Length header") from None
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body:
                raise ServiceError(413, f"request body over {self.max_body} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def _execute(self, sparql: str) -> tuple[Any, str | None]:
        with self._exec_lock:
            o = self.runner.run({"q": sparql}, untrusted=True)["q"]
        if o.status is Status.OK:
            return o.answer, None
        return None, f"{o.status.value}: {o.message}"

    async def _complete(self, reply: Reply) -> tuple[Reply, str | None]:
        if reply.answer is None and reply.sparql and self.runner is not None:
            answer, err = await asyncio.get_running_loop().run_in_executor(None, self._execute, reply.sparql)
            reply.answer = answer
            return reply, err
        return reply, None

    def _respond(self, doc: Any, status: int = 200) -> JSONResponse:
        self.statuses[str(status)] += 1
        return JSONResponse(doc, status_code=status)

    def _fail(self, e: ServiceError) -> JSONResponse:
        self.statuses[str(e.status)] += 1
        return _error(e.status, e.message)

    # ------------------------------------------------------------------ routes

    async def gerbil(self, request: Request) -> JSONResponse:
        self.counts["gerbil"] += 1
        try:
            ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype != "application/x-www-form-urlencoded":
                raise ServiceError(415, "GERBIL QA requests are POSTs with an application/x-www-form-urlencoded "
                                        f"body query=...&lang=... (got Content-Type {ctype or 'none'!r})")
            body = await self._body(request)
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                raise ServiceError(400, "request body is not UTF-8") from None
            form = parse_qs(text, keep_blank_values=True, errors="strict")
            question = self._check_question((form.get("query") or [None])[0], "query")
            lang = ((form.get("lang") or ["en"])[0] or "en").strip()
            reply, err = await self._complete(await self.source.answer(question, lang, None))
        except ServiceError as e:
            return self._fail(e)
        except UnicodeDecodeError:
            return self._fail(ServiceError(400, "percent-encoded form value is not UTF-8"))
        extra = dict(reply.extra)
        if err:
            extra["kgqa_error"] = err
        return self._respond(gerbil_response(reply.id or "1", question, lang, reply.sparql, reply.answer, extra))

    async def text2sparql(self, request: Request) -> JSONResponse:
        self.counts["text2sparql"] += 1
        try:
            if len(request.url.query.encode()) > self.max_body:
                raise ServiceError(414, f"query string over {self.max_body} bytes")
            question = self._check_question(request.query_params.get("question"), "question")
            dataset = request.query_params.get("dataset")
            if dataset is None or not dataset.strip():
                raise ServiceError(400, "missing or empty parameter 'dataset' (the dataset IRI)")
            reply = await self.source.answer(question, None, dataset)
            if reply.dataset and reply.dataset != dataset:
                self.warn_once(f"requests name dataset {dataset!r}; the replayed run names {reply.dataset!r}: "
                               "answering by question")
            if reply.sparql is None and reply.answer is None:  # no query (a blank one in a replayed run)
                return self._respond(text2sparql_response(dataset, question, None))
            if reply.sparql is None:
                raise ServiceError(500, "the system gave no SPARQL query for this question; the Text2SPARQL "
                                        "contract carries queries only (serve it with --protocol gerbil)")
        except ServiceError as e:
            return self._fail(e)
        return self._respond(text2sparql_response(dataset, question, reply.sparql))

    async def root(self, request: Request) -> JSONResponse:
        if self.protocol == "gerbil":
            if request.method != "POST":
                return self._fail(ServiceError(405, "this GERBIL QA service answers POST requests "
                                                    "(query=...&lang=...); see /health"))
            return await self.gerbil(request)
        if request.method != "GET":
            return self._fail(ServiceError(405, "this Text2SPARQL service answers GET ?question=...&dataset=..."))
        return await self.text2sparql(request)

    async def health(self, request: Request) -> JSONResponse:
        return JSONResponse({
            "status": "ok", "protocol": self.protocol, "source": self.source.describe(),
            "questions": self.source.size, "kg": self.kg,
            "requests": {**dict(self.counts), "responses": dict(self.statuses)},
            "warnings": self.warnings,
        })


def create_app(source: Any, *, protocol: str = "gerbil", runner: Any = None, kg: str | None = None,
               max_body: int = MAX_BODY, max_question: int = MAX_QUESTION, warn: Any = None) -> Starlette:
    """The ASGI app serving ``source`` (a :mod:`kgqa.service.sources` source). ``runner`` (a
    :class:`kgqa.execute.executor.Executor`) executes query-only replies for GERBIL; ``warn``
    receives each warning once (e.g. requests naming another dataset IRI than the run)."""
    a = Adapter(source, protocol=protocol, runner=runner, kg=kg, max_body=max_body, max_question=max_question,
                warn=warn)
    app = Starlette(routes=[
        Route("/", a.root, methods=["GET", "POST"]),
        Route("/gerbil", a.gerbil, methods=["POST"]),
        Route("/text2sparql", a.text2sparql, methods=["GET"]),
        Route("/health", a.health, methods=["GET"]),
    ])
    app.state.adapter = a
    return app
