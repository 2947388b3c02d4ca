"""``kgqa system ask`` (benchmark a live QA system) and ``kgqa system serve`` (the adapter)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from kgqa.cli._output import HEADER_HELP, resumable, system_headers
from kgqa.cli.options import DatasetFormatOption, GraphOption, RunFormatOption, option

err = Console(stderr=True)


def ask_cmd(
    url: str = typer.Argument(..., help="The system's web-service URL."),
    dataset: str = typer.Argument(..., help="Registry name or dataset file."),
    output: Annotated[Path, option("--output", help="Run file to write (.jsonl: kgqa JSONL; else QALD JSON for gerbil, Text2SPARQL answers JSON for text2sparql).")] = ...,
    protocol: Annotated[str, option("--protocol", help="gerbil (POST query=&lang=) or text2sparql (GET ?question=&dataset=).")] = "gerbil",
    lang: Annotated[Optional[str], option("--lang", help="Languages to ask, comma-separated, or 'all' (default: every language of per-language datasets, else en).")] = None,
    concurrency: Annotated[int, option("--concurrency")] = 4,
    timeout: Annotated[float, option("--timeout", help="Seconds to wait for one response.")] = 60.0,
    retries: Annotated[int, option("--retries", help="Further attempts on 429/5xx/connection errors (what still fails is asked again by the next run).")] = 3,
    rps: Annotated[Optional[float], option("--rps")] = None,
    dataset_iri: Optional[str] = typer.Option(None, "--dataset-iri", help="Text2SPARQL 'dataset' parameter (default: the dataset's id)."),
    fmt: Annotated[Optional[str], option("--format", help="Run format: jsonl, qald or text2sparql.")] = None,
    dataset_format: DatasetFormatOption = None,
    fresh: Annotated[bool, option("--fresh")] = False,
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Also ask again the questions that failed for good before (4xx, malformed, refused); transient failures are asked again anyway."),
    progress: Annotated[bool, option("--progress/--no-progress")] = True,
    header: Annotated[Optional[list[str]], option("--header", help=HEADER_HELP)] = None,
    allow_failures: Annotated[bool, option("--allow-failures", help="Write the run even when the system failed every question or more than --max-failures of them (an error otherwise).")] = False,
    max_failures: float = typer.Option(0.5, "--max-failures", help="Fraction of failed questions above which the system counts as failing."),
    no_echo_check: Annotated[bool, option("--no-echo-check")] = False,
) -> None:
    """Ask a live system every question of DATASET and write a run kgqa can score.

    Every response is journalled beside the output (OUTPUT.journal.jsonl) as it arrives:
    after an interruption (even kill -9) the same command asks only the missing questions
    and those that failed transiently (5xx, 429, timeouts, connection errors). A system
    that fails every question, or more than --max-failures of them, is an error (exit
    status 2; the journal is kept); --allow-failures writes the run anyway."""
    from kgqa import api

    with resumable():
        result, written, journal = api.ask_system(
            dataset, url, output, protocol=protocol, fmt=fmt, dataset_format=dataset_format,
            langs=api.parse_langs(lang), concurrency=concurrency, timeout=timeout, retries=retries, rps=rps,
            dataset_iri=dataset_iri, fresh=fresh, retry_failed=retry_failed, progress=progress,
            headers=system_headers(header), max_failures=max_failures, allow_failures=allow_failures,
            echo_check=not no_echo_check)
    for p in result.problems:
        err.print(f"[yellow]{p}[/]", highlight=False, soft_wrap=True)
    counts = ", ".join(f"{k} {v}" for k, v in result.counts.items()) or "nothing"
    err.print(f"asked {result.asked} question(s) ({result.requests} HTTP requests, {result.elapsed:.1f} s), "
              f"{result.reused} from the journal; outcomes: {counts}", highlight=False, soft_wrap=True)
    err.print(f"wrote {output} ({written}); journal {journal}", highlight=False, soft_wrap=True)


def serve_cmd(
    run: Annotated[Optional[Path], option("--run", help="Replay this run file (any run format kgqa reads).")] = None,
    python: Optional[str] = typer.Option(None, "--python", help="Serve MODULE:FUNCTION (or FILE.py:FUNCTION), f(question, lang) -> SPARQL str | dict."),
    model: Optional[Path] = typer.Option(None, "--model", help="Serve a trained reference system (kgqa baseline train -o DIR)."),
    kg: Annotated[Optional[str], option("--kg", help="Execute returned queries on this KG to fill in GERBIL answers.")] = None,
    graph: GraphOption = None,
    protocol: Annotated[str, option("--protocol", help="What / serves: gerbil or text2sparql (/gerbil and /text2sparql always serve both).")] = "gerbil",
    host: Annotated[str, option("--host")] = "127.0.0.1",
    port: Annotated[int, option("--port", help="Port (0: a free one, printed at start).")] = 8000,
    dataset: Annotated[Optional[str], option("--dataset", help="Dataset whose question texts a replayed run lacks.")] = None,
    run_format: RunFormatOption = None,
    timeout: Annotated[float, option("--timeout", help="Per-query timeout when executing on --kg.")] = 30.0,
    max_body: Optional[int] = typer.Option(None, "--max-body", help="Largest request body / query string in bytes (default 65536)."),
    input: Optional[str] = typer.Option(None, "--input", help="--model: the form clients send questions in (raw, tagged, tag-end); "
                                                              "a model is served only with the form it was trained on."),
) -> None:
    """Serve a QA system under the GERBIL QA and Text2SPARQL contracts (until Ctrl-C)."""
    from kgqa.service import serve

    serve(run=run, python=python, kg=kg, graph=graph, protocol=protocol, host=host, port=port, dataset=dataset,
          run_format=run_format, timeout=timeout, max_body=max_body, model=model, input=input)


def register(app: typer.Typer) -> None:
    system = typer.Typer(help="Benchmark live QA systems (GERBIL QA / Text2SPARQL web services) and serve "
                              "any system under those contracts.", no_args_is_help=True)
    app.add_typer(system, name="system")
    system.command("ask")(ask_cmd)
    system.command("serve")(serve_cmd)
