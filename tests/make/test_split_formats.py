"""`kgqa split` writes the input's format (issue 12), also for formats without a full writer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kgqa.cli as cli
from kgqa.load import load_dataset
from kgqa.load.subset import write_subset
from kgqa.model import InputError

FIX = Path(__file__).parents[1] / "fixtures"


@pytest.mark.parametrize("rel,fmt", [
    ("lcquad/lcquad1-test.json", "lcquad"),
    ("webqsp/WebQSP.test.sample.json", "webqsp"),
    ("kqapro/train.sample.json", "kqapro"),
    ("mintaka/mintaka_test.sample.json", "mintaka"),
    ("graphquestions/graphquestions-sample.json", "graphquestions"),
    ("qald/qald5_sample.json", "qald-json"),
])
def test_split_writes_the_input_format(tmp_path, rel, fmt):
    cli._register()
    src = FIX / rel
    r = CliRunner().invoke(cli.app, ["split", str(src), "--by", "iid", "-o", str(tmp_path), "--ratios", "0.5,0.25,0.25"])
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "split.json").read_text())
    assert report["format"] == fmt and report["verified_on_files"]["ids_round_trip"] is True
    original = load_dataset(src)
    ids = []
    for part in ("train", "validation", "test"):
        path = tmp_path / report["files"][part]
        assert path.suffix == ".json"
        part_ds = load_dataset(path)  # detected again as the same format
        assert part_ds.format == fmt
        ids += part_ds.ids
        for it in part_ds:
            assert it.sparql == original[it.id].sparql and it.answer == original[it.id].answer
    assert sorted(ids) == sorted(original.ids)


def test_subset_of_an_unknown_id_is_an_error(tmp_path):
    ds = load_dataset(FIX / "lcquad" / "lcquad1-test.json")
    from kgqa.model import Dataset, Item

    bad = Dataset("x", [Item("no-such-id")], "lcquad", ds.source)
    with pytest.raises(InputError, match="no source record for id"):
        write_subset(bad, tmp_path / "x.json", None, "_id")


def test_degrade_ck25_writes_ids_evaluate_matches(shared_data, tmp_path):
    """`kgqa degrade ck25` writes per-language ids (ck25:1-en), so `kgqa evaluate ck25` finds them."""
    cli._register()
    out = tmp_path / "run.jsonl"
    r = CliRunner().invoke(cli.app, ["degrade", "ck25", "--transform", "T1", "--rate", "0.5", "-o", str(out)])
    assert r.exit_code == 0, r.output
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert ids[0] == "ck25:1-en" and len(ids) == 50
    r = CliRunner().invoke(cli.app, ["evaluate", "ck25", str(out), "-m", "QueryEM", "-f", "json"])
    assert r.exit_code == 0, r.output
    (doc,) = json.loads(r.output)["runs"]
    assert doc["missing_ids"] == [] and doc["unknown_ids"] == []
    assert doc["aggregate"]["QueryEM"] == 0.5  # 25 of 50 queries left intact
