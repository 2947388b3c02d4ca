"""Recording evaluations made outside the web platform (``kgqa evaluate ... --store``) as
finished experiments, with their run files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgqa.load.runspec import split_run_spec
from kgqa.store.store import Store, owner_id
from kgqa.api import dataset_checksum, dataset_names
from kgqa.store.runner import headline, safe_filename


def record_evaluations(store: Store, dataset: str, run_specs: Sequence[str], evals: Sequence[Any], *,
                       profile: str, measures: str | None = None, lang: str = "all", kg: str | None = None,
                       gold_answers: str = "stored", kg_fingerprint: str | None = None) -> list[str]:
    """One finished experiment per evaluation (``evals[i]`` scored ``run_specs[i]``, a run file
        or ``NAME=PATH`` as the command line takes it: the file is stored); returns their ids.
    ``dataset`` is a registry name or a dataset file (then stored too)."""

    if len(run_specs) != len(evals):
        raise ValueError("one run file per evaluation")
    ds_file = ds_name = None
    if dataset not in dataset_names() and Path(dataset).is_file():
        ds_file = store.put_file(Path(dataset).read_bytes())
        ds_name = safe_filename(Path(dataset).name)
    checksum = dataset_checksum(dataset)
    ids = []
    owner = owner_id()  # held from creation to the result: no server's queue picks the row up between
    for spec, ev in zip(run_specs, evals):
        p = Path(split_run_spec(str(spec))[1])
        sha = store.put_file(p.read_bytes())
        eid = store.create(
            dataset=f"{ds_name}@{ds_file[:12]}" if ds_file else dataset, dataset_file=ds_file, dataset_filename=ds_name,
            dataset_checksum=checksum, run_name=ev.run, run_file=sha, run_filename=safe_filename(p.name),
            profile=profile, measures=measures, lang=lang, kg=kg, gold_answers=gold_answers,
            options={"recorded_by": "kgqa evaluate"}, owner=owner,
        )
        fp = kg_fingerprint
        if fp is None and ev.signature and "engine:" in ev.signature:
            fp = ev.signature.split("engine:", 1)[1].split("|", 1)[0]
        store.finish(eid, ev, headline=headline(ev), kg_fingerprint=fp, dataset_checksum=checksum,
                     owner=owner)
        ids.append(eid)
    return ids
