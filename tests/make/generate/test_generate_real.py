"""`kgqa generate` on real KGs: CK25's corporate KG embedded (the issue's "Done when" at full
size: -n 200 --seed 1) and the same KG served by a real Virtuoso 7 (endpoint mode, the
session fixture of tests/virtuoso.py; skipped with the reason when Virtuoso is absent)."""

from __future__ import annotations

import json

import pytest

from generate_checks import check_all
from conftest import run_cli
from kgqa.execute.opener import open_engine
from virtuoso import CK25_GRAPH, virtuoso_ck25  # noqa: F401  (session fixture)




@pytest.fixture(scope="module")
def ck25_kg(shared_data):
    return shared_data / "ck25" / "graphs" / "prod-inst.ttl"


def _done_when(path, engine, n: int) -> dict:
    got = check_all(path, engine)
    assert len(got["items"]) == n
    assert got["function_class"] == {"none", "count", "superlative", "comparative"}
    assert {1, 2, 3} <= got["num_edges"]
    return got


@pytest.mark.slow
@pytest.mark.xdist_group("generate-ck25")
def test_ck25_200_questions_seed_1(ck25_kg, tmp_path, capsys):
    from kgqa.analyze.breakdown import breakdown_table
    from kgqa.api import evaluate_many as run_evaluations

    out = tmp_path / "ck25-gen.json"
    code, stdout, err = run_cli(capsys, "generate", "--kg", str(ck25_kg), "-n", "200", "--seed", "1", "-o", str(out),
                                "-f", "json")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["graph_queries"] == 200 and summary["redundant"] == 0
    engine = open_engine(ck25_kg)
    try:
        got = _done_when(out, engine, 200)
    finally:
        engine.close()
    assert got["reductions"] > 100 and got["solutions"] > 1000
    # scoring the dataset against itself gives 1.0; a degraded copy breaks down by the stored
    # characteristics
    [ev] = run_evaluations(str(out), [str(out)], allow_gold_copy=True)  # the gold answers themselves, on purpose
    assert ev.aggregate["F1"] == 1.0 and ev.aggregate["AnswerEM"] == 1.0
    run = tmp_path / "swap.jsonl"
    code, _, err = run_cli(capsys, "degrade", str(out), "-t", "swap", "--rate", "0.4", "--seed", "0", "-o", str(run))
    assert code == 0, err
    [dv] = run_evaluations(str(out), [str(run)], kg=str(ck25_kg))
    assert dv.aggregate["F1"] < 1.0
    fn = breakdown_table([dv], "groups.function")
    edges = breakdown_table([dv], "metadata.num_edges")
    assert set(fn.keys) == {"none", "count", "superlative", "comparative"}
    assert {1, 2, 3} <= set(edges.keys)
    # the breakdown counts questions (a graph query may give several: paraphrases), the summary graph queries
    by_edges = {k: c.n for k, c in edges.cells[dv.run].items()}
    assert set(by_edges) == {int(k) for k in summary["num_edges"]} and sum(by_edges.values()) == len(dv.questions)
    assert all(by_edges[int(k)] >= v for k, v in summary["num_edges"].items())
    assert min(c.mean for c in fn.cells[dv.run].values()) < 1.0


@pytest.mark.slow
@pytest.mark.virtuoso
@pytest.mark.xdist_group("virtuoso")
def test_generate_against_virtuoso_endpoint(virtuoso_ck25, tmp_path, capsys):
    url = virtuoso_ck25.sparql_url
    out = tmp_path / "vt-gen.json"
    code, stdout, err = run_cli(capsys, "generate", "--kg", url, "--graph", CK25_GRAPH, "-n", "80", "--seed", "1",
                                "-o", str(out), "-f", "json")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["graph_queries"] == 80
    engine = open_engine(url, CK25_GRAPH)
    try:
        got = _done_when(out, engine, 80)
    finally:
        engine.close()
    assert got["reductions"] > 10
    meta = json.loads(out.read_text())["dataset"]
    assert meta["kg"].startswith("sparql-endpoint")
    # the same seed on the same endpoint gives the same bytes
    again = tmp_path / "vt-gen2.json"
    code, _, err = run_cli(capsys, "generate", "--kg", url, "--graph", CK25_GRAPH, "-n", "80", "--seed", "1",
                           "-o", str(again), "-q")
    assert code == 0, err
    assert again.read_bytes() == out.read_bytes()


def test_schema_from_the_dbpedia_ontology(shared_data, tmp_path):
    """The DBpedia 2016-10 ontology (RDF/XML) as the schema of a small DBpedia-style KG:
    domains and ranges come from the ontology, counts from the KG, unused relations drop out."""
    from kgqa.make.generate import KGAccess, GenerateOptions, generate
    from kgqa.make.generate.schema import schema_from_ontology

    owl = shared_data / "dbpedia-ontology-2016-10" / "dbpedia_2016-10.owl"
    dbo, res = "http://dbpedia.org/ontology/", "http://example.org/r/"
    lines = []
    for i in range(6):
        city = f"<{res}City{i}>"
        lines.append(f"{city} a <{dbo}City>, <{dbo}Place> ; <{dbo}populationTotal> {1000 * (i + 1)} .")
        for j in range(3):
            p = f"<{res}P{i}_{j}>"
            lines.append(f"{p} a <{dbo}Person> ; <{dbo}birthPlace> {city} ; "
                         f"<{dbo}birthDate> \"19{50 + i + j}-01-0{j + 1}\"^^<http://www.w3.org/2001/XMLSchema#date> .")
    kg_file = tmp_path / "mini-dbpedia.ttl"
    kg_file.write_text("\n".join(lines) + "\n")
    with KGAccess.open(kg_file, workers=1) as kg:
        s = schema_from_ontology(owl, kg)
        assert set(s.relations) == {dbo + "birthPlace", dbo + "birthDate", dbo + "populationTotal"}
        assert s.relations[dbo + "birthPlace"].domain == {dbo + "Person": 18}
        assert s.relations[dbo + "birthPlace"].range == {dbo + "Place": 6}
        assert list(s.relations[dbo + "birthDate"].datatypes) == ["http://www.w3.org/2001/XMLSchema#date"]
        res_ = generate(kg, GenerateOptions(n=8, seed=1), ontology=owl)
    assert res_.summary["graph_queries"] == 8
    assert res_.dataset.metadata["schema"] == "ontology:dbpedia_2016-10.owl"
