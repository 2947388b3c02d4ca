"""Heavy third-party libraries, imported on first use: the one module of kgqa that imports inside
functions (tests/test_architecture.py holds every other module to imports at its top).

``import kgqa``, building the command line and printing its help, and answers-only scoring stay
light (tests/test_lazy_imports.py) because a module that needs one of these libraries in one or
two of its functions asks this module for it there instead of importing it at its top::

    from kgqa import lazy

    def bleu(...):
        BLEU = lazy.sacrebleu_metrics().BLEU

Each function returns the module (Python caches it after the first call, so the second costs a
dictionary look-up). A module whose every function needs the library (``kgqa.execute.embedded``
and pyoxigraph, ``kgqa.analyze.stats`` and NumPy, ``kgqa.store.schema`` and SQLAlchemy,
``kgqa.web`` and Starlette) imports it at its top like any other; this is for the few calls
from modules that a light path imports. Modelled on ir_datasets' ``lazy_libs.py``.

A kgqa module that a light path must not load, but that a module needs in some of its functions
(the API's later stages, the dataset registry behind a name, the SPARQL endpoint client behind a
URL), is bound at the top of the module that uses it with :func:`module`::

    from kgqa import lazy

    _report = lazy.module("kgqa.report.evaluation")  # imported on first attribute use

    def to_markdown(e):
        return _report.to_markdown(e)

so the module's dependencies are still read from its first lines (and checked by the layering
test: the name is a literal), as PEP 810's ``lazy import`` writes them.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any


class LazyModule:
    """A kgqa module bound at a module's top and imported on its first attribute use. Every
    attribute is read from the imported module (nothing is copied), so a test that monkeypatches
    the module is seen."""

    __slots__ = ("_lazy_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_lazy_name", name)

    def __getattribute__(self, attr: str) -> Any:
        name = object.__getattribute__(self, "_lazy_name")
        return getattr(sys.modules.get(name) or importlib.import_module(name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {object.__getattribute__(self, '_lazy_name')!r}>"


def module(name: str) -> LazyModule:
    """The kgqa module ``name`` (a literal: tests/test_architecture.py reads it), imported when
    an attribute of it is first used; bind it at the module's top."""
    return LazyModule(name)


def numpy() -> ModuleType:
    """NumPy (about 0.1-0.4 s): the one call that needs it in the paraphrase curve, the HTML
    report's figures and the web's jobs (``kgqa.analyze.stats`` and ``.breakdown``, whose every
    function needs it, import it at their top; a light path does not import them)."""
    import numpy

    return numpy


def pandas() -> ModuleType:
    """pandas (about 0.5 s): ``to_dataframe`` only."""
    import pandas

    return pandas


def scipy_stats() -> ModuleType:
    """``scipy.stats`` (about a second): the paired significance tests."""
    import scipy.stats

    return scipy.stats


def scipy_sparse() -> ModuleType:
    """``scipy.sparse``: the splits' grouping graph and the retrieval baselines' TF-IDF matrices."""
    import scipy.sparse

    return scipy.sparse


def scipy_csgraph() -> ModuleType:
    """``scipy.sparse.csgraph``: connected components of the splits' grouping graph."""
    import scipy.sparse.csgraph

    return scipy.sparse.csgraph


def sacrebleu_metrics() -> ModuleType:
    """``sacrebleu.metrics``: the BLEU of query measures (never needed by answers-only scoring)."""
    import sacrebleu.metrics

    return sacrebleu.metrics


def matplotlib_figure() -> ModuleType:
    """``matplotlib.figure`` (about 0.3 s): the HTML report's figures (no pyplot, no backend)."""
    import matplotlib.figure

    return matplotlib.figure


def pyoxigraph() -> ModuleType:
    """pyoxigraph: RDF parsing and stores, for modules that need it in one function only."""
    import pyoxigraph

    return pyoxigraph


def rapidfuzz_fuzz() -> ModuleType:
    """``rapidfuzz.fuzz``: fuzzy label matching when annotating."""
    import rapidfuzz.fuzz

    return rapidfuzz.fuzz


def rapidfuzz_distance() -> ModuleType:
    """``rapidfuzz.distance``: "did you mean" suggestions (only when a name is wrong)."""
    import rapidfuzz.distance

    return rapidfuzz.distance


def threadpoolctl() -> ModuleType:
    """threadpoolctl: one BLAS thread while resampling."""
    import threadpoolctl

    return threadpoolctl


def httpx() -> ModuleType:
    """httpx: downloads and HTTP clients, for modules that need it in one function only."""
    import httpx

    return httpx


def certifi() -> ModuleType:
    """certifi: the CA bundle for TLS to live systems."""
    import certifi

    return certifi


def uvicorn() -> ModuleType:
    """uvicorn: the ASGI server (``kgqa web``, ``kgqa serve``)."""
    import uvicorn

    return uvicorn


def starlette_responses() -> ModuleType:
    """``starlette.responses``: for the web's security middleware's plain error page."""
    import starlette.responses

    return starlette.responses


def rich_console() -> ModuleType:
    """``rich.console`` (about 0.1 s with what it imports): a progress bar or a table on a
    terminal, from modules that answers-only scoring imports."""
    import rich.console

    return rich.console


def rich_text() -> ModuleType:
    """``rich.text``: styled text for a comparison's terminal rendering."""
    import rich.text

    return rich.text


def rich_progress() -> ModuleType:
    """``rich.progress``: the progress bars of downloads, loading and asking (terminal only)."""
    import rich.progress

    return rich.progress


def yaml() -> ModuleType:
    """PyYAML: profiles and data files written in YAML."""
    import yaml

    return yaml
