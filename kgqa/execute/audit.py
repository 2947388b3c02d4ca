"""The gold-query audit: execute every gold query of a dataset and compare the result with the
stored gold answer (``kgqa kg audit``). Execution goes through an
:class:`~kgqa.execute.executor.Executor` (its policy's normaliser, timeout and row cap)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kgqa.execute.executor import Executor
from kgqa.model.answer import answer_items
from kgqa.model.item import Dataset
from kgqa.model.outcome import Outcome, Status
from kgqa.model.terms import LEXICAL_MATCHING, TermMatching
from kgqa.execute.engine_findings import assess_dataset
from kgqa.load import load_dataset


# --------------------------------------------------------------------------- audit


@dataclass
class AuditRow:
    """One gold query checked against its stored answer.

    ``parses``: the engine did not report a parse error (after the normaliser, whose
    ``rewrites`` are listed); ``executes``: the outcome is OK; ``equal``: the executed answer's
    value set equals the stored answer's under ``matching`` (None when there is no stored
    answer or no result); ``missing``: stored values the execution lacks, ``extra``: executed
    values not stored (sorted display strings).
    """

    id: str
    status: str
    parses: bool | None
    executes: bool | None
    equal: bool | None
    rows: int | None = None
    stored_size: int | None = None
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    message: str = ""
    rewrites: list[str] = field(default_factory=list)
    elapsed: float | None = None
    engine_dependent: str | None = None

    @property
    def verdict(self) -> str:
        """``ok`` / ``mismatch`` / ``no-stored-answer`` / ``no-query`` / the failed status."""
        if self.status == "no-query":
            return "no-query"
        if not self.executes:
            return self.status
        if self.equal is None:
            return "no-stored-answer"
        return "ok" if self.equal else "mismatch"


def _display(key) -> str:
    if isinstance(key, tuple):
        return " ".join(str(k) for k in key)
    return str(key)


def compare(executed, stored, matching: TermMatching = LEXICAL_MATCHING) -> tuple[bool, list[str], list[str]]:
    """Whether two answers have the same value set under ``matching`` (every bound value
    flattened; booleans as ``true``/``false`` in lexical mode), and the sorted missing / extra
    values."""
    a = answer_items(executed, matching, "values")
    b = answer_items(stored, matching, "values")
    return a == b, sorted(_display(k) for k in b - a), sorted(_display(k) for k in a - b)


def audit(dataset: Dataset, executor: Executor, *, matching: TermMatching = LEXICAL_MATCHING) -> list[AuditRow]:
    """Execute every gold query of ``dataset`` and compare with the stored answers (by
    default as lexical value sets: the convention of the Text2SPARQL / GERBIL gold files). The
    gold queries are sandboxed when the executor's policy does not trust them (``trust_gold``);
    a refused query is audited as REFUSED, never executed."""
    rows: list[AuditRow] = []
    todo: list[tuple[int, str]] = []
    refused: list[tuple[int, Outcome]] = []
    untrusted = executor.policy.untrusted("gold")
    executor.prepare_many([it.sparql for it in dataset.items if it.sparql and it.sparql.strip()], untrusted=untrusted)
    for item in dataset.items:
        if not item.sparql or not item.sparql.strip():
            rows.append(AuditRow(item.id, "no-query", None, None, None, message="item has no gold query"))
            continue
        text, rw, refusal = executor.prepare(item.sparql, untrusted=untrusted)
        rows.append(AuditRow(item.id, "", None, None, None, rewrites=list(rw)))
        if refusal is not None:
            refused.append((len(rows) - 1, refusal))
        else:
            todo.append((len(rows) - 1, text))
    outs, _ = executor.batch([q for _, q in todo], "auditing")
    for i, o in [*zip((i for i, _ in todo), outs), *refused]:
        row = rows[i]
        item = dataset.items[i]
        row.status = o.status.value
        row.parses = o.status is not Status.PARSE_ERROR if o.status is not Status.REFUSED else None
        row.executes = o.status is Status.OK
        row.message = o.message
        row.elapsed = o.elapsed
        if o.status is Status.OK:
            row.rows = len(o.answer) if o.answer is not None else 0
        if item.answer is not None:
            row.stored_size = len(answer_items(item.answer, matching))
            if o.status is Status.OK:
                row.equal, row.missing, row.extra = compare(o.answer, item.answer, matching)
    return rows


@dataclass
class AuditReport:
    """The audit of one dataset on one engine: ``rows`` per gold query, ``verdicts`` counted."""

    dataset: str
    engine: str
    rows: list[AuditRow]

    @property
    def verdicts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out

    def to_json(self) -> dict:
        return {"dataset": self.dataset, "engine": self.engine, "verdicts": self.verdicts,
                "queries": [{"id": r.id, "verdict": r.verdict, "status": r.status, "parses": r.parses,
                             "executes": r.executes, "equal": r.equal, "rows": r.rows, "stored": r.stored_size,
                             "missing": r.missing, "extra": r.extra, "message": r.message,
                             "rewrites": r.rewrites, "engine_dependent": r.engine_dependent} for r in self.rows],
                "engine_dependent": sum(1 for r in self.rows if r.engine_dependent)}


def audit_kg(dataset, kg, *, graph: str | None = None, policy=None, cache=True, progress: bool = False,
             dataset_format: str | None = None, matching: TermMatching = LEXICAL_MATCHING) -> AuditReport:
    """``kgqa audit``: load ``dataset`` (a name, path or Dataset), open ``kg`` through an
    :class:`Executor` (``policy``, ``cache``), audit every gold query, close."""

    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset, format=dataset_format)

    with Executor.open(kg, graph, policy=policy, cache=cache, progress=progress) as ex:
        rows = audit(ds, ex, matching=matching)
        # the variants are not written to the result cache: it keeps one entry per gold query
        dependence = assess_dataset(ds, Executor(ex.engine, policy=ex.policy, cache=None))
    for r in rows:
        a = dependence.get(r.id)
        if a is not None and a.dependent:
            r.engine_dependent = a.reason
    return AuditReport(ds.name, ex.signature, rows)
