"""The one way kgqa executes queries: an :class:`Executor` = an engine + a result cache + an
:class:`~kgqa.execute.policy.ExecutionPolicy`.

Every consumer goes through it: the evaluation pipeline (:meth:`Executor.execute_run`: a run's
predicted queries and the gold queries it needs, in one batch), the validation suites
(:meth:`Executor.run`: ``{id: query}`` with an in-process memo), the gold audit and the
degradations (:meth:`Executor.execute_gold`), KG lookups such as answer item types
(:meth:`Executor.answer_types`). An Executor is itself an engine (``info``, ``execute``,
``execute_many``, ``close``), executing texts as given (no normaliser, no sandbox) with the
policy's limits, so helpers written against :class:`~kgqa.execute.engine.Engine` accept it.

    >>> with Executor.open("kg.ttl", policy=ExecutionPolicy(timeout=10)) as ex:   # doctest: +SKIP
    ...     execution = ex.execute_run(dataset, run)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
import hashlib

from kgqa.execute.cache import COUNT_KEYS, CachedEngine, ResultCache, code_fingerprint
from kgqa.execute.engine import Engine, EngineInfo, is_transient
from kgqa.execute.policy import ExecutionPolicy
from kgqa.execute.sandbox import Prepared, Verdict
from kgqa.model.answer import Answer
from kgqa.model.item import Dataset
from kgqa.model.outcome import Outcome, Status
from kgqa.model.progress import progress_bar
from kgqa.model.run import Run
from kgqa.execute.opener import open_engine
from kgqa.execute.engine_findings import screen
from kgqa.execute.types import answer_types, label_pairs, link_pairs

GoldMode = Literal["stored", "executed", "none"]


@dataclass
class Execution:
    """What executing a run produced.

    - ``predicted``: item id -> outcome of the run's query, for every prediction (of an item in
      the dataset) that has a query and is executed (see :meth:`Executor.execute_run`);
    - ``gold``: item id -> outcome of the gold query, for items whose gold is executed;
    - ``rewrites``: item id -> normaliser rewrites, each line prefixed ``gold: `` or
      ``predicted: `` (only items with at least one rewrite);
    - ``counts``: ``executed``, ``cache_hits``, ``errors``, ``timeouts``, ``refused`` (see
      :class:`~kgqa.execute.cache.CachedEngine`; sandbox refusals of predicted queries count as
      ``refused``);
    - ``engine_signature``: :meth:`EngineInfo.signature` of the engine.
    """

    predicted: dict[str, Outcome] = field(default_factory=dict)
    gold: dict[str, Outcome] = field(default_factory=dict)
    rewrites: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNT_KEYS, 0))
    engine_signature: str = ""


def _code_fingerprint() -> str | None:
    """sha256 over the source of everything that decides a query's preparation (lexer, prefix
    table, sandbox, normaliser, engine-dependence screen, size cap); None when unreadable (then
    preparations are not remembered across runs)."""

    return code_fingerprint(("kgqa.sparql.lexer", "kgqa.sparql.prefixes", "kgqa.execute.sandbox",
                             "kgqa.execute.normalise", "kgqa.execute.engine_findings", "kgqa.execute.engine",
                             "kgqa.execute.policy"))


_PREPARE_VERSION = _code_fingerprint()


def _prepared_key(policy: ExecutionPolicy, untrusted: bool, query: str) -> str:
    head = (f"{_PREPARE_VERSION}|normalise={policy.normalise}|sandbox={untrusted and policy.sandbox}"
            f"|service={policy.allow_service}|update={policy.allow_update}\0")
    return hashlib.sha256((head + query).encode("utf-8", "surrogatepass")).hexdigest()


class Executor:
    """Executes queries on ``engine`` through ``cache`` (a :class:`ResultCache`, or None: no
    persistent cache) under ``policy``. :meth:`open` makes one from a ``kg`` argument and owns
    (closes) what it opened. ``counts`` are the :class:`CachedEngine` counts plus ``memo_hits``.

    Progress: ``progress`` shows a bar on a terminal; ``on_progress(done, total)`` is called as
    every batch sent to the engine advances (``done`` of that batch's ``total`` queries: a web
    page's live progress). Both see every engine batch: a run's, the gold queries', the
    engine-dependence variants'.
    """

    def __init__(self, engine: Engine, *, policy: ExecutionPolicy | None = None, cache: ResultCache | None = None,
                 progress: bool = False, owns: bool = False, on_progress: Callable[[int, int], None] | None = None):
        self.policy = policy or ExecutionPolicy()
        self.cached = engine if isinstance(engine, CachedEngine) else CachedEngine(engine, cache)
        self.cache = cache
        self.progress = progress
        self.on_progress = on_progress
        self._owns = owns
        self._memo: dict[tuple[float, int], dict[str, Outcome]] = {}  # (timeout, max_rows) -> text -> outcome
        self._prepared: dict[tuple[str, bool], tuple[str, list[str], Outcome | None]] = {}
        #: query texts prepared here whose tokens hold nothing engine dependence looks for
        #: (:func:`kgqa.execute.engine_findings.screen`): their check needs no second lexer pass
        self.no_findings: set[str] = set()
        self.memo_hits = 0

    @classmethod
    def open(cls, kg: str | Path | Sequence[str | Path], graph: str | None = None, *,
             policy: ExecutionPolicy | None = None, cache: ResultCache | str | Path | bool | None = True,
             progress: bool = False, on_progress: Callable[[int, int], None] | None = None,
             **engine_options: Any) -> "Executor":
        """Open the engine for ``kg`` (:func:`kgqa.execute.opener.open_engine`: RDF file(s), a store
        directory or an endpoint URL) and a result cache (``True``: the default cache, a path:
        that cache file, ``False``/None: none). Closing the executor closes both."""

        engine = open_engine(kg, graph, progress=progress, **engine_options)
        try:
            rc = cache if isinstance(cache, ResultCache) else (
                ResultCache() if cache is True else ResultCache(cache) if cache else None)
        except BaseException:
            engine.close()
            raise
        return cls(engine, policy=policy, cache=rc, progress=progress, owns=True, on_progress=on_progress)

    # ------------------------------------------------------------------ engine interface

    @property
    def engine(self) -> Engine:
        return self.cached.engine

    @property
    def info(self) -> EngineInfo:
        return self.cached.info

    @property
    def signature(self) -> str:
        """The engine's signature (``oxigraph-0.5.13:kg=sha256:...``)."""
        return self.info.signature()

    def signature_parts(self) -> dict[str, str]:
        """What execution contributes to a score signature: the engine and the policy."""
        limits = getattr(getattr(self.engine, "info", None), "limits", "")
        return {"engine": self.signature, **({"limits": limits} if limits else {}), **self.policy.signature_parts()}

    @property
    def counts(self) -> dict[str, int]:
        return {**self.cached.counts, "memo_hits": self.memo_hits}

    def execute(self, query: str, timeout: float | None = None, max_rows: int | None = None) -> Outcome:
        """One query as given (no normaliser, no sandbox): vocabulary and lookup queries."""
        return self.execute_many([query], timeout, max_rows)[0]

    def execute_many(self, queries: Sequence[str], timeout: float | None = None, max_rows: int | None = None,
                     progress: Callable[[int], None] | None = None) -> list[Outcome]:
        """Queries as given, memoised by text, timeout and row cap (an outcome's ``elapsed`` is
        dropped: a memoised result has no time of its own); transient failures are not kept."""
        timeout = self.policy.timeout if timeout is None else timeout
        max_rows = self.policy.max_rows if max_rows is None else max_rows
        memo = self._memo.setdefault((timeout, max_rows), {})
        todo = [q for q in dict.fromkeys(queries) if q not in memo]
        fresh: dict[str, Outcome] = {}
        if todo:
            outs = self.cached.execute_many(todo, timeout=timeout, max_rows=max_rows,
                                            progress=self._reporting(len(todo), progress))
            for q, o in zip(todo, outs):
                f = fresh[q] = Outcome(o.status, o.answer, o.message, None)
                if not is_transient(o):
                    memo[q] = f
        self.memo_hits += len(queries) - len(todo)
        return [fresh.get(q) or memo[q] for q in queries]

    def close(self) -> None:
        if self._owns:
            self.cached.close()
            if self.cache is not None:
                self.cache.close()

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ policy-aware paths

    def prepare(self, query: str, untrusted: bool = True) -> tuple[str, list[str], Outcome | None]:
        """:meth:`ExecutionPolicy.prepare`, memoised per (text, untrusted). One query at a time
        is prepared here, not looked up in the result cache (:meth:`prepare_many` does that in
        batches: call it first for many queries)."""
        hit = self._prepared.get((query, untrusted))
        return hit if hit is not None else self._remember(query, untrusted, self._prepare_now(query, untrusted))

    def _prepare_now(self, query: str, untrusted: bool) -> Prepared:
        # screen finds nothing in a query of the sandbox's simple form (no keyword it looks for,
        # no comparison), which is then not tokenised (tests/execute/test_sandbox_simple.py)
        return self.policy.prepared(query, untrusted=untrusted, scan=screen, scan_simple=False)

    def _remember(self, query: str, untrusted: bool, p: Prepared) -> tuple[str, list[str], Outcome | None]:
        """Memoise a preparation (and note a text the engine-dependence screen found nothing in)."""
        if p.scan is False:
            self.no_findings.add(query)
        out = self._prepared[(query, untrusted)] = self.policy.outcome_of(p)
        return out

    def prepare_many(self, queries: Sequence[str], untrusted: bool = True) -> list[tuple[str, list[str], Outcome | None]]:
        """:meth:`prepare` for many queries: memoised per (text, untrusted) here, and remembered
        in the result cache (:meth:`ResultCache.get_prepared`, looked up in batches) under a key
        that names the query, the policy and the preparing code, so a re-run neither tokenises
        nor normalises queries prepared before. Also records which texts the engine-dependence
        screen found nothing in (:attr:`no_findings`)."""
        memo = self._prepared
        todo = [q for q in dict.fromkeys(queries) if (q, untrusted) not in memo]
        if todo:
            keys = {q: _prepared_key(self.policy, untrusted, q) for q in todo} if self.cache is not None else {}
            stored = self.cache.get_prepared(list(keys.values())) if keys and _PREPARE_VERSION else {}
            new = []
            for q in todo:
                got = stored.get(keys[q]) if stored else None
                if got is not None:
                    text, rewrites, refusal, scanned = got
                    p = Prepared(q if text is None else text, rewrites,
                                 None if refusal is None else Verdict(refusal), scanned)
                else:
                    p = self._prepare_now(q, untrusted)
                    if keys and _PREPARE_VERSION:
                        new.append((keys[q], None if p.text == q else p.text, p.rewrites, p.refusal, p.scan))
                self._remember(q, untrusted, p)
            if new:
                self.cache.put_prepared(new)
        return [memo[(q, untrusted)] for q in queries]

    def run(self, queries: Mapping[str, str], untrusted: bool = True) -> dict[str, Outcome]:
        """Outcomes by id for ``{id: query text}``: normalised and (untrusted) sandboxed per the
        policy, identical final texts executed once."""
        out: dict[str, Outcome] = {}
        todo: dict[str, list[str]] = {}
        prepared = self.prepare_many(list(queries.values()), untrusted)
        for (iid, q), (text, _, refused) in zip(queries.items(), prepared):
            if refused is not None:
                out[iid] = refused
            else:
                todo.setdefault(text, []).append(iid)
        texts = list(todo)
        for text, o in zip(texts, self.execute_many(texts)):
            for iid in todo[text]:
                out[iid] = o
        return {iid: out[iid] for iid in queries}

    def batch(self, queries: Sequence[str], label: str = "executing") -> tuple[list[Outcome], dict[str, int]]:
        """Queries as given, in one ``execute_many`` through the cache (no memo, outcomes keep
        ``elapsed``), with a progress bar when ``progress``; returns the outcomes and the counts
        this batch added."""
        before = dict(self.cached.counts)
        with progress_bar(len(queries), label, enabled=self.progress) as bar:
            outs = self.cached.execute_many(list(queries), timeout=self.policy.timeout, max_rows=self.policy.max_rows,
                                            progress=self._reporting(len(queries), bar or None)) if queries else []
        return outs, {k: self.cached.counts[k] - before[k] for k in COUNT_KEYS}

    def _reporting(self, total: int, inner: Callable[[int], None] | None) -> Callable[[int], None] | None:
        """The engine's ``progress(n)`` callback for a batch of ``total`` queries: ``inner`` (a
        bar) and :attr:`on_progress` with the batch's ``(done, total)``."""
        hook = self.on_progress
        if hook is None:
            return inner
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            if inner is not None:
                inner(n)
            hook(done, total)

        return advance

    def execute_run(self, dataset: Dataset, run: Run, *, gold: GoldMode = "stored",
                    reexecute: bool = False) -> Execution:
        """Execute the predicted queries of ``run`` (and gold queries where needed).

        - A prediction is executed when its item is in ``dataset``, its ``status`` is OK, it has a
          query, and it has no answer (or ranked list) of its own — a run-provided answer wins
          unless ``reexecute``.
        - Gold queries are executed for every item with a query when ``gold="executed"``, for
          items without a stored answer (e.g. LC-QuAD) when ``gold="stored"``, and never when
          ``gold="none"`` (nothing that is scored needs a gold answer).
        - Every query passes the policy (normaliser; sandbox for predicted queries, whose
          refusals become REFUSED outcomes no engine sees); everything runs in one batch.
        """
        if gold not in ("stored", "executed", "none"):
            raise ValueError(f"gold must be 'stored', 'executed' or 'none', got {gold!r}")
        ex = Execution(engine_signature=self.signature)
        jobs: list[tuple[str, str, str]] = []  # (side, item id, query text)
        refused: dict[str, Outcome] = {}

        def prepare(side: str, item_id: str, query: str) -> tuple[str, Outcome | None]:
            text, rewrites, refused_outcome = self.prepare(query, untrusted=self.policy.untrusted(side))
            if rewrites:
                ex.rewrites.setdefault(item_id, []).extend(f"{side}: {r}" for r in rewrites)
            return text, refused_outcome

        gold_items = [item for item in dataset.items
                      if gold != "none" and item.sparql and item.sparql.strip() and (gold == "executed" or item.answer is None)]
        preds = [p for p in run.predictions
                 if p.id in dataset and p.status is Status.OK and p.sparql is not None
                 and (reexecute or (p.answer is None and p.ranked is None))]
        self.prepare_many([item.sparql for item in gold_items], untrusted=self.policy.untrusted("gold"))  # in batches (see prepare_many)
        self.prepare_many([p.sparql for p in preds], untrusted=self.policy.untrusted("predicted"))
        for item in gold_items:
            jobs.append(("gold", item.id, prepare("gold", item.id, item.sparql)[0]))
        for p in preds:
            text, refused_outcome = prepare("predicted", p.id, p.sparql)
            if refused_outcome is not None:
                refused[p.id] = refused_outcome
                continue
            jobs.append(("predicted", p.id, text))
        outs, counts = self.batch([q for _, _, q in jobs])
        for (side, item_id, _), o in zip(jobs, outs):
            (ex.gold if side == "gold" else ex.predicted)[item_id] = o
        ex.predicted.update(refused)
        counts["refused"] += len(refused)
        ex.counts = counts
        return ex

    def execute_gold(self, dataset: Dataset) -> dict[str, Outcome]:
        """Outcomes of the dataset's gold queries (normalised per the policy; sandboxed unless
        ``policy.trust_gold``), one batch."""
        ids, texts = [], []
        untrusted = self.policy.untrusted("gold")
        self.prepare_many([it.sparql for it in dataset.items if it.sparql and it.sparql.strip()], untrusted=untrusted)
        for it in dataset.items:
            if it.sparql and it.sparql.strip():
                ids.append(it.id)
                texts.append(self.prepare(it.sparql, untrusted=untrusted)[0])
        return dict(zip(ids, self.batch(texts, "gold queries")[0]))

    def answer_types(self, gold: Mapping[str, Answer | None],
                     system: Mapping[str, Answer | None]) -> dict[str, dict[str, list[str]]]:
        """rdf:type classes of answer items per question (see :func:`kgqa.execute.types.answer_types`)."""

        return answer_types(self, gold, system, self.policy.timeout)

    def link_pairs(self, iris: Iterable[str], predicate: str) -> tuple[list[tuple[str, str]], list[str]]:
        """IRI pairs ``predicate`` (e.g. ``dbo:wikiPageRedirects``) links, either direction, for
        the IRIs given (see :func:`kgqa.execute.types.link_pairs`), and failed batches' messages."""

        return link_pairs(self, iris, predicate, self.policy.timeout)

    def label_pairs(self, iris: Iterable[str]) -> tuple[list[tuple[str, str]], list[str]]:
        """(IRI, label) pairs of the IRIs given (see :func:`kgqa.execute.types.label_pairs`)."""

        return label_pairs(self, iris, self.policy.timeout)
