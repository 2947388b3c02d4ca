"""``kgqa compare``, ``kgqa report`` and ``kgqa show``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from kgqa.cli._output import out, print_or_write, save_evaluations, write_text
from kgqa.cli.options import AllowForeignKgOption, AllowGoldCopyOption, AllowScoreFileOption, MaxKgFailuresOption
from kgqa.cli.options import CompareFormat, DatasetFormatOption, ExecutionOptions, InputOptions, OutputFileOption
from kgqa.cli.options import MeasuresOption, ReportFormat, RunFormatOption, TimeoutOption, measure_list
from kgqa.model import InputError


# --------------------------------------------------------------------------- commands


def report_target(fmt: str, output: Optional[Path], results: list[str]) -> tuple[Optional[Path], Optional[str]]:
    """Where ``kgqa report`` writes (HTML: ``report.html`` unless ``-o``; ``-o -``: stdout) and the
    link from the report to the saved evaluation holding every answer row it cuts."""
    import os

    if fmt == "html" and output is None:
        output = Path("report.html")
    elif output is not None and str(output) == "-":
        return None, None
    if fmt != "html" or output is None or len(results) != 1:
        return output, None
    return output, Path(os.path.relpath(Path(results[0]).resolve(), output.resolve().parent)).as_posix()


def compare_cmd(
    dataset: str = typer.Argument(..., help="Registry name (kgqa datasets list) or dataset file."),
    runs: list[str] = typer.Argument(..., help="Two or more run files."),
    baseline: Optional[str] = typer.Option(None, "--baseline", "-b", help="Compare every run with this one (a run file or run name); default: all pairs."),
    profile: str = typer.Option("kgqa", "--profile", "-p", help="Scoring convention or a profile .yaml file."),
    measures: MeasuresOption = None,
    lang: str = typer.Option("all", "--lang", help="Languages for per-language datasets, comma-separated, or 'all'."),
    fmt: CompareFormat = typer.Option(CompareFormat.table, "--format", "-f", help="Output format."),
    seed: int = typer.Option(0, "--seed", help="Seed of every bootstrap and randomization test (same seed, same output)."),
    resamples: int = typer.Option(10_000, "--resamples", help="Bootstrap resamples and randomization trials."),
    family: str = typer.Option("measure", "--family", help="Correction family: 'measure' (comparisons of one measure) or 'all'."),
    output: OutputFileOption = None,
    save: Optional[Path] = typer.Option(None, "--save", help="Also save the evaluations (JSON) for kgqa report / show."),
    dataset_format: DatasetFormatOption = None,
    run_format: RunFormatOption = None,
    kg: Optional[str] = typer.Option(None, "--kg", help="Execute queries on this KG (RDF file(s), store directory or endpoint)."),
    gold_answers: str = typer.Option("stored", "--gold-answers", help="stored or executed (with --kg)."),
    timeout: TimeoutOption = 30.0,
    graph: Optional[str] = typer.Option(None, "--graph", help="Default graph IRI for an endpoint."),
    no_normalise: bool = typer.Option(False, "--no-normalise", help="Execute queries exactly as written (no prefix injection or dialect fixes)."),
    reexecute: bool = typer.Option(False, "--reexecute", help="With --kg: execute the runs' queries even where they also give answers."),
    no_cache: bool = typer.Option(False, "--no-cache", help="With --kg: neither read nor write the result cache."),
    dataset_option: Optional[list[str]] = typer.Option(None, "--dataset-option", help="Loader option KEY=VALUE; repeatable."),
    run_option: Optional[list[str]] = typer.Option(None, "--run-option", help="Run loader option KEY=VALUE; repeatable."),
    allow_foreign_kg: AllowForeignKgOption = False,
    max_kg_failures: MaxKgFailuresOption = 0.5,
    allow_gold_copy: AllowGoldCopyOption = False,
    allow_score_file: AllowScoreFileOption = False,
    view: Optional[str] = typer.Option(None, "--view", help="Compare answers as values, tuples or list; default: the profile's."),
) -> None:
    """Compare runs: means with bootstrap CIs, paired tests, Holm/BH-corrected p-values, W/T/L."""
    from kgqa import api

    measures = measure_list(measures)
    if len(runs) < 2:
        raise InputError("compare", f"needs at least two runs, got {len(runs)}")
    if family not in ("measure", "all"):
        raise InputError("--family", f"expected measure or all, got {family!r}")
    ex = ExecutionOptions(kg=kg, graph=graph, gold_answers=gold_answers, timeout=timeout, normalise=not no_normalise,
                          reexecute=reexecute, cache=not no_cache, allow_foreign_kg=allow_foreign_kg,
                          max_kg_failures=max_kg_failures)
    inputs = InputOptions(dataset_format=dataset_format, run_format=run_format, dataset_option=dataset_option,
                          run_option=run_option, allow_gold_copy=allow_gold_copy, allow_score_file=allow_score_file)
    evals = api.evaluate_many(dataset, list(runs), profile=profile, measures=measures, lang=lang, progress=True,
                         **ex.api_kwargs(), **inputs.api_kwargs(), view=view)
    if save is not None:
        save_evaluations(evals, save)
    if fmt is CompareFormat.html:
        write_text(api.render_report(evals, "html", baseline=baseline, runs=runs, seed=seed, family=family,
                                     resamples=resamples), output)
        return
    cmp = api.compare(evals, baseline=baseline, runs=runs, seed=seed, family=family, resamples=resamples)
    print_or_write(api.render_comparison(cmp, "md" if fmt is CompareFormat.table and output else fmt.value), output)


def report_cmd(
    results: list[str] = typer.Argument(..., help="Saved evaluations (kgqa evaluate --save FILE)."),
    fmt: ReportFormat = typer.Option(ReportFormat.html, "--format", "-f", help="Output format."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write to this file (default: report.html for html, else stdout; '-' for stdout)."),
    by: Optional[list[str]] = typer.Option(None, "--by", help="Breakdown by this characteristic (repeatable)."),
    bins: Optional[list[str]] = typer.Option(None, "--bins", help="Bins for a numeric characteristic: NAME=e0,e1,... or NAME=Q quantiles (repeatable)."),
    measure: Optional[str] = typer.Option(None, "--measure", help="Measure for breakdowns and curves (default F1)."),
    baseline: Optional[str] = typer.Option(None, "--baseline", "-b", help="Run name to compare the others with."),
    seed: int = typer.Option(0, "--seed", help="Seed of bootstrap and randomization."),
    resamples: int = typer.Option(10_000, "--resamples", help="Bootstrap resamples and randomization trials."),
) -> None:
    """Re-report saved evaluations without re-running (several results are compared)."""
    from kgqa import api

    evals = api.load_evaluations(results)
    if not evals:
        raise InputError(results[0], "no evaluation in the file(s)")
    output, link = report_target(fmt.value, output, results)
    rendered = api.render_report(evals, fmt.value, by=by or [], bins=bins, seed=seed, measure=measure,
                                 baseline=baseline, resamples=resamples, full_json=link)
    print_or_write(rendered, output)


def show_cmd(
    args: list[str] = typer.Argument(..., help="A saved evaluation (RESULT.json), or DATASET RUN."),
    qid: str = typer.Option(..., "--id", help="Question id."),
    run_name: Optional[str] = typer.Option(None, "--run", help="Which run of a file with several."),
    profile: str = typer.Option("kgqa", "--profile", "-p", help="Scoring convention (DATASET RUN form)."),
    measures: MeasuresOption = None,
    lang: str = typer.Option("all", "--lang", help="Languages (DATASET RUN form)."),
    kg: Optional[str] = typer.Option(None, "--kg", help="Execute queries on this KG (DATASET RUN form)."),
) -> None:
    """One question in full: text, queries, answers, outcome, every measure, characteristics, taxonomy."""
    from kgqa import api
    from kgqa.report import console

    measures = measure_list(measures)
    if len(args) == 1:
        evals = api.load_evaluations(args)
    else:
        evals = api.evaluate_many(args[0], list(args[1:]), profile=profile, measures=measures, lang=lang, kg=kg,
                             progress=True)
    for e, q in api.find_question(evals, qid, run_name):
        console.print_question(out, e, q)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_cmd)
    app.command("report")(report_cmd)
    app.command("show")(show_cmd)
