"""Fault-suite rows for live systems (issue 23, "Live systems"; issue 27, one retry policy):
``python bench/faults.py --only systems``.

Every row runs for real: ``kgqa`` in subprocesses against misbehaving services that are real
processes on 127.0.0.1 (``tests/systemfaults.py``), the adapter (``kgqa system serve``) and
ports nothing listens on; services are stopped by PID. CK25 (``$KGQA_DATA_DIR``) is the
dataset; the WSE team's answers file is what the services answer.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from systemprocs import CLI, adapter, asking, count, dead_port, env, faulty  # noqa: E402
from systemprocs import requests_log, wait_for_records  # noqa: E402
from clijson import run_json  # noqa: E402

Row = Callable[[str, str, str, str, bool], None]
GROUP = "systems"


def _kgqa(*args: str, extra_env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + list(args), env={**env(), "COLUMNS": "400", **(extra_env or {})},
                          capture_output=True, text=True, timeout=timeout)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _error(r: subprocess.CompletedProcess) -> str:
    m = re.search(r"error: (.*)", _flat(r.stderr))
    return (m.group(1) if m else _flat(r.stderr)[-160:])[:160]


def _outcomes(r: subprocess.CompletedProcess) -> str:
    m = re.search(r"outcomes: [^;\n]*", r.stderr)
    return m.group(0) if m else f"exit {r.returncode}: {_error(r)[:80]}"


#: runs its arguments and prints their exit status and peak RSS (KiB); a small process of its own,
#: because a child's ru_maxrss starts from the RSS of the process it was forked from
_MEASURE = ("import os, subprocess, sys; p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, "
            "stderr=subprocess.DEVNULL); _, st, ru = os.wait4(p.pid, 0); "
            "print(os.waitstatus_to_exitcode(st), ru.ru_maxrss)")


def _rss_mib(args: list[str]) -> tuple[int, float]:
    """Exit status and peak RSS (MiB) of ``kgqa ARGS`` in a child process."""
    r = subprocess.run([sys.executable, "-c", _MEASURE, *CLI, *args], env={**env(), "COLUMNS": "400"},
                       capture_output=True, text=True)
    code, kib = r.stdout.split()
    return int(code), int(kib) / 1024


def system_rows(row: Row, tmp: Path, data: Path) -> None:
    answers = data / "ck25-runs" / "WSE" / "ck25_answers.json"
    kg = data / "ck25" / "graphs" / "prod-inst.ttl"
    if not answers.is_file():
        row(GROUP, "live-system rows", "CK25 data present", f"{answers} missing", False)
        return
    tmp = tmp / "systems"
    tmp.mkdir(parents=True, exist_ok=True)
    team = json.loads(answers.read_text(encoding="utf-8"))
    texts = [e["question"] for e in team]
    _failing_system_rows(row, tmp, answers)
    _transient_rows(row, tmp, answers, texts)
    _replay_rows(row, tmp, team, kg)
    _echo_rows(row, tmp, answers, texts)
    _credential_rows(row, tmp, answers)
    _memory_rows(row, tmp, answers)
    _session_rows(row, tmp, answers, texts)
    _retry_policy_rows(row, tmp, answers, texts)


# --------------------------------------------------------------------------- a dead system


def _failing_system_rows(row: Row, tmp: Path, answers: Path) -> None:
    url = f"http://127.0.0.1:{dead_port()}/"
    t0 = time.monotonic()
    r = _kgqa("evaluate", "ck25", "--system", url, "--protocol", "text2sparql")
    spent = time.monotonic() - t0
    named = f"connection refused at {url} for " in _flat(r.stderr) and "questions in a row failed to connect" in r.stderr
    row(GROUP, "kgqa evaluate --system <dead port> (text2sparql, default retries)",
        "non-zero exit naming the failure, no table", f"exit {r.returncode} in {spent:.0f} s: {_error(r)}",
        r.returncode != 0 and named and r.stdout == "")
    r = _kgqa("evaluate", "ck25", "--system", url, "--protocol", "text2sparql", "--strict", "--retries", "0")
    row(GROUP, "the same with --strict", "non-zero exit", f"exit {r.returncode}", r.returncode != 0)
    out = tmp / "dead.json"
    r = _kgqa("system", "ask", url, "ck25", "--protocol", "text2sparql", "-o", str(out), "--retries", "0",
              "--no-progress")
    row(GROUP, "kgqa system ask <dead port>", "non-zero exit, no run file of failures",
        f"exit {r.returncode}, run file {'written' if out.exists() else 'not written'}: {_error(r)[:90]}",
        r.returncode != 0 and not out.exists() and "connection refused" in r.stderr)
    r = _kgqa("evaluate", "ck25", "--system", url, "--protocol", "text2sparql", "--retries", "0", "--allow-failures",
              "-f", "json")
    outcomes = run_json(r.stdout)["outcomes"] if r.returncode == 0 else {}
    r3 = _kgqa("evaluate", "ck25", "--system", url, "--protocol", "text2sparql", "--retries", "0", "--allow-failures",
               "--strict", "-f", "json")
    row(GROUP, "--allow-failures (and with --strict)", "scored anyway, exit 0 (--strict: exit 3)",
        f"exit {r.returncode}, outcomes {outcomes}; --strict exit {r3.returncode}",
        r.returncode == 0 and outcomes == {"http_error": 50} and r3.returncode == 3)


# --------------------------------------------------------------------------- transient failures


def _transient_rows(row: Row, tmp: Path, answers: Path, texts: list[str]) -> None:
    port = dead_port()
    url = f"http://127.0.0.1:{port}/"
    out = tmp / "comeback.json"
    args = ["system", "ask", url, "ck25", "--protocol", "text2sparql", "-o", str(out), "--retries", "0",
            "--no-progress", "-c", "8"]
    down = _kgqa(*args)
    with faulty(answers, port=port) as srv:
        up = _kgqa(*args)
        asked = count(srv)["total"]
    row(GROUP, "service down, then back on its port: the same command again",
        "exit non-zero, then all 50 asked again and answered (failures journalled as transient)",
        f"exit {down.returncode}, then exit {up.returncode} asking {asked}", down.returncode != 0 and up.returncode == 0
        and asked == 50)
    faults = {texts[0]: ["503"], texts[1]: ["404"], texts[2]: ["429:0"], texts[3]: ["drop"]}
    with faulty(answers, faults, workdir=tmp) as srv:
        base = ["system", "ask", srv.url, "ck25", "--protocol", "gerbil", "-o", str(tmp / "transient.json"),
                "--retries", "1", "--no-progress", "-c", "8"]
        r1 = _kgqa(*base)
        n1 = count(srv)["by_question"]
        r2 = _kgqa(*base)
        n2 = count(srv)["by_question"]
    again = {k: n2.get(texts[k], 0) - n1.get(texts[k], 0) for k in range(5)}
    row(GROUP, "503 / 404 / 429 / dropped connection, then a rerun",
        "rerun asks the 503, 429 and dropped ones (2 attempts each), not the 404 nor an answered one",
        f"exits {r1.returncode}, {r2.returncode}; asked again per question: {again}",
        r1.returncode == r2.returncode == 0 and again == {0: 2, 1: 0, 2: 2, 3: 2, 4: 0})


# --------------------------------------------------------------------------- replay


def _replay_rows(row: Row, tmp: Path, team: list[dict], kg: Path) -> None:
    other = [dict(e, dataset="https://text2sparql.aksw.org/2025/corporate") for e in team]
    run = tmp / "other_iri_answers.json"
    run.write_text(json.dumps(other), encoding="utf-8")
    file_doc = _kgqa("evaluate", "ck25", str(run), "--kg", str(kg), "-p", "text2sparql", "-f", "json")
    with adapter("--run", str(run), "--protocol", "text2sparql") as srv:
        live = _kgqa("evaluate", "ck25", "--system", srv.url, "--protocol", "text2sparql", "--kg", str(kg),
                     "-p", "text2sparql", "-f", "json")
        health = json.loads(subprocess.run([sys.executable, "-c", "import httpx,sys; print(httpx.get(sys.argv[1], "
                                            "trust_env=False).text)", srv.url + "health"], capture_output=True,
                                           text=True).stdout)
    try:
        a = run_json(file_doc.stdout)["aggregate"]["set_F"]
        b = run_json(live.stdout)["aggregate"]["set_F"]
    except (ValueError, KeyError):
        a = b = None
    row(GROUP, "replay a team file naming its dataset with another IRI (kgqa system serve --run)",
        "served by question with one warning; same score as the file",
        f"responses {health['requests']['responses']}, set_F {b} vs file {a}, warnings {len(health['warnings'])}",
        a is not None and a == b and health["requests"]["responses"] == {"200": 50} and len(health["warnings"]) == 1)
    blank = [dict(e) for e in team]
    blank[0]["query"], blank[1]["query"] = "", " "
    run = tmp / "blank_answers.json"
    run.write_text(json.dumps(blank), encoding="utf-8")
    file_doc = run_json(_kgqa("evaluate", "ck25", str(run), "--kg", str(kg), "-p", "text2sparql", "-f",
                                "json").stdout)
    with adapter("--run", str(run), "--protocol", "text2sparql") as srv:
        live_doc = run_json(_kgqa("evaluate", "ck25", "--system", srv.url, "--protocol", "text2sparql", "--kg",
                                    str(kg), "-p", "text2sparql", "-f", "json").stdout)
        health = json.loads(subprocess.run([sys.executable, "-c", "import httpx,sys; print(httpx.get(sys.argv[1], "
                                            "trust_env=False).text)", srv.url + "health"], capture_output=True,
                                           text=True).stdout)
    lab = lambda doc: [q["outcome"] for q in doc["questions"][:2]]  # noqa: E731
    row(GROUP, "replayed run with blank queries", "missing, as file evaluation says; no HTTP 500, no retries",
        f"live {lab(live_doc)} vs file {lab(file_doc)}; responses {health['requests']['responses']}",
        lab(live_doc) == lab(file_doc) and health["requests"]["responses"] == {"200": 50})


# --------------------------------------------------------------------------- echo checks


def _echo_rows(row: Row, tmp: Path, answers: Path, texts: list[str]) -> None:
    for kind, label in (("echo_lower", "a lower-cased echo"), ("echo_nopunct", "an echo without punctuation")):
        with faulty(answers, {t: [kind] for t in texts}, workdir=tmp) as srv:
            r = _kgqa("system", "ask", srv.url, "ck25", "--protocol", "gerbil", "-o", str(tmp / f"{kind}.jsonl"),
                      "--no-progress", "-c", "8")
        row(GROUP, f"{label} of every question", "outcomes: ok 50", _outcomes(r), "outcomes: ok 50" in r.stderr)
    with faulty(answers, {t: ["wrong_question"] for t in texts}, workdir=tmp) as srv:
        strict = _kgqa("system", "ask", srv.url, "ck25", "-o", str(tmp / "wrong.jsonl"), "--no-progress", "-c", "8",
                       "--allow-failures", "--fresh")
        loose = _kgqa("system", "ask", srv.url, "ck25", "-o", str(tmp / "wrong.jsonl"), "--no-progress", "-c", "8",
                      "--no-echo-check", "--fresh")
    row(GROUP, "an echo of another question; then --no-echo-check",
        "outcomes: malformed_response 50; then outcomes: ok 50", f"{_outcomes(strict)}; then {_outcomes(loose)}",
        "outcomes: malformed_response 50" in strict.stderr and "outcomes: ok 50" in loose.stderr)


# --------------------------------------------------------------------------- credentials


def _credential_rows(row: Row, tmp: Path, answers: Path) -> None:
    pw, key, hdr = "s3cretPW", "apik3yVALUE", "headerS3CRET"
    d = tmp / "creds"
    d.mkdir(exist_ok=True)
    with faulty(answers) as srv:
        url = f"http://alice:{pw}@127.0.0.1:{srv.port}/?apikey={key}"
        a = _kgqa("system", "ask", url, "ck25", "--protocol", "text2sparql", "-o", str(d / "out.json"),
                  "--no-progress", extra_env={"KGQA_SYSTEM_HEADERS": f"X-Api-Key:{hdr}"})
        b = _kgqa("evaluate", "ck25", "--system", url, "--protocol", "text2sparql", "--header", f"X-Api-Key:{hdr}",
                  "--journal", str(d / "eval.journal.jsonl"), "--save", str(d / "eval.json"), "-f", "json",
                  "--kg", "ck25")
        log = requests_log(srv)
    texts = [p.read_text(encoding="utf-8") for p in d.iterdir()] + [a.stdout, a.stderr, b.stdout, b.stderr]
    hits = {s: sum(t.count(s) for t in texts) for s in (pw, key, hdr)}
    sent = (log[0]["headers"].get("Authorization", "").startswith("Basic ") and f"apikey={key}" in log[0]["path"]
            and log[0]["headers"].get("X-Api-Key") == hdr)
    sig = run_json(b.stdout)["signature"] if b.returncode == 0 else ""
    row(GROUP, "password + ?apikey= in the URL, --header / KGQA_SYSTEM_HEADERS",
        "all sent; none in output, journals, saved evaluation, terminal or signature",
        f"sent {sent}; occurrences {hits}; signature system:{sig.split('system:')[1].split('|')[0] if sig else '?'}",
        sent and not any(hits.values()) and f"system:http://127.0.0.1:{srv.port}|" in sig)


# --------------------------------------------------------------------------- memory


def _memory_rows(row: Row, tmp: Path, answers: Path) -> None:
    with faulty(answers) as srv:
        rc0, base = _rss_mib(["system", "ask", srv.url, "ck25", "-o", str(tmp / "plain.jsonl"), "--no-progress",
                              "-c", "8"])
    texts = [e["question"] for e in json.loads(answers.read_text(encoding="utf-8"))]
    cap = 16
    with faulty(answers, {t: ["gzipbomb:2048"] for t in texts}, workdir=tmp) as srv:
        rc8, peak8 = _rss_mib(["system", "ask", srv.url, "ck25", "-o", str(tmp / "bomb8.jsonl"), "--no-progress",
                               "-c", "8", "--allow-failures"])
        rc1, peak1 = _rss_mib(["system", "ask", srv.url, "ck25", "-o", str(tmp / "bomb1.jsonl"), "--no-progress",
                               "-c", "1", "--allow-failures"])
    refused = sum(1 for line in (tmp / "bomb8.jsonl").read_text().splitlines()
                  if '"refused"' in line) if (tmp / "bomb8.jsonl").exists() else 0
    bound = base + 8 * 2 * cap
    row(GROUP, "every answer a 2 MB gzip body inflating to 2 GiB, 8 and 1 in flight",
        f"all refused; peak RSS <= plain run + 8 x 2 x {cap} MiB = {bound:.0f} MiB",
        f"{refused} refused; peak RSS {peak8:.0f} MiB at 8, {peak1:.0f} MiB at 1 (plain run {base:.0f} MiB)",
        rc0 == rc8 == rc1 == 0 and refused == 50 and peak8 <= bound and peak1 <= bound)


# --------------------------------------------------------------------------- lock, rate, signature, Ctrl-C


def _session_rows(row: Row, tmp: Path, answers: Path, texts: list[str]) -> None:
    out = tmp / "locked.jsonl"
    journal = Path(str(out) + ".journal.jsonl")
    with faulty(answers, latency=0.2) as srv:
        args = ["system", "ask", srv.url, "ck25", "-o", str(out), "--protocol", "text2sparql", "-c", "2", "--no-progress"]
        ps = [subprocess.Popen(CLI + args, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for _ in range(2)]
        errs = [p.communicate(timeout=300)[1] for p in ps]
        total = count(srv)["total"]
    codes = sorted(p.returncode for p in ps)
    row(GROUP, "two runs on one output file at once", "50 requests for 50 questions; the second run refused",
        f"{total} requests; exits {codes}", total == 50 and codes == [0, 2]
        and any("another kgqa session" in _flat(e) for e in errs))
    with faulty(answers) as srv:
        _kgqa("system", "ask", srv.url, "ck25", "-o", str(tmp / "rps.jsonl"), "--protocol", "text2sparql", "--rps", "10",
              "-c", "8", "--no-progress")
        times = [x["t"] for x in requests_log(srv)]
    gaps = [round((b - a) * 1000, 1) for a, b in zip(times, times[1:])]
    row(GROUP, "--rps 10 -c 8 (arrival times at the service)",
        "no burst: every gap near 1/rps = 100 ms, none under 80 ms (server-side jitter)",
        f"first gaps {gaps[:4]} ms, smallest {min(gaps)} ms", len(gaps) == 49 and min(gaps) >= 80)
    journal = tmp / "resumed.jsonl"
    with faulty(answers, {texts[0]: ["503", "ok"]}, workdir=tmp) as srv:
        base = ["evaluate", "ck25", "--system", srv.url, "--protocol", "text2sparql", "--journal", str(journal),
                "--retries", "0", "-f", "json", "--kg", "ck25"]  # answers are queries: executed, as organisers do
        first = _kgqa(*base, "--concurrency", "2")
        resumed = _kgqa(*base, "--concurrency", "8", "--system-timeout", "5")
    sig = lambda r: re.search(r"client:([^|]*)", run_json(r.stdout)["signature"]).group(1) if r.returncode == 0 else "?"  # noqa: E731
    row(GROUP, "resume a journal under other settings", "signature names the settings the answers came from",
        f"first client:{sig(first)}; resumed client:{sig(resumed)}",
        sig(first) == "c2,t60,r0" and sig(resumed) == "c2,t60,r0+c8,t5,r0")
    out = tmp / "ctrlc.jsonl"
    journal = Path(str(out) + ".journal.jsonl")
    with faulty(answers, latency=0.1) as srv:
        with asking(["system", "ask", srv.url, "ck25", "-o", str(out), "-c", "2", "--no-progress", "--fresh"]) as p:
            wait_for_records(p, journal, 5)
            os.kill(p.pid, signal.SIGINT)
            p.wait(60)
            err = p.stderr.read()
        line = next((x.strip() for x in err.splitlines() if x.strip().startswith("kgqa system ask")), "")
        kept = len(journal.read_text().splitlines()) - 1
        n0 = count(srv)["total"]
        again = _kgqa(*shlex.split(line)[1:]) if line else None
        n1 = count(srv)["total"]
    row(GROUP, "Ctrl-C during kgqa system ask", "exit 130 and the exact command that resumes (asks only the rest)",
        f"exit {p.returncode}; printed {line[:60]!r}...; rerun asked {n1 - n0} of the {50 - kept} left",
        p.returncode == 130 and again is not None and again.returncode == 0 and n1 - n0 == 50 - kept)


# --------------------------------------------------------------------------- one retry policy


def _retry_policy_rows(row: Row, tmp: Path, answers: Path, texts: list[str]) -> None:
    from faultserver import FaultServer, Reply

    from kgqa.execute.endpoint import SparqlEndpoint
    from kgqa.execute.live import AskSettings, ask
    from kgqa.load import load_dataset

    with FaultServer() as server:
        server.handler = lambda req: Reply.error(429, "quota", headers={"Retry-After": "100"})
        with SparqlEndpoint(server.url("/sparql"), backoff=0.0, max_backoff=5.0) as e:
            out = e.execute("ASK {}", timeout=300)
    ds = load_dataset("ck25")
    ds.items[:] = ds.items[:2]
    with faulty(answers, {t: ["429:100"] for t in texts[:2]}, workdir=tmp) as srv:
        res = ask(ds, srv.url, "text2sparql", AskSettings(max_backoff=5.0, allow_failures=True, progress=False))
    tail = "retry after 100 s, more than the 5 s kgqa waits"
    row(GROUP, "429 with Retry-After: 100 (max backoff 5 s) to the endpoint client and the live-system client",
        "both give up at once with the same reason (one retry policy)",
        f"endpoint: {out.message[:90]!r}; system: {res.records[0]['message'][:90]!r}",
        tail in out.message and all(r["message"].endswith(tail + ")") for r in res.records))
