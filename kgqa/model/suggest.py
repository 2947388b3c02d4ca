""""Did you mean ...?" for unknown names (datasets, profiles, measures, formats)."""

from __future__ import annotations

from collections.abc import Iterable


def close_matches(name: str, candidates: Iterable[str], limit: int = 3, cutoff: float = 60.0) -> list[str]:
    """The candidates closest to ``name`` (case-insensitive, best first), at most ``limit``.
    A candidate must also be close as a whole (edit similarity >= 50), not merely contained in
    ``name`` or containing it: ``'XYZLONGNAME'`` never gets ``'R'``."""
    from rapidfuzz import fuzz, process, utils

    cands = list(dict.fromkeys(candidates))
    if not name or not cands:
        return []
    key = utils.default_process(name)

    def plausible(cand: str) -> bool:
        return fuzz.ratio(key, utils.default_process(cand)) >= 50

    found = process.extract(name, cands, scorer=fuzz.WRatio, processor=utils.default_process, limit=None,
                            score_cutoff=cutoff)
    return [c for c, _, _ in found if plausible(c)][:limit]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'gerbil'?"`` or ``""`` when nothing is close."""
    near = close_matches(name, candidates)
    if not near:
        return ""
    return "; did you mean " + " or ".join(repr(n) for n in near) + "?"
