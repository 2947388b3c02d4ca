"""Benchmark generation from any knowledge graph, after Su et al. (2016), GraphQuestions:
characteristic-rich question sets whose graph queries vary on purpose in structure (edges),
function, commonness, answer cardinality and paraphrase.

One module per concept: :mod:`~kgqa.make.generate.schema` (ontology or induced schema),
:mod:`~kgqa.make.generate.templates` (random template growth), :mod:`~kgqa.make.generate.functions`,
:mod:`~kgqa.make.generate.graphquery` (graph queries and their SPARQL),
:mod:`~kgqa.make.generate.grounding`, :mod:`~kgqa.make.generate.minimization`,
:mod:`~kgqa.make.generate.commonness` (Eq. 1), :mod:`~kgqa.make.generate.language` (labels, canonical
question, entity paraphrases), :mod:`~kgqa.make.generate.paraphrase` (annotation export/import,
paraphraser hook), :mod:`~kgqa.make.generate.output`, :mod:`~kgqa.make.generate.summary`,
:mod:`~kgqa.make.generate.pipeline` (the loop), :mod:`~kgqa.make.generate.kg` (the only module that runs
queries, through kgqa's engines).

:func:`generate` is the whole job (``kgqa generate`` calls it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgqa.make.generate.functions import PAPER_SHARES, parse_function_shares, parse_functions
from kgqa.make.generate.kg import KGAccess, QueryFailed
from kgqa.make.generate.paraphrase import add_paraphrases
from kgqa.model.problems import InputError
from kgqa.make.generate.pipeline import GenerateOptions, parse_edges
from kgqa.model.item import Dataset
from kgqa import __version__
from kgqa.make.generate.commonness import Commonness, read_frequencies, structural_relations, subsumed_relations
from kgqa.make.generate.functions import default_shares
from kgqa.make.generate.language import Lexicon, faithfulness, read_lexicon
from kgqa.make.generate.lexicon import RelationLexicon, read_relation_lexicon
from kgqa.make.generate.output import build_dataset, write_dataset
from kgqa.make.generate.paraphrase import write_annotation
from kgqa.make.generate.paraphraser import load_paraphraser
from kgqa.make.generate.pipeline import run
from kgqa.make.generate.schema import (induce_schema, label_properties, path_texts, schema_from_ontology, untype_classes,
                                       value_kind)
from kgqa.make.generate.summary import summarize

#: the KG names its entities when at least this share of them has a label: then a question
#: whose answers mostly have none (time-spans, parthood nodes) is not published
NAMED_SHARE = 0.2

__all__ = ["generate", "add_paraphrases", "GenerateResult", "GenerateOptions", "parse_edges", "parse_functions", "parse_function_shares",
           "PAPER_SHARES", "KGAccess"]


@dataclass
class GenerateResult:
    dataset: Dataset
    summary: dict[str, Any]
    written: list[str] = field(default_factory=list)
    queries: int = 0
    queries_executed: int = 0


def check_base(access: KGAccess, base: str | None, where: str) -> None:
    """Refuse a KG whose relative IRIs were resolved against its file's location (``file:``
    IRIs) when no ``--base`` was given: gold answers would depend on where the file lies."""
    if base:
        return
    q = ("SELECT ?s WHERE { ?s ?p ?o . FILTER(STRSTARTS(STR(?s), \"file:\") || "
         "(isIRI(?o) && STRSTARTS(STR(?o), \"file:\"))) } LIMIT 1")
    try:
        rows = access.select(q).rows
    except QueryFailed:  # a KG too large to scan in time (an endpoint) is not refused for it
        return
    if rows:
        raise InputError(where, f"the KG has relative IRIs (resolved against the file's location, e.g. "
                                f"{rows[0][0].value}): give the IRI they are relative to with --base, "
                                "e.g. --base https://example.org/")


# long function: the generation command's steps in order (open KG, schema, lexicon, loop, paraphrases, summary), each a call; split further it would pass the same dozen values between pieces
def generate(kg: str | Path | Sequence[str | Path] | KGAccess, options: GenerateOptions | None = None, *,
             output: str | Path | None = None, ontology: str | Path | None = None,
             graph: str | None = None, frequencies: str | Path | None = None,
             lexicon: str | Path | None = None, lang: str = "en",
             exclude_relations: Sequence[str] = (), annotation: str | Path | None = None,
             paraphraser: str | Callable | None = None, timeout: float | None = None,
             max_rows: int | None = None,
             progress: Callable[[int], None] | None = None, engine_options: dict[str, Any] | None = None,
             cache: bool | str | Path = False, label_predicate: str | None = None) -> GenerateResult:
    """Generate ``options.n`` graph queries from ``kg`` (a ``--kg`` value or an open
    :class:`KGAccess`), build the dataset (canonical question + paraphrases per graph query) and
    write it to ``output`` (``.json`` QALD JSON, ``.jsonl`` JSONL) and the annotation export to
    ``annotation``. ``progress(k)`` is called as graph queries are accepted. ``cache`` (False,
    True for the user cache, or a file) keeps every query outcome so that a killed run resumes
    (see :mod:`kgqa.make.generate.kg`). ``label_predicate``: the KG's label property (an IRI, in
    angle brackets or not; default: rdfs:label, else found, see :func:`kgqa.make.generate.schema.label_properties`); it is never a
    relation of a question.

    Every accepted graph query passed the faithfulness check (its question says every edge,
    grounded node and function) and has a text no other graph query has; the summary's
    ``rejected`` counts those that did not (``unfaithful``, ``duplicate-text``) and
    ``faithfulness_failures`` re-checks the dataset built (0)."""

    opts = options or GenerateOptions()
    para = load_paraphraser(paraphraser) if isinstance(paraphraser, str) else paraphraser
    table = read_frequencies(frequencies) if frequencies else None
    user_lex, rel_lex = None, None
    if lexicon and Path(lexicon).suffix.lower() in (".yaml", ".yml", ".json"):
        rel_lex = read_relation_lexicon(lexicon)
    elif lexicon:
        user_lex = read_lexicon(lexicon)
    own = not isinstance(kg, KGAccess)
    access = KGAccess.open(kg, graph, cache=cache, **(engine_options or {})) if own else kg
    if timeout is not None:
        access.timeout = timeout
    if max_rows is not None:
        access.max_rows = max_rows
    try:
        try:
            check_base(access, (engine_options or {}).get("base"), str(kg) if own else access.signature)
            labels = label_properties(access, label_predicate.strip("<>") if label_predicate else None)
            exclude = (*exclude_relations, *labels)
            schema = schema_from_ontology(ontology, access, exclude) if ontology else \
                induce_schema(access, exclude)
        except QueryFailed as e:
            raise InputError(str(kg) if own else access.signature,
                             f"cannot read the schema from the KG ({e.status}: {e.message})") from None
        if not schema.relations:
            raise InputError(str(ontology or kg) if own or ontology else access.signature,
                             "no relation to build questions from (the KG has no triples between IRIs "
                             "or to literals, apart from labels and schema vocabulary"
                             + (", or the ontology declares none the KG uses)" if ontology else ")"))
        onto = KGAccess.open(ontology) if ontology else None
        try:
            relations = RelationLexicon([access] + ([onto] if onto else []), rel_lex, lang)
            for rel, text in path_texts(schema.relations, relations.get).items():  # through blank nodes
                relations.user.setdefault(rel, text)
            opaque = relations.opaque(schema.relations)
        finally:
            if onto is not None:
                onto.close()
        for r in opaque:  # never said in a question (module lexicon)
            del schema.relations[r]
        positional = sorted(r for r, rel in schema.relations.items() if not rel.range and rel.datatypes and
                            all(value_kind(d) == "number" for d in rel.datatypes) and relations.get(r).positional)
        for r in positional:  # a position in a sequence ("order"): no template spends queries on it
            del schema.relations[r]
        if not schema.relations:
            raise InputError(str(kg) if own else access.signature,
                             f"none of the KG's {len(opaque)} relations can be said in English (opaque names "
                             f"such as {', '.join(opaque[:3])} and no label): give their words with "
                             "--lexicon FILE.yaml (IRI: phrase)")
        subsumed = subsumed_relations(access, schema)
        for r in subsumed:  # a second, narrower way to ask what another relation asks
            del schema.relations[r]
        lex = Lexicon(access, lang, user_lex, label_properties=labels, relations=relations)
        lex.multivalued = {r.iri for r in schema.relations.values() if not r.functional}
        lex.structural = structural_relations(access, schema, labels)
        lex.fetch(list(schema.classes))
        untype_classes(schema, [c for c in schema.classes if lex.class_name(c) == "thing"])
        common = Commonness(access, schema, table)
        lex.require_labels = bool(access.select(f"SELECT ?s WHERE {{ ?s <{labels[0]}> ?l }} LIMIT 1").rows)
        named = access.select(f"SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s <{labels[0]}> ?l . FILTER(isIRI(?s)) }}").rows
        lex.names_entities = bool(named) and int(named[0][0].value) >= NAMED_SHARE * schema.stats.get("entities", 0)
        res = run(access, schema, common, opts, progress, lex)
        meta = {"id": "kgqa-generate", "generator": f"kgqa {__version__} generate (Su et al. 2016)",
                "kg": access.signature, "schema": schema.source, "seed": opts.seed, "n": opts.n,
                "edges": f"{opts.edges[0]}-{opts.edges[1]}", "functions": list(opts.functions),
                "function_shares": dict(opts.shares or default_shares(opts.functions)), "label_predicate": labels[0],
                "min_commonness": opts.min_commonness, "keep_redundant": opts.keep_redundant}
        ds = build_dataset(res.queries, lex, lang=lang, paraphraser=para, metadata=meta)
        summary = summarize(ds, res.rejected, {"schema_classes": len(schema.classes),
                                               "schema_relations": len(schema.relations),
                                               "templates_tried": res.attempts,
                                               "opaque_relations": opaque,
                                               "subsumed_relations": subsumed,
                                               "positional_relations": positional,
                                               "unreadable_reasons": dict(res.unreadable.most_common(5)),
                                               "faithfulness_failures": sum(1 for g in res.queries
                                                                            if faithfulness(g.query, lex, g.question))})
        written = []
        if output is not None:
            write_dataset(ds, output)
            written.append(str(output))
        if annotation is not None:
            write_annotation(ds, annotation)
            written.append(str(annotation))
        return GenerateResult(ds, summary, written, access.queries, access.executed)
    finally:
        if own:
            access.close()
