"""Accounts' routes (a server whose store holds accounts; :mod:`kgqa.web.accounts`): logging in
and out, and the organisers' pages: the audit log, the accounts (adding a participant) and
freezing a dataset's leaderboards. On a server without accounts they answer 404."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from kgqa.model import InputError
from kgqa.store.accounts import MIN_PASSWORD, NAME
from kgqa.web.accounts import cookie_header, port_of, safe_next
from kgqa.web.context import csrf_ok, web_of
from kgqa.web.hidden import published_ids
from kgqa.web.limits import TooLarge

NO_ACCOUNTS = "this server has no accounts (an organiser adds them: kgqa web users add NAME --role organiser)"
AUDIT_ROWS = 100


async def _form(request: Request, fields: int = 6) -> tuple[Any, Response | None]:
    """The posted form, or the error page to answer instead (unreadable, or a stale CSRF token)."""
    web = web_of(request)
    try:
        form = await request.form(max_files=0, max_fields=fields, max_part_size=4096)
    except TooLarge:
        raise
    except Exception as err:
        return None, await web.error(request, 400, f"cannot read the form: {err}")
    if not csrf_ok(request, form):
        return None, await web.error(request, 403, "the form's CSRF token is missing or stale: reload the page and "
                                                    "try again")
    return form, None


async def _organisers_only(request: Request) -> Response | None:
    web = web_of(request)
    if web.accounts is None:
        return await web.error(request, 404, NO_ACCOUNTS)
    user = web.user(request)
    if user is None or not user.organiser:
        return await web.error(request, 403, "this page is for the challenge's organisers")
    return None


async def _organiser_form(request: Request) -> tuple[Any, Response | None]:
    """An organiser's posted form, or the error page to answer instead."""
    refused = await _organisers_only(request)
    if refused is not None:
        return None, refused
    return await _form(request)


async def login_get(request: Request) -> Response:
    web = web_of(request)
    if web.accounts is None:
        return await web.error(request, 404, NO_ACCOUNTS)
    return await web.page(request, "login.html", title="kgqa · log in", name="",
                          next=safe_next(request.query_params.get("next")), message="")


async def login_post(request: Request) -> Response:
    """Check the name and password (argon2, in a worker thread), throttled per name and per
    client; a success opens a server-side session and sets its cookie."""
    web = web_of(request)
    if web.accounts is None:
        return await web.error(request, 404, NO_ACCOUNTS)
    form, refused = await _form(request)
    if refused is not None:
        return refused
    name, password = str(form.get("name", "")).strip()[:80], str(form.get("password", ""))
    target = safe_next(str(form.get("next", "/")))
    client = request.client.host if request.client else "-"
    wait = web.throttle.wait_s(name, client)
    if wait > 0:
        page = await web.page(request, "login.html", 429, title="kgqa · log in", name=name, next=target,
                              message=f"too many failed logins: try again in {int(wait) + 1} s")
        page.headers["Retry-After"] = str(int(wait) + 1)
        return page
    user = await run_in_threadpool(web.accounts.verify, name, password)
    if user is None:
        web.throttle.failed(name, client)
        await run_in_threadpool(web.audit, request, "login-failed", name if NAME.match(name) else "(not a name)",
                                f"from {client}")
        return await web.page(request, "login.html", 401, title="kgqa · log in", name=name, next=target,
                              message="wrong name or password")
    web.throttle.succeeded(name)
    token = await run_in_threadpool(web.accounts.open_session, user.name)
    request.state.user = user
    await run_in_threadpool(web.audit, request, "login", user.name, f"from {client}")
    response = RedirectResponse(target, status_code=303)
    response.headers.append("set-cookie", cookie_header(port_of(request.scope, web.settings.port), token,
                                                        secure=request.url.scheme == "https"))
    return response


async def logout(request: Request) -> Response:
    web = web_of(request)
    if web.accounts is None:
        return await web.error(request, 404, NO_ACCOUNTS)
    _form_, refused = await _form(request)
    if refused is not None:
        return refused
    token = getattr(request.state, "login_token", None)
    if token:
        await run_in_threadpool(web.accounts.close_session, token)
        await run_in_threadpool(web.audit, request, "logout")
    response = RedirectResponse("/login", status_code=303)
    response.headers.append("set-cookie", cookie_header(port_of(request.scope, web.settings.port), "", max_age=0,
                                                        secure=request.url.scheme == "https"))
    return response


async def audit_log(request: Request) -> Response:
    """The audit log, newest first (organisers)."""
    refused = await _organisers_only(request)
    if refused is not None:
        return refused
    web = web_of(request)
    try:
        n = max(1, int(request.query_params.get("page", "1")))
    except ValueError:
        n = 1
    rows, total = await run_in_threadpool(
        lambda: (web.accounts.log_page(limit=AUDIT_ROWS, offset=(n - 1) * AUDIT_ROWS), web.accounts.log_count()))
    return await web.page(request, "audit.html", title="kgqa · audit log", rows=rows, total=total, page=n,
                          last=max(1, -(-total // AUDIT_ROWS)))


async def accounts_get(request: Request, message: str = "", status: int = 200) -> Response:
    refused = await _organisers_only(request)
    if refused is not None:
        return refused
    web = web_of(request)
    return await web.page(request, "accounts.html", status, title="kgqa · accounts",
                          accounts=await run_in_threadpool(web.accounts.list), message=message,
                          min_password=MIN_PASSWORD)


async def accounts_post(request: Request) -> Response:
    """An organiser adds a participant account (organisers are made on the command line)."""
    form, refused = await _organiser_form(request)
    if refused is not None:
        return refused
    web = web_of(request)
    name = str(form.get("name", "")).strip()
    try:
        await run_in_threadpool(web.accounts.add, name, "participant", str(form.get("password", "")))
    except InputError as err:
        return await accounts_get(request, str(err), 400)
    await run_in_threadpool(web.audit, request, "account-add", name, "participant")
    return await accounts_get(request, f"added participant {name}")


async def freeze(request: Request) -> Response:
    """Freeze (or unfreeze) a dataset's leaderboards now (organisers)."""
    form, refused = await _organiser_form(request)
    if refused is not None:
        return refused
    web = web_of(request)
    ds, prof = request.path_params["dataset"], request.path_params["profile"]
    user = web.user(request)
    if form.get("action") == "unfreeze":
        await run_in_threadpool(web.accounts.unfreeze, ds)
        await run_in_threadpool(web.audit, request, "unfreeze", ds)
    else:
        at = await run_in_threadpool(web.accounts.freeze, ds, user.name if user else None)
        await run_in_threadpool(web.audit, request, "freeze", ds, f"at {at}")
    return RedirectResponse(f"/leaderboard/{quote(ds)}/{quote(prof)}", status_code=303)


async def publish(request: Request) -> Response:
    """Publish the outcomes of questions of a hidden-gold dataset (organisers; never undone)."""
    form, refused = await _organiser_form(request)
    if refused is not None:
        return refused
    web = web_of(request)
    name = request.path_params["name"]
    if name not in web.settings.hidden_gold:
        return await web.error(request, 404, f"the gold of {name!r} is not hidden on this server: nothing to publish")
    listed = web.settings.hidden_gold[name]  # published by the command line already
    try:
        named = await run_in_threadpool(published_ids, name, re.split(r"[\s,]+", str(form.get("questions", ""))),
                                        "questions")
    except InputError as err:
        return await web.error(request, 400, str(err))
    ids = sorted(named - listed)
    user = web.user(request)
    new = await run_in_threadpool(web.accounts.publish, name, ids, user.name if user else None)
    if new:
        await run_in_threadpool(web.audit, request, "publish", name, ", ".join(new)[:2000])
    return RedirectResponse(f"/datasets/{quote(name)}", status_code=303)


ROUTES = [
    Route("/login", login_get, methods=["GET"]),
    Route("/login", login_post, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/audit", audit_log),
    Route("/accounts", accounts_get, methods=["GET"]),
    Route("/accounts", accounts_post, methods=["POST"]),
    Route("/leaderboard/{dataset}/{profile}/freeze", freeze, methods=["POST"]),
    Route("/datasets/{name}/publish", publish, methods=["POST"]),
]
