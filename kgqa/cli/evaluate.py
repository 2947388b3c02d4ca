"""``kgqa evaluate``, ``kgqa measures``, ``kgqa profiles`` and ``kgqa demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional, TYPE_CHECKING

import typer
from rich.markup import escape

from kgqa.cli._output import Console, emit_breakdowns, record, resumable, save_evaluations, say, serve_demo
from kgqa.cli.errors import Failure, InputError
from kgqa.cli.options import AllowForeignKgOption, AllowGoldCopyOption, AllowScoreFileOption, BinsOption, ByOption
from kgqa.cli.options import DatasetFormatOption, DatasetLoaderOption, ExecutionOptions, GoldAnswersOption
from kgqa.cli.options import GraphOption, InputOptions, KgOption, LangOption, MaxKgFailuresOption, MeasuresOption
from kgqa.cli.options import NoCacheOption, NoNormaliseOption, OutputFileOption, OutputFormat, OutputOptions
from kgqa.cli.options import PerQuestionOption, ProfileOption, ReexecuteOption, RunFormatOption, RunLoaderOption
from kgqa.cli.options import SandboxGoldOption, SaveOption, SystemOptions, TimeoutOption, ViewOption, measure_list
from kgqa.cli.options import option

if TYPE_CHECKING:
    from kgqa.api import Evaluation

out = Console()
err = Console(stderr=True)


def _evaluate(dataset: str, runs: list[str], **options: object) -> list[Evaluation]:
    """:func:`kgqa.api.evaluate_many` for the command line (a list of runs, progress on stderr; Ctrl-C
    while asking a live system prints the command that resumes)."""
    from kgqa import api

    with resumable():
        return api.evaluate_many(dataset, list(runs), progress=True, **options)  # type: ignore[arg-type]


def print_warnings(evals: list[Evaluation]) -> list[str]:
    """Print each distinct set-up warning once (stderr); return them."""
    for note in dict.fromkeys(str(n) for e in evals for n in getattr(e, "notes", ())):
        say(err, note, "[dim]note:[/] ")
    warnings = list(dict.fromkeys(str(w) for e in evals for w in e.setup_warnings))
    for w in warnings:
        say(err, w, "[yellow]set-up warning:[/] ")
    return warnings


#: What `kgqa demo` suggests next ({runs}: the demo's run folder, as :func:`next_steps` writes it).
NEXT_STEPS = [
    ("kgqa show demo {runs}/weak.json --id 12", "one question in full, with its error label"),
    ("kgqa evaluate demo A={runs}/strong.json -p gerbil", "GERBIL QA's numbers for a run"),
    ("kgqa compare demo {runs}/*.json -f html -o demo.html", "a report to share"),
]


def next_steps(runs: Path, cwd: Path | None = None) -> list[tuple[str, str]]:
    """:data:`NEXT_STEPS` with the run folder as a path that works from ``cwd`` (relative below
    it, else absolute), quoted for the shell where it needs it."""
    import os
    import shlex

    here = Path.cwd() if cwd is None else cwd
    try:
        rel = Path(os.path.relpath(runs.resolve(), here.resolve()))
        shown = str(runs.resolve()) if rel.parts[:1] == ("..",) else rel.as_posix()
    except ValueError:  # another drive (Windows)
        shown = str(runs.resolve())
    quoted = shlex.quote(shown)
    return [(cmd.format(runs=quoted), what) for cmd, what in NEXT_STEPS]


def emit(evals: list[Evaluation], fmt: OutputFormat, per_question: bool, output: Optional[Path]) -> None:
    from kgqa import api
    from kgqa.cli._output import write_text
    # the evaluation tables alone, not kgqa.report.console: it brings every renderer (comparisons,
    # breakdowns, audits, and with them NumPy and the SPARQL parser), and `kgqa evaluate` prints one table
    from kgqa.report import evaluation

    if fmt is OutputFormat.table and output is None:
        evaluation.terminal(out, evals, per_question=per_question)
        return
    write_text(api.render_evaluations(evals, fmt.value), output)


# long function: typer declares the command's options as parameters: the body is one library call
def evaluate_cmd(
    dataset: str = typer.Argument(..., help="Registry name (kgqa datasets list) or dataset file."),
    runs: Optional[list[str]] = typer.Argument(None, help="One or more run files (or none with --system)."),
    profile: ProfileOption = "kgqa",
    measures: MeasuresOption = None,
    lang: LangOption = "all",
    fmt: Annotated[OutputFormat, option("--format")] = OutputFormat.table,
    per_question: PerQuestionOption = False,
    output: OutputFileOption = None,
    by: ByOption = None,
    bins: BinsOption = None,
    save: SaveOption = None,
    dataset_format: DatasetFormatOption = None,
    run_format: RunFormatOption = None,
    kg: KgOption = None,
    graph: GraphOption = None,
    gold_answers: GoldAnswersOption = "stored",
    timeout: TimeoutOption = 30.0,
    no_normalise: NoNormaliseOption = False,
    sandbox_gold: SandboxGoldOption = False,
    dataset_option: DatasetLoaderOption = None,
    run_option: RunLoaderOption = None,
    reexecute: ReexecuteOption = False,
    worker_memory: Optional[str] = typer.Option(None, "--worker-memory", help="Embedded engine: address-space allowance per query worker (default 2GiB; 'off' for none)."),
    max_result_bytes: Optional[str] = typer.Option(None, "--max-result-bytes", help="Embedded engine: byte cap on one result, rows x size (default 64MiB)."),
    max_response_bytes: Optional[str] = typer.Option(None, "--max-response-bytes", help="Endpoint: byte cap on one response body, after decompression (default 256MiB)."),
    exclude_engine_dependent: bool = typer.Option(False, "--exclude-engine-dependent", help="With --kg: score without the questions whose answer depends on the engine (LIMIT without ORDER BY, ties at the cut, IRI comparisons, ...)."),
    no_engine_check: bool = typer.Option(False, "--no-engine-check", help="With --kg: do not check which answers depend on the engine."),
    system: Optional[str] = typer.Option(None, "--system", help="Also ask this live QA system (web-service URL) every question and score its answers."),
    protocol: Annotated[str, option("--protocol", help="With --system: gerbil or text2sparql.")] = "gerbil",
    concurrency: Annotated[int, option("--concurrency", help="With --system: requests in flight.")] = 4,
    system_timeout: float = typer.Option(60.0, "--system-timeout", help="With --system: seconds to wait for one response."),
    retries: Annotated[int, option("--retries", help="With --system: further attempts on 429/5xx/connection errors.")] = 3,
    rps: Annotated[Optional[float], option("--rps", help="With --system: at most this many requests per second.")] = None,
    journal: Optional[Path] = typer.Option(None, "--journal", help="With --system: resume from / append to this journal (JSONL)."),
    fresh: Annotated[bool, option("--fresh", help="With --system and --journal: ask every question again.")] = False,
    allow_failures: Annotated[bool, option("--allow-failures", help="With --system: score it even when it failed every question or more than half of them (an error otherwise).")] = False,
    header: Annotated[Optional[list[str]], option("--header", help="With --system: send this header NAME:VALUE with every request (repeatable; also KGQA_SYSTEM_HEADERS). Never written.")] = None,
    no_echo_check: Annotated[bool, option("--no-echo-check", help="With --system: ignore the question a response echoes.")] = False,
    store: Annotated[Optional[str], option("--store", help="Also record each run as an experiment in this store (SQLite file or SQLAlchemy URL; see kgqa web).")] = None,
    no_cache: NoCacheOption = False,
    view: ViewOption = None,
    links: Annotated[Optional[list[str]], option("--links", help="Meaning matching: IRIs linked by owl:sameAs in this file (RDF, or two-column TSV/CSV; repeatable) compare equal, with DBpedia's http/https/host variants; 'dbpedia' for the variants alone.")] = None,
    redirects: Optional[str] = typer.Option(None, "--redirects", help="With --kg: IRIs linked by this KG predicate (e.g. dbo:wikiPageRedirects) compare equal (meaning matching)."),
    match_labels: bool = typer.Option(False, "--match-labels", help="Text answers match entities by label (the dataset's entity labels and aliases; with --kg also rdfs:label, skos labels, schema/foaf name): for systems that answer in text."),
    stream: Optional[bool] = typer.Option(None, "--stream/--no-stream", help="Read a JSONL dataset one question at a time, keeping none of its items (same scores; not with --kg). Default: streamed when the JSONL file is 64 MB or more and nothing needs it in memory (KGQA_STREAM_BYTES sets the size)."),
    allow_foreign_kg: AllowForeignKgOption = False,
    max_kg_failures: MaxKgFailuresOption = 0.5,
    allow_gold_copy: AllowGoldCopyOption = False,
    allow_score_file: AllowScoreFileOption = False,
    strict: Annotated[bool, option("--strict", help="Exit with status 3 when the set-up check warns (under half of the questions in the run, n = 0, a copy of the gold answers, a live system failing questions, failing endpoint, a score file given as a run).")] = False,
) -> None:
    """Score one or more runs on a dataset."""
    measures = measure_list(measures)
    ex = ExecutionOptions(kg=kg, graph=graph, gold_answers=gold_answers, timeout=timeout, normalise=not no_normalise,
                          sandbox_gold=sandbox_gold, reexecute=reexecute, cache=not no_cache,
                          engine_caps={"--worker-memory": worker_memory, "--max-result-bytes": max_result_bytes,
                                       "--max-response-bytes": max_response_bytes},
                          engine_check=not no_engine_check, exclude_engine_dependent=exclude_engine_dependent,
                          allow_foreign_kg=allow_foreign_kg, max_kg_failures=max_kg_failures)
    to = OutputOptions(fmt=fmt, per_question=per_question, output=output, save=save, by=by, bins=bins)
    stream = to.stream(stream)
    live = SystemOptions(system=system, protocol=protocol, concurrency=concurrency, timeout=system_timeout,
                         retries=retries, rps=rps, journal=journal, fresh=fresh, allow_failures=allow_failures,
                         header=header, echo_check=not no_echo_check)
    inputs = InputOptions(dataset_format=dataset_format, run_format=run_format, dataset_option=dataset_option,
                          run_option=run_option, allow_gold_copy=allow_gold_copy, allow_score_file=allow_score_file)
    evals = _evaluate(dataset, runs or [], **live.api_kwargs(runs, lang), profile=profile, measures=measures,
                      lang=lang, **inputs.api_kwargs(), **ex.api_kwargs(), view=view, stream=stream, links=links,
                      redirects=redirects, match_labels=match_labels)
    warnings = print_warnings(evals)
    emit(evals, to.fmt, to.per_question, to.output)
    if store is not None:
        record(store, dataset, runs or [], evals, profile=profile, measures=measures, lang=lang, kg=kg,
               gold_answers=gold_answers)
    if to.save is not None:
        save_evaluations(evals, to.save)
    if to.by:
        emit_breakdowns(evals, to.by, to.bins, to.fmt.value, to.output)
    if strict and warnings:
        raise Failure(f"{len(warnings)} set-up warning(s); exit status 3", code=3, label="--strict")


def measures_cmd(
    names: Optional[list[str]] = typer.Argument(None, help="Measures to print in full (default: all, one line each)."),
) -> None:
    """List the registered measures; with names, print their whole definitions."""
    from kgqa.report import listings  # not the console facade: a listing needs no analysis (nor NumPy)

    try:
        listings.print_measures(out, names or [])
    except ValueError as e:  # an unknown name, with "did you mean"
        raise InputError("measures", str(e)) from None


def profiles_cmd(
    names: Optional[list[str]] = typer.Argument(None, help="Profiles to print in full (default: all, one row each)."),
) -> None:
    """List the scoring profiles; with names, print what each selects and its signature."""
    from kgqa.report import listings

    listings.print_profiles(out, names or [])


def demo_cmd(
    profile: ProfileOption = "kgqa",
    fmt: Annotated[OutputFormat, option("--format")] = OutputFormat.table,
    per_question: PerQuestionOption = False,
    web: bool = typer.Option(False, "--web", help="Open the three runs as experiments in a fresh store and serve the web platform."),
    port: Annotated[int, option("--port", help="Port for --web.")] = 8800,
) -> None:
    """Execute the built-in demo runs' queries on the built-in demo KG (embedded, offline),
    score them and compare them."""
    from kgqa.demo import DATA

    if web:
        serve_demo(port, "127.0.0.1")
        return

    runs = sorted(str(p) for p in (DATA / "runs").glob("*.json"))
    kg = str(DATA / "kg.ttl")
    evals = _evaluate(str(DATA / "questions.json"), runs, profile=profile, kg=kg, reexecute=True)
    emit(evals, fmt, per_question, None)
    if fmt is OutputFormat.table:
        from kgqa import api
        from kgqa.report import console

        console.print_comparison(out, api.compare(evals, resamples=2000))
        out.print("\n[bold]Next:[/]", highlight=False)
        for cmd, what in next_steps(DATA / "runs"):  # one command per line, whole (to copy)
            out.print(f"  [dim]# {what}[/]", highlight=False)
            out.print(f"  [cyan]{escape(cmd)}[/]", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate_cmd)
    app.command("measures")(measures_cmd)
    app.command("profiles")(profiles_cmd)
    app.command("demo")(demo_cmd)
