"""ComplexWebQuestions (Talmor & Berant, NAACL 2018): ``ComplexWebQuestions_{train,dev,test}.json``.

File shape (the dataset card lists the fields; see tests/fixtures/cwq/SOURCE.txt)::

    [{"ID": "WebQTrn-230_b1c1de2ea2a2a8c10ba9d2a9c0b22b88",
      "webqsp_ID": "WebQTrn-230", "webqsp_question": "...", "machine_question": "...",
      "question": "...", "sparql": "PREFIX ns: <http://rdf.freebase.com/ns/> ...",
      "compositionality_type": "composition",
      "answers": [{"answer": "Ahmad Shah Massoud", "answer_id": "m.012x1l", "aliases": [...]}],
      "composition_answer": "...", "created": "2018-02-13T17:52:33"}, ...]

- ``id``: ``ID``; ``questions["en"]``: ``question`` (``machine_question`` when it is empty,
  with a warning);
- ``sparql``: ``sparql`` (None when absent, as in releases of the test split without queries);
- ``answer``: one column over ``answer``; an ``answer_id`` that is a Freebase mid becomes
  ``http://rdf.freebase.com/ns/<mid>``, any other answer a simple literal of ``answer``
  (``answer_id`` when ``answer`` is missing). Names and aliases go to
  ``metadata["answer_names"]`` / ``metadata["answer_aliases"]`` (CWQ's official evaluation
  also accepts aliases; kgqa scores the answers themselves);
- ``groups["compositionality_type"]`` and ``groups["webqsp"]`` (``webqsp_ID``: every question
  built from one WebQSP question shares it); ``metadata``: every other key.
- A record without ``answers`` keeps answer None (execute the query with ``--kg``).
- For the official evaluation (``-p cwq``, :mod:`kgqa.score.cwq`): ``metadata["cwq_gold"]``
  is the list the script builds (each answer's ``answer`` then its ``aliases``, as released,
  None included) and ``metadata["cwq_question"]`` the ``question`` text as released.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.generic import load_prediction_array, load_record_array
from kgqa.load.generic import FREEBASE_MID, freebase_term
from kgqa.model import Dataset, Item, Prediction, Problem, Run, TableAnswer
from kgqa.model.terms import Literal, Term

_OWN = ("ID", "question", "sparql", "answers", "compositionality_type")


def _answers(raw: Any) -> tuple[list[Term], list[str], list[list[str]]]:
    if not isinstance(raw, list):
        raise ValueError(f"'answers' must be a list, got {type(raw).__name__}")
    terms: list[Term] = []
    names: list[str] = []
    aliases: list[list[str]] = []
    for i, a in enumerate(raw):
        if isinstance(a, str):
            terms.append(Literal(a))
            names.append(a)
            aliases.append([])
            continue
        if not isinstance(a, dict) or (a.get("answer") is None and a.get("answer_id") is None):
            raise ValueError(f"answers[{i}] must be an object with 'answer' and/or 'answer_id'")
        aid = a.get("answer_id")
        if isinstance(aid, str) and FREEBASE_MID.match(aid.strip()):
            terms.append(freebase_term(aid, entity=True))
        else:
            terms.append(Literal(str(a.get("answer") if a.get("answer") is not None else aid)))
        names.append(str(a.get("answer") if a.get("answer") is not None else aid))
        al = a.get("aliases")
        aliases.append([str(x) for x in al] if isinstance(al, list) else [])
    return terms, names, aliases


def _answer_field(raw: Any) -> list[dict]:
    """An ``answer`` field (a text, or a list of texts or answer objects) as ``answers`` objects."""
    items = raw if isinstance(raw, list) else [raw]
    out = []
    for i, a in enumerate(items):
        if isinstance(a, dict):
            out.append(a)
        elif isinstance(a, (str, int, float)) and not isinstance(a, bool):
            out.append({"answer": str(a), "aliases": []})
        else:
            raise ValueError(f"'answer'[{i}] must be a text or an answer object, got {a!r}")
    return out


def parse_record(rec: Any, file: str, record: str, problems: list[Problem]) -> Item:
    if not isinstance(rec, dict):
        raise ValueError(f"expected a question object, got {type(rec).__name__}")
    rid = rec.get("ID")
    if not isinstance(rid, (str, int)) or isinstance(rid, bool) or not str(rid).strip():
        raise ValueError("no 'ID'")
    text = rec.get("question")
    if not (isinstance(text, str) and text.strip()):
        text = rec.get("machine_question")
        if isinstance(text, str) and text.strip():
            problems.append(Problem(file, record, "empty 'question'; machine_question used", "warning"))
    questions = {"en": text.strip()} if isinstance(text, str) and text.strip() else {}
    if not questions:
        problems.append(Problem(file, record, "no question text", "warning"))
    sparql = rec.get("sparql")
    if sparql is not None and not isinstance(sparql, str):
        raise ValueError("'sparql' must be a string")
    sparql = sparql if sparql and sparql.strip() else None
    answer = None
    metadata: dict[str, Any] = {k: v for k, v in rec.items() if k not in _OWN}
    metadata["cwq_question"] = rec.get("question") if isinstance(rec.get("question"), str) else ""
    if isinstance(rec.get("answers"), list):
        metadata["cwq_gold"] = [x for a in rec["answers"] if isinstance(a, dict)
                                for x in [a.get("answer"), *(a.get("aliases") or [])]]
    elif "answers" not in rec and rec.get("answer") is not None:  # the shape two KBQA codebases distribute
        rec = {**rec, "answers": _answer_field(rec["answer"])}
        metadata.pop("answer", None)
        metadata["cwq_gold"] = [x for a in rec["answers"] for x in [a.get("answer"), *(a.get("aliases") or [])]]
        metadata["cwq_answer_field"] = True
    if "answers" in rec and rec["answers"] is not None:
        terms, names, aliases = _answers(rec["answers"])
        answer = TableAnswer.single_column(terms, "answer")
        metadata["answer_names"] = names
        if any(aliases):
            metadata["answer_aliases"] = aliases
    if sparql is None and answer is None:
        problems.append(Problem(file, record, "neither a query nor answers", "warning"))
    groups = {}
    if isinstance(rec.get("compositionality_type"), str):
        groups["compositionality_type"] = rec["compositionality_type"]
    if isinstance(rec.get("webqsp_ID"), str):
        groups["webqsp"] = rec["webqsp_ID"]
    return Item(str(rid).strip(), questions, sparql, answer, None, {}, groups, metadata)


def load_cwq_dataset(paths: list[Path], **options: Any) -> Dataset:
    ds = load_record_array(paths, lambda rec, i, file, record, problems: parse_record(rec, file, record, problems),
                           format_name="cwq", what="ComplexWebQuestions JSON", id_key="ID")
    shaped = [it.id for it in ds.items if it.metadata.get("cwq_answer_field")]
    if shaped:
        ds.problems.append(Problem(str(paths[0]), None, (
            f"{len(shaped)} record(s) give their gold as 'answer', not 'answers' (the first: {shaped[0]}): read as "
            "the answers (the official eval_script.py needs 'answers': KeyError)"), "warning"))
    return ds


def sniff(sample: formats.Sample) -> float:
    h = sample.head.lstrip()
    if not h.startswith("["):
        return 0.0
    if '"webqsp_ID"' in h or ('"compositionality_type"' in h and '"ID"' in h):
        return 0.95
    if '"ID"' in h and '"question"' in h and '"answer"' in h and '"WebQ' in h:
        return 0.8  # the ID/question/answer shape some KBQA codebases distribute
    return 0.0


DATASET = formats.register(formats.Format(
    name="cwq",
    kind="dataset",
    description="ComplexWebQuestions JSON (ID, question, sparql, answers, compositionality_type, webqsp_ID)",
    sniff=sniff,
    load=load_cwq_dataset,
    extensions=(".json",),
    aliases=("complexwebquestions",),
))


# --------------------------------------------------------------------------- run


def _prediction(rec: dict) -> Prediction:
    value = rec.get("answer")
    if isinstance(value, (dict, list)):
        raise ValueError("'answer' must be one text")
    terms = [] if value is None else [Literal(str(value))]
    return Prediction(str(rec["ID"]).strip(), answer=TableAnswer.single_column(terms, "answer"),
                      metadata={"cwq_answer": value})


def load_cwq_run(paths: list[Path], dataset: Dataset | None = None, **options: Any) -> Run:
    """The predictions file the official evaluation script reads: a JSON list of ``{"ID",
    "answer": text}``; the text is kept as released in ``metadata["cwq_answer"]``. The script
    adds 100 for every row that matches, so a repeated ID counts once per row: every row's text
    is kept, in order, in the first prediction's ``metadata["cwq_answers"]``."""
    rows: dict[str, list[Any]] = {}

    def parse(rec: dict) -> Prediction:
        pred = _prediction(rec)
        rows.setdefault(pred.id, []).append(rec.get("answer"))
        if "answer" not in rec:
            missing.append(pred.id)
        return pred

    missing: list[str] = []
    run = load_prediction_array(paths, parse, format_name="cwq-predictions",
                                what="ComplexWebQuestions predictions", id_key="ID", keep="all")
    for p in run.predictions:
        p.metadata["cwq_answers"] = rows.get(p.id, [p.metadata.get("cwq_answer")])
    repeated = [k for k, v in rows.items() if len(v) > 1]
    if repeated:
        run.problems.append(Problem(str(paths[0]), None, (
            f"{len(repeated)} ID(s) have more than one prediction row (the first: {repeated[0]}): the official "
            "eval_script.py adds every row, and so does the cwq profile"), "warning"))
    if missing:
        run.problems.append(Problem(str(paths[0]), None, (
            f"{len(missing)} row(s) have no 'answer' (the first: {missing[0]}): eval_script.py stops on them "
            "(KeyError); kgqa scores them 0"), "warning"))
    return run


def sniff_run(sample: formats.Sample) -> float:
    h = sample.head.lstrip()
    return 0.85 if h.startswith("[") and '"ID"' in h and '"answer"' in h and '"question"' not in h \
        and '"answers"' not in h else 0.0


RUN = formats.register(formats.Format(
    name="cwq-predictions",
    kind="run",
    description="ComplexWebQuestions predictions as the official script reads them: [{ID, answer}]",
    sniff=sniff_run,
    load=load_cwq_run,
    extensions=(".json",),
))
