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

Queries whose answers are wanted soon can be read ahead (:meth:`KGAccess.read_ahead`) on a
second engine over the same KG, one worker of its own, in a background thread; their answers
are the same (each query is sent as written), taken when asked. Not kept in the result cache:
a generation started again asks them again.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgqa.execute.engine import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT
from kgqa.execute.executor import Executor
from kgqa.execute.policy import ExecutionPolicy
from kgqa.make.generate.joinorder import (JoinStats, bind_casts, cast_lookups, count_query, lookup_query,
                                         reads_every_solution, reorder as reorder_joins, solutions)
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

#: a query that reads every solution of its patterns (an aggregate, a list, an ``ORDER BY``)
#: whose patterns are estimated (:func:`~kgqa.make.generate.joinorder.solutions`, from the
#: KG's per-predicate degrees) to have more solutions than this is counted first
#: (:func:`~kgqa.make.generate.joinorder.count_query`): on the eight shared KGs three checks
#: of fso-hgde, estimated at 2.4-2.7 x 10^7 and counted at 27.1 million (the one that ran into
#: the timeout), 275,331 and 101,487; no check of another KG is estimated at over 30,000
COUNT_OVER = 1_000_000
#: solutions a check reads per second of its timeout at most: one whose patterns have more
#: than this many times its timeout (21 million for 30 s) is refused ``too-costly`` without
#: being run. Measured with pyoxigraph on fso-hgde: its superlative over 27.1 million solutions
#: (``MAX`` of a cast date) took 49 CPU s unbounded (0.55 million a second; in generation it
#: ran 30 s into the timeout and was refused ``engine-error``), its largest check that finished
#: read 275,000 in 0.43 CPU s (0.64 million a second)
SOLUTIONS_PER_SECOND = 700_000
TOO_COSTLY = "too-costly"
#: the predicates' degrees are read (:meth:`KGAccess._read_degrees`) once a query that reads every
#: solution is estimated, as if every node of a predicate had its average degree, at over this
#: many (fso-hgde: 470,000; organs-it and autry-museum under 2,000: they are not read)
DEGREES_OVER = 10_000


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
    #: the texts asked (:meth:`has_answer`)
    asked: set[str] = field(default_factory=set, repr=False)
    #: whether :meth:`_read_degrees` ran
    degrees_read: bool = False
    #: text sent -> its patterns' solutions counted (:meth:`_too_costly`; None: not counted)
    counted: dict[str, int | None] = field(default_factory=dict, repr=False)
    #: (predicate, cast datatype, value) -> the n3 text of the one value of the predicate that
    #: casts to it (None: none, several, or the lookup failed); :meth:`_look_up_casts`
    stored: dict[tuple[str, str, str], str | None] = field(default_factory=dict, repr=False)
    #: queries read ahead in the background (:meth:`read_ahead`), text -> its future answer
    ahead: dict[str, Future] = field(default_factory=dict, repr=False)
    #: their answers, once taken (text -> table)
    read: dict[str, TableAnswer] = field(default_factory=dict, repr=False)
    #: the second access that reads ahead (None: not started; False: the engine has no sibling)
    helper: "KGAccess | bool | None" = field(default=None, repr=False)
    thread: ThreadPoolExecutor | None = field(default=None, repr=False)

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
        its patterns in the join order of :func:`~kgqa.make.generate.joinorder.reorder`, its
        grounded cast values as stored (:func:`~kgqa.make.generate.joinorder.bind_casts`; the
        same solutions, perhaps in another order: only for queries whose result does not
        depend on the order or on which rows a LIMIT keeps)."""
        if not queries:
            return []
        flags = [reorder] * len(queries) if isinstance(reorder, bool) else list(reorder)
        done = self._take_ahead(queries) if self.ahead or self.read else {}
        if done:  # answered in the background: the rest asked here
            rest = [k for k, q in enumerate(queries) if q not in done]
            got = iter(self.select_many([queries[k] for k in rest], [flags[k] for k in rest]) if rest else [])
            self.queries += len(queries) - len(rest)
            return [done[q] if q in done else next(got) for q in queries]
        self._look_up_casts([q for q, f in zip(queries, flags) if f and q not in self.reordered])
        texts = [self._reorder(q) if f else q for q, f in zip(queries, flags)]
        costly = self._too_costly(texts)
        ex = self.executor
        prepared = ex.prepare_many([t for t in texts if t not in costly], untrusted=ex.policy.untrusted("gold"))
        run = [text for text, _, refused in prepared if refused is None]
        outs = iter(ex.execute_many(run, timeout=self.timeout, max_rows=self.max_rows))
        self.queries += len(queries)
        self.asked.update(queries)
        preps = iter(prepared)
        res: list[TableAnswer | QueryFailed] = []
        for q, text in zip(queries, texts):
            if text in costly:
                self.failures += 1
                res.append(QueryFailed(TOO_COSTLY, costly[text], q))
                continue
            refused = next(preps)[2]
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

    def has_answer(self, query: str) -> bool:
        """Whether ``query`` was asked before (its outcome is memoised by the executor, but for a
        transient failure, which is asked again) or is read ahead."""
        return query in self.asked or query in self.ahead or query in self.read

    @property
    def reads_in_background(self) -> bool:
        """Whether :meth:`read_ahead` runs queries on a second engine (started, and the engine
        has a sibling)."""
        return bool(self.helper)

    def read_ahead(self, queries: Sequence[str]) -> bool:
        """Start ``queries`` (sent as written) in a background thread on a second engine over the
        same KG with one worker of its own (:meth:`EmbeddedEngine.sibling`), each on its own,
        in order: they run while this access's queries and the caller's Python do, and
        :meth:`select_many` takes their answers (waiting for one that is running, asking one
        that has not started itself; a failure there is asked again here). False where the
        engine has no sibling (an endpoint): the caller asks them in its own next batch."""
        if self.helper is None:
            if not queries:
                return False
            make = getattr(self.executor.engine, "sibling", None)
            try:
                engine = make(1) if make is not None else None
            except (RuntimeError, OSError):
                engine = None
            if engine is None:
                self.helper = False
                return False
            self.helper = KGAccess(Executor(engine, policy=self.executor.policy, owns=True), self.timeout,
                                   self.max_rows, owns_engine=True)
            self.thread = ThreadPoolExecutor(1, thread_name_prefix="kgqa-read-ahead")
        if self.helper is False:
            return False
        for q in dict.fromkeys(queries):
            if not self.has_answer(q):
                self.ahead[q] = self.thread.submit(self.helper.select_many, [q])
        return True

    def stop_reading_ahead(self) -> None:
        """Withdraw the queries read ahead that have not started (the one running ends on its
        own; :meth:`close` waits for it)."""
        for q in [q for q, f in self.ahead.items() if f.cancel()]:
            del self.ahead[q]

    def _take_ahead(self, queries: Sequence[str]) -> dict[str, TableAnswer]:
        """The answers of ``queries`` read ahead (:meth:`read_ahead`): waited for where running;
        one not started yet is withdrawn (the caller asks it)."""
        out = {}
        for q in queries:
            if q in self.read:
                out[q] = self.read[q]
                continue
            fut = self.ahead.pop(q, None)
            if fut is None or fut.cancel():
                continue
            try:
                r = fut.result()[0]
            except Exception:  # noqa: BLE001 - the helper failed: the query is asked here
                continue
            if isinstance(r, TableAnswer):
                self.read[q] = out[q] = r
                self.asked.add(q)
        return out

    def _too_costly(self, texts: list[str]) -> dict[str, str]:
        """The texts refused ``too-costly`` without being run, each with why: they read every
        solution of patterns estimated at over :data:`COUNT_OVER` solutions, counted (one
        batch of :func:`~kgqa.make.generate.joinorder.count_query`) at over
        :data:`SOLUTIONS_PER_SECOND` times the timeout. Needs :meth:`read_join_stats`."""
        stats = self.join_stats
        if stats is None:
            return {}
        ask = {}
        for t in dict.fromkeys(texts):
            if t in self.counted or not reads_every_solution(t):
                continue
            if not self.degrees_read and solutions(t, stats, DEGREES_OVER) > DEGREES_OVER:
                self._read_degrees()
                stats = self.join_stats
            if stats.degrees and solutions(t, stats, COUNT_OVER) > COUNT_OVER:
                ask[t] = count_query(t)
            else:
                self.counted[t] = None
        asked = [q for q in ask.values() if q is not None]
        got = dict(zip(asked, self.select_many(asked))) if asked else {}
        for t, q in ask.items():
            r = got.get(q)
            ok = isinstance(r, TableAnswer) and r.rows and r.rows[0] and r.rows[0][0] is not None
            self.counted[t] = int(r.rows[0][0].value) if ok else None
        bound = SOLUTIONS_PER_SECOND * self.timeout
        return {t: f"{self.counted[t]:,} solutions to read, over {bound:,.0f} ({SOLUTIONS_PER_SECOND:,} a second "
                   f"of the {self.timeout:g} s timeout): not run"
                for t in texts if (self.counted.get(t) or 0) > bound}

    def _read_degrees(self) -> None:
        """Read the degrees of :attr:`join_stats` (two aggregate queries), once: only a KG one
        of whose checks has many solutions by the counts alone needs them."""
        self.degrees_read = True
        got = self.select_many(list(JoinStats.DEGREE_QUERIES))
        if self.join_stats is not None and not any(isinstance(r, QueryFailed) for r in got):
            self.join_stats = JoinStats.from_rows([], [], *(r.rows for r in got), base=self.join_stats)

    def _look_up_casts(self, queries: list[str]) -> None:
        """Read :attr:`stored` for the grounded cast values of ``queries`` not looked up yet
        (one batch)."""
        keys = list(dict.fromkeys(k for q in queries for k in cast_lookups(q) if k not in self.stored))
        for key, r in zip(keys, self.select_many([lookup_query(k) for k in keys])):
            one = isinstance(r, TableAnswer) and len(r.rows) == 1 and r.rows[0][0] is not None
            self.stored[key] = r.rows[0][0].n3() if one else None

    def _reorder(self, query: str) -> str:
        text = self.reordered.get(query)
        if text is None:
            text = bind_casts(query, self.stored)
            if self.join_stats is not None:  # kept once the join order is known
                text = self.reordered[query] = reorder_joins(text, self.join_stats)
        return text

    def select(self, query: str) -> TableAnswer:
        """Execute one SELECT query; raises :class:`QueryFailed` unless it returned a table."""
        r = self.select_many([query])[0]
        if isinstance(r, QueryFailed):
            raise r
        return r

    def close(self) -> None:
        if self.thread is not None:  # what runs there ends first (a query of a few seconds at most)
            self.stop_reading_ahead()
            self.thread.shutdown(wait=True)
            self.helper.close()
            self.thread, self.helper = None, False
        if self.owns_engine:
            self.executor.close()

    def __enter__(self) -> "KGAccess":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
