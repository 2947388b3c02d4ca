"""The one number format of every report: terminal, Markdown, HTML, LaTeX, CSV text and the web.

A score prints with :func:`digits` decimals (4 by default; ``KGQA_DIGITS`` in the environment
changes it, read at each call), so one score has the same digits wherever it is shown:

>>> score(0.123456), ci(0.1, 0.25), pvalue(0.00001), pvalue(0.0421), diff(-0.05), count(12)
('0.1235', '[0.1000, 0.2500]', '<0.0001', '0.0421', '-0.0500', '12')
>>> score(None), score(float("nan")), ci(None, 0.2), pvalue(None)
('n/a', 'n/a', '', '-')

Undefined values print as the ``missing`` text of each function (``n/a`` for a score, ``-``
for a p-value, empty for a CI); a format with its own mark (LaTeX's ``--``) passes it. The
functions return plain text: escaping it for a format (LaTeX turns ``<`` into
``\\textless{}``) is that format's job.
"""

from __future__ import annotations

import math
import os
from typing import Any

from kgqa.model import InputError

__all__ = ["DEFAULT_DIGITS", "digits", "undefined", "score", "ci", "pvalue", "diff", "count", "value"]

DEFAULT_DIGITS = 4
_MAX_DIGITS = 15


def digits() -> int:
    """Decimals of every score: ``KGQA_DIGITS`` (0 to 15) when set, else 4."""
    raw = os.environ.get("KGQA_DIGITS", "").strip()
    if not raw:
        return DEFAULT_DIGITS
    try:
        d = int(raw)
    except ValueError:
        d = -1
    if not 0 <= d <= _MAX_DIGITS:
        raise InputError("KGQA_DIGITS", f"expected a whole number of decimals from 0 to {_MAX_DIGITS}, got {raw!r}")
    return d


def undefined(v: Any) -> bool:
    """True for a value with no number to print: None or NaN."""
    return v is None or (isinstance(v, float) and math.isnan(v))


def _fixed(v: Any, d: int | None, sign: str = "") -> str:
    v = float(v)
    if math.isinf(v):
        return ("+" if sign and v > 0 else "") + ("inf" if v > 0 else "-inf")
    return f"{v:{sign}.{digits() if d is None else d}f}"


def score(v: Any, d: int | None = None, *, missing: str = "n/a") -> str:
    """A score (any real number, an int included) with ``d`` decimals (default :func:`digits`)."""
    return missing if undefined(v) else _fixed(v, d)


def ci(low: Any, high: Any, d: int | None = None, *, missing: str = "") -> str:
    """A confidence interval ``[low, high]``; ``missing`` when either end is undefined."""
    return missing if undefined(low) or undefined(high) else f"[{_fixed(low, d)}, {_fixed(high, d)}]"


def pvalue(p: Any, *, missing: str = "-") -> str:
    """A p-value with :func:`digits` decimals, or ``<0.0001`` (one unit of the last decimal)
    when it is smaller than that."""
    if undefined(p):
        return missing
    d = digits()
    floor = 10.0 ** -d
    if p < floor:
        return "<" + f"{floor:.{d}f}"
    return f"{float(p):.{d}f}"


def diff(v: Any, d: int | None = None, *, missing: str = "n/a") -> str:
    """A signed difference (``+0.0500``, ``-0.0100``)."""
    return missing if undefined(v) else _fixed(v, d, sign="+")


def count(n: Any, *, missing: str = "") -> str:
    """A count (questions, groups, wins): an integer as is."""
    return missing if n is None else str(n)


def value(v: Any) -> str:
    """A cell of unknown type: a bool as ``true``/``false``, an int as a count, a float as a
    score, anything else as its text."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return count(v)
    if isinstance(v, float) or v is None:
        return score(v)
    return str(v)
