"""Letters that name systems in a comparison (a, b, ..., z, aa, ab, ...), as ranx marks which
systems a system is significantly better than.

Kept apart from :mod:`kgqa.analyze.stats` (which imports NumPy at its top): a report's legend
and the web's leaderboard name systems by letter without computing any statistic.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["system_letters"]


def system_letters(systems: Sequence[str]) -> dict[str, str]:
    """Letters for systems in order: a, b, ..., z, aa, ab, ... (as ranx marks significance)."""
    out: dict[str, str] = {}
    for i, system in enumerate(systems):
        label = ""
        k = i
        while True:
            label = chr(ord("a") + k % 26) + label
            k = k // 26 - 1
            if k < 0:
                break
        out[system] = label
    return out
