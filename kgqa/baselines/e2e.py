"""``e2e``: an end-to-end reference system for any KG, trained only on questions kgqa generates
from that KG; it answers raw questions (issue 40.1).

- **Training questions** (:func:`generated_training`): :func:`kgqa.make.generate.generate` on the
  KG (English questions also rephrased, :func:`rephrasings`) in rounds of ``round`` graph queries (seeds ``seed``, ``seed + 1``, ...; 1 to ``edges``
  edges, functions at GraphQuestions' shares) until ``n`` questions or the time share of the
  budget is spent; a question text or query seen before is dropped. ``held_out`` of them (every
  k-th generated question with its rephrasings) are kept back and (at most 300 of them, evenly
  spread) answered after training: the manifest's ``held_out`` gives the share
  whose predicted query returns exactly the gold answer on the KG.
- **Linker** (:class:`kgqa.baselines.labels.LabelIndex`): every run of words of the question that
  is an entity label, a part of a composite label (:func:`add_label_parts`), the local name of
  an IRI without a label (:func:`add_local_names`) or a literal value of the KG (longest first, left to right); numbers are values too.
- **Questions about classes as a whole** (:func:`schema_questions`), which graph-query generation
  does not make (it puts a constant in every query): list, count, and the largest, smallest and
  average of a class's numeric properties, worded from the KG's labels; and grouping, two-column,
  negation and threshold questions over the schema (:mod:`kgqa.baselines.e2e_schema`).
- **Skeletons**: each training question with the spans of its query's entities and values replaced
  by ``<e>`` (numbers ``<n>``), and its query with those constants replaced by numbered slots in
  question order. A training item whose constants cannot all be found in its question is skipped
  (counted in ``state.json``).
- **Prediction**: the raw question is linked and masked the same way (each subset of its
  mentions, at most 3 left unmasked, since a word can be a label and an ordinary word); the
  skeletons with as many slots as the subset has mentions are ranked by TF-IDF cosine (word uni- and bigrams, stemmed
  unigrams) with its
  masked text; the slots of the best ``candidates`` are filled in order (an entity slot with the
  mention's best IRI by degree, a value slot with its literal or number), executed on the KG,
  and the best-scored one over all subsets that returns a non-empty answer is the query (none
  does: the first filled one). The score adds how far the question's words name the skeleton's
  relations and classes (:meth:`E2ESystem._relevance`), and a mismatch of counting and *how
  many*, or of a skeleton's order and the question's superlative (:func:`direction`), costs;
  skeletons that order are also kept the other way round (:func:`flipped`); two-edge and
  superlative graph candidates (:mod:`kgqa.baselines.e2e_paths`) compete too, and so do the
  one-edge **graph candidates** over the linked entity's own predicates
  (:func:`kgqa.baselines.e2e_paths.one_edge_candidates`) compete with the skeletons, so relations no generated
  question asked about can be answered. Yes/no questions get ``ASK`` (:func:`as_ask`), *how
  many* questions a count (:func:`as_count`); a yes/no question naming two things asks whether
  the predicate between their classes that it names links them (:meth:`E2ESystem._link`).
  docs/baselines.md gives the weights, and the CK25 development set the changes were made on
  (``bench/experiments/e2e_dev_ck25.json``).
  No mention found: the best skeleton without slots, else no query.

Deterministic for a given KG, seed and budget cut.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
import sys
from itertools import combinations

import numpy as np

from kgqa.model import Dataset, IRI, InputError, Item, TableAnswer
from kgqa.baselines.base import System
from kgqa.baselines.labels import LabelIndex, label_key
from kgqa.baselines.e2e_schema import column_questions, grouping_questions, name_of, plural, schema_labels
from kgqa.baselines.e2e_paths import one_edge_candidates, star_candidates, superlative_candidates, two_hop_candidates
from kgqa.baselines.retrieval import slot_kinds
from kgqa.baselines.simple import tfidf_rows
from kgqa.baselines.tokens import detokenize, query_tokens, question_text, split_declarations
from kgqa.sparql.prefixes import STANDARD_PREFIXES
from kgqa.execute.executor import Executor
from kgqa.make.generate import GenerateOptions, KGAccess, generate

_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
SLOT = "\x00slot"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or not no is are was were be been do does did have has had we "
    "our us you your i me my it its this that these those who whom whose what which when where why how many much "
    "all any some every each there here than then as into over under about give list show tell name".split())


def singular(word: str) -> str | None:
    """An English plural's singular (``switches`` -> ``switch``, ``cities`` -> ``city``), else None."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if re.search(r"(ss|x|z|ch|sh)es$", word):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return None


def _ntriples(token: str, prefixes: dict[str, str]) -> str:
    """A query token (:func:`query_tokens`) in the N-Triples form the label index uses."""
    if token.startswith("<"):
        return token
    if token.startswith(("\"", "'")):
        lex, _, dt = token.rpartition("^^") if "^^" in token else (token, "", "")
        return lex if not dt else f"{lex}^^{_ntriples(dt, prefixes)}"
    pfx, _, local = token.partition(":")
    ns = prefixes.get(pfx, STANDARD_PREFIXES.get(pfx))
    return f"<{ns}{local}>" if ns else token


def _lexical(token: str) -> str:
    """The lexical form of a literal token (``"10"^^xsd:int`` -> ``10``)."""
    body = token.rsplit("^^", 1)[0] if "^^" in token else token
    if "@" in body and body.rfind("@") > body.rfind("\""):
        body = body[: body.rfind("@")]
    return body.strip("\"'")


_PART = re.compile(r"\s+[-–—:|/]\s+|\s*[,;(\[]\s*|\s*[)\]]\s*")


def add_label_parts(index: LabelIndex) -> None:
    """Index the parts of composite labels too (``"G205-5318100 - LCD Gauge"``: also ``"LCD
    Gauge"`` and ``"G205-5318100"``), where the part has two words or four characters and is no
    full label of anything, or only a value (``"Woods Ltd"``, the name of ``"Woods Ltd (United
    States)"``), then of at most 3 entities, which come first: people name things by a part of
    a long label."""
    extra: dict[str, list[str]] = {}
    for ent, labs in index.labels.items():
        if not ent.startswith("<") or ent.endswith(("/>", "#>")):  # not a namespace's own IRI
            continue
        for lab in labs:
            parts = [p for p in _PART.split(lab) if p and p.strip()]
            if len(parts) < 2:
                continue
            for part in parts:
                k = label_key(part)
                if k and (len(k.split()) >= 2 or len(k) >= 4):
                    extra.setdefault(k, []).append(ent)
    for k, ents in extra.items():
        ranked = sorted(set(ents), key=lambda i: (-index.degree.get(i, 0), i))
        if k not in index.by_key:
            index.by_key[k] = ranked
        elif len(ranked) <= 3 and not any(e.startswith("<") for e in index.by_key[k]):
            # "M558-2275045", "Woods Ltd": the item before its ID or name value (a literal of it)
            index.by_key[k] = ranked + index.by_key[k]


def add_name_words(index: LabelIndex, most: int = 5) -> None:
    """``index.name_words``: each word (3+ letters) of a 2- or 3-word label of an IRI, where at
    most ``most`` entities have it, to those entities by degree: a question may name a person or
    a thing by one word of its name (``Ms. Brant``, ``Sabrina from Marketing``)."""
    words: dict[str, set[str]] = {}
    for ent, labs in index.labels.items():
        if not ent.startswith("<"):
            continue
        for lab in labs:
            ws = label_key(lab).split()
            if 2 <= len(ws) <= 3:
                for w in ws:
                    if len(w) >= 3 and not _NUMBER.match(w) and w not in STOPWORDS:
                        words.setdefault(w, set()).add(ent)
    index.name_words = {w: sorted(e, key=lambda i: (-index.degree.get(i, 0), i))
                        for w, e in words.items() if len(e) <= most}


def local_name_words(iri: str) -> str:
    """``http://x/hisco/product_26`` -> ``product 26`` (how kgqa generate names an IRI without a label)."""
    local = re.split(r"[/#]", iri.rstrip("/#"))[-1]
    local = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", local)
    return " ".join(re.split(r"[_\-\s.]+", local)).strip()


def add_local_names(index: LabelIndex, executor: Any) -> None:
    """Index the IRIs that have no label by the words of their local name (not classes and
    predicates), where no label already has that key: the name a question can only give them."""
    oc = executor.execute("SELECT DISTINCT ?c WHERE { { ?s a ?c } UNION { ?s ?c ?o } }")
    schema = {r[0].n3() for r in oc.answer.rows if r[0] is not None} if not oc.status.failed and \
        isinstance(oc.answer, TableAnswer) else set()
    extra: dict[str, list[str]] = {}
    for ent in index.degree:
        if ent.startswith("<") and ent not in index.labels and ent not in schema:
            k = label_key(local_name_words(ent[1:-1]))
            if k and k not in index.by_key and not _NUMBER.match(k):
                extra.setdefault(k, []).append(ent)
    for k, ents in extra.items():
        index.by_key[k] = sorted(set(ents), key=lambda i: (-index.degree.get(i, 0), i))
        for e in ents:
            index.labels.setdefault(e, []).append(k)


# English superlatives and the measure each compares (general lexicon, not a KG's): "the
# heaviest X" asks for the X of largest weight, as generated questions word it
_MEASURES = {"heavy": "weight", "light": "weight", "expensive": "price", "costly": "price", "cheap": "price",
             "tall": "height", "high": "height", "short": "height", "wide": "width", "narrow": "width",
             "deep": "depth", "shallow": "depth", "long": "length", "old": "age", "young": "age", "big": "size",
             "large": "size", "small": "size", "reliable": "reliability", "populous": "population",
             "fast": "speed", "slow": "speed", "recent": "date", "early": "date", "late": "date", "new": "date",
             "far": "distance", "near": "distance", "rich": "wealth", "frequent": "frequency"}
_MORE = {"heavy", "expensive", "costly", "tall", "high", "wide", "deep", "long", "old", "big", "large", "reliable",
         "populous", "fast", "recent", "late", "new", "far", "rich", "frequent"}
_EST = {"heaviest": "heavy", "lightest": "light", "cheapest": "cheap", "tallest": "tall", "highest": "high",
        "shortest": "short", "widest": "wide", "narrowest": "narrow", "deepest": "deep", "shallowest": "shallow",
        "longest": "long", "oldest": "old", "youngest": "young", "biggest": "big", "largest": "large",
        "smallest": "small", "fastest": "fast", "slowest": "slow", "newest": "new", "earliest": "early",
        "latest": "late", "farthest": "far", "nearest": "near", "richest": "rich"}


def superlatives(words: list[str], measures: frozenset[str] = frozenset()) -> list[str]:
    """The words with each superlative also said the way generated questions say it:
    ``heaviest`` -> ``heaviest largest weight``, ``most expensive`` -> ``largest price``,
    ``cheapest`` -> ``smallest price``; the measure it implies is left out where the next word
    is one of ``measures`` (words naming the KG's numeric properties): *the highest
    reliability index* compares reliability, not height."""
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        adj = _EST.get(w)
        if adj is None and w in ("most", "least") and i + 1 < len(words) and words[i + 1] in _MEASURES:
            adj, i = words[i + 1], i + 1
            up = (w == "most") == (adj in _MORE)
        else:
            up = adj in _MORE
        named = i + 1 < len(words) and words[i + 1] in measures
        if adj is None:
            out.append(w)
        else:
            out += [w, "largest" if up else "smallest", *([_MEASURES[adj]] if adj in _MEASURES and not named else [])]
        i += 1
    return out


YES_NO = frozenset("do does did is are was were has have had can could will".split())
_SELECT_WHERE = re.compile(r"^\s*SELECT\s+(?:DISTINCT\s+)?\?\w+\s+WHERE\s*(\{.*\})\s*$", re.S | re.I)


def as_ask(query: str) -> str:
    """A yes/no question's query: ``SELECT ?x WHERE {...}`` as ``ASK WHERE {...}`` (other
    forms unchanged)."""
    m = _SELECT_WHERE.match(query)
    return f"ASK WHERE {m[1]}" if m else query


def as_count(query: str) -> str:
    """A how-many question's query: ``SELECT ?x WHERE {...}`` as ``SELECT (COUNT(DISTINCT ?x) AS
    ?count) WHERE {...}`` (other forms unchanged)."""
    m = _SELECT_WHERE.match(query)
    var = re.match(r"^\s*SELECT\s+(?:DISTINCT\s+)?(\?\w+)", query, re.I)
    return f"SELECT (COUNT(DISTINCT {var[1]}) AS ?count) WHERE {m[1]}" if m and var else query


_UP = frozenset("largest highest most greatest maximum max biggest top".split())
_DOWN = frozenset("smallest lowest least fewest minimum min".split())


def direction(words: Sequence[str]) -> str | None:
    """``DESC`` where the question (superlatives said as generated questions say them,
    :func:`superlatives`) asks for the largest of something, ``ASC`` for the smallest, else None
    (both: None)."""
    up, down = any(w in _UP for w in words), any(w in _DOWN for w in words)
    return None if up == down else ("DESC" if up else "ASC")


def _against(query: Sequence[str], way: str | None) -> bool:
    """A skeleton that orders the other way than the question asks (``ORDER BY ASC`` for *the
    most expensive*)."""
    if way is None or "ORDER" not in query:
        return False
    ways = {t for t in query if t in ("ASC", "DESC")} or {"ASC"}
    return way not in ways


_OPPOSITE = {"largest": "smallest", "highest": "lowest", "most": "least", "maximum": "minimum",
             "greatest": "least", "biggest": "smallest", "max": "min"}
_OPPOSITE |= {v: k for k, v in list(_OPPOSITE.items()) if v not in ("least", "smallest")}
_OPPOSITE |= {"least": "most", "smallest": "largest"}
_FLIP = {"ASC": "DESC", "DESC": "ASC", "MAX": "MIN", "MIN": "MAX"}


def flipped(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A skeleton that orders (``ORDER BY ASC/DESC``) or takes a ``MAX``/``MIN``, the other way
    round, its question's superlative swapped (``largest`` <-> ``smallest``, ``highest`` <->
    ``lowest``): generation words one direction of a relation, a question can ask the other.
    None where the question says no direction word or the query has no direction keyword."""
    doc, query = entry["doc"], entry["query"]
    if not any(w in _OPPOSITE for w in doc) or not any(t in _FLIP for t in query):
        return None
    return {**entry, "doc": [_OPPOSITE.get(w, w) for w in doc], "query": [_FLIP.get(t, t) for t in query],
            "id": f"{entry['id']}~"}


def strong(span: tuple[int, int, Any], cased: Sequence[str]) -> bool:
    """A mention that is hardly an ordinary word: two words or more, or written with a capital
    after the question's first word (``Compensators``, ``Toulouse``)."""
    s, e = span[0], span[1]
    return e - s >= 2 or any(k > 0 and cased[k][:1].isupper() for k in range(s, e))


def focus_classes(relwords: dict[str, list[str]], classes: set[str], words: Sequence[str]) -> list[str]:
    """The classes the question names (every word of the class's name matched), and of those
    the one(s) named first: the thing asked for comes first in English (*which department is
    responsible for hardware ...*: Department, not Hardware)."""
    at: dict[str, int] = {}
    for c, names in relwords.items():
        if c in classes:
            hits = [min((k for k, w in enumerate(words) if _matches(n, w)), default=-1) for n in names]
            if hits and min(hits) >= 0:
                at[c] = max(hits)
    first = min(at.values(), default=None)
    return [c for c, k in at.items() if k == first]


def _counts(query: Sequence[str]) -> bool:
    return "COUNT" in query


def _matches(name_word: str, word: str) -> bool:
    if name_word == word:
        return True
    if len(name_word) >= 4 and len(word) >= 4 and (name_word in word or word in name_word):
        return True
    return len(name_word) >= 5 and len(word) >= 5 and name_word[:5] == word[:5]


def relation_words(executor: Any, lang: str = "en") -> dict[str, list[str]]:
    """``<IRI>`` of every predicate and class of the KG -> the content words of its label (else
    of its local name): what a question says to ask for that relation."""
    def rows(q: str) -> list:
        oc = executor.execute(q)
        return oc.answer.rows if not oc.status.failed and isinstance(oc.answer, TableAnswer) else []

    labels: dict[str, list[str]] = {}
    for s_, lab in rows("SELECT ?s ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l . "
                        "{ ?x a ?s } UNION { ?x ?s ?y } }"):
        if lab is not None and (not lab.language or lab.language.split("-")[0] == lang):
            labels.setdefault(s_.value, []).append(lab.value)
    out: dict[str, list[str]] = {}
    for (x,) in rows("SELECT DISTINCT ?x WHERE { { ?s ?x ?o } UNION { ?s a ?x } }"):
        if isinstance(x, IRI):
            text = " ".join(labels.get(x.value, [])) or local_name_words(x.value)
            ws = [w for w in dict.fromkeys(label_key(text).split()) if w not in STOPWORDS and not _NUMBER.match(w)]
            ws = [w for w in ws if w not in ("mm", "g")] if len(ws) > 1 else ws
            if ws:
                out[f"<{x.value}>"] = ws
    return out


def _merged(spans: list[tuple[int, int, list[str]]]) -> list[tuple[int, int, list[str]]]:
    """Adjacent mentions that can name the same entity as one mention of it (*the Potentiometer
    Rheostat Z763-7274829*: a name two items have, then the ID of one of them)."""
    out: list[tuple[int, int, list[str]]] = []
    for s, e, cands in spans:
        if out and out[-1][1] == s:
            common = [c for c in out[-1][2] if c.startswith("<") and c in cands]
            if common:
                out[-1] = (out[-1][0], e, common)
                continue
        out.append((s, e, cands))
    return out


def _weak(word: str, written: str | None) -> bool:
    """A one-word match too weak to be a mention: unless written in capitals (``US``), a stop
    word or a word of at most 3 letters."""
    if _NUMBER.match(word) or (len(word) >= 2 and (written or "").isupper()):
        return False  # a number is matched with its typed values of the KG
    return len(word) < 2 or word in STOPWORDS or len(word) <= 3


class E2ESystem(System):
    kind = "e2e"
    needs_kg = True
    defaults = {"n": 800, "round": 150, "edges": 2, "held_out": 0.1, "candidates": 100, "tries": 12, "generate_share": 0.7,
                "drop_penalty": 0.85, "strong_drop_penalty": 0.5, "unnamed_penalty": 0.6, "relation_weight": 0.3,
                "pattern_penalty": 0.0, "graph_base": 0.75, "hop_base": 0.8, "type_penalty": 0.15,
                "form_penalty": 0.15}

    trace: list | None = None  # a list: every query tried is appended, (score, mentions kept, query)

    # ------------------------------------------------------------------ linking

    def _index(self, executor: Any) -> LabelIndex:
        if getattr(self, "_labels", None) is None or self._labels[0] is not executor:
            index = LabelIndex.from_executor(executor, self.lang)
            add_label_parts(index)
            add_local_names(index, executor)
            add_name_words(index)
            self._relwords = relation_words(executor, self.lang)
            oc = executor.execute("SELECT DISTINCT ?c WHERE { ?x a ?c }")
            self._classes = {f"<{r[0].value}>" for r in oc.answer.rows if isinstance(r[0], IRI)} \
                if not oc.status.failed and isinstance(oc.answer, TableAnswer) else set()
            oc = executor.execute("SELECT DISTINCT ?p WHERE { ?s ?p ?o . FILTER(isNumeric(?o)) }")
            self._measures = frozenset(w for r in (oc.answer.rows if not oc.status.failed and
                                                   isinstance(oc.answer, TableAnswer) else [])
                                       if isinstance(r[0], IRI) for w in self._relwords.get(f"<{r[0].value}>", []))
            self._labels = (executor, index)
        return self._labels[1]

    @staticmethod
    def _mentions(words: list[str], index: LabelIndex, cased: list[str] | None = None) -> list[tuple[int, int, list[str]]]:
        """``(start, end, candidates)`` word spans: labels / values of the KG (the last word also
        as its singular: ``Transistors``, or without a possessive: ``Rebecca Hall's``), numbers, and (with ``cased``, the question's words as
        written) a capitalised word that is one word of a few entities' names (``Ms. Brant``). A
        one-word match that is a stop word, or of at most 3 letters not written in capitals (``in``
        vs ``US``), is no mention."""
        out: list[tuple[int, int, list[str]]] = []
        i = 0
        while i < len(words):
            for n in range(min(index.max_words, len(words) - i), 0, -1):
                key = " ".join(words[i:i + n])
                if key not in index.by_key:
                    last = words[i + n - 1]
                    one = last[:-2] if last[-2:] in ("'s", "’s") else singular(last)
                    key = " ".join([*words[i:i + n - 1], one]) if one else key  # Transistors, Rebecca Hall's
                if key in index.by_key and not (n == 1 and _weak(words[i], cased[i] if cased else None)):
                    out.append((i, i + n, index.by_key[key]))
                    i += n
                    break
            else:
                w = words[i]
                if _NUMBER.match(w):
                    out.append((i, i + 1, [f'"{w}"']))
                elif cased and i > 0 and cased[i][:1].isupper() and w not in STOPWORDS and \
                        w in getattr(index, "name_words", {}):
                    out.append((i, i + 1, index.name_words[w]))
                i += 1
        return _merged(out)

    @staticmethod
    def _masked(words: list[str], spans: Sequence[tuple[int, int, Any]]) -> list[str]:
        """The words with each span replaced by ``<n>`` (a number) or ``<e>``."""
        out, i = [], 0
        for s, e, *_ in sorted(spans, key=lambda x: x[0]):
            out += words[i:s] + ["<n>" if _NUMBER.match(" ".join(words[s:e])) else "<e>"]
            i = e
        return out + words[i:]

    # ------------------------------------------------------------------ training

    def _skeleton(self, it: Item, index: LabelIndex) -> dict[str, Any] | None:
        declared, _ = split_declarations(it.sparql)
        prefixes = {**self.prefixes, **declared}
        toks = query_tokens(it.sparql, prefixes)
        kinds = slot_kinds(toks)
        words = [w.lower() for w in _WORDS.findall(question_text(it, self.lang))]
        consts = list(dict.fromkeys(toks[i] for i, k in kinds.items() if k in ("E", "L")))
        consts += [t for t in dict.fromkeys(toks) if _NUMBER.match(t) and t in words and t not in consts]
        spans: list[tuple[int, int, str, str]] = []
        taken: set[int] = set()
        for c in consts:
            nt = _ntriples(c, prefixes)
            labels = index.labels.get(nt, []) + ([_lexical(c)] if c.startswith(("\"", "'")) or _NUMBER.match(c) else [])
            keys = sorted({label_key(lab) for lab in labels if label_key(lab)}, key=len, reverse=True)
            hit = None
            for k in keys:
                kw = k.split(" ")
                for s in range(len(words) - len(kw) + 1):
                    if words[s:s + len(kw)] == kw and not taken & set(range(s, s + len(kw))):
                        hit = (s, s + len(kw))
                        break
                if hit:
                    break
            if hit is None:
                return None
            taken |= set(range(*hit))
            kind = "N" if _NUMBER.match(c) else ("L" if c.startswith(("\"", "'")) else "E")
            spans.append((hit[0], hit[1], c, kind))
        spans.sort()
        slot_of = {c: k for k, (_, _, c, _) in enumerate(spans)}
        query = [f"{SLOT}{slot_of[t]}" if t in slot_of else t for t in toks]
        return {"doc": self._masked(words, spans),
                "query": query, "slots": [k for _, _, _, k in spans], "id": it.id}

    def _fit(self, train: list[Item], valid: list[Item] | None, kg: Any) -> None:
        if kg is None:
            raise InputError("--kg", "the e2e baseline reads the KG (labels, values, execution): pass --kg")

        self.prefixes: dict[str, str] = {}
        for it in train:
            self.prefixes.update(split_declarations(it.sparql)[0])
        with Executor.open(kg, cache=False) as ex:
            index = self._index(ex)
            entries = [self._skeleton(it, index) for it in train]
            self._labels = None
        self.entries = [e for e in entries if e is not None]
        self.skipped = len(entries) - len(self.entries)
        if not self.entries:
            raise InputError("TRAIN", "no training question names its query's entities and values by their KG labels")
        self._vectorize()

    def _features(self, doc: Sequence[str]) -> Counter:
        """Word uni- and bigrams, and unigrams crudely stemmed (plural ``s`` / ``es`` cut)."""
        stems = [re.sub(r"(?<=\w\w\w)(es|s)$", "", w) for w in doc]
        grams = [f"#{g[k:k + 4]}" for w in doc if len(w) >= 5 and w[0] != "<" for g in [f"<{w}>"]
                 for k in range(len(g) - 3)]
        return Counter([*doc, *(f"{a} {b}" for a, b in zip(doc, doc[1:])), *(f"~{w}" for w in stems), *grams])

    def _vectorize(self) -> None:
        seen: set[tuple[str, str]] = set()
        unique = []
        for e in [*self.entries, *filter(None, map(flipped, self.entries))]:  # the same masked question and skeleton once (rephrasings repeat them)
            key = (" ".join(e["doc"]), " ".join(e["query"]))
            if key not in seen:
                seen.add(key)
                unique.append(e)
        self.entries = unique
        docs = [self._features(e["doc"]) for e in self.entries]
        df = Counter(f for d in docs for f in d)
        self.vocab = {f: i for i, f in enumerate(sorted(df))}
        self.idf = np.array([math.log((1 + len(docs)) / (1 + df[f])) + 1 for f in sorted(df)])
        self.matrix = self._matrix(docs)
        self.by_slots: dict[int, list[int]] = {}
        for k, e in enumerate(self.entries):
            self.by_slots.setdefault(len(e["slots"]), []).append(k)

    def _matrix(self, docs: list[Counter]):
        return tfidf_rows(docs, self.vocab, self.idf, sublinear=True)

    # ------------------------------------------------------------------ prediction

    def _fill(self, entry: dict[str, Any], spans: list[tuple[int, int, list[str]]]) -> str | None:
        values: list[str] = []
        for kind, (_, _, cands) in zip(entry["slots"], spans):
            if kind == "E":
                pick = next((c for c in cands if c.startswith("<")), None)
                if pick is None:
                    return None
                values.append(pick)
            elif kind == "N":
                pick = next((c for c in cands if _NUMBER.match(_lexical(c))), None)
                if pick is None:
                    return None
                values.append(_lexical(pick))
            else:
                pick = next((c for c in cands if c.startswith("\"")), None)
                if pick is None:
                    return None
                values.append(pick)
        toks = [values[int(t[len(SLOT):])] if t.startswith(SLOT) else t for t in entry["query"]]
        return detokenize(toks, self.prefixes)

    def _answers(self, executor: Any, query: str) -> bool:
        oc = executor.execute(query)
        if oc.status.failed or oc.answer is None:
            return False
        if isinstance(oc.answer, TableAnswer):
            rows = oc.answer.rows
            if len(rows) == 1 and len(rows[0]) == 1 and rows[0][0] is not None and rows[0][0].value in ("0", "0.0"):
                return False  # a count of nothing
            return bool(rows) and any(v is not None for r in rows for v in r)
        return True

    def _one(self, question: str, index: LabelIndex, executor: Any) -> str | None:
        """The query of the best-scored filled skeleton that answers, over the subsets of the
        mentions found (a word can name an entity and be an ordinary word of the question:
        each subset is masked and compared on its own; at most 3 mentions left unmasked)."""

        cased = _WORDS.findall(question)
        words = [w.lower() for w in cased]
        spans = self._mentions(words, index, cased)
        said = superlatives(words, self._measures)
        best: tuple[float, int, str] | None = None
        drop, strong_drop = float(self.config["drop_penalty"]), float(self.config["strong_drop_penalty"])
        first: str | None = None
        per = max(1, int(self.config["tries"]))
        rel, simple = float(self.config["relation_weight"]), float(self.config["pattern_penalty"])
        form, counting = float(self.config["form_penalty"]), " ".join(words[:2]) in ("how many", "how much")
        way = direction(said)
        for size in range(len(spans), max(-1, len(spans) - 4), -1):
            pool = self.by_slots.get(size, [])
            if not pool:
                continue
            for keep in combinations(spans, size):
                cost = math.prod(drop if not strong(sp, cased) else strong_drop for sp in spans if sp not in keep)
                if not keep and any(strong(sp, cased) for sp in spans):
                    cost *= float(self.config["unnamed_penalty"])  # a reading of the class as a whole, a name said
                doc = self._matrix([self._features(superlatives(self._masked(words, keep), self._measures))])
                scores = np.asarray((self.matrix[pool] @ doc.T).todense()).ravel()
                top = np.argsort(-scores, kind="stable")[: int(self.config["candidates"])]
                ranked = sorted(((float(scores[j]) + rel * self._relevance(self.entries[pool[int(j)]], said)
                                  - simple * self._patterns(self.entries[pool[int(j)]])
                                  - form * (_counts(self.entries[pool[int(j)]]["query"]) != counting)
                                  - form * _against(self.entries[pool[int(j)]]["query"], way))
                                 * cost, int(j)) for j in top)
                if executor is not None and len(top) and 1 <= size <= 2 and \
                        not any(_NUMBER.match(" ".join(words[k[0]:k[1]])) for k in keep):
                    # a strong name left out costs the whole graph candidate, an ordinary word its base
                    named = math.prod(strong_drop for sp in spans if sp not in keep and strong(sp, cased))
                    base = float(scores[top[0]]) * float(self.config["graph_base"]) * cost / named
                    ranked += [(s * named, q) for s, q in self._path_candidates(list(keep), words, executor, base)]
                ranked.sort(key=lambda x: -x[0])  # stable: ties keep the TF-IDF order
                tried = 0
                for score, j in ranked:
                    if best is not None and score <= best[0]:
                        break
                    if tried >= per and not isinstance(j, str):
                        continue  # skeleton tries spent: graph candidates (read off the KG) still compete
                    q = j if isinstance(j, str) else self._fill(self.entries[pool[j]], list(keep))
                    if q is None:
                        continue
                    first = first or q
                    tried += not isinstance(j, str)
                    if self.trace is not None:  # what was tried, for reading a question's ranking
                        self.trace.append((round(score, 4), size, q))
                    if executor is None or self._answers(executor, q):
                        best = (score, size, q)
                        break
        query = best[2] if best is not None else first
        if query and words and words[0] in YES_NO:
            ents = [next((c for c in sp[2] if c.startswith("<")), None) for sp in spans]
            ents = list(dict.fromkeys(e for e in ents if e))
            link = self._link(ents[0], ents[1], said, executor) if len(ents) == 2 and executor is not None else None
            return link or as_ask(query)
        return as_count(query) if query and counting else query

    def _path_candidates(self, keep: list[tuple[int, int, list[str]]], plain: list[str], executor: Any,
                         base: float) -> list[tuple[float, str]]:
        """Graph candidates for one kept mention (one edge, :func:`one_edge_candidates`, and two
        hops, :func:`two_hop_candidates`) or two entity mentions (:func:`star_candidates`), the
        two-edge ones at ``hop_base`` x ``base``. The classes the question names for its answer
        leave out a mention's own class said beside it (*the Engineering department*)."""
        rel = float(self.config["relation_weight"])
        cands = [k[2] for k in keep]
        ents = [next((c for c in cs if c.startswith("<")), None) for cs in cands]
        words = superlatives(plain, self._measures)
        named = focus_classes(self._relwords, self._classes,
                              superlatives(self._undescribed(plain, keep, ents, executor), self._measures))
        hop, off = base * float(self.config["hop_base"]), float(self.config["type_penalty"])

        def relevance(t: str) -> float:
            return self._relevance({"query": [t]}, words)
        if len(cands) == 2:
            if None in ents or ents[0] == ents[1] or hop <= 0:
                return []
            return star_candidates(ents[0], ents[1], executor, relevance, named, hop, rel, off)
        value = next((c for c in cands[0] if c.startswith("\"")), None)
        out = one_edge_candidates(ents[0], value, executor, relevance, named, base, rel, off)
        if ents[0] is not None and hop > 0:
            out += two_hop_candidates(ents[0], executor, relevance, named, hop, rel, off)
            way = direction(words)
            if way is not None:  # a superlative asked: a reading that orders nothing costs form_penalty
                form = float(self.config["form_penalty"])
                out = [(s - form * ("ORDER BY" not in q), q) for s, q in out]
                out += superlative_candidates(ents[0], way, executor, relevance, hop, rel)
        return out

    def _link(self, first: str, second: str, words: list[str], executor: Any) -> str | None:
        """A yes/no question naming two things: ``ASK { first p second }`` (either way round) with
        the predicate the KG has between members of their classes that the question names best
        (else the only one that links them); it need not hold for these two."""
        found: list[tuple[float, str]] = []
        for a, b in ((first, second), (second, first)):
            oc = executor.execute(f"SELECT DISTINCT ?p WHERE {{ {a} a ?c1 . {b} a ?c2 . ?s a ?c1 . ?s ?p ?o . ?o a ?c2 }} "
                                  "LIMIT 50")  # DISTINCT and LIMIT: no scan of a large KG to the end
            for (p,) in (oc.answer.rows if not oc.status.failed and isinstance(oc.answer, TableAnswer) else []):
                if isinstance(p, IRI) and p.value != RDF_TYPE:
                    found.append((self._relevance({"query": [f"<{p.value}>"]}, words), f"ASK WHERE {{ {a} <{p.value}> {b} . }}"))
        if not found:
            return None
        found.sort(key=lambda x: -x[0])  # stable: ties keep the first direction
        return found[0][1] if found[0][0] > 0 or len(found) == 1 else None

    def _undescribed(self, words: list[str], keep: Sequence[tuple[int, int, Any]], ents: Sequence[str | None],
                     executor: Any) -> list[str]:
        """The words with those that name a kept entity's own class just before or after its
        mention (*the hardware Z763-7274829*, *the Engineering department*) blanked out."""
        out = list(words)
        for (s, e, _), ent in zip(keep, ents):
            if ent is None:
                continue
            oc = executor.execute(f"SELECT DISTINCT ?c WHERE {{ {ent} a ?c }}")
            names = {w for r in (oc.answer.rows if not oc.status.failed and isinstance(oc.answer, TableAnswer) else [])
                     if isinstance(r[0], IRI) for w in self._relwords.get(f"<{r[0].value}>", [])}
            for side in (range(s - 1, max(-1, s - 4), -1), range(e, min(len(words), e + 3))):
                for k in side:
                    if not any(_matches(n, words[k]) or _matches(n, singular(words[k]) or "") for n in names):
                        break
                    out[k] = ""
        return out

    @staticmethod
    def _patterns(entry: dict[str, Any]) -> int:
        """Triple patterns of a skeleton beyond the first (a simpler reading is preferred)."""
        return max(0, sum(1 for t in entry["query"] if t == ".") - 1)

    def _relevance(self, entry: dict[str, Any], words: list[str]) -> float:
        """How far the question's words name the relations and classes of a skeleton: the mean,
        over its predicates and classes, of the share of their label's content words that some
        question word matches (equal, one inside the other: ``phone``/``telephone``, or the same
        first five letters: ``expert``/``expertise``)."""
        shares = []
        for t in dict.fromkeys(entry["query"]):
            if not t.startswith(("<", "?", "\"", "'", SLOT)) and ":" in t:
                t = _ntriples(t, self.prefixes)  # skos:broader -> <http://...#broader>
            names = self._relwords.get(t) if t.startswith("<") else None
            if names:
                shares.append(sum(any(_matches(c, w) for w in words) for c in names) / len(names))
        return sum(shares) / len(shares) if shares else 0.0

    def _queries(self, items: Sequence[Item], executor: Any) -> list[str | None]:
        if executor is None:
            raise InputError("--kg", "the e2e baseline links entities on the KG: pass --kg (or train with it)")
        index = self._index(executor)
        return [self._one(question_text(it, self.lang), index, executor) for it in items]

    # ------------------------------------------------------------------ files

    def _save_state(self, folder: Path) -> None:
        (folder / "state.json").write_text(json.dumps({"prefixes": self.prefixes, "entries": self.entries,
                                                       "skipped": self.skipped}, ensure_ascii=False), encoding="utf-8")
        if getattr(self, "held", None):  # the held-back questions, to measure a later version on them
            (folder / "held_out.json").write_text(json.dumps(
                [{"id": it.id, "question": question_text(it, self.lang), "sparql": it.sparql} for it in self.held],
                ensure_ascii=False), encoding="utf-8")

    def _load_state(self, folder: Path) -> None:
        state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        self.prefixes, self.entries, self.skipped = state["prefixes"], state["entries"], state.get("skipped", 0)
        self._vectorize()


_WHICH_IS_THE = re.compile(r"^Which (?P<cls>.+?) (?P<be>is|are) the (?P<rest>.+?)\??$")
_WHICH = re.compile(r"^Which (?P<cls>.+?) (?P<verb>is|are|has|have|was|were) (?P<rest>.+?)\??$")


def rephrasings(question: str) -> list[str]:
    """Other ways people ask what a generated English question asks (its query unchanged):
    ``Which C is the P of E?`` -> ``What is the P of E?``, ``Who is the P of E?``; ``Which C has
    ...?`` -> ``What C has ...?``, ``Give me the C that has ...``, ``List the C that has ...``."""
    out: list[str] = []
    m = _WHICH_IS_THE.match(question)
    if m:
        out += [f"What {m['be']} the {m['rest']}?", f"Who {m['be']} the {m['rest']}?"]
    m = _WHICH.match(question)
    if m:
        out += [f"What {m['cls']} {m['verb']} {m['rest']}?", f"Give me the {m['cls']} that {m['verb']} {m['rest']}.",
                f"List the {m['cls']} that {m['verb']} {m['rest']}."]
    return out


def generated_training(kg: Any, *, n: int = 800, round_size: int = 150, edges: int = 2, seed: int = 0,
                       seconds: float | None = None, lang: str = "en", say: Any = None) -> list[Item]:
    """Questions generated from ``kg`` in rounds (module docstring), at most ``n``, stopping when
    ``seconds`` are spent (after the first round)."""

    start = time.monotonic()
    items: list[Item] = []
    seen_q: set[str] = set()
    seen_s: set[str] = set()
    access = KGAccess.open(kg)
    try:
        k = 0
        while len(items) < n and k < 40:
            if k and seconds is not None and time.monotonic() - start > seconds:
                break
            opts = GenerateOptions(n=min(round_size, n - len(items)), edges=(1, edges), seed=seed + k, groundings=6)
            ds = generate(access, opts, lang=lang).dataset
            for it in ds.items:
                q = " ".join(question_text(it, lang).lower().split())
                if it.sparql and q not in seen_q and it.sparql not in seen_s:
                    seen_q.add(q)
                    seen_s.add(it.sparql)
                    group = len(seen_s)
                    for text in [question_text(it, lang), *(rephrasings(question_text(it, lang)) if lang == "en" else [])]:
                        items.append(Item(f"g{len(items)}", {lang: text}, it.sparql, it.answer, metadata={"group": group}))
            k += 1
            if say:
                say(f"e2e: generated {len(items)} questions from the KG ({k} round(s), "
                    f"{time.monotonic() - start:.0f} s)")

        with Executor.open(kg, cache=False) as ex:
            labels = schema_labels(ex, lang)
            for it in [*schema_questions(ex, lang), *grouping_questions(ex, labels, lang), *column_questions(ex, labels, lang)]:
                items.append(Item(f"s{len(items)}", dict(it.questions), it.sparql, metadata={"group": f"s{it.sparql}"}))
        if say:
            say(f"e2e: {len(items)} questions with those about classes as a whole")
    finally:
        access.close()
    if not items:
        raise InputError(str(kg), "kgqa generate made no question from this KG; the e2e baseline has nothing to train on")
    return items


_XSD = "http://www.w3.org/2001/XMLSchema#"
NUMERIC = tuple(_XSD + t for t in ("integer", "int", "long", "short", "decimal", "double", "float",
                                   "nonNegativeInteger", "positiveInteger"))


def schema_questions(executor: Any, lang: str = "en", per_class: int = 3) -> list[Item]:
    """Questions about a class as a whole, which graph-query generation (a constant in every
    query) does not make: list, count, and for the numeric properties of its members the
    largest, smallest and average; worded from the KG's labels (else local names)."""
    def rows(q: str) -> list:
        oc = executor.execute(q)
        return oc.answer.rows if not oc.status.failed and isinstance(oc.answer, TableAnswer) else []

    schema_labels: dict[str, list[str]] = {}
    for s_, lab in rows("SELECT ?s ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l . "
                        "{ ?x a ?s } UNION { ?x ?s ?y } }"):
        if lab is not None and (not lab.language or lab.language.split("-")[0] == lang):
            schema_labels.setdefault(s_.n3(), []).append(lab.value)
    classes = [(c.value, int(n.value)) for c, n in rows("SELECT ?c (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x a ?c } GROUP BY ?c")
               if isinstance(c, IRI) and not c.value.startswith(("http://www.w3.org/", "http://www.w3.org/2002/07/owl#"))]
    out: list[Item] = []
    for c, n in sorted(classes, key=lambda x: -x[1])[:60]:
        name = name_of(c, schema_labels)
        many = plural(name)
        q_list = f"SELECT DISTINCT ?x WHERE {{ ?x a <{c}> . }}"
        q_count = f"SELECT (COUNT(DISTINCT ?x) AS ?count) WHERE {{ ?x a <{c}> . }}"
        out += [Item("", {lang: f"Which {many} are there?"}, q_list), Item("", {lang: f"List all {many}."}, q_list),
                Item("", {lang: f"How many {many} are there?"}, q_count)]
        props = rows(f"SELECT ?p (COUNT(*) AS ?n) WHERE {{ ?x a <{c}> ; ?p ?v . FILTER(isLiteral(?v) && "
                     f"DATATYPE(?v) IN ({', '.join(f'<{t}>' for t in NUMERIC)})) }} GROUP BY ?p ORDER BY DESC(?n) "
                     f"LIMIT {per_class}")
        for (p, _) in props:
            pn = name_of(p.value, schema_labels)
            body = f"?x a <{c}> . ?x <{p.value}> ?v ."
            out += [Item("", {lang: f"Which {name} has the highest {pn}?"},
                         f"SELECT ?x WHERE {{ {body} }} ORDER BY DESC(?v) LIMIT 1"),
                    Item("", {lang: f"Which {name} has the lowest {pn}?"},
                         f"SELECT ?x WHERE {{ {body} }} ORDER BY ASC(?v) LIMIT 1"),
                    Item("", {lang: f"What is the average {pn} of all {many}?"},
                         f"SELECT (AVG(?v) AS ?avg) WHERE {{ {body} }}")]
    return out


def train_e2e(kg: Any, output: str | Path | None = None, *, minutes: float | None = None, seed: int = 0,
              progress: bool = False, **config: Any) -> E2ESystem:
    """``kgqa baseline train e2e --kg KG``: generate, hold back, fit, measure on the held-back
    questions (the manifest's ``held_out``), save."""

    say = (lambda m: print(m, file=sys.stderr, flush=True)) if progress else None
    if minutes is not None and "n" not in config:
        config = {**config, "n": 20000}  # the budget decides
    system = E2ESystem(seed=seed, **config)
    system.minutes, system.show_progress = minutes, progress
    cfg = system.config
    budget = None if minutes is None else minutes * 60 * float(cfg["generate_share"])
    items = generated_training(kg, n=int(cfg["n"]), round_size=int(cfg["round"]), edges=int(cfg["edges"]),
                               seed=seed, seconds=budget, lang=system.lang, say=say)
    # held back by generated question: its rephrasings (and a class question's wordings) go together
    every = max(2, round(1 / float(cfg["held_out"]))) if cfg["held_out"] else 0
    groups = list(dict.fromkeys(it.metadata["group"] for it in items))
    back = {g for k, g in enumerate(groups) if every and k % every == every - 1}
    held = [it for it in items if it.metadata["group"] in back]
    train = [it for it in items if it.metadata["group"] not in back]
    system.fit(Dataset(f"generated from {Path(str(kg)).name}", train), kg=kg)
    if held:
        step = math.ceil(len(held) / 300)  # at most 300 answered: each can execute up to `candidates` queries
        system.held = held[::step]
        system.manifest["held_out"] = held_out_accuracy(system, system.held, kg)
        if say:
            h = system.manifest["held_out"]
            say(f"e2e: held-back generated questions: {h['correct']}/{h['items']} answered exactly ({h['accuracy']:.1%})")
    if output is not None:
        system.save(output)
    return system


def held_out_of(folder: str | Path, lang: str = "en") -> list[Item]:
    """The held-back generated questions a trained folder keeps (``held_out.json``; none: [])."""
    path = Path(folder) / "held_out.json"
    if not path.exists():
        return []
    return [Item(r["id"], {lang: r["question"]}, r["sparql"]) for r in json.loads(path.read_text(encoding="utf-8"))]


def held_out_accuracy(system: E2ESystem, held: list[Item], kg: Any) -> dict[str, Any]:
    """The share of ``held`` whose predicted query returns exactly the gold query's answer on ``kg``."""

    with Executor.open(kg, cache=False) as ex:
        run = system.predict(Dataset("held-out", held), executor=ex, check=False)
        gold = ex.run({it.id: it.sparql for it in held})
    correct = 0
    for it, p in zip(held, run.predictions):
        g = gold.get(it.id)
        if p.answer is not None and g is not None and g.answer is not None and _same_answer(p.answer, g.answer):
            correct += 1
    return {"items": len(held), "correct": correct, "accuracy": round(correct / len(held), 4),
            "measure": "predicted query's answer on the KG equals the gold query's (as sets of rows)"}


def _same_answer(a: Any, b: Any) -> bool:
    if isinstance(a, TableAnswer) and isinstance(b, TableAnswer):
        return {tuple(r) for r in a.rows} == {tuple(r) for r in b.rows}
    return a == b
