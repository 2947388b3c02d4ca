"""SimpleDBpediaQA (Azmy et al., COLING 2018): SimpleQuestions migrated to DBpedia.

File shape (castorini/SimpleDBpediaQA ``V1/{train,valid,test}.json``)::

    {"DatasetName": "SimpleDBpediaQA-VALID",
     "Questions": [{"ID": "00020", "Query": "what is a song by john rutter?",
                    "Subject": "http://dbpedia.org/resource/John_Rutter",
                    "FreebasePredicate": "www.freebase.com/music/artist/track",
                    "PredicateList": [{"Predicate": "http://dbpedia.org/ontology/artist",
                                       "Direction": "backward",
                                       "Constraint": "http://dbpedia.org/ontology/MusicalWork"}]}]}

The earlier release (Impavidity/SimpleDBpediaQA ``data/*.json``) spells the keys
``FreebaseRelation``, ``RelatioList`` and ``Relation``; both spellings are read. The revised
files made by the repository's ``revise_data_script/add_redirets_objects.py`` have
``Subject`` as a list (the subject and its redirects) and an ``ObjectList`` of
``{"Objects": [...], "Subject": ..., "Predicate": ...}`` holding the answers found on DBpedia.

**Gold SPARQL.** Section 4.4 of the paper: each mapping rule gives "a list of corresponding
DBpedia predicates, an associated directionality (forward or backward), and an optional type
constraint", listing *all potentially correct* DBpedia predicates for the Freebase one. The
entries of ``PredicateList`` are therefore alternatives, each with its own direction and
constraint; the dataset's own script queries them one by one and pools the objects. The
loader builds, for subject ``S`` and each entry ``(P, direction, C)``, the pattern

- forward:  ``<S> <P> ?x .``
- backward: ``?x <P> <S> .``
- followed, when ``C`` is not null, by ``?x <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <C> .``

and the query is ``SELECT DISTINCT ?x WHERE { PATTERN }`` for a single entry, or the
``UNION`` of the braced patterns (in list order) for several::

    SELECT DISTINCT ?x WHERE {
      { <S> <P1> ?x . }
      UNION
      { ?x <P2> <S> . ?x <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <C2> . }
    }

With several subjects (revised files) the alternatives are every subject with every entry,
subject-major. Characters not allowed inside a SPARQL IRI reference (space, ``<>"{}|^`\\``)
are percent-encoded (the dataset's script does the same for ``"``).

**Item.** ``id``: ``ID`` (e.g. ``"00020"``, unique per split file); ``questions["en"]``:
``Query``; ``answer``: the pooled ``ObjectList`` objects (IRIs / literals typed with
``guess_term``, first occurrence order, duplicates dropped) when present, else None (execute
the query); ``groups["predicate"]``: the first DBpedia predicate; ``metadata``:
``subject``, ``predicates`` (the list as given), ``freebase_predicate`` and every other key
(e.g. ids of the original SimpleQuestions record) unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.generic import unique
from kgqa.load.jsonio import read_json
from kgqa.model import Dataset, InputError, Item, Problem, TableAnswer
from kgqa.model.terms import guess_term

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_IRI_UNSAFE = set(' <>"{}|^`\\') | {chr(c) for c in range(0x21)}


def iri_ref(iri: str) -> str:
    """``<iri>`` with characters that SPARQL forbids in an IRIREF percent-encoded (UTF-8)."""
    out = []
    for ch in iri:
        if ch in _IRI_UNSAFE:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "<" + "".join(out) + ">"


def pattern(subject: str, predicate: str, direction: str, constraint: str | None) -> str:
    """The triple pattern(s) of one predicate-list entry (see the module docstring)."""
    s, p = iri_ref(subject), iri_ref(predicate)
    if direction == "forward":
        text = f"{s} {p} ?x ."
    elif direction == "backward":
        text = f"?x {p} {s} ."
    else:
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
    if constraint:
        text += f" ?x {iri_ref(RDF_TYPE)} {iri_ref(constraint)} ."
    return text


def build_sparql(subjects: list[str], entries: list[tuple[str, str, str | None]]) -> str:
    """The gold query for subjects and (predicate, direction, constraint) entries."""
    patterns = [pattern(s, p, d, c) for s in subjects for (p, d, c) in entries]
    if len(patterns) == 1:
        return f"SELECT DISTINCT ?x WHERE {{ {patterns[0]} }}"
    body = "\n  UNION\n".join(f"  {{ {pt} }}" for pt in patterns)
    return f"SELECT DISTINCT ?x WHERE {{\n{body}\n}}"


def _entries(raw: Any) -> list[tuple[str, str, str | None]]:
    if not isinstance(raw, list) or not raw:
        raise ValueError("'PredicateList' must be a non-empty list")
    out = []
    for i, e in enumerate(raw, start=1):
        if not isinstance(e, dict):
            raise ValueError(f"PredicateList entry {i} is not an object")
        pred = e.get("Predicate", e.get("Relation"))
        if not isinstance(pred, str) or not pred.strip():
            raise ValueError(f"PredicateList entry {i} has no 'Predicate'")
        direction = e.get("Direction")
        if direction not in ("forward", "backward"):
            raise ValueError(f"PredicateList entry {i}: 'Direction' must be 'forward' or 'backward', got {direction!r}")
        constraint = e.get("Constraint")
        if constraint is not None and (not isinstance(constraint, str) or not constraint.strip()):
            raise ValueError(f"PredicateList entry {i}: 'Constraint' must be a class IRI or null, got {constraint!r}")
        out.append((pred.strip(), direction, constraint.strip() if constraint else None))
    return out


def parse_question(rec: Any) -> Item:
    """An Item from one question object; raises ValueError naming what is wrong."""
    if not isinstance(rec, dict):
        raise ValueError(f"expected a question object, got {type(rec).__name__}")
    qid = rec.get("ID")
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or not str(qid).strip():
        raise ValueError("no 'ID'")
    question = rec.get("Query")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("no question text in 'Query'")
    subj = rec.get("Subject")
    subjects = subj if isinstance(subj, list) else [subj]
    if not subjects or not all(isinstance(s, str) and s.strip() for s in subjects):
        raise ValueError(f"'Subject' must be an IRI (or a list of IRIs), got {subj!r}")
    subjects = [s.strip() for s in subjects]
    raw_list = rec["PredicateList"] if "PredicateList" in rec else rec.get("RelatioList")
    entries = _entries(raw_list)
    answer = None
    if rec.get("ObjectList") is not None:
        objs = rec["ObjectList"]
        if not isinstance(objs, list) or not all(isinstance(o, dict) and isinstance(o.get("Objects"), list) for o in objs):
            raise ValueError("'ObjectList' must be a list of objects with an 'Objects' list")
        values = dict.fromkeys(str(v) for o in objs for v in o["Objects"])
        answer = TableAnswer.single_column([guess_term(v) for v in values], "x")
    metadata: dict[str, Any] = {
        "subject": subj,
        "predicates": raw_list,
    }
    fb = rec.get("FreebasePredicate", rec.get("FreebaseRelation"))
    if fb is not None:
        metadata["freebase_predicate"] = fb
    skip = {"ID", "Query", "Subject", "PredicateList", "RelatioList", "FreebasePredicate", "FreebaseRelation", "ObjectList"}
    metadata.update({k: v for k, v in rec.items() if k not in skip})
    if rec.get("ObjectList") is not None:
        metadata["object_list"] = rec["ObjectList"]
    return Item(str(qid).strip(), {"en": question.strip()}, build_sparql(subjects, entries), answer, None, {},
                {"predicate": entries[0][0]}, metadata)


def load_simpledbpediaqa_dataset(paths: list[Path], **options: Any) -> Dataset:
    problems: list[Problem] = []
    parsed = []
    meta: dict[str, Any] = {}
    for path in paths:
        file = str(path)
        doc = read_json(path)
        if isinstance(doc, dict) and isinstance(doc.get("Questions"), list):
            questions = doc["Questions"]
            meta.update({k: v for k, v in doc.items() if k != "Questions"})
        elif isinstance(doc, list):
            questions = doc
        else:
            raise InputError(path, "expected {\"DatasetName\": ..., \"Questions\": [...]} or a JSON array of question objects")
        for i, rec in enumerate(questions):
            record = f"question {i + 1}" + (f" (ID {rec['ID']})" if isinstance(rec, dict) and "ID" in rec else "")
            try:
                parsed.append((file, record, parse_question(rec)))
            except ValueError as e:
                problems.append(Problem(file, record, f"{e}; skipped"))
    name = str(meta.get("DatasetName") or Path(paths[0]).stem)
    return Dataset(name, unique(parsed, problems), "simpledbpediaqa", list(paths), problems, meta)


def sniff(sample: formats.Sample) -> float:
    h = sample.head
    if not h.lstrip().startswith(("{", "[")):
        return 0.0
    if ('"PredicateList"' in h or '"RelatioList"' in h) and '"Subject"' in h:
        return 0.95
    if '"FreebasePredicate"' in h or '"FreebaseRelation"' in h:
        return 0.8
    return 0.0


FORMAT = formats.register(formats.Format(
    name="simpledbpediaqa",
    kind="dataset",
    description="SimpleDBpediaQA JSON (castorini/SimpleDBpediaQA V1/*.json); gold SPARQL built from subject and predicate list",
    sniff=sniff,
    load=load_simpledbpediaqa_dataset,
    extensions=(".json",),
    aliases=("simple-dbpedia-qa",),
))
