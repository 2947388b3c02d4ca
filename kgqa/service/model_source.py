"""Serve a trained reference system (:mod:`kgqa.baselines`): ``kgqa system serve --model DIR``.

:class:`ModelSource` answers each question with the system's query (in a worker thread: models
compute); with ``kg`` the system reads the KG where it needs to (label matching, entity
detection) and the adapter executes the query for GERBIL answers as for any source. A question
the system has no query for is a 404 naming the system.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from kgqa.service.sources import Reply, ServiceError


class ModelSource:
    def __init__(self, folder: str | Path, kg: str | None = None, timeout: float = 30.0):
        from kgqa.baselines import load_system

        self.folder = Path(folder)
        self.system = load_system(folder)
        self.executor = None
        kg = kg or (self.system.manifest.get("kg") if self.system.needs_kg else None)
        if kg:
            from kgqa.execute.executor import Executor
            from kgqa.execute.policy import ExecutionPolicy

            self.executor = Executor.open(kg, policy=ExecutionPolicy(timeout=timeout), cache=False)
        self._lock = threading.Lock()  # one question at a time through the model

    size = None

    def describe(self) -> str:
        m = self.system.manifest
        return f"{m['kind']} system {self.folder} (trained on {m['train']['name']}, seed {m['seed']})"

    def _answer(self, question: str) -> str | None:
        with self._lock:
            return self.system.answer(question, self.executor)

    async def answer(self, question: str, lang: str | None, dataset: str | None) -> Reply:
        try:
            sparql = await asyncio.get_running_loop().run_in_executor(None, self._answer, question)
        except Exception as e:  # noqa: BLE001 - the system's failure goes to the client
            raise ServiceError(500, f"the {self.system.kind} system raised {type(e).__name__}: {e}") from None
        if not sparql:
            raise ServiceError(404, f"the {self.system.kind} system has no query for this question")
        return Reply(None, sparql)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.close()
