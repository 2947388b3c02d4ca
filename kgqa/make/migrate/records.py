"""SimpleQuestions-style inputs: one fact ``subject predicate object`` per question.

Read from

- SimpleQuestions text files (``annotated_fb_data_*.txt``): tab-separated
  ``subject<TAB>predicate<TAB>object<TAB>question``; Freebase cells such as
  ``www.freebase.com/m/04whkz5`` and ``www.freebase.com/music/artist/track`` become the IRIs of
  Freebase's RDF dump and of DBpedia's Freebase links (``http://rdf.freebase.com/ns/m.04whkz5``,
  ``http://rdf.freebase.com/ns/music.artist.track``); absolute IRIs (optionally in ``<>``) are
  kept as they are;
- JSONL: ``{"id", "question", "subject", "predicate", "object"}`` per line.

Each record becomes an :class:`~kgqa.model.Item` with ``metadata["triple"] = {"subject",
"predicate", "object"}``; the id is the JSONL ``id`` or the 1-based line number.
"""

from __future__ import annotations

import json
from pathlib import Path

from kgqa.load.jsonio import read_text
from kgqa.model import Dataset, InputError, Item, Problem
from kgqa.model.terms import FREEBASE_NS, looks_like_iri

FREEBASE_WEB = "www.freebase.com/"


def to_iri(cell: str) -> str:
    """A record cell as an IRI; raises ValueError for anything else."""
    c = cell.strip()
    if c.startswith("<") and c.endswith(">"):
        c = c[1:-1]
    for pre in ("http://" + FREEBASE_WEB, "https://" + FREEBASE_WEB, FREEBASE_WEB):
        if c.startswith(pre):
            return FREEBASE_NS + c[len(pre):].strip("/").replace("/", ".")
    if looks_like_iri(c):
        return c
    raise ValueError(f"expected an IRI or a www.freebase.com/ path, got {cell!r}")


def is_triple_file(path: Path) -> bool:
    """True for a file that looks like triple records (by extension and first line)."""
    try:
        with open(path, encoding="utf-8") as fh:
            first = fh.readline()
    except (OSError, UnicodeDecodeError):
        return False
    if path.suffix.lower() in (".txt", ".tsv"):
        return len(first.rstrip("\n").split("\t")) >= 3
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        try:
            rec = json.loads(first)
        except ValueError:
            return False
        return isinstance(rec, dict) and {"subject", "predicate", "object"} <= rec.keys()
    return False


def read_triples(path: str | Path) -> Dataset:
    """Triple records from ``path`` (see the module docstring). Broken records are skipped and
    listed in ``problems`` (file, line, what was expected)."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such file")
    items: list[Item] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            if jsonl:
                rec = json.loads(line)
                if not isinstance(rec, dict):
                    raise ValueError("expected a JSON object")
                qid = str(rec.get("id", n))
                cells = [rec.get("subject"), rec.get("predicate"), rec.get("object")]
                if not all(isinstance(c, str) for c in cells):
                    raise ValueError("'subject', 'predicate' and 'object' must be strings")
                question = rec.get("question") or ""
            else:
                parts = line.split("\t")
                if len(parts) < 3:
                    raise ValueError(f"expected subject, predicate, object, question separated by tabs, got {len(parts)} column(s)")
                qid, cells, question = str(n), parts[:3], (parts[3].strip() if len(parts) > 3 else "")
            s, p, o = (to_iri(c) for c in cells)
        except ValueError as e:
            problems.append(Problem(str(path), f"line {n}", str(e)))
            continue
        if qid in seen:
            problems.append(Problem(str(path), f"line {n}", f"duplicate id {qid!r} (skipped)"))
            continue
        seen.add(qid)
        items.append(Item(qid, {"en": question} if question else {},
                          metadata={"triple": {"subject": s, "predicate": p, "object": o}}))
    if not items and problems:
        raise InputError(path, f"no valid record; first problem: {problems[0].message}")
    return Dataset(path.stem, items, "triples", [path], problems)
