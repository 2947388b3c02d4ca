"""Legacy QALD XML datasets (QALD-1..5, QALD-7 XML editions).

File shape::

    <dataset id="qald-4_multilingual_train">
      <question id="132" answertype="number" aggregation="true" onlydbo="true">
        <string lang="en"><![CDATA[How often did Jane Fonda marry?]]></string>
        <keywords lang="en"><![CDATA[Jane Fonda, marry, how often]]></keywords>
        <query><![CDATA[SELECT ...]]></query>
        <answers><answer><number>3</number></answer></answers>
      </question>
    </dataset>

Mapping to :class:`~kgqa.model.Item`: ``id`` attribute (string); ``questions[lang]`` from
``<string lang>`` (a ``<string>`` without ``lang`` is English; further strings in the same
language go to ``metadata["paraphrases"]``); ``keywords[lang]`` split on commas and
stripped; ``sparql`` from ``<query>`` (empty query -> None; QALD-1..3 pseudo queries in
``<pseudoquery>`` go to ``metadata["pseudoquery"]``); ``answer_type`` from ``answertype``;
every other attribute goes to ``metadata`` (``"true"``/``"false"`` become booleans).

Answers: each ``<answer>`` is one row of a single-column table (variable ``result``);
its child element gives the term type:

- ``<uri>`` -> :class:`IRI`;
- ``<number>`` -> literal typed ``xsd:integer`` when the text is an integer, else ``xsd:decimal``
  (``xsd:double`` for exponent notation); a non-numeric text stays a simple literal;
- ``<date>`` -> ``xsd:date`` (``YYYY-MM-DD``) / ``xsd:dateTime``; other texts (``406``) stay simple;
- ``<string>`` -> simple literal; ``<boolean>`` -> the whole answer is a
  :class:`BooleanAnswer` (``true``/``false`` case-insensitive);
- an ``<answer>`` holding only text is a simple literal (or an IRI if it looks like one).

``<answers/>`` (empty) is an empty table; no ``<answers>`` element at all means no gold answer.
Answers that are text only (QALD-5) are read as QALD-5 JSON reads its ``{"string": ...}``
answers (absolute http(s) IRIs, else simple literals; one ``true``/``false`` of a boolean
question a boolean answer), and a ``<query>`` of ``OUT OF SCOPE`` is no query
(``metadata["query"]["out_of_scope"]``), as in QALD-5 JSON: the XML and JSON releases give the
same items. The same files are read as runs (``qald-xml`` run format).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.jsonio import read_xml
from kgqa.load.qald_json import string_answers, check_item, split_keywords, unique_items
from kgqa.model import BooleanAnswer, Dataset, InputError, Item, Prediction, Problem, Run, TableAnswer
from kgqa.model.answer import Answer
from kgqa.model.terms import IRI, XSD, Literal, Term, looks_like_iri

_INT = re.compile(r"^[+-]?\d+$")
_DEC = re.compile(r"^[+-]?(\d+\.\d*|\.\d+)$")
_DBL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)[eE][+-]?\d+$")
_DATE = re.compile(r"^-?\d{4,}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")


def _text(el: ET.Element | None) -> str:
    return "" if el is None else "".join(el.itertext()).strip()


def _number(text: str) -> Literal:
    if _INT.match(text):
        return Literal(text, XSD + "integer")
    if _DEC.match(text):
        return Literal(text, XSD + "decimal")
    if _DBL.match(text):
        return Literal(text, XSD + "double")
    return Literal(text)


def _date(text: str) -> Literal:
    if _DATE.match(text):
        return Literal(text, XSD + "date")
    if _DATETIME.match(text):
        return Literal(text, XSD + "dateTime")
    return Literal(text)


def _attr_value(v: str) -> Any:
    return {"true": True, "false": False}.get(v.strip().lower(), v)


def parse_answers(el: ET.Element, answer_type: str | None = None) -> Answer:
    """The answer of an ``<answers>`` element (see module docstring). Raises ValueError."""
    terms: list[Term] = []
    booleans: list[bool] = []
    answers = el.findall("answer")
    texts = [_text(a) for a in answers if not list(a)]
    if texts and len(texts) == len(answers):
        # QALD-5's text-only answers: read as the same edition's JSON reads its strings
        return string_answers([{"string": t} for t in texts if t], answer_type)
    for i, ans in enumerate(answers):
        children = list(ans)
        if not children:
            text = _text(ans)
            if text:
                terms.append(IRI(text) if looks_like_iri(text) and text.startswith(("http://", "https://")) else Literal(text))
            continue
        for child in children:
            tag = child.tag.lower()
            text = _text(child)
            if tag == "uri":
                terms.append(IRI(text))
            elif tag == "number":
                terms.append(_number(text))
            elif tag == "date":
                terms.append(_date(text))
            elif tag in ("string", "literal"):
                terms.append(Literal(text))
            elif tag == "boolean":
                b = text.lower()
                if b not in ("true", "false"):
                    raise ValueError(f"answer {i + 1}: <boolean> must be true or false, got {text!r}")
                booleans.append(b == "true")
            else:
                raise ValueError(
                    f"answer {i + 1}: unknown answer element <{child.tag}> "
                    "(expected uri, number, date, string or boolean)"
                )
    if booleans:
        if terms:
            raise ValueError("answers mix <boolean> with other values")
        return BooleanAnswer(booleans[0])
    return TableAnswer.single_column(terms)


def parse_question(q: ET.Element, file: str, record: str, problems: list[Problem]) -> Item | None:
    qid = (q.get("id") or "").strip()
    if not qid:
        problems.append(Problem(file, record, "<question> has no id attribute; skipped"))
        return None
    questions: dict[str, str] = {}
    paraphrases: dict[str, list[str]] = {}
    keywords: dict[str, list[str]] = {}
    for s in q.findall("string"):
        lang = s.get("lang") or "en"
        text = _text(s)
        if not text:
            continue
        if lang in questions:
            paraphrases.setdefault(lang, []).append(text)
        else:
            questions[lang] = text
    for k in q.findall("keywords"):
        lang = k.get("lang") or "en"
        kw = split_keywords(_text(k))
        if kw and lang not in keywords:
            keywords[lang] = kw
    sparql = _text(q.find("query")) or None
    metadata: dict[str, Any] = {k: _attr_value(v) for k, v in q.attrib.items() if k not in ("id", "answertype")}
    if sparql is not None and sparql.upper() == "OUT OF SCOPE":  # QALD-5 marks these (as its JSON)
        sparql = None
        metadata["query"] = {"out_of_scope": True}
    pseudo = _text(q.find("pseudoquery"))
    if pseudo:
        metadata["pseudoquery"] = pseudo
    if paraphrases:
        metadata["paraphrases"] = paraphrases
    answers_el = q.find("answers")
    answer: Answer | None = None
    if answers_el is not None:
        try:
            answer = parse_answers(answers_el, q.get("answertype"))
        except ValueError as e:
            problems.append(Problem(file, record, f"{e}; skipped"))
            return None
    item = Item(id=qid, questions=questions, sparql=sparql, answer=answer,
                answer_type=q.get("answertype"), keywords=keywords, metadata=metadata)
    check_item(item, file, record, problems)
    return item


def load_qald_xml_dataset(paths: list[Path], **options: Any) -> Dataset:
    items: list[Item] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    name = ""
    for path in paths:
        root = read_xml(path)
        if root.tag != "dataset":
            raise InputError(path, f"not QALD XML: root element is <{root.tag}>, expected <dataset>")
        name = name or root.get("id") or Path(path).stem
        file = str(path)
        parsed = []
        for i, q in enumerate(root.findall("question")):
            rec = f"question id {q.get('id')}" if q.get("id") else f"question #{i + 1}"
            it = parse_question(q, file, rec, problems)
            if it is not None:
                parsed.append((rec, it))
        items += unique_items(parsed, file, problems, seen)
    return Dataset(name or Path(paths[0]).stem, items, "qald-xml", list(paths), problems, {"id": name})


def load_qald_xml_run(paths: list[Path], dataset: Dataset | None = None, **options: Any) -> Run:
    """System answers in QALD XML (GERBIL accepts them; QALD-3..5 systems published theirs so):
    each question a :class:`~kgqa.model.Prediction` with its query and answer, read exactly as
    the dataset loader reads a question (``<answers/>``: an empty answer; no ``<answers>``: no
    answer)."""
    ds = load_qald_xml_dataset(paths, **options)
    preds = [Prediction(it.id, sparql=it.sparql, answer=it.answer,
                        metadata={"questions": it.questions} if it.questions else {}) for it in ds.items]
    problems = [p for p in ds.problems if p.severity == "error"]  # a run needs no question text
    return Run(str(ds.metadata.get("id") or Path(paths[0]).stem), preds, "qald-xml", list(paths), problems)


def sniff(sample: formats.Sample) -> float:
    head = sample.head.lstrip()
    if not head.startswith("<"):
        return 0.0
    if "<dataset" in head and "<question" in head:
        return 0.9
    if "<dataset" in head:
        return 0.4
    return 0.0


DATASET = formats.register(formats.Format(
    name="qald-xml",
    kind="dataset",
    description="legacy QALD XML (QALD-1..5, QALD-7 XML): <dataset><question>...<answers>",
    sniff=sniff,
    load=load_qald_xml_dataset,
    extensions=(".xml",),
))

RUN = formats.register(formats.Format(
    name="qald-xml",
    kind="run",
    description="system answers in legacy QALD XML (as GERBIL accepts them): <dataset><question>...<answers>",
    sniff=sniff,
    load=load_qald_xml_run,
    extensions=(".xml",),
))
