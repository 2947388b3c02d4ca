"""Serving the web platform with uvicorn (``kgqa web``, ``kgqa demo --web``)."""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Callable
from typing import Any
from dataclasses import replace

from kgqa import lazy
from kgqa.model import InputError
from kgqa.store import Store
from kgqa.store.accounts import Accounts
from kgqa.web.app import Settings, create_app

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_warning(host: str, token: str | None, accounts: bool = False) -> str | None:
    """What ``kgqa web`` says when it binds anything but loopback (None: nothing to say)."""
    if is_loopback(host):
        return None
    return (f"warning: serving on {host}, reachable from other machines"
            + ("" if token or accounts else "; anyone who can reach it can read and add experiments "
               "(pass --token to require a shared secret)")
            + ("; without TLS, passwords cross the network in clear: serve it behind a TLS proxy"
               if accounts else ""))


def check_binding(host: str, token: str | None, accounts: bool = False) -> None:
    """Refuse an insecure combination: a server reachable from other machines (any ``host``
    but loopback) that anyone reaching it may use (no ``token``, no accounts). Raises
    :class:`InputError` with the fix."""
    if is_loopback(host) or token or accounts:
        return
    raise InputError("--host", f"serving on {host} makes the server reachable from other machines, and without "
                               "--token anyone who can reach it can read, add and delete experiments: pass --token "
                               "SECRET (each visitor opens the printed ?token= link once), add accounts (kgqa web "
                               "users add NAME --role organiser), or keep --host 127.0.0.1 "
                               "behind a reverse proxy with its own access control (--allowed-host NAME)")


def serve(store: Store, settings: Settings, *, host: str = "127.0.0.1", port: int = 8800,
          say: Callable[[str], Any] = lambda s: print(s, file=sys.stderr), log_level: str = "warning") -> None:
    """Run the app until interrupted. A non-loopback ``host`` needs a token
    (:func:`check_binding`) and is said out loud."""
    uvicorn = lazy.uvicorn()
    accounts = settings.accounts if settings.accounts is not None else Accounts(store).any()
    check_binding(host, settings.token, accounts)
    # the Host allow-list and cookie names follow the binding; accounts as found now
    settings = replace(settings, host=host, port=port, accounts=accounts)
    warning = host_warning(host, settings.token, accounts)
    if warning:
        say(warning)
    if accounts:
        say(f"kgqa web: the store has accounts: everyone logs in ({len(Accounts(store).list())} accounts)")
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else shown}:{port}/"
    say(f"kgqa web: {url}{'?token=' + settings.token if settings.token else ''}  (store: {store.url})")
    if not settings.workers:
        say("kgqa web: --workers 0: no experiment is evaluated here; kgqa worker --store ... processes take them "
            "from the store")
    app = create_app(store, settings)
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False)
