"""Fault rows of issue 34, scope 4 ("the holes closed"), each run for real:

- **n!**: a predicted ``GROUP_CONCAT`` over 12 values through ``kgqa evaluate`` (the engine
  check counted 12! orders before: 23 GB); an empty ``SEPARATOR`` in the same run;
- **overflow**: ``"1E999999999999"`` as a run answer and ``"1E100000000"`` as a predicted
  literal, through the CLI and through the web's experiment runner;
- **ssrf**: an endpoint on an allowed host answering 307 to an internal loopback service or to
  169.254.169.254 under the web's URL rule; DNS rebinding between check and connect; a
  download redirected to loopback;
- **yaml**: one 8 MB scalar named by 4,000 aliases (33 GB expanded) as a dataset;
- **killed**: a query worker killed with SIGKILL once (retried: the right answer) and twice
  (final, saying the failure repeats);
- **disk**: ``kgqa evaluate --store`` on a full tmpfs (root) and a database error with a 2 MB
  parameter;
- **echo**: a live system that echoes its URL token and Authorization header in its answer.

Run by ``python bench/faults.py --only holes`` (and by the full suite). Network only to 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for _p in (str(REPO), str(REPO / "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from faultserver import FaultServer, Reply  # noqa: E402
from clijson import run_json  # noqa: E402

Row = Callable[[str, str, str, str, bool], None]
TINY_KG = '<http://x/a> <http://x/p> "a" .\n'


def holes_rows(row: Row, tmp: Path, data: Path) -> None:
    tmp = tmp / "holes"
    tmp.mkdir(parents=True, exist_ok=True)
    kg = tmp / "tiny.nt"
    kg.write_text(TINY_KG, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "KGQA_CACHE_DIR": str(tmp / "cache")}
    concat_rows(row, tmp, kg, env)
    overflow_rows(row, tmp, kg, env)
    ssrf_rows(row, tmp)
    yaml_rows(row, tmp, env)
    killed_rows(row, tmp, kg)
    disk_rows(row, tmp, env)
    echo_rows(row, tmp)


#: ``kgqa`` in a child that writes its own peak RSS (KB; the main process, not its query
#: workers) to the file named by $KGQA_BENCH_RSS when it exits
#: (VmHWM of /proc/self/status: ru_maxrss would keep the forking parent's peak across exec)
_MEASURED = ("import atexit, os\n"
             "def _peak():\n"
             "    with open('/proc/self/status') as fh:\n"
             "        kb = next((line.split()[1] for line in fh if line.startswith('VmHWM:')), '0')\n"
             "    open(os.environ['KGQA_BENCH_RSS'], 'w').write(kb)\n"
             "atexit.register(_peak)\n"
             "from kgqa.cli import main\nmain()\n")


def cli(args: list[str], env: dict, timeout: float = 600) -> tuple[subprocess.CompletedProcess, float, float]:
    """``kgqa ARGS``: (result, seconds, peak RSS of the kgqa process in MB)."""
    rss = Path(env.get("KGQA_CACHE_DIR", "/tmp")).parent / "rss.txt"
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", _MEASURED, *args], env={**env, "KGQA_BENCH_RSS": str(rss)},
                       capture_output=True, text=True, timeout=timeout)
    took = time.monotonic() - t0
    peak = int(rss.read_text() or 0) / 1024 if rss.is_file() else float("nan")
    return r, took, peak


def jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def last_line(text: str) -> str:
    lines = [x for x in text.splitlines() if x.strip()]
    return lines[-1] if lines else ""


# --------------------------------------------------------------------------- n!, empty separator


def concat_rows(row: Row, tmp: Path, kg: Path, env: dict) -> None:
    vals = " ".join(f'"{chr(97 + i)}"' for i in range(12))
    ds = jsonl(tmp / "concat-ds.jsonl", [{"id": "12", "question": "q", "answers": ["a b c"]},
                                         {"id": "sep", "question": "q", "answers": ["abc"]}])
    run = jsonl(tmp / "concat-run.jsonl", [
        {"id": "12", "sparql": f"SELECT (GROUP_CONCAT(?o) AS ?g) WHERE {{ VALUES ?o {{ {vals} }} }}"},
        {"id": "sep", "sparql": 'SELECT (GROUP_CONCAT(?o; SEPARATOR="") AS ?g) WHERE { VALUES ?o { "a" "b" "c" } }'}])
    r, took, peak = cli(["evaluate", str(ds), str(run), "--kg", str(kg), "--no-cache", "--format", "json"], env)
    doc = run_json(r.stdout) if r.returncode == 0 else {}
    dep = (doc.get("engine_dependence") or {}) if isinstance(doc, dict) else {}
    row("holes", "predicted GROUP_CONCAT over 12 values (12! = 479 M orders; was 23 GB, killed)",
        "flagged group-concat with a bound, no enumeration; exit 0; bounded memory",
        f"exit {r.returncode}, kinds {dep.get('kinds')}, {took:.1f} s, peak RSS {peak:.0f} MB",
        r.returncode == 0 and dep.get("kinds", {}).get("group-concat") == 2 and peak < 1024)
    f1 = doc.get("aggregate", {}).get("F1") if isinstance(doc, dict) else None
    row("holes", 'GROUP_CONCAT(?o; SEPARATOR="") in a run (was ValueError: empty separator)',
        "a value, scored; the run goes on (exit 0)",
        f"exit {r.returncode}; F1 {f1}; {'Traceback' if 'Traceback' in r.stderr else 'no traceback'}",
        r.returncode == 0 and f1 == 0.5 and "Traceback" not in r.stderr)


# --------------------------------------------------------------------------- decimal overflow


def overflow_rows(row: Row, tmp: Path, kg: Path, env: dict) -> None:
    dec = "http://www.w3.org/2001/XMLSchema#decimal"
    ds = jsonl(tmp / "num-ds.jsonl", [{"id": "1", "question": "q1", "answers": ["1E999999999999"]},
                                      {"id": "2", "question": "q2", "answers": ["5"]},
                                      {"id": "3", "question": "q3", "answers": ["1"]}])
    run = jsonl(tmp / "num-run.jsonl", [
        {"id": "1", "answers": ["1E999999999999"]},
        {"id": "2", "sparql": 'SELECT ?x WHERE { BIND("1E100000000" AS ?x) }'},
        {"id": "3", "sparql": f'SELECT ?x WHERE {{ BIND("1E100000000"^^<{dec}> AS ?x) }}'}])
    r, _, _ = cli(["evaluate", str(ds), str(run), "--kg", str(kg), "--no-cache", "--format", "json"], env)
    f1 = run_json(r.stdout).get("aggregate", {}).get("F1") if r.returncode == 0 else None
    row("holes", 'run answer "1E999999999999", predicted "1E100000000" (plain, xsd:decimal)',
        "values (no decimal.Overflow); exit 0; F1 1/3 (only the equal huge number matches)",
        f"exit {r.returncode}; F1 {f1}; {last_line(r.stderr)[:60] if r.returncode else 'no traceback'}",
        r.returncode == 0 and f1 is not None and abs(f1 - 1 / 3) < 1e-9)

    from kgqa.store import Store
    from kgqa.store.runner import run_experiment

    store = Store(tmp / "web.sqlite")
    sha_ds = store.put_file(ds.read_bytes())
    sha_run = store.put_file(run.read_bytes())
    eid = store.create(dataset="num", run_name="num", profile="kgqa", dataset_file=sha_ds, dataset_filename="num.jsonl",
                       run_file=sha_run, run_filename="run.jsonl", kg="tiny")
    ok = run_experiment(store, eid, kgs={"tiny": str(kg)})
    e = store.get(eid)
    row("holes", "the same files as a web experiment (was 'internal error: Overflow')",
        "finished, with the CLI's F1",
        f"{e.status}: F1 {e.aggregate.get('F1') if e.status == 'finished' else e.message[:60]}",
        ok and e.status == "finished" and abs((e.aggregate.get("F1") or 0) - 1 / 3) < 1e-9)
    store.close()


# --------------------------------------------------------------------------- SSRF through a redirect


def ssrf_rows(row: Row, tmp: Path) -> None:
    import httpx

    from kgqa.execute.endpoint import SparqlEndpoint
    from kgqa.load.registry import DataFile, _download
    from kgqa.model import InputError
    from kgqa.model.urlguard import Guard, GuardedTransport, UrlRefused, UrlRule, using

    web = UrlRule(public_only=True, allowed_hosts=frozenset({"localhost"}))
    secret = Reply.select(["x"], [{"x": {"type": "literal", "value": "internal secret"}}])
    with FaultServer(lambda req: secret, lifetime=120) as internal, FaultServer(lifetime=120) as evil:
        for name, target in [("another loopback port", internal.url("/")),
                             ("169.254.169.254", "http://169.254.169.254/latest/meta-data/")]:
            evil.handler = lambda req, t=target: Reply.ask(True) if (req.query or "").strip() == "ASK {}" else \
                Reply(status=307, headers={"Location": t})
            n0 = len(internal.requests)
            with using(web), SparqlEndpoint(f"http://localhost:{evil.port}/sparql", retries=0) as ep:
                o = ep.execute("SELECT ?x WHERE { ?s ?p ?x }", timeout=10)
            got = len(internal.requests) - n0
            row("holes", f"web (--allowed-url-host localhost): endpoint answers 307 to {name}",
                "refused at the hop (URL rule); the internal service gets 0 requests",
                f"{o.status.value}: {o.message[o.message.find('refused'):][:70]}...; internal got {got}",
                o.status.value == "exec_error" and "refused" in o.message and o.answer is None and got == 0)
        evil.handler = lambda req: Reply(status=307, headers={"Location": internal.url("/file")})
        try:
            with using(web):
                _download(DataFile(path="x.json", url=f"http://localhost:{evil.port}/x.json"), tmp / "x.json", False)
            obs, ok = "downloaded", False
        except InputError as e:
            obs, ok = f"InputError: {str(e).split(': ', 1)[1][:60]}", "refused" in str(e)
        row("holes", "web: a download redirected to loopback", "refused; nothing written",
            obs, ok and not (tmp / "x.json").exists())
        flips = [["93.184.215.14"], ["127.0.0.1"]]
        calls = []

        def resolve(host, port, type=0):
            calls.append(host)
            return [(2, 1, 6, "", (a, port)) for a in flips.pop(0)]

        g = Guard("http://rebind.example/", UrlRule(), resolve=resolve)
        n0 = len(internal.requests)
        try:
            with httpx.Client(transport=GuardedTransport(httpx.HTTPTransport(), g)) as client:
                client.get(f"http://rebind.example:{internal.port}/")
            obs, ok = "connected", False
        except UrlRefused as e:
            obs, ok = f"refused: {str(e)[:50]}...", True
        row("holes", "DNS rebinding: public at the check, 127.0.0.1 at the next look-up",
            "refused; one look-up per check, the connection goes to the checked address",
            f"{obs}; look-ups {len(calls)}; internal got {len(internal.requests) - n0}",
            ok and len(internal.requests) == n0)


# --------------------------------------------------------------------------- YAML by size


def yaml_rows(row: Row, tmp: Path, env: dict) -> None:
    p = tmp / "amplified.yml"
    with open(p, "w", encoding="utf-8") as fh:
        fh.write('a: &a "' + "x" * (8 << 20) + '"\nb: [' + ", ".join(["*a"] * 4000) + "]\n")
    r, took, peak = cli(["datasets", "validate", str(p)], env, timeout=300)
    out = r.stdout + r.stderr
    line = next((x for x in out.splitlines() if "alias bomb" in x), last_line(out))
    row("holes", f"YAML: one 8 MB scalar x 4,000 aliases ({p.stat().st_size / 1e6:.1f} MB file, 33 GB expanded)",
        "one error line before expansion (size cap, not only the alias count); bounded memory",
        f"exit {r.returncode} ({took:.1f} s, peak {peak:.0f} MB): ...{line[line.find('expand'):][:70]}",
        r.returncode != 0 and "alias bomb" in line and "Traceback" not in r.stderr and peak < 2048)


# --------------------------------------------------------------------------- a worker killed from outside


def killed_rows(row: Row, tmp: Path, kg: Path) -> None:
    from kgqa.execute import embedded
    from kgqa.execute.embedded import EmbeddedEngine

    for blocks in (1, 2):
        r, w = os.pipe()
        tries = tmp / f"tries-{blocks}"
        real = embedded.evaluate

        def evaluate(store, query, *a, _tries=tries, _w=w, _blocks=blocks, **k):
            if "# BLOCK" in query:
                with open(_tries, "ab") as fh:
                    fh.write(b".")
                if _tries.stat().st_size <= _blocks:
                    os.write(_w, f"{os.getpid()}\n".encode())
                    while True:
                        signal.pause()
            return real(store, query, *a, **k)

        def kill(_r=r, _blocks=blocks):
            with os.fdopen(_r, "rb", buffering=0) as fh:
                for _ in range(_blocks):
                    os.kill(int(fh.readline()), signal.SIGKILL)

        embedded.evaluate = evaluate  # workers are forked after this: they run the blocking wrapper
        t = threading.Thread(target=kill, daemon=True)
        t.start()
        try:
            with EmbeddedEngine.from_files([kg], workers=1) as engine:
                o = engine.execute_many(["SELECT ?o WHERE { ?s ?p ?o } # BLOCK"], timeout=120)[0]
        finally:
            embedded.evaluate = real
            os.close(w)
        t.join(10)
        if blocks == 1:
            row("holes", "query worker killed with SIGKILL once (OOM killer, kill -9)",
                "retried on a fresh worker: the query's own answer",
                f"{o.status.value}" + (f": {o.answer.rows[0][0].value!r}" if o.answer else f": {o.message[:60]}"),
                o.status.value == "ok" and o.answer.rows[0][0].value == "a")
        else:
            row("holes", "the same query's worker killed again on the retry",
                "final exec_error saying the failure repeats",
                f"{o.status.value}: ...{o.message[o.message.find('exit code'):][:80]}...",
                o.status.value == "exec_error" and "the failure repeats" in o.message)


# --------------------------------------------------------------------------- disk full, database errors


def disk_rows(row: Row, tmp: Path, env: dict) -> None:
    from sqlalchemy import event

    from kgqa.store import Store, StoreError

    ds = jsonl(tmp / "disk-ds.jsonl", [{"id": "1", "question": "q", "answers": ["1"]}])
    full = tmp / "full"
    full.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(full)],
                                                   capture_output=True).returncode == 0
    if mounted:
        try:
            with open(full / "fill", "wb") as fh:
                try:
                    fh.write(b"\0" * (256 << 10))
                except OSError:
                    pass
            r, took, _ = cli(["evaluate", str(ds), str(ds), "--store", str(full / "x.sqlite")], env)
            line = last_line(r.stderr)
            row("holes", "kgqa evaluate --store on a full disk (128 KB tmpfs, filled)",
                "one error line naming it (exit 2), no traceback; the scores printed",
                f"exit {r.returncode}: {line[:100]}...",
                r.returncode == 2 and "No space left on device" in line and "Traceback" not in r.stderr
                and "AnswerEM" in r.stdout)
        finally:
            subprocess.run(["umount", "-l", str(full)], capture_output=True)
    else:
        row("holes", "kgqa evaluate --store on a full disk", "one error line", "skipped: tmpfs needs root", True)

    store = Store(tmp / "ro.sqlite")
    store.engine.dispose()
    event.listen(store.engine, "connect", lambda c, _r: c.execute("PRAGMA query_only = ON"))
    try:
        store.put_file(b"y" * 2_000_000)
        obs, ok = "written", False
    except StoreError as e:
        msg = str(e)
        obs, ok = f"{len(msg)} chars: {msg.split(': ', 1)[1][:70]}", len(msg) < 500 and "yyyy" not in msg
    row("holes", "database error on a 2 MB parameter (read-only store)",
        "one short line: the cause, never the statement or its parameters", obs, ok)
    store.close()


# --------------------------------------------------------------------------- credentials echoed


def echo_rows(row: Row, tmp: Path) -> None:
    from kgqa.api import evaluate, save_evaluations
    from kgqa.execute.live import AskSettings
    from kgqa.model import Dataset, Item, TableAnswer
    from kgqa.model.terms import IRI

    token, bearer = "tok-9f8e7d6c5b4a", "Bearer sekret-abcdef123456"

    def echo(req):
        auth = req.headers.get("Authorization", "")
        key = (req.params.get("apikey") or [""])[0]
        return Reply.json({"questions": [{"query": {"sparql": f'SELECT ?x WHERE {{ ?x ?p "{key} {auth}" }}'},
                                          "answers": [{"head": {"vars": ["x"]}, "results": {"bindings": [
                                              {"x": {"type": "literal", "value": f"echo {key} {auth}"}}]}}]}]})

    ds = Dataset("d", [Item(id="1", questions={"en": "q"}, answer=TableAnswer.single_column([IRI("http://x/a")], "x"))])
    journal = tmp / "echo-journal.jsonl"
    with FaultServer(echo, lifetime=60) as server:
        e = evaluate(ds, None, system=server.url(f"/qa?apikey={token}"),
                     system_settings=AskSettings(progress=False, headers={"Authorization": bearer}),
                     system_journal=journal, cache=False)
    out = tmp / "echo-saved.json"
    save_evaluations(e, out)
    text = journal.read_text(encoding="utf-8") + out.read_text(encoding="utf-8")
    found = sum(text.count(s) for s in (token, bearer.split()[1]))
    row("holes", "a live system echoes its URL token and Authorization header in its answer",
        "*** in the journal's answer and query and in the --save JSON (as in raw)",
        f"{found} credential occurrence(s); answer written as {'echo *** ***' if 'echo *** ***' in text else '?'}",
        found == 0 and "echo *** ***" in text)
