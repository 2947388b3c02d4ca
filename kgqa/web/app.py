"""The kgqa web platform: a Starlette app over an experiment store.

Pages (server-rendered Jinja2, autoescaped; a little JS for live progress, sortable and
filterable tables): ``/`` home, ``/new`` new experiment, ``/e/<id>`` experiment (permalink),
``/e/<id>/q/<qid>`` question detail, ``/e/<id>/download/<fmt>`` downloads,
``/leaderboards`` and ``/leaderboard/<dataset>/<profile>``, ``/compare?e=ID&e=ID``,
``/datasets`` and ``/datasets/<name>``.

Safe by default (:mod:`kgqa.web.security`): a Host allow-list against DNS rebinding; every
state-changing request checked for its origin and a server-signed CSRF token; security headers
on every response; request bodies capped; no request names a server file (datasets come from
the registry, KGs from the names the server was started with, uploads go to private temporary
folders); the server asks live systems and endpoints only when started to, and then no
loopback or private address unless listed; uploads are read in worker processes
(:mod:`kgqa.web.uploads`) and experiments evaluated in others (:mod:`kgqa.web.jobs`), so pages
stay responsive; predicted SPARQL runs under the execute stage's sandbox and caps; an optional
shared token guards every page.
"""

from __future__ import annotations

import gc
import html
import json
import re
import secrets
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

import kgqa
from kgqa.model import InputError
from kgqa.model.urlguard import UrlRule
from kgqa.report import numbers
from kgqa.store import Store, StoreError
from kgqa.store import runner
from kgqa.store.export import FORMATS
from kgqa.store.store import SORTS, shown_url
from kgqa.web.jobs import Jobs
from kgqa.web.security import HostPolicy, Security, inline_csp
from kgqa.web.uploads import Busy, Checker, UploadJob, check_url, web_wording
from kgqa.web.views import BOARD_ROWS, LIST_ROWS, Views

HERE = Path(__file__).parent
DOWNLOADS = {k: ext for k, (ext, _media) in FORMATS.items()}
_ID = re.compile(r"^[0-9a-f]{6,32}$")


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
    waiting."""

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


def default_kgs() -> dict[str, str]:
    """KGs offered without configuration: the built-in demo KG and, when the shared data is
    present, the CK25 KG."""
    from kgqa.load import registry

    return registry.available_kgs()


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    # numbers print as in every report (kgqa.report.numbers: KGQA_DIGITS decimals)
    env.filters["num"] = numbers.score
    env.filters["ci"] = numbers.ci
    env.filters["pvalue"] = numbers.pvalue
    env.filters["tojson_compact"] = lambda v: json.dumps(v, ensure_ascii=False)
    env.filters["web_wording"] = web_wording
    env.globals["version"] = kgqa.__version__
    return Jinja2Templates(env=env)


def create_app(store: Store, settings: Settings | None = None) -> Starlette:
    settings = settings or Settings()
    templates = _templates()
    views = Views(store)
    url_hosts = frozenset(h.strip().strip("[]").lower() for h in settings.allowed_url_hosts if h.strip())
    secret = secrets.token_bytes(32)  # per server: CSRF tokens and auth cookies end with it

    def refuse_stored(e: Any) -> str | None:
        """Why this server will not (re-)run a stored experiment (None: it will)."""
        try:
            if e.system_url:
                if not settings.allow_system_urls:
                    return ("this server does not ask live systems (start it with --allow-system-urls); "
                            f"not asked: {e.system_url}")
                check_url(e.system_url, "system URL", url_hosts)
            if e.kg and e.kg.startswith(("http://", "https://")) and not e.kg_file:
                if not settings.allow_endpoint_urls:
                    return "this server does not query endpoint URLs from the form (start it with --allow-endpoint-urls)"
                check_url(e.kg, "kg endpoint", url_hosts)
        except InputError as err:
            return str(err)
        return None

    # what the jobs' requests may reach, redirect hops included: public hosts, the listed hosts,
    # and the hosts of the endpoints the server was started with (the operator's own)
    own = {urlsplit(v).hostname or "" for v in settings.kgs.values() if str(v).startswith(("http://", "https://"))}
    url_rule = UrlRule(public_only=True, allowed_hosts=url_hosts | {h.lower() for h in own if h})
    jobs = Jobs(store, settings.kgs, workers=settings.workers, timeout=settings.timeout, refuse=refuse_stored,
                url_rule=url_rule)
    checker = Checker(settings.upload_workers, settings.upload_queue)
    reports: dict[str, tuple[bytes, str]] = {}  # experiment id -> (HTML report, its CSP)

    async def page(request: Request, _template: str, _status: int = 200, **ctx: Any) -> HTMLResponse:
        """The page rendered in a worker thread: the event loop keeps answering meanwhile."""
        ctx.setdefault("title", "kgqa")
        ctx["csrf"] = getattr(request.state, "csrf", "")
        ctx["request"] = request
        return await run_in_threadpool(templates.TemplateResponse, request, _template, ctx, status_code=_status)

    async def error(request: Request, status: int, message: str) -> HTMLResponse:
        return await page(request, "error.html", status, title=f"kgqa · {status}", status=status, message=message)

    async def csrf_ok(request: Request, form: Any) -> bool:
        sec = getattr(request.state, "security", None)
        sent = form.get("csrf", "")
        return sec is not None and isinstance(sent, str) and sec.csrf_ok(getattr(request.state, "session", None), sent)

    async def get_exp(request: Request, results: bool = True):
        eid = request.path_params["eid"]
        if not _ID.match(eid):
            return None
        return await run_in_threadpool(store.get, eid, results=results)

    # ------------------------------------------------------------------ pages

    def paging(request: Request) -> dict[str, Any]:
        """Page number, sort order and keyset cursor (``after``/``before``: an experiment id)
        from the query; bad values fall back to the defaults."""
        q = request.query_params
        try:
            n = max(1, int(q.get("page", "1")))
        except ValueError:
            n = 1
        sort = q.get("sort", "created")
        cursor = {k: q.get(k) for k in ("after", "before")}
        return {"page": n, "sort": sort if sort in SORTS else "created", "desc": q.get("dir", "desc") != "asc",
                **{k: v if v and _ID.match(v) else None for k, v in cursor.items()}}

    def listing(request: Request, per: int, count: Any, fetch: Any) -> tuple[list[Any], dict[str, Any]]:
        """A page of a listing: ``count()`` rows in all, ``fetch(limit=, offset=, after=,
        before=, sort=, descending=)`` -> :class:`~kgqa.store.store.Page` (a cursor whose
        experiment is gone falls back to the numbered page)."""
        p = paging(request)
        total = count()
        p["page"] = min(p["page"], max(1, -(-total // per)))
        kw = dict(limit=per, offset=(p["page"] - 1) * per, sort=p["sort"], descending=p["desc"])
        try:
            pg = fetch(after=p["after"], before=p["before"], **kw)
        except KeyError:
            pg = fetch(after=None, before=None, **kw)
        return pg.experiments, pager(request, p, total, per, pg.offset, [e.id for e in pg.experiments])

    def pager(request: Request, p: dict[str, Any], total: int, per: int, offset: int, ids: list[str]) -> dict[str, Any]:
        """What the pager shows for a page of ``ids`` starting after ``offset`` rows of
        ``total``: the rows' span and the links to the neighbouring pages, which seek from the
        page's first and last experiment (keyset paging: stable while experiments are added)."""
        from urllib.parse import urlencode

        keep = [(a, b) for a, b in request.query_params.multi_items() if a not in ("page", "after", "before")]

        def link(k: str, eid: str) -> str:
            return "?" + urlencode([*keep, (k, eid)])

        total = max(total, offset + len(ids))
        return {"page": offset // per + 1, "last": max(1, -(-total // per)), "total": total, "offset": offset,
                "shown": len(ids), "per": per, "sort": p["sort"], "desc": p["desc"],
                "prev": link("before", ids[0]) if ids and offset > 0 else None,
                "next": link("after", ids[-1]) if ids and offset + len(ids) < total else None}

    def sort_links(request: Request, p: dict[str, Any]) -> dict[str, str]:
        from urllib.parse import urlencode

        keep = [(a, b) for a, b in request.query_params.multi_items()
                if a not in ("page", "sort", "dir", "after", "before")]
        return {k: "?" + urlencode([*keep, ("sort", k), ("dir", "asc" if p["sort"] == k and p["desc"] else "desc")])
                for k in SORTS}

    async def home(request: Request) -> Response:
        def load() -> dict[str, Any]:
            exps, p = listing(request, LIST_ROWS, store.count, store.list_page)
            return {"experiments": exps, "boards": store.boards(), "pager": p, "sorts": sort_links(request, p)}

        return await page(request, "index.html", **await run_in_threadpool(load))

    def form_context(values: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "datasets": runner.registry_names(), "profiles": runner.profile_names(), "kgs": list(settings.kgs),
            "protocols": runner.PROTOCOLS, "allow_endpoint_urls": settings.allow_endpoint_urls,
            "allow_system_urls": settings.allow_system_urls, "formats": _format_names(),
            "max_upload_mb": settings.max_upload_mb, "values": values or {},
        }

    async def new_get(request: Request) -> Response:
        values = {k: v for k, v in request.query_params.items() if k in ("dataset", "profile", "kg")}
        return await page(request, "new.html", title="kgqa · new experiment", **form_context(values))

    async def new_post(request: Request) -> Response:
        try:
            form = await request.form(max_files=3, max_fields=40, max_part_size=64 * 1024)
        except _TooLarge:
            raise
        except Exception as err:  # malformed multipart, too many parts
            return await error(request, 400, f"cannot read the form: {err}")
        if not await csrf_ok(request, form):
            return await error(request, 403, "the form's CSRF token is missing or stale: reload the form and submit again")
        values = {k: str(v) for k, v in form.items() if not isinstance(v, UploadFile)}
        try:
            eid, given = await _create_experiment(form, values)
        except Busy as err:
            return await page(request, "new.html", 503, title="kgqa · new experiment", error=str(err), **form_context(values))
        except InputError as err:
            return await page(request, "new.html", 400, title="kgqa · new experiment", error=web_wording(str(err)),
                        **form_context(values))
        await run_in_threadpool(jobs.submit, eid, **given)
        return RedirectResponse(f"/e/{eid}", status_code=303)

    async def _read_upload(form: Any, key: str, what: str) -> tuple[str, bytes] | None:
        up = form.get(key)
        if not isinstance(up, UploadFile) or not up.filename:
            return None
        data = await up.read()
        if not data:
            raise InputError(up.filename, f"the uploaded {what} is empty")
        return runner.safe_filename(up.filename), data

    async def _create_experiment(form: Any, values: dict[str, str]) -> tuple[str, dict[str, str | None]]:
        """A new experiment from the form: (its id, the live system's and the SPARQL endpoint's
        URLs as given, for :meth:`Jobs.submit`: the store keeps them with their credentials as
        ``***``)."""
        profile = values.get("profile", "kgqa")
        if profile not in runner.profile_names():
            raise InputError("profile", f"unknown profile {profile!r}; one of: {', '.join(runner.profile_names())}")
        lang = values.get("lang", "").strip() or "all"
        gold = values.get("gold_answers", "stored")
        if gold not in ("stored", "executed"):
            raise InputError("gold answers", f"expected stored or executed, got {gold!r}")
        measures = values.get("measures", "").strip() or None
        if measures:
            runner.check_profile(profile, measures)  # an unknown measure is said now, not after the run
        try:
            timeout = float(values.get("timeout") or settings.timeout)
        except ValueError:
            raise InputError("timeout", f"expected seconds, got {values.get('timeout')!r}") from None
        if not 0 < timeout <= max(settings.timeout, 300):
            raise InputError("timeout", f"expected 0 < timeout <= {max(settings.timeout, 300):g} seconds")
        ds_fmt = values.get("dataset_format") or None
        run_fmt = values.get("run_format") or None
        formats = _format_names()
        for fmt, kind in ((ds_fmt, "dataset"), (run_fmt, "run")):
            if fmt is not None and fmt not in formats[kind]:
                raise InputError(f"{kind} format", f"unknown {kind} format {fmt!r}; one of: {', '.join(formats[kind])}")
        # dataset: a registry name or an upload
        ds_upload = await _read_upload(form, "dataset_file", "dataset")
        ds_name = values.get("dataset", "")
        if ds_upload is None:
            if ds_name not in runner.registry_names():
                raise InputError("dataset", "choose a registered dataset or upload a dataset file")
        # run: an upload or a live system
        run_upload = await _read_upload(form, "run_file", "run")
        system_url = values.get("system_url", "").strip() or None
        protocol = values.get("system_protocol") or None
        if run_upload is None and system_url is None:
            raise InputError("run", "upload a run file or give a system URL")
        if run_upload is not None and system_url is not None:
            raise InputError("run", "give either a run file or a system URL, not both")
        if system_url is not None:
            if not settings.allow_system_urls:
                raise InputError("system URL", "this server does not ask live systems (start it with "
                                               "--allow-system-urls to accept system URLs); upload the system's "
                                               "run file instead")
            if protocol not in runner.PROTOCOLS:
                raise InputError("system protocol", f"expected one of {', '.join(runner.PROTOCOLS)}")
            system_url = await run_in_threadpool(check_url, system_url, "system URL", url_hosts)
        # KG: none, a configured name, an upload, or (when allowed) an endpoint URL
        kg_choice = values.get("kg", "") or ""
        kg_upload = await _read_upload(form, "kg_file", "RDF file")
        kg_label: str | None = None
        if kg_upload is not None:
            kg_label = f"upload:{kg_upload[0]}"
        elif kg_choice == "endpoint":
            url = values.get("kg_endpoint", "").strip()
            if not settings.allow_endpoint_urls:
                raise InputError("kg", "this server only queries the knowledge graphs it was started with "
                                       "(start it with --allow-endpoint-urls to accept endpoint URLs)")
            kg_label = await run_in_threadpool(check_url, url, "kg endpoint", url_hosts)
        elif kg_choice:
            if kg_choice not in settings.kgs:
                raise InputError("kg", f"no knowledge graph named {kg_choice!r} here; offered: "
                                       f"{', '.join(settings.kgs) or 'none'}")
            kg_label = kg_choice
        run_name = values.get("run_name", "").strip()[:120]
        if not run_name:
            run_name = Path(run_upload[0]).stem if run_upload else shown_url(system_url) or "run"
        # read the uploads in a worker process: a bad file is reported on the form, naming file and record
        await checker.check(UploadJob(dataset=ds_name, dataset_upload=ds_upload, run_upload=run_upload,
                                      kg_upload=kg_upload, run_name=run_name, lang=lang, dataset_format=ds_fmt,
                                      run_format=run_fmt, max_unpacked_mb=settings.max_unpacked_mb))

        def save() -> str:
            ds_sha = store.put_file(ds_upload[1]) if ds_upload else None
            run_sha = store.put_file(run_upload[1]) if run_upload else None
            kg_sha = store.put_file(kg_upload[1]) if kg_upload else None
            options: dict[str, Any] = {"timeout": timeout}
            if ds_fmt:
                options["dataset_format"] = ds_fmt
            if run_fmt:
                options["run_format"] = run_fmt
            if values.get("reexecute"):
                options["reexecute"] = True
            return store.create(
                dataset=(f"{ds_upload[0]}@{ds_sha[:12]}" if ds_upload and ds_sha else ds_name), dataset_file=ds_sha,
                dataset_filename=ds_upload[0] if ds_upload else None,
                run_name=run_name, run_file=run_sha, run_filename=run_upload[0] if run_upload else None,
                system_url=system_url, system_protocol=protocol if system_url else None, profile=profile,
                measures=measures, lang=lang, kg=kg_label, kg_file=kg_sha,
                kg_filename=kg_upload[0] if kg_upload else None, gold_answers=gold, options=options,
            )

        return await run_in_threadpool(save), {"system_url": system_url,
                                               "kg_url": kg_label if kg_upload is None and kg_choice == "endpoint" else None}

    async def rerun(request: Request) -> Response:
        """A new experiment with the inputs and settings of this one (finished experiments
        never change; re-running makes a new one)."""
        e = await get_exp(request, results=False)
        if e is None:
            return await error(request, 404, "no such experiment")
        try:
            form = await request.form(max_files=0, max_fields=5, max_part_size=1024)
        except _TooLarge:
            raise
        except Exception as err:
            return await error(request, 400, f"cannot read the form: {err}")
        if not await csrf_ok(request, form):
            return await error(request, 403, "the form's CSRF token is missing or stale: reload the page and try again")
        why = refuse_stored(e)
        if not why:
            why = e.withheld_message()
        if why:
            return await error(request, 403, f"cannot re-run experiment {e.id}: {why}")
        eid = await run_in_threadpool(
            store.create, dataset=e.dataset, dataset_file=e.dataset_file, dataset_filename=e.dataset_filename,
            dataset_checksum=e.dataset_checksum, run_name=e.run_name, run_file=e.run_file,
            run_filename=e.run_filename, system_url=e.system_url, system_protocol=e.system_protocol,
            profile=e.profile, measures=e.measures, lang=e.lang, kg=e.kg, kg_file=e.kg_file,
            kg_filename=e.kg_filename, gold_answers=e.gold_answers, options={**e.options, "rerun_of": e.id})
        await run_in_threadpool(jobs.submit, eid)
        return RedirectResponse(f"/e/{eid}", status_code=303)

    async def experiment(request: Request) -> Response:
        e = await get_exp(request)
        if e is None:
            return await error(request, 404, f"no experiment {request.path_params['eid']!r} in this store")
        ctx: dict[str, Any] = {"e": e, "title": f"kgqa · {e.run_name} on {e.dataset}"}
        if e.status == "finished":
            ctx.update(await run_in_threadpool(lambda: dict(
                scores=views.scores(e), questions=views.questions(e), labels=views.question_labels(e),
                evaluation=views.evaluation(e), downloads=list(DOWNLOADS))))
        return await page(request, "experiment.html", **ctx)

    async def sections(request: Request) -> Response:
        """Outcomes, distribution, breakdowns and taxonomy (tables and figures of the report
        stage) of a finished experiment, as an HTML fragment the experiment page loads."""
        e = await get_exp(request)
        if e is None or e.status != "finished":
            return await error(request, 404, "no finished experiment with this id")
        body = await run_in_threadpool(views.sections, e)
        return HTMLResponse(str(body))

    async def status(request: Request) -> Response:
        e = await get_exp(request, results=False)
        if e is None:
            return JSONResponse({"error": "no such experiment"}, status_code=404)
        return JSONResponse({"id": e.id, "status": e.status, "done": e.progress_done, "total": e.progress_total,
                             "note": e.progress_note, "error": web_wording(e.error),
                             "headline": e.headline, "value": e.headline_value})

    async def question(request: Request) -> Response:
        e = await get_exp(request)
        if e is None or e.status != "finished":
            return await error(request, 404, "no finished experiment with this id")
        q = await run_in_threadpool(views.question, e, request.path_params["qid"])
        if q is None:
            return await error(request, 404, f"experiment {e.id} scored no question {request.path_params['qid']!r}")
        return await page(request, "question.html", title=f"kgqa · {q['id']}", e=e, q=q)

    async def download(request: Request) -> Response:
        e = await get_exp(request, results=False)  # results load only when not cached
        fmt = request.path_params["fmt"]
        if e is None or e.status != "finished":
            return await error(request, 404, "no finished experiment with this id")
        if fmt not in DOWNLOADS:
            return await error(request, 404, f"no download format {fmt!r}; formats: {', '.join(DOWNLOADS)}")
        name = f"kgqa-{e.id}.{DOWNLOADS[fmt]}"
        if fmt == "html":  # the report as the file is, its inline style and script allowed by hash; cached
            if e.id not in reports:
                text, _media = await run_in_threadpool(views.downloads, e, fmt)
                while len(reports) >= 16:
                    reports.pop(next(iter(reports)))
                reports[e.id] = (text.encode("utf-8"), inline_csp(text))
            body, csp = reports[e.id]
            return Response(body, media_type="text/html; charset=utf-8",
                            headers={"Content-Disposition": f'inline; filename="{name}"',
                                     "Content-Security-Policy": csp, "Cache-Control": "private, max-age=3600"})
        text, media = await run_in_threadpool(views.downloads, e, fmt)
        return Response(text, media_type=media + "; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def input_file(request: Request) -> Response:
        e = await get_exp(request)
        which = request.path_params["which"]
        if e is None or which not in ("run", "dataset", "kg"):
            return await error(request, 404, "no such file")
        sha = {"run": e.run_file, "dataset": e.dataset_file, "kg": e.kg_file}[which]
        name = {"run": e.run_filename, "dataset": e.dataset_filename, "kg": e.kg_filename}[which]
        if sha is None:
            return await error(request, 404, f"experiment {e.id} has no uploaded {which} file")
        return Response(await run_in_threadpool(store.get_file, sha), media_type="application/octet-stream",
                        headers={"Content-Disposition": f'attachment; filename="{runner.safe_filename(name)}"'})

    async def leaderboards(request: Request) -> Response:
        return await page(request, "leaderboards.html", title="kgqa · leaderboards",
                          boards=await run_in_threadpool(store.boards))

    async def leaderboard(request: Request) -> Response:
        ds, prof = request.path_params["dataset"], request.path_params["profile"]
        p = paging(request)
        board = await run_in_threadpool(lambda: views.leaderboard(ds, prof, page=p["page"], after=p["after"],
                                                                  before=p["before"]))
        if not board["rows"]:
            return await error(request, 404, f"no finished experiment on {ds} with profile {prof}")
        pg = pager(request, p, board["total"], BOARD_ROWS, board["offset"], [r["e"].id for r in board["rows"]])
        return await page(request, "leaderboard.html", title=f"kgqa · leaderboard {ds} · {prof}", board=board, pager=pg)

    async def compare(request: Request) -> Response:
        ids = [i for i in request.query_params.getlist("e") if i]
        if len(set(ids)) > 10:
            return await error(request, 400, f"compare at most 10 experiments at a time (got {len(set(ids))})")
        exps = []
        for i in dict.fromkeys(ids):
            e = await run_in_threadpool(store.get, i) if _ID.match(i) else None
            if e is None or e.status != "finished":
                return await error(request, 404, f"no finished experiment {i!r}")
            exps.append(e)
        if len(exps) < 2:
            def candidates() -> tuple[list[Any], dict[str, Any]]:
                return listing(request, LIST_ROWS, lambda: store.count(status="finished"),
                               lambda **kw: store.list_page(status="finished", **kw))

            found, p = await run_in_threadpool(candidates)
            return await page(request, "compare.html", title="kgqa · compare", exps=exps, body=None, candidates=found,
                        pager=p, message="choose two or more finished experiments on the same dataset")
        datasets = sorted({e.dataset for e in exps})
        if len(datasets) > 1:
            return await error(request, 400, f"the experiments are on different datasets ({', '.join(datasets)}): "
                                       "only experiments on one dataset can be compared")
        try:
            body = await run_in_threadpool(views.compare, exps)
        except ValueError as err:
            return await error(request, 400, str(err))
        return await page(request, "compare.html", title="kgqa · compare", exps=exps, body=body, candidates=[], pager=None,
                    message="")

    async def datasets(request: Request) -> Response:
        from kgqa.load import registry

        return await page(request, "datasets.html", title="kgqa · datasets",
                    entries=[(en, registry.where(en)) for en in registry.entries()],
                          boards=await run_in_threadpool(store.boards))

    async def dataset(request: Request) -> Response:
        name = request.path_params["name"]
        try:
            info = await run_in_threadpool(views.dataset, name)
        except KeyError:
            return await error(request, 404, f"no registered dataset {name!r}")
        return await page(request, "dataset.html", title=f"kgqa · {name}", name=name, info=info,
                    audit_kg=name if name in settings.kgs else None)

    async def dataset_audit(request: Request) -> Response:
        """The gold-query audit on the server's KG of the same name, as an HTML fragment."""
        name = request.path_params["name"]
        if name not in runner.registry_names() or name not in settings.kgs:
            return await error(request, 404, f"no knowledge graph for dataset {name!r} on this server")
        try:
            result = await run_in_threadpool(views.audit, name, name, settings.kgs[name])
        except InputError as err:
            return HTMLResponse(f'<p class="error">{html.escape(str(err))}</p>')
        return await page(request, "_audit.html", a=result, name=name)

    async def not_found(request: Request, exc: Exception) -> Response:
        return await error(request, getattr(exc, "status_code", 404), getattr(exc, "detail", "not found"))

    async def server_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, StoreError):  # disk full, database unreachable: the cause, in one line
            return await error(request, 503, f"the experiment store failed: {exc.problem.message}")
        return await error(request, 500, f"internal error: {type(exc).__name__}")

    @asynccontextmanager
    async def lifespan(app: Starlette):
        if settings.resume:
            await run_in_threadpool(jobs.resume)
        if await run_in_threadpool(store.boards):
            # a store with leaderboards: their statistics (SciPy: seconds to import) load before
            # the server answers, not in the first leaderboard's request nor beside other pages
            await run_in_threadpool(_warm_imports)
        yield
        jobs.shutdown()
        checker.shutdown()
        # the ended pools' queues sit in reference cycles: collected now, their semaphores are
        # released here (uvicorn ends a SIGTERM-ed server by the signal, so no exit hook runs and
        # the resource tracker would warn of "leaked semaphore objects")
        gc.collect()

    routes = [
        Route("/", home),
        Route("/new", new_get, methods=["GET"]),
        Route("/new", new_post, methods=["POST"]),
        Route("/e/{eid}", experiment),
        Route("/e/{eid}/status.json", status),
        Route("/e/{eid}/sections", sections),
        Route("/e/{eid}/rerun", rerun, methods=["POST"]),
        Route("/e/{eid}/q/{qid:path}", question),
        Route("/e/{eid}/download/{fmt}", download),
        Route("/e/{eid}/file/{which}", input_file),
        Route("/leaderboards", leaderboards),
        Route("/leaderboard/{dataset}/{profile}", leaderboard),
        Route("/compare", compare),
        Route("/datasets", datasets),
        Route("/datasets/{name}", dataset),
        Route("/datasets/{name}/audit", dataset_audit),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    middleware = [
        Middleware(Security, secret=secret, hosts=HostPolicy(settings.host, settings.allowed_hosts),
                   token=settings.token, port=settings.port),
        Middleware(_BodyLimit, max_bytes=int(settings.max_upload_mb * 1024 * 1024)),
    ]
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                    exception_handlers={404: not_found, 405: not_found, 500: server_error})
    app.state.store = store
    app.state.jobs = jobs
    app.state.settings = settings
    return app


def _warm_imports() -> None:
    import scipy.stats  # noqa: F401  (the leaderboard's letters are paired tests; kgqa.analyze.stats imports it late)

    import kgqa.analyze.comparison  # noqa: F401
    import kgqa.analyze.stats  # noqa: F401
    import kgqa.report.html  # noqa: F401


def _format_names() -> dict[str, list[str]]:
    """Dataset and run format names (the form's format fields)."""
    from kgqa.load import formats

    return {k: [f.name for f in formats.formats(k)] for k in ("dataset", "run")}


class _TooLarge(Exception):
    pass


class _BodyLimit:
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
        seen = 0
        started = False

        async def counted() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        async def watch(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watch)
        except _TooLarge:
            if not started:
                await self._refuse()(scope, receive, send)
