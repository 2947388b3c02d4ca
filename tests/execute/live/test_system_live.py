"""Live QA systems against real processes on loopback ports (issue 13): the adapter replaying a
real CK25 run, the client through both contracts, a misbehaving service, kill -9 and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import httpx
import pytest

from kgqa.cli import main
from kgqa.execute.live import AskSettings, ask, ask_to_file, write_result
from kgqa.load import load_dataset, load_run
from kgqa.model import Status
from kgqa.score import profiles
from kgqa.score.evaluate import evaluate
from systemprocs import CLI, adapter, cli_process, count, env, faulty, requests_log
from waiting import wait_until

MEASURES = ("set_P", "set_recall", "set_F")

# one worker runs the module: the direct evaluation and the result cache its replays are answered
# from are made once (split over two workers, each made its own and executed the queries again)
pytestmark = pytest.mark.xdist_group("system-live")


@pytest.fixture
def ck25(shared_data):
    return {
        "answers": shared_data / "ck25-runs" / "WSE" / "ck25_answers.json",
        "kg": str(shared_data / "ck25" / "graphs" / "prod-inst.ttl"),
    }


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("live-cache")


@pytest.fixture
def cache_dir(module_cache, monkeypatch):
    """The module's result cache (the clients' and the adapters' too): a query a replay gets back
    as sent is answered from what the direct evaluation executed; one that changed on the way
    is a cache miss, executed, and scored like any other."""
    monkeypatch.setenv("KGQA_CACHE_DIR", str(module_cache))
    return module_cache


@pytest.fixture(scope="module")
def direct(shared_data, module_cache):
    """``kgqa evaluate ck25 WSE-answers --kg ... -p text2sparql -f json`` (the answers file scored
    directly, its queries executed into the module's cache): what every live replay must equal."""
    import contextlib
    import io

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setenv("KGQA_CACHE_DIR", str(module_cache))
        with pytest.raises(SystemExit) as e:
            main(["evaluate", "ck25", str(shared_data / "ck25-runs" / "WSE" / "ck25_answers.json"), "--kg",
                  str(shared_data / "ck25" / "graphs" / "prod-inst.ttl"), "-p", "text2sparql", "-f", "json"])
    assert not e.value.code
    (doc,) = json.loads(out.getvalue())["runs"]
    return doc


def _cli_json(capsys, *args: str) -> dict:
    try:
        main(list(args))
    except SystemExit as e:
        assert not e.code, capsys.readouterr().err
    (doc,) = json.loads(capsys.readouterr().out)["runs"]  # one evaluation
    return doc


def _scores(doc: dict) -> dict[str, dict[str, float]]:
    return {q["id"]: {m: q["scores"][m] for m in MEASURES} for q in doc["questions"]}


# --------------------------------------------------------------------------- CK25 replay


def test_text2sparql_replay_scores_equal_the_answers_file_question_by_question(ck25, direct, capsys, cache_dir):
    with adapter("--run", str(ck25["answers"]), "--protocol", "text2sparql") as srv:
        live = _cli_json(capsys, "evaluate", "ck25", "--system", srv.url, "--protocol", "text2sparql",
                         "--kg", ck25["kg"], "-p", "text2sparql", "-f", "json")
        health = httpx.get(srv.url + "health", trust_env=False).json()
    assert health["requests"]["text2sparql"] == 50 and health["requests"]["responses"] == {"200": 50}
    a, b = _scores(direct), _scores(live)
    assert len(a) == 50 and list(a) == list(b)
    assert a == b  # exact, all 50 questions, every measure
    assert live["aggregate"] == direct["aggregate"]
    sig = live["signature"]
    assert f"system:http://127.0.0.1:{srv.port}|protocol:text2sparql|asked:en|client:c4,t60,r3" in sig
    assert "engine:oxigraph-" in sig


def test_gerbil_replay_with_the_adapter_executing_scores_equal(ck25, direct, capsys, cache_dir):
    with adapter("--run", str(ck25["answers"]), "--protocol", "gerbil", "--kg", ck25["kg"]) as srv:
        # no --kg on the client: the answers come from the adapter's execution
        live = _cli_json(capsys, "evaluate", "ck25", "--system", srv.url, "--protocol", "gerbil",
                         "-p", "text2sparql", "-f", "json")
        r = httpx.post(srv.url, data={"query": "In which department is Ms. Brant?", "lang": "en"}, trust_env=False)
    assert r.status_code == 200
    entry = r.json()["questions"][0]
    assert entry["id"] == "ck25:1-en" and "answers" in entry and entry["query"]["sparql"].startswith("PREFIX")
    assert _scores(live) == _scores(direct)
    assert "protocol:gerbil" in live["signature"] and "engine:" not in live["signature"]


@pytest.mark.slow  # two asks and three executed evaluations; the replays above and test_system_trust's asks run in the README's command
def test_system_ask_writes_runs_that_score_like_the_source(ck25, direct, tmp_path, capsys, cache_dir):
    with adapter("--run", str(ck25["answers"]), "--protocol", "text2sparql") as srv:
        out = tmp_path / "wse_answers.json"
        main_ok = subprocess.run(CLI + ["system", "ask", srv.url, "ck25", "--protocol", "text2sparql", "-o", str(out),
                                        "--no-progress", "-c", "8"], env=env(), capture_output=True, text=True)
        assert main_ok.returncode == 0, main_ok.stderr
        assert "ok 50" in main_ok.stderr
        jl = tmp_path / "wse.jsonl"
        ds = load_dataset("ck25")
        res = ask(ds, srv.url, "text2sparql", AskSettings(progress=False))
        write_result(res, jl)
    written = json.loads(out.read_text())
    assert [w["qname"] for w in written] == [f"ck25:{i}-en" for i in range(1, 51)]
    source = json.loads(ck25["answers"].read_text())
    assert [w["query"] for w in written] == [s["query"] for s in source]
    assert written[0]["uri"] == "https://text2sparql.aksw.org/2025/corporate/1-en"
    assert written[0]["kgqa"]["outcome"] == "ok" and written[0]["kgqa"]["http_status"] == 200
    for run_file in (out, jl):
        doc = _cli_json(capsys, "evaluate", "ck25", str(run_file), "--kg", ck25["kg"], "-p", "text2sparql", "-f", "json")
        assert _scores(doc) == _scores(direct), run_file
    back = load_run(jl)
    assert back.format == "jsonl" and len(back) == 50
    # a run written by kgqa system ask can itself be replayed (its question texts are kept)
    import asyncio

    from kgqa.service.sources import ReplaySource

    replay = ReplaySource(back)
    assert replay.size == 50 and replay.unindexed == []
    reply = asyncio.run(replay.answer(source[3]["question"], "en", None))
    assert reply.id == "ck25:4-en" and reply.sparql == source[3]["query"]
    assert back.predictions[0].metadata["system"]["http_status"] == 200
    assert json.loads(back.predictions[0].metadata["system"]["raw"])["query"] == source[0]["query"]


# --------------------------------------------------------------------------- misbehaving service


@pytest.mark.parametrize("protocol", ["gerbil", pytest.param("text2sparql", marks=pytest.mark.slow)])
def test_misbehaving_service_gives_the_right_outcomes_and_a_finished_run(ck25, tmp_path, protocol):
    ds = load_dataset("ck25")
    q = {int(it.id.split(":")[1]): it.questions["en"] for it in ds.items}
    with faulty(ck25["answers"]) as other:
        faults = {
            q[1]: ["slow:8"],
            q[2]: ["500"],
            q[3]: ["503", "ok"],
            q[4]: ["429:1", "ok"],
            q[5]: ["malformed"],
            q[6]: ["notqald"] if protocol == "gerbil" else ["malformed"],
            q[7]: ["wrong_id"],
            q[8]: ["wrong_question"],
            q[9]: [f"redirect_port:{other.port}"],
            q[10]: ["redirect_same"],
            q[11]: ["404"],
            q[12]: ["drop", "ok"],
            q[13]: ["429:100"],
        }
        with faulty(ck25["answers"], faults, workdir=tmp_path) as srv:
            s = AskSettings(concurrency=4, timeout=3.0, retries=2, backoff=0.01, max_backoff=5.0, progress=False)
            res = ask(ds, srv.url, protocol, s, journal=tmp_path / "j.jsonl")
            counted = count(srv)
            asked4 = [r["t"] for r in requests_log(srv) if r["question"] == q[4]]
            never = count(other)
    assert never["total"] == 0  # the redirect to another port was never followed
    by = {r["id"]: r for r in res.records}
    assert len(by) == 50 and res.asked == 50
    expect = {1: "timeout", 2: "http_error", 3: "ok", 4: "ok", 5: "malformed_response", 6: "malformed_response",
              7: "ok", 8: "malformed_response", 9: "refused", 10: "ok", 11: "http_error", 12: "ok", 13: "http_error"}
    got = {i: by[f"ck25:{i}-en"]["outcome"] for i in expect}
    assert got == expect
    assert all(by[f"ck25:{i}-en"]["outcome"] == "ok" for i in range(14, 51))
    rec = lambda i: by[f"ck25:{i}-en"]  # noqa: E731
    assert rec(2)["attempts"] == 3 and rec(2)["http_status"] == 500 and "gave up after 3 attempts" in rec(2)["message"]
    assert counted["by_question"][q[2]] == 3
    assert rec(3)["attempts"] == 2 and rec(3)["http_status"] == 200
    assert rec(4)["attempts"] == 2 and len(asked4) == 2
    assert asked4[1] - asked4[0] >= 0.95  # Retry-After: 1 honoured, as the system saw it (its arrival times)
    assert rec(11)["attempts"] == 1 and rec(11)["http_status"] == 404  # a 4xx is not retried
    assert rec(12)["attempts"] == 2
    assert counted["by_question"][q[13]] == 1 and "retry after 100 s" in rec(13)["message"]
    assert "refused" in rec(9)["message"] and str(other.port) in rec(9)["message"]
    assert "another question" in rec(8)["message"]
    if protocol == "gerbil":
        assert any("response id '999'" in w for w in rec(7)["warnings"])
    assert rec(5)["raw"].startswith('{"questions"')  # the raw body is kept
    # into scoring: failures are outcomes of their own, never empty answers
    run = res.run
    statuses = {p.id: p.status for p in run.predictions}
    assert statuses["ck25:1-en"] is Status.TIMEOUT and statuses["ck25:9-en"] is Status.REFUSED
    assert statuses["ck25:2-en"] is Status.HTTP_ERROR and statuses["ck25:5-en"] is Status.MALFORMED_RESPONSE
    assert all(run.get(f"ck25:{i}-en").answer is None and run.get(f"ck25:{i}-en").sparql is None
               for i in (1, 2, 5, 8, 9, 11, 13))
    e = evaluate(ds.by_language(), run, profiles.get("text2sparql"))
    labels = {qs.id: qs.outcome for qs in e.questions}
    assert labels["ck25:1-en"] == "timeout" and labels["ck25:2-en"] == "http_error"
    assert labels["ck25:5-en"] == "malformed_response" and labels["ck25:9-en"] == "refused"
    assert e.outcomes["http_error"] == 3 and e.outcomes["malformed_response"] == 3
    # every run format kgqa writes keeps every outcome when read back
    for name in ("run.jsonl", "run.json"):
        write_result(res, tmp_path / name)
        back = load_run(tmp_path / name)
        assert back.format == {"run.jsonl": "jsonl", "run.json": "qald-json" if protocol == "gerbil"
                               else "text2sparql-answers"}[name]
        assert {p.id: p.status for p in back.predictions} == statuses, name
        assert back.get("ck25:2-en").message == rec(2)["message"]


# --------------------------------------------------------------------------- kill -9 and resume


def _texts() -> list[str]:
    """The CK25 questions in English, in the order a client asks them (the dataset's)."""
    return [it.questions["en"] for it in load_dataset("ck25").items]


def test_kill_9_then_rerun_asks_only_the_unanswered_questions(ck25, tmp_path):
    out = tmp_path / "run.jsonl"
    journal = tmp_path / "run.jsonl.journal.jsonl"
    gate = tmp_path / "gate"
    # the first 15 questions are answered; the system holds the next ones until the gate file
    # exists, so at the kill the client (-c 2) has exactly 15 answers journalled and 2 in flight
    held = {t: [f"until:{gate}", "ok"] for t in _texts()[15:]}
    with faulty(ck25["answers"], held, workdir=tmp_path) as srv:
        client = cli_process(["system", "ask", srv.url, "ck25", "--protocol", "text2sparql", "-o", str(out), "-c", "2",
                              "--no-progress"])
        try:
            wait_until(lambda: count(srv)["total"] == 17, what="15 questions answered and 2 held", proc=client)
            os.kill(client.pid, signal.SIGKILL)
            client.wait(10)
        finally:
            if client.poll() is None:
                os.kill(client.pid, signal.SIGKILL)
                client.wait(10)
            client.stderr.close()
        assert client.returncode == -signal.SIGKILL and not out.exists()
        gate.touch()  # the rerun is answered at once
        before = count(srv)
        lines = journal.read_text(encoding="utf-8").splitlines()
        done = {json.loads(x)["id"] for x in lines[1:] if x.endswith("}")}
        assert len(done) == 15 and before["total"] == 17  # the 2 in flight at the kill are asked again
        result, _, _ = ask_to_file("ck25", srv.url, out, protocol="text2sparql", settings=AskSettings(progress=False))
        after = count(srv)
    asked_again = after["total"] - before["total"]
    assert asked_again == 50 - len(done) == result.asked and result.reused == len(done)
    # no question answered before the kill was asked again
    ds = load_dataset("ck25")
    text = {f"{it.id}-en": it.questions["en"] for it in ds.items}
    for qid in done:
        assert after["by_question"][text[qid]] == before["by_question"][text[qid]]
    assert len(after["by_question"]) == 50
    run = load_run(out)
    assert len(run) == 50 and all(p.status is Status.OK for p in run.predictions)


def test_ctrl_c_stops_asking_and_keeps_what_arrived(ck25, tmp_path):
    out = tmp_path / "run.jsonl"
    journal = tmp_path / "run.jsonl.journal.jsonl"
    gate = tmp_path / "gate"  # never made: questions 6 on are held by the system, 2 of them in flight
    texts = _texts()
    with faulty(ck25["answers"], {t: [f"until:{gate}"] for t in texts[5:]}, workdir=tmp_path) as srv:
        client = cli_process(["system", "ask", srv.url, "ck25", "--protocol", "gerbil", "-o", str(out), "-c", "2",
                              "--no-progress"])
        try:
            wait_until(lambda: count(srv)["total"] == 7, what="5 questions answered and 2 held", proc=client)
            os.kill(client.pid, signal.SIGINT)
            client.wait(30)
        finally:
            if client.poll() is None:
                os.kill(client.pid, signal.SIGKILL)
                client.wait(10)
            client.stderr.close()
        assert client.returncode not in (0, None) and not out.exists()
        asked = [r["question"] for r in requests_log(srv)]
    assert sorted(asked) == sorted(texts[:7])  # nothing is asked after the interrupt
    recorded = [json.loads(x)["id"] for x in journal.read_text(encoding="utf-8").splitlines()[1:]]
    assert sorted(recorded) == sorted(f"ck25:{i}-en" for i in range(1, 6))  # what arrived; the 2 in flight lost


def test_rerun_on_a_finished_journal_asks_nothing_and_fresh_asks_all(ck25, tmp_path):
    out = tmp_path / "run.json"
    with faulty(ck25["answers"]) as srv:
        s = AskSettings(progress=False, concurrency=8)
        first, fmt, journal = ask_to_file("ck25", srv.url, out, protocol="gerbil", settings=s)
        n1 = count(srv)["total"]
        second, _, _ = ask_to_file("ck25", srv.url, out, protocol="gerbil", settings=s)
        n2 = count(srv)["total"]
        third, _, _ = ask_to_file("ck25", srv.url, out, protocol="gerbil",
                                  settings=AskSettings(progress=False, concurrency=8, fresh=True))
        n3 = count(srv)["total"]
    assert fmt == "qald" and journal == tmp_path / "run.json.journal.jsonl"
    assert (n1, n2, n3) == (50, 50, 100)
    assert (first.asked, second.asked, second.reused, third.asked) == (50, 0, 50, 50)
    doc = json.loads(out.read_text())
    assert len(doc["questions"]) == 50 and doc["questions"][0]["kgqa"]["outcome"] == "ok"
    assert load_run(out).format == "qald-json"


# --------------------------------------------------------------------------- the adapter


def test_adapter_rejects_bad_requests_clearly(ck25):
    with adapter("--run", str(ck25["answers"]), "--protocol", "gerbil", "--max-body", "2048") as srv:
        c = httpx.Client(trust_env=False, timeout=10)
        r = c.post(srv.url, content=b'{"query": "x"}', headers={"Content-Type": "application/json"})
        assert r.status_code == 415 and "x-www-form-urlencoded" in r.json()["error"]
        r = c.post(srv.url, data={"lang": "en"})
        assert r.status_code == 400 and "'query'" in r.json()["error"]
        r = c.post(srv.url, data={"query": "x" * 5000, "lang": "en"})
        assert r.status_code == 413
        r = c.post(srv.url, data={"query": "What is the meaning of life?", "lang": "en"})
        assert r.status_code == 404 and "not in the replayed run" in r.json()["error"]
        r = c.get(srv.url, params={"question": "x"})
        assert r.status_code == 405
        r = c.get(srv.url + "text2sparql", params={"question": "In which department is Ms. Brant?"})
        assert r.status_code == 400 and "'dataset'" in r.json()["error"]
        # another dataset IRI than the run names: answered by question (the adapter warns once)
        r = c.get(srv.url + "text2sparql", params={"question": "In which department is Ms. Brant?",
                                                   "dataset": "https://example.org/other/"})
        assert r.status_code == 200 and r.json()["query"].startswith("PREFIX")
        assert r.json()["dataset"] == "https://example.org/other/"
        r = c.get(srv.url + "text2sparql", params={"question": "  In which department   is Ms. Brant? ",
                                                   "dataset": "https://text2sparql.aksw.org/2025/corporate/"})
        assert r.status_code == 200 and r.json()["query"].startswith("PREFIX")
        # a GERBIL query-only answer (no --kg): no "answers" key, so the caller executes the query
        r = c.post(srv.url, data={"query": "In which department is Ms. Brant?", "lang": "en"})
        assert r.status_code == 200 and "answers" not in r.json()["questions"][0]
        h = c.get(srv.url + "health").json()
        assert h["status"] == "ok" and h["questions"] == 50 and h["requests"]["responses"]["415"] == 1


CALLABLE = '''
DEPTS = "SELECT ?d WHERE { ?d a <http://ld.company.org/prod-vocab/Department> }"

def answer(question, lang):
    if "Brant" in question:
        raise ValueError("no idea who Ms. Brant is")
    if "telephone" in question:
        return {"answers": ["+49 341 123"], "confidence": 0.5}
    if "nothing" in question:
        return 42
    return DEPTS
'''


def test_python_callable_adapter_fills_answers_from_the_kg(ck25, tmp_path):
    mod = tmp_path / "mysystem.py"
    mod.write_text(CALLABLE, encoding="utf-8")
    import pyoxigraph as ox

    store = ox.Store()
    store.load(path=ck25["kg"], format=ox.RdfFormat.TURTLE)
    depts = {str(r["d"].value) for r in store.query("SELECT ?d WHERE { ?d a <http://ld.company.org/prod-vocab/Department> }")}
    assert depts
    with adapter("--python", f"{mod}:answer", "--kg", ck25["kg"]) as srv:
        c = httpx.Client(trust_env=False, timeout=30)
        r = c.post(srv.url, data={"query": "Which departments are there?", "lang": "en"})
        assert r.status_code == 200
        ans = r.json()["questions"][0]["answers"][0]
        assert {b["d"]["value"] for b in ans["results"]["bindings"]} == depts
        r = c.post(srv.url, data={"query": "What is the telephone of Baldwin Dirksen?", "lang": "en"})
        e = r.json()["questions"][0]
        assert e["answers"][0]["results"]["bindings"][0]["result"]["value"] == "+49 341 123" and e["confidence"] == 0.5
        r = c.post(srv.url, data={"query": "In which department is Ms. Brant?", "lang": "en"})
        assert r.status_code == 500 and "ValueError: no idea who Ms. Brant is" in r.json()["error"]
        r = c.post(srv.url, data={"query": "nothing at all", "lang": "en"})
        assert r.status_code == 500 and "int" in r.json()["error"]
        r = c.get(srv.url + "text2sparql", params={"question": "Which departments?", "dataset": "urn:x"})
        assert r.json() == {"dataset": "urn:x", "question": "Which departments?",
                            "query": "SELECT ?d WHERE { ?d a <http://ld.company.org/prod-vocab/Department> }"}
        # the client sees the system's failure as http_error, the rest as answers
        ds = load_dataset("ck25")
        res = ask(ds, srv.url, "gerbil", AskSettings(progress=False, retries=0, concurrency=8))
    by = {r["id"]: r for r in res.records}
    assert by["ck25:1-en"]["outcome"] == "http_error" and by["ck25:1-en"]["http_status"] == 500
    assert sum(r["outcome"] == "ok" for r in res.records) == 49


def test_official_ck25_scores_through_a_live_gerbil_replay_of_the_result_set(shared_data, capsys, cache_dir):
    """A run without question texts (a Text2SPARQL result set) is replayed with the dataset's
    texts; through the GERBIL contract its answers reproduce the official per-question scores."""
    team = shared_data / "ck25-runs" / "WSE"
    with adapter("--run", str(team / "ck25_system_result_set.json"), "--dataset", "ck25") as srv:
        live = _cli_json(capsys, "evaluate", "ck25", "--system", srv.url, "-p", "text2sparql", "-f", "json")
    official = json.loads((team / "ck25_eval.json").read_text())
    assert len(live["questions"]) == 50
    for q in live["questions"]:
        for m in MEASURES:
            assert q["scores"][m] == pytest.approx(official[q["id"]][m], abs=1e-12), (q["id"], m)
    for m in MEASURES:
        assert live["aggregate"][m] == pytest.approx(official["average"][m], abs=1e-15)


def test_replaying_a_run_without_question_texts_needs_the_dataset(shared_data):
    from systemprocs import Proc

    with pytest.raises(RuntimeError, match="pass --dataset"):
        Proc(CLI + ["system", "serve", "--run", str(shared_data / "ck25-runs" / "WSE" / "ck25_system_result_set.json"),
                    "--port", "0"], r"http://127\.0\.0\.1:(\d+)/", timeout=60)


def test_evaluate_needs_runs_or_a_system(capsys):
    with pytest.raises(SystemExit) as e:
        main(["evaluate", "ck25"])
    assert e.value.code == 2 and "--system URL" in capsys.readouterr().err


def test_rps_spaces_requests_and_a_post_is_never_turned_into_a_get(ck25, tmp_path):
    from kgqa.model import Dataset

    full = load_dataset("ck25")
    ds = Dataset(full.name, full.items[:10], full.format, full.source, [], full.metadata)
    q = {it.id: it.questions["en"] for it in ds.items}
    with faulty(ck25["answers"], {q["ck25:1"]: ["redirect_same"], q["ck25:2"]: ["redirect302_same"]},
                workdir=tmp_path) as srv:
        res = ask(ds, srv.url, "text2sparql", AskSettings(concurrency=8, rps=20, progress=False))
        arrived = sorted(r["t"] for r in requests_log(srv))
        post = ask(ds, srv.url, "gerbil", AskSettings(concurrency=8, progress=False))
    # 12 request starts (redirect hops do not wait) at most 20 per second: >= 9 intervals between the
    # system's first and last arrival (less the first one's own delay on the way, well under 50 ms)
    assert res.counts == {"ok": 10} and res.requests == 12 == len(arrived)
    assert arrived[-1] - arrived[0] >= 9 / 20 - 0.05, [round(t - arrived[0], 3) for t in arrived]
    by = {r["id"]: r for r in post.records}
    assert by["ck25:1-en"]["outcome"] == "ok"  # 307 keeps the POST
    assert by["ck25:2-en"]["outcome"] == "http_error" and "redirect of a POST" in by["ck25:2-en"]["message"]


def test_qald_dataset_is_asked_in_the_requested_language(shared_data, tmp_path):
    mod = tmp_path / "echo.py"
    mod.write_text("def answer(question, lang):\n    return {'answers': [lang + '|' + question]}\n", encoding="utf-8")
    ds = load_dataset(str(shared_data / "qald-9" / "qald-9-test-multilingual.json"))
    with adapter("--python", f"{mod}:answer") as srv:
        res = ask(ds, srv.url, "gerbil", AskSettings(langs=["de"], concurrency=8, progress=False))
    with_de = [it for it in ds.items if it.questions.get("de")]
    assert res.counts == {"ok": len(with_de)} and res.langs == ["de"]
    for it in with_de:
        p = res.run.get(it.id)
        assert p.answer.rows[0][0].value == "de|" + it.questions["de"]
    assert len(res.problems) == len(ds.items) - len(with_de)
    assert res.signature_parts()["asked"] == "de"
