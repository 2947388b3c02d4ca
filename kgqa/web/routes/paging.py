"""Paged listings (home, compare picker, leaderboards): the page asked for, the rows of it and
the pager's links (keyset paging: stable while experiments are added)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

from kgqa.store.store import SORTS
from kgqa.web.context import ID


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
            **{k: v if v and ID.match(v) else None for k, v in cursor.items()}}


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
    keep = [(a, b) for a, b in request.query_params.multi_items() if a not in ("page", "after", "before")]

    def link(k: str, eid: str) -> str:
        return "?" + urlencode([*keep, (k, eid)])

    total = max(total, offset + len(ids))
    return {"page": offset // per + 1, "last": max(1, -(-total // per)), "total": total, "offset": offset,
            "shown": len(ids), "per": per, "sort": p["sort"], "desc": p["desc"],
            "prev": link("before", ids[0]) if ids and offset > 0 else None,
            "next": link("after", ids[-1]) if ids and offset + len(ids) < total else None}


def sort_links(request: Request, p: dict[str, Any]) -> dict[str, str]:
    keep = [(a, b) for a, b in request.query_params.multi_items()
            if a not in ("page", "sort", "dir", "after", "before")]
    return {k: "?" + urlencode([*keep, ("sort", k), ("dir", "asc" if p["sort"] == k and p["desc"] else "desc")])
            for k in SORTS}
