"""A private PostgreSQL cluster on a free loopback port (Debian's postgresql), for the worker
tests and bench/bench_workers.py: started, stopped (an outage), restarted on the same port,
and, where this machine lets root mount a tmpfs, a tablespace on a tiny one (a disk that fills).
Run as the ``postgres`` user when the tests run as root."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from webserver import free_port


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def pg_bin() -> Path | None:
    for v in ("17", "16", "15", "14", "13"):
        p = Path(f"/usr/lib/postgresql/{v}/bin")
        if (p / "initdb").exists():
            return p
    return None


def why_not() -> str | None:
    """Why a cluster cannot be started here (None: it can)."""
    if pg_bin() is None:
        return "PostgreSQL not installed (apt-get install postgresql; .ci/postgresql.sh)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg not installed (pip install 'psycopg[binary]')"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: cannot start PostgreSQL"
    return None


class PgServer:
    """``initdb`` in a folder of its own (directly under the temp dir: pytest keeps its own
    temp tree private, mode 700, which the postgres user could not enter), then ``postgres``
    on ``port``. ``url``: the SQLAlchemy URL of its ``postgres`` database."""

    def __init__(self) -> None:
        self.bin = pg_bin()
        self.dir = Path(tempfile.mkdtemp(prefix="kgqa-pg-"))
        self.data = self.dir / "data"
        self.run_as: list[str] = []
        if os.geteuid() == 0:
            self.run_as = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.dir, "postgres")
            os.chmod(self.dir, 0o700)
        self.port = free_port()
        self.url = f"postgresql+psycopg://kgqa@127.0.0.1:{self.port}/postgres"
        self.proc: subprocess.Popen | None = None
        self.mounts: list[Path] = []
        r = subprocess.run([*self.run_as, str(self.bin / "initdb"), "-D", str(self.data), "-U", "kgqa",
                            "--auth=trust", "-E", "UTF8"], capture_output=True, text=True)
        if r.returncode:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise RuntimeError(f"initdb failed: {r.stderr.strip()[:300]}")

    def start(self, timeout: float = 60.0) -> "PgServer":
        import psycopg

        self.proc = subprocess.Popen([*self.run_as, str(self.bin / "postgres"), "-D", str(self.data), "-p",
                                      str(self.port), "-k", str(self.dir), "-c", "listen_addresses=127.0.0.1",
                                      "-c", "fsync=off", "-c", "max_connections=200"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with psycopg.connect(host="127.0.0.1", port=self.port, user="kgqa", dbname="postgres",
                                     connect_timeout=2):
                    return self
            except psycopg.OperationalError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("PostgreSQL did not start")

    def stop(self) -> None:
        """A fast shutdown (SIGINT: open sessions are ended), as a restart or an outage begins."""
        if self.proc is None:
            return
        pid = self.postmaster()  # (runuser, the process started, does not pass signals on)
        if pid is not None:
            os.kill(pid, signal.SIGINT)
            deadline = time.monotonic() + 30
            while _running(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def postmaster(self) -> int | None:
        """The server's pid (its ``postmaster.pid``), None when it is not running."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if _running(pid) else None

    def sql(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user="kgqa", dbname="postgres",
                             autocommit=True) as c:
            c.execute(statement)

    def tiny_disk(self, mb: int = 8) -> Path | None:
        """A tmpfs of ``mb`` MB (root only) made the default tablespace of the database: what
        the store writes then goes to a disk that can fill. Returns its folder, or None when
        this machine cannot mount one."""
        d = self.dir / f"tiny-{len(self.mounts)}"
        d.mkdir()
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mb}m,mode=700", "tmpfs", str(d)],
                           capture_output=True, text=True)
        if r.returncode:
            d.rmdir()
            return None
        self.mounts.append(d)
        if self.run_as:
            shutil.chown(d, "postgres")
        self.sql(f"CREATE TABLESPACE tiny{len(self.mounts)} LOCATION '{d}'")
        return d

    def close(self) -> None:
        self.stop()
        for d in self.mounts:
            subprocess.run(["umount", "-l", str(d)], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "PgServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


@pytest.fixture(scope="module")
def pg():
    """A private cluster for a test module's tests (import this fixture into the module); they
    are skipped, saying why, where none can start here."""
    why = why_not()
    if why:
        pytest.skip(why)
    with PgServer() as server:
        yield server
