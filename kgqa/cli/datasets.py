"""``kgqa datasets``: list, inspect, validate and export benchmark datasets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kgqa.cli._output import Console, say
from kgqa.cli.errors import Failure
from kgqa.cli.options import DatasetFormat, InputFormatOption, option

out = Console()
err = Console(stderr=True)

datasets_app = typer.Typer(help="List, inspect, validate and export benchmark datasets.", no_args_is_help=True)


@datasets_app.command("list")
def list_cmd() -> None:
    """Registered datasets: name, items, format, where their files resolve (package, data dir,
    download cache or not downloaded) and a description."""
    from kgqa.report import tables  # not the console facade: a listing needs no analysis (nor NumPy)

    out.print(tables.registry_table())


@datasets_app.command("info")
def info_cmd(
    spec: str = typer.Argument(..., help="registered dataset name or file path"),
    format: InputFormatOption = None,
) -> None:
    """Counts per language, answer types, items with SPARQL / answers, and problems."""
    from kgqa import api

    sm = api.dataset_summary(spec, format)
    ds, entry = sm.dataset, sm.entry
    out.print(f"[bold]{ds.name}[/]  format {ds.format}  items {len(ds)}", highlight=False)
    if entry is not None:
        out.print(f"licence: {entry.licence}", highlight=False)
        if entry.citation:
            out.print(f"cite: {entry.citation}", highlight=False)
    out.print("source: " + ", ".join(str(p) for p in ds.source), highlight=False)
    out.print(f"with SPARQL: {sm.with_sparql}   with gold answer: {sm.with_answer}", highlight=False)
    out.print("answers: " + ", ".join(f"{k} {v}" for k, v in sm.answer_kinds.most_common()), highlight=False)
    out.print("answer types: " + ", ".join(f"{k} {v}" for k, v in sm.answer_types.most_common()), highlight=False)
    out.print("questions per language: " + ", ".join(f"{k} {v}" for k, v in sm.languages.most_common()),
              highlight=False)
    if sm.scoring_units is not None:
        out.print(f"scoring units (item x language): {sm.scoring_units}", highlight=False)
    out.print(f"problems: {sm.errors} error(s), {sm.warnings} warning(s)", highlight=False)
    for p in ds.problems:
        out.print(f"  {p.severity}: {p}", highlight=False)


@datasets_app.command("validate")
def validate_cmd(
    paths: list[Path] = typer.Argument(..., help="dataset or run files"),
    format: Annotated[Optional[str], option("--format", help="format name (default: detect)")] = None,
) -> None:
    """Every problem, one per line; exit status 1 if any is an error."""
    from kgqa import api

    problems = api.validate_files(list(paths), format)
    for p in problems:
        say(out, f"{p.severity}: {p}")
    errors = sum(p.severity == "error" for p in problems)
    out.print(f"{len(paths)} file(s): {errors} error(s), {len(problems) - errors} warning(s)", highlight=False)
    if errors:
        raise Failure(None, 1)  # the problems and the count are printed above


@datasets_app.command("export")
def export_cmd(
    spec: str = typer.Argument(..., help="registered dataset name or file path"),
    to: DatasetFormat = typer.Option(..., "--to", help="output format"),
    output: Annotated[Path, option("--output", help="file to write")] = ...,
    format: InputFormatOption = None,
) -> None:
    """Write a dataset in another format with that format's writer."""
    from kgqa import api

    ds = api.export_dataset(spec, to.value, output, format=format)
    out.print(f"wrote {len(ds)} items to {output} ({to.value})", highlight=False)


def register(app: typer.Typer) -> None:
    if getattr(app, "_kgqa_datasets_registered", False):
        return
    app.add_typer(datasets_app, name="datasets")
    app._kgqa_datasets_registered = True  # type: ignore[attr-defined]
