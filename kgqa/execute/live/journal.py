"""The append-only journal of a ``kgqa system ask`` session: what makes it survive kill -9.

A journal is a JSON Lines file. Its first line is a header naming what was asked::

    {"journal": "kgqa-system-ask", "version": 1, "url": ..., "protocol": ..., "dataset": ...}

and every further line is one finished question (one record per question id, written by
:meth:`Journal.append` / :meth:`Journal.append_many` as soon as the response arrives: the line
is written, flushed and ``fsync``'d before the client asks its next question; answers that
arrive together share one fsync). Reopening a journal (:meth:`Journal.open`) reads the records
already there, so a rerun asks only the questions without one. A last line cut short by a kill
is dropped (the file is truncated back to the last complete line before anything is appended).
A header for another URL, protocol or dataset is refused (InputError): start over with
``fresh=True`` (``--fresh``) or write elsewhere.

The journal may live elsewhere than in a file: :func:`open_journal` takes a path, or an
object with an ``open_journal(header, fresh=...)`` method returning one that behaves like a
:class:`Journal` (``records``, ``dropped``, ``where``, ``append_many``, ``close``): a stored
experiment's journal in the store (:class:`kgqa.store.journal.StoreJournal`), which every
worker on that store reads, on any machine.

An open journal holds an exclusive lock (``flock``) on its file until it is closed: a second
session on the same journal (two runs on one output) is refused at once with an InputError
instead of asking every question a second time. The lock goes with the process (kill -9
included), so a stale lock never blocks a rerun.
"""

from __future__ import annotations

import json
import os
import threading

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows: no lock there
    fcntl = None  # type: ignore[assignment]
from pathlib import Path
from typing import Any

from kgqa.model.problems import InputError

MAGIC = "kgqa-system-ask"
VERSION = 1
#: header fields that must match for a journal to be resumed
IDENTITY = ("url", "protocol", "dataset")


class Journal:
    def __init__(self, path: Path, header: dict[str, Any], records: dict[str, dict[str, Any]], dropped: int,
                 fd: int):
        self.path = Path(path)
        self.header = header
        #: question id -> record, in file order (a later record for the same id replaces an earlier one)
        self.records = records
        #: lines that could not be read (a torn last line after a kill)
        self.dropped = dropped
        self._fh = os.fdopen(fd, "a", encoding="utf-8", newline="\n")
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path, header: dict[str, Any], *, fresh: bool = False) -> "Journal":
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        header = {"journal": MAGIC, "version": VERSION, **header}
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            _lock(fd, path)
            if fresh:
                os.ftruncate(fd, 0)
            records, dropped, old = _read(fd, path, header)
            j = cls(path, old or header, records, dropped, fd)
        except BaseException:
            os.close(fd)
            raise
        if old is None:
            j._write(header)
        return j

    @property
    def where(self) -> str:
        """What messages call this journal: its path."""
        return str(self.path)

    def _write(self, *objs: dict[str, Any]) -> None:
        text = "".join(json.dumps(o, ensure_ascii=False, allow_nan=False) + "\n" for o in objs)
        with self._lock:
            self._fh.write(text)
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def append(self, record: dict[str, Any]) -> None:
        """Write one finished question (flushed and fsync'd before returning)."""
        self.append_many([record])

    def append_many(self, records: list[dict[str, Any]]) -> None:
        """Write finished questions that arrived together: one write, one fsync (group commit),
        all on disk before returning."""
        if not records:
            return
        self._write(*records)
        for r in records:
            self.records[r["id"]] = r

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_journal(journal: Any, header: dict[str, Any], *, fresh: bool = False) -> Any:
    """The journal ``journal`` names, opened: a path (:meth:`Journal.open`), or an object that
    opens itself (``journal.open_journal(header, fresh=fresh)``)."""
    if hasattr(journal, "open_journal"):
        return journal.open_journal(header, fresh=fresh)
    return Journal.open(Path(journal), header, fresh=fresh)


def _lock(fd: int, path: Path) -> None:
    if fcntl is None:  # pragma: no cover
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise InputError(path, "another kgqa session is asking into this journal right now (a second run on the "
                               "same output would ask every question twice); wait for it to finish, or write "
                               "to another output") from None


def _read(fd: int, path: Path, header: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], int, dict | None]:
    """The records of the journal open on ``fd`` (checked against ``header``), the number of
    unreadable lines, and its header (None for an empty file). A torn last line is cut off."""
    size = os.fstat(fd).st_size
    if size == 0:
        return {}, 0, None
    data = os.pread(fd, size, 0)
    end = data.rfind(b"\n") + 1  # bytes after the last newline: a torn line
    dropped = int(end < len(data))
    lines = data[:end].decode("utf-8", "replace").splitlines()
    try:
        old = json.loads(lines[0]) if lines else None
    except json.JSONDecodeError:
        old = None
    if not isinstance(old, dict) or old.get("journal") != MAGIC:
        raise InputError(path, "exists and is not a kgqa system-ask journal; remove it or pass --fresh")
    diff = [k for k in IDENTITY if old.get(k) != header.get(k)]
    if diff:
        what = ", ".join(f"{k} {old.get(k)!r} (now {header.get(k)!r})" for k in diff)
        raise InputError(path, f"journal of another session: {what}; pass --fresh to start over "
                               "or write to another output")
    records: dict[str, dict[str, Any]] = {}
    for line in lines[1:]:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            dropped += 1
            continue
        if isinstance(rec, dict) and isinstance(rec.get("id"), str):
            records[rec["id"]] = rec
        else:
            dropped += 1
    if end < len(data):
        os.ftruncate(fd, end)
    return records, dropped, old
