"""The New-experiment form: ``GET /new`` shows it, ``POST /new`` reads it (uploads checked in
worker processes), stores the experiment and queues it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from kgqa.model import InputError
from kgqa.store import runner
from kgqa.store.store import shown_url
from kgqa.web.context import Web, csrf_ok, format_names, web_of
from kgqa.web.limits import TooLarge
from kgqa.web.uploads import Busy, UploadJob, check_url, web_wording

Upload = tuple[str, bytes]


class Quota(Exception):
    """The participant has used its submissions (the message says which quota, and when it resets)."""


def form_context(web: Web, values: dict[str, Any] | None = None) -> dict[str, Any]:
    s = web.settings
    return {
        "datasets": runner.registry_names(), "profiles": runner.profile_names(), "kgs": list(s.kgs),
        "protocols": runner.PROTOCOLS, "allow_endpoint_urls": s.allow_endpoint_urls,
        "allow_system_urls": s.allow_system_urls, "formats": format_names(),
        "max_upload_mb": s.max_upload_mb, "values": values or {},
    }


async def new_get(request: Request) -> Response:
    web = web_of(request)
    values = {k: v for k, v in request.query_params.items() if k in ("dataset", "profile", "kg")}
    quota = await run_in_threadpool(web.quota_message, request)
    return await web.page(request, "new.html", title="kgqa · new experiment", **form_context(web, values),
                          **({"error": quota} if quota else {}))


async def new_post(request: Request) -> Response:
    web = web_of(request)
    try:
        form = await request.form(max_files=3, max_fields=40, max_part_size=64 * 1024)
    except TooLarge:
        raise
    except Exception as err:  # malformed multipart, too many parts
        return await web.error(request, 400, f"cannot read the form: {err}")
    if not csrf_ok(request, form):
        return await web.error(request, 403, "the form's CSRF token is missing or stale: reload the form and submit again")
    values = {k: str(v) for k, v in form.items() if not isinstance(v, UploadFile)}
    try:
        quota = await run_in_threadpool(web.quota_message, request)
        if quota:  # said before the upload is read; checked again as the experiment is stored
            raise Quota(quota)
        eid, given = await create_experiment(web, form, values, request)
    except Quota as err:
        return await web.page(request, "new.html", 429, title="kgqa · new experiment", error=str(err),
                              **form_context(web, values))
    except Busy as err:
        return await web.page(request, "new.html", 503, title="kgqa · new experiment", error=str(err),
                              **form_context(web, values))
    except InputError as err:
        return await web.page(request, "new.html", 400, title="kgqa · new experiment", error=web_wording(str(err)),
                              **form_context(web, values))
    def record() -> None:  # its audit row and its job in one thread hop
        web.audit(request, "submit", eid,
                  f"{values.get('run_name') or 'run'} on {values.get('dataset') or 'an uploaded dataset'}")
        web.jobs.submit(eid, **given)

    await run_in_threadpool(record)
    return RedirectResponse(f"/e/{eid}", status_code=303)


async def read_upload(form: Any, key: str, what: str) -> Upload | None:
    up = form.get(key)
    if not isinstance(up, UploadFile) or not up.filename:
        return None
    data = await up.read()
    if not data:
        raise InputError(up.filename, f"the uploaded {what} is empty")
    return runner.safe_filename(up.filename), data


@dataclass
class FormSettings:
    """How the form asks to score: profile, measures, languages, gold answers, timeout, formats."""

    profile: str
    lang: str
    gold: str
    measures: str | None
    timeout: float
    dataset_format: str | None
    run_format: str | None
    reexecute: bool

    def options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"timeout": self.timeout}
        if self.dataset_format:
            options["dataset_format"] = self.dataset_format
        if self.run_format:
            options["run_format"] = self.run_format
        if self.reexecute:
            options["reexecute"] = True
        return options


def form_settings(web: Web, values: dict[str, str]) -> FormSettings:
    profile = values.get("profile", "kgqa")
    if profile not in runner.profile_names():
        raise InputError("profile", f"unknown profile {profile!r}; one of: {', '.join(runner.profile_names())}")
    gold = values.get("gold_answers", "stored")
    if gold not in ("stored", "executed"):
        raise InputError("gold answers", f"expected stored or executed, got {gold!r}")
    measures = values.get("measures", "").strip() or None
    if measures:
        runner.check_profile(profile, measures)  # an unknown measure is said now, not after the run
    cap = max(web.settings.timeout, 300)
    try:
        timeout = float(values.get("timeout") or web.settings.timeout)
    except ValueError:
        raise InputError("timeout", f"expected seconds, got {values.get('timeout')!r}") from None
    if not 0 < timeout <= cap:
        raise InputError("timeout", f"expected 0 < timeout <= {cap:g} seconds")
    ds_fmt = values.get("dataset_format") or None
    run_fmt = values.get("run_format") or None
    formats = format_names()
    for fmt, kind in ((ds_fmt, "dataset"), (run_fmt, "run")):
        if fmt is not None and fmt not in formats[kind]:
            raise InputError(f"{kind} format", f"unknown {kind} format {fmt!r}; one of: {', '.join(formats[kind])}")
    return FormSettings(profile=profile, lang=values.get("lang", "").strip() or "all", gold=gold, measures=measures,
                        timeout=timeout, dataset_format=ds_fmt, run_format=run_fmt,
                        reexecute=bool(values.get("reexecute")))


async def system_source(web: Web, values: dict[str, str], run_upload: Upload | None) -> tuple[str | None, str | None]:
    """The live system (URL, protocol) the form names, or (None, None) with a run upload."""
    system_url = values.get("system_url", "").strip() or None
    protocol = values.get("system_protocol") or None
    if run_upload is None and system_url is None:
        raise InputError("run", "upload a run file or give a system URL")
    if run_upload is not None and system_url is not None:
        raise InputError("run", "give either a run file or a system URL, not both")
    if system_url is None:
        return None, None
    if not web.settings.allow_system_urls:
        raise InputError("system URL", "this server does not ask live systems (start it with "
                                       "--allow-system-urls to accept system URLs); upload the system's "
                                       "run file instead")
    if protocol not in runner.PROTOCOLS:
        raise InputError("system protocol", f"expected one of {', '.join(runner.PROTOCOLS)}")
    return await run_in_threadpool(check_url, system_url, "system URL", web.url_hosts), protocol


async def kg_source(web: Web, values: dict[str, str], kg_upload: Upload | None) -> tuple[str | None, str | None]:
    """(the KG's label, the endpoint URL as given): none, a configured name, an upload, or
    (when allowed) an endpoint URL."""
    kg_choice = values.get("kg", "") or ""
    if kg_upload is not None:
        return f"upload:{kg_upload[0]}", None
    if kg_choice == "endpoint":
        if not web.settings.allow_endpoint_urls:
            raise InputError("kg", "this server only queries the knowledge graphs it was started with "
                                   "(start it with --allow-endpoint-urls to accept endpoint URLs)")
        url = await run_in_threadpool(check_url, values.get("kg_endpoint", "").strip(), "kg endpoint", web.url_hosts)
        return url, url
    if kg_choice:
        if kg_choice not in web.settings.kgs:
            raise InputError("kg", f"no knowledge graph named {kg_choice!r} here; offered: "
                                   f"{', '.join(web.settings.kgs) or 'none'}")
        return kg_choice, None
    return None, None


async def create_experiment(web: Web, form: Any, values: dict[str, str],
                            request: Request | None = None) -> tuple[str, dict[str, str | None]]:
    """A new experiment from the form: (its id, the live system's and the SPARQL endpoint's
    URLs as given, for :meth:`Jobs.submit`: the store keeps them with their credentials as
    ``***``). ``request``: the submitter's (a server with accounts: its quota, its name on the
    experiment)."""
    fs = form_settings(web, values)
    ds_upload = await read_upload(form, "dataset_file", "dataset")
    ds_name = values.get("dataset", "")
    if ds_upload is None and ds_name not in runner.registry_names():
        raise InputError("dataset", "choose a registered dataset or upload a dataset file")
    closed = web.closed_message(ds_name) if ds_upload is None else None
    if closed:
        raise InputError("dataset", closed)
    run_upload = await read_upload(form, "run_file", "run")
    system_url, protocol = await system_source(web, values, run_upload)
    kg_upload = await read_upload(form, "kg_file", "RDF file")
    kg_label, kg_url = await kg_source(web, values, kg_upload)
    run_name = values.get("run_name", "").strip()[:120]
    if not run_name:
        run_name = Path(run_upload[0]).stem if run_upload else shown_url(system_url) or "run"
    # read the uploads in a worker process: a bad file is reported on the form, naming file and record
    await web.checker.check(UploadJob(dataset=ds_name, dataset_upload=ds_upload, run_upload=run_upload,
                                      kg_upload=kg_upload, run_name=run_name, lang=fs.lang,
                                      dataset_format=fs.dataset_format, run_format=fs.run_format,
                                      max_unpacked_mb=web.settings.max_unpacked_mb))

    user = web.user(request) if request is not None else None

    def save() -> str:
        if request is None or web.accounts is None:  # no accounts, no quota
            return store_it()
        with web.submitting:  # the quota's check and the new experiment, one request at a time
            quota = web.quota_message(request) if request is not None else None
            if quota:
                raise Quota(quota)
            return store_it()

    def store_it() -> str:
        store = web.store
        ds_sha = store.put_file(ds_upload[1]) if ds_upload else None
        run_sha = store.put_file(run_upload[1]) if run_upload else None
        kg_sha = store.put_file(kg_upload[1]) if kg_upload else None
        return store.create(
            dataset=(f"{ds_upload[0]}@{ds_sha[:12]}" if ds_upload and ds_sha else ds_name), dataset_file=ds_sha,
            dataset_filename=ds_upload[0] if ds_upload else None,
            run_name=run_name, run_file=run_sha, run_filename=run_upload[0] if run_upload else None,
            system_url=system_url, system_protocol=protocol, profile=fs.profile,
            measures=fs.measures, lang=fs.lang, kg=kg_label, kg_file=kg_sha,
            kg_filename=kg_upload[0] if kg_upload else None, gold_answers=fs.gold, options=fs.options(),
            submitter=user.name if user else None,
        )

    return await run_in_threadpool(save), {"system_url": system_url, "kg_url": kg_url}


ROUTES = [
    Route("/new", new_get, methods=["GET"]),
    Route("/new", new_post, methods=["POST"]),
]
