"""Question generation on KGs nobody here wrote (issue 36): the lexicon step, what never
becomes a question, labels, ``--base``, and, on every KG of ``$KGQA_DATA_DIR/kgs`` and CK25,
that generation succeeds or says why and that every generated question

- uses no rdf:/rdfs:/owl: vocabulary (``rdf:type`` as the question node's class aside) and no
  identity or mapping relation (sameAs, skos:exactMatch, ...);
- ranks or compares on no identifier (ids, codes, serial numbers);
- does not contain its answer;
- has no topic and prints no answer without a name (a UUID, a code such as "PE205292", a
  timestamp, a web address, a label of more than six words);
- follows the paper's function mix within 3 points where the KG offers every function class.
"""

from __future__ import annotations

import json
import re

import pytest

from generate_kgs import KG_FILES, kg_options
from kgqa.make.generate import GenerateOptions, generate
from kgqa.make.generate.grounding import Answered
from kgqa.make.generate.kg import KGAccess
from kgqa.make.generate.language import Lexicon, code_like, unnamed_iri, unreadable_term
from kgqa.make.generate.lexicon import (BUILTIN, RelationLexicon, class_text, is_opaque_name, parse_phrase,
                                        read_relation_lexicon, split_name)
from kgqa.model.terms import IRI, Literal
from kgqa.make.generate.readings import answer_in_text
from kgqa.make.generate.commonness import subsumed_relations
from kgqa.make.generate.schema import IDENTITY_RELATIONS, induce_schema, is_identifier_name, label_properties
from kgqa.model.problems import InputError

META = ("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "http://www.w3.org/2000/01/rdf-schema#",
        "http://www.w3.org/2002/07/owl#")
PAPER = {"none": 74, "count": 10, "superlative": 9, "comparative": 7}
#: phrasings the old grammar produced on these KGs (issue 36's reading sheets): a relation
#: that fits no frame, a noun frame around a participle or a preposition, no article
BAD_WORDING = (" has a created ", " has an issued ", " has a modified ", " has a valid", " has in ", " is the in ",
               " a responsible ", " a eligible ", " an eligible ", "Which thing ", " the the ", " has an in ",
               " is member of ", " a taken ", " end of the end", " begin of the begin")


# ----------------------------------------------------------------------------- lexicon


@pytest.mark.parametrize("name, kind, words, active, asked", [
    ("P108i_was_produced_by", "adj", "produced by", "was produced by O", "was S produced by"),
    ("P14_carried_out_by", "adj", "carried out by", "is carried out by O", "is S carried out by"),
    ("locatedIn", "adj", "located in", "is located in O", "is S located"),
    ("isPartOf", "adj", "part of", "is part of O", "is S part of"),
    ("contains", "verb", "contain", "contains O", "does S contain"),
    ("belongs_to", "verb", "belong to", "belongs to O", "does S belong to"),
    ("hasBirthPlace", "noun", "birth place", "has the birth place O", "is S birth place"),
    ("P102_has_title", "noun", "title", "has the title O", "is S title"),
])
def test_relation_words_decide_the_form(name, kind, words, active, asked):
    rt = parse_phrase(" ".join(split_name("http://x.org/" + name)))
    assert (rt.kind, rt.words) == (kind, words)
    assert rt.active("O") == active
    assert rt.asked("S")[1] == asked


def test_inflection_and_opaque_names():
    assert parse_phrase("contains").active("O", plural=True) == "contain O"
    assert parse_phrase("is located in").active("O", plural=True) == "are located in O"
    for iri in ("http://purl.obolibrary.org/obo/RO_0002333", "http://www.wikidata.org/prop/P31",
                "http://x.org/GDE_GARTE", "http://x.org/BFO_0000066"):
        assert is_opaque_name(iri), iri
    assert not is_opaque_name("http://x.org/birthPlace")
    assert split_name("http://www.cidoc-crm.org/cidoc-crm/E22_Man-Made_Object") == ["Man-Made", "Object"]


def test_user_lexicon_yaml_and_errors(tmp_path):
    f = tmp_path / "lex.yaml"
    f.write_text("<http://x.org/p1>: contains\nhttp://x.org/p2: {phrase: has broader concept, inverse: has narrower concept}\n"
                 "http://x.org/p3: {phrase: borders, pos: verb}\n")
    lex = read_relation_lexicon(f)
    assert (lex["http://x.org/p1"].kind, lex["http://x.org/p1"].words) == ("verb", "contain")
    assert lex["http://x.org/p2"].inverse.words == "narrower concept"
    assert lex["http://x.org/p3"].active("O") == "borders O"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"http://x.org/p": {"phrase": "x", "pos": "adverb"}}))
    with pytest.raises(InputError, match="adverb"):
        read_relation_lexicon(bad)


def test_relation_labels_beat_names_and_opaque_ids_are_reported(tmp_path):
    kg = tmp_path / "g.nt"
    rdfs = "http://www.w3.org/2000/01/rdf-schema#label"
    kg.write_text(f'<http://o.org/RO_1> <{rdfs}> "located in"@en .\n'
                  + "".join(f"<http://r.org/a{i}> <http://o.org/RO_1> <http://r.org/b{i % 2}> .\n"
                            f"<http://r.org/a{i}> <http://o.org/RO_2> <http://r.org/b{i % 2}> .\n"
                            f'<http://r.org/a{i}> <{rdfs}> "place {i}" .\n' for i in range(6))
                  + f'<http://r.org/b0> <{rdfs}> "Oslo" .\n<http://r.org/b1> <{rdfs}> "Bergen" .\n')
    with KGAccess.open(kg) as acc:
        rl = RelationLexicon([acc])
        assert rl.get("http://o.org/RO_1").words == "located in"
        assert rl.opaque(["http://o.org/RO_1", "http://o.org/RO_2"]) == ["http://o.org/RO_2"]
    res = generate(kg, GenerateOptions(n=4, seed=0, functions=("none",)))
    assert res.summary["opaque_relations"] == ["http://o.org/RO_2"]
    assert all("RO_2" not in it.sparql for it in res.dataset.items)
    assert any(it.question().startswith("Which thing is located in") or "located" in it.question()
               for it in res.dataset.items)


# ----------------------------------------------------------------------------- exclusions, labels, base


def test_identifier_names():
    assert is_identifier_name("http://x.org/laureateId") and is_identifier_name("http://x.org/hisco_code")
    assert is_identifier_name("http://x.org/number") and not is_identifier_name("http://x.org/numberOfEmployees")
    assert not is_identifier_name("http://x.org/population")


def test_label_predicate_by_coverage(tmp_path):
    kg = tmp_path / "g.nt"
    rdfs = "http://www.w3.org/2000/01/rdf-schema#label"
    name = "http://dbpedia.org/ontology/name"
    kg.write_text(f'<http://r.org/x> <{rdfs}> "only one" .\n'
                  + "".join(f'<http://r.org/e{i}> <{name}> "E {i}" .\n<http://r.org/e{i}> <http://o.org/knows> '
                            f'<http://r.org/e{(i + 1) % 5}> .\n' for i in range(5)))
    with KGAccess.open(kg) as acc:
        assert label_properties(acc)[0] == name


def test_relative_iris_need_base(tmp_path):
    kg = tmp_path / "rel.ttl"
    towns = ["Oslo", "Bergen", "Tromso", "Narvik", "Molde", "Alta"]  # named: "a0" would be no name
    kg.write_text("".join(f"<{t}> <http://o.org/contains> <{('North', 'South')[i % 2]}> .\n"
                          for i, t in enumerate(towns)))
    with pytest.raises(InputError, match="--base"):
        generate(kg, GenerateOptions(n=2, seed=0, functions=("none",)))
    res = generate(kg, GenerateOptions(n=2, seed=0, functions=("none",)), engine_options={"base": "http://ex.org/"})
    assert res.dataset.items and all("file:" not in it.sparql for it in res.dataset.items)
    assert all("http://ex.org/" in it.sparql for it in res.dataset.items)


@pytest.mark.parametrize("text, code", [("PE205292", True), ("93.225.27", True), ("4088.G.9", True),
                                        ("1905 -", True), ("111", True), ("87819495 21e8 45eb 88d2 587c35f54c98", True),
                                        ("Commune (2013-01-01)", False), ("[jar]", False), ("Bergen", False),
                                        ("K313-8452822 - Heisenberg Crystal Transformer", False), ("Øl", False)])
def test_code_like_labels(text, code):
    assert code_like(text) is code


def test_unnamed_iris_and_unreadable_topics():
    assert unnamed_iri("http://model.geneontology.org/M/87819495-21e8-45eb-88d2-587c35f54c98")
    assert unnamed_iri("http://data.theautry.org/maker/pe204288")
    assert not unnamed_iri("http://ex.org/Bergen")
    xsd = "http://www.w3.org/2001/XMLSchema#"
    assert "timestamp" in unreadable_term(Literal("2013-02-27T09:19:00Z", xsd + "dateTime"), None)
    assert unreadable_term(Literal("2013-02-27", xsd + "date"), None) == ""
    assert "web address" in unreadable_term(Literal("https://orcid.org/0000-0001-7476-6306"), None)

    class Lex:  # labels as a KG would give them
        unlabelled: set = set()
        require_labels = False
        labels = {"http://x/a": "PE205292", "http://x/b": "Spinner, Weaver, Knitter, Dyer or Related Worker, "
                  "Specialisation Unknown", "http://x/c": "Medical Doctor", "http://x/d": "Commune (2013-01-01)"}

        def label(self, iri):
            return self.labels[iri]
    assert "code" in unreadable_term(IRI("http://x/a"), Lex())
    assert "too long" in unreadable_term(IRI("http://x/b"), Lex())
    assert unreadable_term(IRI("http://x/c"), Lex()) == unreadable_term(IRI("http://x/d"), Lex()) == ""


@pytest.mark.parametrize("label, iri, text", [
    (None, "http://www.w3.org/2004/02/skos/core#Concept", "thing"),  # no useful noun: "What ...?"
    ("Entity", "http://x/Entity", "thing"),
    ("Commune (2013-01-01)", "http://x/CL_HGDE", "commune"),  # a version in brackets is no part of the noun
    ("NationalityCategory", "http://x/CL_NAT", "nationality category"),
    (None, "http://www.cidoc-crm.org/cidoc-crm/E22_Man-Made_Object", "man-made object"),
    ("Bill of material (BOM)", "http://x/Bom", "bill of material (BOM)"),
])
def test_class_names(label, iri, text):
    assert class_text(iri, label) == text


def test_identifier_relations_and_dublin_core_verbs():
    assert parse_phrase("is identified by").identifying and parse_phrase("has identifier").identifying
    assert not parse_phrase("carried out by").identifying and not parse_phrase("has title").identifying
    refs = BUILTIN["http://purl.org/dc/terms/references"]  # a verb, not "has the references X"
    assert (refs.active("X"), refs.asked("S")) == ("refers to X", ("", "does S refer to"))
    assert BUILTIN["http://purl.org/dc/terms/isReplacedBy"].active("X") == "is replaced by X"


# ----------------------------------------------------------------------------- every real KG


def _triples(sparql: str) -> list[tuple[str, str, str]]:
    body = sparql.split("WHERE {\n", 1)[1].rsplit("\n}", 1)[0]
    out = []
    for line in (x.strip() for x in body.split("\n")):
        if line and not line.startswith("FILTER(") and line.endswith(" ."):
            s, p, o = line[:-2].split(" ", 2)
            out.append((s, p, o))
    return out


def _ranked_relations(sparql: str) -> list[str]:
    """Relations whose values a superlative or comparative ranks or compares."""
    vars_ = set(re.findall(r"ORDER BY (?:DESC|ASC)\(\?(\w+)\)", sparql))
    vars_ |= set(re.findall(r"FILTER\(\?(\w+) [<>]=? ", sparql))
    vars_ |= set(re.findall(r"SELECT \((?:MAX|MIN)\(\?(\w+)\)", sparql))
    return [p.strip("<>") for s, p, o in _triples(sparql) if o.lstrip("?") in vars_ and o.startswith("?")]


def check_kg(name: str, path, n: int) -> dict:
    try:
        res = generate(path, GenerateOptions(n=n, seed=1), **kg_options(name))
    except InputError as e:  # generation may refuse, saying why
        assert "--lexicon" in str(e) or "no relation" in str(e), e
        return {}
    s = res.summary
    if s["graph_queries"] == 0:  # the KG offers nothing that can be worded: the summary says why
        assert s["rejected"].get("stalled") or any(k.startswith("gave-up") for k in s["rejected"]), s["rejected"]
        return {}
    items = [it for it in res.dataset.items if it.metadata.get("paraphrase_source") == "canonical"]
    for it in items:  # the wording rules hold on KGs nobody here wrote
        q = it.question()
        assert q.endswith("?") and q[0].isupper(), (name, q)
        assert not any(bad in f" {q} " for bad in BAD_WORDING), (name, q)
    with KGAccess.open(path, **kg_options(name).get("engine_options", {})) as acc:
        lex = Lexicon(acc, label_properties=label_properties(acc))
        for it in items:
            for s_, p, o in _triples(it.sparql):
                if p == "a":
                    continue
                assert not p.strip("<>").startswith(META), (name, it.sparql)
                assert p.strip("<>") not in IDENTITY_RELATIONS, (name, it.sparql)
            for rel in _ranked_relations(it.sparql):
                assert not is_identifier_name(rel), (name, it.question(), rel)
            for s_, p, o in _triples(it.sparql):  # topics: every constant end of a triple
                for end in (s_, o):
                    if end.startswith("<") and p != "a":
                        assert not unreadable_term(IRI(end.strip("<>")), lex), (name, it.question(), end)
            for row in it.answer.rows:
                for t in row:
                    if isinstance(t, IRI):
                        lex.label(t.value)
                        assert not (t.value in lex.unlabelled and unnamed_iri(t.value)), (name, it.question(), t)
            fake = Answered(_Fn(it.metadata.get("function", "none")), it.sparql, it.answer)
            assert not answer_in_text(fake, lex, it.question()), (name, it.question(), it.answer)
    return s


class _Fn:
    """The part of a graph query :func:`answer_in_text` reads: its function's name."""

    def __init__(self, name: str):
        self.function = type("F", (), {"name": name})()


def _mix_ok(s: dict) -> None:
    """Within 3 points of the paper's mix, plus half a question where the KG yields few (15
    questions: one is 6.7 points, so 10% counts cannot be met closer than 3.3 points)."""
    if any(k.startswith("gave-up") for k in s["rejected"]) or not s:
        return
    k = s["graph_queries"]
    for c, want in PAPER.items():
        got = 100 * s["function_class"].get(c, 0) / k
        assert abs(got - want) <= 3.0 + 50 / k + 1e-9, (c, got, s["function_class"])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(KG_FILES))
def test_every_kg_generates_publishable_questions(shared_data, name):
    s = check_kg(name, shared_data / KG_FILES[name], 40)
    if s:
        _mix_ok(s)


def test_subsumed_relations_are_left_out(tmp_path):
    """A relation whose pairs another relation holds too (either way round) is a second, more
    technical way to ask the same: the narrower one goes, and of two that hold the same pairs
    the shorter name stays."""
    S = "http://www.w3.org/2004/02/skos/core#"
    lines = []
    for i in range(8):
        c, sch = f"<http://x/c{i}>", f"<http://x/s{i % 2}>"
        lines.append(f"{c} <{S}inScheme> {sch} .")
        lines.append(f"{c} <http://x/relatedTo> <http://x/c{(i + 1) % 8}> .")
        if i < 4:
            lines.append(f"{c} <{S}topConceptOf> {sch} .")  # a strict subset of inScheme
        lines.append(f"{sch} <http://x/hasSchemeMember> {c} .")  # inScheme's pairs, the other way round
    kg = tmp_path / "s.nt"
    kg.write_text("\n".join(lines) + "\n")
    with KGAccess.open(kg) as acc:
        got = subsumed_relations(acc, induce_schema(acc))
    assert got == {S + "topConceptOf": S + "inScheme", "http://x/hasSchemeMember": S + "inScheme"}
