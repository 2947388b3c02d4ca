"""Gold SPARQL queries of the shared benchmark data, for the analyzer's tests and benchmark.

Not a loader (that is kgqa.load's job): it only pulls the query strings out of the files:
QALD-9 train+test and QALD-10 (``questions[].query.sparql``), DB25 and CK25 (YAML
``questions[].query.sparql``) and RuBQ 1.0 dev+test (``[].query``).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import yaml


def gold_queries(data: Path) -> list[tuple[str, str]]:
    """``(source id, query text)`` for every gold query found (files that are absent are
    skipped): read once per process (six test modules ask), a fresh list each call."""
    return list(_read(Path(data)))


@functools.lru_cache(maxsize=None)
def _read(data: Path) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for rel in ("qald-9/qald-9-train-multilingual.json", "qald-9/qald-9-test-multilingual.json",
                "qald-10/qald_10.json"):
        f = data / rel
        if not f.is_file():
            continue
        for q in json.loads(f.read_text(encoding="utf-8"))["questions"]:
            s = (q.get("query") or {}).get("sparql")
            if s:
                out.append((f"{rel}#{q.get('id')}", s))
    for rel in ("db25/questions_db25.yaml", "ck25/questions.yml"):
        f = data / rel
        if not f.is_file():
            continue
        for q in yaml.safe_load(f.read_text(encoding="utf-8"))["questions"]:
            s = (q.get("query") or {}).get("sparql")
            if s:
                out.append((f"{rel}#{q.get('id')}", s))
    for f in sorted((data / "rubq-1.0").glob("*.json")):
        for q in json.loads(f.read_text(encoding="utf-8")):
            s = q.get("query")
            if s:
                out.append((f"rubq-1.0/{f.name}#{q.get('uid')}", s))
    return tuple(out)
