"""kgqa: benchmarking question answering over knowledge graphs.

The public API (:mod:`kgqa.api`, re-exported here lazily so ``import kgqa`` stays cheap)::

    import kgqa
    e = kgqa.evaluate("ck25", "ck25_system_result_set.json", profile="text2sparql")
    e.aggregate["set_F"], str(e.signature)
    kgqa.compare(kgqa.evaluate_many("ck25", [run_a, run_b])).to_dataframe()

Stages (data flows one way): ``kgqa.load`` -> ``kgqa.execute`` -> ``kgqa.score`` ->
``kgqa.analyze`` -> ``kgqa.report``; ``kgqa.model`` (and ``kgqa.sparql``) are shared by all.
"""

import importlib

__version__ = "0.1.0"

#: Names ``import kgqa`` offers, and the module each comes from (imported on first use).
_LAZY = {
    "load_dataset": "kgqa.api",
    "load_run": "kgqa.api",
    "evaluate": "kgqa.api",
    "evaluate_many": "kgqa.api",
    "compare": "kgqa.api",
    "Evaluator": "kgqa.api",
    "Evaluation": "kgqa.api",
    "Comparison": "kgqa.api",
    "ExecutionPolicy": "kgqa.api",
    "Signature": "kgqa.api",
    "get_profile": "kgqa.api",
    "load_evaluations": "kgqa.api",
    "save_evaluations": "kgqa.api",
    "to_dataframe": "kgqa.report.dataframe",
    "baseline": "kgqa.baselines",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    """Lazy top-level API: the module behind a name is imported when the name is first used."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kgqa' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
