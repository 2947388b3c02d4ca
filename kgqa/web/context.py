"""What every route of the web app shares: :class:`Web` (the store, the settings, the job
queue, the upload checker, the templates) and the small helpers the routes call (render a page
or an error, check a form's CSRF token, read the experiment a path names). One :class:`Web`
per app, at ``app.state.web``; a route finds it with :func:`web_of`."""

from __future__ import annotations

import json
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.templating import Jinja2Templates

import kgqa
from kgqa.load import formats as load_formats
from kgqa.model import InputError
from kgqa.model.urlguard import UrlRule
from kgqa.report import numbers
from kgqa.store import Store
from kgqa.store.accounts import Account, Accounts
from kgqa.store.export import FORMATS
from kgqa.web.accounts import Throttle, quota_message, sees
from kgqa.web.jobs import Jobs
from kgqa.web.uploads import Checker, check_url, web_wording
from kgqa.web.views import Views

HERE = Path(__file__).parent
DOWNLOADS = {k: ext for k, (ext, _media) in FORMATS.items()}
ID = re.compile(r"^[0-9a-f]{6,32}$")


@dataclass
class Settings:
    """``kgs``: KG name -> ``--kg`` value (RDF file(s), store dir or endpoint URL) the form
    offers; ``max_upload_mb`` caps a request body; ``max_unpacked_mb`` caps what a compressed
    RDF upload may inflate to; ``allow_endpoint_urls`` lets the form name a SPARQL endpoint and
    ``allow_system_urls`` a live QA system (off: the server fetches no URL a form names; on:
    public hosts only, plus the hosts in ``allowed_url_hosts``); ``token``: a shared secret
    every request must carry (``?token=``, cookie or ``Authorization: Bearer``); ``host`` and
    ``port``: where the server is bound (the Host allow-list), ``allowed_hosts`` more host
    names it answers to; ``upload_workers`` processes read uploads, at most ``upload_queue``
    waiting; ``worker_memory_mb``: the address-space limit of each experiment and upload
    worker process (0: none); ``hidden_gold``: dataset name -> the ids of the questions whose
    outcomes are published: experiments on such a dataset show aggregate scores only, and
    per-question outcomes for the published questions (a challenge's test set); ``frozen``:
    dataset -> an ISO time (UTC) its leaderboards rank experiments created up to;
    ``closed``: dataset -> an ISO time (UTC) from which the server takes no new experiment on it
    (a submission deadline); ``accounts``: ask everyone to log in (None: when the store holds
    accounts, :mod:`kgqa.web.accounts`); ``quota_per_day`` / ``quota_total``: the most
    experiments a participant submits per UTC day / in all (0: no limit; organisers have
    none)."""

    kgs: dict[str, str] = field(default_factory=dict)
    max_upload_mb: float = 50.0
    max_unpacked_mb: float = 512.0
    allow_endpoint_urls: bool = False
    allow_system_urls: bool = False
    allowed_url_hosts: list[str] = field(default_factory=list)
    token: str | None = None
    workers: int = 1
    timeout: float = 30.0
    resume: bool = True
    host: str = "127.0.0.1"
    port: int | None = None
    allowed_hosts: list[str] = field(default_factory=list)
    upload_workers: int = 2
    upload_queue: int = 32
    worker_memory_mb: float = 0.0
    hidden_gold: dict[str, frozenset[str]] = field(default_factory=dict)
    frozen: dict[str, str] = field(default_factory=dict)
    closed: dict[str, str] = field(default_factory=dict)
    accounts: bool | None = None
    quota_per_day: int = 0
    quota_total: int = 0


def templates() -> Jinja2Templates:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                             undefined=jinja2.StrictUndefined, auto_reload=False)  # compiled once, no stat a page
    # numbers print as in every report (kgqa.report.numbers: KGQA_DIGITS decimals)
    env.filters["num"] = numbers.score
    env.filters["ci"] = numbers.ci
    env.filters["pvalue"] = numbers.pvalue
    env.filters["tojson_compact"] = lambda v: json.dumps(v, ensure_ascii=False)
    env.filters["web_wording"] = web_wording
    env.globals["version"] = kgqa.__version__
    return Jinja2Templates(env=env)


class Web:
    """The app's shared parts: ``store``, ``settings``, ``views`` (what pages show),
    ``jobs`` (experiments evaluated in worker processes), ``checker`` (uploads read in
    others), ``reports`` (a few HTML reports, cached with their CSP)."""

    def __init__(self, store: Store, settings: Settings):
        self.store = store
        self.settings = settings
        self.templates = templates()
        self.views = Views(store, settings.worker_memory_mb)
        self.url_hosts = frozenset(h.strip().strip("[]").lower() for h in settings.allowed_url_hosts if h.strip())
        # what the jobs' requests may reach, redirect hops included: public hosts, the listed hosts,
        # and the hosts of the endpoints the server was started with (the operator's own)
        own = {urlsplit(v).hostname or "" for v in settings.kgs.values() if str(v).startswith(("http://", "https://"))}
        url_rule = UrlRule(public_only=True, allowed_hosts=self.url_hosts | {h.lower() for h in own if h})
        self.jobs = Jobs(store, settings.kgs, workers=settings.workers, timeout=settings.timeout,
                         refuse=self.refuse_stored, memory_mb=settings.worker_memory_mb, url_rule=url_rule,
                         finished=self.finished)
        self.checker = Checker(settings.upload_workers, settings.upload_queue, memory_mb=settings.worker_memory_mb)
        self.reports: dict[str, tuple[bytes, str]] = {}  # experiment id -> (HTML report, its CSP)
        # accounts (a hosted challenge): None serves one local user, as a store without accounts does
        on = settings.accounts if settings.accounts is not None else Accounts(store).any()
        self.accounts: Accounts | None = Accounts(store) if on else None
        self.throttle = Throttle()
        self.submitting = threading.Lock()  # a quota's check and the new experiment, one at a time
        self.warmer = ThreadPoolExecutor(1, thread_name_prefix="kgqa-warm")  # page data precomputed (finished)

    def finished(self, eid: str) -> None:
        """Experiment ``eid`` finished here: its leaderboard's tests (:mod:`kgqa.web.boards`)
        and its page data are computed now, in a thread of their own, not in the request of
        the participant who polls for it."""
        try:
            self.warmer.submit(self._warm_finished, eid)
        except RuntimeError:  # the server is stopping
            pass

    def _warm_finished(self, eid: str) -> None:
        try:
            e = self.store.get(eid, results=False)
            if e is None or e.status != "finished":
                return
            self.views.precompute_page(e, self.published(e))  # first: its participant is about to open it
            self.views.warm_board(e.dataset, e.profile, self.frozen_at(e.dataset))
        except Exception as err:  # the page computes it then: nothing lost
            print(f"kgqa web: experiment {eid}: precomputing its pages: {type(err).__name__}: {err}", file=sys.stderr)

    def warm(self) -> None:
        """Compile every template and compute the page data of the datasets a challenge or a
        leaderboard shows (a dataset page's characteristics: seconds on a busy machine), at
        start, in a thread: not in the first participants' requests."""
        for name in self.templates.env.list_templates():
            self.templates.env.get_template(name)
        names = set(self.settings.hidden_gold) | {d for d, _p, _n in self.store.boards()}
        for name in sorted(names):
            try:
                self.views.dataset(name)
            except Exception:  # an unknown or absent dataset: its page says so when asked
                continue

    def user(self, request: Request) -> Account | None:
        """The logged-in account (None: no one, or a server without accounts)."""
        return getattr(request.state, "user", None)

    def visible(self, request: Request, e: Any) -> bool:
        """The requester may see experiment ``e`` (:func:`kgqa.web.accounts.sees`)."""
        user = self.user(request)
        return self.accounts is None or (user is not None and sees(user, e))

    def mine(self, request: Request) -> str | None:
        """The account whose experiments a listing shows (None: every experiment)."""
        user = self.user(request)
        return user.name if user is not None and not user.organiser else None

    def quota_message(self, request: Request) -> str | None:
        """Why the requester may submit no more experiments now (None: it may)."""
        if self.accounts is None:
            return None
        return quota_message(self.store, self.user(request), self.settings.quota_per_day, self.settings.quota_total)

    def audit(self, request: Request, action: str, target: str | None = None, detail: str | None = None) -> None:
        """An audit-log entry for the requester (servers with accounts)."""
        if self.accounts is not None:
            user = self.user(request)
            self.accounts.log(user.name if user else None, action, target, detail)

    def frozen_at(self, dataset: str) -> str | None:
        """When ``dataset``'s leaderboards froze (``--freeze-leaderboard`` or an organiser's
        freeze, the earlier), None: they are not frozen."""
        times = [t for t in (self.settings.frozen.get(dataset),
                             self.accounts.frozen().get(dataset) if self.accounts else None) if t]
        return min(times) if times else None

    def refuse_stored(self, e: Any) -> str | None:
        """Why this server will not (re-)run a stored experiment (None: it will)."""
        s = self.settings
        try:
            if e.system_url:
                if not s.allow_system_urls:
                    return ("this server does not ask live systems (start it with --allow-system-urls); "
                            f"not asked: {e.system_url}")
                check_url(e.system_url, "system URL", self.url_hosts)
            if e.kg and e.kg.startswith(("http://", "https://")) and not e.kg_file:
                if not s.allow_endpoint_urls:
                    return "this server does not query endpoint URLs from the form (start it with --allow-endpoint-urls)"
                check_url(e.kg, "kg endpoint", self.url_hosts)
        except InputError as err:
            return str(err)
        return None

    def published(self, e: Any) -> frozenset[str] | None:
        """The questions of ``e`` whose outcomes may be shown when its dataset's gold is hidden
        (None: not hidden, every question may be shown)."""
        listed = self.settings.hidden_gold.get(e.dataset)
        if listed is None or self.accounts is None:
            return listed
        return listed | self.accounts.published(e.dataset)  # and those an organiser published from the web

    def closed_message(self, dataset: str) -> str | None:
        """Why no new experiment on ``dataset`` is taken now (None: submissions are open)."""
        when = self.settings.closed.get(dataset)
        if when is None or datetime.now(timezone.utc).isoformat(timespec="seconds") < when:
            return None
        return f"submissions on {dataset} closed at {when} (UTC)"

    def render(self, request: Request, _template: str, _status: int = 200, **ctx: Any) -> HTMLResponse:
        """The page (blocking: call it in a worker thread, as :meth:`page` and the routes that
        read the store and render in one thread hop do)."""
        ctx.setdefault("title", "kgqa")
        ctx["csrf"] = getattr(request.state, "csrf", "")
        ctx["user"] = self.user(request)
        ctx["accounts_on"] = self.accounts is not None
        ctx["request"] = request
        return self.templates.TemplateResponse(request, _template, ctx, status_code=_status)

    def render_error(self, request: Request, status: int, message: str) -> HTMLResponse:
        """The error page (blocking, as :meth:`render`)."""
        return self.render(request, "error.html", status, title=f"kgqa · {status}", status=status, message=message)

    async def page(self, request: Request, _template: str, _status: int = 200, **ctx: Any) -> HTMLResponse:
        """The page rendered in a worker thread: the event loop keeps answering meanwhile."""
        return await run_in_threadpool(self.render, request, _template, _status, **ctx)

    async def error(self, request: Request, status: int, message: str) -> HTMLResponse:
        return await self.page(request, "error.html", status, title=f"kgqa · {status}", status=status, message=message)

    def exp_of(self, request: Request, results: bool = True) -> Any:
        """The experiment the path's ``eid`` names (None: a malformed id, no such one, or
        another participant's); blocking, as :meth:`render`."""
        eid = request.path_params["eid"]
        if not ID.match(eid):
            return None
        e = self.store.get(eid, results=results)
        return e if e is not None and self.visible(request, e) else None  # another's: as if absent

    async def get_exp(self, request: Request, results: bool = True) -> Any:
        """:meth:`exp_of` in a worker thread."""
        if not ID.match(request.path_params["eid"]):
            return None
        return await run_in_threadpool(self.exp_of, request, results)


HIDDEN = ("the test answers of this dataset are hidden on this server: aggregate scores only, and per-question "
          "outcomes for the questions the organiser published")


def web_of(request: Request) -> Web:
    return request.app.state.web


def csrf_ok(request: Request, form: Any) -> bool:
    """The form carries the CSRF token of this client's session."""
    sec = getattr(request.state, "security", None)
    sent = form.get("csrf", "")
    return sec is not None and isinstance(sent, str) and sec.csrf_ok(getattr(request.state, "session", None), sent)


def format_names() -> dict[str, list[str]]:
    """Dataset and run format names (the form's format fields)."""
    return {k: [f.name for f in load_formats.formats(k)] for k in ("dataset", "run")}
