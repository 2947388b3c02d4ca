"""Functions (Su et al. 2016, Sec. 3.1): count; superlative (max, min, argmax, argmin);
comparative (>, >=, <, <=). At most one per query, on a compatible node:

- ``count``: the question node, an entity;
- ``max``/``min``: the question node, a literal node of a number or date datatype;
- ``argmax``/``argmin`` and the comparatives: an ungrounded non-question literal node of a
  number or date datatype (the question node stays the answer).

:func:`choose_function` draws a function class by quota: each allowed class has a target
share (``--functions none=0.7,count=0.1,...``; default :data:`PAPER_SHARES`, GraphQuestions'
none/count/superlative/comparative mix, renormalised over the allowed classes) and is drawn
with weight max(0, share x (accepted + 1) - accepted of that class), so a class that is
rejected more often (comparatives) is simply tried more often and the accepted mix follows
the shares. Within a class, each allowed function has weight 1 / (1 + accepted of it), so
argmax/argmin appear beside max/min. :func:`requirements` says what the template must offer.
"""

from __future__ import annotations

import random

from kgqa.make.generate.graphquery import FUNCTION_CLASSES

CLASS_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "none": ("none",), "count": ("count",), "superlative": ("max", "min", "argmax", "argmin"),
    "comparative": (">", ">=", "<", "<="),
}


#: GraphQuestions' function classes (Su et al. 2016: 73 / 10 / 9 / 7 % of its graph queries)
PAPER_SHARES: dict[str, float] = {"none": 0.74, "count": 0.10, "superlative": 0.09, "comparative": 0.07}


def parse_function_shares(spec: str | None) -> tuple[tuple[str, ...], dict[str, float]]:
    """``--functions``: ``"none=0.7,count=0.1,superlative=0.1,comparative=0.1"`` (shares per
    class, normalised to 1) or a plain list as :func:`parse_functions` takes (classes get the
    paper's shares). Returns (allowed functions, share per allowed class)."""
    if not spec or "=" not in spec:
        allowed = parse_functions(spec)
        return allowed, default_shares(allowed)
    names: list[str] = []
    shares: dict[str, float] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, eq, value = part.partition("=")
        name = name.strip()
        if name not in CLASS_FUNCTIONS:
            raise ValueError(f"--functions {part!r}: a share is given per class ({', '.join(CLASS_FUNCTIONS)})")
        try:
            share = float(value) if eq else float("nan")
        except ValueError:
            share = float("nan")
        if not share >= 0:
            raise ValueError(f"--functions {part!r}: expected CLASS=SHARE with a share >= 0, e.g. none=0.7")
        names.append(name)
        shares[name] = share
    total = sum(shares.values())
    if total <= 0:
        raise ValueError(f"--functions {spec!r}: the shares add up to 0")
    allowed = parse_functions(",".join(n for n in names if shares[n] > 0))
    return allowed, {c: shares[c] / total for c in CLASS_FUNCTIONS if shares.get(c, 0) > 0}


def default_shares(allowed: tuple[str, ...]) -> dict[str, float]:
    """:data:`PAPER_SHARES` over the classes ``allowed`` offers, renormalised."""
    classes = [c for c in CLASS_FUNCTIONS if any(f in allowed for f in CLASS_FUNCTIONS[c])]
    total = sum(PAPER_SHARES[c] for c in classes)
    return {c: PAPER_SHARES[c] / total for c in classes}


def parse_functions(spec: str | None) -> tuple[str, ...]:
    """``"none,count,superlative,>="`` -> the functions allowed (classes expand)."""
    if not spec:
        return tuple(FUNCTION_CLASSES)
    out: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part in CLASS_FUNCTIONS:
            out.extend(CLASS_FUNCTIONS[part])
        elif part in FUNCTION_CLASSES:
            out.append(part)
        else:
            raise ValueError(f"unknown function {part!r}: expected a class ({', '.join(CLASS_FUNCTIONS)}) "
                             f"or one of {', '.join(FUNCTION_CLASSES)}")
    return tuple(dict.fromkeys(out))


def choose_function(rng: random.Random, allowed: tuple[str, ...], accepted: dict[str, int] | None = None,
                    shares: dict[str, float] | None = None) -> str:
    """A function: its class by quota (module docstring; ``accepted`` counts graph queries per
    class and per function name), then a function of that class."""
    classes = [c for c in CLASS_FUNCTIONS if any(f in allowed for f in CLASS_FUNCTIONS[c])]
    acc = accepted or {}
    share = shares or default_shares(allowed)
    total = sum(acc.get(c, 0) for c in classes)
    weights = [max(0.0, share.get(c, 0.0) * (total + 1) - acc.get(c, 0)) + 1e-3 * share.get(c, 0.0) for c in classes]
    if not any(weights):
        weights = [1.0] * len(classes)
    cls = rng.choices(classes, weights=weights)[0]
    fns = [f for f in CLASS_FUNCTIONS[cls] if f in allowed]
    return rng.choices(fns, weights=[1.0 / (1 + acc.get("fn:" + f, 0)) for f in fns])[0]


def requirements(fn: str) -> tuple[bool, bool]:
    """(question node must be a number/date literal, template needs a separate number/date literal node)."""
    if fn in ("max", "min"):
        return True, False
    if fn in ("argmax", "argmin", ">", ">=", "<", "<="):
        return False, True
    return False, False
