"""``kgqa compare``, ``kgqa report`` and ``kgqa show``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kgqa.cli._output import out, print_or_write, save_evaluations, write_text
from kgqa.cli.options import AllowForeignKgOption, AllowGoldCopyOption, AllowScoreFileOption, BaselineOption
from kgqa.cli.options import CompareFormat, DatasetFormatOption, DatasetLoaderOption, ExecutionOptions
from kgqa.cli.options import GoldAnswersOption, GraphOption, InputOptions, KgOption, LangOption, MaxKgFailuresOption
from kgqa.cli.options import MeasuresOption, NoCacheOption, NoNormaliseOption, OutputFileOption, ProfileOption
from kgqa.cli.options import ReexecuteOption, ReportFormat, ResamplesOption, RunFormatOption, RunLoaderOption
from kgqa.cli.options import SaveOption, TimeoutOption, ViewOption, measure_list, option
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
    baseline: BaselineOption = None,
    profile: ProfileOption = "kgqa",
    measures: MeasuresOption = None,
    lang: LangOption = "all",
    fmt: Annotated[CompareFormat, option("--format")] = CompareFormat.table,
    seed: Annotated[int, option("--seed", help="Seed of every bootstrap and randomization test (same seed, same output).")] = 0,
    resamples: ResamplesOption = 10_000,
    family: str = typer.Option("measure", "--family", help="Correction family: 'measure' (comparisons of one measure) or 'all'."),
    output: OutputFileOption = None,
    save: SaveOption = None,
    dataset_format: DatasetFormatOption = None,
    run_format: RunFormatOption = None,
    kg: KgOption = None,
    gold_answers: GoldAnswersOption = "stored",
    timeout: TimeoutOption = 30.0,
    graph: GraphOption = None,
    no_normalise: NoNormaliseOption = False,
    reexecute: ReexecuteOption = False,
    no_cache: NoCacheOption = False,
    dataset_option: DatasetLoaderOption = None,
    run_option: RunLoaderOption = None,
    allow_foreign_kg: AllowForeignKgOption = False,
    max_kg_failures: MaxKgFailuresOption = 0.5,
    allow_gold_copy: AllowGoldCopyOption = False,
    allow_score_file: AllowScoreFileOption = False,
    view: ViewOption = None,
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
    fmt: Annotated[ReportFormat, option("--format")] = ReportFormat.html,
    output: Annotated[Optional[Path], option("--output", help="Write to this file (default: report.html for html, else stdout; '-' for stdout).")] = None,
    by: Annotated[Optional[list[str]], option("--by", help="Breakdown by this characteristic (repeatable).")] = None,
    bins: Annotated[Optional[list[str]], option("--bins", help="Bins for a numeric characteristic: NAME=e0,e1,... or NAME=Q quantiles (repeatable).")] = None,
    measure: Optional[str] = typer.Option(None, "--measure", help="Measure for breakdowns and curves (default F1)."),
    baseline: Annotated[Optional[str], option("--baseline", help="Run name to compare the others with.")] = None,
    seed: Annotated[int, option("--seed", help="Seed of bootstrap and randomization.")] = 0,
    resamples: ResamplesOption = 10_000,
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
    run_name: Annotated[Optional[str], option("--run")] = None,
    profile: Annotated[str, option("--profile", help="Scoring convention (DATASET RUN form).")] = "kgqa",
    measures: MeasuresOption = None,
    lang: Annotated[str, option("--lang", help="Languages (DATASET RUN form).")] = "all",
    kg: Annotated[Optional[str], option("--kg", help="Execute queries on this KG (DATASET RUN form).")] = None,
) -> None:
    """One question in full: text, queries, answers, outcome, every measure, characteristics, taxonomy."""
    from kgqa import api
    from kgqa.report import analysis  # not the console facade: one question needs no comparison (nor NumPy)

    measures = measure_list(measures)
    if len(args) == 1:
        evals = api.load_evaluations(args)
    else:
        evals = api.evaluate_many(args[0], list(args[1:]), profile=profile, measures=measures, lang=lang, kg=kg,
                             progress=True)
    for e, q in api.find_question(evals, qid, run_name):
        analysis.print_question(out, e, q)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_cmd)
    app.command("report")(report_cmd)
    app.command("show")(show_cmd)
