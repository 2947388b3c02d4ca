"""Waiting in tests for something to happen (a server answering, a store row, a journal line, a
process's output) without guessing how long it takes: a condition polled until it holds, with a
deadline generous enough for a loaded machine, failing with what never happened. In-process
threads wait on a ``threading.Event`` instead."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout: float = 120.0, every: float = 0.02, what: str = "",
               proc: subprocess.Popen | None = None) -> T:
    """``condition()`` once it is truthy, polled every ``every`` s; AssertionError naming
    ``what`` after ``timeout`` s, or as soon as ``proc`` (the process that should make it true)
    has exited."""
    deadline = time.monotonic() + timeout
    while True:
        got = condition()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr is not None and not proc.stderr.closed else ""
            err = err.decode(errors="replace") if isinstance(err, bytes) else err
            raise AssertionError(f"{what or condition}: the process exited with {proc.returncode} first\n{err[-2000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what or condition}")
        time.sleep(every)
