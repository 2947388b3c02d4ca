"""Load stage: datasets, runs (and, in kgqa.execute, knowledge graphs).

``load_dataset(spec)`` takes a registry name (``qald-9-test``, ``ck25``, ...) or a file path;
``load_run(path, dataset=...)`` reads a system's output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgqa import lazy
from kgqa.load import formats
from kgqa.model import Dataset, InputError, Run
from kgqa.model.gcpause import during
from kgqa.model.suggest import did_you_mean

#: the dataset registry (its data file, httpx for downloads) only when a dataset is named, not a file
_registry = lazy.module("kgqa.load.registry")


def _paths(spec: str | Path | list) -> list[Path]:
    if isinstance(spec, (list, tuple)):
        return [Path(p) for p in spec]
    return [Path(spec)]


@during
def load_dataset(spec: str | Path | list, format: str | None = None, **options: Any) -> Dataset:
    """A dataset from a registry name or from file path(s)."""
    paths = _paths(spec)
    if len(paths) == 1 and not paths[0].exists():
        entry = _registry.find(str(spec))
        if entry is None:
            near = did_you_mean(str(spec), [e.name for e in _registry.entries()])
            raise InputError(spec, f"no such file, and not a registered dataset name{near} (see `kgqa datasets list`)")
        return _registry.load(entry, **options)
    for p in paths:
        if not p.exists():
            raise InputError(p, "no such file")
    fmt = formats.get("dataset", format) if format else _detect(paths, "dataset")
    ds = fmt.load(paths, **options)
    ds.format = ds.format or fmt.name
    return ds


def _swapped_hint(p: Path) -> str:
    """A run path that is a registry dataset name: the dataset and the run were given in swapped order."""
    if _registry.find(str(p)) is None:
        return ""
    return (f"; {str(p)!r} is a dataset name: the dataset comes first, then the run(s) "
            f"(kgqa evaluate {p} RUN ...)")


def _detect(paths: list[Path], kind: str) -> formats.Format:
    """:func:`formats.detect`; a file that is no ``kind`` but reads as the other kind gets the
    hint that the dataset and the run were given in swapped order."""
    try:
        return formats.detect(paths, kind)  # type: ignore[arg-type]
    except formats.UnknownFormat as err:
        other = "run" if kind == "dataset" else "dataset"
        try:
            fmt = formats.detect(paths, other)  # type: ignore[arg-type]
        except InputError:
            raise err from None
        order = "kgqa evaluate DATASET RUN [RUN ...]"
        raise InputError(paths[0], f"{err.problem.message}; it reads as a {other} file ({fmt.name}): were the "
                                   f"dataset and the run given in swapped order? ({order})") from None


@during
def load_run(spec: str | Path | list, format: str | None = None, dataset: Dataset | None = None, **options: Any) -> Run:
    """A run from file path(s). ``dataset`` lets formats that need it (e.g. id mapping) see it."""
    paths = _paths(spec)
    for p in paths:
        if not p.exists():
            raise InputError(p, "no such file" + _swapped_hint(p))
    fmt = formats.get("run", format) if format else _detect(paths, "run")
    run = fmt.load(paths, dataset=dataset, **options)
    run.format = run.format or fmt.name
    return run


__all__ = ["load_dataset", "load_run", "formats"]
