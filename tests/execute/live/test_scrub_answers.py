"""Credentials echoed by a system (issue 34, scope 4): a live system or an endpoint that puts
its URL token or Authorization header in its answer has them written as ``***`` in every field
kgqa writes (journal, --save JSON, the store, the result cache), answers and queries included,
as ``raw`` already was. Real loopback servers (tests/faultserver.py)."""

from __future__ import annotations

import json

import pytest

from faultserver import FaultServer, Reply
from kgqa.api import evaluate
from kgqa.execute.endpoint import SparqlEndpoint
from kgqa.execute.live import AskSettings, ask
from kgqa.model import Dataset, Item, Status, TableAnswer
from kgqa.model.terms import IRI

TOKEN = "tok-9f8e7d6c5b4a"
BEARER = "Bearer sekret-abcdef123456"


def echo_system(req):
    """A GERBIL system that echoes what it was sent: the token of its URL and the header."""
    auth = req.headers.get("Authorization", "")
    where = "key=" + (req.params.get("apikey") or [""])[0]
    return Reply.json({"questions": [{
        "query": {"sparql": f'SELECT ?x WHERE {{ ?x <http://x/p> "{where} {auth}" }}'},
        "answers": [{"head": {"vars": ["x"]}, "results": {"bindings": [
            {"x": {"type": "literal", "value": f"echo {where} {auth}"}},
            {"x": {"type": "uri", "value": f"http://x/{TOKEN}"}}]}}]}]})


@pytest.fixture
def ds():
    return Dataset("d", [Item(id="1", questions={"en": "q"},
                              answer=TableAnswer.single_column([IRI("http://x/a")], "x"))])


def leaks(text: str) -> list[str]:
    return [s for s in (TOKEN, BEARER, BEARER.split()[1]) if s in text]


def test_live_system_answers_are_scrubbed_everywhere(ds, tmp_path):
    with FaultServer(echo_system, lifetime=60) as server:
        url = server.url(f"/qa?apikey={TOKEN}")
        journal = tmp_path / "journal.jsonl"
        res = ask(ds, url, "gerbil", AskSettings(progress=False, headers={"Authorization": BEARER}), journal=journal)
    assert len(server.requests) == 1 and server.requests[0].headers["Authorization"] == BEARER  # sent
    rec = res.records[0]
    assert rec["outcome"] == "ok"
    assert leaks(json.dumps(rec)) == []
    assert leaks(journal.read_text(encoding="utf-8")) == []
    p = res.run.predictions[0]
    assert leaks(json.dumps(p.answer.rows, default=str)) == [] and leaks(p.sparql) == []
    values = sorted(c.value for row in p.answer.rows for c in row)
    assert values == ["echo key=*** ***", "http://x/***"]


def test_endpoint_answers_are_scrubbed(ds):
    def handler(req):
        if (req.query or "").strip() == "ASK {}":
            return Reply.ask(True)
        return Reply.select(["x"], [{"x": {"type": "literal", "value": f"key={TOKEN} {req.headers.get('Authorization')}"}}])

    with FaultServer(handler, lifetime=60) as server, \
            SparqlEndpoint(server.url(f"/sparql?api_key={TOKEN}"), headers={"Authorization": BEARER}, retries=0) as ep:
        o = ep.execute("SELECT ?x WHERE { ?s ?p ?x }", timeout=10)
    assert o.status is Status.OK and o.answer.rows[0][0].value == "key=*** ***"


def test_evaluation_json_and_store_of_an_echoing_system_hold_no_credential(ds, tmp_path):
    from kgqa.api import save_evaluations
    from kgqa.store import Store

    with FaultServer(echo_system, lifetime=60) as server:
        e = evaluate(ds, None, system=server.url(f"/qa?apikey={TOKEN}"),
                     system_settings=AskSettings(progress=False, headers={"Authorization": BEARER}),
                     system_journal=tmp_path / "j.jsonl", cache=False)
    out = tmp_path / "saved.json"
    save_evaluations(e, out)
    saved = out.read_text(encoding="utf-8")
    assert "echo key=***" in saved and leaks(saved) == []
    store = Store(tmp_path / "x.sqlite")
    eid = store.create(dataset="d", run_name="r", profile="kgqa", system_url=server.url(f"/qa?apikey={TOKEN}"))
    store.finish(eid, e, headline=None)
    with store.engine.connect() as c:
        dump = "\n".join(str(row) for t in ("experiments", "results") for row in c.exec_driver_sql(f"SELECT * FROM {t}"))
    assert "finished" in dump and leaks(dump) == []
