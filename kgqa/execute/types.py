"""Facts about answer items looked up on the KG: their rdf:type classes (for GERBIL's AIT2KB
with ``source=kg``) and the redirects that link them (for meaning matching, ``--redirects``).
The lookups are kgqa's own queries, batched with VALUES, never a system's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kgqa.execute.engine import Engine
from kgqa.model import Answer, IRI, Status, TableAnswer
from kgqa.model.labels import LABEL_PREDICATES  # noqa: F401  (re-exported: --match-labels)

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
BATCH = 200


def _iris(answer: Answer | None) -> set[str]:
    if not isinstance(answer, TableAnswer):
        return set()
    return {c.value for row in answer.rows for c in row if isinstance(c, IRI)}


def class_index(engine: Engine, iris: Iterable[str], timeout: float = 30.0) -> tuple[dict[str, set[str]], list[str]]:
    """IRI -> its rdf:type classes, for every IRI given; and the messages of failed batches
    (their IRIs are left out of the index, so the affected questions become undefined)."""
    todo = sorted(set(iris))
    index: dict[str, set[str]] = {}
    failures: list[str] = []
    queries = []
    for i in range(0, len(todo), BATCH):
        chunk = todo[i : i + BATCH]
        values = " ".join(f"<{x}>" for x in chunk if ">" not in x and " " not in x)
        queries.append((chunk, f"SELECT ?s ?t WHERE {{ VALUES ?s {{ {values} }} ?s <{RDF_TYPE}> ?t }}"))
    outcomes = engine.execute_many([q for _, q in queries], timeout=timeout) if queries else []
    for (chunk, _), out in zip(queries, outcomes):
        if out.status is not Status.OK or not isinstance(out.answer, TableAnswer):
            failures.append(out.message or out.status.value)
            continue
        for x in chunk:
            index.setdefault(x, set())
        for s, t in out.answer.rows:
            if isinstance(s, IRI) and isinstance(t, IRI):
                index.setdefault(s.value, set()).add(t.value)
    return index, failures


def answer_types(engine: Engine, gold: Mapping[str, Answer | None], system: Mapping[str, Answer | None],
                 timeout: float = 30.0) -> dict[str, dict[str, list[str]]]:
    """Per question id ``{"gold": [classes], "system": [classes]}``: the union of the classes of
    the answer items on each side, as ``ctx.extra["answer_types"]`` expects. A question whose
    IRIs could not all be looked up is left out (the measure is then undefined for it)."""
    index, _ = class_index(engine, set().union(*(_iris(a) for a in (*gold.values(), *system.values()))), timeout)
    out: dict[str, dict[str, list[str]]] = {}
    for qid in gold:
        sides = {}
        for side, answers in (("gold", gold), ("system", system)):
            iris = _iris(answers.get(qid))
            if any(x not in index for x in iris):
                break
            sides[side] = sorted(set().union(*(index[x] for x in iris))) if iris else []
        else:
            out[qid] = sides
    return out


def _lookup(engine: Engine, iris: Iterable[str], query: str, timeout: float) -> tuple[list[tuple], list[str]]:
    """The rows of ``query`` (a template with ``{values}`` for a VALUES list of IRIs) over every
    IRI given, in batches of :data:`BATCH`, and the messages of failed batches."""
    todo = sorted(x for x in set(iris) if ">" not in x and " " not in x)
    queries = [query.format(values=" ".join(f"<{x}>" for x in todo[i : i + BATCH])) for i in range(0, len(todo), BATCH)]
    rows: list[tuple] = []
    failures: list[str] = []
    for out in (engine.execute_many(queries, timeout=timeout) if queries else []):
        if out.status is not Status.OK or not isinstance(out.answer, TableAnswer):
            failures.append(out.message or out.status.value)
            continue
        rows.extend(out.answer.rows)
    return rows, failures


#: DBpedia's redirect predicate (the ``--redirects`` default)
WIKI_REDIRECTS = "http://dbpedia.org/ontology/wikiPageRedirects"


def iris_of(answers: Iterable[Answer | None]) -> set[str]:
    """Every IRI in the given answers' rows."""
    return set().union(*(_iris(a) for a in answers))


def link_pairs(engine: Engine, iris: Iterable[str], predicate: str = WIKI_REDIRECTS,
               timeout: float = 30.0) -> tuple[list[tuple[str, str]], list[str]]:
    """The (IRI, IRI) pairs ``predicate`` links in either direction, for every IRI given
    (``?x <predicate> ?y`` with ?x or ?y among them), and the messages of failed batches."""
    if not predicate or ">" in predicate or " " in predicate:
        raise ValueError(f"not an IRI: {predicate!r}")
    query = (f"SELECT ?a ?b WHERE {{{{ VALUES ?a {{{{ {{values}} }}}} {{{{ ?a <{predicate}> ?b }}}} UNION "
             f"{{{{ ?b <{predicate}> ?a }}}} FILTER(isIRI(?b)) }}}}")
    rows, failures = _lookup(engine, iris, query, timeout)
    pairs = [(a.value, b.value) for a, b in rows if isinstance(a, IRI) and isinstance(b, IRI)]
    return list(dict.fromkeys(tuple(sorted(p)) for p in pairs)), failures  # each link once


def label_pairs(engine: Engine, iris: Iterable[str], timeout: float = 30.0) -> tuple[list[tuple[str, str]], list[str]]:
    """(IRI, label text) for every label-like literal (:data:`LABEL_PREDICATES`) of the IRIs
    given, and the messages of failed batches."""
    preds = " ".join(f"<{p}>" for p in LABEL_PREDICATES)
    query = f"SELECT ?s ?l WHERE {{{{ VALUES ?s {{{{ {{values}} }}}} VALUES ?p {{{{ {preds} }}}} ?s ?p ?l FILTER(isLiteral(?l)) }}}}"
    rows, failures = _lookup(engine, iris, query, timeout)
    pairs = [(s.value, lab.value) for s, lab in rows if isinstance(s, IRI) and lab is not None]
    return pairs, failures
