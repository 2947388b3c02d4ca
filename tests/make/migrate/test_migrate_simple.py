"""kgqa migrate on the SimpleQuestions-style fixture (tests/fixtures/migrate/simple_*): entity
mapping, path kinds (paper section 4.2-4.3), proposed rules and refinement (4.4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from kgqa.load import load_dataset
from kgqa.make.migrate import KG, Links, MigrateOptions, load_rules, migrate, read_triples
from kgqa.make.migrate.paths import PathFinder
from kgqa.make.migrate.rules import Rule, RuleSet
from kgqa.model import IRI, InputError

F = Path(__file__).parents[2] / "fixtures" / "migrate"
DBR = "http://dbpedia.org/resource/"
DBO = "http://dbpedia.org/ontology/"
FB = "http://rdf.freebase.com/ns/"


def by_id(m):
    return {r["id"]: r for r in m.records}


@pytest.fixture(scope="module")
def target():
    kg = KG([F / "simple_target.ttl"], cache=False)
    yield kg
    kg.close()


@pytest.fixture(scope="module")
def records():
    return read_triples(F / "simple_records.txt")


@pytest.fixture(scope="module")
def initial(target, records):
    return migrate(records, target, Links.load([F / "simple_links.nt"]))


@pytest.fixture(scope="module")
def refined(target, records):
    return migrate(records, target, Links.load([F / "simple_links.nt"]), rules=load_rules(F / "simple_rules.yaml"))


def test_records_reader_converts_freebase_cells(records, tmp_path):
    t = records.items[0].metadata["triple"]
    assert t == {"subject": FB + "m.05_xgn", "predicate": FB + "location.location.containedby", "object": FB + "m.0ydpd"}
    assert records.items[0].question() == "which city is mccormick field in?"
    bad = tmp_path / "bad.txt"
    bad.write_text("www.freebase.com/m/a\twww.freebase.com/p/q\twww.freebase.com/m/b\tq?\nnot an iri\tp\to\tq\n")
    ds = read_triples(bad)
    assert len(ds) == 1 and "line 2" in str(ds.problems[0]) and "expected an IRI" in str(ds.problems[0])


def test_forward_one_hop(initial):
    r = by_id(initial)["1"]
    assert r["category"] == "one-hop"
    assert r["mapping"]["path"] == f"<{DBO}location>" and r["mapping"]["direction"] == "forward"
    assert r["entities"]["topic"] == {"source": FB + "m.05_xgn", "target": DBR + "McCormick_Field", "how": "link"}
    assert r["agreement"] == "exact"


def test_backward_one_hop(initial):
    r = by_id(initial)["2"]
    assert r["category"] == "one-hop" and r["mapping"]["direction"] == "backward"
    assert r["mapping"]["path"] == f"^<{DBO}birthPlace>"
    # two people were born there: the answer entity is among them (a superset: not verified,
    # so written apart from the migrated dataset)
    assert r["agreement"] == "superset" and r["f1"] == pytest.approx(2 / 3)
    assert r["kept"] and r["output"] == "unverified" and r["verified"] is False
    # the link for the answer was written target-first (owl:sameAs either direction)
    assert r["entities"]["answer"]["target"] == DBR + "Ana_Lopez"


def test_disambiguation_forward_and_backward(initial):
    r = by_id(initial)
    assert r["3"]["category"] == "disambiguation" and r["3"]["mapping"]["direction"] == "forward"
    assert r["3"]["mapping"]["topic"] == DBR + "Jack_Carr_(footballer)"
    assert r["3"]["mapping"]["compressed"] == "topic" and r["3"]["mapping"]["via"] == DBR + "Jack_Carr"
    assert r["3"]["agreement"] == "exact"
    assert r["4"]["category"] == "disambiguation" and r["4"]["mapping"]["direction"] == "backward"
    assert r["4"]["mapping"]["compressed"] == "answer" and r["4"]["mapping"]["via"] == DBR + "QBS"
    assert r["4"]["agreement"] == "exact"  # the compressed answer QBS_(band) is what the query returns


def test_redirection_forward_and_backward(initial):
    r = by_id(initial)
    assert r["5"]["category"] == "redirection" and r["5"]["mapping"]["direction"] == "forward"
    assert r["5"]["mapping"]["topic"] == DBR + "Douglas_R._Hofstadter"
    assert r["6"]["category"] == "redirection" and r["6"]["mapping"]["direction"] == "backward"
    assert r["6"]["mapping"]["topic"] == DBR + "Defensive_midfielder"
    assert r["5"]["agreement"] == r["6"]["agreement"] == "exact"


def test_complex_two_hop_path(initial):
    r = by_id(initial)["7"]
    assert r["category"] == "complex"
    assert r["mapping"]["path"] == f"<{DBO}commander>/<{DBO}militaryBranch>"
    assert r["agreement"] == "exact"


def test_entity_mapping_failures_are_categorised(initial):
    r = by_id(initial)
    assert r["8"]["category"] == "only-topic"  # the song has no link
    assert r["13"]["category"] == "neither"
    assert r["14"]["category"] == "only-answer"
    assert r["14"]["entities"]["topic"]["how"] == "unmapped"
    assert "absent from the target KG" in r["14"]["entities"]["topic"]["note"]
    assert r["16"]["category"] == "only-topic"
    assert not any(r[i]["kept"] for i in ("8", "13", "14", "15", "16"))


def test_table2_shape_and_counts(initial):
    t = initial.tables["Table 2"]
    rows = {row[1]: row[2:] for row in t.rows}
    assert rows["One hop"] == [4, 2, 6]
    assert rows["Two hop: disambiguation"] == [1, 1, 2]
    assert rows["Two hop: redirection"] == [1, 1, 2]
    assert rows["Two hop: complex + missing"] == ["-", "-", 1]
    assert rows["Only answer entity mapped"][-1] == 2 and rows["Only topic entity mapped"][-1] == 2
    assert rows["Both not mapped"][-1] == 1 and rows["Total"][-1] == 16


def test_proposed_rules_with_support_and_type_constraint(initial):
    rules = {r.source: r for r in initial.proposed}
    nat = rules[FB + "people.person.nationality"]
    assert nat.targets == (DBO + "nationality",) and nat.direction == "forward" and nat.support == 3
    assert dict(nat.alternatives[0]) == {"path": f"<{DBO}deathPlace>", "support": 1}  # the drift, for review
    track = rules[FB + "music.artist.track"]
    assert track.targets == (DBO + "artist",) and track.direction == "backward"
    assert track.constraint == DBO + "Song" and track.constraint_on == "object"
    assert rules[FB + "location.location.people_born_here"].direction == "backward"


def test_rule_type_constraint_expands_topic_only_item(refined, target, records):
    r = by_id(refined)["8"]  # "What is a song by John Rutter?": only the topic maps (paper 4.4)
    assert r["kept"] and r["category"] == "only-topic" and r["agreement"] == "unverified"
    assert r["output"] == "unverified"  # no mapped answer to compare with: written apart
    item = next(it for it in refined.unverified if it.id == "8")
    assert {row[0] for row in item.answer.rows} == {IRI(DBR + "Gloria_(Rutter)")}  # not the album
    # the same rule without its constraint also returns the album
    loose = RuleSet([Rule(FB + "music.artist.track", (DBO + "artist",), "backward")])
    m = migrate(records, target, Links.load([F / "simple_links.nt"]), rules=loose)
    item = next(it for it in m.unverified if it.id == "8")
    assert {row[0] for row in item.answer.rows} == {IRI(DBR + "Gloria_(Rutter)"), IRI(DBR + "Requiem_(Rutter)")}


def test_rules_filter_semantic_drift_and_unruled_predicates(refined):
    r = by_id(refined)
    assert r["10"]["mapping"]["filtered"] == [f"<{DBO}deathPlace>"]
    assert not r["10"]["kept"] and r["10"]["agreement"] == "empty"
    assert not r["7"]["kept"] and r["7"]["reason"] == "no rule for the source predicate"
    assert r["3"]["kept"] and r["3"]["mapping"]["topic"] == DBR + "Jack_Carr_(footballer)"
    assert r["1"]["kept"] and r["1"]["agreement"] == "exact"


def test_table3_after_refinement(refined):
    rows = {row[1]: row[2:] for row in refined.tables["Table 3"].rows}
    assert rows["One hop"] == [3, 2, 5]
    assert rows["Two hop: disambiguation"][-1] == 2 and rows["Two hop: redirection"][-1] == 2
    assert rows["Two hop: complex + missing"][-1] == 0
    assert rows["Only topic entity mapped"][-1] == 2 and rows["Only answer entity mapped"][-1] == 0
    assert rows["Total kept"][-1] == 11


def _links_as_tsv(tmp_path: Path) -> Path:
    import pyoxigraph as ox

    lines = ["source\ttarget"]
    for i, q in enumerate(ox.parse(path=str(F / "simple_links.nt"))):
        a, b = q.subject.value, q.object.value
        lines.append(f"{a}\t{b}" if i % 2 else f"<{b}>\t<{a}>")
    p = tmp_path / "links.tsv"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_tsv_links_either_direction_give_the_same_mapping(initial, target, records, tmp_path):
    m = migrate(records, target, Links.load([_links_as_tsv(tmp_path)]))
    assert [(r["category"], r.get("mapping")) for r in m.records] == \
           [(r["category"], r.get("mapping")) for r in initial.records]


def test_links_stored_in_the_target_kg(records, tmp_path, initial):
    kgfile = tmp_path / "kg.ttl"
    kgfile.write_text((F / "simple_target.ttl").read_text() + "\n" + (F / "simple_links.nt").read_text())
    k = KG([kgfile], cache=False)
    m = migrate(records, k, Links.load(["target"]))
    k.close()
    got, want = by_id(m), by_id(initial)
    assert got["1"]["entities"]["topic"]["how"] == "target-link"
    # item 14's link target exists in this KG only as the object of its own sameAs triple
    assert {i: r["category"] for i, r in got.items() if i != "14"} == \
           {i: r["category"] for i, r in want.items() if i != "14"}


def test_label_fallback_is_marked(records, target):
    src = KG([F / "simple_source.ttl"], cache=False)
    m = migrate(records, target, Links.load([F / "simple_links.nt"]), source=src, options=MigrateOptions(label_fallback=True))
    r = by_id(m)["8"]
    assert r["entities"]["answer"] == {"source": FB + "m.gloria", "target": DBR + "Gloria_(Rutter)", "how": "label"}
    assert r["category"] == "one-hop" and r["mapping"]["direction"] == "backward"
    src.close()


def test_disambiguation_and_redirect_predicates_are_configurable(tmp_path):
    kg = tmp_path / "kg.ttl"
    kg.write_text("<http://x/A> <http://x/amb> <http://x/A1> . <http://x/A1> <http://x/p> <http://x/B> .\n"
                  "<http://x/C> <http://x/moved> <http://x/C1> . <http://x/C1> <http://x/p> <http://x/B> .\n")
    k = KG([kg], cache=False)
    pairs = [(IRI("http://x/A"), IRI("http://x/B")), (IRI("http://x/C"), IRI("http://x/B"))]
    custom = PathFinder(k, ("http://x/amb",), ("http://x/moved",)).find_many(pairs)
    assert [p.kind for p in custom] == ["disambiguation", "redirection"]
    assert custom[0].of_kind()[0].topic == "http://x/A1"
    default = PathFinder(k).find_many(pairs)
    assert [p.kind for p in default] == ["complex", "complex"]
    k.close()


def test_cli_writes_simpledbpediaqa_that_kgqa_loads_and_that_answers_on_the_target(tmp_path, target):
    from kgqa.cli import main

    out = tmp_path / "migrated.json"
    prop = tmp_path / "proposed.yaml"
    with pytest.raises(SystemExit) as e:
        main(["migrate", str(F / "simple_records.txt"), "--target-kg", str(F / "simple_target.ttl"),
              "--links", str(F / "simple_links.nt"), "--rules", str(F / "simple_rules.yaml"), "-q", "--no-cache",
              "--propose-rules", str(prop), "-o", str(out)])
    assert e.value.code == 0
    ds = load_dataset(out, "simpledbpediaqa")
    unverified = [x["id"] for x in json.loads((tmp_path / "migrated.json.unverified.json").read_text())["items"]]
    assert sorted(ds.ids + unverified, key=int) == ["1", "2", "3", "4", "5", "6", "8", "9", "11", "12", "16"]
    recs = [json.loads(x) for x in (tmp_path / "migrated.json.records.jsonl").read_text().splitlines()]
    assert len(recs) == 16
    assert sorted(ds.ids) == sorted(r["id"] for r in recs if r["verified"] and r["agreement"] == "exact")
    report = json.loads((tmp_path / "migrated.json.report.json").read_text())
    assert report["summary"]["migrated"] == len(ds.ids) and report["tables"][0]["title"].startswith("Table 2")
    assert sum(report["summary"]["unverified"].values()) == len(unverified)
    assert load_rules(prop).for_predicate(FB + "music.artist.track")[0].constraint == DBO + "Song"
    for it in ds.items:  # the loader's query gives what the migration found
        mig = next(x for x in recs if x["id"] == it.id)
        o = target.run_gold(it.sparql)
        got = {c.value for row in o.answer.rows for c in row}
        assert got == {c.value for c in _answers(tmp_path, it.id)}, (it.id, mig)


def _answers(tmp_path, qid):
    recs = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "migrated.json.records.jsonl").read_text().splitlines()}
    k = KG([F / "simple_target.ttl"], cache=False)
    o = k.run_gold(recs[qid]["query"])
    k.close()
    return [c for row in o.answer.rows for c in row]


def test_bad_rules_file_names_the_rule(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text("rules:\n  - source: http://x/p\n    targets: [http://x/q]\n    direction: sideways\n")
    with pytest.raises(InputError, match="rule 1: 'direction' must be forward or backward"):
        load_rules(p)


def test_same_inputs_give_the_same_bytes(tmp_path):
    from kgqa.cli import main

    outs = []
    for n in (1, 2):
        out = tmp_path / f"m{n}.json"
        with pytest.raises(SystemExit):
            main(["migrate", str(F / "simple_records.txt"), "--target-kg", str(F / "simple_target.ttl"),
                  "--links", str(F / "simple_links.nt"), "-q", "--no-cache", "--format", "qald",
                  "--propose-rules", str(tmp_path / f"r{n}.yaml"), "-o", str(out)])
        outs.append([(tmp_path / f"m{n}.json").read_bytes(), (tmp_path / f"m{n}.json.records.jsonl").read_bytes(),
                     (tmp_path / f"r{n}.yaml").read_bytes(), (tmp_path / f"m{n}.json.unverified.json").read_bytes()])
    assert outs[0][:3] == outs[1][:3]
    assert outs[0][3].replace(b"m1.json", b"") == outs[1][3].replace(b"m2.json", b"")
    doc = json.loads(outs[0][0])
    unverified = json.loads(outs[0][3])["items"]
    assert len(doc["questions"]) + len(unverified) == 11  # the complex item keeps its two-hop path in QALD JSON
    q7 = next(q for q in doc["questions"] if q["id"] == "7")
    assert "<http://dbpedia.org/ontology/commander>/<http://dbpedia.org/ontology/militaryBranch>" in q7["query"]["sparql"]


def test_sparql_item_without_a_query_is_reported(target, tmp_path):
    from kgqa.model import Dataset, Item

    ds = Dataset("d", [Item("a", {"en": "q"}, sparql=f"SELECT ?x WHERE {{ <{DBR}McCormick_Field> <{DBO}location> ?x }}"),
                       Item("b", {"en": "no query"})])
    m = migrate(ds, target, Links.load([F / "simple_links.nt"]))
    r = by_id(m)
    assert r["b"]["category"] == "failed" and r["b"]["reason"] == "the item has no gold SPARQL query"
    assert r["a"]["category"] == "unverified"  # no stored answer, no source KG: nothing to compare with


_seg = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=8)


@settings(max_examples=100, deadline=None)
@given(st.lists(_seg, min_size=1, max_size=4), st.sampled_from(["", "http://", "https://"]))
def test_freebase_cells_become_rdf_freebase_iris(parts, scheme):
    from kgqa.make.migrate.records import to_iri

    assert to_iri(f"{scheme}www.freebase.com/" + "/".join(parts)) == FB + ".".join(parts)
    assert to_iri("<http://x.org/" + "/".join(parts) + ">") == "http://x.org/" + "/".join(parts)


def test_rule_query_from_a_redirect_or_disambiguation_topic(target, tmp_path):
    rec = tmp_path / "r.txt"
    rec.write_text("www.freebase.com/m/hofstadter\twww.freebase.com/people/person/nationality\twww.freebase.com/m/x1\tq1\n"
                   "www.freebase.com/m/jackcarr\twww.freebase.com/sports/pro_athlete/position\twww.freebase.com/m/x2\tq2\n")
    m = migrate(read_triples(rec), target, Links.load([F / "simple_links.nt"]), rules=load_rules(F / "simple_rules.yaml"))
    r = by_id(m)
    assert r["1"]["category"] == r["2"]["category"] == "only-topic"
    assert r["1"]["mapping"]["topic"] == DBR + "Douglas_R._Hofstadter" and r["1"]["mapping"]["compressed"] == "redirection"
    assert r["2"]["mapping"]["topic"] == DBR + "Jack_Carr_(footballer)" and r["2"]["mapping"]["compressed"] == "disambiguation"
    assert r["1"]["kept"] and r["2"]["kept"]


def test_target_behind_a_sparql_endpoint_gives_the_same_migration(initial, records):
    import pyoxigraph as ox

    from faultserver import FaultServer, oxigraph_handler

    store = ox.Store()
    store.load(path=str(F / "simple_target.ttl"), format=ox.RdfFormat.TURTLE)
    with FaultServer(oxigraph_handler(store)) as server:
        k = KG(server.url(), cache=False)
        m = migrate(records, k, Links.load([F / "simple_links.nt"]))
        k.close()
    assert [(r["category"], r.get("mapping"), r.get("agreement")) for r in m.records] == \
           [(r["category"], r.get("mapping"), r.get("agreement")) for r in initial.records]
    assert m.signature.startswith("kgqa-migrate|triples|target:sparql-endpoint")


def test_simpledbpediaqa_file_holds_two_hop_records(tmp_path):
    """The written SimpleDBpediaQA JSON holds every migrated item, two-hop mappings included
    (their PredicateList entry carries the path's steps), and says so on the console."""
    from kgqa.cli import main

    out = tmp_path / "initial.json"
    with pytest.raises(SystemExit) as e:
        main(["migrate", str(F / "simple_records.txt"), "--target-kg", str(F / "simple_target.ttl"),
              "--links", str(F / "simple_links.nt"), "-q", "--no-cache", "-o", str(out)])
    assert e.value.code == 0
    recs = [json.loads(x) for x in (tmp_path / "initial.json.records.jsonl").read_text().splitlines()]
    kept = [r["id"] for r in recs if r["output"] == "main"]
    doc = json.loads(out.read_text())
    assert [q["ID"] for q in doc["Questions"]] == kept and "7" in kept
    q7 = next(q for q in doc["Questions"] if q["ID"] == "7")
    assert q7["PredicateList"][0]["Path"] == [{"Predicate": DBO + "commander", "Direction": "forward"},
                                              {"Predicate": DBO + "militaryBranch", "Direction": "forward"}]
    assert len(load_dataset(out, "simpledbpediaqa")) == len(kept)
