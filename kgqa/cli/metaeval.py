"""``kgqa degrade``, ``kgqa sensitivity`` and ``kgqa axioms``: validating measures with
synthetic degradations and axioms (Linjordet, Balog, Setty, ICTIR 2022)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kgqa.cli._output import Console, write_text
from kgqa.cli.options import AmongOption, CacheFileOption, MeasuresOption, NoCacheOption, OutputFileOption
from kgqa.cli.options import TableFormat, TableFormatOption, TimeoutOption, measure_list, option
from kgqa.model import InputError

out = Console()
err = Console(stderr=True)


def _cache(cache: Optional[Path], no_cache: bool) -> Any:
    """``--cache FILE`` / ``--no-cache`` -> the result cache :func:`kgqa.api.open_kg` takes."""
    return False if no_cache else (cache or True)


def _floats(text: str, flag: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(flag, f"expected comma-separated numbers, got {text!r}") from None
    if not vals or any(not 0 < v <= 1 for v in vals):
        raise InputError(flag, f"expected rates in (0, 1], got {text!r}")
    return vals


def _among(among: str) -> str:
    if among not in ("applicable", "all"):
        raise InputError("--among", f"expected applicable or all, got {among!r}")
    return among


def _transforms(names: list[str], flag: str) -> list[str]:
    """Transformation names, each known (said before any work)."""
    from kgqa.metaeval import degrade as dg

    for n in names:
        try:
            dg.get(n)
        except ValueError as e:
            raise InputError(flag, str(e)) from None
    return names


def _emit(result: Any, fmt: TableFormat, output: Optional[Path]) -> None:
    """A validation table: printed (``table`` to the terminal; the last renderable, the
    signature or details, soft-wrapped) or written as text."""
    from kgqa import api

    if fmt is TableFormat.table and output is None:
        renderables = api.render_validation(result, "table")
        for i, r in enumerate(renderables):
            out.print(r, highlight=False, soft_wrap=i == len(renderables) - 1)
        return
    write_text(api.render_validation(result, "md" if fmt is TableFormat.table else fmt.value), output)


# --------------------------------------------------------------------------- commands


def degrade_cmd(
    dataset: str = typer.Argument(..., help="Registry name or dataset file."),
    kg: Annotated[Optional[str], option("--kg", help="KG (RDF files, store or endpoint); needed by T2, T3, filter-constant.")] = None,
    transform: str = typer.Option(..., "--transform", "-t", help="Transformation: T1, T2, T3, swap, drop, distinct, count-distinct, filter-constant, truncate."),
    rate: float = typer.Option(0.1, "--rate", help="Share of items to degrade, in [0, 1]."),
    seed: Annotated[int, option("--seed", help="Random seed.")] = 0,
    among: AmongOption = "applicable",
    output: Annotated[Path, option("--output", help="Run file to write (JSONL run format).")] = ...,
    cache: CacheFileOption = None,
    no_cache: NoCacheOption = False,
    timeout: TimeoutOption = 30.0,
) -> None:
    """Write a synthetic run: gold queries with one transformation applied to a seeded share of items."""
    from kgqa import api

    _transforms([transform], "--transform")
    if not 0 <= rate <= 1:
        raise InputError("--rate", f"expected a rate in [0, 1], got {rate}")
    d = api.degrade(dataset, transform, rate, seed, kg=kg, among=_among(among), timeout=timeout,
                    cache=_cache(cache, no_cache))
    api.write_run(d.run, output, "jsonl")
    err.print(d.summary(), highlight=False)


def sensitivity_cmd(
    dataset: str = typer.Argument(..., help="Registry name or dataset file."),
    kg: Annotated[str, option("--kg", help="KG to execute gold and degraded queries on.")] = ...,
    transforms: str = typer.Option("T1,T2,T3", "--transforms", "-t", help="Comma-separated transformations."),
    rates: str = typer.Option("0.1,0.2", "--rates", help="Comma-separated rates."),
    measures: MeasuresOption = None,
    seeds: int = typer.Option(3, "--seeds", help="Number of seeds (seed, seed+1, ...)."),
    seed: Annotated[int, option("--seed", help="First seed.")] = 0,
    among: AmongOption = "applicable",
    profile: Annotated[str, option("--profile", help="Scoring convention (term matching, answer view).")] = "kgqa",
    fmt: TableFormatOption = TableFormat.table,
    output: OutputFileOption = None,
    cache: CacheFileOption = None,
    no_cache: NoCacheOption = False,
    timeout: TimeoutOption = 30.0,
) -> None:
    """Sensitivity of measures to synthetic degradations (ICTIR 2022 Table 3)."""
    from kgqa import api

    measures = measure_list(measures)
    names = _transforms([x.strip() for x in transforms.split(",") if x.strip()], "--transforms")
    if measures:
        api.parse_measures(measures, "--measures")  # said before any work
    if seeds < 1:
        raise InputError("--seeds", "expected at least 1")
    among = _among(among)
    table = api.sensitivity(dataset, kg, transforms=names, rates=_floats(rates, "--rates"),
                            seeds=list(range(seed, seed + seeds)), measures=measures, profile=profile,
                            among=among, timeout=timeout, cache=_cache(cache, no_cache))
    _emit(table, fmt, output)


def axioms_cmd(
    measures: list[str] = typer.Argument(None, help="Measures to check (default: Table 1's measures)."),
    dataset: Annotated[Optional[str], option("--dataset", help="Also build pairs from this dataset's gold queries (needs --kg).")] = None,
    kg: Annotated[Optional[str], option("--kg", help="KG to execute the dataset's derived queries on.")] = None,
    limit: Optional[int] = typer.Option(None, "--limit", help="Use only the first N items of the dataset."),
    strict: Annotated[bool, option("--strict", help="Strict reading: no tie is excused for answer-level measures.")] = False,
    no_synthetic: bool = typer.Option(False, "--no-synthetic", help="Only the dataset's suites."),
    fmt: TableFormatOption = TableFormat.table,
    output: OutputFileOption = None,
    cache: CacheFileOption = None,
    no_cache: NoCacheOption = False,
    timeout: TimeoutOption = 30.0,
) -> None:
    """Check measures against the axioms A1-A3 of ICTIR 2022 (Table 1), with counterexamples."""
    from kgqa import api

    report = api.check_axioms(list(measures) if measures else None, dataset=dataset, kg=kg, limit=limit,
                              strict=strict, synthetic=not no_synthetic, timeout=timeout,
                              cache=_cache(cache, no_cache))
    if fmt is TableFormat.table and output is not None:
        fmt = TableFormat.md
    _emit(report, fmt, output)


def register(app: typer.Typer) -> None:
    app.command("degrade")(degrade_cmd)
    app.command("sensitivity")(sensitivity_cmd)
    app.command("axioms")(axioms_cmd)
