"""The generator's only door to the knowledge graph: every SPARQL query the generator runs goes
through :class:`KGAccess`, which wraps a kgqa :class:`~kgqa.execute.Executor` (the engine for
a ``--kg`` value: embedded pyoxigraph file/store or a SPARQL endpoint, the result cache and an
:class:`~kgqa.execute.policy.ExecutionPolicy`), so the timeout, row cap, cache, progress and
sandbox are those of evaluation.

The generator's queries are the KG owner's own (gold): whether they pass the sandbox is
:meth:`ExecutionPolicy.untrusted` ``("gold")`` (``trust_gold``), decided by the policy, never here.

With a result cache (:class:`~kgqa.execute.cache.ResultCache`, SQLite in WAL mode, the one
``kgqa evaluate`` uses) every outcome is stored as it arrives, so a generation killed (even by
``kill -9``) and started again with the same options replays what was done from the cache
and carries on; the output is the same bytes as an uninterrupted run.

Failures are never empty answers: a query that does not come back ``OK`` raises
:class:`QueryFailed` (callers count it and move on), and ``select`` of a query over the row cap
is such a failure too. ``queries`` counts what was asked (for the throughput bench),
``executed`` what the engine really ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgqa.execute.engine import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT
from kgqa.execute.executor import Executor
from kgqa.execute.policy import ExecutionPolicy
from kgqa.make.generate.joinorder import JoinStats, reorder as reorder_joins
from kgqa.model.answer import BooleanAnswer, TableAnswer
from kgqa.model.outcome import Status
from kgqa.model.terms import Term


class QueryFailed(RuntimeError):
    """A generator query did not execute (parse error, execution error, timeout, refusal)."""

    def __init__(self, status: str, message: str, query: str):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.query = query


Row = tuple[Term | None, ...]


@dataclass
class KGAccess:
    """A KG the generator can query through ``executor``. ``timeout`` (s) and ``max_rows``
    apply per query (they start as the executor policy's)."""

    executor: Executor
    timeout: float = DEFAULT_TIMEOUT
    max_rows: int = DEFAULT_MAX_ROWS
    owns_engine: bool = False
    queries: int = 0
    failures: int = 0
    #: per-predicate counts for :func:`~kgqa.make.generate.joinorder.reorder` (None: queries
    #: are sent as written; :meth:`read_join_stats`)
    join_stats: JoinStats | None = None
    #: query text -> the text it is sent as (:meth:`select_many` ``reorder``)
    reordered: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def open(cls, kg: str | Path | Sequence[str | Path], graph: str | None = None, *,
             timeout: float = DEFAULT_TIMEOUT, max_rows: int = DEFAULT_MAX_ROWS,
             cache: bool | str | Path = False, policy: ExecutionPolicy | None = None,
             **options: Any) -> "KGAccess":
        """Open ``kg`` as ``--kg`` does everywhere in kgqa (files, store directory, endpoint URL)
        through :meth:`Executor.open`. ``cache``: False (none), True (the user cache,
        ``$KGQA_CACHE_DIR/results.sqlite``) or a cache file path; ``options`` go to the engine."""
        pol = policy or ExecutionPolicy(timeout=timeout, max_rows=max_rows)
        ex = Executor.open(kg, graph, policy=pol, cache=cache if cache is not False else None, **options)
        return cls(ex, pol.timeout, pol.max_rows, owns_engine=True)

    @property
    def engine(self) -> Executor:
        """The executor (an engine itself: ``info``, ``execute``, ``execute_many``)."""
        return self.executor

    @property
    def executed(self) -> int:
        """Queries the engine really ran (cache and memo hits excluded)."""
        return self.executor.counts["executed"]

    @property
    def signature(self) -> str:
        return self.executor.signature

    def read_join_stats(self) -> None:
        """Read :attr:`join_stats` (two aggregate queries); a KG that cannot answer them keeps
        its queries as written."""
        got = self.select_many(list(JoinStats.QUERIES))
        if not any(isinstance(r, QueryFailed) for r in got):
            self.join_stats = JoinStats.from_rows(got[0].rows, got[1].rows)

    def select_many(self, queries: Sequence[str], reorder: bool | Sequence[bool] = False) -> list[TableAnswer | QueryFailed]:
        """Execute SELECT queries; each result is a table or the :class:`QueryFailed` it ended in.
        They are prepared as the policy says for gold queries (normaliser; the sandbox when
        ``trust_gold`` is off). ``reorder`` (all, or one flag per query): send the query with
        its patterns in the join order of :func:`~kgqa.make.generate.joinorder.reorder` (the
        same solutions, perhaps in another order: only for queries whose result does not
        depend on the order or on which rows a LIMIT keeps)."""
        if not queries:
            return []
        flags = [reorder] * len(queries) if isinstance(reorder, bool) else list(reorder)
        texts = [self._reorder(q) if f else q for q, f in zip(queries, flags)]
        ex = self.executor
        prepared = ex.prepare_many(texts, untrusted=ex.policy.untrusted("gold"))
        run = [text for text, _, refused in prepared if refused is None]
        outs = iter(ex.execute_many(run, timeout=self.timeout, max_rows=self.max_rows))
        self.queries += len(queries)
        res: list[TableAnswer | QueryFailed] = []
        for q, (_, _, refused) in zip(queries, prepared):
            o = refused if refused is not None else next(outs)
            if o.status is Status.OK and isinstance(o.answer, TableAnswer):
                res.append(o.answer)
            elif o.status is Status.OK and isinstance(o.answer, BooleanAnswer):
                self.failures += 1
                res.append(QueryFailed("exec_error", "expected a SELECT result, got a boolean", q))
            else:
                self.failures += 1
                res.append(QueryFailed(o.status.value, o.message or "", q))
        return res

    def _reorder(self, query: str) -> str:
        if self.join_stats is None:
            return query
        text = self.reordered.get(query)
        if text is None:
            text = self.reordered[query] = reorder_joins(query, self.join_stats)
        return text

    def select(self, query: str) -> TableAnswer:
        """Execute one SELECT query; raises :class:`QueryFailed` unless it returned a table."""
        r = self.select_many([query])[0]
        if isinstance(r, QueryFailed):
            raise r
        return r

    def close(self) -> None:
        if self.owns_engine:
            self.executor.close()

    def __enter__(self) -> "KGAccess":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
