"""A real ``kgqa web`` process on a free loopback port, started and stopped by PID (tests)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx

import zygote
from conftest import REPO
from waiting import wait_until


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (Linux /proc)."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class WebServer:
    """``kgqa web --store STORE --port P ARGS...`` as a process of its own: forked from the test
    process's zygote, its imports done (tests/zygote.py), or with ``fresh`` a fresh interpreter."""

    def __init__(self, store: Path, tmp: Path, *args: str, command: str = "web", port: int | None = None,
                 fresh: bool = False):
        self.store = store
        self.tmp = tmp
        self.args = list(args)
        self.command = command
        self.fresh = fresh  # a fresh interpreter, not a fork of the test process's zygote (tests/zygote.py)
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log = tmp / f"server-{self.port}.log"

    def start(self, timeout: float = 60.0) -> "WebServer":
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        env.setdefault("KGQA_CACHE_DIR", str(self.tmp / "cache"))
        argv = [self.command]
        if self.command == "web":
            argv += ["--store", str(self.store)]
        argv += ["--port", str(self.port), *self.args]
        self._logf = open(self.log, "ab")
        if self.fresh:
            self.proc = subprocess.Popen([sys.executable, "-c", "from kgqa.cli import main; main()", *argv],
                                         cwd=str(self.tmp), env=env, stdout=self._logf, stderr=subprocess.STDOUT)
        else:
            self.proc = zygote.start(argv, env=env, cwd=str(self.tmp), stdout=self._logf, stderr=self._logf)

        def answering() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"kgqa web exited with {self.proc.returncode}:\n{self.output()}")
            try:
                httpx.get(self.base + "/static/style.css", timeout=1.0)
                return True
            except httpx.HTTPError:
                return False

        try:
            wait_until(answering, timeout=timeout, every=0.05, what="kgqa web answering")
        except AssertionError:
            self.stop()
            raise RuntimeError(f"kgqa web did not answer within {timeout} s:\n{self.output()}") from None
        return self

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def stop(self) -> None:
        """SIGTERM, as a service manager stops a server; raises when a process the server started
        (its experiment and upload workers, their resource tracker) outlives it by 10 s."""
        if self.proc is None:
            return
        left: list[int] = []
        if self.proc.poll() is None:
            started = descendants(self.proc.pid)
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)
            try:
                wait_until(lambda: not any(_alive(p) for p in started), timeout=10, every=0.05)
            except AssertionError:
                pass
            for p in started:
                if _alive(p):
                    left.append(p)
                    os.kill(p, signal.SIGKILL)
        self._logf.close()
        self.proc = None
        if left:
            raise RuntimeError(f"kgqa web left processes {left} running after SIGTERM:\n{self.output()[-2000:]}")

    def __enter__(self) -> "WebServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def chromium(*extra_args: str, resolve: dict[str, str] | None = None, console: bool = False, width: int = 1400):
    """A headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by Selenium)
    that talks to 127.0.0.1 only. ``resolve``: host names mapped to loopback addresses (a
    rebound name: ``{"evil.example": "127.0.0.1"}``); ``console``: keep the console log
    (``driver.get_log("browser")``). Returns None when Chromium or Selenium is missing."""
    import shutil

    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None

    def binary(*names: str) -> str | None:
        for n in names:
            if shutil.which(n):
                return shutil.which(n)
            p = Path("/usr/lib/chromium") / n
            if p.exists():
                return str(p)
        return None

    chrome, driver_bin = binary("chromium", "chromium-browser"), binary("chromedriver")
    if chrome is None or driver_bin is None:
        return None
    from conftest import CHROMIUM_OFFLINE_FLAGS

    names = dict(resolve or {})
    for v in names.values():
        if v not in ("127.0.0.1", "::1"):
            raise ValueError(f"tests resolve names to loopback only, not {v}")
    rules = ", ".join([f"MAP {k} {v}" for k, v in names.items()] + ["MAP * ~NOTFOUND", "EXCLUDE 127.0.0.1"])
    bypass = ";".join(["127.0.0.1", "localhost", *names])
    flags = [f for f in CHROMIUM_OFFLINE_FLAGS if not f.startswith(("--host-resolver-rules", "--proxy-bypass-list"))]
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},1000",
              "--disable-extensions", "--hide-scrollbars", *flags, f"--host-resolver-rules={rules}",
              f"--proxy-bypass-list={bypass}", *extra_args):
        opts.add_argument(a)
    if console:
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(driver_bin), options=opts)
    drv.set_page_load_timeout(60)
    drv.set_script_timeout(60)
    return drv


class PageServer:
    """Static pages (an attacker's site) served from another loopback port, in a thread."""

    def __init__(self, pages: dict[str, str]):
        import http.server
        import threading

        body = {("/" + k.lstrip("/")): v.encode() for k, v in pages.items()}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                data = body.get(self.path.split("?")[0])
                self.send_response(200 if data is not None else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(data or b"not found")

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Listener:
    """A TCP listener on 127.0.0.1 counting the connections it gets (a live system that must
    never be asked)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.hits += 1
            conn.close()

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()
