"""One call from files to a written migration (what ``kgqa migrate`` does)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kgqa.load import load_dataset
from kgqa.make.migrate.kg import KG
from kgqa.make.migrate.links import Links
from kgqa.make.migrate.output import (unverified_path, write_dataset, write_proposed_rules, write_records,
                                      write_report, write_unverified, written_count)
from kgqa.make.migrate.pipeline import Migration, MigrateOptions, migrate
from kgqa.make.migrate.records import is_triple_file, read_triples
from kgqa.make.migrate.rules import load_rules
from kgqa.model import InputError


@dataclass
class Written:
    migration: Migration
    files: dict[str, str] = field(default_factory=dict)  # role -> path
    dataset_format: str = ""
    written: int = 0  # questions in the written dataset file, read back (= migrated items)
    unverified: int = 0  # items in the unverified file, read back (0 and no file when none)


def migrate_files(dataset: str, target_kg: str | Sequence[str], links: Sequence[str], out: str | Path, *,
                  source_kg: str | Sequence[str] | None = None, rules: str | None = None,
                  propose_rules: str | None = None, records: str | None = None, report: str | None = None,
                  output_format: str = "auto", dataset_format: str | None = None, target_graph: str | None = None,
                  source_graph: str | None = None, options: MigrateOptions | None = None, timeout: float = 30.0,
                  cache: bool = True) -> Written:
    """Load the dataset (a registry name, a kgqa-readable file, or SimpleQuestions-style
    records), open the KGs, load links and rules, migrate, and write: the dataset to ``out``,
    the per-item record (``records``, default ``OUT.records.jsonl``), the report with the
    statistics (``report``, default ``OUT.report.json``) and, when asked, the proposed rules."""
    if not links:
        raise InputError("--links", "give at least one links file (owl:sameAs RDF or TSV), or 'target' "
                                    "for links stored in the target KG")
    p = Path(dataset)
    if p.exists() and dataset_format in (None, "triples") and (dataset_format == "triples" or is_triple_file(p)):
        ds = read_triples(p)
        wanted = {v for it in ds.items for k, v in it.metadata["triple"].items() if k != "predicate"}
    else:
        ds = load_dataset(dataset, dataset_format)
        wanted = None
    if not ds.items:
        raise InputError(dataset, "the dataset has no items")
    if options is not None and options.label_fallback and not source_kg:
        raise InputError("--label-fallback", "label-based linking needs --source-kg (the labels of the source entities)")
    ruleset = load_rules(rules) if rules else None
    linkset = Links.load(links, wanted, (options or MigrateOptions()).link_predicates)
    opts = options or MigrateOptions()
    target = KG(target_kg, graph=target_graph, cache=cache, timeout=timeout, progress=opts.progress)
    source = KG(source_kg, graph=source_graph, cache=cache, timeout=timeout, progress=opts.progress) if source_kg else None
    try:
        m = migrate(ds, target, linkset, source=source, rules=ruleset, options=opts)
    finally:
        target.close()
        if source is not None:
            source.close()
    out = Path(out)
    w = Written(m)
    w.dataset_format = write_dataset(m, out, output_format)
    w.files["dataset"] = str(out)
    w.written = written_count(out, w.dataset_format)
    if w.written != len(m.dataset):
        raise InputError(str(out), f"holds {w.written} questions but {len(m.dataset)} items were migrated: "
                                   f"the {w.dataset_format} writer lost {len(m.dataset) - w.written}")
    unv = unverified_path(out)
    if m.unverified:
        write_unverified(m, unv)
        w.files["unverified"] = str(unv)
        w.unverified = len(json.loads(unv.read_text(encoding="utf-8"))["items"])
    elif unv.exists():
        unv.unlink()  # a stale file of an earlier run would contradict this one
    rec = Path(records) if records else out.with_name(out.name + ".records.jsonl")
    write_records(m, rec)
    w.files["records"] = str(rec)
    rep = Path(report) if report else out.with_name(out.name + ".report.json")
    write_report(m, rep)
    w.files["report"] = str(rep)
    if propose_rules:
        write_proposed_rules(m, propose_rules)
        w.files["proposed rules"] = str(propose_rules)
    return w
