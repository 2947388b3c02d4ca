"""Run a ``kgqa`` command in a pseudo-terminal of a fixed size, as a user's terminal would
(rich sees a TTY of that width, not a pipe), and give back its text without colour codes."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def run_pty(args: list[str], cols: int = 80, rows: int = 50, cwd: Path | None = None,
            env: dict[str, str] | None = None, limit_s: float = 300.0) -> tuple[int, str]:
    """Exit status and the (colour-stripped) terminal text of ``python -m kgqa.cli ARGS`` run in
    a ``cols`` x ``rows`` pseudo-terminal (stdout and stderr both on it)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    e = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR")}
    e.update({"TERM": "xterm-256color", "PYTHONIOENCODING": "utf-8"})
    e.update(env or {})
    proc = subprocess.Popen([sys.executable, "-m", "kgqa.cli", *args], stdin=slave, stdout=slave, stderr=slave,
                            cwd=str(cwd or REPO), env=e, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], limit_s)
            if not ready:  # a hung command: end it by its PID
                proc.kill()
                break
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        code = proc.wait()
    text = b"".join(chunks).decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "")
    return code, strip_ansi(text)
