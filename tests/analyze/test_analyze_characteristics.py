"""Characteristics, breakdowns and the paraphrase table on a synthetic GraphQuestions dataset
(through the GraphQuestions loaders and the evaluator); every expected number is computed by
hand from the per-question F1 in analysis_synthetic.F1."""

from __future__ import annotations

import pytest
from analysis_synthetic import F1, evaluation

from kgqa.analyze.breakdown import breakdown_table
from kgqa.analyze.characteristics import (
    answer_characteristics, headline_measure, parse_bins, query_characteristics, values_of,
)
from kgqa.analyze.paraphrase import paraphrase_table


@pytest.fixture(scope="module")
def ev(tmp_path_factory):
    return evaluation(tmp_path_factory.mktemp("gq"))


def test_per_question_f1_is_the_hand_computed_one(ev):
    assert headline_measure([ev]) == "Average F1"
    got = {q.id: q.scores["Average F1"] for q in ev.questions}
    assert got == pytest.approx(F1)


def _cells(bt, run="system"):
    return {k: (c.n, c.mean, c.low, c.high) for k, c in bt.cells[run].items()}


def test_breakdown_by_metadata_num_edge(ev):
    bt = breakdown_table([ev], "num_edge", resamples=2000)
    assert bt.keys == [1, 2]
    c = _cells(bt)
    # edges 1: 1, .5, 0, 0, 1, 1 -> 3.5 / 6; edges 2: 2/3, 1, .5, 0 -> (13/6) / 4
    assert c[1][0] == 6 and c[1][1] == pytest.approx(3.5 / 6)
    assert c[2][0] == 4 and c[2][1] == pytest.approx(13 / 24)
    for n, mean, low, high in c.values():
        assert low <= mean <= high


def test_breakdown_by_dataset_function_category(ev):
    bt = breakdown_table([ev], "groups.function", resamples=500)
    c = _cells(bt)
    assert list(c) == ["comparative", "count", "none", "superlative"]
    assert c["none"][:2] == (3, pytest.approx(0.5))
    assert c["count"][:2] == (2, pytest.approx(0.5))
    assert c["superlative"][:2] == (4, pytest.approx(13 / 24))
    # one question: the interval is degenerate
    assert c["comparative"] == (1, 1.0, 1.0, 1.0)
    # the values derived from the gold SPARQL are 'query_function' (issue 12: bare 'function'
    # reads the dataset's own field when the questions have one)
    derived = _cells(breakdown_table([ev], "query_function", resamples=500))
    assert {k: v[0] for k, v in derived.items()} == {"count": 2, "none": 4, "superlative": 4}
    assert _cells(breakdown_table([ev], "function", resamples=500)) == c


def test_num_edges_reads_the_dataset_field_when_present(ev):
    own = _cells(breakdown_table([ev], "num_edges", resamples=2000))
    assert own == _cells(breakdown_table([ev], "num_edge", resamples=2000))
    ne, derived = values_of("num_edges", ev), values_of("query_num_edges", ev)
    assert ne == values_of("metadata.num_edge", ev)
    assert derived == values_of("triples", ev)
    # the fixture's num_edge equals each query's triple count: make one differ, and only the
    # dataset's own field may follow it
    import copy

    ev2 = copy.deepcopy(ev)
    q = ev2.questions[0]
    q.details = {**q.details, "metadata": {**q.details.get("metadata", {}), "num_edge": 99}}
    assert values_of("num_edges", ev2)[q.id] == 99
    assert values_of("query_num_edges", ev2)[q.id] == derived[q.id] != 99


def test_commonness_default_and_custom_bins(ev):
    c = _cells(breakdown_table([ev], "commonness", resamples=500))
    assert [(k, v[0]) for k, v in c.items()] == [("[-40, -30)", 3), ("[-30, -20)", 2), ("[-20, -10)", 4), ("[-10, 0]", 1)]
    c2 = _cells(breakdown_table([ev], "commonness", bins=parse_bins(["commonness=-40,-20,0"]), resamples=500))
    assert c2["[-40, -20)"][:2] == (5, pytest.approx(2.5 / 5))
    assert c2["[-20, 0]"][:2] == (5, pytest.approx((2 / 3 + 1 + 0.5 + 0 + 1) / 5))


def test_derived_answer_and_query_characteristics(ev):
    card = values_of("answer_cardinality", ev)
    assert card["1000000"] == "1" and card["3000000"] == ">1"
    assert values_of("triples", ev)["3000000"] == 2
    assert values_of("paraphrase", ev)["3000200"] == "3"
    c = _cells(breakdown_table([ev], "answer_cardinality", resamples=500))
    assert c["1"][:2] == (6, pytest.approx(3.5 / 6))
    assert c[">1"][:2] == (4, pytest.approx(13 / 24))


def test_paraphrase_table_rank_means_and_ratios(ev):
    pt = paraphrase_table([ev])
    assert pt.group_key == "paraphrase"
    curve = pt.curves["system"]
    # groups sorted best first: [1, .5, 0], [1, 0], [1, 2/3, .5, 0], [1]
    assert [p.n_groups for p in curve] == [4, 3, 2, 1]
    assert [p.mean for p in curve] == pytest.approx([1.0, (0.5 + 0 + 2 / 3) / 3, (0 + 0.5) / 2, 0.0])
    assert [p.ratio_to_rank1 for p in curve] == pytest.approx([1.0, 7 / 18, 0.25, 0.0])
    assert pt.ungrouped == {"system": 0}


def test_unknown_characteristic_names_the_known_ones(ev):
    with pytest.raises(ValueError, match="unknown characteristic 'nope'.*answer_cardinality"):
        values_of("nope", ev)


@pytest.mark.parametrize("spec", ["commonness", "x=", "x=0", "x=a,b"])
def test_bad_bins(spec):
    with pytest.raises(ValueError, match="--bins"):
        parse_bins([spec])


def test_query_and_answer_characteristics_direct():
    q = query_characteristics("ASK { <http://x/a> <http://x/p> ?o . OPTIONAL { ?o <http://x/q> ?z } }")
    assert q["form"] == "ASK" and q["triples"] == 2 and q["optional"] is True and q["aggregation"] is False
    assert query_characteristics(None)["triples"] is None
    assert answer_characteristics({"head": {}, "boolean": True}) == {
        "num_answers": 1, "answer_cardinality": "boolean", "answer_kind": "boolean", "answer_type": "boolean"}
    rows = {"head": {"vars": ["x"]}, "results": {"bindings": [
        {"x": {"type": "literal", "value": "3", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}},
        {"x": {"type": "uri", "value": "http://x/a"}}, {"x": {"type": "uri", "value": "http://x/a"}}]}}
    a = answer_characteristics(rows, "resource")
    assert a == {"num_answers": 2, "answer_cardinality": ">1", "answer_kind": "mixed", "answer_type": "resource"}
    empty = {"head": {"vars": ["x"]}, "results": {"bindings": []}}
    assert answer_characteristics(empty)["answer_cardinality"] == "0"


def test_evaluate_by_paraphrase_prints_the_rank_curve(tmp_path):
    """`kgqa evaluate --by paraphrase` prints the paraphrase rank curve, not one row per group."""
    from pathlib import Path

    from typer.testing import CliRunner

    import kgqa.cli as cli
    from analysis_synthetic import write

    cli._register()
    ds, res = write(tmp_path)
    r = CliRunner().invoke(cli.app, ["evaluate", str(ds), str(res), "-p", "graphquestions", "--by", "paraphrase"])
    assert r.exit_code == 0, r.output
    assert "Paraphrase robustness" in r.output and "ratio to rank 1" in r.output
    assert "by paraphrase" not in r.output
    assert Path(ds).exists()
