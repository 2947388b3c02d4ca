"""Text2SPARQL'25 (CK25, DB25): question YAML + gold result-set bags; system answers and result sets.

**Dataset** = the questions YAML (``dataset: {id, prefix, defaultNamespace}``, ``questions:``
with ``id``, ``question: {lang: text}``, ``query: {sparql}``, optional ``features``,
``classes``, ``properties``) joined with the gold result-set JSON
``{qname: {value: grade}}`` where ``qname = f"{prefix}:{id}-{lang}"``.

The gold file is, in this order: a ``.json`` path given together with the YAML, the option
``gold=PATH``, or found automatically as ``*true_result_set.json`` next to the YAML or in an
``official-gold/`` subfolder (one whose name starts with the prefix is preferred).

One :class:`~kgqa.model.Item` per question: ``id = f"{prefix}:{id}"``,
``lang_ids = {lang: qname}`` (see :meth:`~kgqa.model.Dataset.by_language`), ``sparql`` from
``query.sparql``, ``metadata`` with ``features``/``classes``/``properties``, and the typed
field ``qrels = {lang: {value: grade}}`` (the raw pytrec_eval qrels of every language, grade 0
included).

A bag becomes an answer by :func:`bag_answer`:

- exactly ``{"true": 1}`` -> ``BooleanAnswer(True)``; exactly ``{"true": 0}`` ->
  ``BooleanAnswer(False)`` (the ASK convention; ``answer_type`` is then ``"boolean"``);
- otherwise a single-column :class:`~kgqa.model.TableAnswer` (variable ``result``) of the
  values with grade > 0, in file order, typed by :func:`kgqa.model.terms.guess_term`
  (values with grade 0 are "not relevant" and are left out); ``{}`` is an empty table.

The item's ``answer`` is the bag of its first language. When the languages' bags differ,
``metadata["answers_by_language"]`` holds each language's answer and a warning is recorded.

**Runs**: ``text2sparql-answers`` reads ``ck25_answers.json`` (a list of
``{dataset, question, query, endpoint, qname, uri}``): ``Prediction(id=qname, sparql=query)``
with answer None. ``text2sparql-results`` reads ``ck25_system_result_set.json``
(``{qname: {value: grade}}``): ``Prediction(id=qname, answer=bag_answer(bag))`` with the raw
bag in the typed field ``Prediction.bag``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.jsonio import read_json, read_yaml
from kgqa.load.qald_json import system_failure
from kgqa.model import BooleanAnswer, Dataset, InputError, Item, Prediction, Problem, Run, Status, TableAnswer
from kgqa.model.answer import Answer
from kgqa.model.terms import guess_term

GOLD_GLOB = "*true_result_set.json"


# --------------------------------------------------------------------------- bags


def check_bag(bag: Any) -> dict[str, int | float]:
    """The bag as ``{str: grade}``; ValueError if it is not an object of numeric grades."""
    if not isinstance(bag, dict):
        raise ValueError(f"a result bag must be an object {{value: grade}}, got {type(bag).__name__}")
    out: dict[str, int | float] = {}
    for k, v in bag.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"grade of {k!r} must be a number, got {v!r}")
        out[str(k)] = v
    return out


def bag_answer(bag: dict[str, int | float]) -> Answer:
    """The answer a pytrec_eval bag stands for (see module docstring)."""
    if list(bag) == ["true"] and bag["true"] in (0, 1):
        return BooleanAnswer(bag["true"] == 1)
    return TableAnswer.single_column([guess_term(v) for v, g in bag.items() if g > 0])


# --------------------------------------------------------------------------- dataset


def find_gold(yaml_path: Path, prefix: str | None = None) -> Path | None:
    """The gold result-set file beside ``yaml_path`` or in its ``official-gold/`` folder."""
    folder = Path(yaml_path).parent
    cands = sorted(folder.glob(GOLD_GLOB)) + sorted((folder / "official-gold").glob(GOLD_GLOB))
    if prefix:
        preferred = [c for c in cands if c.name.startswith(prefix)]
        if preferred:
            return preferred[0]
    return cands[0] if cands else None


def _meta_list(v: Any) -> Any:
    return list(v) if isinstance(v, (list, tuple)) else v


# long function: one pass over the YAML's questions with the format's every documented variant in order (a reader checks it against the format description top to bottom)
def load_text2sparql_dataset(paths: list[Path], gold: str | Path | None = None, **options: Any) -> Dataset:
    yamls = [p for p in paths if Path(p).suffix.lower() in (".yml", ".yaml")]
    jsons = [p for p in paths if Path(p).suffix.lower() == ".json"]
    if len(yamls) != 1:
        raise InputError(paths[0], f"Text2SPARQL dataset needs exactly one questions YAML file, got {len(yamls)}")
    ypath = Path(yamls[0])
    doc = read_yaml(ypath)
    if not isinstance(doc, dict) or not isinstance(doc.get("questions"), list):
        raise InputError(ypath, "not a Text2SPARQL questions file: expected a mapping with a 'questions' list")
    ds_meta = doc.get("dataset") if isinstance(doc.get("dataset"), dict) else {}
    prefix = str(ds_meta.get("prefix") or "")
    file = str(ypath)
    problems: list[Problem] = []
    if not prefix:
        problems.append(Problem(file, "dataset", "no dataset.prefix; question ids and qnames have no prefix", "warning"))

    gold_path: Path | None = Path(jsons[0]) if jsons else (Path(gold) if gold else find_gold(ypath, prefix))
    bags: dict[str, Any] | None = None
    if gold_path is not None:
        if not gold_path.exists():
            raise InputError(gold_path, "gold result-set file not found")
        raw = read_json(gold_path)
        if not isinstance(raw, dict):
            raise InputError(gold_path, "gold result set must be an object {qname: {value: grade}}")
        bags = raw
    else:
        problems.append(Problem(file, None, f"no gold result set ({GOLD_GLOB}) found; items have no answers", "warning"))

    items: list[Item] = []
    seen: set[str] = set()
    used: set[str] = set()
    for i, q in enumerate(doc["questions"]):
        rec = f"question id {q['id']}" if isinstance(q, dict) and "id" in q else f"questions[{i}]"
        if not isinstance(q, dict) or q.get("id") is None:
            problems.append(Problem(file, rec, "question has no 'id'; skipped"))
            continue
        iid = f"{prefix}:{q['id']}" if prefix else str(q["id"])
        if iid in seen:
            problems.append(Problem(file, rec, f"duplicate id {iid!r}; skipped (the first one is kept)"))
            continue
        qtext = q.get("question")
        if isinstance(qtext, str):
            qtext = {"en": qtext}
        if not isinstance(qtext, dict) or not qtext:
            problems.append(Problem(file, rec, "no question text ('question: {lang: text}'); skipped"))
            continue
        questions = {str(k): str(v).strip() for k, v in qtext.items() if v is not None}
        query = q.get("query")
        sparql = query.get("sparql") if isinstance(query, dict) else (query if isinstance(query, str) else None)
        sparql = sparql if isinstance(sparql, str) and sparql.strip() else None
        metadata: dict[str, Any] = {k: _meta_list(v) for k, v in q.items() if k not in ("id", "question", "query")}
        lang_ids = {lang: f"{iid}-{lang}" for lang in questions}
        answer: Answer | None = None
        answer_type: str | None = None
        item_qrels: dict[str, dict[str, int | float]] | None = None
        if bags is not None:
            qrels: dict[str, dict[str, int | float]] = {}
            answers: dict[str, Answer] = {}
            for lang, qname in lang_ids.items():
                used.add(qname)
                if qname not in bags:
                    problems.append(Problem(str(gold_path), qname, "no gold bag for this question and language", "warning"))
                    continue
                try:
                    bag = check_bag(bags[qname])
                except ValueError as e:
                    problems.append(Problem(str(gold_path), qname, f"{e}; gold answer left out"))
                    continue
                qrels[lang] = bag
                answers[lang] = bag_answer(bag)
            item_qrels = qrels or None
            if answers:
                answer = next(iter(answers.values()))
                first = next(iter(qrels.values()))
                if any(b != first for b in qrels.values()):
                    metadata["answers_by_language"] = answers
                    problems.append(Problem(str(gold_path), iid, "gold bags differ between languages "
                                            f"({', '.join(answers)}); item answer is the {next(iter(answers))} one", "warning"))
                if isinstance(answer, BooleanAnswer):
                    answer_type = "boolean"
        seen.add(iid)
        item = Item(id=iid, questions=questions, sparql=sparql, answer=answer, answer_type=answer_type,
                    metadata=metadata, lang_ids=lang_ids, qrels=item_qrels)
        if sparql is None and answer is None:
            problems.append(Problem(file, rec, "neither a query nor a gold answer", "warning"))
        items.append(item)
    if bags is not None:
        extra = [k for k in bags if k not in used]
        if extra:
            problems.append(Problem(str(gold_path), None, f"{len(extra)} gold bag(s) match no question: "
                                    f"{', '.join(extra[:5])}{' ...' if len(extra) > 5 else ''}", "warning"))
    name = prefix or ypath.stem
    meta = dict(ds_meta)
    if gold_path is not None:
        meta["gold"] = str(gold_path)
    source = [ypath] + ([gold_path] if gold_path is not None else [])
    return Dataset(name, items, "text2sparql", source, problems, meta)


# --------------------------------------------------------------------------- runs


def load_answers_run(paths: list[Path], dataset: Dataset | None = None, **options: Any) -> Run:
    preds: list[Prediction] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for path in paths:
        doc = read_json(path)
        if not isinstance(doc, list):
            raise InputError(path, "Text2SPARQL answers file must be a JSON list of {qname, query, ...} objects")
        file = str(path)
        for i, rec in enumerate(doc):
            where = f"entry {i}" + (f" ({rec['qname']})" if isinstance(rec, dict) and rec.get("qname") else "")
            if not isinstance(rec, dict) or not rec.get("qname"):
                problems.append(Problem(file, where, "entry has no 'qname'; skipped"))
                continue
            qname = str(rec["qname"])
            if qname in seen:
                problems.append(Problem(file, where, f"duplicate qname {qname!r}; skipped (the first one is kept)"))
                continue
            query = rec.get("query")
            if query is not None and not isinstance(query, str):
                problems.append(Problem(file, where, "'query' is not a string; skipped"))
                continue
            seen.add(qname)
            md = {k: v for k, v in rec.items() if k not in ("qname", "query")}
            status, message = system_failure(rec.get("kgqa"))  # written by `kgqa system ask`
            preds.append(Prediction(id=qname, sparql=query if query and query.strip() else None, status=status,
                                    message=message, metadata=md))
            if (not query or not query.strip()) and status is Status.OK:
                problems.append(Problem(file, where, "empty query", "warning"))
    return Run(Path(paths[0]).parent.name or Path(paths[0]).stem, preds, "text2sparql-answers", list(paths), problems)


def load_results_run(paths: list[Path], dataset: Dataset | None = None, **options: Any) -> Run:
    preds: list[Prediction] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for path in paths:
        doc = read_json(path)
        if not isinstance(doc, dict):
            raise InputError(path, "Text2SPARQL result set must be an object {qname: {value: grade}}")
        file = str(path)
        for qname, raw in doc.items():
            if qname in seen:
                problems.append(Problem(file, qname, "duplicate qname; skipped"))
                continue
            try:
                bag = check_bag(raw)
            except ValueError as e:
                problems.append(Problem(file, qname, f"{e}; skipped"))
                continue
            seen.add(qname)
            preds.append(Prediction(id=qname, answer=bag_answer(bag), bag=bag))
    return Run(Path(paths[0]).parent.name or Path(paths[0]).stem, preds, "text2sparql-results", list(paths), problems)


# --------------------------------------------------------------------------- registration

_YAML_QUESTIONS = re.compile(r"^questions\s*:", re.M)
_YAML_QUERY = re.compile(r"^\s+query\s*:", re.M)
_YAML_SPARQL = re.compile(r"^\s+sparql\s*:", re.M)
_BAG = re.compile(r'^\{\s*"[^"\s]+:[^"\s]+-[A-Za-z_]+"\s*:\s*\{')
_ANSWERS = re.compile(r'^\[\s*\{')


def sniff_dataset(sample: formats.Sample) -> float:
    head = sample.head
    if _YAML_QUESTIONS.search(head) and _YAML_QUERY.search(head) and _YAML_SPARQL.search(head):
        return 0.9
    if sample.path.suffix.lower() in (".yml", ".yaml") and _YAML_QUESTIONS.search(head):
        return 0.5
    return 0.0


def sniff_results(sample: formats.Sample) -> float:
    return 0.9 if _BAG.match(sample.head.lstrip()) else 0.0


def sniff_answers(sample: formats.Sample) -> float:
    head = sample.head.lstrip()
    if _ANSWERS.match(head) and '"qname"' in head and '"query"' in head:
        return 0.9
    return 0.0


DATASET = formats.register(formats.Format(
    name="text2sparql",
    kind="dataset",
    description="Text2SPARQL'25 questions YAML (CK25, DB25) joined with its gold result-set bags",
    sniff=sniff_dataset,
    load=load_text2sparql_dataset,
    extensions=(".yml", ".yaml"),
    aliases=("ck25", "db25"),
))

ANSWERS_RUN = formats.register(formats.Format(
    name="text2sparql-answers",
    kind="run",
    description="Text2SPARQL system answers (ck25_answers.json): list of {qname, query, ...}",
    sniff=sniff_answers,
    load=load_answers_run,
    extensions=(".json",),
))

RESULTS_RUN = formats.register(formats.Format(
    name="text2sparql-results",
    kind="run",
    description="Text2SPARQL result set (ck25_system_result_set.json): {qname: {value: grade}}",
    sniff=sniff_results,
    load=load_results_run,
    extensions=(".json",),
))
