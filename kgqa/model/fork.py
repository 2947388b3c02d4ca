"""A second process for work that splits in two: ``fork`` shares what the parent holds in memory
(a run of a million predictions, an evaluation's columns) without copying or pickling it, so
the child's half costs only its result. Used where the input is large (the lean scorer's second
byte range, ``--save``'s second half of the records); every caller has the parent do the
child's part itself when no child can be forked or the child fails, with the same result.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import threading
from collections.abc import Callable
from typing import Any
import mmap
import multiprocessing

#: what a child that failed gives (a result of its own may be None)
FAILED = object()


def can_fork() -> bool:
    """Whether a second process helps and is safe to fork here: on Linux (macOS libraries may
    not survive a fork without exec; Windows has no fork), with two cores available to this
    process and no other thread running (a lock one holds would stay held in the child)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    return len(os.sched_getaffinity(0)) >= 2 and threading.active_count() == 1


def forked(fn: Callable[..., Any], *args: Any) -> Callable[[], Any] | None:
    """``fn(*args)`` started in a forked process; returns the function that waits for its
    (pickled) result, which is :data:`FAILED` where the process failed. None where no process
    can be forked here (:func:`can_fork`)."""
    if not can_fork():
        return None
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, write, exit (never back into the caller's code)
        code = 1
        try:
            os.close(r)
            with os.fdopen(w, "wb") as out:
                pickle.dump(fn(*args), out, protocol=pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)
    os.close(w)

    def result() -> Any:
        with os.fdopen(r, "rb") as fh:
            data = fh.read()
        _, status = os.waitpid(pid, 0)
        return pickle.loads(data) if status == 0 and data else FAILED

    return result


def dealer(n: int) -> "Deal | None":
    """A :class:`Deal` of ``n`` tasks for this process and one it forks, or None where no
    second process helps (:func:`can_fork`), there is one task at most, or no shared lock can
    be made here: the caller then does all the tasks itself."""
    if n < 2 or not can_fork():
        return None
    try:
        return Deal(n)
    except OSError:
        return None


class Deal:
    """Task numbers ``0 .. n-1`` dealt to a parent and its forked child as each gets free: the
    parent takes from the front, the child from the back, until they meet. A process on a busy
    core then does fewer, and each one's tasks are consecutive (the parent's come first)."""

    def __init__(self, n: int):
        self._lock = multiprocessing.Lock()  # OSError where no semaphore can be made: work alone
        self._mem = mmap.mmap(-1, 16)  # shared with the child: (next from the front, end of the back)
        struct.pack_into("qq", self._mem, 0, 0, n)

    def take(self, front: bool) -> int | None:
        """The next task number for the parent (``front``) or the child; None when none is left."""
        with self._lock:
            f, b = struct.unpack_from("qq", self._mem)
            if f >= b:
                return None
            if front:
                struct.pack_into("q", self._mem, 0, f + 1)
                return f
            struct.pack_into("q", self._mem, 8, b - 1)
            return b - 1

    def stop(self) -> None:
        """Deal no more tasks (the work is abandoned)."""
        with self._lock:
            struct.pack_into("qq", self._mem, 0, 0, 0)
