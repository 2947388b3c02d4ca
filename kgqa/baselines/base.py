"""The interface every reference system implements, and its folder on disk.

A system is created with a config (keyword options of its kind), fitted on a dataset
(:meth:`System.fit`), answers a dataset (:meth:`System.predict` -> :class:`~kgqa.model.Run`:
queries, and answers when a KG is given, executed through :class:`kgqa.execute.Executor` in
its sandbox) and is saved as a folder (:meth:`System.save`, :func:`load_system`):

- ``manifest.json``: ``kind``, ``config``, ``kgqa_version``, ``seed``, ``train`` (dataset
  name, item count, ``checksum`` of ids/questions/queries), ``valid`` (the same or null),
  ``namespaces`` (the KB namespaces of the training queries, for refusing a dataset of another
  KG), ``fit_seconds``;
- whatever state the kind keeps (``state.json``, ``model.pt``, ``weights.npz``).

A dataset "of another KG" is one whose gold queries have fewer than 10% of their KB IRIs in the
namespaces the system was trained on (namespaces holding at least 1% of the training queries'
KB IRIs): :meth:`System.check_dataset` refuses it with an InputError that names
both sets. A dataset without gold queries cannot be checked and is answered.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from kgqa.model import Dataset, InputError, Item, Prediction, Run, Status
from kgqa.baselines.inputs import describe, item_input, served_item, summary
from kgqa.baselines.tokens import dataset_checksum, jsonable, query_namespaces, question_text
from kgqa import __version__
from kgqa.baselines.training import Watch
from kgqa.execute.executor import Executor
from kgqa.execute.policy import ExecutionPolicy

MANIFEST = "manifest.json"


class System:
    """Base class; a kind implements :meth:`_fit`, :meth:`_queries`, :meth:`_save_state`,
    :meth:`_load_state` and declares :attr:`kind` and :attr:`defaults`."""

    kind: ClassVar[str] = ""
    #: config keys and their defaults (``seed`` and ``lang`` are everyone's)
    defaults: ClassVar[dict[str, Any]] = {}
    #: does predicting need a KG (``simple``: entity detection runs on it)?
    needs_kg: ClassVar[bool] = False

    def __init__(self, **config: Any):
        unknown = set(config) - set(self.defaults) - {"seed", "lang"}
        if unknown:
            raise InputError(f"baseline {self.kind}", f"unknown option(s) {', '.join(sorted(unknown))}; "
                                                      f"known: {', '.join(sorted({*self.defaults, 'seed', 'lang'}))}")
        self.config: dict[str, Any] = {"seed": 0, "lang": "en", **self.defaults,
                                       **{k: v for k, v in config.items() if v is not None}}
        self.manifest: dict[str, Any] = {}
        #: training a person can watch (:mod:`kgqa.baselines.training`): checkpoint folder,
        #: time budget in minutes, progress on stderr
        self.workdir: Path | None = None
        self.minutes: float | None = None
        self.show_progress = False

    @property
    def seed(self) -> int:
        return int(self.config["seed"])

    @property
    def lang(self) -> str:
        return str(self.config["lang"])

    # ------------------------------------------------------------------ fit / predict

    def fit(self, train: Dataset, valid: Dataset | None = None, kg: Any = None) -> "System":
        """Train on ``train`` (items with a question and a gold query); ``valid`` for kinds that
        use one; ``kg`` (a ``--kg`` value) for kinds that read the KG while training."""
        items = [it for it in train.items if it.sparql and question_text(it, self.lang)]
        if not items:
            raise InputError(train.name, "no item has both a question and a gold query to train on")
        start = time.perf_counter()
        self._fit(items, [it for it in valid.items if it.sparql] if valid is not None else None, kg)
        ns = query_namespaces(items)
        total = sum(ns.values()) or 1

        self.manifest = {
            "kind": self.kind, "config": jsonable(self.config), "kgqa_version": __version__, "seed": self.seed,
            "train": {"name": train.name, "items": len(items), "checksum": dataset_checksum(items, self.lang)},
            "valid": None if valid is None else {"name": valid.name, "items": len(valid.items),
                                                  "checksum": dataset_checksum(valid.items, self.lang)},
            "input": summary(item_input(it) for it in items),
            "namespaces": sorted(n for n, c in ns.items() if c / total >= 0.01),
            "kg": None if kg is None else str(kg),
            "fit_seconds": round(time.perf_counter() - start, 3),
        }
        history = getattr(self, "history", None)
        if history and isinstance(history, list) and isinstance(history[0], dict) and "epoch" in history[0]:
            self.manifest["training"] = {"epochs_run": len(history), "best_epoch": getattr(self, "best_epoch", None),
                                         "stopped": getattr(self, "stopped", None), "budget_minutes": self.minutes}
        return self

    def check_dataset(self, ds: Dataset) -> None:
        """Refuse a dataset of another KG (module docstring)."""
        trained = set(self.manifest.get("namespaces") or ())
        mine = query_namespaces(ds.items)
        inside = sum(n for ns, n in mine.items() if ns in trained)
        if trained and mine and inside < 0.1 * sum(mine.values()):
            top = sorted(mine, key=lambda n: -mine[n])[:5]
            raise InputError(ds.name, f"its gold queries use KB namespaces {', '.join(top)}; only {inside} of their "
                                      f"{sum(mine.values())} KB IRIs are in the namespaces this {self.kind} system "
                                      f"was trained on ({', '.join(sorted(trained)[:5])}): "
                                      "it is a dataset of another KG; train a system on a dataset of that KG")

    def predict(self, items: Dataset | Sequence[Item], kg: Any = None, *, executor: Any = None,
                timeout: float = 30.0, check: bool = True) -> Run:
        """Answer every item: a query each (None where the system has none), and with ``kg``
        (or an open ``executor``) its answer, executed in kgqa's sandbox."""
        if not self.manifest:
            raise InputError(f"baseline {self.kind}", "the system is not trained: fit() or load it first")
        ds = items if isinstance(items, Dataset) else Dataset("items", list(items))
        ds = ds.by_language([self.lang])  # per-language scoring units (ck25:1-en) where the dataset has them
        if check:
            self.check_dataset(ds)
        kg = kg if kg is not None else (self.manifest.get("kg") if self.needs_kg else None)
        own = None
        if executor is None and kg is not None:
            executor = own = Executor.open(kg, policy=ExecutionPolicy(timeout=timeout), cache=False)
        try:
            start = time.perf_counter()
            queries = self._queries(ds.items, executor)
            per = (time.perf_counter() - start) / max(1, len(ds.items))
            preds = []
            outcomes = executor.run({it.id: q for it, q in zip(ds.items, queries) if q}) if executor else {}
            for it, q in zip(ds.items, queries):
                md = {"question": question_text(it, self.lang), "system": self.kind, "input": item_input(it)}
                p = Prediction(it.id, q, elapsed=per, metadata=md)
                if q is None:
                    p.status, p.message = Status.MISSING, f"the {self.kind} system has no query for this question"
                elif it.id in outcomes:
                    oc = outcomes[it.id]
                    if oc.status is Status.OK:
                        p.answer = oc.answer
                    else:
                        md["execution"] = f"{oc.status.value}: {oc.message}"
                preds.append(p)
        finally:
            if own is not None:
                own.close()
        return Run(f"{self.kind}", preds, "jsonl",
                   metadata={"system": self.manifest, "input": summary(item_input(it) for it in ds.items)})

    @property
    def input(self) -> str:
        """The input form the system was trained on (:mod:`kgqa.baselines.inputs`); "" for a
        folder saved before kgqa recorded it."""
        return str(self.manifest.get("input") or "")

    def input_warning(self, ds: Dataset) -> str | None:
        """A sentence when ``ds``'s questions are not all in the form the system was trained on."""
        mine = self.input
        theirs = summary(item_input(it) for it in ds.items)
        if not mine or not theirs or theirs == mine:
            return None
        return (f"this {self.kind} system was trained on {describe(mine) if '(' not in mine else mine + ' input'}; "
                f"the questions of {ds.name} are {describe(theirs) if '(' not in theirs else theirs}: "
                "each prediction's metadata and the score's signature (input:...) say which form it answered")

    def answer(self, question: str, executor: Any = None, form: str = "raw") -> str | None:
        """The query for one question text (the service asks this); ``form``: how the text is
        written (``raw``, or ``tagged`` / ``tag-end`` with KB elements in it, read back from the text)."""
        return self._queries([served_item(question, form, self.lang)], executor)[0]

    # ------------------------------------------------------------------ files

    def save(self, folder: str | Path) -> Path:
        if not self.manifest:
            raise InputError(f"baseline {self.kind}", "nothing to save: the system is not trained")
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self._save_state(folder)
        (folder / MANIFEST).write_text(json.dumps(self.manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

        Watch(0, 0, folder=folder).clear()  # the trained system is saved: nothing left to resume
        return folder

    @classmethod
    def _from_folder(cls, folder: Path, manifest: dict[str, Any]) -> "System":
        system = cls(**manifest.get("config", {}))
        system.manifest = manifest
        system._load_state(folder)
        return system

    # ------------------------------------------------------------------ for the kinds

    def _fit(self, train: list[Item], valid: list[Item] | None, kg: Any) -> None:
        raise NotImplementedError

    def _queries(self, items: Sequence[Item], executor: Any) -> list[str | None]:
        raise NotImplementedError

    def _save_state(self, folder: Path) -> None:
        raise NotImplementedError

    def _load_state(self, folder: Path) -> None:
        raise NotImplementedError


def read_manifest(folder: str | Path) -> dict[str, Any]:
    path = Path(folder) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(folder, f"not a trained system folder: no {MANIFEST} (make one with kgqa baseline train)") from None
    except (OSError, ValueError) as e:
        raise InputError(path, f"cannot read the manifest: {e}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("kind"), str):
        raise InputError(path, "expected a JSON object with a 'kind'")
    return manifest
