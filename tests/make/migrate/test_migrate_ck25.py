"""kgqa migrate on a KG pair derived from CK25's KG by tools/derive_kg_pair.py: renamed IRIs
with owl:sameAs links (both directions), a flipped predicate, a two-hop fact, disambiguation and
redirect nodes, a merged predicate needing a type constraint, and lost facts. The 50 gold
queries are migrated; every question whose facts survive must return the mapped gold answer on
the target, the others are reported with their category."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import derive_kg_pair

from kgqa.execute.cache import ResultCache
from kgqa.load import load_dataset
from kgqa.make.migrate import KG, Links, load_rules, migrate, write_rules
from kgqa.make.migrate.agreement import compare
from kgqa.make.migrate.rewrite import constants

# Slow (CK25's whole KG derived, loaded three times and migrated twice: ~7 CPU-s). Quick twins
# on the demo pair (tests/make/migrate/test_migrate_demo_pair.py): test_paths_merges_and_entities_as_on_ck25
# (path kinds, merge constraints in the initial mapping, redirect and disambiguation),
# test_verification_rejects_the_drifting_one_hop_path (flip, two-hop, proposed constraints) and
# test_every_surviving_demo_answer_is_reproduced (accepted rules); the tie of ck25:50 is CK25's own.
pytestmark = [pytest.mark.xdist_group("migrate-ck25"), pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
PV = "http://ld.company.org/prod-vocab/"
T = "http://kg.example.org/ontology/"


@pytest.fixture(scope="module")
def pair(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("ck25pair")
    manifest = derive_kg_pair().derive(shared_data / "ck25" / "graphs" / "prod-inst.ttl", out, seed=0)
    return out, manifest, shared_data / "ck25" / "graphs" / "prod-inst.ttl"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return ResultCache(tmp_path_factory.mktemp("cache") / "results.sqlite")


@pytest.fixture(scope="module")
def kgs(pair, cache):
    out, _, src = pair
    s, t, surv = KG([src], cache=cache), KG([out / "target.nt"], cache=cache), KG([out / "surviving.nt"], cache=False)
    yield s, t, surv
    for k in (s, t, surv):
        k.close()


@pytest.fixture(scope="module")
def ck25():
    return load_dataset("ck25")


@pytest.fixture(scope="module")
def initial(ck25, kgs, pair):
    s, t, _ = kgs
    return migrate(ck25, t, Links.load([pair[0] / "links.nt"]), source=s)


@pytest.fixture(scope="module")
def accepted(initial, tmp_path_factory):
    """The proposed rules, accepted as they are (written and read back)."""
    p = tmp_path_factory.mktemp("rules") / "rules.yaml"
    write_rules(initial.proposed, p)
    return load_rules(p)


@pytest.fixture(scope="module")
def refined(ck25, kgs, pair, accepted):
    s, t, _ = kgs
    return migrate(ck25, t, Links.load([pair[0] / "links.nt"]), source=s, rules=accepted)


def expected_categories(ck25, kgs, manifest) -> dict[str, str]:
    """What must happen to each question, from the source KG minus the facts the target lost:
    a question using a predicate with no triple left has no mapping; one whose answer on the
    surviving facts equals its answer on the full source must be reproduced exactly; else it is
    empty or partial, as on the surviving facts."""
    s, _, surv = kgs
    dropped = set(manifest["spec"]["drop_predicates"])
    out = {}
    for it in ck25.items:
        if dropped & set(constants(it.sparql)[1]):
            out[it.id] = "unmapped-predicate"
            continue
        full, left = s.run_gold(it.sparql), surv.run_gold(it.sparql)
        out[it.id] = compare(full.answer, left).label
    return out


def test_derived_pair_has_every_kind_of_difference(pair):
    out, manifest, _ = pair
    c = manifest["counts"]
    assert c["source_triples"] == 26903 and c["intermediate_nodes"] == 53 and c["lost_triples"] == 913
    links = (out / "links.nt").read_text()
    assert "<http://ld.company.org/prod-instances/prod-cat-Sensor> <http://www.w3.org/2002/07/owl#sameAs> " \
           "<http://kg.example.org/resource/prod-cat-Sensor_(disambiguation)>" in links
    assert "<http://kg.example.org/resource/prod-cat-Transistor_(redirect)> <http://www.w3.org/2002/07/owl#sameAs> " \
           "<http://ld.company.org/prod-instances/prod-cat-Transistor>" in links  # the other direction


def test_predicate_mappings_found_by_path_enumeration(initial):
    ev = {e.source: e for e in initial.evidence}
    assert ev[PV + "hasManager"].best().to_json()["path"] == f"^<{T}manages>"
    assert ev[PV + "memberOf"].best().to_json()["path"] == f"<{T}assignment>/<{T}unit>"
    assert ev[PV + "memberOf"].best().kinds == {"complex": ev[PV + "memberOf"].best().support}
    assert ev[PV + "name"].best().to_json()["path"] == f"<{T}name>"
    assert ev[PV + "reliabilityIndex"].best() is None
    # sampled facts about renamed-by-redirect / by-disambiguation entities were compressed
    kinds = {k for e in initial.evidence for k in e.categories}
    assert {"one-hop", "complex", "disambiguation", "redirection", "not-mapped"} <= kinds


def test_proposed_type_constraints_for_the_merged_predicate(initial):
    rules = {r.source: r for r in initial.proposed}
    a = rules[PV + "areaOfExpertise"]
    assert (a.targets, a.constraint, a.constraint_on) == ((T + "category",), T + "Agent", "subject")
    h = rules[PV + "hasCategory"]
    assert (h.targets, h.constraint, h.constraint_on) == ((T + "category",), T + "Product", "subject")
    assert rules[PV + "price"].constraint is None  # not more general than the source predicate
    assert rules[PV + "hasManager"].direction == "backward"


def test_initial_mapping_applies_the_proposed_constraint_of_a_merge(initial):
    """Without rules, a merged target predicate is used with the type constraint its proposed
    rule has (both source predicates of the merge are constrained), so employees and products
    sharing the target predicate do not mix."""
    r = {x["id"]: x for x in initial.records}
    assert r["ck25:5"]["category"] == "exact"
    assert "FILTER EXISTS" in r["ck25:5"]["query"]
    preds = {p["source"]: p for x in initial.records for p in x["predicates"]}
    assert preds[PV + "areaOfExpertise"]["constraint"] == T + "Agent"
    assert preds[PV + "hasCategory"]["constraint"] == T + "Product"


def test_accepted_rules_reproduce_every_surviving_answer(refined, ck25, kgs, pair):
    want = expected_categories(ck25, kgs, pair[1])
    got = {r["id"]: r["category"] for r in refined.records}
    # ck25:50 ends in ORDER BY DESC(?count) LIMIT 1 over a tie (data README): which tied row
    # comes first is the engine's choice, so only the count is compared
    assert got.pop("ck25:50") in ("exact", "partial")
    want.pop("ck25:50")
    assert got == want
    assert sum(v == "exact" for v in got.values()) == 44
    assert {k for k, v in got.items() if v != "exact"} == {"ck25:2", "ck25:27", "ck25:38", "ck25:45", "ck25:46"}
    r = {x["id"]: x for x in refined.records}
    assert "reliabilityIndex has no mapping" in r["ck25:45"]["reason"]
    assert r["ck25:2"]["category"] == "empty"
    # a redirected and a disambiguated constant were resolved to the real node
    ents = {e["source"]: e for x in refined.records for e in x["entities"]}
    assert ents["http://ld.company.org/prod-instances/prod-cat-Transistor"]["how"] == "link+redirection"
    sensor = ents["http://ld.company.org/prod-instances/prod-cat-Sensor"]
    assert {k: sensor[k] for k in ("source", "target", "how")} == {
        "source": "http://ld.company.org/prod-instances/prod-cat-Sensor",
        "target": "http://kg.example.org/resource/prod-cat-Sensor", "how": "link+disambiguation"}  # not the decoy
    # chosen by evidence, and the evidence is recorded
    assert sensor["choice"].startswith("2 candidates; chose by evidence (http://kg.example.org/resource/prod-cat-Sensor: ")
    assert "FILTER EXISTS" in r["ck25:5"]["query"]


def test_tie_question_returns_a_row_with_the_same_count(refined, kgs, ck25):
    s, _, _ = kgs
    src = s.run_gold(ck25["ck25:50"].sparql).answer
    got = next(it for it in refined.dataset.items if it.id == "ck25:50").answer
    i, j = src.variables.index("count"), got.variables.index("count")
    assert len(got.rows) == 1 and got.rows[0][j].value == src.rows[0][i].value


# three whole CK25 migrations through the CLI: CI's slow run (as the whole file). The README's command
# keeps the CLI on the small pair (test_migrate_simple.py::test_cli_writes_simpledbpediaqa_that_kgqa_loads_...).
@pytest.mark.slow
def test_cli_prints_tables_writes_files_and_resumes_from_the_cache(pair, shared_data, tmp_path, monkeypatch, capsys):
    from kgqa.cli import main

    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    out, _, src = pair
    args = ["migrate", "ck25", "--target-kg", str(out / "target.nt"), "--source-kg", str(src),
            "--links", str(out / "links.nt"), "-q", "--propose-rules", str(tmp_path / "rules.yaml"),
            "-o", str(tmp_path / "ck25-migrated.json")]
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 0
    text = capsys.readouterr().out
    assert "Table 2: predicate evidence pairs by path kind" in text and "Table 3" in text
    assert "Predicate mappings" in text
    doc = json.loads((tmp_path / "ck25-migrated.json").read_text())
    unverified = json.loads((tmp_path / "ck25-migrated.json.unverified.json").read_text())["items"]
    # two questions have an unmappable predicate; those whose answers differ are written apart
    assert len(doc["questions"]) + len(unverified) == 48
    assert {x["id"] for x in unverified} <= {"ck25:2", "ck25:27", "ck25:38", "ck25:50"}
    with pytest.raises(SystemExit):
        main(args + ["--rules", str(tmp_path / "rules.yaml")])
    first = json.loads((tmp_path / "ck25-migrated.json.report.json").read_text())
    assert first["summary"]["agreement"]["exact"] in (44, 45)  # 45 when the tie of ck25:50 falls the same way
    with pytest.raises(SystemExit):
        main(args + ["--rules", str(tmp_path / "rules.yaml")])
    again = json.loads((tmp_path / "ck25-migrated.json.report.json").read_text())
    assert again["execution"]["target"]["executed"] == 0  # everything answered from the cache
    assert again["summary"] == first["summary"] and again["tables"] == first["tables"]
