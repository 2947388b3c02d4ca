"""Writing what a live system answered, and the one call behind ``kgqa system ask``.

Formats (:func:`write_result`), chosen by ``fmt`` or else by the output's suffix (``.jsonl``)
or else by the protocol:

- ``jsonl``: kgqa's JSONL run (:mod:`kgqa.load.generic`), lossless: a failed question keeps
  its outcome as ``status`` (``http_error``, ``timeout``, ``malformed_response``, ``refused``)
  and ``message``, and ``metadata.system`` holds the raw response, HTTP status, attempts,
  language and question. Reading it back and scoring it gives the same numbers as scoring the
  run in memory.
- ``qald`` (default for ``gerbil``): QALD JSON as GERBIL accepts uploads, one entry per
  question with ``query.sparql`` and ``answers`` as the system sent them, plus a ``kgqa``
  object per entry (outcome, HTTP status, elapsed, attempts, message, raw response). A failed
  question has no query and no answers; kgqa's QALD reader takes its failure from the ``kgqa``
  object (other tools see an unanswered question).
- ``text2sparql`` (default for ``text2sparql``): the ``*_answers.json`` list the
  text2sparql-client ``ask`` command writes (``dataset, question, query, endpoint, qname,
  uri``), plus the same ``kgqa`` object; a failed question has ``"query": null`` (kgqa's
  reader takes its failure from the ``kgqa`` object).

Files are written atomically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kgqa.execute.live.client import AskResult, AskSettings, ask
from kgqa.load.jsonio import write_atomic
from kgqa.model import InputError
from kgqa.load import load_dataset
from kgqa.load.generic import write

FORMATS = ("jsonl", "qald", "text2sparql")


def output_format(path: Path, protocol: str, fmt: str | None = None) -> str:
    if fmt:
        if fmt not in FORMATS:
            raise InputError("--format", f"unknown run format {fmt!r}; expected one of: {', '.join(FORMATS)}")
        return fmt
    if Path(path).suffix.lower() == ".jsonl":
        return "jsonl"
    return "qald" if protocol == "gerbil" else "text2sparql"


def _kgqa_block(rec: dict[str, Any]) -> dict[str, Any]:
    out = {k: rec[k] for k in ("outcome", "http_status", "elapsed", "attempts", "message", "warnings", "raw")
           if rec.get(k) not in (None, "", [])}
    out.setdefault("outcome", rec.get("outcome"))
    return out


def _qald(result: AskResult) -> dict[str, Any]:
    questions = []
    for rec in result.records:
        entry: dict[str, Any] = {"id": rec["id"], "question": [{"language": rec["lang"], "string": rec["question"]}]}
        if rec["outcome"] == "ok":
            if rec.get("sparql") is not None:
                entry["query"] = {"sparql": rec["sparql"]}
            if rec.get("answer") is not None:
                entry["answers"] = [rec["answer"]]
        entry["kgqa"] = _kgqa_block(rec)
        questions.append(entry)
    return {"dataset": {"id": result.run.name, "system": result.url, "protocol": result.protocol},
            "questions": questions}


def _text2sparql(result: AskResult) -> list[dict[str, Any]]:
    out = []
    for rec in result.records:
        local = rec["id"].split(":", 1)[1] if ":" in rec["id"] else rec["id"]
        out.append({
            "dataset": result.dataset_iri,
            "question": rec["question"],
            "query": rec.get("sparql") if rec["outcome"] == "ok" else None,
            "endpoint": result.url,
            "qname": rec["id"],
            "uri": f"{result.dataset_iri}{local}",
            "kgqa": _kgqa_block(rec),
        })
    return out


def write_result(result: AskResult, path: str | Path, fmt: str | None = None) -> str:
    """Write ``result`` to ``path`` in ``fmt`` (see the module docstring); returns the format."""
    path = Path(path)
    fmt = output_format(path, result.protocol, fmt)
    if fmt == "jsonl":
        write(result.run, path)
    elif fmt == "qald":
        write_atomic(path, (json.dumps(_qald(result), ensure_ascii=False, indent=2), "\n"))
    else:
        write_atomic(path, (json.dumps(_text2sparql(result), ensure_ascii=False, indent=2), "\n"))
    return fmt


def journal_path(output: str | Path) -> Path:
    """Where ``kgqa system ask -o OUTPUT`` keeps its journal: ``OUTPUT.journal.jsonl``."""
    output = Path(output)
    return output.with_name(output.name + ".journal.jsonl")


def ask_to_file(dataset_spec: str, url: str, output: str | Path, *, protocol: str = "gerbil",
                settings: AskSettings | None = None, fmt: str | None = None, dataset_format: str | None = None,
                journal: str | Path | None = None) -> tuple[AskResult, str, Path]:
    """``kgqa system ask``: load the dataset, ask every question (resuming from the journal
    beside ``output``), write the run. Returns the result, the format written and the journal
    path."""

    output = Path(output)
    output_format(output, protocol, fmt)  # fail on a bad --format before asking anything
    ds = load_dataset(dataset_spec, format=dataset_format)
    jpath = Path(journal) if journal is not None else journal_path(output)
    result = ask(ds, url, protocol, settings, journal=jpath)
    written = write_result(result, output, fmt)
    return result, written, jpath
