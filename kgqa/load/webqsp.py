"""WebQuestionsSP (Yih et al., ACL 2016): ``WebQSP.train.json`` / ``WebQSP.test.json``.

File shape (the release's ``data/WebQSP.*.json``; see tests/fixtures/webqsp/SOURCE.txt)::

    {"Version": "1.0", "FreebaseVersion": "2015-08-09",
     "Questions": [{"QuestionId": "WebQTest-0", "RawQuestion": "what does jamaican people speak?",
                    "ProcessedQuestion": "what does jamaican people speak",
                    "Parses": [{"ParseId": "WebQTest-0.P0", "AnnotatorComment": {...},
                                "Sparql": "PREFIX ns: <http://rdf.freebase.com/ns/> ...",
                                "PotentialTopicEntityMention": "jamaican", "TopicEntityName": "Jamaica",
                                "TopicEntityMid": "m.03_r3",
                                "InferentialChain": ["location.country.languages_spoken"],
                                "Constraints": [{"Operator": "Equal", "ArgumentType": "Entity",
                                                 "Argument": "m.05zppz", "EntityName": "Male",
                                                 "SourceNodeIndex": 0, "NodePredicate": "...",
                                                 "ValueType": "String"}],
                                "Time": null, "Order": null,
                                "Answers": [{"AnswerType": "Entity", "AnswerArgument": "m.01428y",
                                             "EntityName": "Jamaican English"},
                                            {"AnswerType": "Value", "AnswerArgument": "1988", "EntityName": null}]}]}]}

Mapping of a question to an :class:`~kgqa.model.Item`:

- ``id``: ``QuestionId``; ``questions["en"]``: ``RawQuestion`` (``ProcessedQuestion`` when it
  is missing; both kept in metadata);
- the **first parse** gives ``sparql`` (``Sparql``; a parse whose query starts with
  ``#MANUAL SPARQL`` keeps it and is marked ``metadata["manual_sparql"] = True``) and
  ``answer``: a one-column table over ``answer``, an ``Entity`` answer as the IRI
  ``http://rdf.freebase.com/ns/<mid>``, a ``Value`` answer as a simple literal (its text as
  released; typed matching compares numbers and dates by value); ``EntityName`` values go to
  ``metadata["answer_names"]``. A parse with no answers gives an empty gold answer;
- further parses (WebQSP's official eval takes the best F1 over all parses) are kept in
  ``metadata["parses"]`` as ``{"id", "sparql", "answers"}`` with answers as term strings;
  kgqa scores against the first parse (a README-listed deviation);
- ``metadata``: ``inferential_chain``, ``num_edges`` (its length), ``constraints``,
  ``topic_entity`` (``{"mid", "name", "mention"}``), ``time``, ``order``,
  ``annotator_comment`` and every other top-level key;
- a question without any parse is kept with answer None and a warning (nothing to score);
- for the official evaluation (``-p webqsp``, :mod:`kgqa.score.webqsp`): ``metadata
  ["parse_arguments"]`` holds every parse's answers as released (``AnswerArgument`` strings, in
  order, duplicates kept) and ``metadata["webqsp_counted"]`` whether the official ``eval.py``
  counts the question (it has a parse with ``QuestionQuality`` Good and ``ParseQuality``
  Complete).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.generic import freebase_term, load_prediction_array, unique
from kgqa.load.jsonio import read_json
from kgqa.model import Dataset, InputError, Item, Prediction, Problem, Run, TableAnswer
from kgqa.model.terms import IRI, Literal, Term

def _parse_answers(raw: Any, where: str) -> tuple[list[Term], list[str | None]]:
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        raise ValueError(f"{where}: 'Answers' must be a list, got {type(raw).__name__}")
    terms: list[Term] = []
    names: list[str | None] = []
    for i, a in enumerate(raw):
        if isinstance(a, (str, int, float)) and not isinstance(a, bool):  # a bare answer string
            terms.append(freebase_term(a))
            names.append(None)
            continue
        if not isinstance(a, dict) or a.get("AnswerArgument") is None:
            raise ValueError(f"{where}: Answers[{i}] must be an object with 'AnswerArgument'")
        kind = str(a.get("AnswerType", "")).lower()
        if kind not in ("entity", "value"):
            raise ValueError(f"{where}: Answers[{i}] has AnswerType {a.get('AnswerType')!r} (expected Entity or Value)")
        terms.append(freebase_term(a["AnswerArgument"], entity=kind == "entity"))
        names.append(a.get("EntityName"))
    return terms, names


def parse_question(q: Any, file: str, record: str, problems: list[Problem]) -> Item:
    if not isinstance(q, dict):
        raise ValueError(f"expected a question object, got {type(q).__name__}")
    qid = q.get("QuestionId")
    if not isinstance(qid, (str, int)) or isinstance(qid, bool) or not str(qid).strip():
        raise ValueError("no 'QuestionId'")
    text = q.get("RawQuestion") or q.get("ProcessedQuestion")
    questions = {"en": str(text).strip()} if isinstance(text, str) and text.strip() else {}
    if not questions:
        problems.append(Problem(file, record, "no RawQuestion / ProcessedQuestion text", "warning"))
    parses = q.get("Parses")
    if parses is None:
        parses = []
    if not isinstance(parses, list) or not all(isinstance(p, dict) for p in parses):
        raise ValueError("'Parses' must be a list of parse objects")
    metadata: dict[str, Any] = {k: v for k, v in q.items() if k not in ("QuestionId", "RawQuestion", "Parses", "Answers")}
    if isinstance(q.get("RawQuestion"), str):
        metadata["raw_question"] = q["RawQuestion"]
    sparql = None
    answer = None
    if not parses and isinstance(q.get("Answers"), list):  # a file without Parses: its answers are the one parse
        parses = [{"Answers": q["Answers"]}]
        problems.append(Problem(file, record, "no 'Parses' (the official eval.py needs them: KeyError): the "
                                              "question's 'Answers' are read as its one parse, counted", "warning"))
        metadata_counted = True
    else:
        metadata_counted = None
    metadata["parse_arguments"] = [[a.get("AnswerArgument") if isinstance(a, dict) else a
                                    for a in (p.get("Answers") or [])] for p in parses]
    metadata["webqsp_counted"] = metadata_counted or any(
        isinstance(p.get("AnnotatorComment"), dict) and p["AnnotatorComment"].get("QuestionQuality") == "Good"
        and p["AnnotatorComment"].get("ParseQuality") == "Complete" for p in parses)
    if not parses:
        problems.append(Problem(file, record, "no parse: neither a query nor answers", "warning"))
    for n, p in enumerate(parses):
        where = f"Parses[{n}]"
        terms, names = _parse_answers(p.get("Answers"), where)
        query = p.get("Sparql")
        if query is not None and not isinstance(query, str):
            raise ValueError(f"{where}: 'Sparql' must be a string")
        if n == 0:
            sparql = query if query and query.strip() else None
            answer = TableAnswer.single_column(terms, "answer")
            if names and any(x is not None for x in names):
                metadata["answer_names"] = names
            if sparql and sparql.lstrip().upper().startswith("#MANUAL SPARQL"):
                metadata["manual_sparql"] = True
            chain = p.get("InferentialChain")
            metadata["inferential_chain"] = chain
            if isinstance(chain, list):
                metadata["num_edges"] = len(chain)
            metadata["constraints"] = p.get("Constraints") or []
            metadata["topic_entity"] = {"mid": p.get("TopicEntityMid"), "name": p.get("TopicEntityName"),
                                        "mention": p.get("PotentialTopicEntityMention")}
            for key, name in (("Time", "time"), ("Order", "order"), ("AnnotatorComment", "annotator_comment"),
                              ("ParseId", "parse_id")):
                if p.get(key) is not None:
                    metadata[name] = p[key]
        else:
            metadata.setdefault("parses", []).append(
                {"id": p.get("ParseId"), "sparql": query, "answers": [str(t) for t in terms]})
    return Item(str(qid).strip(), questions, sparql, answer, None, {}, {}, metadata)


def load_webqsp_dataset(paths: list[Path], **options: Any) -> Dataset:
    problems: list[Problem] = []
    parsed = []
    meta: dict[str, Any] = {}
    for path in paths:
        file = str(path)
        doc = read_json(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("Questions"), list):
            raise InputError(path, "not WebQSP JSON: expected an object with a 'Questions' list")
        meta.update({k: v for k, v in doc.items() if k != "Questions"})
        for i, q in enumerate(doc["Questions"]):
            record = f"Questions[{i}]" + (f" ({q['QuestionId']})" if isinstance(q, dict) and "QuestionId" in q else "")
            try:
                parsed.append((file, record, parse_question(q, file, record, problems)))
            except ValueError as e:
                problems.append(Problem(file, record, f"{e}; skipped"))
    _keep_repeats(parsed)
    return Dataset(Path(paths[0]).stem, unique(parsed, problems), "webqsp", list(paths), problems, meta)


def _keep_repeats(parsed: list[tuple[str, str, Item]]) -> None:
    """eval.py counts every record of ``Questions``, a repeated QuestionId included: each later
    record's ``(webqsp_counted, parse_arguments)`` is kept in the first one's
    ``metadata["webqsp_repeats"]`` (kgqa keeps one item per id)."""
    first: dict[str, Item] = {}
    for _file, _record, it in parsed:
        if it.id in first:
            first[it.id].metadata.setdefault("webqsp_repeats", []).append(
                (it.metadata["webqsp_counted"], it.metadata["parse_arguments"]))
        else:
            first[it.id] = it


def sniff(sample: formats.Sample) -> float:
    h = sample.head.lstrip()
    if not h.startswith("{") or '"Questions"' not in h:
        return 0.0
    if '"QuestionId"' in h or '"Parses"' in h or '"FreebaseVersion"' in h:
        return 0.95
    return 0.0


DATASET = formats.register(formats.Format(
    name="webqsp",
    kind="dataset",
    description="WebQuestionsSP JSON (Questions[].Parses[] with Sparql, Answers, InferentialChain, Constraints)",
    sniff=sniff,
    load=load_webqsp_dataset,
    extensions=(".json",),
    aliases=("webquestionssp",),
))


# --------------------------------------------------------------------------- run


def _prediction(rec: dict) -> Prediction:
    answers = rec.get("Answers")
    raw = answers
    if answers is None:
        answers = []
    if not isinstance(answers, list):
        raise ValueError("'Answers' must be a list of strings")
    terms = [freebase_term(a) for a in answers if not (isinstance(a, (dict, list, bool)) or a is None)]
    return Prediction(str(rec["QuestionId"]).strip(), answer=TableAnswer.single_column(terms, "answer"),
                      metadata={"webqsp_answers": raw})


def load_webqsp_run(paths: list[Path], dataset: Dataset | None = None, **options: Any) -> Run:
    """The predictions file the official ``eval.py`` reads: a JSON list of ``{"QuestionId",
    "Answers": [answer strings]}`` (a mid ``m.x`` becomes ``ns:m.x``, as in the dataset). The
    ``Answers`` list as written is kept in ``metadata["webqsp_answers"]`` (eval.py compares the
    JSON values as they are: ``2005`` never equals ``"2005"``, ``" m.x"`` never ``"m.x"``); a
    repeated QuestionId keeps the **last** record, as eval.py's dict does (listed as a problem)."""
    run = load_prediction_array(paths, _prediction, format_name="webqsp-predictions",
                                what="WebQSP predictions", id_key="QuestionId", keep="last")
    odd = [p.id for p in run.predictions if not isinstance(p.metadata.get("webqsp_answers"), list)]
    if odd:
        run.problems.append(Problem(str(paths[0]), None, (
            f"{len(odd)} prediction(s) have no 'Answers' list (the first: {odd[0]}): the official eval.py stops "
            "on them (KeyError / TypeError); kgqa scores them as empty answers"), "warning"))
    return run


def sniff_run(sample: formats.Sample) -> float:
    h = sample.head.lstrip()
    return 0.9 if h.startswith("[") and '"QuestionId"' in h and '"Answers"' in h and '"Parses"' not in h else 0.0


RUN = formats.register(formats.Format(
    name="webqsp-predictions",
    kind="run",
    description="WebQSP predictions as eval.py reads them: [{QuestionId, Answers: [mids or values]}]",
    sniff=sniff_run,
    load=load_webqsp_run,
    extensions=(".json",),
))
