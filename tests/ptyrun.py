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

import zygote

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


def check_fits(text: str, names=(), width: int = 80) -> None:
    """No line of ``text`` wider than ``width`` (but a score signature, one line on purpose: a copy
    gives it whole and the terminal folds it), nothing cut with "…", and each of ``names`` whole."""
    wide = [ln for ln in text.splitlines() if len(ln) > width and not ln.lower().startswith("signature: ")]
    assert wide == [], "\n".join(wide)
    assert "…" not in text
    words = set(re.split(r"[\s│┃|,()]+", text))
    missing = [n for n in names if n not in words]
    assert missing == [], f"cut or missing: {missing}"


def help_paths(root) -> list[tuple[str, object]]:
    """Every command path of the click command ``root`` (``""`` for the root itself) and its
    command, for the tests that render every ``--help``."""
    def walk(cmd, prefix=""):
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            yield f"{prefix} {name}".strip(), sub
            yield from walk(sub, f"{prefix} {name}".strip())

    return [("", root), *walk(root)]


def run_pty(args: list[str], cols: int = 80, rows: int = 50, cwd: Path | None = None,
            env: dict[str, str] | None = None, limit_s: float = 300.0, fork: bool = False) -> tuple[int, str]:
    """Exit status and the (colour-stripped) terminal text of ``python -m kgqa.cli ARGS`` run in
    a ``cols`` x ``rows`` pseudo-terminal (stdout and stderr both on it). ``fork``: forked from
    the test process's zygote, its imports done (tests/zygote.py), not a fresh interpreter (for a
    claim about what the terminal shows, not about the interpreter's start)."""
    fork_as = {"argv": args, "module": True} if fork else None
    code, raw = _run_in_pty([sys.executable, "-m", "kgqa.cli", *args], cols, rows, cwd, env, limit_s, fork_as)
    return code, screen(raw)


#: What the driver of :func:`run_pty_many` prints after each command: its index and exit status.
_DONE = re.compile(r"\x00kgqa-pty-done (\d+) (-?\d+)\x00\r?\n")
_MANY = """
import json, sys
from kgqa.cli import main
for i, args in enumerate(json.loads(sys.argv[1])):
    try:
        main(args)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.stdout.write(f"\\x00kgqa-pty-done {i} {code}\\x00\\n")
    sys.stdout.flush()
"""


def run_pty_many(commands: list[list[str]], cols: int = 80, rows: int = 50, cwd: Path | None = None,
                 env: dict[str, str] | None = None, limit_s: float = 300.0, fork: bool = False) -> list[tuple[int, str]]:
    """:func:`run_pty` for several commands, one after another in one ``python`` process in one
    pseudo-terminal (``kgqa.cli.main`` called for each, as ``python -m kgqa.cli`` calls it): one
    start-up instead of one per command. Each command's exit status and terminal text. ``fork``:
    as :func:`run_pty`'s."""
    import json

    fork_as = {"argv": commands, "many": True} if fork else None
    code, raw = _run_in_pty([sys.executable, "-c", _MANY, json.dumps(commands)], cols, rows, cwd, env, limit_s,
                            fork_as)
    parts = _DONE.split(raw)  # text, index, status, text, index, status, ..., rest
    done = {int(parts[k + 1]): (int(parts[k + 2]), screen(parts[k])) for k in range(0, len(parts) - 2, 3)}
    if sorted(done) != list(range(len(commands))):
        raise AssertionError(f"the driver ended with {code} after {len(done)} of {len(commands)} commands:\n"
                             f"{screen(raw)[-3000:]}")
    return [done[i] for i in range(len(commands))]


def _run_in_pty(cmd: list[str], cols: int, rows: int, cwd: Path | None, env: dict[str, str] | None,
                limit_s: float, fork_as: dict | None = None) -> tuple[int, str]:
    """Exit status and raw terminal output of ``cmd`` run in a ``cols`` x ``rows`` pseudo-terminal
    (``fork_as``: :func:`zygote.start`'s arguments for the same command forked instead)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    e = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR")}
    e.update({"TERM": "xterm-256color", "PYTHONIOENCODING": "utf-8"})
    e.update(env or {})
    if fork_as is not None:
        proc = zygote.start(fork_as.pop("argv"), env=e, cwd=str(cwd or REPO), stdin=slave, stdout=slave, stderr=slave,
                            fresh_cmd=cmd, **fork_as)
    else:
        proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, cwd=str(cwd or REPO), env=e,
                                close_fds=True)
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
    return code, b"".join(chunks).decode("utf-8", errors="replace")
