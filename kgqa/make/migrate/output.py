"""Writing a migration: the migrated dataset, the per-item record, the proposed rules and the
statistics. Every file is written atomically."""

from __future__ import annotations

import json
from pathlib import Path

from kgqa.load import formats, load_dataset
from kgqa.load.jsonio import write_atomic
from kgqa.load.qald_json import write as write_qald
from kgqa.make.migrate.pipeline import Migration
from kgqa.make.migrate.rules import write_rules
from kgqa.model import InputError, TableAnswer
from kgqa.make.migrate.paths import parse_path
from kgqa.model.answer import to_results_json

OUTPUT_FORMATS = ("auto", "qald", "simpledbpediaqa", "same")


def _predicate_entry(p: dict) -> dict:
    """One ``PredicateList`` entry; a path target (two hops, or an inverse step) keeps the
    SimpleDBpediaQA keys with the path's SPARQL text as ``Predicate`` and adds ``Path``: its
    steps, each with its own ``Predicate`` and ``Direction``."""

    text = p["Predicate"]
    if not text.startswith(("<", "^")):
        return dict(p)
    steps = parse_path(text)
    return {**p, "Path": [{"Predicate": iri, "Direction": "backward" if inv else "forward"} for iri, inv in steps]}


def simpledbpediaqa_json(m: Migration) -> dict:
    """The SimpleDBpediaQA file shape (castorini/SimpleDBpediaQA V1): one question per kept
    item, every kept item (a two-hop mapping's ``PredicateList`` entries carry the path's
    steps, see :func:`_predicate_entry`), so the file holds what the summary reports."""
    qs = []
    for it in m.dataset.items:
        preds = [_predicate_entry(p) for p in it.metadata.get("predicates") or []]
        src = it.metadata.get("source_triple", {})
        qs.append({"ID": it.id, "Query": it.question() or "", "Subject": it.metadata.get("subject"),
                   "FreebasePredicate": src.get("predicate"), "PredicateList": preds})
    return {"DatasetName": m.dataset.name, "Questions": qs}


def written_count(path: str | Path, fmt: str) -> int:
    """How many questions the written dataset file holds (read back with kgqa's loader, or the
    SimpleDBpediaQA JSON's ``Questions``)."""
    if fmt == "simpledbpediaqa":
        return len(json.loads(Path(path).read_text(encoding="utf-8"))["Questions"])

    return len(load_dataset(str(path), fmt))


def write_dataset(m: Migration, path: str | Path, fmt: str = "auto") -> str:
    """Write the migrated dataset; returns the format used. ``auto``: SimpleDBpediaQA JSON for
    triple records, else the input's format when kgqa can write it, else QALD JSON."""
    path = Path(path)
    if fmt not in OUTPUT_FORMATS:
        raise InputError(path, f"unknown output format {fmt!r} (one of {', '.join(OUTPUT_FORMATS)})")
    if fmt == "auto":
        fmt = "simpledbpediaqa" if m.mode == "triples" else "same"
    if fmt == "simpledbpediaqa":
        write_atomic(path, [json.dumps(simpledbpediaqa_json(m), ensure_ascii=False, indent=2), "\n"])
        return fmt
    if fmt == "same" and m.source.format:
        try:
            f = formats.get("dataset", m.source.format)
            if f.write is not None and f.name not in ("text2sparql",):
                f.write(m.dataset, path)
                return f.name
        except InputError:
            pass
    write_qald(m.dataset, path)
    return "qald-json"


def unverified_path(out: str | Path) -> Path:
    """Where the items kept with a difference go: ``OUT.unverified.json`` next to ``out``."""
    out = Path(out)
    return out.with_name(out.name + ".unverified.json")


def unverified_json(m: Migration) -> dict:
    """The items whose migrated query runs on the target but whose answers differ from (or
    could not be compared with) the mapped source answers: each with its category, the
    difference, the reason, the migrated query and the target's answers."""

    recs = {r["id"]: r for r in m.records}
    items = []
    for it in m.unverified:
        r = recs[it.id]
        items.append({"id": it.id, "question": it.question(), "category": r.get("category"),
                      "agreement": r.get("agreement"), **({"f1": r["f1"]} if "f1" in r else {}),
                      "reason": r.get("reason") or "", "query": it.sparql,
                      "source_query": it.metadata.get("source_sparql") or r.get("source_query"),
                      "target_answer": to_results_json(it.answer) if isinstance(it.answer, TableAnswer) else None})
    return {"dataset": m.dataset.name, "signature": m.signature,
            "note": "kept with a difference: the target's answers are not the mapped source answers; not "
                    "verified, not in the migrated dataset", "items": items}


def write_unverified(m: Migration, path: str | Path) -> None:
    write_atomic(Path(path), [json.dumps(unverified_json(m), ensure_ascii=False, indent=2), "\n"])


def write_records(m: Migration, path: str | Path) -> None:
    """One JSON object per source item (kept or not), as JSON lines."""
    write_atomic(Path(path), (json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in m.records))


def write_report(m: Migration, path: str | Path) -> None:
    """Signature, summary, statistics tables and predicate evidence as one JSON document."""
    doc = {"signature": m.signature, "summary": m.summary(), "notes": list(m.notes), "tables": m.tables.to_json(),
           "execution": m.execution, "predicates": [e.to_json() for e in m.evidence]}
    write_atomic(Path(path), [json.dumps(doc, ensure_ascii=False, indent=2), "\n"])


def write_proposed_rules(m: Migration, path: str | Path) -> None:
    write_rules(m.proposed, path, header=(
        "Predicate mapping rules proposed by kgqa migrate from path enumeration.\n"
        "support: how many evidence pairs the target connects; alternatives: other candidates.\n"
        "Review, edit (targets are alternatives; direction; constraint, constraint_on) and pass\n"
        "back with --rules.\n" + m.signature))
