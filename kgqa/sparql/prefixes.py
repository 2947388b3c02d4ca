"""The standard prefix table: namespaces that KGQA benchmarks use without declaring them.

Endpoints such as DBpedia's Virtuoso and the Wikidata Query Service predeclare these, so gold
and predicted queries routinely use ``dbo:``, ``wdt:`` and friends without a ``PREFIX`` line.
The analyzer resolves an undeclared prefix through this table (and lists it as undeclared).
"""

from __future__ import annotations

STANDARD_PREFIXES: dict[str, str] = {
    # W3C
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "skosxl": "http://www.w3.org/2008/05/skos-xl#",
    "prov": "http://www.w3.org/ns/prov#",
    "void": "http://rdfs.org/ns/void#",
    "dcat": "http://www.w3.org/ns/dcat#",
    "org": "http://www.w3.org/ns/org#",
    "sh": "http://www.w3.org/ns/shacl#",
    "time": "http://www.w3.org/2006/time#",
    "vcard": "http://www.w3.org/2006/vcard/ns#",
    "fn": "http://www.w3.org/2005/xpath-functions#",
    "geo": "http://www.opengis.net/ont/geosparql#",
    "geof": "http://www.opengis.net/def/function/geosparql/",
    "wgs84": "http://www.w3.org/2003/01/geo/wgs84_pos#",
    "wgs84_pos": "http://www.w3.org/2003/01/geo/wgs84_pos#",
    "ogc": "http://www.opengis.net/ont/geosparql#",
    # Dublin Core, FOAF, schema.org
    "dc": "http://purl.org/dc/elements/1.1/",
    "dct": "http://purl.org/dc/terms/",
    "dcterms": "http://purl.org/dc/terms/",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "schema": "http://schema.org/",
    "sioc": "http://rdfs.org/sioc/ns#",
    # DBpedia (the Virtuoso endpoint's predeclared set)
    "dbo": "http://dbpedia.org/ontology/",
    "dbr": "http://dbpedia.org/resource/",
    "dbp": "http://dbpedia.org/property/",
    "dbc": "http://dbpedia.org/resource/Category:",
    "dbpedia-owl": "http://dbpedia.org/ontology/",
    "dbpedia": "http://dbpedia.org/resource/",
    "dbpedia2": "http://dbpedia.org/property/",
    "onto": "http://dbpedia.org/ontology/",
    "bif": "http://www.openlinksw.com/schemas/bif#",
    "xml": "http://www.w3.org/XML/1998/namespace",
    "dbpprop": "http://dbpedia.org/property/",
    "res": "http://dbpedia.org/resource/",
    "yago": "http://dbpedia.org/class/yago/",
    "georss": "http://www.georss.org/georss/",
    # Wikidata (the Wikidata Query Service's predeclared set)
    "wd": "http://www.wikidata.org/entity/",
    "wdt": "http://www.wikidata.org/prop/direct/",
    "wdtn": "http://www.wikidata.org/prop/direct-normalized/",
    "wds": "http://www.wikidata.org/entity/statement/",
    "wdv": "http://www.wikidata.org/value/",
    "wdref": "http://www.wikidata.org/reference/",
    "wdno": "http://www.wikidata.org/prop/novalue/",
    "wdata": "http://www.wikidata.org/wiki/Special:EntityData/",
    "p": "http://www.wikidata.org/prop/",
    "ps": "http://www.wikidata.org/prop/statement/",
    "psv": "http://www.wikidata.org/prop/statement/value/",
    "psn": "http://www.wikidata.org/prop/statement/value-normalized/",
    "pq": "http://www.wikidata.org/prop/qualifier/",
    "pqv": "http://www.wikidata.org/prop/qualifier/value/",
    "pqn": "http://www.wikidata.org/prop/qualifier/value-normalized/",
    "pr": "http://www.wikidata.org/prop/reference/",
    "prv": "http://www.wikidata.org/prop/reference/value/",
    "prn": "http://www.wikidata.org/prop/reference/value-normalized/",
    "wikibase": "http://wikiba.se/ontology#",
    "bd": "http://www.bigdata.com/rdf#",
    "hint": "http://www.bigdata.com/queryHints#",
    "ontolex": "http://www.w3.org/ns/lemon/ontolex#",
    "dct-type": "http://purl.org/dc/dcmitype/",
}

__all__ = ["STANDARD_PREFIXES"]
