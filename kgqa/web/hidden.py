"""Hidden gold (a challenge's test answers): which of a dataset's questions may be shown.

An organiser names published questions by the dataset's ids (``ck25:1``) or by the ids of
their scoring units (``ck25:1-en``: one per language, what an experiment's per-question table
lists). :func:`published_ids` checks every id against the dataset and expands a question's id
to its units' ids, so naming a question publishes it in every language. An id the dataset does
not have is refused, naming the ids it has: a typo would otherwise publish nothing, silently.
"""

from __future__ import annotations

from collections.abc import Iterable

from kgqa import api
from kgqa.model import InputError
from kgqa.model.suggest import did_you_mean


def published_ids(dataset: str, ids: Iterable[str], where: str = "--hidden-gold") -> frozenset[str]:
    """The ids of the scoring units of registry dataset ``dataset`` that ``ids`` name (question
    or unit ids). Raises :class:`InputError` (naming ``where``) for an id the dataset lacks."""
    wanted = [i.strip() for i in ids if i.strip()]
    if not wanted:
        return frozenset()
    ds = api.load_dataset(dataset, prefer_registry=True)
    units: dict[str, list[str]] = {}
    for it in ds.items:
        unit_ids = [u.id for u in it.units()]
        units[it.id] = unit_ids
        for uid in unit_ids:
            units.setdefault(uid, [uid])
    out: set[str] = set()
    for i in wanted:
        if i not in units:
            suffixed = [k for k in units if k.endswith((":" + i, "/" + i, "#" + i))][:3]
            hint = ("; did you mean " + " or ".join(repr(k) for k in suffixed) + "?") if suffixed \
                else did_you_mean(i, units)
            raise InputError(where, f"dataset {dataset} has no question {i!r}{hint} (its ids look like "
                                    f"{', '.join(ds.ids[:3])}, ...)")
        out.update(units[i])
    return frozenset(out)
