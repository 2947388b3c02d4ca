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


_TOKEN = re.compile(r"(\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\r|\n)")


def screen(raw: str) -> str:
    """What a terminal shows after ``raw``: carriage returns overwrite, erase-line (``ESC[2K``)
    and cursor-up (``ESC[nA``) are applied (progress bars that redraw and vanish), colours and
    other escape sequences dropped."""
    lines: list[list[str]] = [[]]
    row = col = 0
    for tok in _TOKEN.split(raw):
        if not tok:
            continue
        if tok == "\n":
            row += 1
            col = 0
            if row == len(lines):
                lines.append([])
        elif tok == "\r":
            col = 0
        elif tok.startswith("\x1b["):
            if tok.endswith("K"):  # erase in line (rich erases the whole line)
                lines[row] = [] if tok in ("\x1b[2K", "\x1b[K", "\x1b[0K") and col == 0 else lines[row][:col]
            elif tok.endswith("A"):
                row = max(0, row - int(tok[2:-1] or 1))
        elif not tok.startswith("\x1b"):
            line = lines[row]
            for ch in tok:
                if col < len(line):
                    line[col] = ch
                else:
                    line.append(ch)
                col += 1
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join("".join(ln) for ln in lines) + "\n"


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
    return code, screen(b"".join(chunks).decode("utf-8", errors="replace"))
