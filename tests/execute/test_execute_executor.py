"""Executor.execute_run and the audit on CK25 with the embedded engine (one engine for the module)."""

from __future__ import annotations

import pytest

from kgqa.execute.cache import CachedEngine, ResultCache
from kgqa.execute.embedded import EmbeddedEngine
from kgqa.execute.audit import audit, compare
from kgqa.execute.executor import Executor
from kgqa.execute.policy import ExecutionPolicy
from kgqa.load import load_dataset, load_run
from kgqa.model import BooleanAnswer, Dataset, Item, Prediction, Run, Status, TableAnswer
from kgqa.model.terms import IRI, Literal

# one worker: the module's engine (the CK25 KG loaded, worker processes) is made once
pytestmark = pytest.mark.xdist_group("execute-executor")


@pytest.fixture(scope="module")
def engine(shared_data):
    e = EmbeddedEngine.from_files([shared_data / "ck25" / "graphs" / "prod-inst.ttl"], workers=2)
    yield e
    e.close()


@pytest.fixture(scope="module")
def ck25(shared_data) -> Dataset:
    return load_dataset(shared_data / "ck25" / "questions.yml")


def execute_run(ds, run, engine, *, cache=None, gold="stored", reexecute=False, **policy):
    return Executor(engine, cache=cache, policy=ExecutionPolicy(**policy)).execute_run(ds, run, gold=gold, reexecute=reexecute)


def _run(ck25: Dataset) -> Run:
    preds = [
        Prediction("ck25:1", sparql=ck25["ck25:1"].sparql),  # executed
        Prediction("ck25:2", sparql="SELECT ?x WHERE { ?x pv:phone ?y }"),  # undeclared unknown prefix
        Prediction("ck25:3", sparql="INSERT DATA { <http://x/a> <http://x/b> <http://x/c> }"),
        Prediction("ck25:4", sparql="SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }"),
        Prediction("ck25:5", sparql="SELECT * WHERE { ?s ?p ?o }", answer=BooleanAnswer(True)),  # own answer wins
        Prediction("ck25:6", sparql=None, answer=TableAnswer.single_column([Literal("x")])),
        Prediction("ck25:7", sparql=ck25["ck25:7"].sparql, status=Status.EXEC_ERROR, message="system failed"),
        Prediction("ck25:37", sparql=ck25["ck25:37"].sparql),  # needs the xsd:int rewrite
        Prediction("ck25:33", sparql=ck25["ck25:33"].sparql),
        Prediction("nope:1", sparql="ASK {}"),  # not in the dataset
    ]
    return Run("t", preds)


def test_execute_run_stored_gold(engine, ck25, tmp_path):
    cache = ResultCache(tmp_path / "r.sqlite")
    ex = execute_run(ck25, _run(ck25), engine, cache=cache)
    assert sorted(ex.predicted) == ["ck25:1", "ck25:2", "ck25:3", "ck25:33", "ck25:37", "ck25:4"]
    assert ex.gold == {}  # every CK25 item has a stored answer
    assert ex.predicted["ck25:1"].answer == TableAnswer(
        ("result",), ((IRI("http://ld.company.org/prod-instances/dept-73191"),),))
    assert ex.predicted["ck25:2"].status is Status.PARSE_ERROR
    assert ex.predicted["ck25:3"].status is Status.REFUSED and "INSERT" in ex.predicted["ck25:3"].message
    assert ex.predicted["ck25:4"].status is Status.REFUSED and "SERVICE" in ex.predicted["ck25:4"].message
    assert ex.predicted["ck25:33"].answer == BooleanAnswer(False)
    assert ex.predicted["ck25:37"].status is Status.OK
    assert ex.rewrites == {"ck25:37": ["predicted: cast xsd:int( -> xsd:integer( (unsupported cast)"]}
    assert ex.counts == {"executed": 4, "cache_hits": 0, "errors": 1, "timeouts": 0, "refused": 2}
    assert ex.engine_signature == engine.info.signature()
    again = execute_run(ck25, _run(ck25), engine, cache=cache)
    assert again.counts == {"executed": 0, "cache_hits": 4, "errors": 1, "timeouts": 0, "refused": 2}
    assert again.predicted == ex.predicted
    # without the normaliser 37 fails, and nothing is rewritten
    raw = execute_run(ck25, _run(ck25), engine, normalise=False)
    assert raw.predicted["ck25:37"].status is Status.EXEC_ERROR and raw.rewrites == {}
    # reexecute: the run's own answer no longer wins
    re = execute_run(ck25, _run(ck25), engine, reexecute=True)
    assert re.predicted["ck25:5"].status is Status.OK and len(re.predicted["ck25:5"].answer) == 26903
    # allow_service lets the query through the runner's sandbox; the engine still refuses it
    svc = execute_run(ck25, _run(ck25), engine, allow_service=True)
    assert svc.predicted["ck25:4"].status is Status.REFUSED


def test_execute_run_executed_gold_and_items_without_answers(engine, ck25):
    ex = execute_run(ck25, Run("empty", []), engine, gold="executed")
    assert len(ex.gold) == 50 and all(o.status is Status.OK for o in ex.gold.values())
    assert ex.counts["executed"] == 50 and ex.predicted == {}
    assert ex.rewrites["ck25:42"] == ["gold: cast xsd:int( -> xsd:integer( (unsupported cast)"] * 2
    # LC-QuAD style: no stored answer -> gold executed even with gold="stored"
    items = [Item("a", sparql=ck25["ck25:1"].sparql), Item("b", sparql=ck25["ck25:2"].sparql,
                                                          answer=ck25["ck25:2"].answer)]
    ds = Dataset("mini", items)
    ce = CachedEngine(engine)
    ex = execute_run(ds, Run("r", [Prediction("a", sparql=ck25["ck25:1"].sparql)]), ce)
    assert list(ex.gold) == ["a"] and ex.gold["a"] == ex.predicted["a"]
    assert ex.counts["executed"] == 1 and ex.counts["cache_hits"] == 1  # same text once


def test_real_run_executes_and_reexecution_is_free(engine, shared_data, tmp_path):
    ds = load_dataset(shared_data / "ck25" / "questions.yml").by_language()
    run = load_run(shared_data / "ck25-runs" / "AIFB" / "ck25_answers.json", dataset=ds)
    cache = ResultCache(tmp_path / "r.sqlite")
    ex = execute_run(ds, run, engine, cache=cache)
    assert len(ex.predicted) == 50
    total = sum(ex.counts[k] for k in ("executed", "cache_hits", "refused"))
    assert total == 50 and ex.counts["refused"] == 0
    ex2 = execute_run(ds, run, engine, cache=cache)
    assert ex2.counts["executed"] == 0 and ex2.counts["cache_hits"] == ex.counts["executed"] + ex.counts["cache_hits"]
    assert {k: o.status for k, o in ex2.predicted.items()} == {k: o.status for k, o in ex.predicted.items()}


def test_audit_ck25(engine, ck25):
    rows = audit(ck25, Executor(engine))
    assert len(rows) == 50
    by = {r.id: r for r in rows}
    assert all(r.parses and r.executes for r in rows)
    bad = sorted((r.id for r in rows if r.verdict != "ok"), key=lambda i: int(i.split(":")[1]))
    assert bad == ["ck25:25", "ck25:41", "ck25:50"]
    assert by["ck25:25"].missing == [] and by["ck25:25"].extra == ["http://ld.company.org/prod-instances/hw-N832-1055352"]
    assert by["ck25:41"].stored_size == 0 and by["ck25:41"].rows == 6 and len(by["ck25:41"].extra) == 13
    assert by["ck25:50"].missing == ["http://ld.company.org/prod-instances/dept-22183"]
    assert by["ck25:50"].extra == ["http://ld.company.org/prod-instances/dept-85880"]
    assert by["ck25:37"].rewrites == ["cast xsd:int( -> xsd:integer( (unsupported cast)"]
    assert by["ck25:33"].verdict == "ok"
    # a broken gold query and an item without a query
    ds = Dataset("x", [Item("p", sparql="SELEC ?x", answer=BooleanAnswer(True)), Item("n")])
    r = audit(ds, Executor(engine))
    assert [x.verdict for x in r] == ["parse_error", "no-query"] and r[0].parses is False


def test_compare():
    a = TableAnswer(("x",), ((Literal("1"),), (IRI("http://a"),)))
    b = TableAnswer(("y",), ((Literal("1"),), (Literal("2"),)))
    assert compare(a, b) == (False, ["2"], ["http://a"])
    assert compare(BooleanAnswer(False), BooleanAnswer(False)) == (True, [], [])


def test_executor_open_uses_the_default_cache(shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    ds = load_dataset(shared_data / "ck25" / "questions.yml").by_language()
    run = load_run(shared_data / "ck25-runs" / "WSE" / "ck25_answers.json", dataset=ds)
    kg = str(shared_data / "ck25" / "graphs" / "prod-inst.ttl")
    with Executor.open(kg, workers=1) as ex:
        first = ex.execute_run(ds, run)
    with Executor.open(kg, workers=1) as ex:
        second = ex.execute_run(ds, run)
    assert first.counts == {"executed": 50, "cache_hits": 0, "errors": 0, "timeouts": 0, "refused": 0}
    assert second.counts == {"executed": 0, "cache_hits": 50, "errors": 0, "timeouts": 0, "refused": 0}
    assert (tmp_path / "cache" / "results.sqlite").is_file()
    assert second.predicted == first.predicted and second.engine_signature.startswith("oxigraph-")


def test_memo_is_keyed_by_timeout_and_row_cap_and_keeps_no_transient_failure():
    from kgqa.execute.engine import EngineInfo, transient
    from kgqa.execute.executor import Executor
    from kgqa.model import Outcome, Status

    calls = []

    class Flaky:
        info = EngineInfo("fake", "1", "fp")

        def execute_many(self, queries, timeout=30.0, max_rows=None, progress=None, **_):
            calls.append((tuple(queries), timeout))
            if timeout < 5:
                return [Outcome(Status.TIMEOUT, None, "timeout", timeout) for _ in queries]
            if len(calls) == 2:
                return [Outcome(Status.EXEC_ERROR, None, transient("503"), 0.0) for _ in queries]
            return [Outcome.ok(None) for _ in queries]

        def close(self):
            pass

    ex = Executor(Flaky())
    assert ex.execute("ASK {}", timeout=1).status is Status.TIMEOUT
    assert ex.execute("ASK {}", timeout=60).status is Status.EXEC_ERROR  # not the memoised timeout
    assert ex.execute("ASK {}", timeout=60).status is Status.OK  # the transient failure was not kept
    assert ex.execute("ASK {}", timeout=60).status is Status.OK and len(calls) == 3  # now memoised


def test_trust_gold_is_the_one_rule_for_gold_queries(engine):
    """ExecutionPolicy.trust_gold decides whether gold queries are sandboxed; predicted queries
    always are. A trusted gold SERVICE query passes the preparation and reaches the engine (which
    stays read-only and offline on its own); a sandboxed one is REFUSED before any engine sees it;
    the signature names the non-default setting."""
    service = "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }"
    ds = Dataset("t", [Item(id="g", questions={"en": "q"}, sparql=service)])
    trusted = Executor(engine, policy=ExecutionPolicy())
    assert trusted.prepare_many([service], untrusted=trusted.policy.untrusted("gold"))[0][2] is None
    assert trusted.execute_gold(ds)["g"].status is not Status.OK
    strict = Executor(engine, policy=ExecutionPolicy(trust_gold=False))
    assert strict.prepare_many([service], untrusted=strict.policy.untrusted("gold"))[0][2].status is Status.REFUSED
    sandboxed = Executor(engine, policy=ExecutionPolicy(trust_gold=False)).execute_gold(ds)["g"]
    assert sandboxed.status is Status.REFUSED and "SERVICE" in sandboxed.message
    ex = Executor(engine, policy=ExecutionPolicy(trust_gold=False)).execute_run(
        ds, Run("r", [Prediction("g", sparql=service)]), gold="executed")
    assert ex.gold["g"].status is Status.REFUSED and ex.predicted["g"].status is Status.REFUSED
    assert ExecutionPolicy(trust_gold=False).signature_parts()["gold_queries"] == "sandboxed"
    assert "gold_queries" not in ExecutionPolicy().signature_parts()
    assert ExecutionPolicy().untrusted("predicted") and not ExecutionPolicy().untrusted("gold")
    with pytest.raises(ValueError):
        ExecutionPolicy().untrusted("other")


def test_on_progress_reports_every_engine_batch(engine, ck25):
    """The progress hook (the web platform's live progress) sees each batch sent to the engine,
    ``done`` rising to that batch's ``total``; memoised texts are not sent again."""
    seen: list[tuple[int, int]] = []
    ex = Executor(engine, cache=None, on_progress=lambda d, t: seen.append((d, t)))
    queries = [ck25["ck25:1"].sparql, ck25["ck25:33"].sparql, ck25["ck25:37"].sparql]
    ex.batch(queries)
    assert seen and seen[-1] == (3, 3) and all(t == 3 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    seen.clear()
    ex.execute_many([queries[0], queries[0], "ASK { ?s ?p ?o }"])  # two distinct texts, none memoised yet
    assert seen[-1] == (2, 2)
    seen.clear()
    ex.execute_many([queries[0]])  # memoised: the engine sees nothing
    assert seen == []


def test_progress_bar_not_shown_is_a_false_no_op():
    from kgqa.model.progress import progress_bar

    with progress_bar(5, "x") as bar:  # stderr is not a terminal under pytest
        assert not bar
        bar(3, status="ok")
    with progress_bar(0, "x", enabled=True) as bar:
        assert not bar


def test_progress_bar_on_a_terminal_shows_label_counts_and_status():
    import io

    from rich.console import Console

    from kgqa.model.progress import progress_bar

    out = io.StringIO()
    with progress_bar(4, "asking", console=Console(file=out, force_terminal=True, width=100), status=True) as bar:
        assert bar
        bar(3, status="ok:3")
        bar._progress.refresh()
    text = out.getvalue()
    assert "asking" in text and "3/4" in text and "ok:3" in text
