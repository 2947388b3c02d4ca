"""``kgqa web`` (the web platform), ``kgqa experiments list|show|export|delete`` (the
experiment store) and the body of ``kgqa demo --web``."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kgqa.model import InputError
from kgqa.cli._output import Console, open_store
from kgqa.cli.options import ExportFormat, StoreOption, SummaryFormat, SummaryFormatOption, option

out = Console()
err = Console(stderr=True)


def _kgs(pairs: Optional[list[str]]) -> dict[str, str]:
    from kgqa.web.app import default_kgs

    kgs = default_kgs()
    for pair in pairs or []:
        if "=" not in pair:
            raise InputError("--kg", f"expected NAME=PATH_OR_URL, got {pair!r}")
        name, spec = (x.strip() for x in pair.split("=", 1))
        if not name or not spec:
            raise InputError("--kg", f"expected NAME=PATH_OR_URL, got {pair!r}")
        if not spec.startswith(("http://", "https://")) and not all(Path(s).exists() for s in spec.split(",")):
            raise InputError("--kg", f"{spec}: no such file or directory")
        kgs[name] = spec
    return kgs


def _hidden(specs: Optional[list[str]]) -> dict[str, frozenset[str]]:
    """``--hidden-gold DATASET[=ID,ID]`` -> {dataset: the ids of the published questions'
    scoring units} (ids the dataset lacks are refused)."""
    from kgqa.api import dataset_names
    from kgqa.web.hidden import published_ids

    out: dict[str, frozenset[str]] = {}
    for spec in specs or []:
        name, _, ids = spec.partition("=")
        name = name.strip()
        if name not in dataset_names():
            raise InputError("--hidden-gold", f"expected a registry dataset name (kgqa datasets), got {name!r}")
        out[name] = published_ids(name, ids.split(","))
    return out


def _times(specs: Optional[list[str]], flag: str) -> dict[str, str]:
    """``DATASET=TIME`` pairs -> {dataset: the time as the store writes it (ISO, UTC, seconds)}."""
    from datetime import datetime, timezone

    out: dict[str, str] = {}
    for spec in specs or []:
        name, _, when = spec.partition("=")
        try:
            t = datetime.fromisoformat(when.strip())
        except ValueError:
            raise InputError(flag, f"expected DATASET=TIME with an ISO 8601 time (2026-11-30T12:00:00Z), got {spec!r}") \
                from None
        t = t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)
        out[name.strip()] = t.isoformat(timespec="seconds")
    return out


def web_cmd(
    ctx: typer.Context,
    store: StoreOption = None,
    host: Annotated[str, option("--host", help="Address to bind (anything but loopback is reachable from other machines: a warning is printed).")] = "127.0.0.1",
    port: Annotated[int, option("--port")] = 8800,
    token: Optional[str] = typer.Option(None, "--token", help="Shared secret every request must carry (open the printed link once)."),
    kg: Annotated[Optional[list[str]], option("--kg", help="Offer a knowledge graph: NAME=RDF file(s), store dir or endpoint URL (repeatable; demo and ck25 are built in).")] = None,
    max_upload_mb: float = typer.Option(50.0, "--max-upload-mb", help="Largest request body (all uploads of a form) in MB."),
    allow_endpoint_urls: bool = typer.Option(False, "--allow-endpoint-urls", help="Let the form name a SPARQL endpoint URL (the server will query it; public hosts only unless --allowed-url-host)."),
    workers: int = typer.Option(1, "--workers", min=0, help="Experiments evaluated at the same time (0: none in this server; kgqa worker processes on the store evaluate them)."),
    timeout: Annotated[float, option("--timeout", help="Default per-query timeout in seconds.")] = 30.0,
    allowed_host: Optional[list[str]] = typer.Option(None, "--allowed-host", help="Also answer to this Host name (repeatable; e.g. behind a proxy). Others get 421 (DNS rebinding guard)."),
    allow_system_urls: bool = typer.Option(False, "--allow-system-urls", help="Let the form name a live QA system URL (the server will POST every question to it; public hosts only unless --allowed-url-host)."),
    allowed_url_host: Annotated[Optional[list[str]], option("--allowed-url-host", help="A host the form's system/endpoint URLs may name even when loopback or private (repeatable).")] = None,
    max_unpacked_mb: float = typer.Option(512.0, "--max-unpacked-mb", help="Largest size a compressed RDF upload may inflate to, in MB."),
    hidden_gold: Optional[list[str]] = typer.Option(None, "--hidden-gold", help="Hide the test answers of a registry dataset: DATASET or DATASET=ID,ID (the questions whose outcomes are published); its experiments show aggregate scores only (repeatable)."),
    freeze_leaderboard: Optional[list[str]] = typer.Option(None, "--freeze-leaderboard", help="DATASET=TIME (ISO 8601; UTC unless it says): the dataset's leaderboards rank experiments submitted up to TIME (repeatable)."),
    close_submissions: Optional[list[str]] = typer.Option(None, "--close-submissions", help="DATASET=TIME (ISO 8601; UTC unless it says): no new experiment on the dataset from TIME on (repeatable)."),
    worker_memory_mb: float = typer.Option(0.0, "--worker-memory-mb", help="Address-space limit of each experiment and upload worker process in MB (0: none); an evaluation past it fails with 'out of memory'."),
    quota_per_day: int = typer.Option(0, "--quota-per-day", min=0, help="With accounts: the most experiments a participant submits per UTC day (0: no limit; organisers have none)."),
    quota_total: int = typer.Option(0, "--quota-total", min=0, help="With accounts: the most experiments a participant submits in all (0: no limit)."),
) -> None:
    """Serve the web platform: upload runs, experiment permalinks, leaderboards, comparisons.
    A store with accounts (kgqa web users add) hosts a challenge: everyone logs in."""
    if ctx.invoked_subcommand is not None:
        return
    from kgqa.web.app import Settings
    from kgqa.web.serve import serve

    st = open_store(store)
    settings = Settings(kgs=_kgs(kg), max_upload_mb=max_upload_mb, allow_endpoint_urls=allow_endpoint_urls,
                        token=token, workers=workers, timeout=timeout, allowed_hosts=list(allowed_host or []),
                        allow_system_urls=allow_system_urls, allowed_url_hosts=list(allowed_url_host or []),
                        max_unpacked_mb=max_unpacked_mb, worker_memory_mb=worker_memory_mb,
                        hidden_gold=_hidden(hidden_gold), frozen=_times(freeze_leaderboard, "--freeze-leaderboard"),
                        closed=_times(close_submissions, "--close-submissions"), quota_per_day=quota_per_day,
                        quota_total=quota_total)
    serve(st, settings, host=host, port=port, say=lambda s: err.print(s, highlight=False, soft_wrap=True))


def worker_cmd(
    store: StoreOption = None,
    kg: Annotated[Optional[list[str]], option("--kg", help="Offer a knowledge graph: NAME=RDF file(s), store dir or endpoint URL (repeatable; demo and ck25 are built in; as kgqa web --kg).")] = None,
    processes: int = typer.Option(1, "--processes", min=1, help="Experiments evaluated at the same time by this worker."),
    timeout: Annotated[float, option("--timeout", help="Default per-query timeout in seconds.")] = 30.0,
    allowed_url_host: Annotated[Optional[list[str]], option("--allowed-url-host", help="A host a stored system/endpoint URL may name even when loopback or private (repeatable; as kgqa web --allowed-url-host).")] = None,
) -> None:
    """Evaluate the store's queued experiments (kgqa web --workers 0 leaves them; run on any number of machines)."""
    from kgqa.store.worker import WorkerSettings, serve_workers

    settings = WorkerSettings(kgs=_kgs(kg), timeout=timeout, allowed_url_hosts=list(allowed_url_host or []))
    with open_store(store) as st:
        url = st.url
    serve_workers(url, settings, processes=processes,
                  say=lambda s: err.print(s, highlight=False, soft_wrap=True))


def list_cmd(
    store: StoreOption = None,
    dataset: Annotated[Optional[str], option("--dataset", help="Only this dataset.")] = None,
    profile: Annotated[Optional[str], option("--profile", help="Only this profile.")] = None,
    status: Optional[str] = typer.Option(None, "--status", help="pending, running, finished or failed."),
    fmt: SummaryFormatOption = SummaryFormat.table,
) -> None:
    """Experiments in the store, newest first."""
    rows = open_store(store).list(dataset=dataset, profile=profile, status=status)
    _emit(fmt, lambda: [e.summary() for e in rows], lambda tables: tables.experiments_grid(rows))


def show_cmd(
    eid: str = typer.Argument(..., help="Experiment id."),
    store: StoreOption = None,
    fmt: SummaryFormatOption = SummaryFormat.table,
) -> None:
    """One experiment: inputs, settings, signature, aggregate scores, outcomes."""
    doc = _experiment(store, eid).summary()
    _emit(fmt, lambda: doc, lambda tables: tables.experiment_table(doc))


def export_cmd(
    eid: str = typer.Argument(..., help="Experiment id."),
    store: StoreOption = None,
    fmt: Annotated[ExportFormat, option("--format")] = ExportFormat.json,
    output: Annotated[Optional[Path], option("--output", help="Write to this file (default: stdout).")] = None,
) -> None:
    """Export a finished experiment (JSON, CSV, Markdown, LaTeX, HTML report)."""
    from kgqa.report.output import write_output
    from kgqa.store.export import export

    e = _experiment(store, eid)
    if e.status != "finished":
        raise InputError(eid, f"the experiment is {e.status}: nothing to export"
                         + (f" ({e.error})" if e.error else ""))
    text = export(e, fmt.value)
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        write_output(output, [text])
        err.print(f"wrote {output}", highlight=False)


def delete_cmd(
    eids: list[str] = typer.Argument(..., help="Experiment id(s)."),
    store: StoreOption = None,
) -> None:
    """Delete experiments (and stored files no other experiment uses)."""
    st = open_store(store)
    missing = [i for i in eids if st.get(i) is None]
    if missing:
        raise InputError(missing[0], "no such experiment in the store (nothing deleted)")
    for i in eids:
        st.delete(i)
    err.print(f"deleted {len(eids)} experiment(s)", highlight=False)


def _emit(fmt: SummaryFormat, doc, table) -> None:
    """JSON (``doc()``) on stdout for ``--format json``, else the table that
    ``table(kgqa.report.tables)`` renders on the console (the listing tables alone: no analysis, no NumPy)."""
    if fmt is SummaryFormat.json:
        sys.stdout.write(json.dumps(doc(), indent=2, ensure_ascii=False) + "\n")
        return
    from kgqa.report import tables

    out.print(table(tables))


def _experiment(store: Optional[str], eid: str):
    """The experiment ``eid`` of the store, or an :class:`InputError` saying there is none."""
    e = open_store(store).get(eid)
    if e is None:
        raise InputError(eid, "no such experiment in the store")
    return e


class Role(str, Enum):
    participant = "participant"
    organiser = "organiser"


def _password(stdin: bool, generate: bool) -> str:
    """The new password: one line of standard input, a generated one, or typed twice at a
    terminal (never an option's value: those end up in shell histories and process lists)."""
    import secrets

    if generate:
        return secrets.token_urlsafe(15)
    if stdin:
        return sys.stdin.readline().rstrip("\r\n")
    if not sys.stdin.isatty():
        raise InputError("password", "pass --password-stdin (one line on standard input) or --generate, or run "
                                     "the command in a terminal to type it")
    return typer.prompt("Password", hide_input=True, confirmation_prompt=True)


def _with_password(store: Optional[str], stdin: bool, generate: bool, apply: Any, action: str, name: str,
                   detail: str) -> None:
    """Read (or generate) the new password, ``apply(accounts, password)``, log ``action`` in
    the audit log and print a generated password once."""
    from kgqa.store.accounts import Accounts

    password = _password(stdin, generate)
    accounts = Accounts(open_store(store))
    apply(accounts, password)
    accounts.log(None, action, name, detail)
    if generate:
        out.print(password, highlight=False, soft_wrap=True)


PasswordStdinOption = Annotated[bool, typer.Option("--password-stdin", help="Read the password from one line of standard input.")]
GeneratePasswordOption = Annotated[bool, typer.Option("--generate", help="Generate a password and print it once (give it to the account's owner).")]


def users_add_cmd(
    name: str = typer.Argument(..., help="Account name (letters, digits, '.', '_', '-')."),
    role: Role = typer.Option(Role.participant, "--role", help="participant (submits, sees its own experiments) or organiser (sees and does everything)."),
    store: StoreOption = None,
    password_stdin: PasswordStdinOption = False,
    generate: GeneratePasswordOption = False,
) -> None:
    """Add an account: a store with accounts makes kgqa web ask everyone to log in."""
    _with_password(store, password_stdin, generate, lambda a, pw: a.add(name, role.value, pw),
                   "account-add", name, f"{role.value}, from the command line")
    err.print(f"added {role.value} {name} (restart a running kgqa web that had no accounts: it asks everyone to "
              "log in from its next start)", highlight=False)


def users_list_cmd(store: StoreOption = None) -> None:
    """The accounts of the store."""
    from kgqa.store.accounts import Accounts

    for a in Accounts(open_store(store)).list():  # tab-separated: for scripts
        sys.stdout.write(f"{a.name}\t{a.role}\t{a.created}\n")


def users_remove_cmd(
    name: str = typer.Argument(..., help="Account name."),
    store: StoreOption = None,
) -> None:
    """Remove an account (its experiments stay, with its name)."""
    from kgqa.store.accounts import Accounts

    accounts = Accounts(open_store(store))
    if not accounts.remove(name):
        raise InputError(name, "no such account in the store")
    accounts.log(None, "account-remove", name, "from the command line")
    err.print(f"removed {name}", highlight=False)


def users_password_cmd(
    name: str = typer.Argument(..., help="Account name."),
    store: StoreOption = None,
    password_stdin: PasswordStdinOption = False,
    generate: GeneratePasswordOption = False,
) -> None:
    """Set an account's password (its open sessions end)."""
    _with_password(store, password_stdin, generate, lambda a, pw: a.set_password(name, pw),
                   "password", name, "from the command line")


def register(app: typer.Typer) -> None:
    web = typer.Typer(no_args_is_help=False)
    web.callback(invoke_without_command=True)(web_cmd)
    users = typer.Typer(help="Accounts of a hosted challenge: add, list, remove, password.", no_args_is_help=True)
    users.command("add")(users_add_cmd)
    users.command("list")(users_list_cmd)
    users.command("remove")(users_remove_cmd)
    users.command("password")(users_password_cmd)
    web.add_typer(users, name="users")
    app.add_typer(web, name="web")
    app.command("worker")(worker_cmd)
    exp = typer.Typer(help="The experiment store: list, show, export, delete.", no_args_is_help=True)
    app.add_typer(exp, name="experiments")
    exp.command("list")(list_cmd)
    exp.command("show")(show_cmd)
    exp.command("export")(export_cmd)
    exp.command("delete")(delete_cmd)
