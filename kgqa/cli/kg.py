"""``kgqa kg load|info``, ``kgqa cache stats|clear`` and ``kgqa audit``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from kgqa.cli._output import Console
from kgqa.cli.options import BaseOption, CachePathOption, DatasetFormatOption, NoCacheOption, QuietOption
from kgqa.cli.options import SummaryFormat, SummaryFormatOption, TimeoutOption, option

out = Console()
err = Console(stderr=True)

kg_app = typer.Typer(help="Load RDF files into a KG store and inspect KGs.", no_args_is_help=True)
cache_app = typer.Typer(help="The persistent query result cache.", no_args_is_help=True)


def _print_manifest(m, where: str, graphs: list[str] | None = None) -> None:
    out.print(f"[bold]{where}[/]", highlight=False)
    out.print(f"  quads        {m.quads}")
    out.print(f"  fingerprint  {m.fingerprint}", highlight=False)
    if m.graph:
        out.print(f"  loaded into  <{m.graph}>", highlight=False)
    if graphs is not None:
        out.print(f"  named graphs {len(graphs)}" + ("" if not graphs else ": " + ", ".join(graphs[:10])
                                                    + (" ..." if len(graphs) > 10 else "")), highlight=False)
    for f in m.files:
        out.print(f"  file         {f.name}  {f.size} bytes  {f.quads} quads  sha256:{f.sha256[:12]}", highlight=False)


def _print_summary(kgs, files_title: str) -> None:
    """A KG summary under its store directory's name, else under ``files_title``."""
    _print_manifest(kgs.manifest, f"store {kgs.store}" if kgs.store is not None else files_title, kgs.graphs)


@kg_app.command("load")
def load_cmd(
    files: list[Path] = typer.Argument(..., help="RDF files: .ttl .nt .nq .trig .rdf/.owl/.xml .n3 .jsonld, optionally .gz/.bz2/.xz."),
    store: Annotated[Optional[Path], option("--store", help="Create a persistent store in this (new) directory; without it the files are only loaded and checked.")] = None,
    graph: Annotated[Optional[str], option("--graph", help="Load triples into this named graph (quad formats keep their graphs).")] = None,
    replace: bool = typer.Option(False, "--replace", help="Overwrite an existing kgqa store directory."),
    quiet: QuietOption = False,
    base: BaseOption = None,
) -> None:
    """Load RDF files (with a progress bar) into memory to check them, or into a persistent
    store that later runs open read-only with `--kg DIR`."""
    from kgqa import api

    kgs = api.load_kg(files, store=store, graph=graph, progress=not quiet, replace=replace, base=base)
    _print_summary(kgs, "loaded (in memory; use --store DIR to keep it)")


@kg_app.command("info")
def info_cmd(
    kg: list[str] = typer.Argument(..., help="A store directory, or RDF file(s)."),
    graph: Annotated[Optional[str], option("--graph", help="For files: the named graph they would be loaded into.")] = None,
) -> None:
    """Quads, named graphs and content fingerprint of a KG."""
    from kgqa import api

    _print_summary(api.kg_info(kg, graph=graph), "files")


@cache_app.command("stats")
def cache_stats_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    path: CachePathOption = None,
) -> None:
    """Entries per engine and outcome status, and the cache file size."""
    from kgqa import api

    s = api.cache_stats(path)
    if as_json:
        out.print_json(json.dumps({"path": s.path, "entries": s.entries, "size_bytes": s.size_bytes,
                                   "by_engine": s.by_engine}))
        return
    out.print(f"[bold]{s.path}[/]  {s.entries} entries, {s.size_bytes / 1e6:.1f} MB", highlight=False)
    if s.by_engine:
        t = Table()
        statuses = sorted({st for d in s.by_engine.values() for st in d})
        t.add_column("engine", overflow="fold")
        for st in statuses:
            t.add_column(st, justify="right")
        for eng, d in s.by_engine.items():
            t.add_row(eng, *(str(d.get(st, 0)) for st in statuses))
        out.print(t)


@cache_app.command("clear")
def cache_clear_cmd(
    engine: Optional[str] = typer.Option(None, "--engine", help="Only this engine key (as in `cache stats`; a trailing * matches a prefix)."),
    path: CachePathOption = None,
) -> None:
    """Delete cached results (all, or one engine's)."""
    from kgqa import api

    n = api.clear_cache(engine, path=path)
    out.print(f"deleted {n} cached results", highlight=False)


def audit_cmd(
    dataset: str = typer.Argument(..., help="Registry name or dataset file."),
    kg: Annotated[str, option("--kg", help="RDF file(s) (comma-separated), a store directory, or an http(s) endpoint.")] = ...,
    graph: Annotated[Optional[str], option("--graph", help="Named graph for loaded files / default graph of an endpoint.")] = None,
    dataset_format: DatasetFormatOption = None,
    timeout: TimeoutOption = 30.0,
    max_rows: Annotated[int, option("--max-rows", help="Row cap per result.")] = 100_000,
    no_normalise: Annotated[bool, option("--no-normalise", help="Execute gold queries exactly as written.")] = False,
    sandbox_gold: Annotated[bool, option("--sandbox-gold", help="Run the gold queries through the sandbox (a dataset from an unknown source; see docs/reference/trust.md).")] = False,
    no_cache: NoCacheOption = False,
    show_all: bool = typer.Option(False, "--all", help="List every query, not only problems."),
    fmt: SummaryFormatOption = SummaryFormat.table,
) -> None:
    """Check each gold query: does it parse, execute, and reproduce the stored gold answer
    (value sets compared as lexical strings)? Lists mismatches with their diffs."""
    from kgqa import api
    from kgqa.report import console

    policy = api.ExecutionPolicy(timeout=timeout, max_rows=max_rows, normalise=not no_normalise,
                                 trust_gold=not sandbox_gold)
    report = api.audit(dataset, kg, graph=graph, policy=policy, cache=not no_cache,
                       progress=fmt is SummaryFormat.table, dataset_format=dataset_format)
    if fmt is SummaryFormat.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
        return
    for r in console.audit_renderables(report, show_all):
        out.print(r, highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(kg_app, name="kg")
    app.add_typer(cache_app, name="cache")
    app.command("audit")(audit_cmd)
