"""Relations in English: each relation IRI becomes a :class:`RelText` (its words, their part of
speech and the direction they read in), from, in order:

1. a user lexicon (``--lexicon FILE.yaml|.json``: ``IRI: phrase`` or ``IRI: {phrase, pos,
   inverse}``; ``pos`` is ``noun``, ``verb`` or ``adj`` (a participle or noun with its
   preposition: "located in", "part of"); ``inverse`` is the phrase read from the object, e.g.
   ``skos:broader: {phrase: "has broader concept", inverse: "has narrower concept"}``);
2. :data:`BUILTIN`, a few well-known vocabulary terms whose names read the wrong way round
   (``skos:broader``: "A broader B" says B is broader);
3. the property's ``rdfs:label`` / ``skos:prefLabel`` (English or untagged), else a short
   ``rdfs:comment`` (at most :data:`MAX_COMMENT_WORDS` words), in the KG or the ``--ontology``;
4. its local name, split into words (camelCase, snake_case, kebab-case); a CIDOC-CRM number
   (``P108i_was_produced_by`` -> "was produced by", ``E22_Man-Made_Object`` -> "man-made
   object") is dropped: CIDOC's ``i`` marks the inverse property, whose words already read from
   its subject, so they are taken as they are.

The words decide the form (:func:`parse_phrase`): ``has X`` / a noun phrase -> ``noun`` ("S has
birth place O", "the birth place of S"); ``is X of`` / ``is ...ed by`` / a participle or noun
with a final preposition -> ``adj`` ("S is located in O", "Which country is S located in?");
a finite verb (a third-person ``-s`` form) -> ``verb`` ("Which city contains O?", "Which
river does S contain?"). Inflection (third person, lemma, plural) comes from ``lemminflect``,
which ships its data; without it a few suffix rules stand in.

A relation with no words (a numbered id such as ``RO_0002333`` or ``P31`` without a label, or a
local name none of whose words is an English word: ``GDE_GARTE``) is ``opaque``: never put in a
question; :func:`kgqa.make.generate.generate` reports such relations with a hint to give a
lexicon.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote

from kgqa import lazy
from kgqa.model.labels import RDFS_LABEL, SKOS_PREF_LABEL
from kgqa.model.problems import InputError
from kgqa.model.terms import IRI, Literal

try:  # MIT-licensed, ships its inflection tables (no model download)
    from lemminflect import getAllLemmas, getInflection
except ImportError:  # pragma: no cover - fallback rules below
    getAllLemmas = getInflection = None

PREPOSITIONS = frozenset(("of", "for", "to", "in", "by", "with", "from", "on", "at", "as", "into", "onto",
                          "about", "under", "over", "within", "after", "before", "during", "than", "via", "until",
                          "since"))
BE = frozenset(("is", "was", "are", "were", "be", "been"))
HAVE = frozenset(("has", "have", "had"))
RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
SKOS = "http://www.w3.org/2004/02/skos/core#"
DCT = "http://purl.org/dc/terms/"
MAX_COMMENT_WORDS = 5
#: prepositions moved to the front of a question ("In which country is S located?")
FRONTED = frozenset(("in", "at", "from"))

#: words that make a relation one to an identifier (:attr:`RelText.identifying`)
IDENTIFYING_WORDS = frozenset(("identified", "identifier", "identifiers", "id", "ids", "identifies"))
#: class names that are no noun a question can use ("Which concept has ...?", "Which entity
#: is ...?"): such classes are said as "What" (:func:`class_text` gives "thing")
GENERIC_CLASS_WORDS = frozenset(("concept", "entity", "thing", "resource", "item", "object", "individual",
                                 "named individual", "node", "instance", "element", "record"))

#: head nouns that make a number a position in a sequence ("order", "position", "index"): where
#: a part sits in its whole (an SDMX component's order), structural metadata no one asks about
POSITION_WORDS = frozenset(("order", "position", "index", "sequence", "ordinal", "seq", "rank order", "sort"))
#: nouns of relations to a time-span, and of time-span classes ("has time-span"): the span of an
#: event is when it happened, so a begin/end on it is said of the event ("Which production began
#: after 1850?"), a grounded one "is dated X"; a time-span is never the answer ("period" is not
#: among them: a period such as "Baroque" is a name a person asks by)
TIME_SPAN_WORDS = frozenset(("time-span", "time span", "timespan", "time interval"))
#: the words of relations to the bounds of a time-span (CIDOC's ``P82a_begin_of_the_begin``,
#: ``startTime``, "end date"): said by the intransitive verb ``begin`` / ``end`` (:class:`RelText`
#: kind ``when``: "When did X begin?", "began after 1850-01-01"); CIDOC's inner bounds ("end of the
#: begin", "begin of the end": the latest start, the earliest end) have no such verb and stay unsaid
BOUND_WORDS = {
    "begin of the begin": "begin", "end of the end": "end", "begin": "begin", "beginning": "begin", "start": "begin", "start date": "begin",
    "start time": "begin", "begin date": "begin", "end": "end", "end date": "end", "end time": "end",
    "ending": "end", "finish": "end",
}
#: adjectives a relation's words use where a person says a preposition ("valid to" a date)
PHRASE_WORDS = {"valid to": "valid until", "valid through": "valid until", "valid till": "valid until"}
#: the change of state behind a validity bound, said where a date is compared or ranked ("valid
#: from" a date later than X: "became valid after X"; "valid until" one earlier than X: "stopped
#: being valid before X"); the grounded bound keeps its own words ("is valid from 2000-01-01")
BOUND_CHANGE_WORDS = {"valid from": "became valid", "valid since": "became valid", "valid until": "stopped being valid",
                      "effective from": "took effect", "in force from": "came into force"}

_OPAQUE = re.compile(r"^[A-Za-z]{0,8}[_:-]?\d+[a-z]?$")
_CIDOC = re.compile(r"^[A-Z]\d+[a-z]?[_ ]+(?=\w)")
#: a word with letters and two digits or more run together ("coo1980", "hisclass12", "iso639"):
#: the name of a code system or of a version, no word a question can use
_CODE_NAME = re.compile(r"^(?=.*[A-Za-z]{2})(?=.*\d{2})[A-Za-z]+\d+[A-Za-z]*$|^\d+[A-Za-z]{2,}\d*$")


@dataclass(frozen=True)
class RelText:
    """How a relation reads: ``kind`` ``noun`` (``words`` a noun phrase), ``verb`` (``words``
    the verb's lemma and what follows it: "contain", "refer to"), ``adj`` (a participle,
    adjective or noun with its preposition, after ``aux``: "located in", "part of"; a noun
    before the preposition takes an article: "is a member of"), ``past`` (a bare past
    participle or past-tense verb: "created", "assigned": "was created on 2016-03-14",
    "Which type assignment assigned X?"), ``prep`` (a preposition and a noun: "in
    collection": "is in the collection X", "In which collection is S?"), ``raw`` (words that
    fit no frame: "valid", "begin of the end"; never put in a question), ``when`` (the bound
    of a time-span, ``words`` the verb "begin" or "end": "began after 1850-01-01", "When did
    X begin?") or ``opaque`` (no words). ``inverse``: how it reads from its object, when known."""

    kind: str
    words: str
    aux: str = "is"
    source: str = "name"
    inverse: RelText | None = None

    @property
    def opaque(self) -> bool:
        """No words, or words that fit no frame (``raw``): never put in a question."""
        return self.kind in ("opaque", "raw")

    @property
    def positional(self) -> bool:
        """Whether a number of this relation is a position in a sequence ("has an order of 8":
        :data:`POSITION_WORDS`): never a question's value (structural metadata)."""
        return self.kind == "noun" and bool(set(self.words.lower().split()) & POSITION_WORDS or
                                            self.words.lower() in POSITION_WORDS)

    @property
    def time_span(self) -> bool:
        """Whether the relation's noun names a time-span ("time-span", "period"): :data:`TIME_SPAN_WORDS`."""
        return self.kind == "noun" and self.words.lower() in TIME_SPAN_WORDS

    @property
    def past(self) -> str:
        """The past tense of a ``when`` relation's verb ("began", "ended")."""
        got = getInflection(self.words, tag="VBD") if getInflection is not None else None
        return got[0] if got else {"begin": "began"}.get(self.words, self.words + "ed")

    @property
    def object_noun(self) -> str:
        """The noun a ``verb`` relation's words end in ("include whole" -> "whole"), "" when
        they end in the verb or a preposition ("contain", "refer to")."""
        w = self.words.split()
        if self.kind != "verb" or len(w) < 2 or w[-1] in PREPOSITIONS:
            return ""
        return w[-1]

    @property
    def identifying(self) -> bool:
        """Whether the words relate a thing to its identifier ("is identified by", "has
        identifier", "id"): no question a person asks ("Which actor is identified by
        PE220760?"); the KG's catalogue numbers are no topics and no answers."""
        return bool(set(self.words.lower().replace("-", " ").split()) & IDENTIFYING_WORDS)

    @property
    def article(self) -> bool:
        """Whether an ``adj`` relation's head is a noun that takes "a" ("is a member of O";
        "part of" is said without one)."""
        w = self.words.split()
        return self.kind == "adj" and len(w) > 1 and w[-1] in PREPOSITIONS and only_noun(w[-2]) \
            and w[0] not in ("a", "an", "the") and not _participle(w[0])

    def _adj(self, plural: bool) -> str:
        if not self.article:
            return self.words
        w = self.words.split()
        if plural:
            return " ".join([*w[:-2], plural_noun(w[-2]), w[-1]])
        return ("an " if self.words[:1].lower() in "aeiou" else "a ") + self.words

    @property
    def noun(self) -> str:
        """A noun phrase for the relation's value ("the population of", "has a weight of 5")."""
        if self.kind == "adj" and self.words.split()[-1] in PREPOSITIONS:
            return " ".join(self.words.split()[:-1]) or self.words
        if self.kind == "prep":
            return self.words.partition(" ")[2]
        if self.kind == "when":
            return "start date" if self.words == "begin" else "end date"
        return self.words

    def active(self, obj: str, plural: bool = False) -> str:
        """The verb phrase with the relation's subject as the sentence subject: "contains O",
        "is located in O", "has birth place O"."""
        if self.kind == "verb":
            return f"{verb_form(self.words, plural)} {obj}".strip()
        if self.kind == "adj":
            return f"{be_form(self.aux, plural)} {self._adj(plural)} {obj}"
        if self.kind == "past":
            return f"{self.words} {obj}"
        if self.kind == "when":
            return f"{self.past} on {obj}"
        if self.kind == "prep":
            prep, _, noun = self.words.partition(" ")
            return f"{be_form(self.aux, plural)} {prep} the {noun} {obj}"
        return f"{'have' if plural else 'has'} the {self.words} {obj}"

    def relative(self, subj: str) -> str:
        """A clause about the relation's object, said from its subject: "S contains", "S is
        located in" (noun relations have none: they say "the W of S")."""
        if self.kind == "verb":
            return f"{subj} {verb_form(self.words, False)}"
        if self.kind == "past":
            return f"{subj} {self.words}"
        if self.kind == "prep":
            return f"{subj} {self.aux} {self.words.partition(' ')[0]}"
        return f"{subj} {self.aux} {self._adj(False)}"

    def asked(self, subj: str) -> tuple[str, str]:
        """(fronted preposition or "", inverted clause) for a question about the object: ("",
        "does S contain"), ("in", "is S located")."""
        if self.kind == "verb":
            return "", f"{'did' if self.aux == 'was' else 'does'} {subj} {self.words}"
        if self.kind == "past":
            return "", f"did {subj} {lemma(self.words)}"
        if self.kind == "prep":
            return self.words.partition(" ")[0], f"{self.aux} {subj}"
        if self.article:
            return "", f"{self.aux} {subj} {self._adj(False)}"
        w = self.words.split()
        if len(w) > 1 and w[-1] in FRONTED:
            return w[-1], f"{self.aux} {subj} {' '.join(w[:-1])}"
        return "", f"{self.aux} {subj} {self.words}"


def be_form(aux: str, plural: bool) -> str:
    if not plural:
        return aux
    return "were" if aux == "was" else "are"


def verb_form(words: str, plural: bool) -> str:
    """``words`` (lemma first) with the lemma in the third person singular (or the plural)."""
    head, _, rest = words.partition(" ")
    if plural:
        return words
    form = None
    if getInflection is not None:
        got = getInflection(head, tag="VBZ")
        form = got[0] if got else None
    if form is None:
        form = head + ("es" if re.search(r"(s|x|z|ch|sh|o)$", head) else "s")
    return f"{form} {rest}".strip()


def plural_noun(word: str) -> str:
    """The plural of a noun phrase (its head: the last word, or the word before ``of``)."""
    if " of " in word:
        head, _, rest = word.partition(" of ")
        return plural_noun(head) + " of " + rest
    words = word.split(" ")
    last = words[-1]
    if last.endswith(("ware", "information", "equipment", "data", "staff", "series", "species")) or not last:
        return word
    form = None
    if getInflection is not None and last.isalpha():
        got = getInflection(last, tag="NNS")
        form = got[0] if got else None
    if form is None:
        if re.search(r"(s|x|z|ch|sh)$", last):
            form = last + "es"
        elif re.search(r"[^aeiou]y$", last):
            form = last[:-1] + "ies"
        else:
            form = last + "s"
    return " ".join(words[:-1] + [form])


def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    return getAllLemmas(word) if getAllLemmas is not None else {}


def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's lemmas of ``word`` by part of speech (empty without lemminflect)."""
    return _lemmas(word)


def is_noun(word: str) -> bool:
    """Whether lemminflect knows ``word`` as a noun (True without lemminflect)."""
    return getAllLemmas is None or "NOUN" in _lemmas(word.lower())


def only_noun(word: str) -> bool:
    """Whether ``word`` is a noun and not also an adjective or a verb form ("member", "concept";
    not "part", "responsible", "eligible", "located")."""
    lem = _lemmas(word.lower())
    if word.lower().endswith(("ible", "able", "ive", "ous", "ful", "less")):  # lemminflect: "responsible" a noun
        return False
    return getAllLemmas is not None and "NOUN" in lem and "ADJ" not in lem and \
        not ("VERB" in lem and lem["VERB"][0] != word.lower())


def lemma(word: str) -> str:
    """A verb form's lemma ("assigned" -> assign)."""
    got = _lemmas(word).get("VERB")
    return got[0] if got else word


def is_english_word(word: str) -> bool:
    """Whether ``word`` is in lemminflect's English lexicon (True without lemminflect)."""
    if getAllLemmas is None:
        return True
    return bool(_lemmas(word.lower())) or word.lower() in PREPOSITIONS or word.lower() in ("a", "an", "the")


def _third_person(word: str) -> str | None:
    """The lemma when ``word`` is a verb's third-person ``-s`` form ("contains" -> contain)."""
    if not word.endswith("s") or word.endswith("ss"):
        return None
    lem = _lemmas(word)
    if "VERB" in lem and lem["VERB"][0] != word:
        if "NOUN" in lem and lem["NOUN"][0] != word:  # "parts", "members": a plural noun first
            return None
        return lem["VERB"][0]
    if getAllLemmas is None and word[:-1] in ("contain", "include", "depict", "represent", "belong"):
        return word[:-1]
    return None


def _participle(word: str) -> bool:
    if getAllLemmas is None:
        return word.endswith(("ed", "en"))
    lem = _lemmas(word)
    return "VERB" in lem and lem["VERB"][0] != word and not word.endswith("s") and \
        (word.endswith(("ed", "en", "wn", "ne", "lt", "nt")) or "NOUN" not in lem)


def split_name(iri: str) -> list[str]:
    """The words of an IRI's local name: camelCase, snake_case, kebab-case, percent-escapes;
    a CIDOC-CRM number (``P108i_``, ``E22_``) dropped."""
    name = re.split(r"[#/:]", iri.rstrip("/#"))[-1] or iri
    name = _CIDOC.sub("", unquote(name))
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    name = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return [w for w in re.split(r"[\s_]+", name) if w]


def local_words(iri: str) -> str:
    """The local name as text ("birthPlace" -> "birth place"), acronyms kept."""
    return " ".join(w if (w.isupper() and len(w) > 1) else w.lower() for w in split_name(iri))


@functools.lru_cache(maxsize=4096)
def is_opaque_name(iri: str) -> bool:
    """A numbered id (``RO_0002333``, ``P31``, ``BFO_0000066``) or a local name with no English
    word in it (``GDE_GARTE``)."""
    raw = re.split(r"[#/:]", iri.rstrip("/#"))[-1]
    if not raw or _OPAQUE.match(raw):
        return True
    if any(_CODE_NAME.match(w) for w in split_name(iri)):
        return True  # "coo1980_code", "hisclass12": a code system's name no reader can say
    words = [p for w in split_name(iri) for p in w.split("-") if any(c.isalpha() for c in p)]
    if len(words) == 1 and words[0].isalpha() and words[0].islower() and len(words[0]) >= 4:
        return False  # one lower-case word lemminflect lacks is a domain term ("hiscam"), not a code
    return not words or not any(is_english_word(w) for w in words if len(w) > 1)


def parse_phrase(text: str, source: str = "name") -> RelText:
    """The form of a relation's words (module docstring)."""
    text = PHRASE_WORDS.get(text.strip().lower(), text)
    words = [w for w in re.split(r"\s+", text.strip()) if w]
    low = [w.lower() for w in words]
    if not words:
        return RelText("opaque", "", source=source)
    bound = " ".join(low[1:] if low[0] in HAVE and len(low) > 1 else low)
    if bound in BOUND_WORDS:  # "begin of the begin", "has start time": a time-span's bound
        return RelText("when", BOUND_WORDS[bound], "did", source)
    if any(len(w) == 1 and w.isalpha() and w != "a" for w in low) or \
            any(w.split("-")[-1] in PREPOSITIONS for w in low if "-" in w):
        return RelText("raw", " ".join(words), source=source)  # "m agency", "evidence-with"
    if "of" in low[1:-1] and low[low.index("of") - 1] == low[-1]:
        return RelText("raw", " ".join(words), source=source)  # "end of the end": CIDOC's, no noun
    keep = lambda ws: " ".join(w if (w.isupper() and len(w) > 1) else w.lower() for w in ws)  # noqa: E731
    if low[0] in HAVE and len(low) > 1:
        return RelText("noun", keep(words[1:]), source=source)
    if low[0] in BE and len(low) > 1:
        aux = "was" if low[0] in ("was", "were") else "is"
        if low[-1] in PREPOSITIONS or _participle(low[1]):
            return RelText("adj", keep(words[1:]), aux, source)
        return RelText("adj", keep(words[1:]) + " of", aux, source)  # "isCapital" -> "is capital of"
    if len(low) > 1 and low[-1] in PREPOSITIONS:
        lemma = _third_person(low[0])
        if lemma is not None:  # "belongs to", "consists of"
            return RelText("verb", " ".join([lemma, *low[1:]]), source=source)
        if low[-1] != "of" or _participle(low[0]):  # "located in", "produced by", "member of"
            return RelText("adj", keep(words), source=source)
        return RelText("adj", keep(words), source=source)  # "part of", "member of"
    lemma = _third_person(low[0])
    if lemma is not None:
        return RelText("verb", " ".join([lemma, *low[1:]]), source=source)
    if len(low) > 1 and _participle(low[0]) and low[1] in PREPOSITIONS:
        return RelText("adj", keep(words), source=source)
    if len(low) > 1 and low[0] in PREPOSITIONS and all(is_noun(w) for w in low[1:]):
        return RelText("prep", keep(words), source=source)  # "in collection", "in scheme"
    head = low[low.index("of") - 1] if "of" in low[1:] else low[-1]
    if getAllLemmas is not None and head.isalpha() and _lemmas(head) and not is_noun(head):
        if len(low) == 1 and _participle(head):
            return RelText("past", head, "was", source)  # "created", "assigned"
        return RelText("raw", keep(words), source=source)  # "valid", "begin of the begin"
    return RelText("noun", keep(words), source=source)


POS_KINDS = {"noun": "noun", "np": "noun", "verb": "verb", "vp": "verb", "adj": "adj", "participle": "adj",
             "prep": "adj", "adjective": "adj"}

#: vocabulary terms whose local names read from the object ("A skos:broader B": B is broader)
BUILTIN: dict[str, RelText] = {
    SKOS + "broader": RelText("noun", "broader concept", source="builtin",
                              inverse=RelText("noun", "narrower concept", source="builtin")),
    SKOS + "narrower": RelText("noun", "narrower concept", source="builtin",
                               inverse=RelText("noun", "broader concept", source="builtin")),
    SKOS + "related": RelText("noun", "related concept", source="builtin"),
    SKOS + "inScheme": RelText("prep", "in scheme", source="builtin"),
    SKOS + "topConceptOf": RelText("adj", "top concept of", source="builtin"),
    SKOS + "hasTopConcept": RelText("noun", "top concept", source="builtin"),
    "http://purl.org/dc/terms/isPartOf": RelText("adj", "part of", source="builtin",
                                                 inverse=RelText("noun", "part", source="builtin")),
    "http://purl.org/dc/terms/hasPart": RelText("noun", "part", source="builtin",
                                                inverse=RelText("adj", "part of", source="builtin")),
    # Dublin Core terms named by a verb in the third person, which their names share with a
    # plural noun ("references": the name alone reads "has the references X")
    **{DCT + name: RelText("verb", words, source="builtin") for name, words in (
        ("references", "refer to"), ("replaces", "replace"), ("requires", "require"),
        ("conformsTo", "conform to"))},
    **{DCT + name: RelText("adj", words, source="builtin") for name, words in (
        ("isReferencedBy", "referred to by"), ("isReplacedBy", "replaced by"), ("isRequiredBy", "required by"),
        ("isVersionOf", "a version of"), ("isFormatOf", "a format of"))},
}


def _entry(iri: str, value, path: str) -> RelText:
    if isinstance(value, str):
        return parse_phrase(value, "lexicon")
    if not isinstance(value, dict) or not isinstance(value.get("phrase"), str) or not value["phrase"].strip():
        raise InputError(path, f"{iri}: expected a phrase or {{phrase, pos, inverse}}, got {value!r}")
    rt = parse_phrase(value["phrase"], "lexicon")
    pos = value.get("pos")
    if pos is not None:
        if pos not in POS_KINDS:
            raise InputError(path, f"{iri}: pos {pos!r}: expected one of {', '.join(POS_KINDS)}")
        kind = POS_KINDS[pos]
        if kind != rt.kind:
            w = value["phrase"].strip()
            if kind == "verb":
                head = w.split()[0].lower()
                lemma = _third_person(head) or (_lemmas(head).get("VERB") or (None,))[0]
                w = " ".join([lemma or w.split()[0], *w.split()[1:]])
            rt = RelText(kind, w, rt.aux, "lexicon")
    inv = value.get("inverse")
    if inv is not None:
        if not isinstance(inv, str) or not inv.strip():
            raise InputError(path, f"{iri}: inverse: expected a phrase, got {inv!r}")
        rt = replace(rt, inverse=parse_phrase(inv, "lexicon"))
    return rt


def read_relation_lexicon(path: str | Path) -> dict[str, RelText]:
    """A YAML or JSON mapping ``IRI -> phrase | {phrase, pos, inverse}`` (angle brackets around
    the IRI allowed). A bad entry is an error naming the file and the IRI."""
    yaml = lazy.yaml()
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(str(p), f"cannot read the lexicon: {e}") from e
    try:
        doc = json.loads(text) if p.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as e:
        raise InputError(str(p), f"not valid {'JSON' if p.suffix.lower() == '.json' else 'YAML'}: {e}") from None
    if not isinstance(doc, dict):
        raise InputError(str(p), "expected a mapping from relation IRI to phrase")
    return {str(k).strip().strip("<>"): _entry(str(k), v, str(p)) for k, v in doc.items()}


class RelationLexicon:
    """:class:`RelText` per relation IRI, from the sources in the module docstring's order.
    ``sources``: objects with ``select(query)`` (:class:`~kgqa.make.generate.kg.KGAccess`: the KG,
    the ontology) asked for labels and comments."""

    def __init__(self, sources: Sequence = (), user: dict[str, RelText] | None = None, lang: str = "en"):
        self.sources = list(sources)
        self.user = dict(user or {})
        self.lang = lang
        self._cache: dict[str, RelText] = {}

    def fetch(self, iris: Iterable[str]) -> None:
        todo = sorted({i for i in iris if i not in self._cache})
        found: dict[str, dict[str, list[Literal]]] = {}
        props = (RDFS_LABEL, SKOS_PREF_LABEL, RDFS_COMMENT)
        for src in self.sources:
            for k in range(0, len(todo), 100):
                vals = " ".join(f"<{i}>" for i in todo[k:k + 100])
                q = (f"SELECT ?s ?p ?l WHERE {{ VALUES ?s {{ {vals} }} ?s ?p ?l . FILTER(isLiteral(?l)) "
                     f"FILTER(?p IN ({', '.join(f'<{p}>' for p in props)})) }}")
                for s, p, lab in src.select(q).rows:
                    if isinstance(s, IRI) and isinstance(lab, Literal) and isinstance(p, IRI):
                        found.setdefault(s.value, {}).setdefault(p.value, []).append(lab)
        for iri in todo:
            self._cache[iri] = self._decide(iri, found.get(iri, {}))

    def _english(self, lits: list[Literal]) -> str | None:
        ok = [lit for lit in lits if (lit.language or "").lower() in ("", self.lang) or
              (lit.language or "").lower().startswith(self.lang + "-")]
        ok.sort(key=lambda x: (0 if (x.language or "").lower().startswith(self.lang) else 1, x.value))
        return ok[0].value.strip() if ok else None

    def _decide(self, iri: str, by: dict[str, list[Literal]]) -> RelText:
        if iri in self.user:
            return self.user[iri]
        if iri in BUILTIN:
            return BUILTIN[iri]
        for p in (RDFS_LABEL, SKOS_PREF_LABEL):
            lab = self._english(by.get(p, []))
            if lab and not _OPAQUE.match(lab):
                return parse_phrase(_CIDOC.sub("", lab), "label")
        com = self._english(by.get(RDFS_COMMENT, []))
        if com and len(com.split()) <= MAX_COMMENT_WORDS and not com.endswith("."):
            return parse_phrase(com, "comment")
        if is_opaque_name(iri):
            return RelText("opaque", "", source="name")
        words = " ".join(split_name(iri))
        if words.lower() in ("broader", "narrower", "related"):  # SKOS-like terms in another namespace
            return BUILTIN[SKOS + words.lower()]
        return parse_phrase(words, "name")

    def get(self, iri: str) -> RelText:
        if iri not in self._cache:
            self.fetch([iri])
        return self._cache[iri]

    def opaque(self, iris: Iterable[str]) -> list[str]:
        """The relations among ``iris`` that cannot be said in English."""
        iris = list(iris)
        self.fetch(iris)
        return sorted(i for i in iris if self._cache[i].opaque)


@functools.lru_cache(maxsize=4096)
def class_text(iri: str, label: str | None) -> str:
    """A class's name in a question: its label (a CIDOC number dropped, camelCase split, a
    parenthesised version with digits dropped) lower-cased, acronyms kept; else its local
    name's words; "thing" (said as "What") for no words or a generic noun
    (:data:`GENERIC_CLASS_WORDS`: "concept", "entity")."""
    if not label and is_opaque_name(iri):
        return "thing"
    text = _CIDOC.sub("", label) if label else local_words(iri)
    text = re.sub(r"(?<=[a-z])(?=[A-Z][a-z])", " ", text)  # a label written in camelCase
    text = re.sub(r"\s*\([^()]*\d[^()]*\)", "", text).strip() or text  # "Commune (2013-01-01)": a version
    text = " ".join(w if (w.isupper() and len(w) > 1) else w.lower() for w in text.split())
    return "thing" if text.replace("_", " ") in GENERIC_CLASS_WORDS else text
