"""``--save`` writes the per-question records a batch at a time (bounded memory at 10^6
questions): the pieces join to exactly the document ``to_json`` builds in one piece."""

from __future__ import annotations

import json

import pytest

import kgqa
from kgqa.demo import DATA
from kgqa.report import evaluation as report


@pytest.fixture(scope="module")
def evals(tmp_path_factory):
    runs = sorted((DATA / "runs").glob("*.json"))
    return kgqa.evaluate_many(DATA / "questions.json", runs, kg=DATA / "kg.ttl", cache=tmp_path_factory.mktemp("c") / "r.sqlite")


@pytest.mark.parametrize("batch", [1, 7, 5000])
def test_pieces_join_to_the_whole_document(evals, monkeypatch, batch):
    monkeypatch.setattr(report, "_BATCH", batch)
    for chosen in (evals[:1], evals):
        whole = report.to_json(chosen)
        assert "".join(report.to_json_chunks(chosen)) == whole
        runs = json.loads(whole)["runs"]  # one shape, one run too
        assert len(runs) == len(chosen) and all(len(r["questions"]) == 30 for r in runs)


def test_an_evaluation_without_questions(evals):
    from dataclasses import replace

    from kgqa.score.evaluate import QuestionList

    empty = replace(evals[0], questions=QuestionList.of([]) if hasattr(QuestionList, "of") else [])
    assert "".join(report.to_json_chunks([empty])) == report.to_json([empty])


def test_save_and_load_round_trip(evals, tmp_path):
    kgqa.save_evaluations(evals, tmp_path / "r.json")
    back = kgqa.load_evaluations(tmp_path / "r.json")
    assert [e.aggregate for e in back] == [e.aggregate for e in evals]
    assert (tmp_path / "r.json").read_text(encoding="utf-8") == report.to_json(evals) + "\n"
