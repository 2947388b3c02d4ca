"""A KG's label index: which entities a question names, found by n-gram label matching.
Entities are written in N-Triples form (``<http://...>``, ``"Japan"``).

Labels are the literal values of :data:`kgqa.model.labels.LABEL_PREDICATES` (no language tag
or the question's language); the key of a label is its words lower-cased with punctuation
removed. :meth:`LabelIndex.find` looks up every run of 1 to ``max_words`` words of the question
(same key) and keeps the longest non-overlapping matches, left to right; the entities of one
label are ranked IRIs before literal values, then by degree (triples they are subject or object
of), highest first, then by their N-Triples text.
"""

from __future__ import annotations

import re
from typing import Any

from kgqa.model.labels import LABEL_PREDICATES
from kgqa.model import InputError, TableAnswer

_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def label_key(text: str) -> str:
    return " ".join(w.lower() for w in _WORDS.findall(text))


class LabelIndex:
    def __init__(self, labels: dict[str, list[str]], degree: dict[str, int], max_words: int = 8):
        self.degree = degree
        self.max_words = max_words
        self.by_key: dict[str, list[str]] = {}
        for iri, labs in labels.items():
            for lab in labs:
                k = label_key(lab)
                if k:
                    self.by_key.setdefault(k, []).append(iri)
        for k, iris in self.by_key.items():
            self.by_key[k] = sorted(set(iris), key=lambda i: (not i.startswith("<"), -degree.get(i, 0), i))
        self.labels = labels

    @classmethod
    def from_executor(cls, executor: Any, lang: str | None = "en", timeout: float = 120.0,
                      values: bool = True) -> "LabelIndex":
        """Every label and every term's degree, read from the KG behind ``executor``. The
        schema (predicates; classes: objects of ``rdf:type``; IRIs the KG's RDFS/OWL statements
        describe as classes or properties) is left out: its labels name
        relations, not topics. With ``values``, literal objects of at most 60 characters
        (other than labels) are indexed too, as themselves (``"Japan"``)."""
        def rows(q: str) -> list:
            oc = executor.execute(q, timeout)
            if oc.status.failed or not isinstance(oc.answer, TableAnswer):
                raise InputError("--kg", f"cannot read the KG ({oc.status.value}): {oc.message}")
            return oc.answer.rows

        preds = " ".join(f"<{p}>" for p in LABEL_PREDICATES)
        schema = {r[0].value for r in rows("SELECT DISTINCT ?p WHERE { ?s ?p ?o }") if r[0] is not None}
        schema |= {r[0].value for r in rows("SELECT DISTINCT ?c WHERE { ?s a ?c }") if r[0] is not None}
        rdfs, owl = "http://www.w3.org/2000/01/rdf-schema#", "http://www.w3.org/2002/07/owl#"
        schema |= {r[0].value for r in rows(
            f"SELECT DISTINCT ?c WHERE {{ {{ ?s ?p ?c . FILTER(?p IN (<{rdfs}range>, <{rdfs}domain>, <{rdfs}subClassOf>, "
            f"<{rdfs}subPropertyOf>)) }} UNION {{ ?c a ?t . FILTER(?t IN (<{rdfs}Class>, <{owl}Class>, "
            f"<http://www.w3.org/1999/02/22-rdf-syntax-ns#Property>, <{owl}ObjectProperty>, <{owl}DatatypeProperty>)) }} "
            "FILTER(isIRI(?c)) }") if r[0] is not None}
        labels: dict[str, list[str]] = {}
        for s, lab in rows(f"SELECT ?s ?l WHERE {{ VALUES ?p {{ {preds} }} ?s ?p ?l . FILTER(isIRI(?s) && isLiteral(?l)) }}"):
            if s.value in schema:
                continue
            if lang is None or not lab.language or lab.language.split("-")[0].lower() == lang.lower():
                labels.setdefault(s.n3(), []).append(lab.value)
        if values:
            for (o,) in rows(f"SELECT DISTINCT ?o WHERE {{ ?s ?p ?o . FILTER(isLiteral(?o) && STRLEN(STR(?o)) <= 60 "
                             f"&& ?p NOT IN ({', '.join(f'<{p}>' for p in LABEL_PREDICATES)})) }}"):
                labels.setdefault(o.n3(), []).append(o.value)
        degree: dict[str, int] = {}
        for q in ("SELECT ?x (COUNT(*) AS ?n) WHERE { ?x ?p ?o } GROUP BY ?x",
                  "SELECT ?x (COUNT(*) AS ?n) WHERE { ?s ?p ?x } GROUP BY ?x"):
            for x, n in rows(q):
                if x is not None and not x.n3().startswith("_:"):
                    degree[x.n3()] = degree.get(x.n3(), 0) + int(n.value)
        return cls({k: sorted(set(v)) for k, v in labels.items()}, degree)

    def find(self, question: str) -> list[tuple[int, int, str, list[str]]]:
        """``(start, end, text, entities)`` of every match in the question (module docstring);
        start/end are word positions."""
        words = [w.lower() for w in _WORDS.findall(question)]
        out = []
        i = 0
        while i < len(words):
            for n in range(min(self.max_words, len(words) - i), 0, -1):
                key = " ".join(words[i:i + n])
                if key in self.by_key:
                    out.append((i, i + n, key, self.by_key[key]))
                    i += n
                    break
            else:
                i += 1
        return out
