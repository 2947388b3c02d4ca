"""The engine interface: execute one SPARQL query with a timeout and get an :class:`Outcome`.

Every engine (embedded pyoxigraph, a SPARQL endpoint, a cached wrapper) implements
:class:`Engine`. The contract, shared by all implementations:

- ``execute(query, timeout, max_rows)`` never raises for a bad query or a slow engine; it
  returns an :class:`~kgqa.model.Outcome`:

  - ``OK`` with a :class:`~kgqa.model.TableAnswer` (SELECT: the projected variables, rows of
    :mod:`kgqa.model.terms` IRI/Literal/BNode, datatypes and language tags kept, ``None`` for
    unbound cells) or a :class:`~kgqa.model.BooleanAnswer` (ASK);
  - ``PARSE_ERROR`` when the engine rejects the query text;
  - ``EXEC_ERROR`` when evaluation fails, and also when the result has more than
    ``max_rows`` rows (message: :func:`too_many_rows_message`). Over-cap results are an error,
    not a truncated table: a truncated table would be scored as if it were the whole answer;
  - ``TIMEOUT`` when the query ran longer than ``timeout`` seconds (the work is stopped);
  - ``REFUSED`` when the engine (or the sandbox in front of it) declines the query.

  Each failure carries the engine's message; every outcome carries ``elapsed`` seconds.
  An empty result is only ever returned for a query that really has no solutions.
- CONSTRUCT and DESCRIBE results are returned as a table with the variables
  :data:`GRAPH_VARIABLES` (``subject``, ``predicate``, ``object``), one row per triple.
- ``execute_many`` returns one outcome per query, in input order, and calls ``progress(n)``
  with the number of queries just finished (``n`` is usually 1).
- ``info`` describes the engine for signatures and cache keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from kgqa.model.outcome import Outcome

#: Column names of the table returned for CONSTRUCT / DESCRIBE queries (one row per triple).
GRAPH_VARIABLES: tuple[str, str, str] = ("subject", "predicate", "object")

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_ROWS = 100_000


def too_many_rows_message(max_rows: int) -> str:
    """The EXEC_ERROR message every engine uses for a result over the row cap."""
    return f"result has more than {max_rows} rows (row cap; raise it with --max-rows)"


@dataclass(frozen=True)
class EngineInfo:
    """What an engine is and which KG it answers from.

    - ``kind``: ``"oxigraph"`` (embedded), ``"sparql-endpoint"``, ...
    - ``version``: the engine's or client library's version string.
    - ``fingerprint``: the KG identity: ``"sha256:<hex>"`` of the loaded RDF files for the
      embedded engine; the endpoint URL(s) plus graph IRIs for an endpoint.
    """

    kind: str
    version: str
    fingerprint: str

    def signature(self) -> str:
        """``<kind>-<version>:kg=<fingerprint>``, with a ``sha256:`` fingerprint shortened to
        its first 12 hex digits, e.g. ``oxigraph-0.5.13:kg=sha256:1a2b3c4d5e6f``. Used in score
        signatures and as the engine part of result-cache keys."""
        fp = self.fingerprint
        if fp.startswith("sha256:") and len(fp) > 19:
            fp = fp[:19]
        return f"{self.kind}-{self.version}:kg={fp}"


@runtime_checkable
class Engine(Protocol):
    """A SPARQL query engine over one knowledge graph (see the module docstring for the
    outcome contract)."""

    info: EngineInfo

    def execute(self, query: str, timeout: float = DEFAULT_TIMEOUT,
                max_rows: int = DEFAULT_MAX_ROWS) -> Outcome: ...

    def execute_many(self, queries: Sequence[str], timeout: float = DEFAULT_TIMEOUT,
                     max_rows: int = DEFAULT_MAX_ROWS,
                     progress: Callable[[int], None] | None = None) -> list[Outcome]: ...

    def close(self) -> None: ...


def execute_sequentially(engine: Engine, queries: Sequence[str], timeout: float = DEFAULT_TIMEOUT,
                         max_rows: int = DEFAULT_MAX_ROWS,
                         progress: Callable[[int], None] | None = None) -> list[Outcome]:
    """A plain ``execute_many``: one query after the other through ``engine.execute``."""
    out = []
    for q in queries:
        out.append(engine.execute(q, timeout=timeout, max_rows=max_rows))
        if progress is not None:
            progress(1)
    return out
