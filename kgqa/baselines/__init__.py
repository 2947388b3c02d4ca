"""Reference systems (baselines) trained and run inside kgqa (issue 28).

Three kinds, one interface (:class:`kgqa.baselines.base.System`: ``fit``, ``predict -> Run``,
``save`` / :func:`load_system`):

- ``retrieval`` (:mod:`kgqa.baselines.retrieval`): BM25 nearest training question, its query
  re-grounded in the test question; numpy/scipy only;
- ``seq2seq`` (:mod:`kgqa.baselines.seq2seq`, extra ``kgqa[baselines]``: PyTorch): a Transformer
  encoder-decoder from scratch, with or without the copy mechanism of Reyd & Zouaq (2023);
- ``simple`` (:mod:`kgqa.baselines.simple`): single-fact questions: entity by n-gram label
  matching on the KG (ranked by degree), relation and direction by a linear classifier;
- ``e2e`` (:mod:`kgqa.baselines.e2e`): any KG, raw questions: trained on questions kgqa
  generates from the KG, entities and values linked by their KG labels, query skeletons
  retrieved and filled, checked by execution.

Only :mod:`kgqa.baselines.seq2seq` imports torch, and only when a seq2seq system is made.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from kgqa.model import InputError
from kgqa.baselines.base import System, read_manifest
from kgqa.baselines.e2e import train_e2e
from kgqa.load import formats, load_dataset
from kgqa.model import Dataset

#: kind -> "module:class"
KINDS: dict[str, str] = {
    "retrieval": "kgqa.baselines.retrieval:RetrievalSystem",
    "seq2seq": "kgqa.baselines.seq2seq:Seq2SeqSystem",
    "simple": "kgqa.baselines.simple:SimpleSystem",
    "e2e": "kgqa.baselines.e2e:E2ESystem",
}

TORCH_HINT = ("the seq2seq baseline needs PyTorch, kgqa's optional extra 'baselines': pip install torch "
              "(a CPU-only build: pip install torch --index-url https://download.pytorch.org/whl/cpu)")


def system_class(kind: str) -> type[System]:
    if kind not in KINDS:
        raise InputError("KIND", f"unknown baseline {kind!r}; expected one of {', '.join(KINDS)}")
    module, _, name = KINDS[kind].partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as e:
        if e.name == "torch":
            raise InputError(f"baseline {kind}", TORCH_HINT) from None
        raise


def create(kind: str, **config: Any) -> System:
    """A new, untrained system of ``kind`` with ``config`` (see each kind's ``defaults``)."""
    return system_class(kind)(**config)


def load_system(folder: str | Path) -> System:
    """A trained system from its folder (:meth:`System.save`)."""
    manifest = read_manifest(folder)
    return system_class(manifest["kind"])._from_folder(Path(folder), manifest)


def train(kind: str, train: Any, valid: Any = None, *, output: str | Path | None = None, kg: Any = None,
          format: str | None = None, minutes: float | None = None, progress: bool = False, **config: Any) -> System:
    """``kgqa baseline train``: fit a ``kind`` system on ``train`` (a dataset name, path or
    Dataset), optionally ``valid``, save it to ``output`` when given, and return it. With
    ``output``, kinds trained by epochs write a checkpoint there after each epoch and resume from
    it when run again (:mod:`kgqa.baselines.training`); ``minutes``: a time budget; ``progress``:
    a bar (terminal) or a line per epoch (log) on stderr."""

    if minutes is not None and not minutes > 0:
        raise InputError("--minutes", f"expected a positive number of minutes, got {minutes}")
    if kind == "e2e" and train is None:
        if kg is None:
            raise InputError("--kg", "the e2e baseline generates its training questions from a KG: pass --kg KG")

        return train_e2e(kg, output, minutes=minutes, progress=progress, **config)
    if train is None:
        raise InputError("TRAIN", f"the {kind} baseline trains on a dataset: give TRAIN (only e2e generates its own)")
    tr = train if isinstance(train, Dataset) else load_dataset(train, format=format)
    va = valid if valid is None or isinstance(valid, Dataset) else load_dataset(valid, format=format)
    system = create(kind, **config)
    system.workdir = Path(output) if output is not None else None
    system.minutes, system.show_progress = minutes, progress
    system.fit(tr, va, kg=kg)
    if output is not None:
        system.save(output)
    return system


def baseline(kind: str, train: Any, valid: Any = None, **options: Any) -> System:
    """``kgqa.baseline("retrieval", "train.jsonl", output="model/")``: train a reference system
    (:func:`train`); ``system.predict(dataset, kg=...)`` then gives a Run to score."""
    return globals()["train"](kind, train, valid, **options)


def predict_to_file(model: str | Path | System, dataset: Any, output: str | Path, *, kg: Any = None,
                    format: str | None = None, timeout: float = 30.0) -> tuple[Any, int]:
    """``kgqa baseline predict``: answer ``dataset`` with the system in ``model`` and write the
    run as kgqa JSONL to ``output``; returns ``(run, number of queries)``."""

    system = model if isinstance(model, System) else load_system(model)
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset, format=format)
    run = system.predict(ds, kg=kg, timeout=timeout)
    formats.get("run", "jsonl").write(run, Path(output))
    return run, sum(1 for p in run.predictions if p.sparql)


__all__ = ["KINDS", "System", "baseline", "create", "load_system", "train", "predict_to_file", "system_class", "TORCH_HINT"]
