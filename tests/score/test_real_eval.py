"""Acceptance on real data: self-evaluation and the official Text2SPARQL'25 CK25 scores."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from kgqa.cli import app, _register
import kgqa
from kgqa.score import profiles

ALL = profiles.names()


@pytest.fixture(scope="module")
def cli():
    _register()
    return CliRunner()


@pytest.mark.parametrize("profile", ALL)
def test_qald9_test_against_itself_scores_one_everywhere(shared_data, profile):
    path = str(shared_data / "qald-9" / "qald-9-test-multilingual.json")
    (e,) = kgqa.evaluate_many(path, [path], profile=profile, run_format="qald-json", allow_gold_copy=True)
    assert len(e.questions) == 150
    assert e.outcomes == {"ok": 150}
    # ndcg is defined only on questions flagged RESULT_ORDER_MATTERS, which QALD has none of
    undefined = {"ndcg"} if profile == "text2sparql" else set()
    assert all(math.isnan(e.aggregate[k]) for k in undefined), e.aggregate
    defined = {k: v for k, v in e.aggregate.items() if k not in undefined}
    assert defined and all(v == 1.0 for v in defined.values()), e.aggregate


@pytest.mark.parametrize("team", ["WSE"])
def test_text2sparql_profile_reproduces_official_ck25_scores(shared_data, team, cli):
    run = shared_data / "ck25-runs" / team / "ck25_system_result_set.json"
    res = cli.invoke(app, ["evaluate", "ck25", str(run), "--profile", "text2sparql", "--format", "json"])
    assert res.exit_code == 0, res.output
    (doc,) = json.loads(res.output)["runs"]
    official = json.loads((shared_data / "ck25-runs" / team / "ck25_eval.json").read_text())
    assert [q["id"] for q in doc["questions"]] == [f"ck25:{i}-en" for i in range(1, 51)]
    for q in doc["questions"]:
        for m in ("set_P", "set_recall", "set_F"):
            assert q["scores"][m] == pytest.approx(official[q["id"]][m], abs=1e-12), (q["id"], m)
    for m in ("set_P", "set_recall", "set_F"):
        assert doc["aggregate"][m] == pytest.approx(official["average"][m], abs=1e-15)
    # ndcg on the questions flagged RESULT_ORDER_MATTERS only, and the client's set_F_ndcg
    assert {q["id"] for q in doc["questions"] if "ndcg" in q["scores"]} == {k for k, v in official.items() if "ndcg" in v and k != "average"}
    for q in doc["questions"]:
        if "ndcg" in official[q["id"]]:
            assert q["scores"]["ndcg"] == pytest.approx(official[q["id"]]["ndcg"], abs=1e-12), q["id"]
    for m in ("ndcg", "set_F_ndcg"):
        assert doc["aggregate"][m] == pytest.approx(official["average"][m], abs=1e-15), m
    assert doc["signature"].startswith("kgqa:") and "profile:text2sparql" in doc["signature"]
    assert doc["skipped"] == [] and doc["missing_ids"] == []
