"""The generated dataset: kgqa items with every characteristic stored, written as QALD JSON or
JSONL (the formats' own writers, atomically).

One graph query gives a **paraphrase group** of items (``groups["paraphrase"]`` = the graph
query's number): its canonical question, entity-level paraphrases (an alternative label for a
topic entity) and sentence-level paraphrases (imported or from ``--paraphraser``). Ids follow
GraphQuestions: ``qid = graph_query * 10**6 + sentence * 100 + entity`` (canonical: sentence 0,
entity 0), so kgqa's GraphQuestions conventions apply.

Per item: ``groups`` ``paraphrase``, ``template`` (``t<n>``: all groundings of one template,
so ``kgqa split --by template`` keeps paraphrases and groundings together) and ``function``
(the function class); ``metadata``: ``num_edges`` (relation edges), ``num_nodes``,
``function`` (count, max, argmin, >=, ...), ``function_class``, ``commonness`` (log10 p(q)),
``num_answers``, ``answer_cardinality`` (``1`` / ``>1``), ``redundant`` (true only for
queries kept redundant on purpose, with ``redundant_components``), ``removed_components``
(what minimization removed), ``template_id``, ``graph_query`` (nodes, edges, function),
``topic_entities``, ``slots`` ({IRI: label in the question}), ``alternatives`` (alternative
labels per topic entity), ``sentence_paraphrase``, ``entity_paraphrase``, ``paraphrase_source``
(``canonical``, ``entity``, ``import``, ``paraphraser``). ``answertype``: ``resource``,
``number``, ``date`` or ``string``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgqa.load import generic, qald_json
from kgqa.make.generate.graphquery import FUNCTION_CLASSES
from kgqa.make.generate.language import Lexicon, canonical_question, entity_paraphrases, entity_variants
from kgqa.make.generate.paraphraser import call_paraphraser
from kgqa.make.generate.pipeline import Generated
from kgqa.make.generate.schema import value_kind
from kgqa.model.answer import TableAnswer
from kgqa.model.item import Dataset, Item
from kgqa.model.problems import InputError
from kgqa.model.terms import IRI, Literal

QID_GROUP = 10**6


def qid(group: int, sentence: int = 0, entity: int = 0) -> str:
    return str(group * QID_GROUP + sentence * 100 + entity)


def answer_type(answer: TableAnswer) -> str:
    kinds = set()
    for row in answer.rows:
        for c in row:
            if isinstance(c, IRI):
                kinds.add("resource")
            elif isinstance(c, Literal):
                k = value_kind(c.datatype or "")
                kinds.add({"number": "number", "date": "date"}.get(k, "string"))
    if len(kinds) == 1:
        return kinds.pop()
    return "resource" if "resource" in kinds else "string"


def item_for(g: Generated, question: str, sentence: int, entity: int, source: str,
             meta: dict[str, Any], lang: str) -> Item:
    md = dict(meta)
    md.update(sentence_paraphrase=sentence, entity_paraphrase=entity, paraphrase_source=source)
    return Item(id=qid(g.index, sentence, entity), questions={lang: question}, sparql=g.sparql,
                answer=g.answer, answer_type=answer_type(g.answer),
                groups={"paraphrase": str(g.index), "template": f"t{g.template}",
                        "function": FUNCTION_CLASSES[g.query.function.name]},
                metadata=md)


def base_metadata(g: Generated, slots: dict[str, str], lex: Lexicon) -> dict[str, Any]:
    n_ans = len({r for r in g.answer.rows})
    topic = [n.value.value if isinstance(n.value, IRI) else n.value.n3() for n in g.query.topic_entities]
    return {
        "num_edges": len(g.query.edges),
        "num_nodes": len(g.query.nodes),
        "function": g.query.function.name,
        "function_class": g.query.function.cls,
        "commonness": round(g.commonness, 6),
        "num_answers": n_ans,
        "answer_cardinality": "1" if n_ans == 1 else ">1",
        "redundant": bool(g.redundant),
        "redundant_components": list(g.redundant),
        "removed_components": list(g.removed),
        "template_id": f"t{g.template}",
        "graph_query": g.query.to_json(),
        "topic_entities": topic,
        "slots": dict(sorted(slots.items())),
        "alternatives": {iri: lex.alternatives(iri) for iri in sorted(slots)},
    }


def build_dataset(queries: list[Generated], lex: Lexicon, *, name: str = "generated",
                  lang: str = "en", entity_paraphrase_limit: int = 3, paraphraser=None,
                  metadata: dict[str, Any] | None = None) -> Dataset:
    lex.fetch(sorted({iri for g in queries for iri in _iris(g)}))
    items: list[Item] = []
    for g in queries:
        question, slots = canonical_question(g.query, lex)
        meta = base_metadata(g, slots, lex)
        items.append(item_for(g, question, 0, 0, "canonical", meta, lang))
        for e, p in enumerate(entity_paraphrases(question, slots, lex, entity_paraphrase_limit), 1):
            items.append(item_for(g, p, 0, e, "entity", meta, lang))
        if paraphraser is not None:
            for s, p in enumerate(call_paraphraser(paraphraser, question, g, meta), 1):
                items.append(item_for(g, p, s, 0, "paraphraser", meta, lang))
                alts = {iri: lex.alternatives(iri) for iri in slots}
                for e, pe in enumerate(entity_variants(p, slots, alts, entity_paraphrase_limit), 1):
                    items.append(item_for(g, pe, s, e, "paraphraser+entity", meta, lang))
    return Dataset(name, items, "qald-json", metadata=dict(metadata or {}))


def _iris(g: Generated) -> list[str]:
    out = [e.rel for e in g.query.edges]
    out += [n.cls for n in g.query.nodes if n.cls and not n.literal]
    out += [n.value.value for n in g.query.nodes if isinstance(n.value, IRI)]
    return out


def write_dataset(ds: Dataset, path: str | Path) -> str:
    """Write ``ds`` by the extension: ``.jsonl`` -> kgqa JSONL, anything else -> QALD JSON.
    Returns the format written."""
    p = Path(path)
    if p.suffix.lower() == ".jsonl":
        generic.write(ds, p)
        return "jsonl"
    if p.suffix.lower() not in (".json", ""):
        raise InputError(str(p), "output must end in .json (QALD JSON) or .jsonl (JSONL)")
    qald_json.write(ds, p)
    return "qald-json"
