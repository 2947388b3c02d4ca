#!/usr/bin/env python3
"""Build kgqa's demo data: gold answers and three system runs, by executing SPARQL on the demo KG.

Inputs: ``kgqa/demo/data/kg.ttl`` (hand-written) and the question and run specifications in
this file. Outputs (all under ``kgqa/demo/data``):

- ``questions.json``: 30 questions in QALD JSON (``dataset.id`` = ``kgqa-demo``), each with
  ``answertype``, ``aggregation``, the question in English and German, the gold query and
  ``answers`` = ``[<SPARQL 1.1 results JSON of executing the gold query on kg.ttl>]``;
- ``runs/strong.json``, ``runs/medium.json``, ``runs/weak.json``: the same shape, each
  question with the system's ``query.sparql`` and ``answers`` = the result of executing that
  query; an entry whose query does not parse has no ``answers`` key; a question the system
  skipped has no entry;
- ``README.md``: what the data is and a table of every deliberate error (run, id, kind, what is
  wrong); an entry not in the table is exactly right.

Results are canonical, so that re-running reproduces the files byte for byte: bindings keep the
query's order when the query has ``ORDER BY`` and are sorted (by their JSON text) otherwise;
each binding lists variables in ``head.vars`` order. Queries with ``LIMIT`` order totally (no
ties left to the engine).

Usage: ``python tools/make_demo.py`` (write) or ``python tools/make_demo.py --check`` (exit 1
when a file on disk differs from what would be written).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "kgqa" / "demo" / "data"

PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "onto": "http://demo.kgqa.org/ontology/",
    "res": "http://demo.kgqa.org/resource/",
}


def sparql(body: str) -> str:
    """``body`` with PREFIX declarations for exactly the prefixes it uses (in a fixed order)."""
    body = " ".join(body.split())
    used = [p for p in PREFIXES if re.search(rf"(?<!\w){p}:", body)]
    return " ".join(f"PREFIX {p}: <{PREFIXES[p]}>" for p in used) + (" " if used else "") + body


# --------------------------------------------------------------------------- questions


@dataclass(frozen=True)
class Question:
    id: str
    answertype: str
    aggregation: bool
    en: str
    de: str
    query: str


QUESTIONS = [
    Question("1", "resource", False, "What is the capital of Norland?", "Was ist die Hauptstadt von Nordland?",
             "SELECT DISTINCT ?uri WHERE { res:Norland onto:capital ?uri }"),
    Question("2", "resource", False, "Where was Ada Quenby born?", "Wo wurde Ada Quenby geboren?",
             "SELECT DISTINCT ?uri WHERE { res:Ada_Quenby onto:birthPlace ?uri }"),
    Question("3", "resource", False, "Who founded Halcyon Dynamics?", "Wer hat Halcyon Dynamics gegründet?",
             "SELECT DISTINCT ?uri WHERE { res:Halcyon_Dynamics onto:founder ?uri }"),
    Question("4", "resource", False, "In which country was Jonah Pike born?", "In welchem Land wurde Jonah Pike geboren?",
             "SELECT DISTINCT ?uri WHERE { res:Jonah_Pike onto:birthPlace ?city . ?city onto:country ?uri }"),
    Question("5", "resource", False, "Which books were written by people born in Aldport?",
             "Welche Bücher wurden von in Aldport geborenen Personen geschrieben?",
             "SELECT DISTINCT ?uri WHERE { ?uri a onto:Book ; onto:author ?person . ?person onto:birthPlace res:Aldport }"),
    Question("6", "number", True, "How many books did Liss Harrow write?", "Wie viele Bücher hat Liss Harrow geschrieben?",
             "SELECT (COUNT(DISTINCT ?book) AS ?count) WHERE { ?book a onto:Book ; onto:author res:Liss_Harrow }"),
    Question("7", "number", True, "How many cities are there in Sundara?", "Wie viele Städte gibt es in Sundara?",
             "SELECT (COUNT(DISTINCT ?city) AS ?count) WHERE { ?city a onto:City ; onto:country res:Sundara }"),
    Question("8", "resource", True, "Which company has the most employees?", "Welches Unternehmen hat die meisten Mitarbeiter?",
             "SELECT DISTINCT ?uri WHERE { ?uri a/rdfs:subClassOf* onto:Company ; onto:employees ?n . "
             "{ SELECT (MAX(?m) AS ?max) WHERE { ?c a/rdfs:subClassOf* onto:Company ; onto:employees ?m } } "
             "FILTER(?n = ?max) }"),
    Question("9", "resource", True, "What is the longest river?", "Welcher ist der längste Fluss?",
             "SELECT ?uri WHERE { ?uri a onto:River ; onto:length ?length } ORDER BY DESC(?length) LIMIT 1"),
    Question("10", "resource", True, "Which is the oldest company?", "Welches ist das älteste Unternehmen?",
             "SELECT ?uri WHERE { ?uri a/rdfs:subClassOf* onto:Company ; onto:foundingYear ?year } "
             "ORDER BY ASC(?year) LIMIT 1"),
    Question("11", "resource", True, "Who is the youngest writer?", "Wer ist der jüngste Schriftsteller?",
             "SELECT ?uri WHERE { ?uri a onto:Person ; onto:occupation res:Writer ; onto:birthDate ?date } "
             "ORDER BY DESC(?date) LIMIT 1"),
    Question("12", "resource", True, "Which books have more than 400 pages?", "Welche Bücher haben mehr als 400 Seiten?",
             "SELECT DISTINCT ?uri WHERE { ?uri a onto:Book ; onto:pages ?pages FILTER(?pages > 400) }"),
    Question("13", "resource", False, "Which organisations have their headquarters in Aldport?",
             "Welche Organisationen haben ihren Sitz in Aldport?",
             "SELECT DISTINCT ?uri WHERE { ?uri a/rdfs:subClassOf* onto:Organisation ; onto:headquarters res:Aldport }"),
    Question("14", "boolean", False, "Is Tomas Verle married to Ada Quenby?", "Ist Tomas Verle mit Ada Quenby verheiratet?",
             "ASK WHERE { res:Tomas_Verle onto:spouse res:Ada_Quenby }"),
    Question("15", "boolean", False, "Does the Mira flow through Ostmark?", "Fließt die Mira durch Ostmark?",
             "ASK WHERE { res:Mira_%28river%29 onto:flowsThrough res:Ostmark }"),
    Question("16", "boolean", False, "Does Halcyon Dynamics have its headquarters in Sundara?",
             "Hat Halcyon Dynamics seinen Sitz in Sundara?",
             "ASK WHERE { res:Halcyon_Dynamics onto:headquarters ?city . ?city onto:country res:Sundara }"),
    Question("17", "date", False, "When was Ada Quenby born?", "Wann wurde Ada Quenby geboren?",
             "SELECT DISTINCT ?date WHERE { res:Ada_Quenby onto:birthDate ?date }"),
    Question("18", "number", False, "How many employees does Northwind Energy have?",
             "Wie viele Mitarbeiter hat Nordwind Energie?",
             "SELECT DISTINCT ?number WHERE { res:Northwind_Energy onto:employees ?number }"),
    Question("19", "number", False, "What is the revenue of Zell@Home in millions?", "Wie hoch ist der Umsatz von Zell@Home in Millionen?",
             "SELECT DISTINCT ?revenue WHERE { res:Zell%40Home onto:revenue ?revenue }"),
    Question("20", "string", False, "What is the nickname of Aldport?", "Was ist der Spitzname von Aldport?",
             'SELECT DISTINCT ?nickname WHERE { res:Aldport onto:nickname ?nickname FILTER(LANG(?nickname) = "en") }'),
    Question("21", "string", False, "What is Norland called in German?", "Wie heißt Norland auf Deutsch?",
             'SELECT DISTINCT ?label WHERE { res:Norland rdfs:label ?label FILTER(LANG(?label) = "de") }'),
    Question("22", "resource", False, "Which rivers flow through Brevia?", "Welche Flüsse fließen durch Brevien?",
             "SELECT DISTINCT ?uri WHERE { ?uri a onto:River ; onto:flowsThrough res:Brevia }"),
    Question("23", "resource", False, "Which companies were founded after 2000, and in which year?",
             "Welche Unternehmen wurden nach 2000 gegründet, und in welchem Jahr?",
             'SELECT DISTINCT ?company ?year WHERE { ?company a/rdfs:subClassOf* onto:Company ; '
             'onto:foundingYear ?year FILTER(?year > "2000"^^xsd:gYear) }'),
    Question("24", "resource", False, "Give me the cities of Valdoria with their populations.",
             "Nenne die Städte Valdoriens mit ihrer Einwohnerzahl.",
             "SELECT DISTINCT ?city ?population WHERE { ?city a onto:City ; onto:country res:Valdoria ; "
             "onto:population ?population }"),
    Question("25", "resource", False, "Which river flows through both Norland and Valdoria?",
             "Welcher Fluss fließt sowohl durch Nordland als auch durch Valdorien?",
             "SELECT DISTINCT ?uri WHERE { ?uri a onto:River ; onto:flowsThrough res:Norland , res:Valdoria }"),
    Question("26", "resource", False, "Which countries does the Tolva flow through?", "Durch welche Länder fließt die Tolva?",
             "SELECT DISTINCT ?uri WHERE { res:Tolva onto:flowsThrough ?uri }"),
    Question("27", "date", False, "In which year was Halcyon Dynamics founded?", "In welchem Jahr wurde Halcyon Dynamics gegründet?",
             "SELECT DISTINCT ?year WHERE { res:Halcyon_Dynamics onto:foundingYear ?year }"),
    Question("28", "resource", False, "What are the occupations of Rafe Mundy?", "Welche Berufe hat Rafe Mundy?",
             "SELECT DISTINCT ?uri WHERE { res:Rafe_Mundy onto:occupation ?uri }"),
    Question("29", "resource", False, "Who is the spouse of Edda Voss?", "Mit wem ist Edda Voß verheiratet?",
             "SELECT DISTINCT ?uri WHERE { res:Edda_Voss onto:spouse ?uri }"),
    Question("30", "number", True, "How many different occupations do people born in Aldport have?",
             "Wie viele verschiedene Berufe haben in Aldport geborene Personen?",
             "SELECT (COUNT(DISTINCT ?occupation) AS ?count) WHERE { ?person onto:birthPlace res:Aldport ; "
             "onto:occupation ?occupation }"),
]


# --------------------------------------------------------------------------- runs
#
# A run maps a question id to (query, kind, note). kind is "" for a right answer, else one of
#   wrong        the answer shares nothing with the gold answer (F1 0)
#   partial      it overlaps the gold answer but is not equal to it
#   convention   equal to gold only under a lenient term-matching rule (numbers or dates by
#                value, untyped numbers, percent-decoded IRIs, lexical forms)
#   duplicates   the same set of values as gold, with repeated rows (bag and set views differ)
#   parse_error  the query does not parse; the entry has the query and no "answers" key
# and a question absent from the run dict is "missing" (the run has no entry for it); its note
# is in MISSING_NOTES.

STRONG: dict[str, tuple[str, str, str]] = {
    "1": ("SELECT DISTINCT ?uri WHERE { res:Norland onto:capital ?uri }", "", ""),
    "2": ("SELECT DISTINCT ?uri WHERE { res:Ada_Quenby onto:residence ?uri }", "wrong",
          "wrong predicate: onto:residence instead of onto:birthPlace (Velmont, not Aldport)"),
    "3": ("SELECT DISTINCT ?uri WHERE { res:Halcyon_Dynamics onto:founder ?uri }", "", ""),
    "4": ("SELECT DISTINCT ?uri WHERE { res:Jonah_Pike onto:birthPlace/onto:country ?uri }", "", ""),
    "5": ("SELECT DISTINCT ?uri WHERE { ?person onto:birthPlace res:Aldport . ?uri onto:author ?person ; a onto:Book }", "", ""),
    "6": ("SELECT (COUNT(DISTINCT ?b) AS ?n) WHERE { ?b onto:author res:Liss_Harrow ; a onto:Book }", "", ""),
    "7": ("SELECT (STR(COUNT(DISTINCT ?city)) AS ?count) WHERE { ?city a onto:City ; onto:country res:Sundara }",
          "convention", 'count as the plain literal "3" (STR): equal only when untyped numbers compare as numbers, or lexically'),
    "8": ("SELECT ?uri WHERE { ?uri a/rdfs:subClassOf* onto:Company ; onto:employees ?n } ORDER BY DESC(?n) ?uri LIMIT 1",
          "partial", "tie: ORDER BY ... LIMIT 1 returns one of the two companies with 12000 employees"),
    "9": ("SELECT ?uri WHERE { ?uri a onto:River ; onto:length ?l } ORDER BY DESC(?l) LIMIT 1", "", ""),
    "10": ("SELECT ?uri WHERE { ?uri a/rdfs:subClassOf* onto:Company ; onto:foundingYear ?y } ORDER BY ?y LIMIT 1", "", ""),
    "11": ("SELECT ?uri WHERE { ?uri onto:occupation res:Writer ; onto:birthDate ?d } ORDER BY DESC(?d) LIMIT 1", "", ""),
    "12": ("SELECT DISTINCT ?uri WHERE { ?uri a onto:Book ; onto:pages ?p FILTER(?p > 400) }", "", ""),
    "13": ("SELECT DISTINCT ?uri WHERE { ?uri onto:headquarters res:Aldport ; a ?t . ?t rdfs:subClassOf* onto:Organisation }", "", ""),
    "14": ("ASK { res:Tomas_Verle onto:spouse res:Ada_Quenby }", "", ""),
    "15": ("ASK { res:Mira_%28river%29 onto:flowsThrough res:Ostmark }", "", ""),
    "16": ("ASK { res:Halcyon_Dynamics onto:headquarters/onto:country res:Sundara }", "", ""),
    "17": ("SELECT (xsd:dateTime(?d) AS ?date) WHERE { res:Ada_Quenby onto:birthDate ?d }",
           "convention", "date returned as xsd:dateTime 1931-03-14T00:00:00: equal only when dates compare by value"),
    "18": ("SELECT DISTINCT ?number WHERE { res:Northwind_Energy onto:revenue ?number }", "wrong",
           "wrong predicate: onto:revenue instead of onto:employees (890, not 2750)"),
    "19": ("SELECT (xsd:double(?r) AS ?revenue) WHERE { res:Zell%40Home onto:revenue ?r }",
           "convention", "revenue cast to xsd:double (41.2 as double, gold is xsd:decimal): equal by value or lexically, not as typed terms"),
    "20": ('SELECT ?n WHERE { res:Aldport onto:nickname ?n FILTER(LANGMATCHES(LANG(?n), "en")) }', "", ""),
    "21": ('SELECT ?l WHERE { res:Norland rdfs:label ?l FILTER(LANGMATCHES(LANG(?l), "de")) }', "", ""),
    "22": ("SELECT DISTINCT ?uri WHERE { ?uri onto:country res:Brevia }", "wrong",
           "gold is empty; drops the river type and uses onto:country, returning Brevia's cities"),
    "23": ('SELECT ?company ?year WHERE { ?company onto:foundingYear ?year ; a/rdfs:subClassOf* onto:Company '
           'FILTER(?year > "2000"^^xsd:gYear) }', "", ""),
    "24": ("SELECT ?city ?population WHERE { ?city onto:country res:Valdoria ; a onto:City ; onto:population ?population }", "", ""),
    "25": ("SELECT ?uri WHERE { VALUES ?uri { <http://demo.kgqa.org/resource/Mira_(river)> } }", "convention",
           "answers the IRI Mira_(river), percent-decoded; the KG and gold have Mira_%28river%29: equal only when IRIs are percent-decoded"),
    "26": ("SELECT DISTINCT ?uri WHERE { res:Tolva onto:flowsThrough ?uri }", "", ""),
    "27": ("SELECT ?year WHERE { res:Halcyon_Dynamics onto:foundingYear ?year }", "", ""),
    "28": ("SELECT DISTINCT ?uri WHERE { res:Rafe_Mundy onto:occupation ?uri }", "", ""),
    "29": ("SELECT DISTINCT ?uri WHERE { res:Karl_Voss onto:spouse ?uri }", "wrong",
           "wrong entity: links 'Voss' to Karl Voss and returns his spouse, Edda Voss herself"),
    "30": ("SELECT (COUNT(DISTINCT ?o) AS ?count) WHERE { ?p onto:birthPlace res:Aldport ; onto:occupation ?o }", "", ""),
}

MEDIUM: dict[str, tuple[str, str, str]] = {
    "1": ("SELECT ?uri WHERE { res:Norland onto:capital ?uri }", "", ""),
    "2": ("SELECT ?uri WHERE { res:Ada_Quenby onto:residence ?uri }", "wrong",
          "wrong predicate: onto:residence instead of onto:birthPlace"),
    "3": ("SELECT ?uri WHERE { res:Halcyon_Dynamics onto:founder ?uri . ?uri onto:occupation ?o }", "duplicates",
          "missing DISTINCT over a join: Oskar Dahlgren appears once per occupation (2 rows), Mei Sorensen once"),
    "4": ("SELECT ?uri WHERE { res:Jonah_Pike onto:birthPlace ?uri }", "wrong",
          "one hop short: returns the birth city (Dusk Harbour), not its country"),
    "5": ("SELECT DISTINCT ?uri WHERE { ?b a onto:Book ; onto:author ?uri . ?uri onto:birthPlace res:Aldport }", "wrong",
          "wrong projection of a two-hop query: returns the authors, not the books"),
    "6": ("SELECT (COUNT(DISTINCT ?book) AS ?count WHERE { ?book a onto:Book ; onto:author res:Liss_Harrow }",
          "parse_error", "syntax error: missing ')' after AS ?count"),
    "7": ("SELECT (COUNT(?city) AS ?count) WHERE { ?city a onto:City ; onto:country res:Sundara }", "", ""),
    "8": ("SELECT ?uri WHERE { ?uri a/rdfs:subClassOf* onto:Company ; onto:employees ?n } ORDER BY DESC(?n) ?uri LIMIT 1",
          "partial", "tie: LIMIT 1 keeps one of the two companies with 12000 employees"),
    "9": ("SELECT ?uri WHERE { ?uri a onto:River ; onto:length ?l } ORDER BY ?l LIMIT 1", "wrong",
          "wrong ORDER direction: ascending gives the shortest river (Orrin)"),
    "10": ("SELECT ?uri WHERE { ?uri a/rdfs:subClassOf* onto:Company ; onto:foundingYear ?y } ORDER BY DESC(?y) LIMIT 1", "wrong",
           "wrong ORDER direction: descending gives the youngest company (Ersa Labs)"),
    "11": ("SELECT ?uri WHERE { ?uri a onto:Person ; onto:occupation res:Writer ; onto:birthDate ?d } ORDER BY DESC(?d) LIMIT 1", "", ""),
    "12": ("SELECT DISTINCT ?uri WHERE { ?uri a onto:Book ; onto:pages ?p FILTER(?p >= 300) }", "partial",
           "wrong comparison threshold (>= 300): two extra books"),
    "13": ("SELECT DISTINCT ?uri WHERE { ?uri onto:headquarters res:Aldport }", "", ""),
    "14": ("ASK { res:Ada_Quenby onto:spouse res:Tomas_Verle }", "", ""),
    "15": ("ASK { res:Mira_%28river%29 onto:flowsThrough res:Ostmark }", "", ""),
    "16": ("ASK { res:Halcyon_Dynamics onto:headquarters res:Sundara }", "wrong",
           "one hop short: the headquarters is a city, so the ASK is false (gold true)"),
    "17": ("SELECT ?date WHERE { res:Ada_Quenby onto:birthDate ?date }", "", ""),
    "18": ("SELECT ?n WHERE { res:Northwind_Energy onto:employees ?n }", "", ""),
    "19": ("SELECT ?n WHERE { res:Zell%40Home onto:employees ?n }", "wrong",
           "wrong predicate: onto:employees instead of onto:revenue (350)"),
    "20": ("SELECT ?n WHERE { res:Aldport onto:nickname ?n }", "partial",
           "no language filter: returns the English and the German nickname"),
    "21": ("SELECT ?l WHERE { res:Norland rdfs:label ?l }", "partial",
           "no language filter: returns Norland@en as well as Nordland@de"),
    "22": ("SELECT ?uri WHERE { ?uri a onto:River ; onto:flowsThrough res:Brevia }", "", ""),
    "23": ('SELECT ?company ?year WHERE { ?company a/rdfs:subClassOf* onto:Company ; onto:foundingYear ?year '
           'FILTER(?year > "1990"^^xsd:gYear) }', "partial", "wrong year threshold (1990): adds Sable Foods, 1995"),
    "24": ("SELECT ?city WHERE { ?city a onto:City ; onto:country res:Valdoria }", "partial",
           "multi-variable question answered with one variable: cities without their populations"),
    "25": ("SELECT DISTINCT ?uri WHERE { ?uri onto:flowsThrough res:Norland . ?uri onto:flowsThrough res:Valdoria }", "", ""),
    "26": ("SELECT DISTINCT ?uri WHERE { res:Tolva onto:mouth ?c . ?c onto:country ?uri }", "partial",
           "wrong hop: the country of the river's mouth (Sundara), one of three"),
    "27": ("SELECT (YEAR(?y) AS ?year) WHERE { res:Halcyon_Dynamics onto:foundingYear ?y }", "convention",
           "YEAR() turns the xsd:gYear 2003 into the xsd:integer 2003: equal lexically, not as typed terms"),
    "29": ("SELECT ?uri WHERE { res:Edda_Voss onto:spouse ?uri }", "", ""),
    "30": ("SELECT (COUNT(?o) AS ?count) WHERE { ?p onto:birthPlace res:Aldport ; onto:occupation ?o }", "wrong",
           "missing DISTINCT in COUNT: counts Engineer twice (4, gold 3)"),
}

WEAK: dict[str, tuple[str, str, str]] = {
    "1": ("SELECT ?uri WHERE { res:Norland onto:capital ?uri }", "", ""),
    "2": ("SELECT ?uri WHERE { res:Ada_Quenby onto:birthplace ?uri }", "wrong",
          "empty: predicate onto:birthplace does not exist (case)"),
    "3": ("SELECT ?uri WHERE { res:HalcyonDynamics onto:founder ?uri }", "wrong", "empty: entity res:HalcyonDynamics does not exist"),
    "4": ("SELECT ?uri WHERE { res:Jonah_Pike onto:birthPlace ?uri }", "wrong", "one hop short: the birth city, not the country"),
    "5": ("SELECT ?uri WHERE { ?uri onto:writer ?p . ?p onto:birthPlace res:Aldport }", "wrong",
          "empty: predicate onto:writer does not exist"),
    "6": ("SELECT (COUNT(?b) AS ?count) WHERE { ?b a onto:Book }", "wrong", "counts all books (10), ignoring the author"),
    "7": ("SELECT (COUNT(?c) AS ?count) WHERE { ?c onto:country res:Sundara }", "", ""),
    "8": ("SELECT ?uri WHERE { ?uri onto:numberOfEmployees ?n } ORDER BY DESC(?n) LIMIT 1", "wrong",
          "empty: predicate onto:numberOfEmployees does not exist"),
    "9": ("SELECT ?length WHERE { ?r a onto:River ; onto:length ?length } ORDER BY DESC(?length) LIMIT 1", "wrong",
          "returns the length (812.5) instead of the river"),
    "10": ("SELECT ?uri WHERE { ?uri onto:foundingYear ?y } ORDER BY ?y LIMIT 1", "wrong",
           "wrong entity type: no class constraint, so the University of Aldport (1890) wins"),
    "11": ("SELECT ?uri WHERE { ?uri a onto:Person ; onto:birthDate ?d } ORDER BY DESC(?d) LIMIT 1", "wrong",
           "wrong entity type: the youngest person (an athlete), not the youngest writer"),
    "12": ("SELECT ?uri WHERE { ?uri onto:numberOfPages ?p FILTER(?p > 400) }", "wrong",
           "empty: predicate onto:numberOfPages does not exist"),
    "13": ("SELECT ?uri WHERE { ?uri a onto:Organisation ; onto:headquarters res:Aldport }", "wrong",
           "wrong entity type: onto:Organisation without rdfs:subClassOf*, so empty"),
    "14": ("ASK { res:Tomas_Verle onto:spouse res:Ada_Quenby }", "", ""),
    "15": ("SELECT ?c WHERE { res:Mira_%28river%29 onto:flowsThrough ?c }", "wrong",
           "ASK answered as SELECT: lists the Mira's countries instead of false"),
    "16": ("ASK { res:Halcyon_Dynamics onto:location res:Sundara }", "wrong",
           "wrong predicate onto:location: the ASK is false (gold true)"),
    "17": ("SELECT ?d WHERE { res:Ada_Quenby onto:birthDate ?d }", "", ""),
    "18": ("SELECT ?n WHERE { res:Northwind onto:employees ?n }", "wrong", "empty: entity res:Northwind does not exist"),
    "19": ("SELECT ?r WHERE { <http://demo.kgqa.org/resource/Zell@Home> onto:revenue ?r }", "wrong",
           "empty: queries the decoded IRI Zell@Home, the KG has Zell%40Home"),
    "20": ('SELECT ?l WHERE { res:Aldport rdfs:label ?l FILTER(LANG(?l) = "en") }', "wrong",
           "returns the label (Aldport) instead of the nickname"),
    "21": ('SELECT ?l WHERE { res:Norland rdfs:label ?l FILTER(LANG(?l) = "ge") }', "wrong",
           'empty: language tag "ge" instead of "de"'),
    "22": ("SELECT ?uri WHERE { ?uri onto:flowsThrough res:Brevia }", "", ""),
    "23": ('SELECT ?company ?year WHERE { ?company a onto:Company ; onto:foundingYear ?year FILTER(?year > "2000"^^xsd:gYear) ',
           "parse_error", "truncated query: the final '}' is missing"),
    "24": ("SELECT ?city ?population WHERE { res:Valdoria onto:capital ?city . ?city onto:population ?population }", "partial",
           "only the capital: one of three cities with its population"),
    "25": ("SELECT ?uri WHERE { ?uri onto:flowsThrough res:Norland }", "partial",
           "ignores Valdoria: both rivers of Norland (Mira, Orrin)"),
    "26": ("SELECT ?uri WHERE { res:Tolva onto:country ?uri }", "wrong", "empty: rivers have no onto:country"),
    "27": ("SELECT ?d WHERE { res:Halcyon_Dynamics onto:foundingDate ?d }", "wrong",
           "empty: onto:foundingDate is used for countries only"),
    "28": ("SELECT ?uri WHERE { res:Rafe_Mundy onto:occupation ?uri } ORDER BY ?uri LIMIT 1", "partial",
           "LIMIT 1 on a multi-valued property: one of two occupations"),
    "29": ("SELECT ?uri WHERE { <http://demo.kgqa.org/resource/Edda_Voß> onto:spouse ?uri }", "wrong",
           "empty: entity IRI spelt with the German label (Edda_Voß)"),
    "30": ("SELECT DISTINCT ?o WHERE { ?p onto:birthPlace res:Aldport ; onto:occupation ?o }", "wrong",
           "lists the occupations instead of counting them"),
}

RUNS = {"strong": STRONG, "medium": MEDIUM, "weak": WEAK}
MISSING_NOTES = {("medium", "28"): "question missing from the run (no entry)"}
KINDS = ("wrong", "partial", "convention", "duplicates", "parse_error", "missing")


# --------------------------------------------------------------------------- execution


def load_kg(path: Path = DATA / "kg.ttl") -> ox.Store:
    store = ox.Store()
    store.load(path=str(path), format=ox.RdfFormat.TURTLE)
    return store


def has_order_by(query: str) -> bool:
    return re.search(r"\bORDER\s+BY\b", query, re.IGNORECASE) is not None


def canonical(results: dict, ordered: bool) -> dict:
    """SPARQL results JSON in canonical form (see the module docstring)."""
    if "boolean" in results:
        return {"head": {}, "boolean": results["boolean"]}
    variables = list(results["head"]["vars"])
    rows = []
    for b in results["results"]["bindings"]:
        rows.append({v: {k: b[v][k] for k in ("type", "value", "datatype", "xml:lang") if k in b[v]}
                     for v in variables if v in b})
    if not ordered:
        rows.sort(key=lambda r: json.dumps(r, sort_keys=True, ensure_ascii=False))
    return {"head": {"vars": variables}, "results": {"bindings": rows}}


def execute(store: ox.Store, query: str) -> dict:
    """Execute ``query`` (read-only, on the default graph) and return canonical results JSON.
    Raises SyntaxError when the query does not parse."""
    result = store.query(query)
    doc = json.loads(result.serialize(format=ox.QueryResultsFormat.JSON))
    return canonical(doc, has_order_by(query))


# --------------------------------------------------------------------------- writing


def _question_text(q: Question) -> list[dict]:
    return [{"language": "en", "string": q.en}, {"language": "de", "string": q.de}]


def build_questions(store: ox.Store) -> dict:
    out = []
    for q in QUESTIONS:
        query = sparql(q.query)
        out.append({
            "id": q.id,
            "answertype": q.answertype,
            "aggregation": q.aggregation,
            "question": _question_text(q),
            "query": {"sparql": query},
            "answers": [execute(store, query)],
        })
    return {"dataset": {"id": "kgqa-demo"}, "questions": out}


def build_run(name: str, spec: dict[str, tuple[str, str, str]], store: ox.Store) -> dict:
    out = []
    for q in QUESTIONS:
        if q.id not in spec:
            if (name, q.id) not in MISSING_NOTES:
                raise SystemExit(f"run {name}: question {q.id} is absent but not documented in MISSING_NOTES")
            continue
        body, kind, note = spec[q.id]
        if kind not in ("",) + KINDS or bool(kind) != bool(note):
            raise SystemExit(f"run {name}, question {q.id}: bad kind {kind!r} or note {note!r}")
        query = sparql(body)
        entry = {"id": q.id, "question": _question_text(q), "query": {"sparql": query}}
        try:
            entry["answers"] = [execute(store, query)]
        except SyntaxError as e:
            if kind != "parse_error":
                raise SystemExit(f"run {name}, question {q.id}: query does not parse: {e}")
        else:
            if kind == "parse_error":
                raise SystemExit(f"run {name}, question {q.id}: documented as parse_error but parses")
        out.append(entry)
    return {"dataset": {"id": f"kgqa-demo-{name}"}, "questions": out}


def error_table() -> list[tuple[str, str, str, str]]:
    """(run, id, kind, note) for every deliberate error, in run then question order."""
    rows = []
    for name, spec in RUNS.items():
        for q in QUESTIONS:
            if q.id in spec and spec[q.id][1]:
                rows.append((name, q.id, spec[q.id][1], spec[q.id][2]))
            elif (name, q.id) in MISSING_NOTES:
                rows.append((name, q.id, "missing", MISSING_NOTES[(name, q.id)]))
    return rows


README_HEAD = """\
# kgqa demo data

Written for kgqa. `kg.ttl` is hand-written; everything else here is generated by
`tools/make_demo.py` (edit the specifications there and re-run it, never the files).
A small fictional world: five countries (Norland, Valdoria, Ostmark, Sundara, Brevia), 13
cities, 4 rivers, 15 people, 9 organisations and 10 books, {triples} triples in `kg.ttl`
(namespaces `http://demo.kgqa.org/resource/` and `http://demo.kgqa.org/ontology/`). Nothing
here is taken from a public knowledge graph or benchmark.

- `kg.ttl`: the knowledge graph (Turtle). English and German `rdfs:label`s; numbers as
  xsd:integer, xsd:decimal and xsd:double; dates as xsd:date; years as xsd:gYear; IRIs with
  percent-encoded characters (`Mira_%28river%29`, `Zell%40Home`); a tie (two companies with
  12000 employees); a class hierarchy (`Publisher` < `Company` < `Organisation` < `Agent`).
- `questions.json`: 30 questions (QALD JSON, ids "1".."30", English and German) with gold
  SPARQL and gold answers = the result of executing the gold query on `kg.ttl` with
  pyoxigraph. Shapes: single-hop, two-hop, counts, superlatives, comparatives, ASK (true and
  false), multi-answer lists, literal answers (dates, numbers, strings), an empty gold answer
  (id 22), two multi-variable SELECTs (ids 23, 24).
- `runs/strong.json`, `runs/medium.json`, `runs/weak.json`: three invented systems' outputs in
  QALD JSON; `answers` = the result of executing the run's own query on `kg.ttl`. An entry
  whose query does not parse has the query and no `answers` key.

Answers are canonical: bindings keep the query's order under `ORDER BY`, and are sorted by
their JSON text otherwise. Note that pyoxigraph's store canonicalises numeric literals
(`"1875.0"^^xsd:decimal` is returned as `"1875"`), so gold numbers appear in canonical form.

## Deliberate errors

Every run entry not listed here is exactly right: its answer has the same terms as the gold
answer (same datatypes and language tags). Kinds:
`wrong` (no overlap with gold, F1 0), `partial` (overlaps gold, not equal),
`convention` (equal to gold only under a lenient term-matching rule), `duplicates` (same
values as gold, with repeated rows), `parse_error` (no `answers`), `missing` (no entry).

| run | id | kind | what is wrong |
|---|---|---|---|
"""


def _values(result: dict | None) -> set:
    if result is None:
        return set()
    if "boolean" in result:
        return {("boolean", result["boolean"])}
    return {tuple(sorted(c.items())) for b in result["results"]["bindings"] for c in b.values()}


def flat_f1(gold: dict, pred: dict | None) -> float:
    """F1 of the flattened sets of exact terms (kind, value, datatype, language); no answer
    scores 0; an empty answer to an empty gold answer scores 1."""
    if pred is None:
        return 0.0
    g, p = _values(gold), _values(pred)
    if not g and not p:
        return 1.0
    tp = len(g & p)
    return 0.0 if tp == 0 else 2 * tp / (len(g) + len(p))


def build_readme(store: ox.Store, gold: dict, runs: dict[str, dict]) -> str:
    lines = [README_HEAD.format(triples=len(store))]
    for run, qid, kind, note in error_table():
        lines.append(f"| {run} | {qid} | {kind} | {note.replace('|', '/')} |\n")
    lines.append(
        "\n## Reference figures\n\n"
        "Macro-averaged F1 over the 30 questions, comparing the flattened sets of exact terms (same\n"
        "value, datatype and language tag; no answer scores 0; an empty answer to the empty gold\n"
        "answer scores 1), and the number of questions with F1 = 1:\n\n"
        "| run | macro F1 | exactly right |\n|---|---|---|\n")
    gold_answers = {q["id"]: q["answers"][0] for q in gold["questions"]}
    for name, doc in runs.items():
        pred = {q["id"]: q["answers"][0] for q in doc["questions"] if "answers" in q}
        scores = [flat_f1(g, pred.get(qid)) for qid, g in gold_answers.items()]
        lines.append(f"| {name} | {sum(scores) / len(scores):.4f} | {sum(s == 1.0 for s in scores)} |\n")
    return "".join(lines)


def dumps(doc: dict) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def build() -> dict[Path, str]:
    """Every generated file (absolute path -> text)."""
    store = load_kg()
    gold = build_questions(store)
    runs = {name: build_run(name, spec, store) for name, spec in RUNS.items()}
    files = {DATA / "questions.json": dumps(gold)}
    for name, doc in runs.items():
        files[DATA / "runs" / f"{name}.json"] = dumps(doc)
    files[DATA / "README.md"] = build_readme(store, gold, runs)
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the files on disk; exit 1 when any differs")
    args = ap.parse_args(argv)
    files = build()
    if args.check:
        stale = [p for p, text in files.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
        for p in stale:
            print(f"out of date: {p.relative_to(ROOT)}", file=sys.stderr)
        return 1 if stale else 0
    for p, text in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
