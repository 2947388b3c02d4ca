"""The kgqa web platform: a Starlette app over an experiment store.

Pages (server-rendered Jinja2, autoescaped; a little JS for live progress, sortable and
filterable tables): ``/`` home, ``/new`` new experiment, ``/e/<id>`` experiment (permalink),
``/e/<id>/q/<qid>`` question detail, ``/e/<id>/download/<fmt>`` downloads,
``/leaderboards`` and ``/leaderboard/<dataset>/<profile>``, ``/compare?e=ID&e=ID``,
``/datasets`` and ``/datasets/<name>``. The routes live in :mod:`kgqa.web.routes` by area;
:func:`create_app` only wires them to the shared parts (:class:`kgqa.web.context.Web`).

Safe by default (:mod:`kgqa.web.security`): a Host allow-list against DNS rebinding; every
state-changing request checked for its origin and a server-signed CSRF token; security headers
on every response; request bodies capped; no request names a server file (datasets come from
the registry, KGs from the names the server was started with, uploads go to private temporary
folders); the server asks live systems and endpoints only when started to, and then no
loopback or private address unless listed; uploads are read in worker processes
(:mod:`kgqa.web.uploads`) and experiments evaluated in others (:mod:`kgqa.web.jobs`), so pages
stay responsive; predicted SPARQL runs under the execute stage's sandbox and caps; an optional
shared token guards every page. A store with accounts (:mod:`kgqa.web.accounts`) makes it a
hosted challenge: everyone logs in, a participant sees its own experiments and the public
leaderboards, organisers see everything, freeze leaderboards and read the audit log.
"""

from __future__ import annotations

import gc
import secrets
import threading
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

import kgqa.analyze.comparison  # noqa: F401  (what the first leaderboard needs)
import kgqa.analyze.stats  # noqa: F401
import kgqa.report.html  # noqa: F401
from kgqa import lazy
from kgqa.load import registry
from kgqa.store import Store, StoreError
from kgqa.web.accounts import Login
from kgqa.web.context import HERE, Settings, Web, web_of
from kgqa.web.limits import BodyLimit
from kgqa.web.routes import account, experiments, new, pages
from kgqa.web.security import HostPolicy, Security

__all__ = ["Settings", "create_app", "default_kgs"]


def default_kgs() -> dict[str, str]:
    """KGs offered without configuration: the built-in demo KG and, when the shared data is
    present, the CK25 KG."""
    return registry.available_kgs()


def create_app(store: Store, settings: Settings | None = None) -> Starlette:
    settings = settings or Settings()
    web = Web(store, settings)
    secret = secrets.token_bytes(32)  # per server: CSRF tokens and auth cookies end with it
    routes = [*pages.ROUTES, *new.ROUTES, *experiments.ROUTES, *account.ROUTES,
              Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")]
    middleware = [
        Middleware(Security, secret=secret, hosts=HostPolicy(settings.host, settings.allowed_hosts),
                   token=settings.token, port=settings.port),
        Middleware(Login, accounts=web.accounts, port=settings.port),
        Middleware(BodyLimit, max_bytes=int(settings.max_upload_mb * 1024 * 1024)),
    ]
    app = Starlette(routes=routes, middleware=middleware, lifespan=_lifespan,
                    exception_handlers={404: _not_found, 405: _not_found, 500: _server_error})
    app.state.web = web
    app.state.store = store
    app.state.jobs = web.jobs
    app.state.settings = settings
    return app


@asynccontextmanager
async def _lifespan(app: Starlette):
    web: Web = app.state.web
    if web.settings.resume:
        await run_in_threadpool(web.jobs.resume)
    if await run_in_threadpool(web.store.boards):
        # a store with leaderboards: their statistics (SciPy: seconds to import) load before
        # the server answers, not in the first leaderboard's request nor beside other pages
        await run_in_threadpool(_warm_imports)
    elif web.accounts is not None:
        # a hosted challenge before its first result: loaded beside the first pages, not in the
        # leaderboard request of a participant once results arrive (seconds on a busy machine)
        threading.Thread(target=_warm_imports, name="kgqa-warm-imports", daemon=True).start()
    web.warmer.submit(web.warm)
    web.jobs.start()
    yield
    web.jobs.shutdown()
    web.warmer.shutdown(wait=False, cancel_futures=True)
    web.views.boards.shutdown()
    web.checker.shutdown()
    # the ended pools' queues sit in reference cycles: collected now, their semaphores are
    # released here (uvicorn ends a SIGTERM-ed server by the signal, so no exit hook runs and
    # the resource tracker would warn of "leaked semaphore objects")
    gc.collect()


async def _not_found(request: Request, exc: Exception) -> Response:
    return await web_of(request).error(request, getattr(exc, "status_code", 404), getattr(exc, "detail", "not found"))


async def _server_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, StoreError):  # disk full, database unreachable: the cause, in one line
        return await web_of(request).error(request, 503, f"the experiment store failed: {exc.problem.message}")
    return await web_of(request).error(request, 500, f"internal error: {type(exc).__name__}")


def _warm_imports() -> None:
    lazy.scipy_stats()  # the leaderboard's letters are paired tests; kgqa.analyze.stats imports it late
