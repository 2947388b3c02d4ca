"""An experiment's routes: its page (the permalink ``/e/<id>``), the report sections it loads,
its status for live progress, a question's detail, downloads, its input files, and re-running
it as a new experiment."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from kgqa.store import runner
from kgqa.web.context import DOWNLOADS, HIDDEN, Web, csrf_ok, web_of
from kgqa.web.limits import TooLarge
from kgqa.web.security import inline_csp
from kgqa.web.uploads import web_wording


async def experiment(request: Request) -> Response:
    web = web_of(request)
    return await run_in_threadpool(_experiment, web, request)  # read and rendered in one thread hop


def _experiment(web: Web, request: Request) -> Response:
    e = web.exp_of(request, results=False)  # its results load only when its page data is not cached
    if e is None:
        return web.render_error(request, 404, f"no experiment {request.path_params['eid']!r} in this store")
    published = web.published(e)
    ctx: dict[str, Any] = {"e": e, "title": f"kgqa · {e.run_name} on {e.dataset}", "hidden": published is not None,
                           "hidden_note": HIDDEN}
    if e.status == "finished":
        ctx.update(web.views.page(e, published), downloads=list(DOWNLOADS))
        if published is not None:  # a challenge's test set: the published questions' outcomes only
            ctx["questions"] = [q for q in ctx["questions"] if q["id"] in published]
            ctx["downloads"] = []
    return web.render(request, "experiment.html", **ctx)


async def sections(request: Request) -> Response:
    """Outcomes, distribution, breakdowns and taxonomy (tables and figures of the report
    stage) of a finished experiment, as an HTML fragment the experiment page loads."""
    web = web_of(request)
    e = await web.get_exp(request)
    if e is None or e.status != "finished":
        return await web.error(request, 404, "no finished experiment with this id")
    if web.published(e) is not None:
        return await web.error(request, 403, HIDDEN)
    body = await run_in_threadpool(web.views.sections, e)
    return HTMLResponse(str(body))


async def status(request: Request) -> Response:
    e = await web_of(request).get_exp(request, results=False)
    if e is None:
        return JSONResponse({"error": "no such experiment"}, status_code=404)
    return JSONResponse({"id": e.id, "status": e.status, "done": e.progress_done, "total": e.progress_total,
                         "note": e.progress_note, "error": web_wording(e.error),
                         "headline": e.headline, "value": e.headline_value})


async def question(request: Request) -> Response:
    web = web_of(request)
    e = await web.get_exp(request)
    if e is None or e.status != "finished":
        return await web.error(request, 404, "no finished experiment with this id")
    published = web.published(e)
    if published is not None and request.path_params["qid"] not in published:
        return await web.error(request, 403, HIDDEN)
    q = await run_in_threadpool(web.views.question, e, request.path_params["qid"])
    if q is None:
        return await web.error(request, 404, f"experiment {e.id} scored no question {request.path_params['qid']!r}")
    return await web.page(request, "question.html", title=f"kgqa · {q['id']}", e=e, q=q)


async def download(request: Request) -> Response:
    web = web_of(request)
    e = await web.get_exp(request, results=False)  # results load only when not cached
    fmt = request.path_params["fmt"]
    if e is None or e.status != "finished":
        return await web.error(request, 404, "no finished experiment with this id")
    if web.published(e) is not None:
        return await web.error(request, 403, HIDDEN)
    if fmt not in DOWNLOADS:
        return await web.error(request, 404, f"no download format {fmt!r}; formats: {', '.join(DOWNLOADS)}")
    name = f"kgqa-{e.id}.{DOWNLOADS[fmt]}"
    if fmt == "html":
        return await _html_report(web, e, name)
    text, media = await run_in_threadpool(web.views.downloads, e, fmt)
    return Response(text, media_type=media + "; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


async def _html_report(web: Web, e: Any, name: str) -> Response:
    """The HTML report as the file is, its inline style and script allowed by hash; cached."""
    if e.id not in web.reports:
        text, _media = await run_in_threadpool(web.views.downloads, e, "html")
        while len(web.reports) >= 16:
            web.reports.pop(next(iter(web.reports)))
        web.reports[e.id] = (text.encode("utf-8"), inline_csp(text))
    body, csp = web.reports[e.id]
    return Response(body, media_type="text/html; charset=utf-8",
                    headers={"Content-Disposition": f'inline; filename="{name}"',
                             "Content-Security-Policy": csp, "Cache-Control": "private, max-age=3600"})


async def input_file(request: Request) -> Response:
    web = web_of(request)
    return await run_in_threadpool(_input_file, web, request)  # read in one thread hop


def _input_file(web: Web, request: Request) -> Response:
    e = web.exp_of(request, results=False)  # the summary names the files: the results stay unread
    which = request.path_params["which"]
    if e is None or which not in ("run", "dataset", "kg"):
        return web.render_error(request, 404, "no such file")
    sha = {"run": e.run_file, "dataset": e.dataset_file, "kg": e.kg_file}[which]
    name = {"run": e.run_filename, "dataset": e.dataset_filename, "kg": e.kg_filename}[which]
    if sha is None:
        return web.render_error(request, 404, f"experiment {e.id} has no uploaded {which} file")
    return Response(web.store.get_file(sha), media_type="application/octet-stream",
                    headers={"Content-Disposition": f'attachment; filename="{runner.safe_filename(name)}"'})


async def rerun(request: Request) -> Response:
    """A new experiment with the inputs and settings of this one (finished experiments
    never change; re-running makes a new one)."""
    web = web_of(request)
    e = await web.get_exp(request, results=False)
    if e is None:
        return await web.error(request, 404, "no such experiment")
    try:
        form = await request.form(max_files=0, max_fields=5, max_part_size=1024)
    except TooLarge:
        raise
    except Exception as err:
        return await web.error(request, 400, f"cannot read the form: {err}")
    if not csrf_ok(request, form):
        return await web.error(request, 403, "the form's CSRF token is missing or stale: reload the page and try again")
    why = web.refuse_stored(e) or e.withheld_message() or web.closed_message(e.dataset)
    if why:
        return await web.error(request, 403, f"cannot re-run experiment {e.id}: {why}")
    user = web.user(request)

    def create() -> str | None:
        """The new experiment, its audit row and its job, in one thread hop (three hops made the
        re-run the slowest request under load: p95 420 ms at 50 participants)."""
        with web.submitting:  # the quota's check and the new experiment, one request at a time
            if web.quota_message(request):
                return None
            eid = web.store.create(
                dataset=e.dataset, dataset_file=e.dataset_file, dataset_filename=e.dataset_filename,
                dataset_checksum=e.dataset_checksum, run_name=e.run_name, run_file=e.run_file,
                run_filename=e.run_filename, system_url=e.system_url, system_protocol=e.system_protocol,
                profile=e.profile, measures=e.measures, lang=e.lang, kg=e.kg, kg_file=e.kg_file,
                kg_filename=e.kg_filename, gold_answers=e.gold_answers, options={**e.options, "rerun_of": e.id},
                submitter=user.name if user else None)
        web.audit(request, "rerun", eid, f"re-run of {e.id}")
        web.jobs.submit(eid)
        return eid

    eid = await run_in_threadpool(create)
    if eid is None:
        return await web.error(request, 429, f"cannot re-run experiment {e.id}: {web.quota_message(request)}")
    return RedirectResponse(f"/e/{eid}", status_code=303)


ROUTES = [
    Route("/e/{eid}", experiment),
    Route("/e/{eid}/status.json", status),
    Route("/e/{eid}/sections", sections),
    Route("/e/{eid}/rerun", rerun, methods=["POST"]),
    Route("/e/{eid}/q/{qid:path}", question),
    Route("/e/{eid}/download/{fmt}", download),
    Route("/e/{eid}/file/{which}", input_file),
]
