"""A live system's answers journalled in the store while a stored experiment asks it (issue 39).

:class:`StoreJournal` is what :func:`kgqa.store.runner.run_experiment` gives the live client
(:func:`kgqa.execute.live.ask`'s ``journal``) in place of a journal file: every answer goes
to the store's ``journal`` table (:meth:`kgqa.store.Store.journal_write`) as it arrives, so a
worker that takes the experiment over after its first worker was killed, on this machine or
on any other one on the same store, asks the live system only the questions without an
answer there. Each write is one transaction, made only while this worker holds the
experiment's lease; the client's writer thread hands over whatever answers arrived while the
last write ran (group commit), so a write never stalls the requests in flight and a batch
grows with the load. A store that cannot be written for a while (a database restart, a full
disk) keeps the answers in memory and writes them with a later batch (tried again with backoff,
0.5 s doubling up to 10 s): the evaluation goes on, and only a worker killed meanwhile asks
them again. The rows are deleted in the
transaction that records the experiment (finished or failed).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from sqlalchemy.exc import DBAPIError

from kgqa.store.store import StoreError


class StoreJournal:
    """The journal of stored experiment ``eid`` for the live client; ``owner``: the worker
    holding its lease (None: a store without leases, which always writes)."""

    def __init__(self, store: Any, eid: str, owner: str | None = None):
        self.store, self.eid, self.owner = store, eid, owner
        #: question id -> record (what the store holds, and what this session added)
        self.records: dict[str, dict[str, Any]] = {}
        #: records that could not be read (never expected: each row is written whole)
        self.dropped = 0
        #: answers not written yet (the store was away)
        self.pending: dict[str, str] = {}
        #: another worker holds the experiment now: nothing more is written
        self.lost = False
        self._lock = threading.Lock()
        self._away_until = 0.0  # the store was away: no write tried before this (monotonic) time
        self._pause = 0.0

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
        return self

    def append_many(self, records: list[dict[str, Any]]) -> None:
        """Journal answers that arrived together: one transaction (with any the store could
        not take before)."""
        if not records:
            return
        with self._lock:
            for r in records:
                self.records[r["id"]] = r
                self.pending[r["id"]] = json.dumps(r, ensure_ascii=False, allow_nan=False)
            self._flush()

    def append(self, record: dict[str, Any]) -> None:
        self.append_many([record])

    def _flush(self, force: bool = False) -> None:
        if self.lost or not self.pending:
            self.pending.clear()
            return
        if not force and time.monotonic() < self._away_until:
            return  # the store was away a moment ago: not asked again at every answer
        try:
            written = self.store.journal_write(self.eid, self.pending, owner=self.owner)
        except (DBAPIError, StoreError):  # the store is away: written with a later batch (backoff up to 10 s)
            self._pause = min(max(2 * self._pause, 0.5), 10.0)
            self._away_until = time.monotonic() + self._pause
            return
        self._pause = 0.0
        self.pending.clear()
        self.lost = not written  # taken over: the run's next write of the experiment says so

    def close(self) -> None:
        """Write what is still pending (one try)."""
        with self._lock:
            self._flush(force=True)

    def __enter__(self) -> "StoreJournal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
