"""``kgqa kg load|info``, ``kgqa cache stats|clear`` and ``kgqa audit`` through the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kgqa.cli import _register, app

runner = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def _commands():
    _register()


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_kg_load_store_and_info(shared_data, tmp_path):
    ttl = shared_data / "ck25" / "graphs" / "prod-inst.ttl"
    r = runner.invoke(app, ["kg", "load", str(ttl), "--store", str(tmp_path / "st"), "--quiet"])
    assert r.exit_code == 0, r.output
    assert "26903" in r.output and "sha256:e1a45b150872" in r.output.replace("\n", "")
    r = runner.invoke(app, ["kg", "info", str(tmp_path / "st")])
    assert r.exit_code == 0 and "26903" in r.output and "named graphs 0" in r.output
    r = runner.invoke(app, ["kg", "load", str(ttl), "--store", str(tmp_path / "st"), "--quiet"])
    assert r.exit_code != 0 and "not empty" in str(r.exception) + r.output
    r = runner.invoke(app, ["kg", "load", str(ttl), "--graph", "http://g/", "--quiet"])
    assert r.exit_code == 0 and "loaded into  <http://g/>" in r.output and "named graphs 1" in r.output


def test_audit_json_and_cache_commands_on_the_demo(tmp_path, cache_dir):
    """The quick twin of the CK25 test below: the demo's 30 questions, one gold answer with an
    extra IRI the KG does not give."""
    from kgqa.demo import DATA

    doc = json.loads((DATA / "questions.json").read_text(encoding="utf-8"))
    q7 = next(q for q in doc["questions"] if q["id"] == "7")
    q7["answers"][0]["results"]["bindings"].append({"uri": {"type": "uri", "value": "http://x/Nowhere"}})
    (tmp_path / "q.json").write_text(json.dumps(doc), encoding="utf-8")
    args = ["audit", str(tmp_path / "q.json"), "--kg", str(DATA / "kg.ttl")]
    r = runner.invoke(app, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["verdicts"] == {"ok": 29, "mismatch": 1}
    bad = [q for q in out["queries"] if q["verdict"] == "mismatch"]
    assert [q["id"] for q in bad] == ["7"] and bad[0]["missing"] == ["http://x/Nowhere"]
    r = runner.invoke(app, ["cache", "stats", "--json"])
    assert r.exit_code == 0
    stats = json.loads(r.output)
    assert stats["entries"] == 30 and stats["path"] == str(cache_dir / "results.sqlite")
    r = runner.invoke(app, args)
    assert r.exit_code == 0 and "mismatch: 1, ok: 29" in r.output and "http://x/Nowhere" in r.output
    r = runner.invoke(app, ["cache", "clear"])
    assert r.exit_code == 0 and "deleted 30" in r.output
    r = runner.invoke(app, ["cache", "stats", "--json"])
    assert json.loads(r.output)["entries"] == 0


@pytest.mark.slow  # 50 CK25 queries on its 1.4 MB KG; quick: test_audit_json_and_cache_commands_on_the_demo (the
# same commands) and tests/analyze/test_engine_dependence.py::test_audit_has_an_engine_dependence_column (this audit)
def test_audit_json_and_cache_commands(shared_data, cache_dir):
    ttl = str(shared_data / "ck25" / "graphs" / "prod-inst.ttl")
    r = runner.invoke(app, ["audit", "ck25", "--kg", ttl, "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["verdicts"] == {"ok": 47, "mismatch": 3}
    bad = [q for q in doc["queries"] if q["verdict"] == "mismatch"]
    assert [q["id"] for q in bad] == ["ck25:25", "ck25:41", "ck25:50"]
    assert bad[2]["missing"] == ["http://ld.company.org/prod-instances/dept-22183"]
    r = runner.invoke(app, ["cache", "stats", "--json"])
    assert r.exit_code == 0
    stats = json.loads(r.output)
    assert stats["entries"] == 50 and stats["path"] == str(cache_dir / "results.sqlite")
    r = runner.invoke(app, ["audit", "ck25", "--kg", ttl])
    assert r.exit_code == 0 and "mismatch: 3, ok: 47" in r.output and "ck25:50" in r.output
    r = runner.invoke(app, ["cache", "clear"])
    assert r.exit_code == 0 and "deleted 50" in r.output
    r = runner.invoke(app, ["cache", "stats", "--json"])
    assert json.loads(r.output)["entries"] == 0


def test_kg_info_of_an_endpoint_says_what_it_reads_without_the_token(capsys):
    from conftest import run_cli

    code, out, err = run_cli(capsys, "kg", "info", "https://example.org/sparql?api_key=SECRET123456")
    assert code == 2, out + err
    assert "not a SPARQL endpoint" in err and "api_key=***" in err and "SECRET123456" not in out + err
