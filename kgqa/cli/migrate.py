"""``kgqa migrate``: move a QA dataset from one KG to another (see :mod:`kgqa.make.migrate`)."""

from __future__ import annotations

import re
from typing import Annotated, List, Optional

import typer
from rich.table import Table as RichTable

from kgqa.model import InputError
from kgqa.cli._output import Console
from kgqa.cli.options import option

out = Console()
err = Console(stderr=True)

# The defaults of kgqa.make.migrate.paths (DEFAULT_DISAMBIGUATION, DEFAULT_REDIRECT), written out so that
# the help does not import the migration pipeline (tests/test_lazy_imports.py checks they agree).
DBO = "http://dbpedia.org/ontology/"
HELP_DEFAULT_DISAMBIGUATION = DBO + "wikiPageDisambiguates"
HELP_DEFAULT_REDIRECT = DBO + "wikiPageRedirects"


def migrate_cmd(
    dataset: str = typer.Argument(..., help="dataset: registry name, file kgqa loads, or SimpleQuestions-style "
                                            "records (.txt/.tsv: subject predicate object question; .jsonl)"),
    target_kg: List[str] = typer.Option(..., "--target-kg", help="target KG: RDF file(s), store dir or endpoint URL"),
    links: Annotated[List[str], option("--links", help="owl:sameAs RDF file (either direction), TSV/CSV of "
                                                         "source,target, or 'target' (links in the target KG); repeatable")] = ...,
    output: Annotated[str, option("--output", help="migrated dataset file")] = ...,
    source_kg: Optional[List[str]] = typer.Option(None, "--source-kg", help="source KG (re-derives answers; "
                                                                            "predicate evidence for SPARQL datasets)"),
    rules: Optional[str] = typer.Option(None, "--rules", help="rules YAML (refinement, the paper's Table 3)"),
    propose_rules: Optional[str] = typer.Option(None, "--propose-rules", help="write proposed rules YAML here"),
    records: Optional[str] = typer.Option(None, "--records", help="per-item record JSONL (default OUT.records.jsonl)"),
    report: Optional[str] = typer.Option(None, "--report", help="report JSON (default OUT.report.json)"),
    output_format: Annotated[str, option("--format", help="auto | qald | simpledbpediaqa | same")] = "auto",
    dataset_format: Annotated[Optional[str], option("--dataset-format", help="force the input format ('triples' for records)")] = None,
    target_graph: Optional[str] = typer.Option(None, "--target-graph", help="named graph of the target KG to "
                                                                           "query (default: the default graph)"),
    source_graph: Optional[str] = typer.Option(None, "--source-graph", help="named graph of the source KG to "
                                                                           "query (default: the default graph)"),
    disambiguation: Optional[List[str]] = typer.Option(None, "--disambiguation-predicate",
                                                       help=f"default {HELP_DEFAULT_DISAMBIGUATION}"),
    redirect: Optional[List[str]] = typer.Option(None, "--redirect-predicate", help=f"default {HELP_DEFAULT_REDIRECT}"),
    link_predicate: Optional[List[str]] = typer.Option(None, "--link-predicate", help="default owl:sameAs"),
    label_fallback: bool = typer.Option(False, "--label-fallback", help="map unlinked entities by equal labels (marked 'label')"),
    no_two_hop: bool = typer.Option(False, "--no-two-hop", help="enumerate one-hop paths only"),
    sample: int = typer.Option(20, "--sample", help="source triples sampled per predicate (SPARQL datasets)"),
    min_support: int = typer.Option(5, "--min-support", min=1, help="evidence pairs a predicate mapping needs "
                                                                     "(three quarters of them when fewer were found)"),
    min_share: float = typer.Option(0.5, "--min-share", min=0.0, max=1.0,
                                    help="share of the mapped evidence pairs a predicate mapping needs"),
    constraints: str = typer.Option("both", "--propose-constraints",
                                    help="type constraints in proposed rules: both | object | none"),
    min_precision: float = typer.Option(0.9, "--min-precision", min=0.0, max=1.0,
                                        help="precision on the sampled facts a predicate mapping needs, with its "
                                             "best separating constraint; below it the predicate is unmapped"),
    keep_unverified: bool = typer.Option(False, "--keep-unverified",
                                         help="write items whose target answers differ from the source's into "
                                              "the dataset too, flagged verified: false (default: OUT.unverified.json)"),
    seed: Annotated[int, option("--seed", help="seed of the evidence samples")] = 0,
    timeout: Annotated[float, option("--timeout", help="seconds per query")] = 30.0,
    no_cache: Annotated[bool, option("--no-cache", help="do not use the result cache (no resume)")] = False,
    quiet: Annotated[bool, option("--quiet", help="no progress bars")] = False,
) -> None:
    """Migrate a QA dataset to another KG (Azmy et al. 2018): entity mapping through links, predicate
    mapping by path enumeration (one-hop forward/backward; two-hop disambiguation, redirection,
    complex), rules, query rewriting, and answer agreement on the target."""
    from kgqa.make.migrate import MigrateOptions, migrate_files

    opts = MigrateOptions.parse(disambiguation=disambiguation, redirect=redirect, link_predicates=link_predicate,
                                seed=seed, sample=sample, min_support=min_support, min_share=min_share,
                                label_fallback=label_fallback, two_hop=not no_two_hop, progress=not quiet,
                                constraints=constraints, min_precision=min_precision,
                                keep_unverified=keep_unverified)
    if constraints not in ("both", "object", "none"):
        raise InputError("--propose-constraints", f"expected both, object or none, got {constraints!r}")
    w = migrate_files(dataset, target_kg if len(target_kg) > 1 else target_kg[0], links, output,
                      source_kg=(source_kg if len(source_kg) > 1 else source_kg[0]) if source_kg else None,
                      rules=rules, propose_rules=propose_rules, records=records, report=report,
                      output_format=output_format, dataset_format=dataset_format, target_graph=target_graph,
                      source_graph=source_graph, options=opts, timeout=timeout, cache=not no_cache)
    render(w)


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate_cmd)


KNOWN = {"http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf", "http://www.w3.org/2000/01/rdf-schema#": "rdfs",
         "http://www.w3.org/2002/07/owl#": "owl", "http://www.w3.org/2001/XMLSchema#": "xsd",
         "http://dbpedia.org/ontology/": "dbo", "http://dbpedia.org/resource/": "dbr",
         "http://www.w3.org/2004/02/skos/core#": "skos"}
_IRI = re.compile(r"<?(https?://[^\s<>\"'|]+?)>?(?=[\s)\]|;:,]|$)")


class Prefixes:
    """Short names for the IRIs of a migration's output (``ns:local``), each namespace (up to
    the last ``/`` or ``#``) named after its last path segment, or its usual prefix."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _name(self, ns: str) -> str:
        if ns not in self.names:
            base = KNOWN.get(ns) or re.sub(r"[^a-z0-9]", "", ns.rstrip("/#").rsplit("/", 1)[-1].lower())[:10] or "ns"
            name, k = base, 1
            while name in self.names.values():
                k += 1
                name = f"{base}{k}"
            self.names[ns] = name
        return self.names[ns]

    def short(self, text: str) -> str:
        """``text`` with every IRI (with or without ``<>``) written ``prefix:local``."""
        def sub(m: re.Match) -> str:
            iri = m.group(1)
            cut = max(iri.rfind("/", 0, len(iri) - 1), iri.rfind("#")) + 1
            if cut <= len("https://") or cut >= len(iri):
                return m.group(0)
            return f"{self._name(iri[:cut])}:{iri[cut:]}"

        return _IRI.sub(sub, text)


def headline(w) -> list[str]:
    """The counts, each one a file holds: migrated (exact) in the dataset, unverified by
    category (in the separate file, or flagged in the dataset), not migrated by category."""
    s = w.migration.summary()
    lines = [f"{s['migrated']} migrated (exact) of {s['items']} items; {w.written} written to the dataset"]
    unv = s["unverified"]
    if unv:
        where = "flagged in the dataset" if w.migration.keep_unverified else f"in {w.files.get('unverified')}"
        lines.append(f"{sum(unv.values())} unverified ({', '.join(f'{k} {v}' for k, v in unv.items())}), {where}")
    if s["not_migrated"]:
        lines.append(f"{sum(s['not_migrated'].values())} not migrated ("
                     + ", ".join(f"{k} {v}" for k, v in s["not_migrated"].items()) + ")")
    if s["rescaled"]:
        lines.append(f"rescaled (unit change): {', '.join(s['rescaled'])}")
    return lines


def _grouped(records: list[dict], pre: Prefixes) -> list[str]:
    """Items not migrated or unverified, grouped by reason: one line per reason with its ids."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in records:
        if r.get("output") == "main":
            continue
        what = "unverified" if r.get("kept") else "not migrated"
        why = pre.short(r.get("reason") or r.get("category") or "")
        groups.setdefault((what, why), []).append(r["id"])
    return [f"{what} ({len(ids)}): {', '.join(ids)}: {why}" for (what, why), ids in groups.items()]


def render(w) -> None:
    """The tables (IRIs shortened with the prefixes listed), the headline counts, the notes,
    the items not migrated or unverified grouped by reason, the files and the signature."""
    m = w.migration
    pre = Prefixes()
    for t in m.tables.tables:
        rt = RichTable(title=t.title, title_justify="left")
        for c in t.columns:
            rt.add_column(c, overflow="fold")
        for r in t.rows:
            rt.add_row(*(pre.short(str(x)) for x in r))
        out.print(rt)
    for line in headline(w):
        out.print(line, highlight=False)
    for note in m.notes:
        out.print(f"note: {pre.short(note)}", highlight=False)
    for line in _grouped(m.records, pre):
        out.print(line, highlight=False)
    for p in m.source.problems:
        err.print(f"skipped: {p}", highlight=False)
    for ns, n in pre.names.items():
        out.print(f"prefix {n}: <{ns}>", highlight=False)
    for role, path in w.files.items():
        out.print(f"{role}: {path}" + (f" ({w.dataset_format})" if role == "dataset" else ""), highlight=False)
    out.print("execution: " + "; ".join(f"{k} " + ", ".join(f"{a}={b}" for a, b in v.items())
                                        for k, v in m.execution.items()), highlight=False)
    out.print(m.signature, highlight=False)
