"""Execute stage: run SPARQL on a knowledge graph and turn every result or failure into an
:class:`~kgqa.model.Outcome`.

- :mod:`kgqa.execute.engine`: the engine interface (``Engine``, ``EngineInfo``);
- :mod:`kgqa.execute.embedded`: pyoxigraph in killable worker processes (RDF files or a store);
- :mod:`kgqa.execute.endpoint`: SPARQL 1.1 Protocol endpoints;
- :mod:`kgqa.execute.kgfile`: RDF file loading, persistent stores, KG fingerprints;
- :mod:`kgqa.execute.sandbox`, :mod:`kgqa.execute.normalise`: what runs, and in which form;
- :mod:`kgqa.execute.cache`: the SQLite result cache and ``CachedEngine``;
- :mod:`kgqa.execute.policy`: the :class:`ExecutionPolicy` (timeout, row cap, normaliser, sandbox);
- :mod:`kgqa.execute.executor`: the :class:`Executor` every consumer executes through;
- :mod:`kgqa.execute.audit`: the gold-query audit;
- :mod:`kgqa.execute.opener`: :func:`~kgqa.execute.opener.open_engine` turns a ``--kg`` argument
  into an engine.

This ``__init__`` imports only the engine interface: a module of the stage (the policy, the
engine caps' ``parse_bytes``) is imported without the embedded engine (pyoxigraph, the SPARQL
parser: about 0.2 s a process).
"""

from __future__ import annotations

from kgqa.execute.engine import Engine, EngineInfo

__all__ = ["Engine", "EngineInfo"]
