"""Pages that read the store: home, leaderboards, comparisons, datasets."""

from __future__ import annotations

import html
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from kgqa.load import registry
from kgqa.model import InputError
from kgqa.store import runner
from kgqa.web.context import HIDDEN, ID, Web, web_of
from kgqa.web.routes.paging import listing, pager, paging, sort_links
from kgqa.web.views import BOARD_ROWS, LIST_ROWS


async def home(request: Request) -> Response:
    web = web_of(request)
    return await run_in_threadpool(_home, web, request)  # read and rendered in one thread hop


def _home(web: Web, request: Request) -> Response:
    mine = web.mine(request)  # a participant's home lists its own experiments
    exps, p = listing(request, LIST_ROWS, lambda: web.store.count(submitter=mine),
                      lambda **kw: web.store.list_page(submitter=mine, **kw))
    return web.render(request, "index.html", experiments=exps, boards=web.store.boards(), pager=p,
                      sorts=sort_links(request, p))


async def leaderboards(request: Request) -> Response:
    web = web_of(request)
    return await web.page(request, "leaderboards.html", title="kgqa · leaderboards",
                          boards=await run_in_threadpool(web.store.boards))


async def leaderboard(request: Request) -> Response:
    web = web_of(request)
    return await run_in_threadpool(_leaderboard, web, request)  # read and rendered in one thread hop


def _leaderboard(web: Web, request: Request) -> Response:
    ds, prof = request.path_params["dataset"], request.path_params["profile"]
    p = paging(request)
    until = web.frozen_at(ds)
    board = web.views.leaderboard(ds, prof, page=p["page"], after=p["after"], before=p["before"], until=until)
    if not board["rows"]:
        return web.render_error(request, 404, f"no finished experiment on {ds} with profile {prof}"
                                + (f" submitted by {until} (UTC), when its leaderboard froze" if until else ""))
    pg = pager(request, p, board["total"], BOARD_ROWS, board["offset"], [r["e"].id for r in board["rows"]])
    return web.render(request, "leaderboard.html", title=f"kgqa · leaderboard {ds} · {prof}", board=board,
                      pager=pg, frozen=until)


async def compare(request: Request) -> Response:
    web = web_of(request)
    ids = [i for i in request.query_params.getlist("e") if i]
    if len(set(ids)) > 10:
        return await web.error(request, 400, f"compare at most 10 experiments at a time (got {len(set(ids))})")
    exps = []
    for i in dict.fromkeys(ids):
        e = await run_in_threadpool(web.store.get, i) if ID.match(i) else None
        if e is None or e.status != "finished" or not web.visible(request, e):
            return await web.error(request, 404, f"no finished experiment {i!r}")
        if web.published(e) is not None:  # the comparison's tables are per question
            return await web.error(request, 403, HIDDEN)
        exps.append(e)
    if len(exps) < 2:
        return await _compare_picker(request, exps)
    datasets = sorted({e.dataset for e in exps})
    if len(datasets) > 1:
        return await web.error(request, 400, f"the experiments are on different datasets ({', '.join(datasets)}): "
                                             "only experiments on one dataset can be compared")
    try:
        body = await run_in_threadpool(web.views.compare, exps)
    except ValueError as err:
        return await web.error(request, 400, str(err))
    return await web.page(request, "compare.html", title="kgqa · compare", exps=exps, body=body, candidates=[],
                          pager=None, message="")


async def _compare_picker(request: Request, exps: list[Any]) -> Response:
    """The compare page before two experiments are chosen: finished experiments to pick from."""
    web = web_of(request)
    mine = web.mine(request)

    def candidates() -> tuple[list[Any], dict[str, Any]]:
        return listing(request, LIST_ROWS, lambda: web.store.count(status="finished", submitter=mine),
                       lambda **kw: web.store.list_page(status="finished", submitter=mine, **kw))

    found, p = await run_in_threadpool(candidates)
    return await web.page(request, "compare.html", title="kgqa · compare", exps=exps, body=None, candidates=found,
                          pager=p, message="choose two or more finished experiments on the same dataset")


async def datasets(request: Request) -> Response:
    web = web_of(request)
    return await web.page(request, "datasets.html", title="kgqa · datasets",
                          entries=[(en, registry.where(en)) for en in registry.entries()],
                          boards=await run_in_threadpool(web.store.boards))


async def dataset(request: Request) -> Response:
    web = web_of(request)
    return await run_in_threadpool(_dataset, web, request)  # read and rendered in one thread hop


def _dataset(web: Web, request: Request) -> Response:
    name = request.path_params["name"]
    try:
        info = web.views.dataset(name)
    except KeyError:
        return web.render_error(request, 404, f"no registered dataset {name!r}")
    hidden = name in web.settings.hidden_gold
    published = sorted(web.settings.hidden_gold[name] | (web.accounts.published(name) if web.accounts
                                                         else frozenset())) if hidden else []
    return web.render(request, "dataset.html", title=f"kgqa · {name}", name=name, info=info,
                      audit_kg=name if name in web.settings.kgs and not hidden else None, hidden=hidden,
                      published=published)


async def dataset_audit(request: Request) -> Response:
    """The gold-query audit on the server's KG of the same name, as an HTML fragment."""
    web = web_of(request)
    name = request.path_params["name"]
    if name not in runner.registry_names() or name not in web.settings.kgs:
        return await web.error(request, 404, f"no knowledge graph for dataset {name!r} on this server")
    if name in web.settings.hidden_gold:  # the audit lists answers the gold misses or adds
        return await web.error(request, 403, HIDDEN)
    try:
        result = await run_in_threadpool(web.views.audit, name, name, web.settings.kgs[name])
    except InputError as err:
        return HTMLResponse(f'<p class="error">{html.escape(str(err))}</p>')
    return await web.page(request, "_audit.html", a=result, name=name)


ROUTES = [
    Route("/", home),
    Route("/leaderboards", leaderboards),
    Route("/leaderboard/{dataset}/{profile}", leaderboard),
    Route("/compare", compare),
    Route("/datasets", datasets),
    Route("/datasets/{name}", dataset),
    Route("/datasets/{name}/audit", dataset_audit),
]
