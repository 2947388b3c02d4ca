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
import re

from kgqa.model.outcome import Outcome, Status

#: Column names of the table returned for CONSTRUCT / DESCRIBE queries (one row per triple).
GRAPH_VARIABLES: tuple[str, str, str] = ("subject", "predicate", "object")

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_ROWS = 100_000
#: Byte cap on one result (sum of the lengths of every cell's text, rows x size); 64 MiB.
DEFAULT_MAX_RESULT_BYTES = 64 << 20
#: Byte cap on one endpoint response body (after HTTP content decoding); 256 MiB.
DEFAULT_MAX_RESPONSE_BYTES = 256 << 20
#: Size cap on one query text, checked before any preprocessing (normaliser, sandbox); 256 KiB
#: (real benchmark queries are a few KB; preprocessing a 1 MiB query takes seconds).
DEFAULT_MAX_QUERY_BYTES = 256 << 10
#: Address-space allowance per embedded query worker on top of what it holds at start-up (the
#: KG it shares with the parent); 2 GiB.
DEFAULT_WORKER_MEMORY = 2 << 30

#: Appended to the message of a failure that says nothing about the query (transport errors,
#: HTTP 5xx/429 after retries, a worker killed by the memory limit): such outcomes are not
#: cached, a rerun tries again. See :func:`is_transient`.
TRANSIENT_NOTE = " [transient: not cached; a rerun retries it]"


def transient(message: str) -> str:
    """``message`` marked as a transient failure (see :data:`TRANSIENT_NOTE`)."""
    return message if message.endswith(TRANSIENT_NOTE) else message + TRANSIENT_NOTE


def is_transient(outcome: Outcome) -> bool:
    """True for an outcome that must not be cached: a failure marked with :func:`transient`
    (an EXEC_ERROR, or a TIMEOUT reached while retrying transport failures)."""
    return outcome.status is not Status.OK and outcome.message.endswith(TRANSIENT_NOTE)


def transient_reason(outcome: Outcome) -> str:
    """The message of a transient failure without its note (for grouping failures by cause)."""
    m = outcome.message
    return m[: -len(TRANSIENT_NOTE)] if m.endswith(TRANSIENT_NOTE) else m


#: Marks of the messages of outcomes over a byte cap: they depend on the cap, not the query.
_BYTE_CAP_MARKS = ("(result byte cap;", "(response byte cap;")


def too_large_message(max_bytes: int) -> str:
    """The EXEC_ERROR message every engine uses for a result over the byte cap."""
    return (f"result larger than {_size(max_bytes)} (result byte cap; raise it with --max-result-bytes)")


def too_large_response_message(status_code: int, max_bytes: int) -> str:
    """The EXEC_ERROR message of an endpoint response body over the response byte cap."""
    return (f"HTTP {status_code}: response body larger than {_size(max_bytes)}; reading stopped "
            "(response byte cap; raise it with --max-response-bytes)")


def over_byte_cap(o: Outcome) -> bool:
    """An outcome that ended at a result or response byte cap (message from the two functions above)."""
    return o.status is Status.EXEC_ERROR and any(m in (o.message or "") for m in _BYTE_CAP_MARKS)


def _size(n: int) -> str:
    for unit, k in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << k and n % (1 << k) == 0:
            return f"{n >> k} {unit}"
    return f"{n} bytes"


def parse_bytes(text: str | int | None) -> int | None:
    """``"512MiB"``, ``"2G"``, ``"65536"`` -> bytes (binary units; ``0``/``off``: no cap -> 0);
    None stays None. Raises ValueError for anything else."""
    if text is None or isinstance(text, int):
        return text
    t = str(text).strip().lower().replace(" ", "")
    if t in ("off", "none", "0"):
        return 0

    m = re.fullmatch(r"(\d+(?:\.\d+)?)(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?", t)
    if not m:
        raise ValueError(f"not a size: {text!r} (e.g. 512MiB, 2G, 65536 or off)")
    unit = (m.group(2) or "b")[0]
    return int(float(m.group(1)) * {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[unit])


def format_bytes(n: int | None) -> str:
    """``64 MiB``-style text for a byte count (``off`` for None/0)."""
    return "off" if not n else _size(int(n))


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
    #: The engine's safety settings and caps, e.g. ``net=isolated,mem=2GiB/worker,...``: not
    #: part of :meth:`signature` or of the cache key; a score signature's ``limits`` part.
    limits: str = ""

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
