"""Training questions over the KG's schema for the ``e2e`` baseline (:mod:`kgqa.baselines.e2e`):
the forms graph-query generation does not make (it puts a constant in every query and returns
one column), worded from the KG's labels (else local names) and answered on the KG like any
generated question.

- **Grouping** (:func:`grouping_questions`): for two classes linked by a predicate (``?y a A .
  ?y p ?x . ?x a B``), *Which B has the most / fewest As?* (``GROUP BY ?x ORDER BY
  DESC(COUNT(DISTINCT ?y)) LIMIT 1``), the same from A's side, and *List the Bs with their
  number of As* (two columns); for a literal property with repeated values (a country, a
  currency) the same by value.
- **Multi-column** (:func:`column_questions`): *List every A with its p* (``SELECT ?x ?v``) for
  the literal properties of a class, and for numbers one edge further on a node only that
  member links to (a price's amount), named by the first predicate.
- **Negation** (:func:`column_questions`): *Which As have no p?* (``FILTER NOT EXISTS``) for a
  property some but not all As have.
- **Thresholds** (:func:`column_questions`): *Which As have a p greater / less than N?* with N a
  whole number near the median of the property, so the number is a slot to fill.
"""

from __future__ import annotations

import re
from typing import Any

from kgqa.model import IRI, Item, TableAnswer

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_LABELISH = re.compile(r"(label|name|title|comment|description|id|identifier|email|phone|depiction)$", re.I)


def schema_labels(executor: Any, lang: str = "en") -> dict[str, list[str]]:
    """``<IRI>`` of each class and predicate -> its labels in ``lang`` (or without a language)."""
    out: dict[str, list[str]] = {}
    for s_, lab in rows(executor, "SELECT ?s ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l . "
                                  "{ ?x a ?s } UNION { ?x ?s ?y } }"):
        if lab is not None and (not lab.language or lab.language.split("-")[0] == lang):
            out.setdefault(s_.n3(), []).append(lab.value)
    return out


def rows(executor: Any, query: str) -> list:
    oc = executor.execute(query)
    return oc.answer.rows if not oc.status.failed and isinstance(oc.answer, TableAnswer) else []


def name_of(iri: str, labels: dict[str, list[str]]) -> str:
    """A class's or predicate's name: its label, else its local name in words (lower case)."""
    labs = labels.get(f"<{iri}>")
    if labs:
        return labs[0]
    local = re.split(r"[/#]", iri.rstrip("/#"))[-1]
    local = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", local).replace("_", " ").replace("-", " ")
    return " ".join(local.split()).lower()


def plural(noun: str) -> str:
    if re.search(r"(s|x|z|ch|sh)$", noun):
        return noun + "es"
    if re.search(r"[^aeiou]y$", noun):
        return noun[:-1] + "ies"
    return noun + "s"


def _own(iri: str) -> bool:
    """A class or predicate of the KG's own vocabulary (not RDF/RDFS/OWL's)."""
    return not iri.startswith(("http://www.w3.org/", "http://purl.org/dc/", "http://xmlns.com/foaf/",
                               "http://rdfs.org/ns/void#"))


def grouping_questions(executor: Any, labels: dict[str, list[str]], lang: str = "en", most: int = 30) -> list[Item]:
    """Which B has the most / fewest As, and each B with its number of As (module docstring)."""
    out: list[Item] = []
    links = rows(executor, f"SELECT ?a ?p ?b (COUNT(*) AS ?n) WHERE {{ ?y a ?a . ?y ?p ?x . ?x a ?b . "
                           f"FILTER(?p != <{RDF_TYPE}>) }} GROUP BY ?a ?p ?b ORDER BY DESC(?n) LIMIT {most}")
    for a, p, b, _ in links:
        if not all(isinstance(t, IRI) and _own(t.value) for t in (a, p, b)):
            continue
        an, bn, pn = name_of(a.value, labels), name_of(b.value, labels), name_of(p.value, labels)
        body = f"?y a <{a.value}> . ?y <{p.value}> ?x . ?x a <{b.value}> ."
        for way, word in (("DESC", "most"), ("ASC", "fewest")):
            out += [Item("", {lang: f"Which {bn} has the {word} {plural(an)}?"},
                         f"SELECT ?x WHERE {{ {body} }} GROUP BY ?x ORDER BY {way}(COUNT(DISTINCT ?y)) LIMIT 1"),
                    Item("", {lang: f"Which {bn} is the {pn} of the {word} {plural(an)}?"},
                         f"SELECT ?x WHERE {{ {body} }} GROUP BY ?x ORDER BY {way}(COUNT(DISTINCT ?y)) LIMIT 1"),
                    Item("", {lang: f"Which {an} has the {word} {plural(bn)}?"},
                         f"SELECT ?y WHERE {{ {body} }} GROUP BY ?y ORDER BY {way}(COUNT(DISTINCT ?x)) LIMIT 1")]
        counted = f"SELECT ?x (COUNT(DISTINCT ?y) AS ?count) WHERE {{ {body} }} GROUP BY ?x"
        out += [Item("", {lang: f"List the {plural(bn)} with their number of {plural(an)}."}, counted),
                Item("", {lang: f"How many {plural(an)} does each {bn} have?"}, counted)]
    values = rows(executor, "SELECT ?a ?p (COUNT(DISTINCT ?v) AS ?k) (COUNT(*) AS ?n) WHERE { ?y a ?a ; ?p ?v . "
                            "FILTER(isLiteral(?v) && !isNumeric(?v)) } GROUP BY ?a ?p")
    for a, p, k, n in values:
        if not (isinstance(a, IRI) and isinstance(p, IRI) and _own(a.value) and _own(p.value)) or \
                _LABELISH.search(p.value) or not 2 <= int(k.value) <= int(n.value) // 3:
            continue
        an, pn = name_of(a.value, labels), name_of(p.value, labels)
        body = f"?y a <{a.value}> . ?y <{p.value}> ?v ."
        out += [Item("", {lang: f"Which {pn} has the most {plural(an)}?"},
                     f"SELECT ?v WHERE {{ {body} }} GROUP BY ?v ORDER BY DESC(COUNT(DISTINCT ?y)) LIMIT 1"),
                Item("", {lang: f"List each {pn} with its number of {plural(an)}."},
                     f"SELECT ?v (COUNT(DISTINCT ?y) AS ?count) WHERE {{ {body} }} GROUP BY ?v")]
    return out


def column_questions(executor: Any, labels: dict[str, list[str]], lang: str = "en", most: int = 60) -> list[Item]:
    """Every A with its p, As without p, and As above or below a number (module docstring)."""
    out: list[Item] = []
    props = rows(executor, f"SELECT ?a ?p (COUNT(DISTINCT ?y) AS ?n) (SAMPLE(?v) AS ?s) WHERE {{ ?y a ?a ; ?p ?v . "
                           f"FILTER(?p != <{RDF_TYPE}>) }} GROUP BY ?a ?p ORDER BY DESC(?n) LIMIT {most}")
    sizes = {c.value: int(n.value) for c, n in rows(executor, "SELECT ?c (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x a ?c } GROUP BY ?c")
             if isinstance(c, IRI)}
    for a, p, n, sample in props:
        if not (isinstance(a, IRI) and isinstance(p, IRI) and _own(a.value) and _own(p.value)):
            continue
        an, pn, many = name_of(a.value, labels), name_of(p.value, labels), plural(name_of(a.value, labels))
        if sample is not None and not isinstance(sample, IRI):
            pairs = f"SELECT ?x ?v WHERE {{ ?x a <{a.value}> . ?x <{p.value}> ?v . }}"
            out += [Item("", {lang: f"List every {an} with its {pn}."}, pairs),
                    Item("", {lang: f"Give me each {an} and its {pn}."}, pairs)]
        if 0.1 * sizes.get(a.value, 0) < int(n.value) < 0.9 * sizes.get(a.value, 0):
            out.append(Item("", {lang: f"Which {many} have no {pn}?"},
                            f"SELECT ?x WHERE {{ ?x a <{a.value}> . FILTER NOT EXISTS {{ ?x <{p.value}> ?v }} }}"))
    numbers = rows(executor, f"SELECT ?a ?p ?q (AVG(?v) AS ?m) (COUNT(DISTINCT ?x) AS ?k) (COUNT(DISTINCT ?z) AS ?zs) WHERE {{ ?x a ?a . {{ ?x ?p ?v }} UNION "
                             f"{{ ?x ?p ?z . ?z ?q ?v . FILTER(isIRI(?z)) FILTER NOT EXISTS {{ ?w ?r ?z . FILTER(?w != ?x) }} }} FILTER(isNumeric(?v)) }} GROUP BY ?a ?p ?q "
                             f"LIMIT {most}")
    for a, p, q, m, k, zs in numbers:
        if not (isinstance(a, IRI) and isinstance(p, IRI) and _own(a.value) and _own(p.value)) or m is None or \
                (isinstance(q, IRI) and (not _own(q.value) or zs.value != k.value)) or int(k.value) < sizes.get(a.value, 0) / 2:
            continue  # a measure of most members, one edge further only on a node of its own
        an, pn, many = name_of(a.value, labels), name_of(p.value, labels), plural(name_of(a.value, labels))
        path = f"?x <{p.value}> ?z . ?z <{q.value}> ?v ." if isinstance(q, IRI) else f"?x <{p.value}> ?v ."
        if isinstance(q, IRI):  # one edge further: named by the first predicate (a price's amount)
            pairs = f"SELECT ?x ?v WHERE {{ ?x a <{a.value}> . {path} }}"
            out += [Item("", {lang: f"List every {an} with its {pn}."}, pairs),
                    Item("", {lang: f"Give me each {an} and its {pn}."}, pairs)]
        n = round(float(m.value))
        if n >= 2:
            for op, word in ((">", "greater"), ("<", "less")):
                out.append(Item("", {lang: f"Which {many} have a {pn} {word} than {n}?"},
                                f"SELECT ?x WHERE {{ ?x a <{a.value}> . {path} FILTER(?v {op} {n}) }}"))
    return out
