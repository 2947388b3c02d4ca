"""A KG made for the tests in the shape of a real public KG nobody on the project wrote: the
Nobel Prize Linked Data set (data.nobelprize.org, CC0; its terms, resource IRIs and classes),
as a student would publish it: ``foaf:name`` as the only label (no ``rdfs:label``), an ontology
header with version, creator and licence, award motivations of 80-200 characters, numeric
identifiers (``nobel:nobelId``), people sharing a birth year, a year stored as ``xsd:gYear``
beside an integer one. Deterministic (seeded): ``write_kg(path)`` always writes the same bytes.
"""

from __future__ import annotations

import random
from pathlib import Path

NOBEL = "http://data.nobelprize.org/terms/"
RES = "http://data.nobelprize.org/resource/"
DBO = "http://dbpedia.org/ontology/"
CATEGORIES = ("Physics", "Chemistry", "Medicine", "Literature", "Peace", "Economic Sciences")
SYL = ("an", "bel", "cor", "da", "el", "fin", "gor", "hal", "is", "jon", "ka", "lin", "mar", "nor", "os",
       "per", "quin", "ros", "sten", "tor", "ul", "ven", "wal", "yr", "zel")
WORDS = ("discoveries", "concerning", "the", "structure", "of", "matter", "for", "his", "her", "their",
         "work", "on", "theory", "quantum", "cells", "novel", "methods", "peace", "efforts", "in",
         "understanding", "nuclear", "reactions", "poetry", "that", "with", "rare", "clarity", "human")


def _name(rng: random.Random, parts: int = 2) -> str:
    return "".join(rng.choice(SYL) for _ in range(parts)).capitalize()


def _lit(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build(seed: int = 7, laureates: int = 240) -> str:
    rng = random.Random(seed)
    out = [f"@prefix nobel: <{NOBEL}> .", f"@prefix dbo: <{DBO}> .",
           "@prefix foaf: <http://xmlns.com/foaf/0.1/> .", "@prefix owl: <http://www.w3.org/2002/07/owl#> .",
           "@prefix dcterms: <http://purl.org/dc/terms/> .", "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .",
           "@prefix void: <http://rdfs.org/ns/void#> .", ""]
    out += [f"<{NOBEL}> a owl:Ontology ; owl:versionInfo \"0.3-student\" ; dcterms:creator \"A. Student\" ;",
            "    dcterms:license <https://creativecommons.org/publicdomain/zero/1.0/> ; dcterms:created \"2019-03-01\"^^xsd:date .",
            f"<{RES}dataset> a void:Dataset ; void:triples 9000 ; dcterms:title \"Nobel prizes (student copy)\" .", ""]
    countries = [f"{_name(rng, 3)}ia" for _ in range(14)]
    for i, c in enumerate(countries):
        out.append(f"<{RES}country/{i}> a dbo:Country ; foaf:name {_lit(c)} .")
    cities = []
    for i in range(40):
        cities.append(i)
        out.append(f"<{RES}city/{i}> a dbo:City ; foaf:name {_lit(_name(rng, 2) + 'burg')} ; "
                   f"dbo:country <{RES}country/{rng.randrange(len(countries))}> .")
    for i in range(24):
        out.append(f"<{RES}university/{i}> a dbo:University ; foaf:name {_lit('University of ' + _name(rng, 3))} ; "
                   f"dbo:city <{RES}city/{rng.randrange(40)}> .")
    for i, c in enumerate(CATEGORIES):
        out.append(f"<{RES}category/{c.replace(' ', '_')}> a nobel:Category ; foaf:name {_lit(c)} .")
    prizes = []
    for year in range(1950, 1990):
        for c in CATEGORIES[: 3 + year % 4]:
            pid = f"{RES}nobelprize/{c.replace(' ', '_')}/{year}"
            prizes.append(pid)
            out.append(f"<{pid}> a nobel:NobelPrize ; foaf:name {_lit(f'The Nobel Prize in {c} {year}')} ; "
                       f"nobel:category <{RES}category/{c.replace(' ', '_')}> ; nobel:year {year} ; "
                       f"dcterms:date \"{year}\"^^xsd:gYear .")
    for i in range(laureates):
        lid = f"{RES}laureate/{i + 1}"
        gender = rng.choice(("male", "female"))
        given, family = _name(rng, 2), _name(rng, 3)
        birth = f"{rng.randrange(1880, 1950)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
        out.append(f"<{lid}> a nobel:Laureate , foaf:Person ; foaf:name {_lit(given + ' ' + family)} ; "
                   f"foaf:givenName {_lit(given)} ; foaf:familyName {_lit(family)} ; foaf:gender {_lit(gender)} ; "
                   f"foaf:birthday \"{birth}\"^^xsd:date ; dbo:birthPlace <{RES}city/{rng.randrange(40)}> ; "
                   f"nobel:nobelId {4674000 + rng.randrange(100000)} .")
        if rng.random() < 0.7:
            out.append(f"<{lid}> dbo:affiliation <{RES}university/{rng.randrange(24)}> .")
        prize = prizes[i % len(prizes)]
        aid = f"{RES}laureateaward/{i + 1}"
        motivation = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(14, 30)))
        out.append(f"<{aid}> a nobel:LaureateAward ; nobel:laureate <{lid}> ; nobel:nobelPrize <{prize}> ; "
                   f"nobel:share {rng.choice((1, 2, 2, 3, 4))} ; nobel:motivation {_lit(motivation)}@en ; "
                   f"nobel:year {prize.rsplit('/', 1)[1]} .")
        out.append(f"<{lid}> nobel:laureateAward <{aid}> ; nobel:nobelPrize <{prize}> .")
    return "\n".join(out) + "\n"


def write_kg(path: str | Path, seed: int = 7) -> Path:
    p = Path(path)
    p.write_text(build(seed), encoding="utf-8")
    return p


if __name__ == "__main__":
    import sys

    write_kg(sys.argv[1] if len(sys.argv) > 1 else "nobel-shaped.ttl")
