"""``kgqa split``, ``kgqa levels`` and ``kgqa annotate``: building benchmark variants
(generalization splits, generalization levels, annotated questions). See :mod:`kgqa.make`."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from kgqa.cli._output import Console
from kgqa.cli.errors import Failure
from kgqa.cli.options import InputFormatOption, option

out = Console()
err = Console(stderr=True)


class SplitKind(str, Enum):
    iid = "iid"
    template = "template"
    uri = "uri"


class TemplateSource(str, Enum):
    auto = "auto"
    dataset = "dataset"
    structure = "structure"


class Mode(str, Enum):
    raw = "raw"
    tagged = "tagged"
    tag_end = "tag-end"


class Require(str, Enum):
    all = "all"
    any = "any"


# --------------------------------------------------------------------------- split


def split_cmd(
    datasets: list[str] = typer.Argument(..., help="Registered dataset name(s) or file(s); several are concatenated (e.g. qald-9-train qald-9-test)."),
    by: Annotated[SplitKind, option("--by", help="iid: random; template: unseen global templates in test; uri: unseen URIs in test.")] = ...,
    output: Annotated[Path, option("--output", help="Directory for train/validation/test files and split.json.")] = ...,
    ratios: str = typer.Option("0.8,0.1,0.1", "--ratios", help="train,validation,test shares (or train,test)."),
    rare_below: int = typer.Option(5, "--rare-below", min=1, help="uri: a URI is rare if it occurs in fewer than this many items."),
    tries: int = typer.Option(100, "--tries", min=1, help="Assignments tried; the one closest to the train share is kept."),
    seed: Annotated[int, option("--seed", min=0, help="Random seed (same seed, same files).")] = 0,
    template_source: TemplateSource = typer.Option(TemplateSource.auto, "--template-source", help="template: the dataset's template id (dataset), the query structure (structure), or the id when present (auto)."),
    format: InputFormatOption = None,
) -> None:
    """Split a dataset into train/validation/test with unseen URIs or templates in test.

    Every validation/test item gets a URI (or template) that no training item has (Reyd & Zouaq
    2023); the property is verified on the written files, and split.json records sizes, delta,
    groups, unseen URIs/templates per part, the seed and warnings."""
    from kgqa.make.splits import write_split

    report = write_split(datasets, by.value, output, ratios, rare_below, tries, seed, template_source.value, format)
    verified = report["verified_on_files"]
    files = report["files"]
    what = {"uri": "URI", "template": "template", "iid": "item"}[by.value]
    sz = report["sizes"]
    out.print(f"[bold]{by.value} split[/] of {report['dataset']} ({report['items']} items, seed {seed}): "
              f"train {sz['train']}, validation {sz['validation']}, test {sz['test']}", highlight=False)
    out.print(f"target train N = {report['target_train']}, delta = {report['delta']:.6f} (try {report['best_try']}), "
              f"groups {report['groups']}, reserved for train {report['reserved']}"
              + (f", rare URIs {report['rare']} of {report['characteristics']}" if by.value == "uri" else ""),
              highlight=False)
    for n in ("validation", "test"):
        u = report["unseen"][n]
        ok = report["gp"][n] and verified[n]
        out.print(f"gp(train ∪ {n}, {n}): {'holds' if ok else '[bold red]VIOLATED[/]'} — {u['items']}/{u['of_items']} "
                  f"items have a {what} unseen in train; unseen URIs {report['uris'][n]['unseen']}/{report['uris'][n]['distinct']}, "
                  f"unseen templates {report['templates'][n]['unseen']}/{report['templates'][n]['distinct']}",
                  highlight=False)
    for w in report["warnings"]:
        out.print(f"[yellow]warning:[/] {w}", highlight=False)
    out.print(f"wrote {', '.join(files.values())} ({report['format']}) and split.json to {output}", highlight=False)
    if not all(verified.values()):
        raise Failure("the written files do not keep the generalization property")


# --------------------------------------------------------------------------- levels


def levels_cmd(
    train: str = typer.Argument(..., help="Training dataset (registered name or file)."),
    test: str = typer.Argument(..., help="Test dataset (registered name or file)."),
    entities: bool = typer.Option(False, "--entities", help="Count entity IRIs as schema items too."),
    structure: bool = typer.Option(True, "--structure/--no-structure", help="Logical form = schema items + query structure (default) or schema items only."),
    output: Annotated[Optional[Path], option("--output", help="Write the test set with metadata.generalization_level (test's format if writable, else JSONL).")] = None,
    format: InputFormatOption = None,
) -> None:
    """Generalization level (i.i.d. / compositional / zero-shot) of each test item.

    Levels follow Gu et al. 2021 over schema items (predicates and classes) and the query
    structure; see kgqa.make.levels for the exact definitions."""
    from kgqa.make.levels import METADATA_KEY, level_datasets

    report = level_datasets(train, test, include_entities=entities, structure=structure, format=format)
    te = report.test
    table = Table(title=f"generalization levels of {te.name} against {report.train.name}")
    table.add_column("level")
    table.add_column("items", justify="right")
    table.add_column("share", justify="right")
    for lv, n in report.counts.items():
        table.add_row(lv, str(n), f"{n / len(te):.1%}" if len(te) else "-")
    out.print(table)
    if output is not None:
        written = report.write(output)
        out.print(f"wrote {output} ({written}) with metadata.{METADATA_KEY}", highlight=False)


# --------------------------------------------------------------------------- annotate


def annotate_cmd(
    dataset: str = typer.Argument(..., help="Registered dataset name or file."),
    output: Annotated[Path, option("--output", help="JSONL dataset of the annotated questions; a <output>.report.json lists the others.")] = ...,
    mode: Mode = typer.Option(Mode.tagged, "--mode", help="raw, tagged (mentions replaced by KB elements) or tag-end (elements and mentions after <sep>)."),
    kg: Annotated[Optional[str], option("--kg", help="KG for labels: RDF file(s), a store directory or an endpoint (without it: template placeholders and literals only).")] = None,
    lang: Annotated[str, option("--lang", help="Question language (and label language).")] = "en",
    min_score: float = typer.Option(85.0, "--min-score", min=0, max=100, help="Least rapidfuzz ratio (0-100) between a label and its mention."),
    require: Require = typer.Option(Require.all, "--require", help="all: annotate an item only if every KB element is found; any: if at least one is (missing ones listed)."),
    prefix: list[str] = typer.Option([], "--prefix", help="Extra prefix for writing IRIs, PFX=NAMESPACE (repeatable)."),
    timeout: Annotated[float, option("--timeout", help="Seconds per label query.")] = 60.0,
    format: InputFormatOption = None,
    ontology: Annotated[list[Path], option("--ontology", help="RDF file(s) whose labels help align LC-QuAD intermediary questions (repeatable; no KG needed).")] = [],
    unannotated: str = typer.Option("raw", "--unannotated", help="An item that cannot be annotated: raw (written in its raw form, metadata.not_annotated says why) or drop (left out); listed either way."),
) -> None:
    """Annotate questions with their KB elements (raw / tagged / tag-end) for seq2seq training.

    Reyd & Zouaq 2023, Sect. 3.1: mentions come from template placeholders when the items have
    templates, else from LC-QuAD's marked intermediary question when there is one, else from KB labels fuzzy-matched in the question. Items whose mentions cannot be
    found are listed, never guessed."""
    from kgqa.make.annotate import annotate_to_file, parse_prefixes

    report = annotate_to_file(dataset, output, mode.value, kg, lang, min_score, require.value,
                              parse_prefixes(prefix), timeout, format, ontology, unannotated)
    if report["report_path"] is None:
        out.print(f"wrote {report['items']} raw questions to {output}", highlight=False)
        return
    out.print(f"annotated {report['annotated']}/{report['items']} questions ({mode.value}, require {require.value}) "
              f"-> {output}", highlight=False)
    skipped = report["not_annotated"]
    if skipped:
        kept = "written in their raw form" if report["fallback_raw"] else "left out (--unannotated drop)"
        out.print(f"{len(skipped)} not annotated, {kept} (listed in {report['report_path'].name}):", highlight=False)
        for s in skipped:
            out.print(f"  {s['id']}: {s['reason']}", highlight=False)


def register(app: typer.Typer) -> None:
    if getattr(app, "_kgqa_build_registered", False):
        return
    app._kgqa_build_registered = True  # type: ignore[attr-defined]
    app.command("split")(split_cmd)
    app.command("levels")(levels_cmd)
    app.command("annotate")(annotate_cmd)
