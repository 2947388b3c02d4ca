"""The command line's options, each declared once, and its format choices, one family.

**Flags.** A flag that more than one command takes (``--timeout``, ``--no-cache``, ``--kg``,
``--format``, ``--lang``, ``--profile``, ...) is declared in :data:`SHARED` only: its names
and the help most commands give it. A command declares it with :func:`option`
(``timeout: Annotated[float, option("--timeout")] = 30.0``; ``option("--output", help=...)``
where the command says more precisely what is written) or with one of the aliases below
(``timeout: TimeoutOption = 30.0``). A flag that one command alone takes stays beside that
command. ``tests/cli/test_cli_house.py`` fails when a flag is spelled in two declarations.

**Formats.** Every ``--format`` of the command line draws its values from one family,
:class:`Format`, each value meaning the same thing wherever it is offered (:data:`FORMATS`);
a command offers the subset it can write: :data:`OutputFormat` (an evaluation),
:data:`CompareFormat` (a comparison), :data:`ReportFormat` (a report of saved evaluations),
:data:`TableFormat` (a validation table), :data:`ExportFormat` (an experiment from the store),
:data:`SummaryFormat` (a summary: audits, generated datasets, the store's listings).
:class:`DatasetFormat` names dataset files (``datasets export --to``), not renderings.

**Groups.** The command body builds one dataclass per concern in one call and passes it on:
:class:`InputOptions` (how the dataset and the runs are read), :class:`ExecutionOptions`
(where and how queries run; the ``stored``/``executed`` check is here), :class:`OutputOptions`
(what is printed or written), :class:`SystemOptions` (a live QA system to ask).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kgqa.cli._output import HEADER_HELP, system_headers
from kgqa.model import InputError
from kgqa.score.profiles import names as profile_names  # the --profile help (nothing is parsed); see test_architecture

# --------------------------------------------------------------------------- formats

#: What each format value means, in every command that offers it.
FORMATS = {
    "table": "rich tables on the terminal (Markdown when written to a file)",
    "json": "JSON",
    "csv": "CSV, one row per run (or question)",
    "md": "Markdown tables",
    "latex": "LaTeX tables (booktabs)",
    "html": "a self-contained HTML report",
}


class Format(str, Enum):
    """The family of output formats: each command's choices are a subset of :data:`FORMATS`."""

    @classmethod
    def subset(cls, name: str, values: str) -> Any:
        """The formats ``values`` (space-separated, each a key of :data:`FORMATS`) as one enum."""
        unknown = [v for v in values.split() if v not in FORMATS]
        if unknown:
            raise ValueError(f"not a format of the family: {unknown}")
        return cls(name, [(v, v) for v in values.split()], module=__name__, qualname=name)


OutputFormat = Format.subset("OutputFormat", "table json csv md")  # kgqa evaluate, kgqa demo
CompareFormat = Format.subset("CompareFormat", "table md latex json html")  # kgqa compare
ReportFormat = Format.subset("ReportFormat", "html md latex csv json table")  # kgqa report
TableFormat = Format.subset("TableFormat", "table md latex json")  # kgqa sensitivity, kgqa axioms
ExportFormat = Format.subset("ExportFormat", "json csv md latex html")  # kgqa experiments export
SummaryFormat = Format.subset("SummaryFormat", "table json")  # audit, generate, experiments list/show


class DatasetFormat(str, Enum):
    """``kgqa datasets export --to``: a dataset format with a writer."""

    qald_json = "qald-json"
    jsonl = "jsonl"


# --------------------------------------------------------------------------- shared flags

KG_HELP = ("Execute queries on this KG: RDF file(s), a store directory, an http(s) SPARQL endpoint, or a registry KG "
           "name (ck25, demo).")
STORE_HELP = ("Experiment store: a SQLite file or a SQLAlchemy URL (postgresql+psycopg://...); default "
              "~/.local/share/kgqa/experiments.sqlite.")

#: Every flag that more than one command takes: long name -> (its other names, the usual help).
SHARED: dict[str, tuple[tuple[str, ...], str]] = {
    # input
    "--format": (("-f",), "Output format."),
    "--dataset-format": ((), "Force the dataset format."),
    "--run-format": ((), "Force the run format."),
    "--dataset-option": ((), "Loader option KEY=VALUE (e.g. question_field=paraphrased_question for LC-QuAD 2.0); "
                             "repeatable."),
    "--run-option": ((), "Run loader option KEY=VALUE; repeatable."),
    "--dataset": (("-d",), "Registry name or dataset file."),
    "--run": ((), "Which run of a file with several."),
    "--lang": ((), "Languages to score for per-language datasets (Text2SPARQL), comma-separated, or 'all'."),
    "--ontology": ((), "RDFS/OWL file with domains, ranges and labels."),
    "--allow-gold-copy": ((), "Score a run whose answers copy the dataset's gold answers (an error otherwise)."),
    "--allow-score-file": ((), "Score a run file that looks like an evaluation/score file (an error otherwise)."),
    # scoring
    "--profile": (("-p",), f"Scoring convention: {', '.join(profile_names())}, or a profile .yaml file."),
    "--measures": (("-m",), "Measures, comma-separated and/or repeated (-m BLEU -m 'QueryEM(norm=whitespace)'); "
                            "replaces the profile's list."),
    "--view": ((), "Compare answers as values (flattened), tuples (rows) or list; default: the profile's."),
    "--links": ((), "IRIs linked by owl:sameAs in this file (RDF, or two-column TSV/CSV; repeatable)."),
    "--strict": ((), "Strict reading (see the command's description)."),
    # execution
    "--kg": ((), KG_HELP),
    "--graph": ((), "Default graph IRI for an endpoint."),
    "--base": ((), "Base IRI for relative IRIs in the RDF files (default: each file's own file: URI, which depends "
                   "on where it lies)."),
    "--gold-answers": ((), "stored: the dataset's gold answers; executed: re-run gold queries on --kg."),
    "--timeout": ((), "Per-query timeout in seconds."),
    "--max-rows": ((), "Row cap per query result (over it: the query failed)."),
    "--no-normalise": ((), "Execute queries exactly as written (no prefix injection or dialect fixes)."),
    "--sandbox-gold": ((), "With --kg: run the dataset's gold queries through the sandbox like the run's (a dataset "
                           "from an unknown source; see docs/reference/trust.md)."),
    "--reexecute": ((), "With --kg: execute the run's queries even where the run also gives answers."),
    "--cache": ((), "Result cache file (default: the user cache); a killed run resumes from it."),
    "--no-cache": ((), "Do not read or write the persistent result cache."),
    "--path": ((), "Cache file (default $KGQA_CACHE_DIR/results.sqlite)."),
    "--allow-foreign-kg": ((), "With --kg: score even when the KG holds none of the dataset's or the run's IRIs (an "
                               "error otherwise: a KG of another dataset)."),
    "--max-kg-failures": ((), "With --kg: share of executed queries that may fail (error, timeout) before the KG or "
                              "endpoint is refused with exit status 2 (default 0.5, as for live systems; 1: never)."),
    # output
    "--output": (("-o",), "Write to this file."),
    "--save": ((), "Also save the evaluations (JSON) for kgqa report / kgqa show."),
    "--per-question": (("-q",), "Also print the per-question table."),
    "--by": ((), "Also print a breakdown by this characteristic (repeatable; e.g. function, hops, "
                 "answer_cardinality, a group or metadata key)."),
    "--bins": ((), "Bins for a numeric --by key: NAME=e0,e1,... or NAME=Q quantile bins (repeatable)."),
    "--quiet": (("-q",), "No progress bar."),
    "--progress/--no-progress": ((), "A progress bar on stderr (--no-progress: none)."),
    "--store": ((), STORE_HELP),
    "--allowed-url-host": ((), "A host the system/endpoint URLs may name even when loopback or private (repeatable)."),
    # comparison and seeds
    "--baseline": (("-b",), "Compare every run with this one (a run file or run name); default: all pairs."),
    "--seed": ((), "Random seed (same seed, same output)."),
    "--resamples": ((), "Bootstrap resamples and randomization trials."),
    "--among": ((), "Draw items among those the transformation applies to ('applicable') or all ('all', the "
                    "paper's protocol)."),
    # live systems and servers
    "--protocol": ((), "gerbil or text2sparql."),
    "--concurrency": (("-c",), "Requests in flight (GERBIL sends 1)."),
    "--retries": ((), "Further attempts on 429/5xx/connection errors."),
    "--rps": ((), "At most this many requests per second."),
    "--fresh": ((), "Forget the journal and ask every question again."),
    "--allow-failures": ((), "Score (or write) a live system's answers even when it failed every question or more "
                             "than half of them (an error otherwise)."),
    "--header": (("-H",), HEADER_HELP),
    "--no-echo-check": ((), "Ignore the question a response echoes (as GERBIL does); by default an echo of another "
                            "question is malformed (case, spaces and punctuation ignored)."),
    "--host": ((), "Address to listen on."),
    "--port": ((), "Port."),
}


def option(flag: str, help: Optional[str] = None, **settings: Any) -> Any:
    """The declaration of the shared ``flag`` (a key of :data:`SHARED`) for ``Annotated``:
    its names, ``help`` (default: the usual one) and any other typer settings (``min=1``)."""
    names, usual = SHARED[flag]
    return typer.Option(flag, *names, help=usual if help is None else help, **settings)


# Aliases of the declarations several commands make alike (``timeout: TimeoutOption = 30.0``).
MeasuresOption = Annotated[Optional[list[str]], option("--measures")]
ProfileOption = Annotated[str, option("--profile")]
LangOption = Annotated[str, option("--lang")]
KgOption = Annotated[Optional[str], option("--kg")]
GraphOption = Annotated[Optional[str], option("--graph")]
TimeoutOption = Annotated[float, option("--timeout")]
CacheFileOption = Annotated[Optional[Path], option("--cache")]
NoCacheOption = Annotated[bool, option("--no-cache")]
NoNormaliseOption = Annotated[bool, option("--no-normalise")]
SandboxGoldOption = Annotated[bool, option("--sandbox-gold")]
ReexecuteOption = Annotated[bool, option("--reexecute")]
GoldAnswersOption = Annotated[str, option("--gold-answers")]
DatasetFormatOption = Annotated[Optional[str], option("--dataset-format")]
RunFormatOption = Annotated[Optional[str], option("--run-format")]
DatasetLoaderOption = Annotated[Optional[list[str]], option("--dataset-option")]
RunLoaderOption = Annotated[Optional[list[str]], option("--run-option")]
InputFormatOption = Annotated[Optional[str], option("--format", help="Input dataset format (default: detect).")]
TableFormatOption = Annotated[TableFormat, option("--format")]
SummaryFormatOption = Annotated[SummaryFormat, option("--format")]
ViewOption = Annotated[Optional[str], option("--view")]
AllowForeignKgOption = Annotated[bool, option("--allow-foreign-kg")]
MaxKgFailuresOption = Annotated[float, option("--max-kg-failures")]
AllowGoldCopyOption = Annotated[bool, option("--allow-gold-copy")]
AllowScoreFileOption = Annotated[bool, option("--allow-score-file")]
OutputFileOption = Annotated[Optional[Path], option("--output")]
SaveOption = Annotated[Optional[Path], option("--save")]
ByOption = Annotated[Optional[list[str]], option("--by")]
BinsOption = Annotated[Optional[list[str]], option("--bins")]
PerQuestionOption = Annotated[bool, option("--per-question")]
BaselineOption = Annotated[Optional[str], option("--baseline")]
ResamplesOption = Annotated[int, option("--resamples")]
StoreOption = Annotated[Optional[str], option("--store")]
CachePathOption = Annotated[Optional[Path], option("--path")]
AmongOption = Annotated[str, option("--among")]
QuietOption = Annotated[bool, option("--quiet")]
MaxRowsOption = Annotated[int, option("--max-rows", min=1)]
BaseOption = Annotated[Optional[str], option("--base")]


def measure_list(measures: Optional[list[str]]) -> Optional[str]:
    """The ``-m`` options given (each possibly comma-separated) as one comma-separated list, in
    order; None when none was given (the profile's list)."""
    given = [m.strip() for m in measures or () if m and m.strip()]
    return ",".join(given) if given else None


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
