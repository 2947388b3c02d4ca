"""The command line's option groups and format choices, each defined once.

Typer declares the options on each command (the declarations are the command's interface);
the command body then builds one dataclass per concern in one call and passes it on:

- :class:`InputOptions`: how the dataset and the runs are read (formats, loader options);
- :class:`ExecutionOptions`: where and how queries are executed (KG, graph, gold answers,
  timeout, trust, cache, engine caps and checks); the ``stored``/``executed`` check is here;
- :class:`OutputOptions`: what is printed or written (format, per-question table, file,
  saved evaluations, breakdowns);
- :class:`SystemOptions`: a live QA system to ask (URL, protocol, client settings, journal).

One enum per concept: :class:`OutputFormat` (an evaluation), :class:`CompareFormat` (a
comparison), :class:`ReportFormat` (a report of saved evaluations), :class:`TableFormat`
(a validation table), :class:`DatasetFormat` (a dataset written by ``datasets export``),
:class:`ExportFormat` (an experiment exported from the store).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kgqa.cli._output import system_headers
from kgqa.model import InputError


#: ``-m``/``--measures``, repeatable: every occurrence counts (``-m BLEU -m F1`` is ``-m BLEU,F1``);
#: :func:`measure_list` joins them for the library.
MeasuresOption = Annotated[Optional[list[str]], typer.Option(
    "--measures", "-m", help="Measures, comma-separated and/or repeated (-m BLEU -m 'QueryEM(norm=whitespace)'); "
                             "replaces the profile's list.")]


def measure_list(measures: Optional[list[str]]) -> Optional[str]:
    """The ``-m`` options given (each possibly comma-separated) as one comma-separated list, in
    order; None when none was given (the profile's list)."""
    given = [m.strip() for m in measures or () if m and m.strip()]
    return ",".join(given) if given else None


class OutputFormat(str, Enum):
    """``kgqa evaluate`` / ``kgqa demo``: an evaluation's scores."""

    table = "table"
    json = "json"
    csv = "csv"
    md = "md"


class CompareFormat(str, Enum):
    """``kgqa compare``: a comparison of runs."""

    table = "table"
    md = "md"
    latex = "latex"
    json = "json"
    html = "html"


class ReportFormat(str, Enum):
    """``kgqa report``: a report of saved evaluations."""

    html = "html"
    md = "md"
    latex = "latex"
    csv = "csv"
    json = "json"
    table = "table"


class TableFormat(str, Enum):
    """``kgqa sensitivity`` / ``kgqa axioms``: a validation table."""

    table = "table"
    md = "md"
    latex = "latex"
    json = "json"


class DatasetFormat(str, Enum):
    """``kgqa datasets export --to``: a dataset format with a writer."""

    qald_json = "qald-json"
    jsonl = "jsonl"


class ExportFormat(str, Enum):
    """``kgqa experiments export``: a finished experiment."""

    json = "json"
    csv = "csv"
    md = "md"
    latex = "latex"
    html = "html"


# Options declared alike by several commands (``name: TimeoutOption = 30.0``).
TimeoutOption = Annotated[float, typer.Option("--timeout", help="Per-query timeout in seconds.")]
CacheFileOption = Annotated[Optional[Path], typer.Option("--cache", help="Result cache file (default: the user cache).")]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Do not use the persistent result cache.")]
DatasetFormatOption = Annotated[Optional[str], typer.Option("--dataset-format", help="Force the dataset format.")]
RunFormatOption = Annotated[Optional[str], typer.Option("--run-format", help="Force the run format.")]
TableFormatOption = Annotated[TableFormat, typer.Option("--format", "-f", help="Output format.")]
AllowForeignKgOption = Annotated[bool, typer.Option(
    "--allow-foreign-kg", help="With --kg: score even when the KG holds none of the dataset's or the run's IRIs "
                               "(an error otherwise: a KG of another dataset).")]
MaxKgFailuresOption = Annotated[float, typer.Option(
    "--max-kg-failures", help="With --kg: share of executed queries that may fail (error, timeout) before the KG or "
                              "endpoint is refused with exit status 2 (default 0.5, as for live systems; 1: never).")]
AllowGoldCopyOption = Annotated[bool, typer.Option(
    "--allow-gold-copy", help="Score a run whose answers copy the dataset's gold answers (an error otherwise).")]
AllowScoreFileOption = Annotated[bool, typer.Option(
    "--allow-score-file", help="Score a run file that looks like an evaluation/score file (an error otherwise).")]
OutputFileOption = Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to this file.")]


def parse_options(pairs: list[str] | None, flag: str) -> dict[str, object]:
    """``["question_field=paraphrased_question", "expand=false"]`` -> loader keyword options."""
    out: dict[str, object] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise InputError(flag, f"expected KEY=VALUE, got {pair!r}")
        k, v = pair.split("=", 1)
        out[k.strip()] = {"true": True, "false": False}.get(v.strip().lower(), v.strip())
    return out


@dataclass(frozen=True)
class InputOptions:
    """``--dataset-format``, ``--run-format``, ``--dataset-option``, ``--run-option``."""

    dataset_format: Optional[str] = None
    run_format: Optional[str] = None
    dataset_option: Optional[list[str]] = None
    run_option: Optional[list[str]] = None
    allow_gold_copy: bool = False
    allow_score_file: bool = False

    def api_kwargs(self) -> dict[str, Any]:
        return {"dataset_format": self.dataset_format, "run_format": self.run_format,
                "dataset_options": parse_options(self.dataset_option, "--dataset-option"),
                "run_options": parse_options(self.run_option, "--run-option"),
                "allow_gold_copy": self.allow_gold_copy, "allow_score_file": self.allow_score_file}


#: ``--worker-memory`` and the other engine caps: flag -> engine option
ENGINE_CAPS = {"--worker-memory": "memory_limit", "--max-result-bytes": "max_result_bytes",
               "--max-response-bytes": "max_response_bytes"}


def engine_limits(caps: dict[str, Optional[str]]) -> dict[str, int | None]:
    """The engine caps given on the command line (``2GiB``, ``64MiB``, ``off``; by flag) as
    engine options."""
    from kgqa.api import parse_bytes

    out: dict[str, int | None] = {}
    for flag, key in ENGINE_CAPS.items():
        try:
            out[key] = parse_bytes(caps.get(flag))
        except ValueError as e:
            raise InputError(flag, str(e)) from None
    return out


@dataclass(frozen=True)
class ExecutionOptions:
    """Where and how queries run: ``--kg``, ``--graph``, ``--gold-answers``, ``--timeout``,
    ``--no-normalise``, ``--sandbox-gold``, ``--reexecute``, ``--no-cache``, the engine caps and
    the engine-dependence check. Built before any work: a wrong ``--gold-answers`` is said first."""

    kg: Optional[str] = None
    graph: Optional[str] = None
    gold_answers: str = "stored"
    timeout: float = 30.0
    normalise: bool = True
    sandbox_gold: bool = False
    reexecute: bool = False
    cache: bool = True
    engine_caps: Optional[dict[str, Optional[str]]] = None  # by flag; None: the engine's defaults
    engine_check: bool = True
    exclude_engine_dependent: bool = False
    allow_foreign_kg: bool = False
    max_kg_failures: float = 0.5

    def __post_init__(self) -> None:
        if self.gold_answers not in ("stored", "executed"):
            raise InputError("--gold-answers", f"expected stored or executed, got {self.gold_answers!r}")
        if not 0 <= self.max_kg_failures <= 1:
            raise InputError("--max-kg-failures", f"expected a share between 0 and 1, got {self.max_kg_failures:g}")

    def policy(self) -> Any:
        """``--sandbox-gold``: the execution policy that does not trust gold queries (None: the default)."""
        if not self.sandbox_gold:
            return None
        from kgqa import api

        return api.ExecutionPolicy(trust_gold=False)

    def api_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"kg": self.kg, "graph": self.graph, "gold_answers": self.gold_answers,
                              "timeout": self.timeout, "normalise": self.normalise, "reexecute": self.reexecute,
                              "cache": self.cache, "allow_foreign_kg": self.allow_foreign_kg,
                              "max_kg_failures": self.max_kg_failures}
        if self.engine_caps is not None:  # kgqa evaluate: the engine's caps and checks
            kw.update(policy=self.policy(), engine_options=engine_limits(self.engine_caps),
                      engine_check=self.engine_check, exclude_engine_dependent=self.exclude_engine_dependent)
        return kw


@dataclass(frozen=True)
class OutputOptions:
    """``--format``, ``--per-question``, ``--output``, ``--save``, ``--by``, ``--bins``: checked
    before any work (a breakdown cannot be appended to JSON or CSV output)."""

    fmt: Any = OutputFormat.table
    per_question: bool = False
    output: Optional[Path] = None
    save: Optional[Path] = None
    by: Optional[list[str]] = None
    bins: Optional[list[str]] = None

    def __post_init__(self) -> None:
        if self.by and self.fmt not in (OutputFormat.table, OutputFormat.md):
            raise InputError("--by", f"breakdowns are printed with --format table or md (got {self.fmt.value}); "
                             "for other formats save the evaluation (--save) and use kgqa report")

    def stream(self, stream: Optional[bool]) -> Optional[bool]:
        """``--stream/--no-stream`` with the breakdowns: they read every dataset item (kept in
        memory), so a streamed evaluation cannot give them (said before any work)."""
        if not self.by:
            return stream
        if stream:
            raise InputError("--stream", "breakdowns (--by) read each question's dataset item, which a streamed "
                                         "evaluation does not keep: drop --stream for them")
        return False


@dataclass(frozen=True)
class SystemOptions:
    """A live QA system: ``--system``, ``--protocol``, ``--concurrency``, ``--system-timeout``,
    ``--retries``, ``--rps``, ``--journal``, ``--fresh``, ``--allow-failures``, ``--header``,
    ``--no-echo-check``."""

    system: Optional[str] = None
    protocol: str = "gerbil"
    concurrency: int = 4
    timeout: float = 60.0
    retries: int = 3
    rps: Optional[float] = None
    journal: Optional[Path] = None
    fresh: bool = False
    allow_failures: bool = False
    header: Optional[list[str]] = None
    echo_check: bool = True

    def settings(self, runs: list[str] | None, lang: str) -> Any:
        """The live-system client's settings (None without ``--system``); no run and no system is
        a usage error."""
        if self.system is None:
            if not runs:
                raise InputError("RUNS", "give one or more run files, or a live system with --system URL")
            return None
        from kgqa.api import AskSettings, parse_langs

        return AskSettings(langs=parse_langs(lang), concurrency=self.concurrency, timeout=self.timeout,
                           retries=self.retries, rps=self.rps, fresh=self.fresh, allow_failures=self.allow_failures,
                           headers=system_headers(self.header), echo_check=self.echo_check)

    def api_kwargs(self, runs: list[str] | None, lang: str) -> dict[str, Any]:
        return {"system": self.system, "protocol": self.protocol, "system_settings": self.settings(runs, lang),
                "system_journal": self.journal}
