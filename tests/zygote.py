"""The servers tests start (``kgqa web``, ``kgqa system serve``), and the ``kgqa`` processes
whose claim is what a process does but not how an interpreter starts (the live-system client
killed or interrupted, the 80-column terminal runs), forked from one process per test process
that imported kgqa's CLI, web app and live-system service once (a zygote).

A ``kgqa web`` process spends about 1.4 s of CPU importing Starlette, SQLAlchemy, Jinja2, NumPy
and kgqa's web modules before it serves a page, and ``kgqa system serve`` about 0.7 s: paid
again by every server a test starts (a dozen in the README's test command). A server forked
from the zygote starts with them imported. It is still a real process on its own loopback port,
started, signalled and stopped by its PID, with its own environment, working folder, standard
streams, session and exit status; it runs the same ``kgqa.cli.main`` with the same arguments, its
``__main__`` and ``sys.path[0]`` are those of ``python -c``, and its exit runs the ``atexit``
handlers as an interpreter's exit does. What it does not do is start the interpreter: the tests
that start a command as a fresh interpreter (``fresh=True`` of :class:`~webserver.WebServer`,
``systemprocs.Proc``) keep that path covered, and ``KGQA_TEST_FORK=0`` starts every server so.

Requests go over a UNIX socket pair given to the zygote at its start: the command line, the
environment, the working folder and the standard streams' file descriptors (``SCM_RIGHTS``), and
a socket of the request's own on which the zygote says the child's PID and, once it has reaped
the child, its exit status (as :attr:`subprocess.Popen.returncode` says it). The zygote ends when
the test process closes its end (tests/conftest.py at the session's end) or dies.

CPU time: a forked process is the zygote's child, so its CPU time reaches the test process's
children's only when the zygote is waited for at the session's end, not when its test ends (a
per-test probe of the test process's waited-for children does not see it; ``/usr/bin/time`` of
the run does, and ``KGQA_TEST_ZYGOTE_CPU=FILE`` adds each zygote's total to FILE)."""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: what the servers import before they serve (the ``kgqa web`` and ``kgqa system serve`` paths)
PRELOAD = ("kgqa.cli", "kgqa.cli.web", "kgqa.cli.system", "kgqa.web.app", "kgqa.web.serve", "kgqa.service",
           "uvicorn")

#: settings kgqa reads once at import (module constants): a request that sets them otherwise
#: than the zygote saw is started as a fresh interpreter
IMPORT_TIME_ENV = ("KGQA_LEASE_SECONDS", "KGQA_WORKER_IDLE_S", "PYTHONHASHSEED")


def python_path(env: dict[str, str]) -> list[str]:
    """``PYTHONPATH``'s folders as the interpreter puts them on ``sys.path`` (absolute, each
    once)."""
    return list(dict.fromkeys(os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p))


def same_imports(env: dict[str, str], zygote_env: dict[str, str]) -> bool:
    """Whether a fresh interpreter with ``env`` imports what the zygote imported: the settings of
    :data:`IMPORT_TIME_ENV` alike, and the same ``PYTHONPATH`` but for the checkout itself (kgqa
    comes from it either way: the tests' helpers put it first, an editable install finds it)."""
    def path(e):
        return [p for p in python_path(e) if p != str(REPO)]

    return all(env.get(k) == zygote_env.get(k) for k in IMPORT_TIME_ENV) and path(env) == path(zygote_env)

_MAX_MSG = 1 << 20


# --------------------------------------------------------------------------- the zygote itself


def _child(req: dict, fds: list[int]) -> None:
    """In the forked child: become ``python -c "from kgqa.cli import main; main()" ARGV``."""
    code: int = 1
    try:
        signal.set_wakeup_fd(-1)
        for s in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.close(fds[0])
        if req["session"]:
            os.setsid()
        for target, fd in zip((0, 1, 2), fds[1:]):
            os.dup2(fd, target)
        for fd in set(fds[1:]):
            os.close(fd)
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        # the interpreter's standard streams, made afresh on the new descriptors (the zygote's knew
        # its own: a file is seekable, a pipe is not), as it makes them (PYTHONIOENCODING, a TTY)
        enc, _, errors = os.environ.get("PYTHONIOENCODING", "").partition(":")
        enc = enc or (sys.__stdout__.encoding if sys.__stdout__ else None)
        sys.stdin = sys.__stdin__ = open(0, "r", encoding=enc, errors=errors or None, closefd=False)
        sys.stdout = sys.__stdout__ = open(1, "w", encoding=enc, errors=errors or None, closefd=False,
                                           buffering=1 if os.isatty(1) else -1)
        sys.stderr = sys.__stderr__ = open(2, "w", encoding=enc, errors="backslashreplace", closefd=False, buffering=1)
        import importlib
        import tempfile
        import types

        tempfile.tempdir = None
        many = req.get("many", False)
        sys.argv = ["-c"] if many else [req["argv0"], *req["argv"]]
        # python -c: the working folder first (-m: its absolute path), then PYTHONPATH, then the rest
        rest = [p for p in sys.path[1:] if p not in python_path(req["zygote_env"])]
        sys.path[:] = ["" if req["argv0"] == "-c" else os.getcwd(), *python_path(req["env"]), *rest]
        importlib.invalidate_caches()
        sys.modules["__main__"] = types.ModuleType("__main__")
        from kgqa.cli import main

        code = 0
        try:
            if many:
                _many(main, req["argv"])
            else:
                main(list(req["argv"]))
        except SystemExit as e:
            code = _status(e)
            if not isinstance(e.code, (int, type(None))):
                print(e.code, file=sys.stderr)
        except KeyboardInterrupt:
            _exit_funcs()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        _exit_funcs()
    finally:
        os._exit(code)


def _status(e: SystemExit) -> int:
    return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)


def _many(main, commands: list[list[str]]) -> None:
    """tests/ptyrun.py's driver: each command in turn, then its index and exit status."""
    for i, args in enumerate(commands):
        try:
            main(args)
            code = 0
        except SystemExit as e:
            code = _status(e)
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout.write(f"\x00kgqa-pty-done {i} {code}\x00\n")
        sys.stdout.flush()


def _exit_funcs() -> None:
    """What an interpreter does at its end: wait for the threads that are not daemons, run the
    ``atexit`` handlers, flush the standard streams."""
    import atexit as _atexit
    import threading

    try:
        threading._shutdown()
        _atexit._run_exitfuncs()
    finally:
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:
                pass


def zygote_main(ctl_fd: int) -> None:
    import importlib

    ctl = socket.socket(fileno=ctl_fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C of the test run: the test process ends us
    for m in PRELOAD:
        importlib.import_module(m)
    import httpx

    httpx.Client().close()  # what a client's first request imports (httpcore, h11, its backends)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *a: None)
    chans: dict[int, socket.socket] = {}
    ctl.sendall(b"ready")

    def reap() -> None:
        while chans:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            ch = chans.pop(pid, None)
            if ch is not None:
                try:
                    ch.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    pass
                ch.close()

    while True:
        ready, _, _ = select.select([ctl, wake_r], [], [])
        if wake_r in ready:
            try:
                os.read(wake_r, 4096)
            except BlockingIOError:
                pass
            reap()
        if ctl in ready:
            try:
                data, fds, _, _ = socket.recv_fds(ctl, _MAX_MSG, 4)
            except OSError:
                data, fds = b"", []
            if not data:  # the test process closed its end (or ended)
                os._exit(0)
            pid = os.fork()
            if pid == 0:
                ctl.close()
                os.close(wake_r)
                os.close(wake_w)
                for ch in chans.values():
                    ch.close()
                _child(json.loads(data), fds)
            for fd in fds[1:]:
                os.close(fd)
            chan = socket.socket(fileno=fds[0])
            chans[pid] = chan
            chan.sendall(f"pid {pid}\n".encode())
            reap()  # a child that ended at once


# --------------------------------------------------------------------------- the test process's side


class Forked:
    """A process forked by the zygote, with the parts of :class:`subprocess.Popen` the tests use:
    ``pid``, ``poll()``, ``wait(timeout)``, ``returncode``, and ``stdout``/``stderr`` (binary
    readers) where they were asked for as pipes."""

    def __init__(self, chan: socket.socket, stdout=None, stderr=None):
        self._chan = chan
        self._buf = b""
        self.returncode: int | None = None
        self.stdout, self.stderr = stdout, stderr
        self.pid = int(self._line(None).split()[1])

    def _line(self, timeout: float | None) -> str | None:
        while b"\n" not in self._buf:
            ready, _, _ = select.select([self._chan], [], [], timeout)
            if not ready:
                return None
            got = self._chan.recv(256)
            if not got:
                raise RuntimeError("the zygote that forked this server ended")
            self._buf += got
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def poll(self) -> int | None:
        if self.returncode is None:
            line = self._line(0)
            if line is not None:
                self.returncode = int(line.split()[1])
                self._chan.close()
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            line = self._line(timeout)
            if line is None:
                raise subprocess.TimeoutExpired("forked kgqa", timeout)
            self.returncode = int(line.split()[1])
            self._chan.close()
        return self.returncode


class _Popen(subprocess.Popen):
    """A Popen that keeps the rusage of its process (its reaped children's included) at its end."""

    def _try_wait(self, wait_flags):
        try:
            pid, sts, self.rusage = os.wait4(self.pid, wait_flags)
        except ChildProcessError:
            pid, sts = self.pid, 0
        return pid, sts


class _Zygote:
    def __init__(self, env: dict[str, str]):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.env = env
        self.proc = _Popen([sys.executable, str(Path(__file__)), str(theirs.fileno())], pass_fds=(theirs.fileno(),),
                                     env=env, stdin=subprocess.DEVNULL, cwd=str(REPO))
        theirs.close()
        self.ctl = ours
        ready, _, _ = select.select([ours], [], [], 300)
        if not ready or ours.recv(16) != b"ready":
            self.close()
            raise RuntimeError("the test servers' zygote did not start")

    def fits(self, env: dict[str, str]) -> bool:
        return self.proc.poll() is None and same_imports(env, self.env)

    def fork(self, req: dict, stdin: int | None, stdout: int, stderr: int) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            socket.send_fds(self.ctl, [json.dumps(req).encode()],
                            [theirs.fileno(), null if stdin is None else stdin, stdout, stderr])
        finally:
            os.close(null)
            theirs.close()
        return ours

    def close(self) -> None:
        """End the zygote and wait for it (its CPU time, and that of the servers it forked and
        reaped, then counts in the test process's children's); ``KGQA_TEST_ZYGOTE_CPU``: a file
        to add a line with that CPU time to."""
        self.ctl.close()  # the zygote ends at once
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)
        ru = self.proc.rusage if hasattr(self.proc, "rusage") else None
        out = os.environ.get("KGQA_TEST_ZYGOTE_CPU")
        if out and ru is not None:
            with open(out, "a", encoding="utf-8") as f:
                f.write(f"{os.getpid()} {ru.ru_utime + ru.ru_stime:.2f}\n")


_ZYGOTE: list[_Zygote] = []


def close() -> None:
    """End this process's zygote, if it started one, and wait for it (tests/conftest.py at the
    session's end, else at the interpreter's exit)."""
    while _ZYGOTE:
        _ZYGOTE.pop().close()


def enabled() -> bool:
    return os.environ.get("KGQA_TEST_FORK", "1") != "0" and sys.platform.startswith("linux")


def _zygote(env: dict[str, str]) -> _Zygote | None:
    if not enabled():
        return None
    if not _ZYGOTE:
        _ZYGOTE.append(_Zygote(env))
        atexit.register(close)
    z = _ZYGOTE[0]
    return z if z.fits(env) else None


#: ``python -m kgqa.cli``'s ``sys.argv[0]``
MODULE_ARGV0 = str(REPO / "kgqa" / "cli" / "__main__.py")


def start(argv: list, *, env: dict[str, str], cwd: str, stdout, stderr, stdin=None, new_session: bool = False,
          module: bool = False, many: bool = False, fresh_cmd: list[str] | None = None):
    """``python -c "from kgqa.cli import main; main()" ARGV`` (``module``: ``python -m kgqa.cli
    ARGV``; ``many``: tests/ptyrun.py's driver of the commands ``ARGV``) as a child of the zygote
    (a :class:`Forked`), or as a fresh interpreter (a :class:`subprocess.Popen` of ``fresh_cmd``,
    by default the ``python -c`` line) where forking is off or ``env`` sets an import-time
    setting otherwise. ``stdin``/``stdout``/``stderr``: a file object or descriptor, or
    ``subprocess.PIPE`` or ``subprocess.DEVNULL`` (not for ``stdin``); ``stdin`` None: the null
    device."""
    z = _zygote(env)
    if z is None:
        cmd = fresh_cmd or [sys.executable, "-c", "from kgqa.cli import main; main()", *argv]
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL if stdin is None else stdin,
                                stdout=stdout, stderr=stderr, start_new_session=new_session)
    readers, fds, close = [], [], []
    for target in (stdout, stderr):
        if target == subprocess.PIPE:
            r, w = os.pipe()
            readers.append(os.fdopen(r, "rb"))
            fds.append(w)
            close.append(w)
        elif target == subprocess.DEVNULL:
            readers.append(None)
            fds.append(os.open(os.devnull, os.O_WRONLY))
            close.append(fds[-1])
        else:
            readers.append(None)
            fds.append(target if isinstance(target, int) else target.fileno())
    if stdin is not None and not isinstance(stdin, int):
        stdin = stdin.fileno()
    req = {"argv": argv, "env": env, "cwd": cwd, "session": new_session, "many": many,
           "argv0": MODULE_ARGV0 if module else "-c", "zygote_env": z.env}
    try:
        chan = z.fork(req, stdin, fds[0], fds[1])
    finally:
        for fd in close:
            os.close(fd)
    return Forked(chan, *readers)


def run(argv: list[str], *, env: dict[str, str], cwd: str, timeout: float) -> subprocess.CompletedProcess:
    """:func:`subprocess.run` of ``python -c "from kgqa.cli import main; main()" ARGV``, its output
    captured as text, the process forked by :func:`start`."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = start(argv, env=env, cwd=cwd, stdout=out, stderr=err)
        try:
            code = p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read().decode("utf-8", errors="replace"))
    return subprocess.CompletedProcess(argv, code, *texts)


if __name__ == "__main__":
    zygote_main(int(sys.argv[1]))
