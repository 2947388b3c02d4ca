"""The ``--paraphraser module:function`` hook (Su et al. 2016, Sec. 6: sentence-level paraphrases
from a user's own model): ``function(question, context) -> list[str]`` is called per graph query
with the canonical question and a context dict (``sparql``, ``slots``, ``graph_query``,
``function``, ``num_edges``); its strings become sentence paraphrases of that graph query.
Export for annotators and import of their paraphrases are :mod:`kgqa.make.generate.paraphrase`.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from kgqa.model.problems import InputError


def load_paraphraser(spec: str) -> Callable[[str, dict[str, Any]], list[str]]:
    """``package.module:function`` -> the function (a clear error when it is not there)."""
    if ":" not in spec:
        raise InputError(spec, "--paraphraser expects module:function")
    mod, fn = spec.split(":", 1)
    try:
        obj = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        raise InputError(spec, f"cannot load the paraphraser: {e}") from e
    if not callable(obj):
        raise InputError(spec, "the paraphraser is not callable")
    return obj


def call_paraphraser(fn, question: str, g, meta: dict[str, Any]) -> list[str]:
    ctx = {"sparql": g.sparql, "slots": meta["slots"], "graph_query": meta["graph_query"],
           "function": meta["function"], "num_edges": meta["num_edges"]}
    got = fn(question, ctx)
    if isinstance(got, str) or not all(isinstance(x, str) for x in (got or [])):
        raise InputError("--paraphraser", f"must return a list of strings, got {type(got).__name__}")
    out: list[str] = []
    for s in got or []:
        s = s.strip()
        if s and s != question and s not in out:
            out.append(s)
    return out
