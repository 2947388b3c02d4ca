""""Did you mean ...?" for unknown names (datasets, profiles, measures, formats, languages).

Two rules, both case-insensitive, best first: a name the typed text *starts* (``prec`` ->
``Precision``, ``lcquad`` -> ``lcquad-1.0-train``), then names within a few edits of it
(optimal string alignment distance, a swap of two neighbours counting one: ``F2`` -> ``F1``,
``BLUE`` -> ``BLEU``, ``ck52`` -> ``ck25``), at most one edit per three typed characters (at
least one). A typed word equal to one word of a longer name (``precision`` -> ``Micro
Precision``) comes last. Partial-substring similarity is not used: it made every long unknown
name "close" to a one-letter name (``did you mean 'R'?``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from kgqa import lazy

_WORD = re.compile(r"[A-Za-z0-9]+")


def close_matches(name: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """The candidates closest to ``name`` (see the module docstring), at most ``limit``."""
    OSA = lazy.rapidfuzz_distance().OSA
    cands = list(dict.fromkeys(candidates))
    key = name.strip().casefold()
    if not key or not cands:
        return []
    budget = max(1, len(key) // 3)
    ranked: list[tuple[tuple[int, int, int], str]] = []
    for i, c in enumerate(cands):
        ck = c.casefold()
        if ck == key:
            ranked.append(((0, 0, i), c))
        elif len(key) >= 2 and ck.startswith(key):
            ranked.append(((1, len(ck) - len(key), i), c))
        elif (d := OSA.distance(key, ck, score_cutoff=budget)) <= budget:
            ranked.append(((2, d, i), c))
        elif len(key) >= 3 and key in (w.casefold() for w in _WORD.findall(c)):
            ranked.append(((3, len(ck), i), c))
        elif (shared := len(os.path.commonprefix([key, ck]))) >= 5 and shared >= 0.6 * len(ck):
            ranked.append(((4, len(ck) - shared, i), c))  # a longer spelling of a short name
    return [c for _, c in sorted(ranked)[:limit]]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'gerbil'?"`` or ``""`` when nothing is close."""
    near = close_matches(name, candidates)
    if not near:
        return ""
    return "; did you mean " + " or ".join(repr(n) for n in near) + "?"
