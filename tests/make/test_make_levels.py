"""Generalization levels (Gu et al. 2021) of test items against a training set."""

from __future__ import annotations

from typer.testing import CliRunner

import kgqa.cli as cli
from kgqa.make.levels import count_levels, levels, logical_form, schema_items, with_levels
from kgqa.load import load_dataset
from kgqa.model import Dataset, Item
from kgqa.sparql.analyzer import analyze

P = "PREFIX dbo: <http://dbpedia.org/ontology/> PREFIX dbr: <http://dbpedia.org/resource/> "


def it(i: str, body: str | None) -> Item:
    return Item(i, {"en": i}, None if body is None else P + body)


TRAIN = [
    it("t1", "SELECT ?x WHERE { dbr:A dbo:spouse ?x }"),
    it("t2", "SELECT ?x WHERE { ?x a dbo:Person ; dbo:birthPlace dbr:B }"),
    it("t3", "SELECT (COUNT(?x) AS ?c) WHERE { dbr:C dbo:child ?x }"),
    it("t4", None),
]


def test_schema_items_definition():
    s = schema_items(it("x", "SELECT ?x WHERE { ?x a dbo:Person ; dbo:spouse/dbo:child ?y . FILTER(?y = dbr:Q) }"))
    assert s == {"http://dbpedia.org/ontology/Person", "http://dbpedia.org/ontology/spouse",
                 "http://dbpedia.org/ontology/child"}  # no rdf:type, no entity
    s = schema_items(it("x", "SELECT ?x WHERE { dbr:A dbo:spouse ?x }"), include_entities=True)
    assert s == {"http://dbpedia.org/ontology/spouse", "http://dbpedia.org/resource/A"}
    assert schema_items(it("x", None)) is None
    assert logical_form(it("x", "SELECT WHERE {")) is None


def test_levels_exact():
    test = [
        it("iid-other-entity", "SELECT ?y WHERE { dbr:Z dbo:spouse ?y }"),  # same schema + structure as t1
        it("iid-reordered", "SELECT ?p WHERE { ?p dbo:birthPlace dbr:Q . ?p a dbo:Person }"),
        it("comp-structure", "SELECT (COUNT(?x) AS ?c) WHERE { dbr:A dbo:spouse ?x }"),  # seen items, new structure
        it("comp-combination", "SELECT ?x WHERE { dbr:A dbo:spouse ?y . ?y dbo:child ?x }"),
        it("zero", "SELECT ?x WHERE { dbr:A dbo:author ?x }"),
        it("zero-class", "SELECT ?x WHERE { ?x a dbo:Film }"),
        it("unknown-none", None),
        it("unknown-invalid", "SELECT ?x WHERE { dbr:A dbo:spouse ?x "),
    ]
    got = levels(TRAIN, test)
    assert got == {
        "iid-other-entity": "iid", "iid-reordered": "iid", "comp-structure": "compositional",
        "comp-combination": "compositional", "zero": "zero-shot", "zero-class": "zero-shot",
        "unknown-none": "unknown", "unknown-invalid": "unknown",
    }
    assert count_levels(got) == {"iid": 2, "compositional": 2, "zero-shot": 2, "unknown": 2}
    # without structure: the COUNT variant has the same schema set as t1 -> iid
    flat = levels(TRAIN, test, structure=False)
    assert flat["comp-structure"] == "iid" and flat["comp-combination"] == "compositional"
    assert flat["unknown-invalid"] == "iid"  # the tolerant analyzer still sees dbo:spouse
    # with entities as schema items: a new entity makes the item zero-shot
    ent = levels(TRAIN, test, include_entities=True)
    assert ent["iid-other-entity"] == "zero-shot" and ent["comp-structure"] == "compositional"


def test_with_levels_sets_metadata():
    ds = Dataset("t", [it("a", "SELECT ?x WHERE { dbr:A dbo:spouse ?x }")], "jsonl")
    out = with_levels(ds, {"a": "iid"})
    assert out.items[0].metadata["generalization_level"] == "iid" and "generalization_level" not in ds.items[0].metadata


def test_real_qald9_levels(shared_data, tmp_path):
    tr, te = load_dataset("qald-9-train"), load_dataset("qald-9-test")
    got = levels(tr.items, te.items)
    assert list(got) == te.ids
    c = count_levels(got)
    invalid = sum(1 for d in te if not d.sparql or not analyze(d.sparql).valid)
    assert c["unknown"] == invalid and sum(c.values()) == 150
    seen = set().union(*(schema_items(t) or set() for t in tr))
    for d in te:
        s = schema_items(d)
        if got[d.id] == "zero-shot":
            assert s - seen
        elif got[d.id] in ("iid", "compositional"):
            assert s <= seen
    assert c["iid"] > 0 and c["compositional"] > 0 and c["zero-shot"] > 0
    runner = CliRunner()
    cli._register()
    r = runner.invoke(cli.app, ["levels", "qald-9-train", "qald-9-test", "-o", str(tmp_path / "lv.json")])
    assert r.exit_code == 0, r.output
    for lv, n in c.items():
        assert any(line.split("│")[1].strip() == lv and line.split("│")[2].strip() == str(n)
                   for line in r.output.splitlines() if line.count("│") >= 3)
    written = load_dataset(tmp_path / "lv.json")
    assert {d.id: d.metadata["generalization_level"] for d in written} == got
