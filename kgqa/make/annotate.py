"""Question annotation for seq2seq training (Reyd & Zouaq 2023, Sect. 3.1).

Three variants of a question:

- ``raw``: the question as it is;
- ``tagged``: the mention of each KB element replaced inline by the element
  (``"what is the dbp:office of dbr:Richard_Coke ?"``);
- ``tag-end``: the raw question followed, for each KB element, by ``" <sep> "``, the element, a
  space and its mention text (``"what is the office of richard coke ? <sep> dbr:Richard_Coke
  richard coke <sep> dbp:office office"``). The paper places the elements in random order;
  kgqa uses the elements' query order (below), which is deterministic and reproduces the
  paper's example.

Definitions (exact):

- **KB elements** of an item: the terms of its gold query's triple patterns (subject, predicate,
  object; every IRI inside a property path) and VALUES rows, in order of first occurrence
  (triple patterns in source order, subject-predicate-object within one), that are IRIs outside
  the W3C vocabularies ``rdf:``, ``rdfs:``, ``owl:``, ``xsd:`` (``rdf:type``, ``rdfs:label``
  are query plumbing, not mentioned things), or literals. Variables and blank nodes are not.
- **element text**: an IRI is written as a prefixed name ``pfx:local`` when a namespace
  declared in the query, or else passed as extra ``prefixes``, or else in :data:`~kgqa.sparql.prefixes.STANDARD_PREFIXES`, is a prefix
  of it (longest namespace; among equal namespaces the query's own, then the table's first) and
  the rest is a plain SPARQL local name (letters, digits, ``_ - . :`` and ``%XX``, not ending in
  ``.``); otherwise ``<full IRI>``. A literal is written in N-Triples form (``"Richard Coke"@en``).
- **mentions from templates** (used when the item's ``metadata`` has ``question_template`` and
  ``query_template``, placeholders written ``<1>``, ``<2>``, ...): the question template is
  matched against the question (whole string, case-insensitive, runs of blanks equal, a
  placeholder matches the shortest non-empty text, a repeated placeholder the same text); the
  query template is analyzed and its triple patterns / VALUES rows aligned position by position
  with the query's (same number of patterns, same terms outside placeholders), which gives the
  element filling each placeholder. The placeholder's text in the question is that element's
  mention. When either alignment fails, label matching is used (if labels are available).
- **mentions from labels**: each element's candidate labels are its KB labels (IRIs: the
  literal values of :data:`LABEL_PREDICATES` fetched through the engine, with no language tag
  or one whose primary subtag is the question's language) or its lexical form (literals). A
  candidate span is any run of 1 to (words in the label + 2) consecutive words of the question
  (words: maximal runs of non-blank characters; leading/trailing punctuation of a run is not
  part of it); its score is ``rapidfuzz.fuzz.ratio`` of the lower-cased label and span text
  (0-100). Spans scoring at least ``min_score`` are candidates; they are taken greedily by
  descending score, then longer span, then element order, then position, skipping an element
  already placed and a span overlapping a placed one. Local names are never used as labels
  (that would be guessing).
- An item is **annotated** when every KB element has a mention (``require="all"``) or at least one
  does (``require="any"``; missing elements are then left out of both variants and listed).
  Otherwise it is **not annotated** and listed with its missing elements. Items without a query
  are listed too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
import json
from pathlib import Path
from urllib.parse import unquote

from kgqa import lazy
from kgqa.model import Dataset, IRI, Item, Literal, InputError, TableAnswer
from kgqa.model.labels import LABEL_PREDICATES
from kgqa.sparql.prefixes import STANDARD_PREFIXES
from kgqa.execute.executor import Executor
from kgqa.load import formats, load_dataset
from kgqa.load.jsonio import write_atomic
from kgqa.load.rdf import RDF_EXTENSIONS
from kgqa.sparql.analyzer import Path as PathExpression, analyze

__all__ = [
    "LABEL_PREDICATES", "MODES", "Mention", "Annotation", "kb_elements", "element_text",
    "template_mentions", "label_mentions", "tagged", "tag_end", "fetch_labels",
    "annotate_item", "annotate_dataset", "INTERMEDIARY_KEYS", "intermediary_labels", "align_intermediary",
    "intermediary_mentions", "ontology_labels", "schema_elements", "unmarked", "stem_text", "local_name_text", "element_names",
]

MODES = ("raw", "tagged", "tag-end")
SEP = "<sep>"

_PLUMBING = (
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "http://www.w3.org/2000/01/rdf-schema#",
    "http://www.w3.org/2002/07/owl#",
    "http://www.w3.org/2001/XMLSchema#",
)
_LOCAL = re.compile(r"^(?:[A-Za-z0-9_:-]|%[0-9A-Fa-f]{2})(?:(?:[A-Za-z0-9_.:-]|%[0-9A-Fa-f]{2})*(?:[A-Za-z0-9_:-]|%[0-9A-Fa-f]{2}))?$")
_PLACEHOLDER = re.compile(r"<(\d+)>")
_WORD = re.compile(r"\S+")
_EDGE_PUNCT = "\"'“”‘’«»()[]{}.,;:!?¿¡"

Element = IRI | Literal


@dataclass(frozen=True)
class Mention:
    """Where an element is mentioned: ``question[start:end] == text``; ``source`` is
    ``template`` or ``label``; ``label`` the matched label (label source) and ``score`` 0-100."""

    element: Element
    start: int
    end: int
    text: str
    source: str
    label: str | None = None
    score: float = 100.0


@dataclass
class Annotation:
    """One item's annotation. ``variants`` maps mode -> text (empty when not annotated);
    ``missing`` lists elements without a mention; ``reason`` says why an item was not annotated."""

    id: str
    question: str
    elements: list[Element]
    mentions: list[Mention]
    missing: list[Element]
    variants: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    prefixes: dict[str, str] = field(default_factory=dict)
    #: which text ``question`` is: ``question`` (the item's) or ``intermediary`` (its unmarked
    #: intermediary question, used when more KB elements are found there)
    text_source: str = "question"

    @property
    def annotated(self) -> bool:
        return bool(self.variants)


# --------------------------------------------------------------------------- elements


def _plumbing(iri: IRI) -> bool:
    return iri.value.startswith(_PLUMBING)


def kb_elements(sparql: str) -> tuple[list[Element], dict[str, str]]:
    """The KB elements of a query (module docstring) and its declared prefixes."""

    info = analyze(sparql)
    out: dict[Element, None] = {}

    def add(t: Any) -> None:
        if isinstance(t, IRI):
            if not _plumbing(t):
                out.setdefault(t)
        elif isinstance(t, Literal):
            out.setdefault(t)
        elif isinstance(t, PathExpression):
            for i in t.iris:
                add(i)

    for tp in info.triples:
        for t in tp.spo:
            add(t)
    for vb in info.values:
        for row in vb.rows:
            for t in row:
                add(t)
    return list(out), dict(info.prefixes)


def element_text(e: Element, prefixes: dict[str, str] | None = None) -> str:
    """How an element is written in the annotated question (module docstring)."""
    if isinstance(e, Literal):
        return e.n3()
    best: tuple[int, int, str] | None = None  # (-len(ns), rank, prefix)
    tables = [(prefixes or {}), STANDARD_PREFIXES]
    for rank, table in enumerate(tables):
        for pfx, ns in table.items():
            if ns and e.value.startswith(ns) and _LOCAL.match(e.value[len(ns):]):
                key = (-len(ns), rank, pfx)
                if best is None or key[:2] < best[:2]:
                    best = key
    if best is None:
        return e.n3()
    ns = tables[best[1]][best[2]]
    return f"{best[2]}:{e.value[len(ns):]}"


# --------------------------------------------------------------------------- template mentions


def _question_regex(template: str) -> tuple[re.Pattern, list[str]] | None:
    parts: list[str] = []
    order: list[str] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(template):
        parts.append(_loose(template[pos:m.start()]))
        num = m.group(1)
        if num in order:
            parts.append(f"(?P=p{num})")
        else:
            parts.append(f"(?P<p{num}>.+?)")
            order.append(num)
        pos = m.end()
    parts.append(_loose(template[pos:]))
    if not order:
        return None
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL), order


def _loose(text: str) -> str:
    return r"\s+".join(re.escape(w) for w in text.split(" ")) if text.strip() else (r"\s*" if text else "")


def _placeholder_terms(query: str, query_template: str) -> dict[str, Element] | None:
    q, t = analyze(query), analyze(query_template)
    rows_q = [tp.spo for tp in q.triples] + [tuple(r) for vb in q.values for r in vb.rows]
    rows_t = [tp.spo for tp in t.triples] + [tuple(r) for vb in t.values for r in vb.rows]
    if len(rows_q) != len(rows_t) or not rows_t:
        return None
    out: dict[str, Element] = {}
    renaming: dict[Any, Any] = {}
    for rq, rt in zip(rows_q, rows_t):
        if len(rq) != len(rt):
            return None
        for a, b in zip(rq, rt):
            if isinstance(b, IRI) and b.value.isdigit():
                if not isinstance(a, (IRI, Literal)) or out.setdefault(b.value, a) != a:
                    return None
            elif type(a) is not type(b):
                return None
            elif isinstance(a, (IRI, Literal)):
                if a != b:
                    return None
            elif renaming.setdefault(b, a) != a:  # variables / blank nodes rename consistently
                return None
    return out


def template_mentions(question: str, query: str, question_template: str, query_template: str) -> list[Mention] | None:
    """Mentions found by aligning the global template with the item (module docstring), or
    None when the templates do not fit the question and query."""
    compiled = _question_regex(question_template)
    if compiled is None:
        return None
    rx, order = compiled
    m = rx.fullmatch(question.strip())
    terms = _placeholder_terms(query, query_template)
    if m is None or terms is None or set(order) - set(terms):
        return None
    offset = len(question) - len(question.lstrip())
    out = []
    for num in order:
        s, e = m.span(f"p{num}")
        out.append(Mention(terms[num], s + offset, e + offset, question[s + offset:e + offset], "template"))
    return out


# --------------------------------------------------------------------------- label mentions


def _words(question: str) -> list[tuple[int, int]]:
    spans = []
    for m in _WORD.finditer(question):
        s, e = m.start(), m.end()
        while s < e and question[s] in _EDGE_PUNCT:
            s += 1
        while e > s and question[e - 1] in _EDGE_PUNCT:
            e -= 1
        if e > s:
            spans.append((s, e))
    return spans


def label_mentions(question: str, labels: dict[Element, Sequence[str]], elements: Sequence[Element],
                   min_score: float = 85.0, normalise: Any = None, source: str = "label") -> list[Mention]:
    """Mentions found by fuzzy label matching (module docstring), in element order.
    ``normalise(text) -> text`` is applied to label and span before comparing (default:
    blanks collapsed, lower case)."""
    fuzz = lazy.rapidfuzz_fuzz()

    norm = normalise or (lambda t: " ".join(t.split()).lower())
    words = _words(question)
    cands: list[tuple[float, int, int, int, int, str, str]] = []
    span_text: dict[tuple[int, int], str] = {}
    for ei, el in enumerate(elements):
        for label in dict.fromkeys(labels.get(el, ())):
            lab = norm(label)
            if not lab:
                continue
            width = len(lab.split()) + 2
            for i in range(len(words)):
                for j in range(i, min(len(words), i + width)):
                    s, e = words[i][0], words[j][1]
                    if (s, e) not in span_text:
                        span_text[s, e] = norm(question[s:e])
                    score = fuzz.ratio(lab, span_text[s, e])
                    if score >= min_score:
                        cands.append((score, e - s, ei, s, e, label, question[s:e]))
    cands.sort(key=lambda c: (-c[0], -c[1], c[2], c[3]))
    placed: dict[int, Mention] = {}
    taken: list[tuple[int, int]] = []
    for score, _, ei, s, e, label, text in cands:
        if ei in placed or any(s < te and ts < e for ts, te in taken):
            continue
        placed[ei] = Mention(elements[ei], s, e, text, source, label, float(score))
        taken.append((s, e))
    return [placed[i] for i in sorted(placed)]


def fetch_labels(engine: Any, iris: Iterable[IRI], lang: str | None = "en", batch: int = 200,
                 timeout: float = 60.0, predicates: Sequence[str] = LABEL_PREDICATES) -> dict[IRI, list[str]]:
    """Labels of the IRIs from the KG behind ``engine`` (anything with
    ``execute(query, timeout) -> Outcome``): literal objects of ``predicates``, keeping those
    without a language tag or whose primary subtag is ``lang`` (all when ``lang`` is None),
    sorted for determinism. Raises RuntimeError if a label query fails."""

    todo = list(dict.fromkeys(iris))
    out: dict[IRI, list[str]] = {}
    preds = " ".join(f"<{p}>" for p in predicates)
    for k in range(0, len(todo), batch):
        chunk = todo[k:k + batch]
        values = " ".join(i.n3() for i in chunk if ">" not in i.value and " " not in i.value)
        if not values:
            continue
        q = f"SELECT ?s ?l WHERE {{ VALUES ?s {{ {values} }} VALUES ?p {{ {preds} }} ?s ?p ?l . FILTER(isLiteral(?l)) }}"
        oc = engine.execute(q, timeout)
        if oc.status.failed or not isinstance(oc.answer, TableAnswer):
            raise RuntimeError(f"label query failed ({oc.status.value}): {oc.message}")
        for s, lab in oc.answer.rows:
            if not isinstance(s, IRI) or not isinstance(lab, Literal):
                continue
            if lang is not None and lab.language and lab.language.split("-")[0].lower() != lang.lower():
                continue
            out.setdefault(s, []).append(lab.value)
    return {k: sorted(set(v)) for k, v in out.items()}


# --------------------------------------------------------------------------- intermediary questions

#: metadata keys holding a template-shaped question whose KB elements are marked (LC-QuAD 1.0:
#: ``<...>``; LC-QuAD 2.0: ``{...}``)
INTERMEDIARY_KEYS = ("intermediary_question", "NNQT_question")
_MARKED = re.compile(r"<([^<>]+)>+|\{([^{}]+)\}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_PAREN = re.compile(r"\s*\([^()]*\)")
_SUFFIXES = ("ational", "ations", "ation", "ingly", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "ly", "s")
_STOP = frozenset("a an the of in on at to for by from with and or is are was were be been 's".split())


def intermediary_labels(text: str) -> list[str]:
    """The marked labels of an intermediary question, in order (``<a>``/``{a}``; blanks
    collapsed; LC-QuAD 1.0's stray doubled ``>>`` tolerated)."""
    return [" ".join((m.group(1) or m.group(2)).split()) for m in _MARKED.finditer(text)
            if (m.group(1) or m.group(2)).strip()]


def local_name_text(iri: IRI) -> str:
    """An IRI's local name as words: the part after the last ``/`` or ``#``, percent-decoded,
    ``_`` as blanks, camelCase split (``placeOfBirth`` -> ``place Of Birth``)."""

    local = re.split(r"[/#]", iri.value.rstrip("/#"))[-1]
    return " ".join(_CAMEL.sub(" ", unquote(local).replace("_", " ")).split())


def stem_text(text: str) -> str:
    """Lower-cased words with common English suffixes stripped (``directed`` / ``director`` ->
    ``direct``), punctuation removed; used to compare labels with question spans."""
    out = []
    for w in re.findall(r"[^\W_]+", text.lower()):
        for suf in _SUFFIXES:
            if len(w) - len(suf) >= 3 and w.endswith(suf):
                w = w[: -len(suf)]
                break
        out.append(w)
    return " ".join(out)


def element_names(e: Element, ontology: dict[IRI, Sequence[str]] | None = None) -> list[str]:
    """The names an element goes by without a KG: a literal's lexical form; an IRI's local-name
    words, the same without a parenthesised qualifier (``John Forbes (British Army officer)``
    -> ``John Forbes``), and its ontology labels."""
    if isinstance(e, Literal):
        return [e.value]
    local = local_name_text(e)
    names = [local, _PAREN.sub("", local).strip(), *((ontology or {}).get(e, ()))]
    return list(dict.fromkeys(n for n in names if n))


def align_intermediary(labels: Sequence[str], elements: Sequence[Element],
                       ontology: dict[IRI, Sequence[str]] | None = None,
                       min_score: float = 70.0) -> dict[Element, str]:
    """Which marked label names which KB element: every (label, element name) pair scored by
    ``rapidfuzz.fuzz.token_set_ratio`` of their :func:`stem_text` forms (0-100), pairs of at
    least ``min_score`` taken greedily by descending score, then label order, then element
    order, each label and element at most once; then, when exactly one label and one element
    are left, they are paired (the template names each element once). Other leftovers stay
    unpaired."""
    fuzz = lazy.rapidfuzz_fuzz()

    cands = []
    for li, lab in enumerate(labels):
        sl = stem_text(lab)
        for ei, el in enumerate(elements):
            best = max((fuzz.token_set_ratio(sl, stem_text(n)) for n in element_names(el, ontology)), default=0.0)
            if best >= min_score:
                cands.append((-best, li, ei))
    cands.sort()
    used_l: set[int] = set()
    out: dict[Element, str] = {}
    for _, li, ei in cands:
        if li in used_l or elements[ei] in out:
            continue
        used_l.add(li)
        out[elements[ei]] = labels[li]
    left_l = [lab for i, lab in enumerate(labels) if i not in used_l]
    left_e = [e for e in elements if e not in out]
    if len(left_l) == 1 and len(left_e) == 1:
        out[left_e[0]] = left_l[0]
    return out


def intermediary_mentions(question: str, intermediary: str, elements: Sequence[Element],
                          ontology: dict[IRI, Sequence[str]] | None = None,
                          labels: dict[Element, Sequence[str]] | None = None,
                          min_score: float = 80.0, schema: Iterable[Element] | None = None) -> list[Mention]:
    """Mentions located with an intermediary question (module docstring): each element's
    candidate texts are its aligned marked label (:func:`align_intermediary`), its KB labels
    (``labels``, when a KG gave them) and :func:`element_names`; they are matched against the
    question's word spans as in :func:`label_mentions`, comparing :func:`stem_text` forms, at
    ``min_score``. A stem-form candidate of several words also matches its content words
    alone (``film director`` -> ``director``) at 5 points less, so the freer wording of the
    corrected question is still found; only for ``schema`` elements (predicates and classes,
    see :func:`schema_elements`; None: every IRI), never for entity names, where one word of
    a name is not a mention of it."""
    schema = None if schema is None else set(schema)
    aligned = align_intermediary(intermediary_labels(intermediary), elements, ontology)
    cand: dict[Element, list[str]] = {}
    for e in elements:
        texts = ([aligned[e]] if e in aligned else []) + list((labels or {}).get(e, ())) + element_names(e, ontology)
        cand[e] = list(dict.fromkeys(texts))
    found = label_mentions(question, cand, elements, min_score, stem_text, "intermediary")
    placed = {m.element for m in found}
    todo = [e for e in elements if e not in placed and (schema is None or e in schema)]
    if todo:
        heads: dict[Element, list[str]] = {}
        for e in todo:
            words = {w for t in cand[e] for w in stem_text(t).split() if w not in _STOP and len(w) >= 4}
            heads[e] = sorted(words)
        taken = [(m.start, m.end) for m in found]
        for m in label_mentions(question, heads, todo, min_score, stem_text, "intermediary"):
            if not any(m.start < te and ts < m.end for ts, te in taken):
                found.append(Mention(m.element, m.start, m.end, m.text, m.source, m.label, m.score - 5))
                taken.append((m.start, m.end))
    return found


def ontology_labels(paths: Sequence[Any], lang: str | None = "en") -> dict[IRI, list[str]]:
    """``rdfs:label`` / ``skos:prefLabel`` / ... (:data:`LABEL_PREDICATES`) of every subject of
    the RDF files (an ontology: no KG needed), in ``lang`` or without a language tag, sorted."""

    ox = lazy.pyoxigraph()

    preds = set(LABEL_PREDICATES)
    out: dict[IRI, set[str]] = {}
    for path in paths:
        path = Path(path)
        fmt = RDF_EXTENSIONS.get(path.suffix.lower())
        if fmt is None:
            raise InputError(path, f"expected an ontology file ending in one of {', '.join(sorted(RDF_EXTENSIONS))}")
        try:
            with path.open("rb") as fh:
                for q in ox.parse(fh, format=fmt):
                    if q.predicate.value in preds and isinstance(q.object, ox.Literal) \
                            and isinstance(q.subject, ox.NamedNode):
                        lt = q.object.language
                        if lang is None or not lt or lt.split("-")[0].lower() == lang.lower():
                            out.setdefault(IRI(q.subject.value), set()).add(q.object.value)
        except (OSError, SyntaxError, ValueError) as e:
            raise InputError(path, f"cannot read the ontology: {e}") from None
    return {k: sorted(v) for k, v in out.items()}


def schema_elements(sparql: str) -> set[IRI]:
    """The IRIs of a query used as predicates (path IRIs included) or as the object of
    ``rdf:type``: the vocabulary, as opposed to the entities."""

    rdf_type = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    out: set[IRI] = set()
    for tp in analyze(sparql).triples:
        s, p, o = tp.spo
        if isinstance(p, IRI):
            out.add(p)
        elif isinstance(p, PathExpression):
            out.update(p.iris)
        if isinstance(p, IRI) and p.value == rdf_type and isinstance(o, IRI):
            out.add(o)
    return out


def unmarked(intermediary: str) -> str:
    """An intermediary question without its marks (``<Dead Sea>`` -> ``Dead Sea``)."""
    return " ".join(_MARKED.sub(lambda m: m.group(1) or m.group(2), intermediary).split())


def _intermediary(item: Item) -> str | None:
    for key in INTERMEDIARY_KEYS:
        v = item.metadata.get(key)
        if isinstance(v, str) and _MARKED.search(v):
            return v
    return None


# --------------------------------------------------------------------------- variants


def tagged(question: str, mentions: Sequence[Mention], prefixes: dict[str, str] | None = None) -> str:
    """The question with each mention replaced by its element's text."""
    out, pos = [], 0
    for m in sorted(mentions, key=lambda m: m.start):
        out.append(question[pos:m.start])
        out.append(element_text(m.element, prefixes))
        pos = m.end
    out.append(question[pos:])
    return "".join(out)


def tag_end(question: str, mentions: Sequence[Mention], prefixes: dict[str, str] | None = None) -> str:
    """The question, then ``<sep> element mention`` for each mention in the given order."""
    return question + "".join(f" {SEP} {element_text(m.element, prefixes)} {m.text}" for m in mentions)


def annotate_item(item: Item, labels: dict[Element, Sequence[str]] | None = None, lang: str = "en",
                  min_score: float = 85.0, require: str = "all",
                  prefixes: dict[str, str] | None = None, ontology: dict[IRI, Sequence[str]] | None = None,
                  inter_min_score: float = 80.0, intermediary_fallback: bool = True) -> Annotation:
    """Annotate one item (module docstring). ``labels`` are KB labels of IRIs (None: no label
    matching); literals always use their lexical form. ``prefixes`` are extra namespaces for
    writing elements (the query's own declarations take precedence). ``ontology`` labels
    (:func:`ontology_labels`) and ``inter_min_score`` serve items with an intermediary question."""
    if require not in ("all", "any"):
        raise ValueError(f"require must be 'all' or 'any', not {require!r}")
    question = item.question(lang) or ""
    if not item.sparql:
        return Annotation(item.id, question, [], [], [], reason="no gold query")
    if not question.strip():
        return Annotation(item.id, question, [], [], [], reason=f"no question text ({lang})")
    elements, declared = kb_elements(item.sparql)
    prefixes = {**(prefixes or {}), **declared}
    if not elements:
        return Annotation(item.id, question, [], [], [], reason="the query has no KB elements")
    mentions: list[Mention] | None = None
    qt, st = item.metadata.get("question_template"), item.metadata.get("query_template")
    if isinstance(qt, str) and isinstance(st, str):
        mentions = template_mentions(question, item.sparql, qt, st)
    inter = _intermediary(item) if mentions is None else None
    text_source = "question"
    if inter is not None:
        schema = schema_elements(item.sparql)
        mentions = intermediary_mentions(question, inter, elements, ontology, labels, inter_min_score, schema)
        if len({m.element for m in mentions}) < len(elements) and intermediary_fallback:
            plain = unmarked(inter)
            alt = intermediary_mentions(plain, inter, elements, ontology, labels, inter_min_score, schema)
            if len({m.element for m in alt}) > len({m.element for m in mentions}):
                question, mentions, text_source = plain, alt, "intermediary"
    if mentions is None:
        cand: dict[Element, list[str]] = {e: [e.value] for e in elements if isinstance(e, Literal)}
        for e in elements:
            if isinstance(e, IRI) and labels is not None:
                cand[e] = list(labels.get(e, ()))
        mentions = label_mentions(question, cand, elements, min_score)
    # in element (query) order
    rank = {e: i for i, e in enumerate(elements)}
    mentions = sorted(mentions, key=lambda m: rank.get(m.element, len(rank)))
    found = {m.element for m in mentions}
    missing = [e for e in elements if e not in found]
    ann = Annotation(item.id, question, elements, mentions, missing, prefixes=prefixes, text_source=text_source)
    if (require == "all" and missing) or not mentions:
        ann.reason = "no mention found for " + ", ".join(element_text(e, prefixes) for e in missing)
        return ann
    ann.variants = {"raw": question, "tagged": tagged(question, mentions, prefixes),
                    "tag-end": tag_end(question, mentions, prefixes)}
    return ann


def annotate_dataset(ds: Dataset, engine: Any = None, lang: str = "en", min_score: float = 85.0,
                     require: str = "all", timeout: float = 60.0,
                     prefixes: dict[str, str] | None = None,
                     ontology: dict[IRI, Sequence[str]] | None = None) -> list[Annotation]:
    """Annotate every item; labels of all IRI elements are fetched through ``engine`` in
    batches (no engine: template mentions, intermediary questions and literals only)."""
    labels: dict[Element, list[str]] | None = None
    if engine is not None:
        iris = [e for it in ds.items if it.sparql for e in kb_elements(it.sparql)[0] if isinstance(e, IRI)]
        labels = dict(fetch_labels(engine, iris, lang, timeout=timeout))
    return [annotate_item(it, labels, lang, min_score, require, prefixes, ontology) for it in ds.items]


# --------------------------------------------------------------------------- files


def parse_prefixes(pairs: Sequence[str]) -> dict[str, str]:
    """``["ex=http://ex/"]`` -> ``{"ex": "http://ex/"}`` (InputError on a pair without ``=``)."""

    out: dict[str, str] = {}
    for p in pairs:
        if "=" not in p:
            raise InputError("--prefix", f"expected PFX=NAMESPACE, got {p!r}")
        k, v = p.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def annotate_to_file(dataset: Any, output: Any, mode: str = "tagged", kg: Any = None, lang: str = "en",
                     min_score: float = 85.0, require: str = "all", prefixes: dict[str, str] | None = None,
                     timeout: float = 60.0, format: str | None = None,
                     ontology: Sequence[Any] = (), unannotated: str = "raw") -> dict[str, Any]:
    """``kgqa annotate``: annotate ``dataset`` (a name, path or Dataset) in ``mode`` (``raw``,
    ``tagged``, ``tag-end``), labels from ``kg`` (RDF files, a store or an endpoint; None:
    template placeholders, intermediary questions and literals only; ``ontology``: RDF files
    whose labels help align intermediary questions), and write the annotated questions as JSONL to
    ``output``; for the other modes also ``<output>.report.json`` listing the items not
    annotated. An item that cannot be annotated is written in its raw form (``unannotated="raw"``,
    the default: ``metadata.annotation`` ``raw``, ``metadata.not_annotated`` the reason, so it is
    answered and scored, and a system's input says ``mixed(raw=N,...)``) or left out
    (``unannotated="drop"``); either way it is listed. Returns the report (``items``,
    ``annotated``, ``not_annotated``, ``fallback_raw``, ``partial``, ``report_path``)."""

    if unannotated not in ("raw", "drop"):
        raise InputError("--unannotated", f"expected raw or drop, got {unannotated!r}")
    extra = dict(prefixes or {})
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset, format=format)
    output = Path(output)
    if mode == "raw":
        items = [replace(it, questions={lang: it.question(lang) or ""}, keywords={}, lang_ids={},
                         metadata={**it.metadata, "annotation": "raw"}) for it in ds.items]
        formats.get("dataset", "jsonl").write(Dataset(ds.name, items, "jsonl"), output)
        return {"dataset": ds.name, "mode": mode, "items": len(items), "annotated": len(items), "not_annotated": [],
                "partial": 0, "report_path": None}
    engine = None
    try:
        if kg is not None:
            engine = Executor.open(kg, cache=False)
        onto = ontology_labels(ontology, lang) if ontology else None
        anns = annotate_dataset(ds, engine, lang, min_score, require, timeout, extra, onto)
    except RuntimeError as e:
        raise InputError(str(kg or "--kg"), str(e)) from None
    finally:
        if engine is not None:
            engine.close()
    items, skipped = [], []
    for it, a in zip(ds.items, anns):
        pfx = a.prefixes or extra
        if not a.annotated:
            skipped.append({"id": a.id, "question": a.question, "reason": a.reason,
                            "missing": [element_text(e, pfx) for e in a.missing]})
            if unannotated == "raw":
                raw = it.question(lang) or a.question or ""
                items.append(replace(it, questions={lang: raw}, keywords={}, lang_ids={},
                                     metadata={**it.metadata, "annotation": "raw", "raw_question": raw,
                                               "not_annotated": a.reason}))
            continue
        meta = {**it.metadata, "annotation": mode, "raw_question": a.question, "annotated_text": a.text_source,
                "mentions": [{"element": element_text(m.element, pfx), "text": m.text, "start": m.start,
                              "end": m.end, "source": m.source, "label": m.label, "score": m.score}
                             for m in a.mentions],
                "missing": [element_text(e, pfx) for e in a.missing]}
        items.append(replace(it, questions={lang: a.variants[mode]}, keywords={}, lang_ids={}, metadata=meta))
    formats.get("dataset", "jsonl").write(Dataset(ds.name, items, "jsonl"), output)
    fallback = len(skipped) if unannotated == "raw" else 0
    report_path = output.with_name(output.name + ".report.json")
    report = {"dataset": ds.name, "mode": mode, "require": require, "min_score": min_score,
              "kg": None if kg is None else str(kg), "items": len(anns), "annotated": len(items) - fallback,
              "not_annotated": skipped, "fallback_raw": fallback, "unannotated": unannotated,
              "partial": sum(1 for it in items if it.metadata.get("missing"))}
    write_atomic(report_path, [json.dumps(report, indent=2, ensure_ascii=False) + "\n"])
    return {**report, "report_path": report_path}
