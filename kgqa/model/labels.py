"""The predicates whose literal values name an entity, in order of preference: the one list
every part of kgqa uses (annotation, ``--match-labels``, the label baselines, question
generation). :data:`ALT_LABEL_PREDICATES` name it too but are not its primary name."""

from __future__ import annotations

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SKOS_PREF_LABEL = "http://www.w3.org/2004/02/skos/core#prefLabel"
SKOS_ALT_LABEL = "http://www.w3.org/2004/02/skos/core#altLabel"

#: every label-like predicate, most preferred first
LABEL_PREDICATES: tuple[str, ...] = (
    RDFS_LABEL,
    SKOS_PREF_LABEL,
    SKOS_ALT_LABEL,
    "http://xmlns.com/foaf/0.1/name",
    "http://schema.org/name",
    "https://schema.org/name",
    "http://purl.org/dc/terms/title",
    "http://purl.org/dc/elements/1.1/title",
)

#: alternative names (paraphrases of an entity), never its primary label
ALT_LABEL_PREDICATES: tuple[str, ...] = (
    SKOS_ALT_LABEL,
    "http://schema.org/alternateName",
    "http://xmlns.com/foaf/0.1/nick",
    "http://dbpedia.org/ontology/alias",
)

#: the predicates that give an entity its primary name (LABEL_PREDICATES less the alternatives)
PRIMARY_LABEL_PREDICATES: tuple[str, ...] = tuple(p for p in LABEL_PREDICATES if p not in ALT_LABEL_PREDICATES)
