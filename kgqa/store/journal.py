"""A live system's answers journalled in the store while a stored experiment asks it (issue 39).

:class:`StoreJournal` is what :func:`kgqa.store.runner.run_experiment` gives the live client
(:func:`kgqa.execute.live.ask`'s ``journal``) in place of a journal file: every answer goes
to the store's ``journal`` table (:meth:`kgqa.store.Store.journal_write`) as it arrives, so a
worker that takes the experiment over after its first worker was killed, on this machine or
on any other one on the same store, asks the live system only the questions without an
answer there. The journal's own writer thread writes whatever answers arrived while its
last write ran in one transaction (a batch grows with the load); a worker that lost the lease
(a database outage longer than the lease, and another worker took the experiment over) still
adds the answers it holds for questions the journal has no record of, never replacing one and
never once the experiment is recorded: they are facts about the live system, which the new
owner then reads instead of asking again; the client hands each answer over and asks its next question at
once, so the store's round trips never slow the evaluation. What a kill loses is the questions
in flight and the answers not written yet (those that arrived during the last write); every
answer in the store is kept. A store that cannot be written for a while (a database restart, a
full disk) keeps the answers in memory and writes them with a later batch (tried again with
backoff, 0.5 s doubling up to 10 s): the evaluation goes on. The rows are deleted in the
transaction that records the experiment (finished or failed).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from sqlalchemy.exc import DBAPIError

from kgqa.store.store import StoreError

#: how often (s) a journal that watches (a worker that took the experiment over) reads the
#: answers another worker journalled meanwhile
REFRESH_S = 1.0


class StoreJournal:
    """The journal of stored experiment ``eid`` for the live client; ``owner``: the worker
    holding its lease (None: a store without leases, which always writes)."""

    def __init__(self, store: Any, eid: str, owner: str | None = None, *, watch: bool = False):
        self.store, self.eid, self.owner = store, eid, owner
        #: read the store's journal again while asking (:meth:`refresh`, every
        #: :data:`REFRESH_S` on the writer thread): this worker took the experiment over from a
        #: worker that may still write the answers it held (:meth:`taken`)
        self.watch = watch
        #: answers another worker journalled after this journal was opened: question id -> record
        self.others: dict[str, dict[str, Any]] = {}
        #: question id -> record (what the store holds, and what this session added)
        self.records: dict[str, dict[str, Any]] = {}
        #: records that could not be read (never expected: each row is written whole)
        self.dropped = 0
        #: answers not written yet (the store was away)
        self.pending: dict[str, str] = {}
        #: another worker holds the experiment now: answers are still written, for questions the
        #: journal has no record of (:meth:`kgqa.store.Store.journal_write`), until it is recorded
        self.lost = False
        self._lock = threading.Lock()  # records and pending
        self._write_lock = threading.Lock()  # one write at a time
        self._wake, self._stop = threading.Event(), threading.Event()
        self._thread: threading.Thread | None = None
        self._inline = False  # no writer thread: each batch written by the caller
        self._pause = 0.0  # the backoff while the store is away

    @property
    def where(self) -> str:
        """What messages call this journal."""
        return f"the store's journal of experiment {self.eid}"

    def __str__(self) -> str:
        return self.where

    def open_journal(self, header: dict[str, Any], *, fresh: bool = False) -> "StoreJournal":
        """Read what the store holds (``fresh``: forget it). The experiment's stored inputs
        are the journal's identity, so ``header`` (URL, protocol, dataset) is not kept."""
        if fresh:
            self.store.journal_clear(self.eid)
        for qid, text in self.store.journal(self.eid).items():
            try:
                rec = json.loads(text)
            except json.JSONDecodeError:
                rec = None
            if isinstance(rec, dict) and rec.get("id") == qid:
                self.records[qid] = rec
            else:
                self.dropped += 1
        if self.watch:
            self.start()
        return self

    def append_many(self, records: list[dict[str, Any]]) -> None:
        """Hand answers that arrived together to the journal's writer thread and return at
        once: the requests go on while the store writes, and whatever arrived while the last
        write ran goes in the next transaction (a batch)."""
        if not records:
            return
        with self._lock:
            for r in records:
                self.records[r["id"]] = r
                self.pending[r["id"]] = json.dumps(r, ensure_ascii=False, allow_nan=False)
        self.start()
        if self._inline:
            self.flush()
        else:
            self._wake.set()

    def append(self, record: dict[str, Any]) -> None:
        self.append_many([record])

    def taken(self, qid: str) -> dict[str, Any] | None:
        """The record another worker journalled for question ``qid`` since this journal was
        opened (None: none): the live client asks the question only when there is none."""
        with self._lock:
            return self.others.get(qid)

    def refresh(self) -> int:
        """Read the answers other workers journalled since this journal was opened (the
        question ids first, then only the new records): how many; 0 when the store is away."""
        try:
            ids = self.store.journal_ids(self.eid)
            with self._lock:
                new = [q for q in ids if q not in self.records and q not in self.pending]
            got = self.store.journal(self.eid, questions=new) if new else {}
        except (DBAPIError, StoreError):
            return 0
        n = 0
        with self._lock:
            for qid, text in got.items():
                try:
                    rec = json.loads(text)
                except json.JSONDecodeError:
                    continue
                if isinstance(rec, dict) and rec.get("id") == qid and qid not in self.records:
                    self.others[qid] = self.records[qid] = rec
                    n += 1
        return n

    def _write_loop(self) -> None:
        while True:
            woken = self._wake.wait(REFRESH_S if self.watch else None)
            self._wake.clear()
            if self._stop.is_set():
                return
            if self.watch:
                self.refresh()
            if woken and not self.flush() and not self._stop.wait(self._pause):  # the store is away: backoff
                self._wake.set()

    def start(self) -> None:
        """Start the writer thread now (a watching journal reads the store from the start)."""
        with self._lock:
            start = self._thread is None and not self._inline
            if start:
                self._thread = threading.Thread(target=self._write_loop, name="kgqa-store-journal", daemon=True)
        if start:
            try:
                self._thread.start()  # type: ignore[union-attr]
            except (RuntimeError, MemoryError):  # no thread to be had (a capped worker): written by the caller
                self._thread, self._inline = None, True

    def flush(self) -> bool:
        """Write every answer handed over so far (after a write in progress): False when the
        store is away (the answers stay pending for a later batch, tried again with backoff)."""
        try:
            self.settle()
        except (DBAPIError, StoreError):
            self._pause = min(max(2 * self._pause, 0.5), 10.0)
            return False
        self._pause = 0.0
        return True

    def settle(self) -> None:
        """Write every answer handed over so far; the store's error propagates when it is away
        (the answers stay pending): what the run waits out before it records the experiment
        (:func:`kgqa.store.runner.wait_for_store`), so the answers of a run that finished asking
        during an outage reach the journal even if another worker takes the experiment over."""
        with self._write_lock:
            with self._lock:
                batch, self.pending = self.pending, {}
            if not batch:
                return
            try:
                written = self.store.journal_write(self.eid, batch, owner=self.owner)
            except (DBAPIError, StoreError):
                with self._lock:
                    self.pending = {**batch, **self.pending}  # (a later record of a question wins)
                raise
            self.lost = not written  # taken over: the run's next write of the experiment says so

    def close(self) -> None:
        """Stop the writer thread and write what is still pending (one more try)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
        self.flush()

    def __enter__(self) -> "StoreJournal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
