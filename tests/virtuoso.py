"""A private, throw-away OpenLink Virtuoso for tests (Debian's ``virtuoso-opensource-7-bin``).

:func:`start_virtuoso` makes a work directory with its own ``virtuoso.ini`` (``CaseMode=2``,
``DirsAllowed`` = the work dir and the data dirs, HTTP and ISQL on free 127.0.0.1 ports, no
Unix socket), creates the database and sets a random ``dba`` password in a first
``+pwdold dba +pwddba`` run that exits before listening (so the default password is never
served), starts ``virtuoso-t +foreground`` in its own session, waits until ``/sparql`` answers,
bulk-loads the RDF files (``ld_dir`` + ``rdf_loader_run`` + ``checkpoint``) and fails with the
``DB.DBA.LOAD_LIST.ll_error`` messages if any file did not load (isql's exit code does not say).
Everything is bounded by ``startup_timeout`` seconds; on any failure the process is killed.
:meth:`Virtuoso.stop` ends it by its PID (SIGTERM: Virtuoso does a quick shutdown; SIGKILL
after 10 s); an ``atexit`` hook does the same if a test run is interrupted.

The session fixture :func:`virtuoso_ck25` serves CK25's ``prod-inst.ttl`` in the graph
:data:`CK25_GRAPH`; tests query it with ``default-graph-uri``. It skips, with the reason, when
the Virtuoso binaries or the shared data are absent.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

VIRTUOSO_BIN = shutil.which("virtuoso-t")
ISQL_BIN = shutil.which("isql-vt") or shutil.which("isql-v")
CK25_GRAPH = "http://ld.company.org/prod-inst/"

INI = """\
[Database]
DatabaseFile = {d}/virtuoso.db
ErrorLogFile = {d}/virtuoso.log
LockFile = {d}/virtuoso.lck
TransactionFile = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
ErrorLogLevel = 7
FileExtend = 200
MaxCheckpointRemap = 2000
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {d}/virtuoso-temp.db
TransactionFile = {d}/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping = 0

[Parameters]
ServerPort = 127.0.0.1:{isql_port}
DisableUnixSocket = 1
DisableTcpSocket = 0
ServerThreads = 10
CheckpointInterval = 0
NumberOfBuffers = 20000
MaxDirtyBuffers = 15000
CaseMode = 2
DirsAllowed = {dirs}
MaxQueryMem = 500M
VADInstallDir = {d}/vad

[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {d}/www
ServerThreads = 10
MaxKeepAlives = 10
KeepAliveTimeout = 10
MaxClientConnections = 10

[SPARQL]
ResultSetMaxRows = 1000000
MaxQueryCostEstimationTime = 0
MaxQueryExecutionTime = 0
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VirtuosoError(RuntimeError):
    pass


@dataclass
class Virtuoso:
    workdir: Path
    http_port: int
    isql_port: int
    password: str
    process: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def sparql_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/sparql"

    def isql(self, sql: str, timeout: float = 60.0) -> str:
        """Run SQL through isql-vt; raises with isql's output when it reports an error."""
        proc = subprocess.run(
            [ISQL_BIN, f"127.0.0.1:{self.isql_port}", "dba", self.password, "VERBOSE=OFF", "BANNER=OFF",
             "PROMPT=OFF", "ECHO=OFF", f"exec={sql}"],
            capture_output=True, text=True, timeout=timeout,
        )
        out = proc.stdout + proc.stderr
        if proc.returncode != 0 or "*** Error" in out:
            raise VirtuosoError(f"isql failed (rc {proc.returncode}) on {sql[:200]!r}:\n{out[-2000:]}")
        return out

    def log_tail(self, n: int = 2000) -> str:
        p = self.workdir / "virtuoso.log"
        return p.read_text(errors="replace")[-n:] if p.exists() else "(no log)"

    def load(self, files: list[Path], graph: str) -> None:
        """Bulk-load RDF files into ``graph``; raise with the loader's messages on failure."""
        files = [Path(f).resolve() for f in files]
        for f in files:
            self.isql(f"ld_dir('{f.parent}', '{f.name}', '{graph}');")
        self.isql("rdf_loader_run(); checkpoint;", timeout=300)
        names = ", ".join(f"'{f}'" for f in files)
        bad = f"from DB.DBA.LOAD_LIST where ll_file in ({names}) and (ll_error is not null or ll_state <> 2)"
        n = self.isql(f"select count(*) {bad};").split()
        if not n or n[-1] != "0":
            rows = self.isql(f"select ll_file, ll_state, ll_error {bad};")
            raise VirtuosoError(f"bulk load reported errors (DB.DBA.LOAD_LIST.ll_error):\n{rows}")

    def stop(self) -> None:
        """End the server by its PID: SIGTERM (quick shutdown), SIGKILL after 10 s."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass


def start_virtuoso(workdir: Path, data_files: list[Path] = (), graph: str = CK25_GRAPH,
                   startup_timeout: float = 60.0) -> Virtuoso:
    if not VIRTUOSO_BIN or not ISQL_BIN:
        raise VirtuosoError("virtuoso-t / isql-vt not found (apt-get install virtuoso-opensource-7-bin)")
    deadline = time.monotonic() + startup_timeout
    workdir = Path(workdir).resolve()
    (workdir / "www").mkdir(parents=True, exist_ok=True)
    (workdir / "vad").mkdir(exist_ok=True)
    dirs = [str(workdir)] + sorted({str(Path(f).resolve().parent) for f in data_files})
    # +pwddba silently mangles passwords longer than about 20 characters: use exactly 20
    v = Virtuoso(workdir, free_port(), free_port(), "kgqa" + secrets.token_hex(8))
    ini = workdir / "virtuoso.ini"
    ini.write_text(INI.format(d=workdir, isql_port=v.isql_port, http_port=v.http_port, dirs=", ".join(dirs)))
    base = [VIRTUOSO_BIN, "+configfile", str(ini), "+foreground"]
    # 1. create the database and set the dba password; this run exits without listening
    try:
        first = subprocess.run(base + ["+pwdold", "dba", "+pwddba", v.password], cwd=workdir,
                               capture_output=True, text=True, timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise VirtuosoError(f"database creation did not finish within {startup_timeout} s:\n{v.log_tail()}") from None
    if first.returncode != 0 or "password is changed" not in v.log_tail(100_000):
        raise VirtuosoError(f"could not create the database / set the dba password (rc {first.returncode}):\n"
                            f"{first.stdout[-1000:]}{first.stderr[-1000:]}\n{v.log_tail()}")
    # 2. serve
    log = open(workdir / "stdout.log", "wb")
    v.process = subprocess.Popen(base, cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
    log.close()
    atexit.register(v.stop)
    try:
        while True:
            if v.process.poll() is not None:
                raise VirtuosoError(f"virtuoso-t exited with {v.process.returncode}:\n{v.log_tail()}")
            try:
                r = httpx.get(v.sparql_url, params={"query": "ASK {}"}, timeout=2)
                if r.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise VirtuosoError(f"Virtuoso did not answer on {v.sparql_url} within {startup_timeout} s:\n"
                                    f"{v.log_tail()}")
            time.sleep(0.2)
        if data_files:
            v.load([Path(f) for f in data_files], graph)
        if time.monotonic() > deadline:
            raise VirtuosoError(f"start-up and loading took longer than {startup_timeout} s")
    except BaseException:
        v.stop()
        raise
    return v


@pytest.fixture(scope="session")
def virtuoso_ck25(shared_data, tmp_path_factory):
    """A Virtuoso serving CK25 ``prod-inst.ttl`` in :data:`CK25_GRAPH` (session scope)."""
    if not VIRTUOSO_BIN or not ISQL_BIN:
        pytest.skip("Virtuoso not installed: run .ci/virtuoso.sh (apt-get install virtuoso-opensource-7-bin)")
    ttl = shared_data / "ck25" / "graphs" / "prod-inst.ttl"
    v = start_virtuoso(tmp_path_factory.mktemp("virtuoso"), [ttl], CK25_GRAPH)
    try:
        yield v
    finally:
        v.stop()
