"""KQA Pro (Cao et al., ACL 2022): ``train.json`` / ``val.json`` / ``test.json``.

File shape (the release README; see tests/fixtures/kqapro/SOURCE.txt)::

    [{"question": str,
      "sparql": str,            # executable on the release's Virtuoso KB
      "program": [{"function": str, "dependencies": [int], "inputs": [str]}],
      "choices": [str, ...],    # 10 answer choices
      "answer": str}, ...]      # test.json: only question and choices

Records have no id: ``id`` is the record's 0-based position in the file (the order the
leaderboard's one-answer-per-line submission follows), or ``id`` / ``qid`` when a record has
one. ``questions["en"]``: ``question``; ``sparql``: ``sparql``; ``answer``: a one-column table
holding ``answer`` as a simple literal (KQA Pro answers are texts: names, "yes"/"no", numbers
with units, dates; typed matching still compares plain numbers and dates by value); None
when the record has no answer (test split). ``groups["function"]``: the program's last
function (e.g. ``QueryAttr``, ``Count``, ``VerifyStr``: the question's answer kind);
``metadata``: ``program``, ``choices``, ``num_functions`` and every other key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.generic import load_record_array
from kgqa.model import Dataset, Item, Problem, TableAnswer
from kgqa.model.terms import Literal

_OWN = ("question", "sparql", "answer", "id", "qid")


def parse_record(rec: Any, index: int, file: str, record: str, problems: list[Problem]) -> Item:
    if not isinstance(rec, dict):
        raise ValueError(f"expected a question object, got {type(rec).__name__}")
    text = rec.get("question")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("no 'question' text")
    rid = rec.get("id", rec.get("qid", index))
    if isinstance(rid, bool) or not isinstance(rid, (str, int)) or not str(rid).strip():
        raise ValueError(f"'id' must be a string or an integer, got {rid!r}")
    sparql = rec.get("sparql")
    if sparql is not None and not isinstance(sparql, str):
        raise ValueError("'sparql' must be a string")
    answer = None
    if rec.get("answer") is not None:
        a = rec["answer"]
        if isinstance(a, (dict, list)):
            raise ValueError(f"'answer' must be a string, got {type(a).__name__}")
        answer = TableAnswer.single_column([Literal(str(a))], "answer")
    metadata = {k: v for k, v in rec.items() if k not in _OWN}
    groups: dict[str, str] = {}
    program = rec.get("program")
    if program is not None:
        if not isinstance(program, list) or not all(isinstance(f, dict) and isinstance(f.get("function"), str) for f in program):
            problems.append(Problem(file, record, "'program' is not a list of {function, dependencies, inputs}", "warning"))
        elif program:
            groups["function"] = program[-1]["function"]
            metadata["num_functions"] = len(program)
    choices = rec.get("choices")
    if answer is not None and isinstance(choices, list) and choices and str(rec["answer"]) not in [str(c) for c in choices]:
        problems.append(Problem(file, record, "the answer is not among the choices", "warning"))
    if answer is None and not (sparql and sparql.strip()):
        problems.append(Problem(file, record, "neither a query nor an answer (test split?)", "warning"))
    return Item(str(rid).strip(), {"en": text.strip()}, sparql if sparql and sparql.strip() else None, answer,
                None, {}, groups, metadata)


def load_kqapro_dataset(paths: list[Path], **options: Any) -> Dataset:
    return load_record_array(paths, parse_record, format_name="kqapro", what="KQA Pro JSON")


def sniff(sample: formats.Sample) -> float:
    h = sample.head.lstrip()
    if not h.startswith("[") or '"choices"' not in h or '"question"' not in h:
        return 0.0
    if '"program"' in h and ('"function"' in h or '"dependencies"' in h):
        return 0.95
    return 0.8


DATASET = formats.register(formats.Format(
    name="kqapro",
    kind="dataset",
    description="KQA Pro JSON (question, sparql, program, choices, answer; ids are record positions)",
    sniff=sniff,
    load=load_kqapro_dataset,
    extensions=(".json",),
    aliases=("kqa-pro",),
))
