"""``kgqa generate`` and ``kgqa paraphrases``: characteristic-rich question sets from any KG
(Su et al. 2016, GraphQuestions). See :mod:`kgqa.make.generate`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from kgqa.cli._output import Console
from kgqa.cli.errors import Failure
from kgqa.cli.options import CacheFileOption, NoCacheOption, QuietOption, SummaryFormat, SummaryFormatOption
from kgqa.cli.options import TimeoutOption, option

out = Console()
err = Console(stderr=True)


def render_summary(s: dict, console: Console) -> None:
    t = Table(title="generated dataset", show_header=True)
    t.add_column("characteristic", style="bold")
    t.add_column("value")
    t.add_column("graph queries", justify="right")
    for k in ("graph_queries", "sentence_paraphrases", "questions", "templates", "classes", "relations",
              "topic_entities", "redundant"):
        t.add_row(k.replace("_", " "), "", str(s.get(k, 0)))
    for key in ("num_edges", "function_class", "function", "commonness", "answer_cardinality"):
        first = True
        for v, n in s.get(key, {}).items():
            t.add_row(key.replace("_", " ") if first else "", v, str(n))
            first = False
    if "commonness_min" in s:
        t.add_row("commonness range", f"{s['commonness_min']:.2f} .. {s['commonness_max']:.2f}", "")
    console.print(t)
    if s.get("rejected"):
        console.print("rejected candidates: " + ", ".join(f"{k} {v}" for k, v in s["rejected"].items()),
                      highlight=False)
    if s.get("unreadable_reasons"):  # what the KG's words could not say: why there are fewer questions
        console.print("unreadable, most often because: " + "; ".join(
            f"{k} ({v})" for k, v in s["unreadable_reasons"].items()), highlight=False)


def generate_cmd(
    kg: Annotated[str, option("--kg", help="KG: RDF file(s), a store directory (kgqa kg load --store) or a SPARQL endpoint URL.")] = ...,
    output: Annotated[Path, option("--output", help="Dataset to write: .json (QALD JSON) or .jsonl.")] = ...,
    n: int = typer.Option(100, "-n", "--n", min=1, help="Number of graph queries."),
    edges: str = typer.Option("1-3", "--edges", help="Edges per template: N or LOW-HIGH."),
    functions: Optional[str] = typer.Option(None, "--functions", help="Share per function class, e.g. none=0.7,count=0.1,superlative=0.1,comparative=0.1 (default: GraphQuestions' 0.74/0.10/0.09/0.07), or allowed functions/classes, comma-separated (none, count, superlative, comparative, max, argmin, >=, ...)."),
    seed: Annotated[int, option("--seed", min=0, help="Random seed (same seed, same KG: same bytes).")] = 0,
    min_commonness: Optional[float] = typer.Option(None, "--min-commonness", help="Drop graph queries with log10 p(q) below this (the paper: -40)."),
    ontology: Annotated[Optional[Path], option("--ontology", help="RDFS/OWL file with domains and ranges (default: schema induced from the KG).")] = None,
    graph: Annotated[Optional[str], option("--graph", help="Named graph: for RDF files, load into it; for an endpoint, its default-graph-uri.")] = None,
    base: Annotated[Optional[str], option("--base", help="Base IRI for relative IRIs in the RDF files (required when they have any).")] = None,
    groundings: int = typer.Option(3, "--groundings", min=1, help="Graph queries kept per template at most (over the whole run)."),
    label_predicate: Optional[str] = typer.Option(None, "--label-predicate", help="IRI of the KG's label property (default rdfs:label; when absent, skos:prefLabel, foaf:name, schema:name or a ...name predicate is found)."),
    candidates: int = typer.Option(20, "--candidates", min=1, help="Grounding candidates drawn per template."),
    keep_redundant: bool = typer.Option(False, "--keep-redundant", help="Do not minimize; mark redundant components instead."),
    frequencies: Optional[Path] = typer.Option(None, "--frequencies", help="TSV IRI<TAB>count for commonness (e.g. entity mention counts)."),
    lexicon: Optional[Path] = typer.Option(None, "--lexicon", help="Relation words: YAML/JSON IRI -> phrase or {phrase, pos: noun|verb|adj, inverse}; or a TSV IRI<TAB>label of alternative labels for entity-level paraphrases."),
    lang: Annotated[str, option("--lang", help="Language of labels and questions.")] = "en",
    exclude: list[str] = typer.Option([], "--exclude-relation", help="Relation IRI never used (repeatable)."),
    annotation: Optional[Path] = typer.Option(None, "--annotation", help="Also write the annotation export (.csv or .jsonl) for sentence-level paraphrasing."),
    paraphraser: Optional[str] = typer.Option(None, "--paraphraser", help="module:function(question, context) -> list of paraphrases."),
    timeout: TimeoutOption = 30.0,
    max_rows: Annotated[int, option("--max-rows", min=1, help="Row cap per query (over it: the query failed).")] = 100_000,
    cache: CacheFileOption = None,
    no_cache: NoCacheOption = False,
    max_attempts: Optional[int] = typer.Option(None, "--max-attempts", help="Templates tried at most (default 50 x n)."),
    fmt: SummaryFormatOption = SummaryFormat.table,
    quiet: QuietOption = False,
) -> None:
    """Generate a question set from a KG: random query templates, grounded, minimized,
    with functions, commonness and paraphrases (Su et al. 2016)."""
    from kgqa.make.generate import GenerateOptions, generate
    from kgqa.model.progress import progress_bar

    opts = GenerateOptions.parse(n=n, edges=edges, functions=functions, seed=seed, groundings=groundings,
                                 candidates=candidates, min_commonness=min_commonness,
                                 keep_redundant=keep_redundant, max_attempts=max_attempts)
    show = not quiet and fmt == "table" and err.is_terminal
    with progress_bar(n, "generating", enabled=show, console=err) as bar:
        res = generate(kg, opts, output=output, ontology=ontology, graph=graph, frequencies=frequencies,
                       lexicon=lexicon, lang=lang, exclude_relations=exclude, annotation=annotation,
                       paraphraser=paraphraser, timeout=timeout, max_rows=max_rows,
                       cache=False if no_cache else (cache if cache is not None else True),
                       label_predicate=label_predicate, progress=bar,
                       engine_options={"base": base} if base else None)
    _print_result(res, n, fmt, cached=not no_cache)


def queries_line(queries: int, executed: int, cached: bool) -> str:
    """How many SPARQL queries generation asked and where their results came from (``cached``:
    a result cache was in use; without one, nothing came from it)."""
    rest = queries - executed
    if not rest:
        return f"SPARQL queries: {queries} (all executed)"
    if cached:
        return f"SPARQL queries: {queries} ({executed} executed, {rest} from the result cache or repeats)"
    return f"SPARQL queries: {queries} ({executed} executed, {rest} repeats or refused; no result cache: --no-cache)"


def _print_result(res, n: int, fmt: str, cached: bool = True) -> None:
    """The summary (a table, or JSON on stdout), the files written, and exit status 1 when no
    graph query could be generated (a warning when fewer than ``n``)."""
    if fmt == "json":
        sys.stdout.write(json.dumps({**res.summary, "written": res.written, "queries": res.queries,
                                     "queries_executed": res.queries_executed}, indent=2) + "\n")
    else:
        render_summary(res.summary, out)
        err.print(queries_line(res.queries, res.queries_executed, cached), highlight=False)
        for w in res.written:
            err.print(f"wrote {w}", highlight=False)
    opaque = res.summary.get("opaque_relations") or []
    if opaque and fmt == "table":
        err.print(f"[yellow]warning:[/] {len(opaque)} relation(s) have no words (no label, an opaque name) and were "
                  f"not used: {', '.join(opaque[:5])}{' ...' if len(opaque) > 5 else ''}; give them with "
                  "--lexicon FILE.yaml (IRI: phrase)", highlight=False)
    if res.summary["graph_queries"] == 0:
        raise Failure("no graph query could be generated (see 'rejected': no-template means the schema offers no "
                      "template of the requested edges/functions; empty/no-grounding that no grounding has an answer)")
    if res.summary["graph_queries"] < n:
        err.print(f"[yellow]warning:[/] only {res.summary['graph_queries']} of {n} graph queries could be "
                  "generated within the attempt budget (see 'rejected')", highlight=False)


def paraphrases_cmd(
    dataset: Path = typer.Argument(..., help="A dataset written by kgqa generate."),
    paraphrases: Path = typer.Argument(..., help="Annotated file (.csv, .tsv, .jsonl): graph_query + paraphrases (or question)."),
    output: Annotated[Path, option("--output", help="Dataset to write (.json or .jsonl).")] = ...,
) -> None:
    """Import sentence-level paraphrases into a generated dataset, keeping paraphrase groups."""
    from kgqa.make.generate import add_paraphrases

    _new, added, problems = add_paraphrases(dataset, paraphrases, output)
    for p in problems:
        err.print(f"[yellow]skipped:[/] {p}", highlight=False)
    err.print(f"added {added} questions; wrote {output}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("generate")(generate_cmd)
    app.command("paraphrases")(paraphrases_cmd)
