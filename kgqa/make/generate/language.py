"""Natural language for graph queries (Su et al. 2016, Sec. 6; the paper used crowd workers,
kgqa writes a canonical question by grammar and leaves sentence-level paraphrasing to people or
to a model, see :mod:`kgqa.make.generate.paraphrase`).

- :class:`Lexicon`: labels of IRIs from the KG (the label predicates given, by default
  ``rdfs:label``, ``skos:prefLabel``, ``foaf:name``, ``schema:name``, in that order; English or
  untagged preferred), else the IRI's local name split into words (such IRIs are
  :attr:`Lexicon.unlabelled`); alternative labels (``skos:altLabel``, ``schema:alternateName``,
  ``foaf:nick``, ``dbo:alias``) and a user lexicon TSV (``IRI<TAB>label``) for entity-level
  paraphrases;
- :func:`describe` / :func:`canonical_question`: a small grammar with finite verbs per function
  class and answer type ("Which hardware has supplier Acme?", "How many suppliers does X
  have?", "Which department is Franz member of?", "Which city that has country Norland has the
  smallest population?"); each edge is a verb phrase chosen by the relation label's shape
  (``has X`` / a noun -> "has X O" / "is the X of S"; a label ending in a preposition ->
  "is member of O" / "S is member of"); nested nodes are relative clauses; a value join is
  "has the same X as Y";
- :func:`faithfulness`: what a question fails to say of its query (every edge, every grounded
  label or value, the question node's class, the function): the generator's check.
"""

from __future__ import annotations

import csv
import re
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote

from kgqa.make.generate.graphquery import GraphQuery, Node
from kgqa.make.generate.kg import KGAccess
from kgqa.make.generate.lexicon import BOUND_CHANGE_WORDS, TIME_SPAN_WORDS, RelationLexicon, RelText, class_text, lemmas, plural_noun
from kgqa.make.generate.schema import ALT_LABEL_PROPERTIES, LABEL_PROPERTIES, value_kind
from kgqa.model.problems import InputError
from kgqa.model.terms import IRI, Literal, Term

PREPOSITIONS = ("of", "for", "to", "in", "by", "with", "from", "on", "at", "as")


def local_name(iri: str) -> str:
    name = re.split(r"[#/:]", iri.rstrip("/#"))[-1] or iri
    name = unquote(name).replace("_", " ").replace("-", " ")
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return re.sub(r"\s+", " ", name).strip()


def read_lexicon(path: str | Path) -> dict[str, list[str]]:
    """``IRI<TAB>label`` lines (several lines per IRI allowed, order kept)."""
    p = Path(path)
    out: dict[str, list[str]] = {}
    try:
        with p.open(encoding="utf-8", newline="") as fh:
            for i, row in enumerate(csv.reader(fh, delimiter="\t"), 1):
                if not row or not row[0].strip() or row[0].startswith("#"):
                    continue
                if len(row) < 2 or not row[1].strip():
                    raise InputError(str(p), f"line {i}: expected IRI<TAB>label, got {row!r}")
                out.setdefault(row[0].strip().strip("<>"), []).append(row[1].strip())
    except OSError as e:
        raise InputError(str(p), f"cannot read the lexicon: {e}") from e
    return out


def _rank(lit: Literal, lang: str) -> tuple:
    lg = (lit.language or "").lower()
    return (0 if lg == lang else 1 if lg == "" else 2 if lg.startswith(lang) else 3, lit.value)


class Lexicon:
    """Labels and alternative labels of IRIs, looked up on the KG in batches and cached."""

    def __init__(self, kg: KGAccess, lang: str = "en", lexicon: dict[str, list[str]] | None = None,
                 label_properties: tuple[str, ...] = LABEL_PROPERTIES, relations: RelationLexicon | None = None):
        self.kg = kg
        #: how relations read in English (:mod:`kgqa.make.generate.lexicon`)
        self.relations = relations if relations is not None else RelationLexicon([kg], lang=lang)
        self.lang = lang
        self.user = lexicon or {}
        self.props = label_properties
        self._labels: dict[str, str] = {}
        self._alts: dict[str, list[str]] = {}
        self._has_label: dict[str, bool] = {}
        #: the KG names its entities: a topic entity without a label is not used
        self.require_labels = False
        #: at least :data:`kgqa.make.generate.NAMED_SHARE` of the KG's entities have a label
        self.names_entities = False
        #: IRIs without a label in the KG (their text is the local name)
        self.unlabelled: set[str] = set()
        #: relations one to one to nodes without a label (:func:`kgqa.make.generate.commonness.structural_relations`):
        #: their node is said no more than a blank node is ("Which organ is in the city X?")
        self.structural: set[str] = set()
        #: relations with several objects per subject ("an element of X", not "the element
        #: of X"); :func:`kgqa.make.generate.generate` fills it from the schema
        self.multivalued: set[str] = set()

    def fetch(self, iris: list[str]) -> None:
        todo = sorted({i for i in iris if i and i not in self._labels})
        props = list(self.props) + list(ALT_LABEL_PROPERTIES)
        pv = ", ".join(f"<{p}>" for p in props)
        for k in range(0, len(todo), 100):
            chunk = todo[k:k + 100]
            vals = " ".join(f"<{i}>" for i in chunk)
            # ?p IN (...) rather than a second VALUES: pyoxigraph joins two VALUES blocks
            # with the pattern three times slower
            q = (f"SELECT ?s ?p ?l WHERE {{ VALUES ?s {{ {vals} }} ?s ?p ?l . "
                 f"FILTER(isLiteral(?l)) FILTER(?p IN ({pv})) }}")
            found: dict[str, dict[str, list[Literal]]] = {}
            for s, p, lab in self.kg.select(q).rows:
                if isinstance(s, IRI) and isinstance(lab, Literal):
                    found.setdefault(s.value, {}).setdefault(p.value, []).append(lab)
            for iri in chunk:
                by = found.get(iri, {})
                label = None
                for p in self.props:
                    if by.get(p):
                        label = sorted(by[p], key=lambda x: _rank(x, self.lang))[0].value
                        break
                self._labels[iri] = label or local_name(iri)
                self._has_label[iri] = label is not None
                if label is None and iri not in self.user:
                    self.unlabelled.add(iri)
                alts: list[str] = []
                for p in props:
                    for lit in sorted(by.get(p, []), key=lambda x: _rank(x, self.lang)):
                        if (lit.language or self.lang).lower().startswith(self.lang) and lit.value not in alts:
                            alts.append(lit.value)
                for a in self.user.get(iri, []):
                    if a not in alts:
                        alts.append(a)
                self._alts[iri] = [a for a in alts if a != self._labels[iri]]

    def label(self, iri: str) -> str:
        if iri not in self._labels:
            self.fetch([iri])
        return self._labels[iri]

    def rel(self, iri: str) -> RelText:
        return self.relations.get(iri)

    def class_name(self, iri: str) -> str:
        """A class's name in a question ("man-made object" for ``E22_Man-Made_Object``)."""
        lab = self.label(iri)
        return class_text(iri, lab if self._has_label.get(iri) else None)

    def alternatives(self, iri: str) -> list[str]:
        if iri not in self._alts:
            self.fetch([iri])
        return self._alts[iri]


# --------------------------------------------------------------------------- grammar


def term_text(t: Term | None, lex: Lexicon) -> str:
    if isinstance(t, IRI):
        return lex.label(t.value)
    if isinstance(t, Literal):
        return t.value
    return "something"


def _class_text(n: Node, lex: Lexicon) -> str:
    if n.literal:
        return {"number": "value", "date": "date"}.get(value_kind(n.cls), "value")
    return lex.class_name(n.cls) if n.cls else "thing"


def plural(word: str) -> str:
    if not (word.endswith(")") and " (" in word):
        return plural_noun(word)
    if word.endswith(")") and " (" in word:  # "bill of material (bom)" -> "bills of material (bom)"
        head, _, rest = word.partition(" (")
        return plural(head) + " (" + rest
    if " of " in word:
        head, _, rest = word.partition(" of ")
        return plural(head) + " of " + rest
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    if word.endswith(("ware", "information", "equipment", "data", "staff")):
        return word
    return word + "s"


NAME_WORDS = ("name", "title", "label")
#: nouns of relations whose objects are codes: a code object with a label of words is "the
#: code for <label>" ("has the hisco code for Weaver")
CODE_NOUNS = frozenset(("code", "codes"))
#: class words that name people: "Who is the manager of X?" rather than "What is ..."
PERSON_NOUNS = frozenset(("person", "people", "human", "employee", "manager", "author", "artist", "actor", "agent",
                          "laureate", "student", "teacher", "writer", "composer", "painter", "musician", "scientist",
                          "politician", "player", "athlete", "worker", "director", "editor", "creator", "contributor",
                          "researcher", "professor", "staff"))


def _rel(rel: str, lex: Lexicon) -> RelText:
    """How relation ``rel`` reads (:mod:`kgqa.make.generate.lexicon`)."""
    return lex.rel(rel)


MASS_NOUNS = ("ware", "equipment", "information", "data", "staff", "software", "hardware", "furniture", "music")


def _a(word: str) -> str:
    """``word`` with its indefinite article (none for a mass noun: "hardware that ...")."""
    low = word.lower()
    if low.endswith(MASS_NOUNS):
        return word
    vowel = low[:1] in "aeiou" and not low.startswith(("uni", "use", "usu", "eu", "one", "once"))
    return ("an " if vowel or low.startswith(("hour", "honest")) else "a ") + word


#: an object clause: (relative clause "S contains", (fronted preposition, inverted "does S contain"))
ObjClause = tuple[str, tuple[str, str]]


class _Describer:
    """Verbalises a graph query edge by edge. Every edge is said exactly once (``covered``: the
    indices of the edges said); a node reached again is "that <class>". A node's edges become
    verb phrases with a finite verb, in the form the relation's words have
    (:class:`~kgqa.make.generate.lexicon.RelText`): with the node as subject ("has supplier
    Acme", "contains Oslo", "is located in Norway", "has a weight (g) of 11") or as object
    ("the supplier of X", "that X contains", "that X is located in"). A literal node shared by
    two edges (a value join) is said as "has the same weight (g) as X" (or "has the largest
    weight (g), equal to that of X," with a function on it), so no join is ever dropped."""

    def __init__(self, q: GraphQuery, lex: Lexicon):
        self.q = q
        self.lex = lex
        self.seen: set[str] = set()
        self.slots: dict[str, str] = {}
        self.covered: set[int] = set()
        #: why the text is not good English (a relation that fits no frame, ...): such a
        #: question is not published (:func:`wording_problems`)
        self.problems: list[str] = []

    def _open_edges(self, nid: str) -> list[int]:
        return [i for i, e in enumerate(self.q.edges) if nid in (e.src, e.dst) and i not in self.covered]

    def value(self, n: Node) -> str:
        text = term_text(n.value, self.lex)
        if isinstance(n.value, IRI):
            self.slots[n.value.value] = text
        return text

    def np(self, nid: str, phrase: str | None = None) -> str:
        """A noun phrase for node ``nid``: its label or value when grounded, else "a <phrase or
        class>" followed by its remaining edges as relative clauses."""
        n = self.q.node(nid)
        if n.value is not None:
            return self.value(n)
        if nid in self.seen:
            return "it" if nid == self.q.question else "that " + (phrase or _class_text(n, self.lex))
        if phrase is None and not n.literal and nid != self.q.question and _class_text(n, self.lex) == "thing":
            phrase = self.named_by(nid)
        self.seen.add(nid)
        subj, obj, sup = self.clauses(nid)
        rel = " and ".join(f"that {c}" for c in [o[0] for o in obj] + subj + ([sup] if sup else []))
        return _a(phrase or _class_text(n, self.lex)) + (" " + rel if rel else "")

    def named_by(self, nid: str) -> str | None:
        """The noun of the one relation (a noun, read from its subject) by which unnamed node
        ``nid`` of no class is the object of an unnamed node with nothing else said of it: "a
        hisco code" for ``?o <hisco_code> ?c`` (being something's hisco code is what the noun
        says); that edge is then said. None when there is no such edge."""
        hits = []
        for i in self._open_edges(nid):
            e = self.q.edges[i]
            src = self.q.node(e.src)
            rt = _rel(e.rel, self.lex)
            if e.dst == nid and e.src != nid and src.value is None and not src.literal and \
                    e.src != self.q.question and e.src not in self.seen and rt.kind == "noun" and \
                    rt.inverse is None and not (rt.time_span or rt.identifying or rt.positional) and \
                    rt.words not in NAME_WORDS and not [j for j in self._open_edges(e.src) if j != i]:
                hits.append((i, e.src, rt.words))
        if len(hits) != 1:
            return None
        i, src, words = hits[0]
        self.covered.add(i)
        self.seen.add(src)
        return words

    def clauses(self, nid: str, plural_: bool = False) -> tuple[list[str], list[ObjClause], str | None]:
        """(verb phrases with ``nid`` as subject, clauses with it as object, the superlative
        verb phrase or None) for every edge of ``nid`` not said yet."""
        self.seen.add(nid)
        subj: list[str] = []
        obj: list[ObjClause] = []
        sup = None
        for i in self._open_edges(nid):
            if i in self.covered:  # said while describing an earlier edge's far end
                continue
            self.covered.add(i)
            kind, text = self.clause(i, nid, plural_)
            if kind == "sup":
                sup = text
            elif kind == "obj":
                obj.append(text)
            else:
                subj.append(text)
        return subj, obj, sup

    def clause(self, i: int, nid: str, plural_: bool) -> tuple[str, object]:
        e = self.q.edges[i]
        rt = _rel(e.rel, self.lex)
        have, be = ("have", "are") if plural_ else ("has", "is")
        if rt.opaque:
            self.problems.append(f"relation {e.rel} fits no frame")
        if rt.identifying:  # "Which actor is identified by PE220760?": a lookup by a catalogue number
            self.problems.append(f"'{rt.words}' relates a thing to its identifier")
        far = e.src if e.src != nid else e.dst
        j = self.through(i, nid)
        if j is not None:  # said of ``nid`` itself: "Which production began after 1850-01-01?"
            self.covered.add(j)
            self.seen.add(far)
            return self.clause(j, far, plural_)
        if self.bare_leaf(i, far) and not self.same_as(i, far):
            # "was taken out of existence by an end of existence", "is the part of a BOM part",
            # "and has a hisco status": an unnamed node said only by its class tells nothing
            self.problems.append(f"an unnamed {_class_text(self.q.node(far), self.lex)} with nothing said of it")
        elif self.q.node(far).value is None and far != self.q.question and not self.q.node(far).literal and \
                _class_text(self.q.node(far), self.lex) == "thing" and far not in self.seen and \
                not ((e.src == nid and rt.kind == "noun") or (e.src != nid and rt.inverse is not None)):
            # said by its class, not by the relation's noun ("a hisco code that ...")
            self.problems.append("an unnamed node of no class: 'a thing that ...'")
        if e.src != nid and rt.kind == "verb" and rt.object_noun:  # "Which instrument whole does S include?"
            if rt.object_noun in _class_text(self.q.node(nid), self.lex).split():
                rt = replace(rt, words=rt.words.rsplit(" ", 1)[0])
            else:
                self.problems.append(f"'{rt.words}': a verb and a noun before the object")
        if e.src != nid:  # ``nid`` is the edge's object
            src = self.q.node(e.src)
            if rt.inverse is not None:
                if rt.inverse.kind == "noun" and src.value is None:  # "has a narrower concept that ..."
                    return "subj", f"{have} {self.np(e.src, rt.inverse.words)}"
                return "subj", rt.inverse.active(self.np(e.src), plural_)
            if rt.kind == "noun":
                if plural_:
                    return "subj", f"are {plural(rt.words)} of {self.np(e.src)}"
                art = _a(rt.words) if e.rel in self.lex.multivalued else f"the {rt.words}"
                return "subj", f"is {art} of {self.np(e.src)}"
            s = self.np(e.src)
            if rt.kind == "past":
                self.problems.append(f"'{rt.words}' with an entity fits no frame")
            if " that " in f" {s} ":
                self.problems.append("an object clause around a relative clause")
            return "obj", (rt.relative(s), rt.asked(s))
        other = self.q.node(e.dst)
        phrase = rt.noun
        if other.literal and other.value is None:
            return self.open_value(other, rt, have, plural_)
        if other.literal:
            return "subj", self.literal_clause(rt, self.value(other), value_kind(other.cls), plural_)
        if rt.kind == "past":  # "Which type assignment assigned painting?": not English
            self.problems.append(f"'{rt.words}' with an entity fits no frame")
        if rt.kind != "noun":
            if rt.kind == "verb" and rt.object_noun:  # "includes whole O": said as "includes O" when
                cls = _class_text(other, self.lex)   # O's class says the noun ("an instrument whole")
                if other.value is None and rt.object_noun in cls.split():
                    return "subj", replace(rt, words=rt.words.rsplit(" ", 1)[0]).active(self.np(other.id), plural_)
                self.problems.append(f"'{rt.words}': a verb and a noun before the object")
            if other.value is not None and rt.kind == "adj" and rt.words.endswith("member of") and \
                    demonym(term_text(other.value, self.lex)):  # "is American", not "a member of American"
                return "subj", f"{be} {self.np(other.id)}"
            return "subj", rt.active(self.np(other.id), plural_)
        if other.value is not None:
            name = self.np(other.id)
            if rt.time_span:  # "is dated circa 1870", not "has the time-span circa 1870"
                return "subj", f"{be} dated {name}"
            if phrase.split()[-1] in CODE_NOUNS and not code_like(name):
                # "has the hisco code Medical Doctor": a code named by what it stands for
                return "subj", f"{have} the {phrase} for {name}"
            return "subj", f"{have} the {phrase} {name}"
        same = self.shared_object(i, other)
        if same is not None:  # "has the same hisco code as X"
            return "subj", f"{have} the same {phrase} as {same}"
        return "subj", f"{have} {self.np(other.id, phrase)}"

    def through(self, i: int, nid: str) -> int | None:
        """The edge to say in place of edge ``i`` (from ``nid`` to an unnamed node N that has
        exactly one more edge, j, from N), or None: j is said of ``nid`` itself when N is
        ``nid``'s time-span and j a bound of it ("began after 1850-01-01": the span of an event
        is when it happened), or when edge i's relation is structural (one to one, to nodes
        without a label: :attr:`Lexicon.structural`, "an instrument whole" modelled apart from
        its organ, as a blank node would be)."""
        e = self.q.edges[i]
        far = self.q.node(e.dst)
        if e.src != nid or e.dst == nid or far.literal or far.value is not None or far.id == self.q.question \
                or far.id in self.seen:
            return None
        rest = [j for j in self._open_edges(far.id) if j != i]
        if len(rest) != 1 or self.q.edges[rest[0]].src != far.id or \
                self.q.edges[rest[0]].dst in (far.id, nid, self.q.question) or self.q.edges[rest[0]].dst in self.seen:
            return None
        j = rest[0]
        rt, nxt = _rel(e.rel, self.lex), _rel(self.q.edges[j].rel, self.lex)
        if rt.time_span and nxt.kind == "when":
            return j
        if e.rel in self.lex.structural and not nxt.time_span:
            # not into a time-span: its bounds would be said of ``nid`` ("Which actor ended after
            # 1948?" for the end of the actor's birth), the event they bound unsaid
            return j
        return None

    def span_of(self, nid: str) -> int | None:
        """The edge that makes unnamed node ``nid`` (with no other edge left) the time-span of
        another node (:attr:`~kgqa.make.generate.lexicon.RelText.time_span`), or None."""
        n = self.q.node(nid)
        rest = self._open_edges(nid)
        if n.value is not None or nid == self.q.question or len(rest) != 1:
            return None
        e = self.q.edges[rest[0]]
        return rest[0] if e.dst == nid and e.src != nid and _rel(e.rel, self.lex).time_span else None

    def bare_leaf(self, i: int, nid: str) -> bool:
        """Whether entity node ``nid``, reached by edge ``i``, is neither grounded nor the question
        node, not said yet, and has no other edge: it would be said as "a <class>" alone."""
        n = self.q.node(nid)
        return not n.literal and n.value is None and nid != self.q.question and nid not in self.seen and \
            not [j for j in self._open_edges(nid) if j != i]

    def same_as(self, i: int, nid: str) -> bool:
        """Whether node ``nid`` is the shared object of edge ``i`` and one more edge of the same
        relation ("has the same hisco code as X"): said, not bare."""
        rest = [j for j in range(len(self.q.edges)) if j != i and nid in (self.q.edges[j].src, self.q.edges[j].dst)]
        return len(rest) == 1 and self.q.edges[rest[0]].rel == self.q.edges[i].rel and \
            self.q.edges[rest[0]].dst == nid == self.q.edges[i].dst

    def shared_object(self, i: int, other: Node) -> str | None:
        """The label of X when ungrounded ``other`` is reached by edge ``i`` and by exactly one
        more edge, over the same relation from a grounded X, and has no other edge ("has the
        same code as X"); that edge is then said. Else None."""
        if other.id in self.seen or other.id == self.q.question:
            return None
        rest = [j for j in self._open_edges(other.id) if j != i]
        if len(rest) != 1:
            return None
        e, f = self.q.edges[i], self.q.edges[rest[0]]
        src = self.q.node(f.src)
        if f.rel != e.rel or f.dst != other.id or src.value is None or src.literal:
            return None
        self.seen.add(other.id)
        self.covered.add(rest[0])
        return self.np(src.id)

    def literal_clause(self, rt: RelText, v: str, kind: str, plural_: bool) -> str:
        """The clause for an edge to a grounded literal ``v``: "is called X", "has a weight of
        5", "has the colour red", "was created on 2016-03-14", "is located in Oslo"."""
        have, be = ("have", "are") if plural_ else ("has", "is")
        if rt.positional and kind == "number":
            self.problems.append(f"'{rt.words}' is a position in a sequence (structural metadata)")
        if rt.kind == "when":  # "began on 1945-01-01", "ended in 1997"
            if not (_DATE_TEXT.match(v) or re.match(r"^\d{4}$", v)):  # a genome's "start"/"end" position
                self.problems.append(f"'{rt.words}' with a value that is no date or year")
            return f"{rt.past} {'on' if _DATE_TEXT.match(v) else 'in'} {v}"
        if rt.kind == "noun":
            if rt.words in NAME_WORDS:
                return f"{be} called {v}"
            if kind in ("number", "date"):
                return f"{have} {_a(rt.words)} of {v}"
            return f"{have} the {rt.words} {v}"
        if rt.kind == "past":
            if kind != "date" and not _DATE_TEXT.match(v):
                self.problems.append(f"'{rt.words}' with a {kind} value fits no frame")
            return f"{'were' if plural_ else 'was'} {rt.words} on {v}"
        return rt.active(v, plural_)

    def open_value(self, other: Node, rt: RelText, have: str, plural_: bool) -> tuple[str, str]:
        """The clause for an edge to an ungrounded literal node: a comparative, a superlative,
        a value join or "has a P"; a relation that is not a noun is said only as a past
        participle with dates ("was created after 2016-01-01", "was created latest")."""
        fn = self.q.function
        date = value_kind(other.cls) == "date"
        phrase = rt.noun
        self.seen.add(other.id)
        join = self.value_join(other.id, phrase)
        past = rt.kind in ("past", "when") and date and not join and fn.node == other.id
        change = BOUND_CHANGE_WORDS.get(rt.words) if rt.kind == "adj" and date and not join and fn.node == other.id else None
        if rt.positional and value_kind(other.cls) == "number":
            self.problems.append(f"'{rt.words}' is a position in a sequence (structural metadata)")
        if rt.kind != "noun" and not past and not change:
            self.problems.append(f"'{rt.words}' ({rt.kind}) cannot be compared or ranked")
        was = "were" if plural_ else "was"
        if fn.cls == "comparative" and fn.node == other.id and fn.value is not None:
            op = ({">": "after", ">=": "on or after", "<": "before", "<=": "on or before"} if date else
                  {">": "greater than", ">=": "of at least", "<": "less than", "<=": "of at most"})[fn.name]
            if past and rt.kind == "when":  # "began after 1850-01-01"
                return "subj", f"{rt.past} {op} {fn.value.value}"
            if change:  # "became valid after 2000-01-01"
                return "subj", f"{change} {op} {fn.value.value}"
            if past:
                return "subj", f"{was} {rt.words} {op} {fn.value.value}"
            return "subj", f"{have} {_a(phrase)}{join} {op} {fn.value.value}"
        if fn.cls == "superlative" and fn.node == other.id:
            word = ("latest" if fn.name == "argmax" else "earliest") if date else \
                ("largest" if fn.name == "argmax" else "smallest")
            if (past and rt.kind == "when") or change:  # "began latest", "became valid earliest"
                return "sup", f"{change or rt.past} {'latest' if fn.name == 'argmax' else 'earliest'}"
            if past:
                return "sup", f"{was} {rt.words} {'most recently' if fn.name == 'argmax' else 'earliest'}"
            return "sup", f"{have} the {word} {phrase}{join}"
        if rt.kind == "when":  # "has a start date" says nothing a reader can use
            self.problems.append(f"'{rt.words}' with an open date fits no frame")
        if join.startswith(", equal to that of ") and " and to " not in join:
            return "subj", f"{have} the same {phrase} as {join[len(', equal to that of '):-1]}"
        return "subj", f"{have} {_a(phrase)}{join}"

    def value_join(self, lit: str, phrase: str) -> str:
        """", equal to that of X," / ", equal to the Y of X," for every other edge into the
        literal node ``lit`` (a value join), or ""."""
        out = []
        for i in self._open_edges(lit):
            self.covered.add(i)
            e = self.q.edges[i]
            rt = _rel(e.rel, self.lex)
            if rt.kind != "noun":
                self.problems.append(f"'{rt.words}' cannot be joined on")
            ph = rt.noun
            if self.q.node(e.src).value is None and len(self._open_edges(e.src)) == 0:
                self.problems.append("a value shared with an unnamed owner")
            owner = self.np(e.src)
            out.append(f"that of {owner}" if ph == phrase else f"the {ph} of {owner}")
        return (", equal to " + " and to ".join(out) + ",") if out else ""


_DEMONYM = re.compile(r"^[A-Z][a-z]+(?:-[A-Z][a-z]+)*(?:an|ish|ese|ic|ch)$")


def demonym(label: str) -> bool:
    """Whether a label is one capitalised adjective of nationality or people ("American",
    "Danish", "Austro-Hungarian", "Hispanic"): a group so named is said by the adjective ("Who
    is Danish?"), not as "the members of Danish"."""
    return bool(_DEMONYM.match(label.strip())) and "NOUN" not in lemmas(label.strip().lower())


def _sentence(head: str, subj: list[str], obj: list[ObjClause], sup: str | None) -> str:
    """``head`` + clauses: "Which C that O1 S1 and S2"; a superlative is the main verb phrase
    ("Which C that S1 has the largest P"); only object clauses: the first inverted ("Which C
    does Acme supply and that B contains", "In which country is Oslo located")."""
    if not subj and not sup:
        prep, asked = obj[0][1]
        rest = [f"and that {o[0]}" for o in obj[1:]]
        if prep and head.startswith("Which "):
            return " ".join([prep.capitalize(), "which " + head[len("Which "):], asked] + rest)
        if prep and head == "What":
            return " ".join([prep.capitalize(), "what", asked] + rest)
        return " ".join([head, asked] + ([prep] if prep else []) + rest)
    # a clause whose noun phrase has relative clauses goes last, so that the clauses after it
    # cannot be read as its own ("Which supplier has the address country France and is the
    # supplier of a hardware that ...")
    subj = sorted(validity_range(subj), key=lambda c: " that " in c)
    rel = " and ".join(f"that {c}" for c in [o[0] for o in obj] + (subj if sup else []))
    main = " and ".join([sup] if sup else subj)
    return " ".join(filter(None, [head, rel, main]))


_VALID = re.compile(r"^(is|are) valid (from|until) (\S+)$")


def validity_range(subj: list[str]) -> list[str]:
    """Two clauses that bound one validity ("is valid until 2002-12-31", "is valid from
    1978-01-01") said as a person writes the range: "is valid from 1978-01-01 until 2002-12-31"."""
    got = {m[2]: (k, m) for k, c in enumerate(subj) if (m := _VALID.match(c))}
    if set(got) != {"from", "until"}:
        return subj
    (i, a), (j, b) = got["from"], got["until"]
    return [f"{a[1]} valid from {a[3]} until {b[3]}" if k == i else c for k, c in enumerate(subj) if k != j]


def describe(q: GraphQuery, lex: Lexicon) -> tuple[str, dict[str, str], set[int]]:
    """The canonical question, its slots ({topic entity IRI: label used}) and the indices of
    the edges the text says (all, by construction; :func:`faithfulness` checks it)."""
    text, d = _describe(q, lex)
    return text, d.slots, d.covered


def wording_problems(q: GraphQuery, lex: Lexicon) -> list[str]:
    """Why the canonical question of ``q`` would not be good English (a relation whose words
    fit no frame, "has the largest valid", an object clause wrapped around a relative clause:
    "Which department is an employee that ... member of?"); empty when it is. The generator
    drops such a query (``unreadable``) rather than publish it."""
    return _describe(q, lex)[1].problems


def problem_kind(problem: str) -> str:
    """A wording problem without its particulars (quoted words, IRIs, bracketed parts), so the
    summary can count why questions were not published: "'order' is a position in a sequence
    (structural metadata)" -> "X is a position in a sequence"."""
    text = re.sub(r"'[^']*'|\S+://\S+|urn:\S+", "X", problem)
    text = re.sub(r"\s*\([^()]*\)", "", text)
    return re.sub(r"\s+", " ", text).strip()


def _value_question(q: GraphQuery, d: _Describer, lex: Lexicon) -> str:
    """The question for a literal question node, through its (first) incoming edge: "What is
    the population of X?", "What is the largest population of any city?", "When was X
    created?"."""
    x, fn = q.qnode, q.function
    i, e = next((i, e) for i, e in enumerate(q.edges) if x.id in (e.src, e.dst))
    rt = _rel(e.rel, lex)
    phrase = rt.noun
    if rt.identifying:
        d.problems.append(f"'{rt.words}' relates a thing to its identifier")
    d.seen.add(x.id)
    d.covered.add(i)
    owner = q.node(e.src)
    k = d.span_of(e.src) if rt.kind == "when" else None
    if k is not None:  # "When did the production of X begin?": the time-span's owner is the event
        d.covered.add(k)
        d.seen.add(e.src)
        owner = q.node(q.edges[k].src)
    subj = d.np(owner.id)
    join = d.value_join(x.id, phrase).rstrip(",")
    date = value_kind(x.cls) == "date"
    if rt.positional and value_kind(x.cls) == "number":
        d.problems.append(f"'{rt.words}' is a position in a sequence (structural metadata)")
    if rt.kind == "past" and date and fn.name not in ("max", "min") and not join:
        return _finish(f"When was {subj} {rt.words}")
    if owner.value is None and _class_text(owner, lex) in TIME_SPAN_WORDS:  # "the latest end of any time-span"
        d.problems.append("a time-span said by its class: the text cannot say whose span it is")
    if rt.kind == "when" and not date:  # "When did X end?" of a number (a position, not a time)
        d.problems.append(f"'{rt.words}' with a value that is no date")
    if rt.kind == "when" and fn.name not in ("max", "min") and not join:
        return _finish(f"When did {subj} {rt.words}")  # "When did the production of X begin?"
    if rt.kind not in ("noun", "when"):
        d.problems.append(f"'{rt.words}' ({rt.kind}) has no noun for its value")
    if fn.name in ("max", "min"):
        word = ("latest" if fn.name == "max" else "earliest") if date else \
            ("largest" if fn.name == "max" else "smallest")
        bare = subj.split(" ", 1)[1] if subj.startswith(("a ", "an ")) else subj
        if owner.value is None and bare == "thing" and not join:  # "What is the largest hiscam?" of what?
            d.problems.append("a superlative over things of no class: the text cannot say whose value it is")
            return _finish(f"What is the {word} {phrase}")
        of = subj if owner.value is not None else "any " + bare
        return _finish(f"What is the {word} {phrase} of {of}{join}")
    return _finish(f"What is the {phrase} of {subj}{join}")


def _describe(q: GraphQuery, lex: Lexicon) -> tuple[str, _Describer]:
    d = _Describer(q, lex)
    x = q.qnode
    fn = q.function
    if x.literal:
        return _value_question(q, d, lex), d
    cls = _class_text(x, lex)
    if cls in TIME_SPAN_WORDS:  # "Which time-span began on 1885-01-01?": a span is asked of its event
        d.problems.append("a time-span as the answer: a person asks when an event happened, not which span")
    for n in q.topic_entities:  # "Which sex is in the scheme Sex?": the class repeats the topic
        if isinstance(n.value, IRI) and _squash(lex.label(n.value.value)) in (_squash(cls), _squash(plural(cls))):
            d.problems.append(f"the class {cls!r} repeats the topic")
    if fn.name == "count":
        mine = [i for i, e in enumerate(q.edges) if x.id in (e.src, e.dst)]
        e = q.edges[mine[0]]
        rt = _rel(e.rel, lex)
        if len(mine) == 1 and e.dst == x.id and e.src != x.id and rt.kind == "noun" and rt.inverse is None and \
                (not q.typed or cls in rt.words.lower()):  # "How many suppliers does X have?"
            d.seen.add(x.id)
            d.covered.add(mine[0])
            if q.node(e.src).value is None:  # "How many homepages does an actor that ... have?" sums
                d.problems.append("a count per unnamed owner: the text says one, the query adds up many")
            return _finish(f"How many {plural(rt.words)} does {d.np(e.src)} have"), d
        if cls == "thing":  # "How many things have the source PMID:...?": what is counted has no name
            d.problems.append("a count of things of no class: the text cannot say what is counted")
        subj, obj, sup = d.clauses(x.id, plural_=True)
        if not (subj or obj or sup):
            return _finish(f"How many {plural(cls)} are there"), d
        return _finish(_sentence(f"How many {plural(cls)}", subj, obj, sup)), d
    poss = _possessive(q, d, lex, cls)
    if poss:
        return _finish(poss), d
    subj, obj, sup = d.clauses(x.id)
    if not (subj or obj or sup):
        return _finish(f"Which {cls} is there"), d
    m = re.match(r"is (the|an?) (.+?) of (.*)$", subj[0]) if len(subj) == 1 and not obj and not sup else None
    # "What is the price of X?" when the question node's class is no constraint of the query
    # (minimization dropped it: the relation implies it); a class that is kept must be said
    if m and (not q.typed or not q.qnode.cls or cls == "thing"):
        who = "Who" if set(cls.split()) & PERSON_NOUNS else "What"
        if m[1] == "the":
            return _finish(f"{who} {subj[0]}"), d
        return _finish(f"{who} are the {plural(m[2])} of {m[3]}"), d
    if len(subj) == 1 and not obj and not sup and not q.typed and set(cls.split()) & PERSON_NOUNS and \
            re.match(r"(is|was) [A-Z]", subj[0]):  # "Who is American?" (the class no constraint)
        return _finish(f"Who {subj[0]}"), d
    head = "What" if cls == "thing" else f"Which {cls}"
    return _finish(_sentence(head, subj, obj, sup)), d


def _possessive(q: GraphQuery, d: _Describer, lex: Lexicon, cls: str) -> str:
    """"Which title's hisco code has the smallest hiscam?" for a question node whose only edge
    is a relation with one object per subject (:attr:`Lexicon.multivalued` excluded: "the X's
    code" says there is one) to an unnamed node of which everything else is said as its
    subject: the two hops as a person writes them, rather than "Which title has a hisco code
    that has the smallest hiscam?". The node is said by the relation's noun, or, for a verb or
    a participle ("was produced by"), by its class ("Which man-made object's production began
    earliest?" rather than "... was produced by a production that began earliest?"). "" when
    the query has another shape (nothing is said then)."""
    x = q.qnode
    mine = [i for i, e in enumerate(q.edges) if x.id in (e.src, e.dst)]
    if q.function.name == "count" or cls == "thing" or len(mine) != 1 or not re.fullmatch(r"[a-z][a-z -]*", cls):
        return ""
    i = mine[0]
    e = q.edges[i]
    y = q.node(e.dst)
    rt = _rel(e.rel, lex)
    if e.src != x.id or y.id == x.id or y.literal or y.value is not None or rt.kind not in ("noun", "adj", "verb") or \
            rt.time_span or rt.identifying or rt.words in NAME_WORDS or e.rel in lex.multivalued:
        return ""
    rest = [j for j, f in enumerate(q.edges) if j != i and y.id in (f.src, f.dst)]
    if e.rel in lex.structural and not any(_rel(q.edges[j].rel, lex).time_span for j in rest):
        return ""  # said through ("Which organ is in the city X?"), but not into a time-span
    noun = rt.words
    if rt.kind != "noun":  # "Which man-made object's production began earliest?": y said by its class
        noun = _class_text(y, lex)
        if noun == "thing" or noun in TIME_SPAN_WORDS or rt.object_noun or not re.fullmatch(r"[a-z][a-z -]*", noun):
            return ""
    if not rest or any(q.edges[j].src != y.id or q.edges[j].dst == y.id for j in rest):
        return ""  # said of y as its object ("that X contains"): no possessive
    d.seen.update((x.id, y.id))
    d.covered.add(i)
    subj, obj, sup = d.clauses(y.id)
    if not (subj or sup):  # (cannot happen: every other edge of y has y as subject)
        d.problems.append("nothing said of a possessive's noun")
        return f"Which {cls} has {_a(rt.words)}"
    owner = cls + ("'" if cls.endswith("s") else "'s")
    return _sentence(f"Which {owner} {noun}", subj, obj, sup)


def _squash(text: str) -> str:
    return re.sub(r"\W+", "", text).lower()


def canonical_question(q: GraphQuery, lex: Lexicon) -> tuple[str, dict[str, str]]:
    """The canonical question and its slots ({topic entity IRI: label used})."""
    text, slots, _ = describe(q, lex)
    return text, slots


FUNCTION_WORDS = {"count": ("How many",), "max": ("largest", "latest"), "min": ("smallest", "earliest"),
                  "argmax": ("largest", "latest", "most recently"), "argmin": ("smallest", "earliest"),
                  ">": ("greater than", "after"), ">=": ("at least", "on or after"),
                  "<": ("less than", "before"), "<=": ("at most", "on or before")}


def faithfulness(q: GraphQuery, lex: Lexicon, text: str | None = None) -> list[str]:
    """Why the question for ``q`` (``text``, default the canonical one) does not say what ``q``
    asks; empty when it does: every edge said, every grounded node's label or value in the
    text, the question node's class when the query constrains it, the function's words and
    a comparative's constant."""
    said, _, covered = describe(q, lex)
    text = said if text is None else text
    out = []
    missing = [i for i in range(len(q.edges)) if i not in covered]
    if missing:
        out.append("edges not said: " + ", ".join(local_name(q.edges[i].rel) for i in missing))
    for n in q.topic_entities:
        t = term_text(n.value, lex)
        if t not in text:
            out.append(f"grounded node {n.id} ({t!r}) not in the text")
    x = q.qnode
    cls = _class_text(x, lex)
    if q.typed and not x.literal and x.cls and cls not in text.lower() and plural(cls) not in text.lower():
        out.append(f"class {cls!r} not in the text")
    if q.typed and not x.literal and x.cls and cls == "thing":
        out.append(f"class {x.cls} has no words: the text cannot say it")
    fn = q.function
    if fn.name != "none" and not any(w in text for w in FUNCTION_WORDS[fn.name]):
        out.append(f"function {fn.name} not said")
    if fn.value is not None and fn.value.value not in text:
        out.append(f"comparative constant {fn.value.value!r} not in the text")
    return out


_DATE_TEXT = re.compile(r"^\d{4}-\d{2}-\d{2}")
_NUMBER_TEXT = re.compile(r"^[-+]?\d+([.,]\d+)?$")


def unreadable_topics(q: GraphQuery, lex: Lexicon) -> list[str]:
    """Grounded entities a reader could not recognise: no label in the KG (nor the user
    lexicon) and a local name without a letter ("laureateaward/166"), or a label that is a web
    address; a number stored as text ("-79.8387175": a coordinate or a code, never a topic a
    person asks by)."""
    return [why for n in q.topic_entities if (why := unreadable_term(n.value, lex))]


def unreadable_term(t: Term | None, lex: Lexicon) -> str:
    """Why topic ``t`` cannot be put in a question (:func:`unreadable_topics`), or "": a number
    written as text, a timestamp (a time of day to the second is no topic a person asks by), a
    web address, an entity without a label whose local name is no name (``87819495-21e8-...``,
    or any unlabelled one where the KG names its entities), or a label that is a code (no word
    in it: "PE205292", "93.225.27", "111"), or longer than :data:`MAX_TOPIC_WORDS` words."""
    if isinstance(t, Literal):
        kind = value_kind(t.datatype or "")
        if kind == "text" and _NUMBER_TEXT.match(t.value.strip()):
            return f"{t.value!r} is a number written as text"
        if _TIMESTAMP.match(t.value.strip()):
            return f"{t.value!r} is a timestamp"
        if re.match(r"^(https?|ftp)://", t.value.strip()):
            return f"{t.value!r} is a web address"
        if kind == "number" and _MEASUREMENT.match(t.value.strip()):
            return f"{t.value!r} is a measurement to {MAX_TOPIC_DECIMALS + 1} or more decimals (a coordinate)"
        return ""
    if isinstance(t, IRI):
        text = lex.label(t.value)
        if re.match(r"^(https?|ftp)://", text):
            return f"{t.value} is named by a web address"
        if t.value in lex.unlabelled and (lex.require_labels or unnamed_iri(t.value)):
            return f"{t.value} has no label"
        if code_like(text):
            return f"{t.value} is named by a code ({text!r})"
        if _PLACEHOLDER.match(text.strip()):
            return f"{t.value}'s label {text!r} says what it is not or that it is unknown"
        if len(text.split()) > MAX_TOPIC_WORDS:
            return f"{t.value}'s label is too long for a topic ({len(text.split())} words)"
    return ""


#: a topic's label with more words than this makes a question no one would write
MAX_TOPIC_WORDS = 6
#: a number with more decimals than this is a measurement (a coordinate: "44.982734"), no value a
#: person looks a thing up by ("Which organ has a latitude of 44.982734?")
MAX_TOPIC_DECIMALS = 3
_MEASUREMENT = re.compile(r"^[-+]?\d*[.,]\d{%d,}$" % (MAX_TOPIC_DECIMALS + 1))
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
_WORD = re.compile(r"^[^\W\d_]{2,}$")
#: labels of placeholder categories ("Not an occupational title", "Unknown", "N/A", "Not
#: specified"): they say what a thing is not, or that it is not known, and name nothing a
#: person asks by ("Which title has the hisco code for Not an occupational title?")
_PLACEHOLDER = re.compile(r"^(not\b|unknown$|n/?a$|none$|unspecified$|undefined$|unclassified$)", re.IGNORECASE)


def code_like(text: str) -> bool:
    """Whether a label has no word in it (only numbers, codes, single letters): "PE205292",
    "93.225.27", "4088.G.9", "1905 -"."""
    return not any(_WORD.match(w) for w in re.split(r"[\s,;:/()\[\]\-.'\"&+]+", text))


def unnamed_iri(iri: str) -> bool:
    """Whether an IRI's local name is no name a reader could use (no word in it: a UUID, a
    serial number, a hash: ``87819495-21e8-45eb-...``, ``pe204288``; "Bergen" is a name)."""
    return code_like(local_name(iri))


def _finish(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip().rstrip(",")
    text = re.sub(r",(\s*(,|and\b))", r"\1", text)
    return text[0].upper() + text[1:] + "?"


def entity_variants(question: str, slots: dict[str, str], alternatives: dict[str, list[str]],
                    limit: int = 3) -> list[str]:
    """Up to ``limit`` questions with one topic entity's label (``slots``: IRI -> label in the
    question) replaced by one of its ``alternatives``; the entities take turns (first
    alternative of each, then the second, ...), as the paper used at most 3 entity-level
    paraphrases per sentence."""
    out: list[str] = []
    k = 0
    while len(out) < limit and any(k < len(alternatives.get(i, [])) for i in slots):
        for iri, label in sorted(slots.items()):
            alts = alternatives.get(iri, [])
            if k < len(alts) and label in question and len(out) < limit:
                cand = question.replace(label, alts[k], 1)
                if cand != question and cand not in out:
                    out.append(cand)
        k += 1
    return out


def entity_paraphrases(question: str, slots: dict[str, str], lex: Lexicon, limit: int = 3) -> list[str]:
    """:func:`entity_variants` with the alternatives the lexicon knows."""
    return entity_variants(question, slots, {iri: lex.alternatives(iri) for iri in slots}, limit)
