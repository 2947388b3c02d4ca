""":func:`open_engine`: a ``--kg`` argument (RDF files, a store folder, an endpoint URL) as an
:class:`~kgqa.execute.engine.Engine`.

Apart from the package's ``__init__`` so that importing any module of :mod:`kgqa.execute` (the
engine interface, the policy, ``parse_bytes``) does not import the embedded engine (pyoxigraph,
the SPARQL parser, multiprocessing, the SQLite result cache): answers-only scoring needs none.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgqa import lazy
from kgqa.execute.engine import Engine
from kgqa.model.problems import InputError
from kgqa.execute.embedded import EmbeddedEngine
from kgqa.execute.kgfile import cached_store, disk_store_threshold

#: the SPARQL endpoint client (httpx, asyncio: about 0.3 s a process) only when --kg is a URL
_endpoint = lazy.module("kgqa.execute.endpoint")

__all__ = ["open_engine"]


def open_engine(kg: str | Path | Sequence[str | Path], graph: str | None = None, *, progress: bool = False,
                base: str | None = None, **options: Any) -> Engine:
    """The engine for a ``--kg`` value:

    - an ``http://`` / ``https://`` URL (or several, comma-separated: replicas) -> a SPARQL
      endpoint, with ``graph`` as its ``default-graph-uri``;
    - a directory -> a persistent store made by ``kgqa kg load --store`` (opened read-only);
    - RDF file(s) (a list, or one path; comma-separated paths also work) -> loaded into memory,
      triples into the named graph ``graph`` when given; files of
      :func:`~kgqa.execute.kgfile.disk_store_threshold` bytes or more in all (64 MiB) are
      bulk-loaded once into an on-disk store kept in the cache and reopened by later runs
      (:func:`~kgqa.execute.kgfile.cached_store`); relative IRIs in them resolve against
      ``base`` (default: each file's own ``file:`` URI).

    ``options`` go to the engine's constructor (e.g. ``workers``, ``allow_service``); the caps
    of the other kind of engine are ignored (``memory_limit``, ``max_result_bytes``: embedded;
    ``max_response_bytes``: endpoint); a cap given as None keeps its default, 0 turns it off.
    """
    if isinstance(kg, (str, Path)):
        text = str(kg)
        if text.startswith(("http://", "https://")):
            if base:
                raise InputError(text, "--base applies when loading RDF files, not to an endpoint")
            urls = [u.strip() for u in text.split(",") if u.strip()]
            options = {k: v for k, v in options.items() if k not in ("memory_limit", "max_result_bytes")}
            return _endpoint.SparqlEndpoint(urls, default_graphs=[graph] if graph else (), **options)
        items: list[str | Path] = [kg] if Path(text).exists() else [p.strip() for p in text.split(",") if p.strip()]
    else:
        items = list(kg)

    options = {k: v for k, v in options.items() if k != "max_response_bytes"}

    if len(items) == 1 and Path(items[0]).is_dir():
        if graph or base:
            raise InputError(items[0], f"{'--graph' if graph else '--base'} applies when loading RDF files"
                                       f"{' or querying an endpoint' if graph else ''}, not to an existing store")
        return EmbeddedEngine.from_store(items[0], **options)

    threshold = disk_store_threshold()
    if threshold is not None and _total_size(items) >= threshold:
        return EmbeddedEngine.from_store(cached_store(items, graph, progress=progress, base=base), **options)
    return EmbeddedEngine.from_files(items, graph, progress=progress, base=base, **options)


def _total_size(items: Sequence[str | Path]) -> int:
    """Bytes on disk of the RDF files named (missing ones count 0: loading them says why)."""
    total = 0
    for p in items:
        try:
            total += Path(p).stat().st_size
        except OSError:
            pass
    return total
