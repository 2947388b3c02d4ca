"""Per-question records and kgqa.to_dataframe."""

from __future__ import annotations

import builtins
import json

import pytest
from analysis_synthetic import F1, evaluation

import kgqa
from kgqa.report.dataframe import records


def test_records_and_dataframe(tmp_path):
    pd = pytest.importorskip("pandas")
    e = evaluation(tmp_path, "sys")
    recs = records(e)
    assert len(recs) == 10
    r0 = recs[0]
    assert list(r0)[:4] == ["run", "id", "outcome", "message"]
    assert r0["error"] in ("correct", "right_answer_wrong_reason", "wrong_answer")
    assert r0["groups.paraphrase"] == "1" and r0["metadata.num_edge"] == 1
    df = kgqa.to_dataframe([e, evaluation(tmp_path, "sys2")])
    assert isinstance(df, pd.DataFrame) and len(df) == 20
    one = df[df.run == "sys"].set_index("id")["Average F1"].to_dict()
    assert one == pytest.approx(F1)
    assert df.groupby("metadata.num_edge")["Average F1"].count().to_dict() == {1: 12, 2: 8}
    # from a saved file too
    p = tmp_path / "saved.json"
    p.write_text(json.dumps(e.to_json()))
    assert len(kgqa.to_dataframe(p)) == 10


def test_missing_pandas_message(tmp_path, monkeypatch):
    real = builtins.__import__

    def fake(name, *a, **k):
        if name == "pandas":
            raise ImportError("no pandas")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ImportError, match="pip install pandas"):
        kgqa.to_dataframe(evaluation(tmp_path, "x"))


def test_unknown_attribute():
    with pytest.raises(AttributeError):
        kgqa.no_such_thing  # noqa: B018
