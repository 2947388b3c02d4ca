"""GraphQuestions (Su et al., EMNLP 2016): the dataset JSON and the ``.res`` run format.

**Dataset** (ysu1989/GraphQuestions ``freebase13/graphquestions.{training,testing}.json``,
described in the repository's ``specification.md``): a JSON array of question objects with
``qid``, ``question`` (lower-cased), ``answer`` (a list of strings), ``function``
(``none``, ``count``, ``max``, ``min``, ``argmax``, ``argmin``, ``>``, ``>=``, ``<``,
``<=``), ``commonness`` (log10 probability of the graph query), ``num_node``,
``num_edge``, ``graph_query`` (nodes and edges) and ``sparql_query`` (Freebase).

- ``id``: ``qid`` as a decimal string. The specification: "The right-most two digits are for
  entity paraphrases, the middle four digits are for sentence paraphrases, and the rest
  comprise the id of the corresponding graph query". Hence
  ``groups["paraphrase"] = str(qid // 10**6)`` (the graph query: all paraphrases of one
  question share it; this is the ``tid = qid / 1000000`` of the official ``evaluate.py``),
  ``metadata["sentence_paraphrase"] = qid // 100 % 10**4`` and
  ``metadata["entity_paraphrase"] = qid % 100``;
- ``groups["function"]``: the function *category* the official script groups by:
  ``none``, ``count``, ``superlative`` (max, min, argmax, argmin) or ``comparative``
  (>, >=, <, <=) (Section 3.1 of the paper); the raw ``function`` is kept in metadata;
- ``answer``: a one-column table over ``answer`` of **simple literals**. The answers are
  Freebase canonical names (``type.object.name``) for entities and lexical forms without
  datatype for literals ("We provide answers in human readable form instead of Freebase
  specific form like mid"), so they are text, never IRIs: they are not typed with
  ``guess_term``. Order and duplicates (present in the release) are kept: the official
  F1 works on lists. The GrailQA-style variant whose answers are objects
  ``{"answer_type": "Entity"|"Value", "answer_argument": ..., "entity_name": ...}`` is also
  read: an entity becomes the IRI ``http://rdf.freebase.com/ns/<mid>`` (its name goes to
  ``metadata["answer_names"]``), a value a simple literal;
- ``sparql``: ``sparql_query``; ``metadata``: ``function``, ``commonness``, ``num_node``,
  ``num_edge``, ``graph_query`` and every other key.

**Run** (``.res``): what the repository's ``evaluate.py`` reads (ysu1989/GraphQuestions
``evaluate.py``, commit 5e651bdb10ad8ee7637963badd43a47e2b68e087; ``standard_evaluation.py``
parses the same way). One line per question, tab
separated, lines starting with ``#`` skipped (the released ``sempre.res`` starts with the
header ``# qid\\ttime\\tanswers\\tpredictions\\tstructure\\tfunction\\tanswer_cardinality\\tcommonness``)::

    qid  time  answers(JSON list)  predictions(JSON list)  structure("nNode,nEdge")  function  answer_cardinality  commonness

evaluate.py parses exactly ``long(qid)``, ``float(time)``, ``json.loads(answers)``,
``json.loads(predictions)``, ``int(structure.split(',')[1])``, ``function`` (as is),
``int(answer_cardinality)`` and ``float(commonness)``, and prints and skips a line where any
of these fails; this loader records such a line as a Problem and skips it the same way
(it also requires both JSON values to be lists, which evaluate.py silently assumes).
Each line becomes a :class:`~kgqa.model.Prediction`: ``id`` = qid, ``answer`` = the
predictions as simple literals (order and duplicates kept), ``elapsed`` = ``time`` as
written, and ``metadata`` = ``gold`` (the answers column), ``num_edge``, ``num_node``,
``function``, ``answer_cardinality``, ``commonness``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kgqa.load import jsonio
from kgqa.load import formats
from kgqa.load.generic import TEXTLESS, load_record_array, note_textless, text_lines, unique
from kgqa.model import Dataset, Item, Prediction, Problem, Run, TableAnswer
from kgqa.model.terms import FREEBASE_NS, IRI, Literal, Term

FUNCTION_CATEGORY = {
    "none": "none",
    "count": "count",
    "max": "superlative", "min": "superlative", "argmax": "superlative", "argmin": "superlative",
    ">": "comparative", ">=": "comparative", "<": "comparative", "<=": "comparative",
    # already-categorised values (as in .res files)
    "superlative": "superlative", "comparative": "comparative",
}


def paraphrase_group(qid: int) -> str:
    """The graph-query id of a question id (``qid // 10**6``): paraphrases share it."""
    return str(qid // 10**6)


def _qid(v: Any) -> int:
    if isinstance(v, bool):
        raise ValueError(f"'qid' must be an integer, got {v!r}")
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    raise ValueError(f"'qid' must be an integer, got {v!r}")


def _answers(raw: Any) -> tuple[list[Term], list[str] | None]:
    if not isinstance(raw, list):
        raise ValueError(f"'answer' must be a list, got {type(raw).__name__}")
    terms: list[Term] = []
    names: list[str] = []
    structured = False
    for i, a in enumerate(raw, start=1):
        if isinstance(a, str):
            terms.append(Literal(a))
            names.append(a)
        elif isinstance(a, (int, float)) and not isinstance(a, bool):
            terms.append(Literal(str(a)))
            names.append(str(a))
        elif isinstance(a, dict) and isinstance(a.get("answer_argument"), str):
            structured = True
            arg = a["answer_argument"]
            if a.get("answer_type") == "Entity":
                terms.append(IRI(FREEBASE_NS + arg))
                names.append(str(a.get("entity_name", arg)))
            else:
                terms.append(Literal(arg))
                names.append(arg)
        else:
            raise ValueError(f"answer {i} must be a string (or an answer object), got {a!r}")
    return terms, (names if structured else None)


def parse_question(rec: Any, file: str, record: str, problems: list[Problem]) -> Item:
    """An Item from one question object; raises ValueError for a record to skip."""
    if not isinstance(rec, dict):
        raise ValueError(f"expected a question object, got {type(rec).__name__}")
    qid = _qid(rec.get("qid"))
    question = rec.get("question")
    if question is not None and not isinstance(question, str):
        raise ValueError(f"'question' must be a string, got {type(question).__name__}")
    if not question or not question.strip():
        problems.append(Problem(file, record, TEXTLESS, "warning"))  # evaluate.py never reads the text
    if "answer" not in rec:
        raise ValueError("no 'answer' list")
    terms, names = _answers(rec["answer"])
    if not terms:
        problems.append(Problem(file, record, "empty 'answer' list (the official evaluate.py refuses an empty gold list)", "warning"))
    function = rec.get("function")
    groups = {"paraphrase": paraphrase_group(qid)}
    if isinstance(function, str):
        cat = FUNCTION_CATEGORY.get(function.strip())
        if cat is None:
            problems.append(Problem(file, record, f"unknown function {function!r} (expected one of: {', '.join(k for k in FUNCTION_CATEGORY if k not in ('superlative', 'comparative'))})", "warning"))
        else:
            groups["function"] = cat
    sparql = rec.get("sparql_query")
    if sparql is not None and not isinstance(sparql, str):
        raise ValueError("'sparql_query' must be a string")
    metadata = {k: v for k, v in rec.items() if k not in ("qid", "question", "answer", "sparql_query")}
    metadata["sentence_paraphrase"] = qid // 100 % 10**4
    metadata["entity_paraphrase"] = qid % 100
    if names is not None:
        metadata["answer_names"] = names
    return Item(str(qid), {"en": question.strip()} if question and question.strip() else {}, sparql,
                TableAnswer.single_column(terms, "answer"), None, {}, groups, metadata)


def load_graphquestions_dataset(paths: list[Path], **options: Any) -> Dataset:
    ds = load_record_array(paths, lambda rec, i, file, record, problems: parse_question(rec, file, record, problems),
                           format_name="graphquestions", what="GraphQuestions JSON", id_key="qid", id_label="qid")
    ds.problems[:] = note_textless(ds.problems)
    return ds


# --------------------------------------------------------------------------- .res runs

RES_COLUMNS = ("qid", "time", "answers", "predictions", "structure", "function", "answer_cardinality", "commonness")


def parse_res_line(line: str) -> dict[str, Any]:
    """The fields of one ``.res`` line, parsed as the official evaluate.py does; raises
    ValueError (naming the column) where evaluate.py would print and skip the line."""
    tokens = line.split("\t")
    if len(tokens) < len(RES_COLUMNS):
        raise ValueError(f"{len(tokens)} tab-separated columns, expected {len(RES_COLUMNS)} ({', '.join(RES_COLUMNS)})")

    def col(i: int, conv):
        try:
            return conv(tokens[i])
        except (ValueError, IndexError, json.JSONDecodeError) as e:
            raise ValueError(f"column {i + 1} ({RES_COLUMNS[i]}) {tokens[i].strip()!r}: {e}") from None

    out = {
        "qid": col(0, int),
        "time": col(1, float),
        "answers": col(2, jsonio.loads),
        "predictions": col(3, jsonio.loads),
        "num_edge": col(4, lambda t: int(t.split(",")[1])),
        "function": tokens[5],
        "answer_cardinality": col(6, int),
        "commonness": col(7, float),
    }
    out["num_node"] = int(tokens[4].split(",")[0]) if tokens[4].split(",")[0].strip().lstrip("-").isdigit() else None
    for key in ("answers", "predictions"):
        if not isinstance(out[key], list):
            raise ValueError(f"column {RES_COLUMNS.index(key) + 1} ({key}) must be a JSON list, got {type(out[key]).__name__}")
    return out


def load_graphquestions_run(paths: list[Path], dataset: Dataset | None = None, **options: Any) -> Run:
    problems: list[Problem] = []
    parsed = []
    for path in paths:
        file = str(path)
        for n, line in enumerate(text_lines(path), start=1):
            if len(line) == 0 or line[0] == "#":
                continue
            record = f"line {n}"
            try:
                f = parse_res_line(line)
            except ValueError as e:
                problems.append(Problem(file, record, f"{e}; skipped (as the official evaluate.py does)"))
                continue
            answer = TableAnswer.single_column([Literal(str(p)) for p in f["predictions"]], "answer")
            md = {k: f[k] for k in ("num_node", "num_edge", "function", "answer_cardinality", "commonness")}
            md["gold"] = f["answers"]
            parsed.append((file, record, Prediction(str(f["qid"]), None, answer, None, f["time"], metadata=md)))
    return Run(Path(paths[0]).stem, unique(parsed, problems), "graphquestions-res", list(paths), problems)


# --------------------------------------------------------------------------- registration

_RES_LINE = re.compile(r"^-?\d+\t[^\t]*\t\[.*\]\t\[.*\]\t[^\t]*,[^\t]*\t", re.M)


def sniff_dataset(sample: formats.Sample) -> float:
    h = sample.head
    if not h.lstrip().startswith("["):
        return 0.0
    if '"qid"' in h and ('"graph_query"' in h or ('"num_edge"' in h and '"commonness"' in h)):
        return 0.95
    return 0.0


def sniff_run(sample: formats.Sample) -> float:
    h = sample.head
    if h.startswith("# qid\ttime\tanswers\tpredictions"):
        return 0.95
    if _RES_LINE.search(h):
        return 0.85 if sample.path.suffix.lower() == ".res" else 0.7
    return 0.0


DATASET = formats.register(formats.Format(
    name="graphquestions",
    kind="dataset",
    description="GraphQuestions JSON (ysu1989/GraphQuestions freebase13/graphquestions.*.json)",
    sniff=sniff_dataset,
    load=load_graphquestions_dataset,
    extensions=(".json",),
))

RUN = formats.register(formats.Format(
    name="graphquestions-res",
    kind="run",
    description="GraphQuestions .res result file (TSV read by the official evaluate.py)",
    sniff=sniff_run,
    load=load_graphquestions_run,
    extensions=(".res",),
    aliases=("res",),
))
