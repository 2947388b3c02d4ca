"""Real processes for the live-system tests: the adapter (``kgqa system serve``), the
misbehaving service (``tests/systemfaults.py``) and the client (``kgqa system ask``), each
started on a free loopback port and stopped by its PID."""

from __future__ import annotations

import io
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

import zygote
from waiting import wait_until

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from kgqa.cli import main; main()"]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(REPO) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        e.pop(k, None)
    return e


class Proc:
    """``args`` as a process in its own session, ready once a line of its ``stream`` matches
    ``pattern`` (its group 1: the port). ``fork``: a kgqa command (``CLI + [...]``) forked from the
    test process's zygote, its imports done (tests/zygote.py); else a fresh interpreter."""

    def __init__(self, args: list[str], pattern: str, stream: str = "stderr", timeout: float = 60.0, cwd=None,
                 fork: bool = False):
        self.args = args
        if fork and args[:3] == CLI:
            self.p = zygote.start(args[3:], env=env(), cwd=str(cwd or os.getcwd()), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, new_session=True)
        else:
            self.p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                      env=env(), cwd=cwd, start_new_session=True)
        self.pid = self.p.pid
        fh = self.p.stderr if stream == "stderr" else self.p.stdout
        deadline = time.monotonic() + timeout
        seen = []
        rx = re.compile(pattern)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.p.poll() is not None:
                rest = fh.read().decode() if self.p.poll() is not None else ""
                self.stop()
                raise RuntimeError(f"{args[3:] if args[:3] == CLI else args} did not start: {''.join(seen)}{rest}")
            ready, _, _ = select.select([fh], [], [], min(left, 0.5))
            if not ready:
                continue
            line = fh.readline().decode()
            seen.append(line)
            m = rx.search(line)
            if m:
                self.port = int(m.group(1))
                break
        self.url = f"http://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        if self.p.poll() is None:
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.p.wait(10)
        for fh in (self.p.stdout, self.p.stderr):
            if fh:
                fh.close()

    def __enter__(self) -> "Proc":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def adapter(*args: str) -> Proc:
    """``kgqa system serve ARGS --port 0`` (forked from the zygote), ready (its /health answers).
    test_replaying_a_run_without_question_texts_needs_the_dataset starts the command as a fresh
    interpreter."""
    p = Proc(CLI + ["system", "serve", *args, "--port", "0"], r"http://127\.0\.0\.1:(\d+)/", fork=True)

    def healthy() -> bool:
        try:
            return httpx.get(p.url + "health", timeout=2, trust_env=False).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until(healthy, timeout=60, every=0.05, what="the adapter's /health answering", proc=p.p)
    except AssertionError:
        p.stop()
        raise
    return p


def faulty(answers: Path, faults: dict[str, list[str]] | None = None, latency: float = 0.0,
           workdir: Path | None = None, port: int = 0) -> Proc:
    args = [sys.executable, str(REPO / "tests" / "systemfaults.py"), "--answers", str(answers), "--latency", str(latency),
            "--port", str(port)]
    if faults:
        assert workdir is not None
        f = workdir / f"faults-{len(list(workdir.glob('faults-*.json')))}.json"
        f.write_text(json.dumps(faults), encoding="utf-8")
        args += ["--faults", str(f)]
    bombs = any(b.startswith("gzipbomb") for plan in (faults or {}).values() for b in plan)
    return Proc(args, r"PORT (\d+)", stream="stdout", timeout=300 if bombs else 60)  # a bomb is built first


def count(proc: Proc) -> dict:
    return httpx.get(proc.url + "count", timeout=5, trust_env=False).json()


def requests_log(proc: Proc) -> list[dict]:
    """The question requests a ``faulty`` service received: time, method, path, question, headers."""
    return httpx.get(proc.url + "log", timeout=5, trust_env=False).json()


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli_process(args: list[str], extra_env: dict[str, str] | None = None, text: bool = False):
    """``kgqa ARGS`` (e.g. ``system ask ...``) as a process in its own session (forked from the
    test process's zygote, its imports done: tests/zygote.py), stdout to the null device, stderr a
    pipe (``text``: read as text): a :class:`subprocess.Popen` or its like."""
    p = zygote.start(args, env={**env(), **(extra_env or {})}, cwd=os.getcwd(), stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, new_session=True)
    if text:
        p.stderr = io.TextIOWrapper(p.stderr, encoding="utf-8", errors="replace")
    return p


def cli_run(args: list[str], extra_env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``kgqa ARGS`` as a process (forked from the zygote), to its end: exit status and output."""
    return zygote.run(args, env={**env(), **(extra_env or {})}, cwd=os.getcwd(), timeout=timeout)


@contextmanager
def asking(args: list[str]) -> Iterator[subprocess.Popen]:
    """``kgqa ARGS`` (e.g. ``system ask ...``) in its own session, stderr as text; killed by its
    PID if still running at the end."""
    p = cli_process(args, {"COLUMNS": "400"}, text=True)
    try:
        yield p
    finally:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            p.wait(10)
        p.stderr.close()


def wait_for_records(p: subprocess.Popen, journal: Path, n: int, timeout: float = 60) -> None:
    """Wait until ``journal`` holds ``n`` records (the header not counted) while ``p`` runs."""
    wait_until(lambda: journal.exists() and journal.read_text(encoding="utf-8").count("\n") >= n + 1,
               timeout=timeout, what=f"{journal} holding {n} records", proc=p)
