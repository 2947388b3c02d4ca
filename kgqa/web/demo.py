"""``kgqa demo --web``: the built-in demo's three runs as experiments in a fresh store."""

from __future__ import annotations

from pathlib import Path

from kgqa.store import Store
from kgqa.store.runner import run_experiment
from kgqa.load import registry


def demo_store(path: str | Path, kgs: dict[str, str]) -> tuple[Store, list[str]]:
    """A store at ``path`` holding the demo's three runs (strong, medium, weak) evaluated on the
    demo KG (queries executed, kgqa profile); returns the store and the experiment ids."""

    runs = sorted((registry.PACKAGE_DIR / "demo" / "data" / "runs").glob("*.json"))
    store = Store(path)
    ids = []
    for p in runs:
        sha = store.put_file(p.read_bytes())
        eid = store.create(dataset="demo", run_name=p.stem, run_file=sha, run_filename=p.name, profile="kgqa",
                           kg="demo", options={"reexecute": True})
        if not run_experiment(store, eid, kgs=kgs):
            raise RuntimeError(f"demo experiment {p.stem} failed: {store.get(eid).error}")
        ids.append(eid)
    return store, ids
