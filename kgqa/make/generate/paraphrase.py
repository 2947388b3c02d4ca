"""Sentence-level paraphrases (Su et al. 2016, Sec. 6): export for annotators, import of what
they (or any external generator) wrote, and a hook for a user's own model.

- :func:`write_annotation`: one row per graph query (``.csv`` or ``.jsonl``): ``graph_query``
  (the paraphrase group), ``template``, ``sparql``, ``canonical_question``, ``slots`` (JSON:
  topic entity IRI -> label), ``graph_query_json``, ``answers`` (JSON list of values) and an
  empty ``paraphrases`` column for the annotator (several paraphrases separated by `` || ``
  in CSV; a list in JSONL);
- :func:`import_paraphrases`: reads such a file back (or any file with ``graph_query`` and
  ``paraphrases`` / ``question`` columns) and adds each paraphrase as a new item of that graph
  query's group (next free sentence number), plus entity-level variants from the stored
  alternative labels. Unknown graph queries and empty cells are reported, not guessed;
- ``--paraphraser module:function`` (a user's own model) is :mod:`kgqa.make.generate.paraphraser`.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from kgqa.load.jsonio import write_atomic
from kgqa.model.item import Dataset, Item
from kgqa.model.problems import InputError, Problem
from kgqa.load import load_dataset
from kgqa.make.generate.language import entity_variants
from kgqa.make.generate.output import QID_GROUP, write_dataset
from kgqa.model.answer import TableAnswer

SEPARATOR = " || "
COLUMNS = ("graph_query", "template", "sparql", "canonical_question", "slots", "graph_query_json",
           "answers", "paraphrases")


def _canonical_items(ds: Dataset) -> list[Item]:
    return [it for it in ds.items if it.metadata.get("paraphrase_source") == "canonical"]


def annotation_rows(ds: Dataset) -> list[dict[str, Any]]:
    rows = []
    for it in _canonical_items(ds):
        vals = []
        if isinstance(it.answer, TableAnswer):
            vals = [c.value if hasattr(c, "value") else str(c) for r in it.answer.rows for c in r if c is not None]
        rows.append({"graph_query": it.groups.get("paraphrase"), "template": it.groups.get("template"),
                     "sparql": it.sparql, "canonical_question": it.question(),
                     "slots": it.metadata.get("slots", {}), "graph_query_json": it.metadata.get("graph_query"),
                     "answers": vals, "paraphrases": []})
    return rows


def write_annotation(ds: Dataset, path: str | Path) -> int:
    """Write the annotation export (``.csv`` or ``.jsonl``); returns the number of rows."""
    p = Path(path)
    rows = annotation_rows(ds)
    if p.suffix.lower() == ".jsonl":
        write_atomic(p, (json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in rows))
    elif p.suffix.lower() == ".csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({**r, "slots": json.dumps(r["slots"], ensure_ascii=False),
                        "graph_query_json": json.dumps(r["graph_query_json"], ensure_ascii=False),
                        "answers": json.dumps(r["answers"], ensure_ascii=False), "paraphrases": ""})
        write_atomic(p, (buf.getvalue(),))
    else:
        raise InputError(str(p), "annotation file must end in .csv or .jsonl")
    return len(rows)


def _read_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(str(path), f"cannot read: {e}") from e
    out = []
    if path.suffix.lower() == ".jsonl":
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(str(path), f"line {i}: not JSON ({e.msg})") from None
            if not isinstance(rec, dict):
                raise InputError(str(path), f"line {i}: expected an object")
            out.append((f"line {i}", rec))
    elif path.suffix.lower() in (".csv", ".tsv"):
        reader = csv.DictReader(io.StringIO(text), delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
        for i, rec in enumerate(reader, 2):
            out.append((f"line {i}", rec))
    else:
        raise InputError(str(path), "paraphrase file must end in .csv, .tsv or .jsonl")
    return out


def _paraphrases_of(rec: dict[str, Any]) -> list[str]:
    val = rec.get("paraphrases")
    if val is None:
        val = rec.get("question")
    if isinstance(val, list):
        return [str(v).strip() for v in val if str(v).strip()]
    if isinstance(val, str):
        return [v.strip() for v in val.split(SEPARATOR.strip()) if v.strip()]
    return []


def import_paraphrases(ds: Dataset, path: str | Path, entity_limit: int = 3) -> tuple[Dataset, list[Problem]]:
    """The dataset with the file's sentence paraphrases added to their graph queries' groups."""

    p = Path(path)
    canon = {it.groups.get("paraphrase"): it for it in _canonical_items(ds)}
    if not canon:
        raise InputError(str(ds.source[0]) if ds.source else ds.name,
                         "no canonical questions (paraphrase_source=canonical): not a kgqa-generated dataset")
    used: dict[str, int] = {}
    existing: dict[str, set[str]] = {}
    for it in ds.items:
        g = it.groups.get("paraphrase")
        used[g] = max(used.get(g, 0), int(it.metadata.get("sentence_paraphrase", 0)))
        existing.setdefault(g, set()).add(it.question() or "")
    problems: list[Problem] = []
    added: list[Item] = []
    for where, rec in _read_rows(p):
        g = str(rec.get("graph_query", "")).strip()
        if g not in canon:
            problems.append(Problem(str(p), where, f"unknown graph_query {g!r}"))
            continue
        paras = _paraphrases_of(rec)
        if not paras:
            continue
        base = canon[g]
        for text in paras:
            if text in existing[g]:
                continue
            existing[g].add(text)
            used[g] += 1
            s = used[g]
            gi = int(g)

            def mk(q: str, e: int, source: str) -> Item:
                md = {**base.metadata, "sentence_paraphrase": s, "entity_paraphrase": e, "paraphrase_source": source}
                return replace(base, id=str(gi * QID_GROUP + s * 100 + e), questions={base_lang(base): q}, metadata=md)

            added.append(mk(text, 0, "import"))
            slots = base.metadata.get("slots", {})
            alts = base.metadata.get("alternatives", {})
            for e, v in enumerate(entity_variants(text, slots, alts, entity_limit), 1):
                added.append(mk(v, e, "import+entity"))
    order = {g: i for i, g in enumerate(canon)}
    items = sorted([*ds.items, *added], key=lambda it: (order.get(it.groups.get("paraphrase"), 1 << 30), int(it.id)))
    return Dataset(ds.name, items, ds.format, ds.source, ds.problems + problems, ds.metadata), problems


def base_lang(it: Item) -> str:
    return next(iter(it.questions), "en")


def add_paraphrases(dataset: str | Path, paraphrases: str | Path, output: str | Path,
                    entity_limit: int = 3) -> tuple[Dataset, int, list[Problem]]:
    """Load a generated dataset, import the file's sentence paraphrases, write the result
    (``.json`` QALD JSON or ``.jsonl``). Returns (new dataset, questions added, problems)."""

    ds = load_dataset(str(dataset))
    new, problems = import_paraphrases(ds, paraphrases, entity_limit)
    write_dataset(new, output)
    return new, len(new) - len(ds), problems
