"""Every query the migration sends to a knowledge graph goes through :class:`KG` (one module,
so that the execution back end can be switched in one place).

A :class:`KG` is a kgqa :class:`~kgqa.execute.Executor` (:meth:`Executor.open`: RDF files, a
store directory or a SPARQL endpoint, the persistent result cache and an
:class:`~kgqa.execute.policy.ExecutionPolicy`), so a migration killed half way re-runs from the
cache (every query already answered is a cache hit) and its caps, caching and sandbox are those
of evaluation. Lookup queries built here are kgqa's own vocabulary queries (executed as given);
migrated gold queries are prepared as the policy says for gold (:meth:`ExecutionPolicy.untrusted`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from kgqa.execute.cache import ResultCache, default_cache_path
from kgqa.execute.engine import DEFAULT_TIMEOUT, Engine
from kgqa.execute.executor import Executor
from kgqa.execute.policy import ExecutionPolicy
from kgqa.model import IRI, Literal, Outcome, Status, TableAnswer
from kgqa.model.terms import BNode, Term

BATCH = 200
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_SUBCLASSOF = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
#: "is an instance of": rdf:type followed by any number of rdfs:subClassOf steps
TYPE_PATH = f"<{RDF_TYPE}>/<{RDFS_SUBCLASSOF}>*"


def term_sparql(term: Term) -> str:
    """A term in SPARQL syntax (IRIs with unsafe characters percent-encoded)."""
    if isinstance(term, IRI):
        return iri_ref(term.value)
    if isinstance(term, Literal):
        body = (term.value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
                .replace("\r", "\\r"))
        if term.language:
            return f'"{body}"@{term.language}'
        if term.datatype:
            return f'"{body}"^^{iri_ref(term.datatype)}'
        return f'"{body}"'
    raise ValueError(f"a blank node cannot be a query constant: {term!r}")


_UNSAFE = set(' <>"{}|^`\\') | {chr(c) for c in range(0x21)}


def iri_ref(iri: str) -> str:
    """``<iri>``, characters SPARQL forbids in an IRIREF percent-encoded (UTF-8)."""
    return "<" + "".join("".join(f"%{b:02X}" for b in ch.encode()) if ch in _UNSAFE else ch
                         for ch in iri) + ">"


class KG:
    """One knowledge graph to query. ``spec`` is what ``--kg`` takes, or an :class:`Engine`."""

    def __init__(self, spec: str | Path | Sequence[str | Path] | Engine, *, graph: str | None = None,
                 cache: ResultCache | None | bool = True, timeout: float = DEFAULT_TIMEOUT,
                 progress: bool = False, policy: ExecutionPolicy | None = None):
        pol = policy or ExecutionPolicy(timeout=timeout)
        own_cache = cache is True
        if cache is True:
            cache = ResultCache(default_cache_path())
        elif cache is False:
            cache = None
        if hasattr(spec, "execute_many"):
            self.executor = Executor(spec, policy=pol, cache=cache)  # type: ignore[arg-type]
            self.name = spec.info.fingerprint  # type: ignore[union-attr]
        else:
            self.executor = Executor.open(spec, graph, policy=pol, cache=cache, progress=progress)  # type: ignore[arg-type]
            self.name = str(spec)
        self._own_cache = cache if own_cache else None
        self.timeout = pol.timeout

    @property
    def engine(self) -> Executor:
        return self.executor

    @property
    def policy(self) -> ExecutionPolicy:
        return self.executor.policy

    @property
    def signature(self) -> str:
        return self.executor.signature

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.executor.counts)

    def close(self) -> None:
        """Close the engine, and the result cache when this KG opened it."""
        self.executor.cached.close()
        if self._own_cache is not None:
            self._own_cache.close()

    # ------------------------------------------------------------------ raw execution

    def run(self, queries: Sequence[str]) -> list[Outcome]:
        """Outcomes of kgqa's own lookup queries, executed as given, in order."""
        return self.executor.execute_many(list(queries), timeout=self.timeout)

    def run_gold(self, query: str) -> Outcome:
        """A (migrated) gold query: the normaliser (Virtuoso dialect, undeclared standard
        prefixes) and, when the policy does not trust gold queries, the sandbox, as ``kgqa
        audit`` runs gold queries."""
        return self.run_gold_many([query])[0]

    def run_gold_many(self, queries: Sequence[str], progress: Callable[[int], None] | None = None) -> list[Outcome]:
        """:meth:`run_gold` for many queries, sent to the engine as one batch."""
        out: list[Outcome | None] = [None] * len(queries)
        todo: list[tuple[int, str]] = []
        prepared = self.executor.prepare_many(list(queries), untrusted=self.policy.untrusted("gold"))
        for i, (text, _, refused) in enumerate(prepared):
            if refused is not None:
                out[i] = refused
            else:
                todo.append((i, text))
        if progress is not None and len(todo) < len(queries):
            progress(len(queries) - len(todo))
        if todo:
            outs = self.executor.execute_many([t for _, t in todo], timeout=self.timeout, progress=progress)
            for (i, _), o in zip(todo, outs):
                out[i] = o
        return out  # type: ignore[return-value]

    def rows(self, queries: Sequence[str]) -> list[list[tuple] | str]:
        """Rows of each SELECT query, or the failure message."""
        out: list[list[tuple] | str] = []
        for o in self.run(queries):
            if o.status is Status.OK and isinstance(o.answer, TableAnswer):
                out.append(list(o.answer.rows))
            else:
                out.append(f"{o.status.value}: {o.message}")
        return out

    # ------------------------------------------------------------------ lookups

    def _batched(self, values: Iterable[Term], body: str, select: str = "?v ?o") -> tuple[list[tuple], list[str]]:
        """``SELECT DISTINCT select WHERE { VALUES ?v {...} body }`` over batches of values."""
        todo = [v for v in dict.fromkeys(values) if not isinstance(v, BNode)]
        queries = ["SELECT DISTINCT " + select + " WHERE { VALUES ?v { "
                   + " ".join(term_sparql(v) for v in todo[i:i + BATCH]) + " } " + body + " }"
                   for i in range(0, len(todo), BATCH)]
        rows: list[tuple] = []
        errors: list[str] = []
        for r in self.rows(queries):
            if isinstance(r, str):
                errors.append(r)
            else:
                rows.extend(r)
        return rows, errors

    def existing(self, iris: Iterable[str]) -> set[str]:
        """Those IRIs that occur in the KG (as subject or object, or as a predicate)."""
        rows, _ = self._batched((IRI(i) for i in iris),
                                "{ ?v ?p ?o } UNION { ?s ?p ?v } UNION { ?s ?v ?o }", "?v")
        return {r[0].value for r in rows if isinstance(r[0], IRI)}

    def objects(self, iris: Iterable[str], predicates: Sequence[str]) -> dict[str, list[str]]:
        """IRI -> IRIs it points to through any of ``predicates`` (sorted)."""
        if not predicates:
            return {}
        alts = " UNION ".join(f"{{ ?v {iri_ref(p)} ?o }}" for p in predicates)
        rows, _ = self._batched((IRI(i) for i in iris), alts)
        out: dict[str, list[str]] = {}
        for v, o in rows:
            if isinstance(v, IRI) and isinstance(o, IRI):
                out.setdefault(v.value, []).append(o.value)
        return {k: sorted(set(v)) for k, v in out.items()}

    def sameas(self, iris: Iterable[str], predicate: str) -> dict[str, list[str]]:
        """Links stored in this KG: IRI -> IRIs linked to it by ``predicate`` either way."""
        p = iri_ref(predicate)
        rows, _ = self._batched((IRI(i) for i in iris), f"{{ ?v {p} ?o }} UNION {{ ?o {p} ?v }}")
        out: dict[str, list[str]] = {}
        for v, o in rows:
            if isinstance(v, IRI) and isinstance(o, IRI) and o.value != v.value:
                out.setdefault(v.value, []).append(o.value)
        return {k: sorted(set(v)) for k, v in out.items()}

    def types(self, iris: Iterable[str]) -> dict[str, set[str]]:
        """IRI -> its classes, rdf:type with superclasses (every IRI asked gets an entry)."""
        todo = list(dict.fromkeys(iris))
        rows, _ = self._batched((IRI(i) for i in todo), f"?v {TYPE_PATH} ?t", "?v ?t")
        out: dict[str, set[str]] = {i: set() for i in todo}
        for v, t in rows:
            if isinstance(v, IRI) and isinstance(t, IRI):
                out.setdefault(v.value, set()).add(t.value)
        return out

    def labels(self, iris: Iterable[str], predicate: str) -> dict[str, list[str]]:
        """IRI -> its label strings under ``predicate``."""
        rows, _ = self._batched((IRI(i) for i in iris), f"?v {iri_ref(predicate)} ?l", "?v ?l")
        out: dict[str, list[str]] = {}
        for v, lab in rows:
            if isinstance(v, IRI) and isinstance(lab, Literal):
                out.setdefault(v.value, []).append(lab.value)
        return {k: sorted(set(v)) for k, v in out.items()}

    def by_label(self, labels: Iterable[str], predicate: str) -> dict[str, list[str]]:
        """Label text (case-folded) -> IRIs carrying it under ``predicate`` (any language tag)."""
        out: dict[str, list[str]] = {}
        wanted = {lab.casefold() for lab in labels}
        if not wanted:
            return out
        for chunk_start in range(0, len(wanted), BATCH):
            chunk = sorted(wanted)[chunk_start:chunk_start + BATCH]
            values = " ".join(term_sparql(Literal(x)) for x in chunk)
            q = (f"SELECT DISTINCT ?s ?k WHERE {{ VALUES ?k {{ {values} }} ?s {iri_ref(predicate)} ?l "
                 f"FILTER(LCASE(STR(?l)) = ?k) }}")
            for r in self.rows([q]):
                if isinstance(r, str):
                    continue
                for s, k in r:
                    if isinstance(s, IRI):
                        out.setdefault(k.value, []).append(s.value)
        return {k: sorted(set(v)) for k, v in out.items()}

    def sample(self, predicate: str, n: int, seed: int) -> tuple[list[tuple[Term, Term]], str]:
        """A seeded pseudo-random sample of ``n`` (subject, object) pairs of ``predicate`` (no
        blank nodes): the ``n`` pairs with the smallest MD5 of their text and the seed, which
        is deterministic whatever order the KG returns. When that query fails (e.g. an endpoint
        times out sorting a huge predicate) the first ``n`` pairs the KG returns, and a note."""
        p = iri_ref(predicate)
        base = f"SELECT ?s ?o WHERE {{ ?s {p} ?o FILTER(!isBLANK(?s) && !isBLANK(?o)) }}"
        r = self.rows([f'{base} ORDER BY MD5(CONCAT(STR(?s), " ", STR(?o), " ", "{int(seed)}")) LIMIT {int(n)}'])[0]
        note = ""
        if isinstance(r, str):
            note = f"seeded sample failed ({r}); took the first {n} pairs"
            r = self.rows([f"{base} LIMIT {int(n)}"])[0]
            if isinstance(r, str):
                return [], f"{note}; that failed too: {r}"
        return [(s, o) for s, o in r], note

    def degrees(self, iris: Iterable[str]) -> dict[str, int]:
        """IRI -> number of triples it is the subject or object of (0 when absent)."""
        todo = list(dict.fromkeys(iris))
        out = dict.fromkeys(todo, 0)
        queries = ["SELECT ?v (COUNT(*) AS ?n) WHERE { VALUES ?v { " + " ".join(iri_ref(v) for v in todo[i:i + BATCH])
                   + " } { ?v ?p ?o } UNION { ?s ?p ?v } } GROUP BY ?v" for i in range(0, len(todo), BATCH)]
        for r in self.rows(queries):
            if not isinstance(r, str):
                for v, n in r:
                    if isinstance(v, IRI) and isinstance(n, Literal):
                        out[v.value] = int(n.value)
        return out

    def count(self, pattern: str) -> int | None:
        """COUNT(*) of a group pattern (``None`` when it fails)."""
        r = self.rows([f"SELECT (COUNT(*) AS ?n) WHERE {{ {pattern} }}"])[0]
        if isinstance(r, str) or not r:
            return None
        try:
            return int(r[0][0].value)
        except (ValueError, AttributeError):
            return None
