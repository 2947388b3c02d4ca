"""Issue 37: migration never writes a wrong gold answer. KG pairs derived from real KGs (three
of ``shared/data/kgs`` and CK25) by ``tools/derive_kg_pair.py``: renamed namespaces, two
relations merged into one (separable by a type), an inverted relation, a relation split over an
extra node, bare twins and a unit change. Questions generated on the source (``kgqa
generate``) and CK25's 50 official ones are migrated; per item against the truth (the
transformation is known): the migrated dataset holds only exact items, at least 95% of the
keepable items are kept, and the headline's counts equal the files'."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import derive_kg_pair
from migrate_pairs import PV, ck25_spec, spec_for, world_spec
from migrate_truth import same, true_answer

from kgqa.load import load_dataset
from kgqa.make.migrate import KG, MigrateOptions, migrate_files

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("migrate-verified")]

KGS = {"iaml-genres": "kgs/iaml-genres/genre-iaml.ttl", "gocam-nod2": "kgs/gocam-nod2/MGI_MGI_2429397.ttl",
       "ammo-occupations": "kgs/ammo-occupations/ammo.ttl", "autry-museum": "kgs/autry-museum/consolidated_data.n3",
       "ck25": "ck25/graphs/prod-inst.ttl", "world": None}
REPO = Path(__file__).resolve().parents[3]


def _migrate(src: Path, pair: Path, dataset: str, out: Path):
    return migrate_files(dataset, str(pair / "target.nt"), [str(pair / "links.nt")], out, source_kg=str(src),
                         options=MigrateOptions(progress=False), cache=False)


#: ck25:50 ends in ORDER BY DESC(?count) LIMIT 1 over a tie (the data README): which tied row
#: comes first is the engine's choice, so its row is not compared (test_migrate_ck25 checks the count)
TIES = {"ck25:50"}


def _check_against_truth(w, spec: dict, src: Path, ds) -> tuple[int, int]:
    """Every item of the written dataset has the true answers; returns (kept, keepable)."""
    written = {it.id: it for it in load_dataset(w.files["dataset"], w.dataset_format).items}
    s = KG([src], cache=False)
    keepable = kept = 0
    try:
        for it in ds.items:
            o = s.run_gold(it.sparql)
            if o.answer is None:
                continue
            keepable += 1
            if it.id in written:
                kept += 1
                assert it.id in TIES or same(written[it.id].answer, true_answer(spec, it.sparql, o.answer)), it.id
    finally:
        s.close()
    return kept, keepable


def _check_counts(w) -> None:
    """The summary's counts are the files': the dataset, the unverified file, the records."""
    from kgqa.cli.migrate import headline

    s = w.migration.summary()
    records = [json.loads(x) for x in Path(w.files["records"]).read_text().splitlines()]
    assert s["migrated"] == w.written == sum(r["output"] == "main" for r in records)
    unv = json.loads(Path(w.files["unverified"]).read_text())["items"] if "unverified" in w.files else []
    assert sum(s["unverified"].values()) == len(unv) == w.unverified
    assert {k: sum(x["category"] == k for x in unv) for k in s["unverified"]} == s["unverified"]
    assert sum(s["not_migrated"].values()) == sum(not r["kept"] for r in records)
    assert s["migrated"] + len(unv) + sum(s["not_migrated"].values()) == s["items"] == len(records)
    assert headline(w)[0].startswith(f"{s['migrated']} migrated (exact) of {s['items']} items")


@pytest.mark.parametrize("name", sorted(KGS))
def test_generated_questions_on_real_kg_pairs(name, shared_data, tmp_path):
    from kgqa.make.generate import generate
    from kgqa.make.generate.pipeline import GenerateOptions

    src = REPO / "kgqa" / "demo" / "data" / "kg.ttl" if name == "world" else shared_data / KGS[name]
    spec = {"ck25": lambda: ck25_spec(derive_kg_pair()), "world": lambda: world_spec(REPO)}.get(
        name, lambda: spec_for(src))()
    manifest = derive_kg_pair().derive(src, tmp_path / "pair", spec, seed=0)
    assert manifest["counts"]["twins"] >= 3 and manifest["counts"]["intermediate_nodes"] > 0
    # every transformation but a separable merge, which iaml-genres has none for
    assert {"flip", "two_hop", "twins", "rename"} <= set(spec) and ("merge" in spec or name == "iaml-genres")
    res = generate([str(src)], GenerateOptions(n=15, seed=0), output=tmp_path / "q.json")
    if name == "gocam-nod2":  # it names nothing: no question is readable, and the summary says why
        assert res.summary["graph_queries"] == 0 and res.summary["unreadable_reasons"], res.summary
        return
    ds = load_dataset(str(tmp_path / "q.json"))
    w = _migrate(src, tmp_path / "pair", str(tmp_path / "q.json"), tmp_path / "out.json")
    kept, keepable = _check_against_truth(w, spec, src, ds)
    # iaml-genres is a flat vocabulary: the generator words 2 of its questions and refuses the rest
    # as unreadable (docs/guide/generation-reading.md); every other pair gives 15
    assert keepable >= (2 if name == "iaml-genres" else 5) and kept >= 0.95 * keepable, (name, kept, keepable)
    _check_counts(w)


@pytest.fixture(scope="module")
def ck25_pair(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("ck25merge")
    src = shared_data / "ck25" / "graphs" / "prod-inst.ttl"
    spec = ck25_spec(derive_kg_pair())
    derive_kg_pair().derive(src, out, spec, seed=0)
    return src, out, spec


def test_ck25_official_questions_with_supplier_and_manager_merged(ck25_pair, tmp_path):
    src, pair, spec = ck25_pair
    w = _migrate(src, pair, "ck25", tmp_path / "ck25.json")
    recs = {r["id"]: r for r in w.migration.records}
    for i in ("ck25:20", "ck25:40", "ck25:43"):
        assert recs[i]["output"] == "main" and recs[i]["agreement"] == "exact" \
            or recs[i]["output"] == "unverified", recs[i]
    for i in ("ck25:21", "ck25:25", "ck25:31"):  # grams -> kilograms
        assert recs[i]["output"] == "main" and recs[i]["rescaled"], recs[i]
    manager = next(p for r in recs.values() for p in r["predicates"] if p["source"] == PV + "hasProductManager")
    assert manager["constraint_on"] == "object" and manager["precision"] == 1.0  # not "subject is Hardware"
    kept, keepable = _check_against_truth(w, spec, src, load_dataset("ck25"))
    assert kept >= 44
    _check_counts(w)


def test_keep_unverified_flags_items_in_the_dataset(ck25_pair, tmp_path):
    src, pair, _ = ck25_pair
    w = migrate_files("ck25", str(pair / "target.nt"), [str(pair / "links.nt")], tmp_path / "all.json",
                      source_kg=str(src), options=MigrateOptions(progress=False, keep_unverified=True), cache=False)
    assert "unverified" not in w.files
    flags = {it.id: it.metadata["verified"] for it in w.migration.dataset.items}
    assert sum(not v for v in flags.values()) == sum(w.migration.summary()["unverified"].values()) > 0
    assert w.written == len(flags)


def test_every_line_fits_80_columns(ck25_pair, tmp_path):
    from ptyrun import run_pty

    src, pair, _ = ck25_pair
    code, text = run_pty(["migrate", "ck25", "--target-kg", str(pair / "target.nt"), "--source-kg", str(src),
                          "--links", str(pair / "links.nt"), "--no-cache", "-o", str(tmp_path / "o.json")], cols=80)
    assert code == 0, text[-3000:]
    long = [ln for ln in text.splitlines() if len(ln) > 80]
    assert not long, long
    assert re.search(r"^\d+ migrated \(exact\) of 50 items", text, re.M)
    assert "http://ld.company.org/prod-vocab/hasProductManager" not in text.split("prefix ")[0]
    code, helptext = run_pty(["migrate", "--help"], cols=80)
    for opt in ("--target-graph", "--source-graph", "--keep-unverified", "--min-precision", "--seed"):
        block = helptext.split(opt, 1)[1].split("--", 1)[0]
        assert re.search(r"[a-z]{3,}", block), opt
    assert all(len(ln) <= 80 for ln in helptext.splitlines())
