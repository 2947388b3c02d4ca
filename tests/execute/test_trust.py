"""The one trust rule for gold queries (docs/reference/trust.md): ``ExecutionPolicy.trust_gold``,
passed by every caller — the audit, the evaluation (``kgqa evaluate --sandbox-gold``), the store (an
uploaded dataset's gold queries are sandboxed, a registry dataset's trusted)."""

from __future__ import annotations

import json

import pytest

from kgqa import api
from kgqa.load import registry
from kgqa.store import Store, runner

DEMO = registry.PACKAGE_DIR / "demo" / "data"
KG = str(DEMO / "kg.ttl")
#: refused by the sandbox (a Virtuoso network built-in; the embedded engine refuses it again on
#: its own, so the tests below look at what reached the engine)
VENDOR = 'SELECT ?uri WHERE { ?uri ?p ?o FILTER(<bif:http_get>("http://127.0.0.1:9/")) }'


@pytest.fixture
def demo_with_vendor_call(tmp_path, monkeypatch):
    """The demo dataset with question 1's gold query replaced by one the sandbox refuses."""
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    doc = json.loads((DEMO / "questions.json").read_text(encoding="utf-8"))
    doc["questions"][0]["query"]["sparql"] = VENDOR
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _row(rows, qid):
    return next(r for r in rows if r.id == qid)


class Recording:
    """An engine that remembers every query text it is sent."""

    def __init__(self, engine):
        self.engine, self.info, self.seen = engine, engine.info, []

    def execute_many(self, queries, timeout=30.0, max_rows=None, progress=None):
        self.seen += list(queries)
        return self.engine.execute_many(queries, timeout=timeout, max_rows=max_rows, progress=progress)

    def close(self):
        self.engine.close()


def test_audit_sandboxes_gold_queries_only_when_the_policy_says_so(demo_with_vendor_call):
    from kgqa.execute.audit import audit
    from kgqa.execute.embedded import EmbeddedEngine
    from kgqa.execute.executor import Executor

    ds = api.load_dataset(str(demo_with_vendor_call))
    with Executor(Recording(EmbeddedEngine.from_files([KG])), policy=api.ExecutionPolicy(trust_gold=False),
                  owns=True) as ex:
        strict = audit(ds, ex)
        assert VENDOR not in ex.engine.seen and len(ex.engine.seen) == len(ds) - 1  # refused before the engine
    with Executor(Recording(EmbeddedEngine.from_files([KG])), owns=True) as ex:
        trusted = audit(ds, ex)
        assert VENDOR in ex.engine.seen  # trusted: the engine sees it (and stays offline on its own)
    assert _row(strict, "1").status == "refused" and "bif:" in _row(strict, "1").message
    # the other gold queries pass the sandbox: same verdicts either way
    assert [r.verdict for r in strict[1:]] == [r.verdict for r in trusted[1:]]
    # kgqa audit's own entry point passes the policy on
    report = api.audit(ds, KG, policy=api.ExecutionPolicy(trust_gold=False), cache=False)
    assert _row(report.rows, "1").status == "refused"


def _cli(capsys, *args: str) -> tuple[int, str]:
    from kgqa.cli import main

    try:
        main(list(args))
        code = 0
    except SystemExit as e:
        code = e.code or 0
    return code, capsys.readouterr().out


def test_evaluate_sandbox_gold_passes_the_policy_and_signs(demo_with_vendor_call, capsys):
    args = ["evaluate", str(demo_with_vendor_call), str(DEMO / "runs" / "strong.json"), "--kg", KG,
            "--gold-answers", "executed", "--no-cache", "-f", "json"]
    code, out = _cli(capsys, *args, "--sandbox-gold")
    assert code == 0, out
    assert "gold_queries:sandboxed" in json.loads(out)["runs"][0]["signature"]
    code, out = _cli(capsys, *args)
    assert code == 0, out
    assert "gold_queries" not in json.loads(out)["runs"][0]["signature"]


def test_store_sandboxes_an_uploaded_datasets_gold_queries(demo_with_vendor_call, tmp_path):
    s = Store(tmp_path / "exp.sqlite")
    try:
        run = s.put_file((DEMO / "runs" / "strong.json").read_bytes())
        ds = s.put_file(demo_with_vendor_call.read_bytes())
        common = dict(run_name="strong", profile="kgqa", run_file=run, run_filename="strong.json", kg="demo",
                      gold_answers="executed")
        uploaded = s.create(dataset="questions.json", dataset_file=ds, dataset_filename="questions.json", **common)
        registered = s.create(dataset="demo", **common)
        for eid in (uploaded, registered):
            assert runner.run_experiment(s, eid, kgs={"demo": KG}), s.get(eid).error
        assert "gold_queries:sandboxed" in s.get(uploaded).signature
        assert "gold_queries" not in s.get(registered).signature
    finally:
        s.close()
