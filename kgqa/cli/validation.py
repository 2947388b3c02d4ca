"""``kgqa degrade``, ``kgqa sensitivity`` and ``kgqa axioms``: validating measures with
synthetic degradations and axioms (Linjordet, Balog, Setty, ICTIR 2022)."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from kgqa.model import InputError
from kgqa.report.term import SafeConsole as Console

out = Console()
err = Console(stderr=True)


class TableFormat(str, Enum):
    table = "table"
    md = "md"
    latex = "latex"
    json = "json"


def _dataset(spec: str):
    from kgqa.load import load_dataset

    return load_dataset(spec)


def _runner(kg: str, cache: Optional[Path], no_cache: bool, timeout: float):
    from kgqa.execute.executor import Executor
    from kgqa.execute.policy import ExecutionPolicy

    return Executor.open(kg, policy=ExecutionPolicy(timeout=timeout), cache=False if no_cache else (cache or True))


def _floats(text: str, flag: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(flag, f"expected comma-separated numbers, got {text!r}") from None
    if not vals or any(not 0 < v <= 1 for v in vals):
        raise InputError(flag, f"expected rates in (0, 1], got {text!r}")
    return vals


def _write(text: str, output: Optional[Path]) -> None:
    if output is not None:
        from kgqa.load.jsonio import write_atomic

        write_atomic(output, [text])
        err.print(f"wrote {output}")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _print_all(renderables: list) -> None:
    """Print one after the other; the last (signature or details) soft-wrapped, as before."""
    for i, r in enumerate(renderables):
        out.print(r, highlight=False, soft_wrap=i == len(renderables) - 1)


# --------------------------------------------------------------------------- commands


def register(app: typer.Typer) -> None:
    @app.command("degrade")
    def degrade_cmd(
        dataset: str = typer.Argument(..., help="Registry name or dataset file."),
        kg: Optional[str] = typer.Option(None, "--kg", help="KG (RDF files, store or endpoint); needed by T2, T3, filter-constant."),
        transform: str = typer.Option(..., "--transform", "-t", help="Transformation: T1, T2, T3, swap, drop, distinct, count-distinct, filter-constant, truncate."),
        rate: float = typer.Option(0.1, "--rate", help="Share of items to degrade, in [0, 1]."),
        seed: int = typer.Option(0, "--seed", help="Random seed."),
        among: str = typer.Option("applicable", "--among", help="Draw items among those the transformation applies to ('applicable') or all ('all', the paper's protocol)."),
        output: Path = typer.Option(..., "--output", "-o", help="Run file to write (JSONL run format)."),
        cache: Optional[Path] = typer.Option(None, "--cache", help="Result cache file (default: the user cache)."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the persistent result cache."),
        timeout: float = typer.Option(30.0, "--timeout", help="Per-query timeout in seconds."),
    ) -> None:
        """Write a synthetic run: gold queries with one transformation applied to a seeded share of items."""
        from kgqa.validate import degrade as dg
        from kgqa.load import formats

        try:
            t = dg.get(transform)
        except ValueError as e:
            raise InputError("--transform", str(e)) from None
        if not 0 <= rate <= 1:
            raise InputError("--rate", f"expected a rate in [0, 1], got {rate}")
        if among not in ("applicable", "all"):
            raise InputError("--among", f"expected applicable or all, got {among!r}")
        ds = _dataset(dataset)
        runner = None
        try:
            if t.needs and kg is None:
                raise InputError("--kg", f"{t.name} needs a KG ({', '.join(t.needs)})")
            if kg is not None and t.needs:
                runner = _runner(kg, cache, no_cache, timeout)
            ctx = dg.build_context(ds, [t], runner, timeout=timeout) if t.needs else dg.Context(ds)
            d = dg.degrade(ds, t, rate, seed, ctx, among=among)
        finally:
            if runner is not None:
                runner.close()
        formats.get("run", "jsonl").write(dg.scoring_run(d.run, ds), output)  # ids as evaluate expects them
        err.print(d.summary(), highlight=False)

    @app.command("sensitivity")
    def sensitivity_cmd(
        dataset: str = typer.Argument(..., help="Registry name or dataset file."),
        kg: str = typer.Option(..., "--kg", help="KG to execute gold and degraded queries on."),
        transforms: str = typer.Option("T1,T2,T3", "--transforms", "-t", help="Comma-separated transformations."),
        rates: str = typer.Option("0.1,0.2", "--rates", help="Comma-separated rates."),
        measures: Optional[str] = typer.Option(None, "--measures", "-m", help="Measures (default: Table 3's columns)."),
        seeds: int = typer.Option(3, "--seeds", help="Number of seeds (seed, seed+1, ...)."),
        seed: int = typer.Option(0, "--seed", help="First seed."),
        among: str = typer.Option("applicable", "--among", help="applicable (default) or all (the paper's protocol)."),
        profile: str = typer.Option("kgqa", "--profile", "-p", help="Scoring convention (term matching, answer view)."),
        fmt: TableFormat = typer.Option(TableFormat.table, "--format", "-f", help="Output format."),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write to this file."),
        cache: Optional[Path] = typer.Option(None, "--cache", help="Result cache file (default: the user cache)."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the persistent result cache."),
        timeout: float = typer.Option(30.0, "--timeout", help="Per-query timeout in seconds."),
    ) -> None:
        """Sensitivity of measures to synthetic degradations (ICTIR 2022 Table 3)."""
        from kgqa.report import validation as V
        from kgqa.validate.sensitivity import DEFAULT_MEASURES, sensitivity
        from kgqa.validate import degrade as dg
        from kgqa.score.measures import parse_list

        names = [x.strip() for x in transforms.split(",") if x.strip()]
        for n in names:
            try:
                dg.get(n)
            except ValueError as e:
                raise InputError("--transforms", str(e)) from None
        try:
            ms = parse_list(measures or DEFAULT_MEASURES)
        except ValueError as e:
            raise InputError("--measures", str(e)) from None
        if seeds < 1:
            raise InputError("--seeds", "expected at least 1")
        if among not in ("applicable", "all"):
            raise InputError("--among", f"expected applicable or all, got {among!r}")
        ds = _dataset(dataset)
        with _runner(kg, cache, no_cache, timeout) as runner:
            table = sensitivity(ds, runner, transforms=names, rates=_floats(rates, "--rates"),
                                seeds=list(range(seed, seed + seeds)), measures=ms, profile=profile, among=among)
        if fmt is TableFormat.table and output is None:
            _print_all(V.sensitivity_renderables(table))
            return
        text = {TableFormat.json: lambda t: json.dumps(t.to_json(), ensure_ascii=False, indent=2),
                TableFormat.md: V.sensitivity_markdown, TableFormat.table: V.sensitivity_markdown,
                TableFormat.latex: V.sensitivity_latex}[fmt](table)
        _write(text, output)

    @app.command("axioms")
    def axioms_cmd(
        measures: list[str] = typer.Argument(None, help="Measures to check (default: Table 1's measures)."),
        dataset: Optional[str] = typer.Option(None, "--dataset", "-d", help="Also build pairs from this dataset's gold queries (needs --kg)."),
        kg: Optional[str] = typer.Option(None, "--kg", help="KG to execute the dataset's derived queries on."),
        limit: Optional[int] = typer.Option(None, "--limit", help="Use only the first N items of the dataset."),
        strict: bool = typer.Option(False, "--strict", help="Strict reading: no tie is excused for answer-level measures."),
        no_synthetic: bool = typer.Option(False, "--no-synthetic", help="Only the dataset's suites."),
        fmt: TableFormat = typer.Option(TableFormat.table, "--format", "-f", help="Output format."),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write to this file."),
        cache: Optional[Path] = typer.Option(None, "--cache", help="Result cache file (default: the user cache)."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the persistent result cache."),
        timeout: float = typer.Option(30.0, "--timeout", help="Per-query timeout in seconds."),
    ) -> None:
        """Check measures against the axioms A1-A3 of ICTIR 2022 (Table 1), with counterexamples."""
        from kgqa.report import validation as V
        from kgqa.validate import axioms as ax
        from kgqa.score.measures import parse_list

        try:
            ms = parse_list(list(measures) if measures else ax.DEFAULT_AXIOM_MEASURES)
        except ValueError as e:
            raise InputError("MEASURE", str(e)) from None
        suites = [] if no_synthetic else ax.synthetic_suites()
        if dataset is not None:
            if kg is None:
                raise InputError("--kg", "--dataset needs --kg to execute the derived queries")
            ds = _dataset(dataset)
            ids = [it.id for it in ds.items][:limit] if limit else None
            with _runner(kg, cache, no_cache, timeout) as runner:
                suites += ax.dataset_suites(ds, runner, ids=ids)
        if not suites:
            raise InputError("--no-synthetic", "no suites to check (give --dataset and --kg)")
        report = ax.check(ms, suites, strict=strict)
        if fmt is TableFormat.json:
            _write(json.dumps(report.to_json(), ensure_ascii=False, indent=2), output)
        elif fmt is TableFormat.latex:
            _write(V.axioms_latex(report), output)
        elif fmt is TableFormat.md or output is not None:
            _write(V.axioms_markdown(report), output)
        else:
            _print_all(V.axioms_renderables(report))
