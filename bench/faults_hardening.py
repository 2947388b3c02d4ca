"""Fault rows of issue 24, part 1 (execution and loaders: nothing silent, nothing lost).

Run by ``python bench/faults.py --only hardening`` (and by the full suite). Each case is a row
(attack -> expected -> observed), run for real:

- **escapes**: multi-``u`` and ``\\U`` escapes against a real local endpoint that decodes them as
  Jena's SPARQL 1.1 grammar does (``tests/faultserver.py``: ``jena_handler``, backed by a
  pyoxigraph store, applying updates and following ``SERVICE`` to 127.0.0.1); a canary sent
  past kgqa shows the endpoint would run the attack;
- **hostile**: endpoint bodies with undeclared variables (409 KB, 1.25 MB), a gzip of 7.5 M
  rows, a 300 MB single value, and a hostile body beside a normal query: time and peak RSS;
- **yaml**: a 700-byte alias bomb as a dataset, as ``migrate --rules`` and as a profile;
- **disk**: a corrupt and a truncated cache, ``KGQA_CACHE_DIR`` naming a file, a read-only
  cache, a full disk at start and mid-run, ``-o`` on a full disk (small tmpfs mounts when run
  as root; otherwise SQLite's ``max_page_count`` and an injected ``OSError(ENOSPC)``);
- **caps**: a 5,000-digit integer in a JSONL run, a ``migrate --links`` gzip bomb, invalid
  UTF-8 in a links CSV, a query nested 5,000 deep.

Network only to 127.0.0.1; every server and mount is stopped/removed before returning.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for _p in (str(REPO), str(REPO / "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from faultserver import FaultServer, Reply, jena_handler  # noqa: E402
from clijson import run_json  # noqa: E402

Row = Callable[[str, str, str, str, bool], None]
FIXTURES = REPO / "tests" / "fixtures" / "migrate"
TINY_KG = '<http://x/a> <http://x/p> "a" .\n<http://x/b> <http://x/p> "b" .\n'


def hardening_rows(row: Row, tmp: Path, data: Path) -> None:
    tmp = tmp / "hardening"
    tmp.mkdir(parents=True, exist_ok=True)
    kg = tmp / "tiny.nt"
    kg.write_text(TINY_KG, encoding="utf-8")
    escape_rows(row, tmp)
    hostile_rows(row)
    yaml_rows(row, tmp, kg)
    disk_rows(row, tmp, kg)
    cap_rows(row, tmp, kg)


# --------------------------------------------------------------------------- helpers


def cli(args: list[str], env: dict | None = None, timeout: float = 300) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", **(env or {})}
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", "from kgqa.cli import main; main()", *args], env=env,
                       capture_output=True, text=True, timeout=timeout)
    return r, time.monotonic() - t0


def one_line(text: str) -> str:
    return " ".join(text.split())


def clean_error(r: subprocess.CompletedProcess, code: int = 2) -> bool:
    return r.returncode == code and "Traceback" not in r.stderr


class PeakRss:
    """Peak resident memory of this process while the block runs (sampled every 5 ms)."""

    def __init__(self):
        self.base = self.peak = self._rss()
        self._stop = threading.Event()

    @staticmethod
    def _rss() -> int:
        try:
            with open("/proc/self/statm") as fh:
                return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            return 0

    def __enter__(self) -> "PeakRss":
        def sample():
            while not self._stop.wait(0.005):
                self.peak = max(self.peak, self._rss())
        self._t = threading.Thread(target=sample, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, self._rss())

    @property
    def grew_mb(self) -> float:
        return (self.peak - self.base) / 2 ** 20


@contextmanager
def tmpfs(path: Path, size: str):
    """A tmpfs of ``size`` at ``path`` (None when it cannot be mounted: not root)."""
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if r.returncode != 0:
        yield None
        return
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(folder: Path, leave: int = 0) -> None:
    """Fill the file system of ``folder`` up to ``leave`` free bytes."""
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize - leave
    with open(folder / "filler", "wb") as fh:
        try:
            fh.write(b"\0" * max(0, free))
        except OSError:
            pass


# --------------------------------------------------------------------------- escapes


def escape_rows(row: Row, tmp: Path) -> None:
    import pyoxigraph as ox

    from kgqa.execute.endpoint import SparqlEndpoint
    from kgqa.execute.sandbox import check
    from kgqa.model import Status

    issue = r"SELECT * { \uu0053ERVICE <http://169.254.169.254/> {?s ?p ?o} }"
    v = check(issue)
    row("escapes", "check() of the issue's \\uu0053ERVICE query", "a refusal reason",
        (v.reason or "no reason")[:70], v.refused)

    store = ox.Store()
    store.load(TINY_KG.encode(), format=ox.RdfFormat.N_TRIPLES)
    before = len(store)
    with FaultServer(lifetime=120) as listener, FaultServer(lifetime=120) as server:
        handler = jena_handler(store)
        server.handler = handler
        target = listener.url("/metadata")
        attack = f"SELECT * {{ \\uu0053ERVICE <{target}> {{ ?s ?p ?o }} }}"
        # canary: sent past kgqa, the Jena-like endpoint decodes it and calls the listener
        import httpx

        httpx.post(server.url(), data={"query": attack}, timeout=10)
        canary = len(listener.requests)
        row("escapes", "canary: \\uu0053ERVICE posted to the Jena-like endpoint directly (not via kgqa)",
            "the endpoint decodes it and calls the listener (the attack is real)",
            f"decoded {handler.decoded[-1][:28]!r}...; listener got {canary}", canary == 1)
        cases = {
            "\\uu0053ERVICE <listener>": attack,
            "\\uuuuu0053ERVICE (five u)": attack.replace("\\uu", "\\uuuuu"),
            "\\U00000053ERVICE": attack.replace("\\uu0053", "\\U00000053"),
            "\\\\\\uu0053ERVICE (odd backslashes)": attack.replace("\\uu", "\\\\\\uu"),
            "\\uu0049NSERT DATA": "PREFIX x: <http://x/> \\uu0049NSERT DATA { x:evil x:p x:o }",
            "\\uu0046ROM <file:///etc/passwd>": "SELECT * \\uu0046ROM <file:///etc/passwd> { ?s ?p ?o }",
            "LOA\\uu0044 <file:///etc/passwd>": "LOA\\uu0044 <file:///etc/passwd>",
        }
        with SparqlEndpoint(server.url(), retries=0) as ep:
            ep.probe()
            for name, q in cases.items():
                sent0, heard0 = len(server.requests), len(listener.requests)
                o = ep.execute(q, timeout=10)
                sent = len(server.requests) - sent0
                heard = len(listener.requests) - heard0
                row("escapes", f"{name} to a Jena-like endpoint", "refused; nothing sent; KG unchanged",
                    f"{o.status.value}; {sent} request(s) sent; listener {heard}; KG {len(store)} triples",
                    o.status is Status.REFUSED and sent == 0 and heard == 0 and len(store) == before)
            o = ep.execute("\\uu0041SK { ?s ?p ?o }", timeout=10)
            row("escapes", "\\uu0041SK { ?s ?p ?o } (harmless) to the same endpoint",
                "allowed; the endpoint decodes it as ASK", f"{o.status.value}: {o.answer}; decoded "
                f"{handler.decoded[-1][:20]!r}", o.status is Status.OK and handler.decoded[-1].startswith("ASK"))


# --------------------------------------------------------------------------- hostile endpoint bodies


def undeclared(n: int) -> bytes:
    items = b",".join(b'{"v%d": {"type": "literal", "value": "x"}}' % i for i in range(n))
    return b'{"head": {"vars": []}, "results": {"bindings": [' + items + b"]}}"


def gzip_rows(n: int) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [z.compress(b'{"head": {"vars": ["x"]}, "results": {"bindings": [')]
    block = b",".join(b'{"x":{"type":"literal","value":"%d"}}' % (i % 1000) for i in range(1000)) + b","
    for _ in range(n // 1000):
        parts.append(z.compress(block))
    parts.append(z.compress(b'{"x":{"type":"literal","value":"end"}}]}}'))
    parts.append(z.flush())
    return b"".join(parts)


def hostile_rows(row: Row) -> None:
    from kgqa.execute.endpoint import SparqlEndpoint
    from kgqa.model import Status

    q = "SELECT * WHERE { ?s ?p ?o }"
    with FaultServer(lifetime=600) as server:
        for label, body, headers, timeout in [
            ("409 KB body, 10,000 undeclared variables, --timeout 5", undeclared(10_000), {}, 5),
            ("1.25 MB body, 30,000 undeclared variables, --timeout 5", undeclared(30_000), {}, 5),
        ]:
            server.handler = lambda req, b=body, h=headers: Reply(body=b, headers=h)
            with PeakRss() as rss, SparqlEndpoint(server.url(), retries=0) as ep:
                t0 = time.monotonic()
                o = ep.execute(q, timeout=timeout)
                took = time.monotonic() - t0
            row("hostile", label, "exec_error: column cap, within the timeout, bounded memory",
                f"{o.status.value}: {o.message[:44]}... {took:.2f} s, peak RSS +{rss.grew_mb:.0f} MB",
                o.status is Status.EXEC_ERROR and "column cap" in o.message and took < timeout
                and rss.grew_mb < 200)
        bomb = gzip_rows(7_500_000)
        server.handler = lambda req: Reply(body=bomb, headers={"Content-Encoding": "gzip"})
        with PeakRss() as rss, SparqlEndpoint(server.url(), retries=0) as ep:
            t0 = time.monotonic()
            o = ep.execute(q, timeout=30)
            took = time.monotonic() - t0
        row("hostile", f"{len(bomb) >> 10} KB gzip of 7.5 M rows (default row cap 100,000)",
            "exec_error: row cap in seconds, bounded memory",
            f"{o.status.value}: {o.message[:34]}... {took:.2f} s, peak RSS +{rss.grew_mb:.0f} MB",
            o.status is Status.EXEC_ERROR and "row cap" in o.message and took < 10 and rss.grew_mb < 500)

        def one_value():
            yield b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "'
            chunk = b"z" * (1 << 20)
            for _ in range(300):
                yield chunk
            yield b'"}}]}}'

        server.handler = lambda req: Reply(stream=one_value)
        with PeakRss() as rss, SparqlEndpoint(server.url(), retries=0) as ep:
            t0 = time.monotonic()
            o = ep.execute(q, timeout=3)
            took = time.monotonic() - t0
        row("hostile", "one 300 MB value streamed, --timeout 3", "timeout or byte cap, within ~the timeout",
            f"{o.status.value}: {o.message[:40]}... {took:.2f} s, peak RSS +{rss.grew_mb:.0f} MB",
            o.status in (Status.TIMEOUT, Status.EXEC_ERROR) and took < 6)

        def handler(req):
            if "hostile" in (req.query or ""):
                return Reply(body=undeclared(200) + b" " * (40 << 20))  # slow to read and parse
            return Reply.select(["x"], [{"x": {"type": "uri", "value": "http://x/a"}}])

        server.handler = handler
        with SparqlEndpoint(server.url(), retries=0, concurrency=2) as ep:
            ep.probe()
            outs = ep.execute_many([q + " # hostile", q + " # normal"], timeout=30)
        row("hostile", "a 40 MB body beside a normal query (same endpoint, 2 slots)",
            "the normal query is answered while the other body is read and parsed off the event loop",
            f"normal: {outs[1].status.value} in {outs[1].elapsed:.2f} s; hostile: {outs[0].status.value} in "
            f"{outs[0].elapsed:.2f} s", outs[1].status is Status.OK and outs[1].elapsed < 1.0)


# --------------------------------------------------------------------------- YAML


def yaml_bomb() -> str:
    lines = ["a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    for i in range(1, 9):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def yaml_rows(row: Row, tmp: Path, kg: Path) -> None:
    bomb = tmp / "questions.yml"
    bomb.write_text(yaml_bomb(), encoding="utf-8")
    size = bomb.stat().st_size
    env = {"KGQA_CACHE_DIR": str(tmp / "cache-yaml")}
    r, took = cli(["datasets", "validate", str(bomb), "--format", "text2sparql"], env, timeout=120)
    row("yaml", f"{size}-byte YAML alias bomb as a dataset (datasets validate)", "one error line in < 20 s, CLI start-up included (exit 1)",
        f"exit {r.returncode} in {took:.1f} s: {one_line(r.stdout)[-60:]}", clean_error(r, 1) and took < 20
        and "alias bomb" in r.stdout)
    out = tmp / "migrated.json"
    r, took = cli(["migrate", str(FIXTURES / "simple_records.txt"), "--target-kg", str(FIXTURES / "simple_target.ttl"),
                   "--links", str(FIXTURES / "simple_links.nt"), "--rules", str(bomb), "-o", str(out), "-q",
                   "--no-cache"], env, timeout=120)
    row("yaml", f"{size}-byte alias bomb as migrate --rules", "one error line in < 20 s, CLI start-up included",
        f"exit {r.returncode} in {took:.1f} s: {one_line(r.stderr)[-60:]}", clean_error(r) and took < 20
        and "alias bomb" in r.stderr)
    ds = tmp / "ds.jsonl"
    ds.write_text(json.dumps({"id": "1", "question": "q", "answers": ["http://x/a"]}) + "\n", encoding="utf-8")
    r, took = cli(["evaluate", str(ds), str(ds), "--profile", str(bomb)], env, timeout=120)
    row("yaml", f"{size}-byte alias bomb as a scoring profile (-p)", "refused in < 20 s, no traceback",
        f"exit {r.returncode} in {took:.1f} s: {one_line(r.stderr)[-60:]}",
        r.returncode != 0 and "Traceback" not in r.stderr and took < 20 and "alias bomb" in r.stderr)


# --------------------------------------------------------------------------- cache and disk


def disk_rows(row: Row, tmp: Path, kg: Path) -> None:
    n = 400
    ds = tmp / "d.jsonl"
    run = tmp / "r.jsonl"
    ds.write_text("".join(json.dumps({"id": str(i), "question": "q", "answers": ["http://x/a"]}) + "\n"
                          for i in range(n)), encoding="utf-8")
    run.write_text("".join(json.dumps({"id": str(i), "sparql": f"SELECT ?x WHERE {{ ?x ?p ?o }} LIMIT {i + 1} "
                                                             f"# {'pad' * 300}"}) + "\n" for i in range(n)),
                   encoding="utf-8")
    base = ["evaluate", str(ds), str(run), "--kg", str(kg), "--format", "json"]

    def case(name: str, cache_dir: Path, expected: str, check: Callable[[subprocess.CompletedProcess], bool],
             extra: list[str] = ()) -> subprocess.CompletedProcess:
        r, took = cli(base + list(extra), {"KGQA_CACHE_DIR": str(cache_dir)})
        first = next((line for line in r.stderr.splitlines() if "error" in line or "warning" in line.lower()),
                     r.stderr.strip()[:80])
        row("disk", name, expected, f"exit {r.returncode} ({took:.1f} s): {one_line(first)[:70]}",
            "Traceback" not in r.stderr and check(r))
        return r

    def names_cache(r, d):
        return "result cache" in r.stderr and str(d) in one_line(r.stderr).replace(" ", "") or str(d) in r.stderr

    corrupt = tmp / "corrupt"
    corrupt.mkdir(exist_ok=True)
    (corrupt / "results.sqlite").write_bytes(os.urandom(8192))
    case("corrupt cache file (random bytes)", corrupt, "one error line naming it (exit 2)",
         lambda r: r.returncode == 2 and "corrupt" in r.stderr)
    good = tmp / "good"
    cli(base, {"KGQA_CACHE_DIR": str(good)})
    trunc = tmp / "trunc"
    trunc.mkdir(exist_ok=True)
    data = (good / "results.sqlite").read_bytes()
    (trunc / "results.sqlite").write_bytes(data[: len(data) // 3])
    case(f"truncated cache file ({len(data) // 3 >> 10} of {len(data) >> 10} KB)", trunc,
         "one error line naming it (exit 2)", lambda r: r.returncode == 2 and "truncated" in r.stderr)
    afile = tmp / "a-file"
    afile.write_text("x", encoding="utf-8")
    case("KGQA_CACHE_DIR names a file", afile, "one error line naming it (exit 2)",
         lambda r: r.returncode == 2 and "not a folder" in r.stderr)

    with tmpfs(tmp / "ro", "2m") as ro:
        if ro is None:
            row("disk", "read-only cache folder", "one error line", "skipped: tmpfs needs root", True)
        else:
            (ro / "c").mkdir()
            (ro / "c" / "results.sqlite").write_bytes((good / "results.sqlite").read_bytes())
            subprocess.run(["mount", "-o", "remount,ro", str(ro)], capture_output=True)
            case("cache on a read-only file system", ro / "c", "one error line naming it (exit 2)",
                 lambda r: r.returncode == 2 and "read-only" in r.stderr)

    with tmpfs(tmp / "full0", "256k") as full:
        if full is None:
            _full_by_injection(row, tmp, base)
        else:
            fill(full)
            case("disk full at start (new cache on a full tmpfs)", full / "c", "one error line naming it (exit 2)",
                 lambda r: r.returncode == 2 and "disk is full" in r.stderr)
    with tmpfs(tmp / "full1", "1m") as full:
        if full is not None:
            out = tmp / "out-midrun.json"
            fill(full, leave=160 << 10)
            r = case("disk fills up mid-run (400 queries, 160 KB free)", full / "c",
                     "one warning naming the cache; run completes, -o written (exit 0)",
                     lambda r: r.returncode == 0 and r.stderr.count("cannot store outcomes") == 1 and out.is_file()
                     and len(json.loads(out.read_text(encoding="utf-8"))) >= 1, ["-o", str(out)])
    with tmpfs(tmp / "full2", "256k") as full:
        if full is not None:
            fill(full)
            cache = tmp / "c-out"
            r = case("-o on a full disk", cache, "one error line naming the file and how to resume (exit 2)",
                     lambda r: r.returncode == 2 and "out.json" in r.stderr and "run the command again" in r.stderr,
                     ["-o", str(full / "out.json")])
            r2, _ = cli(base + ["-o", str(tmp / "out2.json")], {"KGQA_CACHE_DIR": str(cache)})
            executed = run_json((tmp / "out2.json").read_text(encoding="utf-8")).get("execution", {}).get("executed")
            row("disk", "... then the same command with another -o", "written; executes nothing (cache)",
                f"exit {r2.returncode}; executed {executed}", r2.returncode == 0 and executed == 0)


def _full_by_injection(row: Row, tmp: Path, base: list[str]) -> None:
    """Without root: a full disk as SQLite's max_page_count, -o as an injected ENOSPC."""
    script = ("import sqlite3, errno, os, sys\n"
              "real = sqlite3.connect\n"
              "def tiny(*a, **k):\n"
              "    db = real(*a, **k); db.execute('PRAGMA max_page_count = 1'); return db\n"
              "sqlite3.connect = tiny\n"
              "from kgqa.cli import main; main()\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "KGQA_CACHE_DIR": str(tmp / "inj")}
    r = subprocess.run([sys.executable, "-c", script, *base], env=env, capture_output=True, text=True, timeout=300)
    row("disk", "disk full at start (SQLite max_page_count = 1)", "one error line naming it (exit 2)",
        f"exit {r.returncode}: {one_line(r.stderr)[:70]}", clean_error(r) and "disk is full" in r.stderr)


# --------------------------------------------------------------------------- caps


def cap_rows(row: Row, tmp: Path, kg: Path) -> None:
    env = {"KGQA_CACHE_DIR": str(tmp / "cache-caps")}
    ds = tmp / "caps-ds.jsonl"
    ds.write_text("".join(json.dumps({"id": str(i), "question": "q", "answers": ["http://x/a"]}) + "\n"
                          for i in range(3)), encoding="utf-8")
    run = tmp / "caps-run.jsonl"
    run.write_text('{"id": "0", "answers": [' + "9" * 5000 + ']}\n' + "".join(
        json.dumps({"id": str(i), "answers": ["http://x/a"]}) + "\n" for i in (1, 2)), encoding="utf-8")
    r, _ = cli(["evaluate", str(ds), str(run), "--format", "json", "--dataset-format", "jsonl", "--run-format",
                "jsonl"], env)
    row("caps", "JSONL run with a 5,000-digit integer", "the line is a listed problem; the run scores (exit 0)",
        f"exit {r.returncode}; {one_line(r.stderr)[:70]}", r.returncode == 0 and "Traceback" not in r.stderr
        and "4,300 digits" in r.stderr + r.stdout)

    links = tmp / "links.nt.gz"
    line = b"<http://a/x> <http://www.w3.org/2002/07/owl#sameAs> <http://b/x> .\n" * 20000
    t0 = time.monotonic()
    member = gzip.compress(line * ((25 << 20) // len(line)), 9)  # 25 MB; 100 gzip members make 2.5 GB
    with open(links, "wb") as fh:
        for _ in range(100):
            fh.write(member)
    made = time.monotonic() - t0
    out = tmp / "m.json"
    r, took = cli(["migrate", str(FIXTURES / "simple_records.txt"), "--target-kg", str(FIXTURES / "simple_target.ttl"),
                   "--links", str(links), "-o", str(out), "-q", "--no-cache"], env)
    row("caps", f"migrate --links: {links.stat().st_size >> 20} MB .gz of 2.5 GB (made in {made:.0f} s)",
        "refused as a decompression bomb, one error line", f"exit {r.returncode} in {took:.1f} s: "
        f"{one_line(r.stderr)[-60:]}", clean_error(r) and "decompression bomb" in r.stderr)
    links.unlink()

    bad = tmp / "links.csv"
    bad.write_bytes(b"source,target\nhttp://a/x,http://b/x\nhttp://a/\xe9t\xe9,http://b/y\n")
    r, _ = cli(["migrate", str(FIXTURES / "simple_records.txt"), "--target-kg", str(FIXTURES / "simple_target.ttl"),
                "--links", str(bad), "-o", str(out), "-q", "--no-cache"], env)
    row("caps", "invalid UTF-8 in a links CSV", "one error line naming file and line",
        f"exit {r.returncode}: {one_line(r.stderr)[-60:]}", clean_error(r) and "line 3" in r.stderr
        and "links.csv" in r.stderr)

    from kgqa.execute.cache import CachedEngine, ResultCache
    from kgqa.execute.embedded import EmbeddedEngine
    from kgqa.execute.engine import is_transient
    from kgqa.model import Status

    deep = "SELECT * WHERE " + "{" * 5000 + "}" * 5000
    with EmbeddedEngine.from_files([kg], workers=1) as engine, ResultCache(tmp / "deep.sqlite") as cache:
        ce = CachedEngine(engine, cache)
        o = ce.execute(deep)
        again = ce.execute(deep)
        row("caps", "query nested 5,000 braces deep (embedded engine)",
            "exec_error 'query too deeply nested', definitive, cached; no worker crash",
            f"{o.status.value}: {o.message[:34]}...; transient={is_transient(o)}; cache hits "
            f"{ce.counts['cache_hits']}; worker restarts {engine.restarts}",
            o.status is Status.EXEC_ERROR and o.message.startswith("query too deeply nested")
            and not is_transient(o) and ce.counts["cache_hits"] == 1 and engine.restarts == 0
            and again.message == o.message)
