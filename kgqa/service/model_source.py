"""Serve a trained reference system (:mod:`kgqa.baselines`): ``kgqa system serve --model DIR``.

:class:`ModelSource` answers each question with the system's query (in a worker thread: models
compute); with ``kg`` the system reads the KG where it needs to (label matching, entity
detection) and the adapter executes the query for GERBIL answers as for any source. A question
the system has no query for is a 404 naming the system.

**Input** (:mod:`kgqa.baselines.inputs`): a system is served only with the input form it was
trained on (``manifest.json``'s ``input``). A system trained on raw questions answers the raw
questions it receives (linking entities itself where it does, on ``kg``). A system trained on
``tagged`` / ``tag-end`` questions (the gold query's KB elements written into the question: an
oracle linker no served question can have) is served only with ``input="tagged"`` (or
``tag-end``): the clients send questions written in that form and the elements are read back
from the text; otherwise :func:`check_input` refuses with the reason. A folder that does not
record its input (saved by an older kgqa) and a system trained on a mix of forms are refused
the same way unless ``input`` names the form the clients send.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from kgqa.service.sources import Reply, ServiceError
from kgqa.baselines import load_system
from kgqa.baselines.inputs import INPUTS, ORACLE, describe
from kgqa.execute.executor import Executor
from kgqa.execute.policy import ExecutionPolicy
from kgqa.model import InputError


def check_input(system: Any, folder: Path, form: str | None) -> str:
    """The form served questions are read in; InputError when the system cannot be served with it."""

    trained = system.input
    if form is not None and form not in INPUTS:
        raise InputError("--input", f"expected one of {', '.join(INPUTS)}, got {form!r}")
    if form is not None and (form == trained or not trained or trained.startswith("mixed(")):
        return form
    if form is None and trained == "raw":
        return "raw"
    if not trained:
        raise InputError(folder, "the folder does not record which input the system was trained on (saved by an "
                                 "older kgqa); retrain it, or name the form your clients send with --input "
                                 f"{'|'.join(INPUTS)}")
    if trained in ORACLE and form in (None, "raw"):
        raise InputError(folder, f"this {system.kind} system was trained on {describe(trained)}; a served question "
                                 "has no gold query to tag it with, so raw questions would be answered from input it "
                                 f"never saw. Serve it with --input {trained} to clients that send questions in "
                                 f"that form, or train it on raw questions (kgqa annotate --mode raw)")
    raise InputError(folder, f"this {system.kind} system was trained on {trained if trained.startswith('mixed(') else describe(trained)}"
                             f"{'' if form is None else f'; --input {form} is another form'}: serve it with "
                             f"--input {'|'.join(INPUTS) if trained.startswith('mixed(') else trained}")


class ModelSource:
    def __init__(self, folder: str | Path, kg: str | None = None, timeout: float = 30.0, input: str | None = None):
        self.folder = Path(folder)
        self.system = load_system(folder)
        self.form = check_input(self.system, self.folder, input)
        self.executor = None
        kg = kg or (self.system.manifest.get("kg") if self.system.needs_kg else None)
        if kg:
            self.executor = Executor.open(kg, policy=ExecutionPolicy(timeout=timeout), cache=False)
        self._lock = threading.Lock()  # one question at a time through the model

    size = None

    def describe(self) -> str:
        m = self.system.manifest
        return (f"{m['kind']} system {self.folder} (trained on {m['train']['name']}, seed {m['seed']}; "
                f"reads {self.form} questions)")

    def _answer(self, question: str) -> str | None:
        with self._lock:
            return self.system.answer(question, self.executor, self.form)

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
