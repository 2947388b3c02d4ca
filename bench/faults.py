"""Fault suite (issue 11): every attack and fault of the issue's "Why", its expected outcome and
what kgqa does, as a table.

Each row runs for real: against the embedded engine (pyoxigraph workers) on the CK25 KG
(``$KGQA_DATA_DIR/ck25/graphs/prod-inst.ttl``; a tiny built-in KG when it is absent), against a
misbehaving local endpoint (``tests/faultserver.py`` on 127.0.0.1, never another address), and
through the ``kgqa`` CLI in subprocesses (kill -9, SIGINT, --strict). The KG's content hash is
taken before and after and must not change. Exit status: 0 when every row passes, 1 otherwise
(sandbox-bypass rows fail until the shared SPARQL lexer decodes ``\\u`` escapes: issue 11,
scope 1, another helper's part).

Usage: ``python bench/faults.py [--data ../shared/data] [--only WORD] [--quick]``
(``--quick``: 500 instead of 2,000 queries in the kill/interrupt rows, fewer loader mutants).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from faultserver import EMPTY_SELECT, FaultServer, Reply  # noqa: E402

from kgqa.execute.cache import COMMIT_INTERVAL, CachedEngine, ResultCache  # noqa: E402
from kgqa.execute.embedded import EmbeddedEngine  # noqa: E402
from kgqa.execute.endpoint import SparqlEndpoint  # noqa: E402
from kgqa.execute.engine import is_transient  # noqa: E402
from kgqa.execute.kgfile import fingerprint  # noqa: E402
from kgqa.execute.executor import Executor  # noqa: E402
from kgqa.execute.policy import ExecutionPolicy  # noqa: E402
from kgqa.model import Dataset, InputError, Item, Prediction, Run, Status, TableAnswer  # noqa: E402
from kgqa.model.terms import IRI  # noqa: E402
from clijson import run_json  # noqa: E402

def execute_run(ds, run, engine, *, timeout: float | None = None, progress: bool = False):
    """The run's queries through the one execution path (normaliser, sandbox, caps)."""
    policy = ExecutionPolicy() if timeout is None else ExecutionPolicy(timeout=timeout)
    return Executor(engine, policy=policy, progress=progress).execute_run(ds, run)


ROWS: list[tuple[str, str, str, str, bool]] = []  # (group, attack, expected, observed, ok)
TINY_KG = '<http://x/a> <http://x/p> "a" .\n<http://x/b> <http://x/p> "b" .\n'


def row(group: str, attack: str, expected: str, observed: str, ok: bool) -> None:
    ROWS.append((group, attack, expected, observed, ok))
    mark = "PASS" if ok else "FAIL"
    print(f"[{mark}] {group}: {attack} -> {observed}", file=sys.stderr, flush=True)


def doubling(n: int) -> str:
    binds = " ".join(f"BIND(CONCAT(?v{i},?v{i}) AS ?v{i + 1})" for i in range(n))
    return (f'SELECT (STRLEN(?v{n}) AS ?n) WHERE {{ BIND("0123456789abcdef0123456789abcdef0123456789" AS ?v0) '
            f"{binds} }}")


def one_run(queries: dict[str, str]) -> tuple[Dataset, Run]:
    ans = TableAnswer.single_column([IRI("http://x/a")], "a")
    ds = Dataset("faults", [Item(id=i, questions={"en": i}, answer=ans) for i in queries])
    return ds, Run("attacker", [Prediction(id=i, sparql=q) for i, q in queries.items()])


def cli(args: list[str], env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from kgqa.cli import main; main()", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --------------------------------------------------------------------------- sandbox and FROM


def sandbox_rows(engine: EmbeddedEngine) -> None:
    with FaultServer(lifetime=120) as listener:
        url = listener.url("/sparql")
        q = f"SELECT * WHERE {{ BIND(<http://x/\\u0041#> AS ?z) SERVICE <{url}> {{ ?s ?p ?o }} }}"
        ds, run = one_run({"bypass": q})
        ex = execute_run(ds, run, engine, progress=False)
        o = ex.predicted["bypass"]
        got = len(listener.requests)
        row("sandbox", "\\u0041 escape hides SERVICE (embedded)", "refused; listener gets 0 requests",
            f"{o.status.value}; listener got {got}", o.status is Status.REFUSED and got == 0)
        q2 = f"SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}"
        ds, run = one_run({"service": q2})
        o = execute_run(ds, run, engine, progress=False).predicted["service"]
        row("sandbox", "plain SERVICE to a local listener (embedded)", "refused; 0 requests",
            f"{o.status.value}; listener got {len(listener.requests) - got}",
            o.status is Status.REFUSED and len(listener.requests) == got)
    limits = engine.info.limits
    iso = engine.network_isolated
    reason = engine.isolation_problem()
    row("sandbox", "worker network isolation check at start-up", "stated in the signature; warning if off",
        f"{limits.split(',')[0]}" + (f"; warned: {reason[:60]}..." if reason else ""),
        limits.startswith("net=isolated") if iso else (reason is not None and "net=NOT-isolated" in limits))

    with FaultServer(lifetime=120) as ep_server:
        ep_server.handler = lambda req: Reply.ask(True)
        with SparqlEndpoint(ep_server.url(), retries=0) as ep:
            tests = {
                "\\u0049NSERT DATA sent to an endpoint": "PREFIX x: <http://x/> \\u0049NSERT DATA { x:a x:b x:c }",
                "SERVICE in endpoint mode": "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }",
                "INSERT DATA in endpoint mode": "INSERT DATA { <http://x/a> <http://x/b> <http://x/c> }",
                "LOAD <file:///etc/passwd> in endpoint mode": "LOAD <file:///etc/passwd>",
            }
            for name, q in tests.items():
                before = len(ep_server.requests)
                ds, run = one_run({"q": q})
                o = execute_run(ds, run, ep, progress=False).predicted["q"]
                # the endpoint's own one-time probe (ASK {}) is not the attack
                sent = sum(1 for r in ep_server.requests[before:] if (r.query or "").strip() != "ASK {}")
                row("sandbox", name, "refused; nothing sent", f"{o.status.value}; {sent} request(s) sent",
                    o.status is Status.REFUSED and sent == 0)

    for name, q, want in [
        ("FROM <file:///etc/passwd> (embedded)", "SELECT (COUNT(*) AS ?n) FROM <file:///etc/passwd> WHERE { ?s ?p ?o }", 0),
        ("FROM NAMED only, no GRAPH (embedded)", "SELECT (COUNT(*) AS ?n) FROM NAMED <http://x/g> WHERE { ?s ?p ?o }", 0),
    ]:
        o = engine.execute(q)
        n = int(o.answer.rows[0][0].value) if o.status is Status.OK else None
        # refusing a non-http(s) graph IRI outright (the sandbox) is as good as an empty graph
        row("sandbox", name, "refused, or an empty default graph (0 triples); never the whole KG",
            f"{o.status.value}, {n} triples", n == want or o.status is Status.REFUSED)


# --------------------------------------------------------------------------- resources


def resource_rows(engine: EmbeddedEngine, tmp: Path) -> None:
    cache = ResultCache(tmp / "res.sqlite")
    ce = CachedEngine(engine, cache)
    outs = ce.execute_many([doubling(27), doubling(26), "ASK { ?s ?p ?o }"], timeout=120)
    o27, o26, after = outs
    row("memory", "908-byte CONCAT doubling x27 (5 GB value)", "exec_error 'memory limit', run goes on, not cached",
        f"{o27.status.value}: {o27.message[:48]}...; next query {after.status.value}; "
        f"cached={cache.get(ce.key, doubling(27), timeout=120) is not None}",
        o27.status is Status.EXEC_ERROR and o27.message.startswith("memory limit") and after.status is Status.OK
        and cache.get(ce.key, doubling(27), timeout=120) is None)
    row("memory", "CONCAT doubling x26 (1.6 GB worker)", "worker bounded by its memory limit",
        f"{o26.status.value}" + (f": {o26.message[:40]}" if o26.message else ""),
        o26.status in (Status.OK, Status.EXEC_ERROR))
    rows_q = ("SELECT ?i ?v WHERE { VALUES ?k { " + " ".join(str(i) for i in range(50)) + " } "
              "VALUES ?j { " + " ".join(str(i) for i in range(1000)) + " } BIND(?k * 1000 + ?j AS ?i) "
              "BIND(" + doubling_expr(10) + " AS ?v) }")
    t0 = time.monotonic()
    o = engine.execute(rows_q, timeout=120)
    row("memory", "50k rows x 4 KB literals (200 MB result)", "exec_error: result byte cap (default 64 MiB)",
        f"{o.status.value}: {o.message[:60]} ({time.monotonic() - t0:.1f} s)",
        o.status is Status.EXEC_ERROR and "result byte cap" in o.message)

    # endpoint: streamed bodies, gzip bomb
    def endless():
        yield b'{"head": {"vars": ["x"]}, "results": {"bindings": ['
        row_ = json.dumps({"x": {"type": "literal", "value": "z" * 4000}}).encode() + b","
        for _ in range(2_000_000_000 // len(row_)):
            yield row_

    with FaultServer(lifetime=300) as server:
        server.handler = lambda req: Reply(stream=endless)
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.monotonic()
        with SparqlEndpoint(server.url(), retries=0) as ep:
            outs = ep.execute_many([f"SELECT ?x WHERE {{ ?s ?p ?x }} # {i}" for i in range(3)], timeout=300)
        grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
        ok = all(o.status is Status.EXEC_ERROR and "response byte cap" in o.message for o in outs)
        row("memory", "3 x 2 GB streamed endpoint bodies", "exec_error: response byte cap (256 MiB); bounded RSS",
            f"{outs[0].status.value}: {outs[0].message[12:60]}...; peak RSS +{grew:.0f} MB "
            f"({time.monotonic() - t0:.1f} s)", ok and grew < 3 * 256 * 2.5)
        bomb = gzip.compress(b'{"head": {"vars": ["x"]}, "results": {"bindings": []}}' + b" " * (1 << 30), 9)
        server.handler = lambda req: Reply(body=bomb, headers={"Content-Encoding": "gzip"})
        with SparqlEndpoint(server.url(), retries=0) as ep:
            o = ep.execute("SELECT ?x WHERE { ?s ?p ?x }", timeout=120)
        row("memory", f"gzip bomb response ({len(bomb) >> 10} KB -> 1 GB)", "cut off at the response byte cap",
            f"{o.status.value}: {o.message[12:60]}", o.status is Status.EXEC_ERROR and "response byte cap" in o.message)
    kg_bomb = tmp / "bomb.nt.gz"
    with gzip.open(kg_bomb, "wb", compresslevel=9) as fh:
        line = b'<http://a> <http://p> "x" .\n' * 4096
        for _ in range((1 << 30) // len(line)):
            fh.write(line)
    try:
        from kgqa.execute.kgfile import load_files

        t0 = time.monotonic()
        load_files([kg_bomb])
        row("memory", f"gzip-bomb KG file ({kg_bomb.stat().st_size >> 10} KB -> 1 GB)", "refused (InputError)",
            "loaded", False)
    except InputError as e:
        row("memory", f"gzip-bomb KG file ({kg_bomb.stat().st_size >> 10} KB -> 1 GB)", "refused (InputError)",
            f"InputError after {time.monotonic() - t0:.1f} s: {str(e).split(': ', 1)[1][:50]}...", True)

    big_query = "SELECT * WHERE { ?s ?p ?o FILTER(?o IN (" + ",".join(f'"{i:07d}"' for i in range(1_000_000)) + ")) }"
    ds, run = one_run({"huge": big_query})
    t0 = time.monotonic()
    o = execute_run(ds, run, engine, timeout=2, progress=False).predicted["huge"]
    took = time.monotonic() - t0
    row("memory", f"{len(big_query) >> 20} MB query with --timeout 2", "refused/timeout within the time budget",
        f"{o.status.value} after {took:.1f} s", took < 10 and o.status is not Status.OK)
    cache.close()


def doubling_expr(n: int) -> str:
    e = '"0123"'
    for _ in range(n):
        e = f"CONCAT({e},{e})"
    return e


# --------------------------------------------------------------------------- nothing lost


def lost_rows(tmp: Path, n: int) -> None:
    ds = tmp / "ds.jsonl"
    run = tmp / "run.jsonl"
    ds.write_text("".join(json.dumps({"id": str(i), "question": f"q{i}", "answers": ["http://x/a"]}) + "\n"
                          for i in range(n)), encoding="utf-8")
    run.write_text("".join(json.dumps({"id": str(i), "sparql": f"SELECT ?x WHERE {{ ?x ?p {i} }}"}) + "\n"
                           for i in range(n)), encoding="utf-8")
    for how in ("kill -9", "Ctrl-C (SIGINT)"):
        finished: list[float] = []

        def handler(req, finished=finished):
            time.sleep(0.01)
            if req.query and req.query.startswith("SELECT"):
                finished.append(time.monotonic())
            return EMPTY_SELECT

        env = {**os.environ, "PYTHONPATH": str(REPO), "KGQA_CACHE_DIR": str(tmp / f"cache-{how[:4]}")}
        with FaultServer(handler, lifetime=600) as server:
            args = [sys.executable, "-c", "from kgqa.cli import main; main()", "evaluate", str(ds), str(run),
                    "--kg", server.url(), "--format", "json"]
            proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            while len(finished) < n // 2 and proc.poll() is None:
                time.sleep(0.01)
            proc.send_signal(signal.SIGKILL if how == "kill -9" else signal.SIGINT)
            t_stop = time.monotonic()
            before = len(finished)
            _, err = proc.communicate(timeout=60)
            # answered by the server more than one commit interval (+100 ms of client lag) before the stop
            settled = sum(1 for t in finished if t < t_stop - COMMIT_INTERVAL - 0.1)
            rerun = cli(["evaluate", str(ds), str(run), "--kg", server.url(), "--format", "json"], env)
        executed = run_json(rerun.stdout)["execution"]["executed"] if rerun.returncode == 0 else None
        clean = how == "kill -9" or (proc.returncode == 130 and "Traceback" not in err.decode())
        row("lost", f"{how} half-way through a {n}-query run, then rerun",
            "rerun executes <= n - answered >150 ms before the stop (+ 8 in flight)"
            + ("; exit 130, no traceback" if how != "kill -9" else ""),
            f"{before} answered before the stop ({settled} >150 ms before); rerun executed {executed}"
            + (f"; exit {proc.returncode}" if how != "kill -9" else ""),
            executed is not None and executed <= n - settled + 8 and clean)

    # --save / -o atomic: kill a writer at random moments
    from kgqa.load.jsonio import write_atomic

    target = tmp / "saved.json"
    write_atomic(target, [json.dumps({"old": True})])
    script = ("import sys, time, json; sys.path.insert(0, %r)\n"
              "from kgqa.load.jsonio import write_atomic\n"
              "def chunks():\n"
              "    yield '{\"new\": ['\n"
              "    for i in range(200000):\n"
              "        yield json.dumps(i) + ','\n"
              "        if i %% 1000 == 0: time.sleep(0.001)\n"
              "    yield '0]}'\n"
              "write_atomic(%r, chunks())\n") % (str(REPO), str(target))
    bad = 0
    for k in range(5):
        p = subprocess.Popen([sys.executable, "-c", script])
        time.sleep(0.15 + 0.05 * k)
        p.kill()
        p.wait()
        try:
            json.loads(target.read_text(encoding="utf-8"))
        except ValueError:
            bad += 1
    row("lost", "kill -9 during --save / -o (5 times)", "old or new file, never half a file",
        f"{bad} invalid file(s)", bad == 0)

    # transient failures
    with FaultServer(lifetime=120) as server:
        for name, reply in [("503", Reply.error(503, "Service Unavailable")),
                            ("429 after retries", Reply.error(429, "slow down", headers={"Retry-After": "0"}))]:
            cache = ResultCache(tmp / f"t-{name[:3]}.sqlite")
            server.handler = lambda req, r=reply: r if (req.query or "").startswith("SELECT") else Reply.ask(True)
            with SparqlEndpoint(server.url(), retries=2, backoff=0.01) as ep:
                ce = CachedEngine(ep, cache)
                qs = [f"SELECT ?x WHERE {{ ?x ?p {i} }}" for i in range(3)]
                first = ce.execute_many(qs)
                server.handler = lambda req: EMPTY_SELECT
                c0 = dict(ce.counts)
                second = ce.execute_many(qs)
                ex = ce.counts["executed"] - c0["executed"]
                hits = ce.counts["cache_hits"] - c0["cache_hits"]
            row("transient", f"endpoint {name}, then it recovers", "not cached; rerun executes 3, all ok",
                f"first: {first[0].status.value} (transient={is_transient(first[0])}); rerun executed {ex}, "
                f"cache_hits {hits}, {sum(o.status is Status.OK for o in second)} ok",
                ex == 3 and hits == 0 and all(o.status is Status.OK for o in second))
            cache.close()
    port = free_port()
    cache = ResultCache(tmp / "t-conn.sqlite")
    with SparqlEndpoint(f"http://127.0.0.1:{port}/sparql", retries=1, backoff=0.01) as ep:
        o = ep.execute("SELECT * WHERE { ?s ?p ?o }", timeout=5)
        cache.put_many("e", [("q", o)])
    row("transient", "connection refused", "exec_error naming the connection error; not cached",
        f"{o.status.value}: {o.message[:50]}...; cached={cache.get('e', 'q') is not None}",
        o.status is Status.EXEC_ERROR and "connection error" in o.message and cache.get("e", "q") is None)
    cache.close()


# --------------------------------------------------------------------------- loaders


def loader_rows(data: Path, tmp: Path, mutants: int) -> None:
    from kgqa.load import load_dataset, load_run

    sources = [("dataset", "qald-json", data / "qald-9/qald-9-test-multilingual.json"),
               ("run", "qald-json", data / "qald-10/qald_10.json"),
               ("dataset", "rubq", data / "rubq-1.0/RuBQ_1.0_dev.json"),
               ("dataset", "text2sparql", data / "ck25/questions.yml"),
               ("run", "text2sparql-answers", data / "ck25-runs/WSE/ck25_answers.json"),
               ("run", "text2sparql-results", data / "ck25-runs/WSE/ck25_system_result_set.json")]
    rng = random.Random(11)
    crashes: dict[str, int] = {}
    total = 0
    poison = [None, True, 7, 1.5, "", "x", [], {}, [{}], {"a": [1]}, [[[]]]]
    for kind, fmt, path in sources:
        if not path.is_file():
            continue
        import yaml

        text = path.read_text(encoding="utf-8")
        yml = path.suffix in (".yml", ".yaml")
        doc = yaml.safe_load(text) if yml else json.loads(text)
        for _ in range(mutants):
            d = json.loads(json.dumps(doc, default=str))
            # walk to a random node and replace it
            node, parent, key = d, None, None
            for _ in range(rng.randint(1, 6)):
                if isinstance(node, dict) and node:
                    key = rng.choice(list(node))
                elif isinstance(node, list) and node:
                    key = rng.randrange(len(node))
                else:
                    break
                parent, node = node, node[key]
            if parent is not None:
                parent[key] = rng.choice(poison)
            out = tmp / f"mut{path.suffix}"
            out.write_text(yaml.safe_dump(d) if yml else json.dumps(d), encoding="utf-8")
            total += 1
            try:
                (load_dataset if kind == "dataset" else load_run)(out, format=fmt)
            except InputError:
                pass
            except Exception as e:  # noqa: BLE001
                where = traceback.extract_tb(e.__traceback__)[-1]
                crashes[f"{type(e).__name__} at {Path(where.filename).name}:{where.lineno}"] = \
                    crashes.get(f"{type(e).__name__} at {Path(where.filename).name}:{where.lineno}", 0) + 1
    row("loaders", f"{total} structural mutants of real files (6 formats)", "0 tracebacks",
        f"{sum(crashes.values())} tracebacks" + (f" at {len(crashes)} places: {list(crashes)[:2]}" if crashes else ""),
        not crashes)
    deep = tmp / "deep.json"
    deep.write_text('{"questions": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    deep_y = tmp / "deep.yml"
    deep_y.write_text("- " * 50_000 + "x\n", encoding="utf-8")
    decl = tmp / "decl.xml"
    decl.write_text("<?xml version='1.0'", encoding="utf-8")
    jsonl = tmp / "run.jsonl"
    jsonl.write_text('{"id": "1", "answers": ' + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8")
    for name, p, fmt, kind in [("JSON nested 100,000 deep", deep, "qald-json", "dataset"),
                               ("YAML nested 50,000 deep", deep_y, "text2sparql", "dataset"),
                               ("truncated <?xml declaration", decl, "qald-xml", "dataset"),
                               ("JSONL run line nested 100,000 deep", jsonl, "jsonl", "run")]:
        try:
            obj = (load_dataset if kind == "dataset" else load_run)(p, format=fmt)
            obs = f"loaded, {len(obj.problems)} problem(s) listed"
            ok = bool(obj.problems)
        except InputError as e:
            obs, ok = f"InputError: {str(e)[-50:]}", True
        except BaseException as e:  # noqa: BLE001
            obs, ok = f"{type(e).__name__} (traceback)", False
        row("loaders", name, "one clear InputError line or a listed problem", obs, ok)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = cli(["datasets", "validate", str(deep)], env, timeout=120)
    row("loaders", "kgqa datasets validate on the deep file", "no traceback, clear message",
        f"exit {r.returncode}; {'Traceback' if 'Traceback' in r.stderr else (r.stderr or r.stdout).strip()[-60:]}",
        "Traceback" not in r.stderr and r.returncode != 0)


# --------------------------------------------------------------------------- exports and silent zeros


def report_rows(data: Path, tmp: Path, kg: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "KGQA_CACHE_DIR": str(tmp / "cache-cli")}
    ds = tmp / "inj.jsonl"
    ds.write_text("".join(json.dumps({"id": f, "question": "q", "answers": ["http://x/a"]}) + "\n"
                          for f in ["=1+2", "=cmd|' /C calc'!A0", "@SUM(1+1)"]), encoding="utf-8")
    r = cli(["evaluate", str(ds), str(ds), "--format", "csv", "--dataset-format", "jsonl", "--run-format", "jsonl"], env)
    cells = [line.split(",")[1] for line in r.stdout.splitlines()[1:]]
    row("exports", "CSV cells =1+2, =cmd|' /C calc'!A0, @SUM(1+1)", "neutralised with a leading '",
        f"{cells}", bool(cells) and all(c.lstrip('"').startswith("'") for c in cells))

    ck25 = data / "ck25/questions.yml"
    runs = data / "ck25-runs/WSE"
    if not ck25.is_file():
        row("zeros", "silent-zero set-ups", "warnings", "skipped: no CK25 data", False)
        return
    ids = tmp / "other_ids.jsonl"
    ids.write_text("".join(json.dumps({"id": f"q{i}", "answers": ["http://x"]}) + "\n" for i in range(150)),
                   encoding="utf-8")
    port = free_port()
    cases = [
        ("run with queries only, no --kg", [str(ck25), str(runs / "ck25_answers.json")], "no answer, and no KG"),
        ("run ids that do not overlap the dataset", [str(data / "qald-9/qald-9-test-multilingual.json"), str(ids)],
         "matches a question id"),
        ("--lang de on an English dataset", [str(ck25), str(runs / "ck25_system_result_set.json"), "--lang", "de"],
         "n = 0"),
        ("unreachable endpoint", [str(ck25), str(runs / "ck25_answers.json"), "--kg",
                                  f"http://127.0.0.1:{port}/sparql", "--timeout", "3"], "same transient reason"),
        ("official score file as a run (ck25_eval.json)", [str(ck25), str(runs / "ck25_eval.json")],
         "evaluation/score file"),
    ]
    for name, args, needle in cases:
        r = cli(["evaluate", *args], env)
        rs = cli(["evaluate", *args, "--strict"], env)
        warn = next((line for line in r.stderr.splitlines() if "set-up warning" in line or "error:" in line), "")
        if needle in ("same transient reason", "evaluation/score file"):  # issue 34: refused, with the way on
            flag = "--max-kg-failures 1" if needle == "same transient reason" else "--allow-score-file"
            row("zeros", name, f"error with the fix ({flag}; exit 2, also without --strict)",
                f"exit {r.returncode}/{rs.returncode} (strict); {warn[:90]}...",
                r.returncode == 2 and rs.returncode == 2 and flag in r.stderr.replace("\n", " "))
            continue
        if needle in ("no answer, and no KG", "matches a question id"):  # issue 24: errors, not warnings
            row("zeros", name, "error with the fix (exit 2, also without --strict)",
                f"exit {r.returncode}/{rs.returncode} (strict); {warn[:90]}...",
                r.returncode == 2 and rs.returncode == 2 and needle in r.stderr.replace("\n", " "))
            continue
        if needle == "n = 0":  # a language no question has is refused outright (exit 2), naming those it has
            row("zeros", name, "refused in one line naming the dataset's languages (exit 2)",
                f"exit {r.returncode}/{rs.returncode} (strict); {warn[:90]}...",
                r.returncode == 2 and rs.returncode == 2 and "has en" in r.stderr.replace("\n", " "))
            continue
        row("zeros", name, "one-line warning with the fix; --strict exits 3",
            f"exit {r.returncode}/{rs.returncode} (strict); {warn[16:90]}...",
            r.returncode == 0 and rs.returncode == 3 and needle in r.stderr)


# --------------------------------------------------------------------------- main


#: further row groups, each in a module of its own beside this file: group -> (module, function)
EXTRA_ROWS = {
    "web": ("faults_web", "web_rows"),
    "systems": ("faults_systems", "system_rows"),
    "hardening": ("faults_hardening", "hardening_rows"),
    "cli": ("faults_cli", "cli_rows"),
    "jobs": ("faults_jobs", "jobs_rows"),
    "holes": ("faults_holes", "holes_rows"),
    "numbers": ("faults_numbers", "number_rows"),  # issue 34: no wrong number gets through
}
EXTRA_ROWS = {g: m for g, m in EXTRA_ROWS.items() if (REPO / "bench" / f"{m[0]}.py").is_file()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("KGQA_DATA_DIR") or str(REPO.parent / "shared" / "data"))
    ap.add_argument("--only", default=None,
                    help=f"sandbox, memory, lost, loaders, zeros, {', '.join(EXTRA_ROWS)} (comma-separated)")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    # Ctrl-C rows send SIGINT as a terminal does: a bench started in the background (``&`` without
    # job control, nohup) has SIGINT ignored, which its children inherit (Python then installs no
    # handler: the CLI under test ran to the end, exit 0); a handler here is reset to the default in
    # every child at exec
    signal.signal(signal.SIGINT, signal.default_int_handler)
    data = Path(args.data)
    only = set(args.only.split(",")) if args.only else None
    tmp = Path(tempfile.mkdtemp(prefix="kgqa-faults-"))
    os.environ.setdefault("KGQA_CACHE_DIR", str(tmp / "cache"))
    kg = data / "ck25/graphs/prod-inst.ttl"
    if not kg.is_file():
        kg = tmp / "tiny.nt"
        kg.write_text(TINY_KG, encoding="utf-8")
    hash_before = fingerprint([kg])
    engine = EmbeddedEngine.from_files([kg], workers=2)
    try:
        if only is None or "sandbox" in only:
            sandbox_rows(engine)
        if only is None or "memory" in only:
            resource_rows(engine, tmp)
        if only is None or "lost" in only:
            lost_rows(tmp, 500 if args.quick else 2000)
        if only is None or "loaders" in only:
            loader_rows(data, tmp, 50 if args.quick else 200)
        if only is None or "zeros" in only or "exports" in only:
            report_rows(data, tmp, kg)
        for group, (module, fn) in EXTRA_ROWS.items():  # issues 23 and 24: one module per group
            if only is None or group in only:
                getattr(__import__(module), fn)(row, tmp, data)
    finally:
        engine.close()
    hash_after = fingerprint([kg])
    row("kg", "KG content hash before/after every attack", "unchanged",
        f"{hash_before[:19]} -> {hash_after[:19]}", hash_before == hash_after)

    from rich.console import Console
    from rich.table import Table

    t = Table(title="kgqa fault suite (issue 11)", show_lines=False)
    for col in ("", "group", "attack / fault", "expected", "observed"):
        t.add_column(col, overflow="fold")
    for group, attack, expected, observed, ok in ROWS:
        t.add_row("[green]PASS[/]" if ok else "[red]FAIL[/]", group, attack, expected, observed)
    Console(width=200).print(t)
    failed = sum(not r[4] for r in ROWS)
    print(f"{len(ROWS) - failed}/{len(ROWS)} rows pass")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
