"""A live system never turns into a score it did not earn (issue 23, live systems; issue 27,
one retry policy). Every service is a real process on a free loopback port
(tests/systemfaults.py, the adapter), stopped by its PID; the client runs in-process or as
``kgqa`` in a process of its own: forked from the test process's zygote, its imports done
(tests/zygote.py), or, in the dead-system test, a fresh interpreter (:func:`cli`)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import subprocess
import time
import tracemalloc

import httpx
import pytest

from kgqa.execute.retry import GaveUp, RateLimiter, Retryable, RetryPolicy
from kgqa.execute.live import AskSettings, SystemFailed, ask, ask_to_file
from kgqa.execute.live.client import display_url, failure_reason, origin_of
from kgqa.execute.live.protocols import same_text
from kgqa.load import load_dataset, load_run
from kgqa.model import Dataset, InputError, Status
from conftest import run_cli
from systemprocs import CLI, adapter, asking, cli_run, count, dead_port, env, faulty, requests_log, wait_for_records


@pytest.fixture
def answers(shared_data):
    return shared_data / "ck25-runs" / "WSE" / "ck25_answers.json"


@pytest.fixture(scope="module")
def ck25(shared_data):
    return load_dataset("ck25")


def texts(ds: Dataset) -> dict[int, str]:
    return {int(it.id.split(":")[1]): it.questions["en"] for it in ds.items}


def first(ds: Dataset, n: int) -> Dataset:
    return Dataset(ds.name, ds.items[:n], ds.format, ds.source, [], ds.metadata)


def cli(*args: str, extra_env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    e = {**env(), "COLUMNS": "400", **(extra_env or {})}
    return subprocess.run(CLI + list(args), env=e, capture_output=True, text=True, timeout=timeout)


def flat(text: str) -> str:
    return " ".join(text.split())


def quiet(**kw) -> AskSettings:
    return AskSettings(progress=False, **kw)


# --------------------------------------------------------------------------- a failing system is an error


def test_dead_system_is_an_error_naming_the_failure_not_a_table_of_zeros(tmp_path, shared_data, capsys):
    port = dead_port()
    url = f"http://127.0.0.1:{port}/"
    r = cli("evaluate", "ck25", "--system", url, "--protocol", "text2sparql", "--retries", "0", "--concurrency", "8")
    assert r.returncode == 2, r.stdout + r.stderr
    # the circuit breaker stops asking once 5 questions in a row could not connect
    m = re.search(rf"connection refused at {re.escape(url)} for (\d+) of (\d+) questions; stopped after 5 "
                  r"questions in a row failed to connect, (\d+) question\(s\) not asked", flat(r.stderr))
    assert m and m.group(1) == m.group(2) and 5 <= int(m.group(1)) <= 13 and int(m.group(1)) + int(m.group(3)) == 50
    assert "--allow-failures" in flat(r.stderr) and r.stdout == ""
    # the rest in this process (the same main as the kgqa command; the process start-up is checked above)
    out = tmp_path / "run.json"
    code, _, err = run_cli(capsys, "system", "ask", url, "ck25", "--protocol", "text2sparql", "-o", str(out),
                           "--retries", "0", "-c", "8", "--no-progress")
    assert code == 2 and f"connection refused at {url} for " in flat(err)
    assert not out.exists()  # no run of zeros is written ...
    journal = tmp_path / "run.json.journal.jsonl"
    recs = [json.loads(x) for x in journal.read_text().splitlines()[1:]]
    assert 5 <= len(recs) <= 13 and all(x["transient"] for x in recs)  # ... but the journal is kept for the rerun
    # --allow-failures scores it anyway; --strict still fails on it (status 3)
    code, stdout, err = run_cli(capsys, "evaluate", "ck25", "--system", url, "--protocol", "text2sparql", "--retries",
                                "0", "--concurrency", "8", "--allow-failures", "-f", "json")
    assert code == 0, err
    assert json.loads(stdout)["runs"][0]["outcomes"] == {"http_error": 50}
    code, _, err = run_cli(capsys, "evaluate", "ck25", "--system", url, "--protocol", "text2sparql", "--retries", "0",
                           "--concurrency", "8", "--allow-failures", "--strict", "-f", "json")
    assert code == 3 and "the live system failed: connection refused" in flat(err)


def test_a_system_that_dies_midway_trips_the_breaker_and_a_rerun_asks_only_the_rest(ck25, answers, tmp_path):
    ds = first(ck25, 20)
    q = texts(ds)
    journal = tmp_path / "j.jsonl"
    with faulty(answers, {q[i]: ["drop"] for i in range(6, 21)}, workdir=tmp_path) as srv:
        with pytest.raises(SystemFailed) as e:
            ask(ds, srv.url, "text2sparql", quiet(concurrency=1, retries=0), journal=journal)
        assert e.value.result.counts["ok"] == 5 and e.value.result.not_asked == 10
        assert "for 5 of 10 questions; stopped after 5 questions in a row failed to connect, 10 question(s) " \
               "not asked" in str(e.value)
        asked = count(srv)
        # the breaker is off when failures are allowed, and with breaker=0: every question is asked
        res = ask(ds, srv.url, "text2sparql", quiet(concurrency=1, retries=0, breaker=0, max_failures=1.0))
        assert res.not_asked == 0 and len(res.records) == 20
    port = int(srv.url.rstrip("/").rsplit(":", 1)[1])
    with faulty(answers, port=port) as healthy:  # back up: the rerun asks the 15 it lacks, no more
        res = ask(ds, healthy.url, "text2sparql", quiet(concurrency=1, retries=0), journal=journal)
        assert res.counts == {"ok": 20} and res.asked == 15 and res.reused == 5
    assert asked["total"] == 10  # the dying system was asked the first ten questions only


def test_failure_threshold_counts_more_than_half(ck25, answers, tmp_path):
    ds = first(ck25, 10)
    q = texts(ds)
    faults = {q[i]: ["404"] for i in range(1, 6)}  # 5 of 10: not more than half
    with faulty(answers, faults, workdir=tmp_path) as srv:
        res = ask(ds, srv.url, "text2sparql", quiet(concurrency=4))
        assert res.counts == {"http_error": 5, "ok": 5}
        with pytest.raises(SystemFailed, match="HTTP 404 at .* for 5 of 10 questions"):
            ask(ds, srv.url, "text2sparql", quiet(concurrency=4, max_failures=0.4))
        ok = ask(ds, srv.url, "text2sparql", quiet(concurrency=4, max_failures=0.4, allow_failures=True))
    assert ok.failure_summary() == f"HTTP 404 at {srv.url} for 5 of 10 questions"


def test_every_question_refused_405_says_the_url_may_serve_another_protocol(ck25, answers, tmp_path):
    ds = first(ck25, 4)
    with faulty(answers, {q: ["405"] for q in texts(ds).values()}, workdir=tmp_path) as srv:
        with pytest.raises(SystemFailed) as e:
            ask(ds, srv.url, "text2sparql", quiet(concurrency=2, retries=0))
    assert f"HTTP 405 at {srv.url} for 4 of 4 questions; the URL does not take text2sparql's GET: does it " \
           "serve another protocol?" in str(e.value)
    assert "--protocol text2sparql" in str(e.value)


def test_failure_reasons_group_one_cause():
    assert failure_reason({"outcome": "http_error", "message": "connection error: ConnectError: connection refused "
                                                               "(gave up after 4 attempts)"}) == "connection refused"
    assert failure_reason({"outcome": "http_error", "http_status": 503, "message": "HTTP 503: x"}) == "HTTP 503"
    assert failure_reason({"outcome": "timeout", "message": "no complete response within 3 s"}) == "timeout"


# --------------------------------------------------------------------------- transient failures


def test_transient_failures_are_asked_again_by_the_next_run_definitive_ones_not(ck25, answers, tmp_path):
    ds = first(ck25, 10)
    q = texts(ds)
    faults = {q[1]: ["503", "503", "ok"], q[2]: ["404", "ok"], q[3]: ["drop", "drop", "ok"], q[4]: ["429:0", "429:0", "ok"]}
    journal = tmp_path / "j.jsonl"
    with faulty(answers, faults, workdir=tmp_path) as srv:
        first_run = ask(ds, srv.url, "gerbil", quiet(retries=1, backoff=0.01), journal=journal)
        by = {r["id"]: r for r in first_run.records}
        assert [by[f"ck25:{i}-en"]["outcome"] for i in (1, 2, 3, 4)] == ["http_error"] * 4
        assert [by[f"ck25:{i}-en"]["transient"] for i in (1, 2, 3, 4)] == [True, False, True, True]
        second = ask(ds, srv.url, "gerbil", quiet(retries=1, backoff=0.01), journal=journal)
        asked = count(srv)["by_question"]
        third = ask(ds, srv.url, "gerbil", quiet(retry_failed=True), journal=journal)
    assert second.asked == 3 and second.reused == 7
    assert {r["id"]: r["outcome"] for r in second.records if r["outcome"] != "ok"} == {"ck25:2-en": "http_error"}
    assert asked[q[1]] == 3 and asked[q[2]] == 1 and asked[q[3]] == 3 and asked[q[4]] == 3
    assert third.asked == 1 and third.counts == {"ok": 10}  # --retry-failed: the definitive one too


# --------------------------------------------------------------------------- replay by question


def test_replay_answers_a_run_that_names_its_dataset_with_another_iri(answers, tmp_path, shared_data):
    team = json.loads(answers.read_text())
    for entry in team:
        entry["dataset"] = "https://text2sparql.aksw.org/2025/corporate"  # another IRI (no trailing slash)
    run_file = tmp_path / "team_answers.json"
    run_file.write_text(json.dumps(team), encoding="utf-8")
    with adapter("--run", str(run_file), "--protocol", "text2sparql") as srv:
        res = ask(load_dataset("ck25"), srv.url, "text2sparql", quiet(concurrency=8))
        health = httpx.get(srv.url + "health", trust_env=False).json()
    assert res.counts == {"ok": 50}
    assert [r["sparql"] for r in res.records] == [e["query"] for e in team]
    assert health["requests"]["responses"] == {"200": 50}
    assert len(health["warnings"]) == 1 and "answering by question" in health["warnings"][0]


def test_blank_queries_in_a_replayed_run_are_missing_without_errors_or_retries(answers, tmp_path, ck25):
    team = json.loads(answers.read_text())
    team[0]["query"], team[1]["query"] = "", "  "
    run_file = tmp_path / "blank_answers.json"
    run_file.write_text(json.dumps(team), encoding="utf-8")
    direct = load_run(run_file)
    for protocol in ("text2sparql", "gerbil"):
        with adapter("--run", str(run_file), "--protocol", protocol) as srv:
            res = ask(ck25, srv.url, protocol, quiet(concurrency=8))
            health = httpx.get(srv.url + "health", trust_env=False).json()
        assert health["requests"]["responses"] == {"200": 50}, protocol  # no 500, so nothing retried
        assert res.counts == {"ok": 50} and res.requests == 50
        for i in (0, 1):
            live, file = res.run.predictions[i], direct.predictions[i]
            assert (live.status, live.sparql, live.answer) == (file.status, file.sparql, file.answer) == \
                (Status.OK, None, None)


# --------------------------------------------------------------------------- echo checks


def test_echo_checks_ignore_case_whitespace_and_punctuation(ck25, answers, tmp_path):
    assert same_text("In which department is Ms. Brant?", "in which  department is ms brant")
    assert not same_text("In which department is Ms. Brant?", "In which department is Mr. Brant?")
    ds = first(ck25, 6)
    q = texts(ds)
    faults = {q[1]: ["echo_lower"], q[2]: ["echo_nopunct"], q[3]: ["wrong_question"]}
    with faulty(answers, faults, workdir=tmp_path) as srv:
        for protocol in ("gerbil", "text2sparql"):
            res = ask(ds, srv.url, protocol, quiet())
            got = [r["outcome"] for r in res.records[:3]]
            assert got == ["ok", "ok", "malformed_response"], protocol
            off = ask(ds, srv.url, protocol, quiet(echo_check=False))
            assert off.counts == {"ok": 6}, protocol
    assert "noecho" in off.signature_parts()["client"]


# --------------------------------------------------------------------------- credentials


def test_credentials_are_sent_but_never_written(answers, tmp_path, shared_data, capsys):
    """``system ask`` as a process, ``evaluate --system`` in this process (the same main)."""
    password, key, header = "s3cretpw", "k3yvalue123", "h3adersecret"
    out = tmp_path / "out.json"
    save = tmp_path / "eval.json"
    with faulty(answers) as srv:
        url = f"http://alice:{password}@127.0.0.1:{srv.port}/?apikey={key}"
        r = cli_run(["system", "ask", url, "ck25", "--protocol", "text2sparql", "-o", str(out), "--no-progress",
                     "--header", "X-Trace:visible"], {"COLUMNS": "400", "KGQA_SYSTEM_HEADERS": f"X-Api-Key: {header}"})
        assert r.returncode == 0, r.stderr
        code2, out2, err2 = run_cli(capsys, "evaluate", "ck25", "--system", url, "--protocol", "text2sparql",
                                    "--journal", str(tmp_path / "eval.journal.jsonl"), "--header",
                                    f"X-Api-Key:{header}", "-f", "json", "--save", str(save), "-p", "text2sparql",
                                    "--kg", "ck25")
        assert code2 == 0, err2
        log = requests_log(srv)
    # sent: basic auth from the URL, the headers, and the URL's own query string with the parameters
    first_request = log[0]
    assert first_request["headers"]["Authorization"].startswith("Basic ")
    assert first_request["headers"]["X-Api-Key"] == header and first_request["headers"]["X-Trace"] == "visible"
    assert f"apikey={key}" in first_request["path"] and "question=" in first_request["path"]
    # written nowhere: output, journals, saved evaluation, stdout/stderr, signature
    written = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir() if p.is_file()}
    assert {"out.json", "out.json.journal.jsonl", "eval.journal.jsonl", "eval.json"} <= set(written)
    for secret in (password, key, header):
        for name, text in {**written, "stdout": r.stdout + out2, "stderr": r.stderr + err2}.items():
            assert secret not in text, (secret, name)
    sig = json.loads(out2)["runs"][0]["signature"]
    assert f"system:http://127.0.0.1:{srv.port}|" in sig and "alice" not in sig
    assert json.loads(written["out.json"])[0]["endpoint"] == f"http://***@127.0.0.1:{srv.port}/?apikey=***"


def test_display_url_and_origin():
    assert display_url("https://u:p@h.example:8443/qa?lang=en&token=abc") == "https://***@h.example:8443/qa?lang=en&token=***"
    assert origin_of("https://u:p@h.example/qa?x=1") == "https://h.example:443"
    assert display_url("http://127.0.0.1:9/") == "http://127.0.0.1:9/"


def test_bad_headers_are_refused_without_echoing_their_value(tmp_path, capsys):
    code, out, err = run_cli(capsys, "system", "ask", "http://127.0.0.1:9/", "ck25", "-o", str(tmp_path / "o.json"),
                             "--header", "novalue")
    assert code == 2 and "NAME:VALUE" in flat(err) and "novalue" not in err + out
    with pytest.raises(Exception, match="not a valid header"):
        AskSettings(headers={"Bad Name": "v"})


# --------------------------------------------------------------------------- memory


def test_a_gzip_bomb_is_refused_while_decompressing_within_the_cap(ck25, answers, tmp_path):
    ds = first(ck25, 10)
    q = texts(ds)
    with faulty(answers, {q[i]: ["gzipbomb:64"] for i in range(1, 9)}, workdir=tmp_path) as srv:
        tracemalloc.start()
        try:
            res = ask(ds, srv.url, "gerbil", quiet(concurrency=2, max_response_bytes=1 << 20, allow_failures=True))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    by = {r["id"]: r for r in res.records}
    assert all(by[f"ck25:{i}-en"]["outcome"] == "refused" for i in range(1, 9))
    assert "larger than 1048576 bytes" in by["ck25:1-en"]["message"]
    assert by["ck25:9-en"]["outcome"] == by["ck25:10-en"]["outcome"] == "ok"
    # httpx's own decoder inflates a whole network chunk at once (tens of MiB here), and a refused
    # body kept alive by its exception's traceback adds up over requests: kgqa's stays within
    # 2 in flight x the 1 MiB cap (plus what the client itself allocates)
    assert peak < 7 << 20, peak


# --------------------------------------------------------------------------- lock, rate, signature, Ctrl-C


def test_two_runs_on_one_output_never_ask_twice(ck25, answers, tmp_path):
    out = tmp_path / "run.jsonl"
    journal = tmp_path / "run.jsonl.journal.jsonl"
    gate = tmp_path / "answer-question-3"
    args = ["system", "ask", None, "ck25", "--protocol", "text2sparql", "-o", str(out), "-c", "2", "--no-progress"]
    # question 3 is answered only once the gate file exists: the first run is still asking
    # while the second one starts, however long either takes
    with faulty(answers, {texts(ck25)[3]: [f"until:{gate}"]}, workdir=tmp_path) as srv:
        args[2] = srv.url
        with asking(args) as one:
            wait_for_records(one, journal, 2)
            # the second run, in this process: refused at once
            with pytest.raises(InputError, match="another kgqa session is asking into this journal"):
                ask_to_file("ck25", srv.url, out, protocol="text2sparql", settings=quiet())
            assert one.poll() is None  # the first one was still asking meanwhile
            gate.touch()
            one.wait(120)
        total = count(srv)["total"]
    assert one.returncode == 0 and total == 50
    assert len(load_run(out)) == 50


def test_rps_spaces_requests_from_the_very_first_one(ck25, answers, monkeypatch):
    # Every request's headers go out in a slot of the limiter (a burst at start once sent 3 within
    # 1 ms: requests reserved on time went out together after the first connection's set-up).
    # The slots are read on the client: the server's arrival times are not evidence, since a
    # server the machine's load stalls for 0.1 s reads two requests at once whatever the client did.
    slots: list[tuple[float, float]] = []
    real = RateLimiter.sending

    async def sending(self):
        await real(self)
        slots.append((self.next_send - self.interval, time.monotonic()))  # (the slot taken, when it went)

    monkeypatch.setattr(RateLimiter, "sending", sending)
    ds = first(ck25, 6)
    with faulty(answers) as srv:
        ask(ds, srv.url, "text2sparql", quiet(concurrency=8, rps=10))
        assert len(requests_log(srv)) == 6
    assert len(slots) == 6  # the first request too
    starts = [slot for slot, _ in slots]
    assert all(b - a >= 0.1 - 1e-9 for a, b in zip(starts, starts[1:])), starts  # 1/rps apart, in order
    assert all(went >= slot for slot, went in slots)  # none went before its slot


def test_rate_limiter_sends_are_spaced_even_when_reservations_bunch():
    async def go() -> list[float]:
        lim = RateLimiter(20)
        sent: list[float] = []

        async def one(delay: float) -> None:
            await lim.acquire()
            await asyncio.sleep(delay)  # e.g. a first connection set-up
            await lim.sending()
            sent.append(time.monotonic())

        await asyncio.gather(one(0.2), one(0.0), one(0.0))
        return sorted(sent)

    sent = asyncio.run(go())
    assert min(b - a for a, b in zip(sent, sent[1:])) >= 0.045


def test_signature_names_the_settings_the_answers_were_obtained_under(ck25, answers, tmp_path):
    ds = first(ck25, 6)
    q = texts(ds)
    journal = tmp_path / "j.jsonl"
    with faulty(answers, {q[1]: ["503", "ok"]}, workdir=tmp_path) as srv:
        one = ask(ds, srv.url, "text2sparql", quiet(concurrency=2, retries=0), journal=journal)
        two = ask(ds, srv.url, "text2sparql", quiet(concurrency=8, retries=0), journal=journal)
        three = ask(ds, srv.url, "text2sparql", quiet(concurrency=4, timeout=5), journal=journal)
    assert one.signature_parts()["client"] == "c2,t60,r0"
    assert two.asked == 1 and two.signature_parts()["client"] == "c2,t60,r0+c8,t60,r0"
    assert three.asked == 0 and three.signature_parts()["client"] == "c2,t60,r0+c8,t60,r0"


@pytest.mark.slow  # test_system_live's Ctrl-C test runs in the README's command
def test_ctrl_c_prints_the_exact_command_that_resumes(answers, tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    journal = tmp_path / "run.jsonl.journal.jsonl"
    with faulty(answers, latency=0.1) as srv:
        args = ["system", "ask", srv.url, "ck25", "-o", str(out), "--protocol", "text2sparql", "-c", "2",
                "--no-progress", "--fresh"]
        with asking(args) as client:
            wait_for_records(client, journal, 5)
            os.kill(client.pid, signal.SIGINT)
            client.wait(30)
            err = client.stderr.read()
        assert client.returncode == 130, err
        line = next(x.strip() for x in err.splitlines() if x.strip().startswith("kgqa system ask"))
        cmd = shlex.split(line)
        assert "--fresh" not in cmd and cmd[3] == srv.url and cmd[cmd.index("--output") + 1] == str(out)
        kept = len(journal.read_text().splitlines()) - 1
        before = count(srv)["total"]
        code, _, err = run_cli(capsys, *cmd[1:])  # the printed command, run (in this process)
        after = count(srv)["total"]
    assert code == 0, err
    assert after - before == 50 - kept and len(load_run(out)) == 50


# --------------------------------------------------------------------------- one retry policy


def test_one_retry_policy_semantics():
    calls: list[int] = []

    async def failing(k: int) -> str:
        calls.append(k)
        raise Retryable("HTTP 503", status=503)

    policy = RetryPolicy(retries=2, backoff=0.0, max_backoff=1.0)
    with pytest.raises(GaveUp, match=r"HTTP 503 \(gave up after 3 attempts\)"):
        asyncio.run(policy.run(failing))
    assert calls == [0, 1, 2]

    async def wants_long_wait(k: int) -> str:
        raise Retryable("HTTP 429", retry_after=100, status=429)

    with pytest.raises(GaveUp, match="retry after 100 s, more than the 1 s kgqa waits") as e:
        asyncio.run(policy.run(wants_long_wait))
    assert e.value.attempts == 1

    async def flaky(k: int) -> str:
        if k == 0:
            raise Retryable("connection error")
        return "ok"

    assert asyncio.run(policy.run(flaky)) == "ok"
    with pytest.raises(GaveUp, match="would pass the timeout"):
        asyncio.run(RetryPolicy(3, 10.0, 30.0).run(failing, deadline=time.monotonic() + 1))


def test_endpoint_and_live_system_clients_share_the_retry_policy(ck25, answers, tmp_path, monkeypatch):
    from faultserver import FaultServer, Reply

    from kgqa.execute.endpoint import SparqlEndpoint

    used: list[str] = []
    real = RetryPolicy.run

    async def spy(self, attempt, **kw):
        used.append(attempt.__qualname__.split(".")[0])
        return await real(self, attempt, **kw)

    monkeypatch.setattr(RetryPolicy, "run", spy)
    # the same Retry-After longer than max_backoff ends both clients' retries the same way
    with FaultServer() as server:
        server.handler = lambda req: Reply.error(429, "quota", headers={"Retry-After": "100"})
        with SparqlEndpoint(server.url("/sparql"), backoff=0.0, max_backoff=5.0) as e:
            out = e.execute("ASK {}", timeout=300)
    ds = first(ck25, 2)
    with faulty(answers, {q: ["429:100"] for q in texts(ds).values()}, workdir=tmp_path) as srv:
        res = ask(ds, srv.url, "text2sparql", quiet(max_backoff=5.0, allow_failures=True))
    assert used[0] == "SparqlEndpoint" and "_Asker" in used
    assert "retry after 100 s, more than the 5 s kgqa waits" in out.message
    assert all("retry after 100 s, more than the 5 s kgqa waits" in r["message"] for r in res.records)
