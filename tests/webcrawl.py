"""Crawling a ``kgqa web`` server for hidden gold (issue 39): the gold values a participant must
never see, every route a participant can reach, and where a page shows one of those values."""

from __future__ import annotations

import html
import json
import re

import httpx

from kgqa.store import Store
from kgqa.store.export import FORMATS
from kgqa.web.views import Views
from waiting import wait_until


def csrf_of(text: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', text).group(1)


def login(c: httpx.Client, name: str, password: str) -> None:
    """Log ``c`` in as ``name`` (raises when the server does not take it)."""
    r = c.post("/login", data={"csrf": csrf_of(c.get("/login").text), "name": name, "password": password})
    assert r.status_code == 303, r.text[:500]


def finished(c: httpx.Client, eid: str, timeout: float = 300) -> dict:
    def ended() -> dict | None:
        s = c.get(f"/e/{eid}/status.json").json()
        return s if s["status"] in ("finished", "failed") else None

    return wait_until(ended, timeout=timeout, every=0.2, what=f"{eid} finished or failed")


def gold_values(store_path, eid: str, published: set[str]) -> tuple[set[str], list[str]]:
    """The gold answers and queries of the unpublished questions (values of 5 characters or
    more but ``false``: a short number or a boolean occurs on any page), and every question id.
    A value the published questions show (an answer, or a part of a gold query: an IRI in it)
    is not hidden."""
    with Store(store_path) as st:
        e = st.get(eid)
        views = Views(st)
        qids = [q.id for q in e.evaluation().questions]
        shown, hidden = set(), set()
        for qid in qids:
            q = views.question(e, qid)
            values = {v for v in (q["gold_answer"] or []) if len(v) >= 5 and v != "false"}
            if q["gold_sparql"]:
                values.add(q["gold_sparql"].strip())
            (shown if qid in published else hidden).update(values)
    return {v for v in hidden - shown if not published_in(v, shown)}, qids


def published_in(value: str, shown: set[str]) -> bool:
    """``value`` is part of what the published questions show."""
    return any(value in s for s in shown)


def experiment_routes(eid: str, qids: list[str]) -> list[str]:
    """Every GET route of one experiment (its run file aside: the participant's own upload)."""
    routes = [f"/e/{eid}", f"/e/{eid}/status.json", f"/e/{eid}/sections", f"/e/{eid}/file/dataset",
              f"/e/{eid}/file/kg", f"/e/{eid}/q/nowhere", f"/e/{eid}/rerun"]
    routes += [f"/e/{eid}/download/{fmt}" for fmt in FORMATS]
    routes += [f"/e/{eid}/download/nowhere"]
    return routes + [f"/e/{eid}/q/{qid}" for qid in qids]


def site_routes(dataset: str, profile: str, ids: list[str]) -> list[str]:
    """The GET routes beside the experiments' (accounts' pages included)."""
    return ["/", "/new", f"/new?dataset={dataset}", "/leaderboards", f"/leaderboard/{dataset}/{profile}",
            f"/leaderboard/{dataset}/{profile}?page=2", "/datasets", f"/datasets/{dataset}",
            f"/datasets/{dataset}/audit", "/compare", f"/compare?e={ids[0]}&e={ids[1]}", "/nowhere", "/login",
            "/logout", "/audit", "/accounts", f"/leaderboard/{dataset}/{profile}/freeze", "/?sort=headline&dir=asc",
            f"/datasets/{dataset}/publish"]


def leaks(pages: dict[str, httpx.Response], hidden: set[str]) -> list[tuple[str, str]]:
    """(route, value) for each hidden value a page, download or message shows (as text, HTML-
    escaped or JSON-escaped)."""
    return [(url, v[:60]) for url, r in pages.items() for v in hidden
            if v in r.text or html.escape(v) in r.text or json.dumps(v)[1:-1] in r.text]
