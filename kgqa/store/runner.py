"""The store's client of the public pipeline: an experiment is one :class:`kgqa.api.Evaluator` call.

Every scoring and comparison call of :mod:`kgqa.store`, :mod:`kgqa.web` and ``kgqa
experiments`` goes through :mod:`kgqa.api`, here: :func:`evaluate_inputs` (an experiment's
recorded inputs -> ``Evaluator(...).evaluate(run)`` or ``.ask(url)``, the same call as ``kgqa
evaluate``), :func:`run_experiment` (a stored experiment, with progress and its result
recorded), :func:`check_upload` (a run upload read against its dataset before an experiment is
made) and :func:`compare` (``kgqa compare``'s analysis). Dataset and profile lookup, language
parsing, protocol names, checksums, execution and its progress all come from :mod:`kgqa.api`;
this module adds what a server needs: registry names win over its own files, built-in profiles
only, uploads materialised in a private folder, messages that never name that folder.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections import Counter

from sqlalchemy.exc import DBAPIError, OperationalError

from kgqa import api
from kgqa.api import PROTOCOLS, profile_names  # noqa: F401  (the names the web app asks for)
from kgqa.api import dataset_names as registry_names  # noqa: F401
from kgqa.model import Dataset, InputError, Run
from kgqa.store.journal import StoreJournal
from kgqa.store.store import LostClaim, StoreError
from kgqa.model.urlguard import UrlRule, current_rule, using
from kgqa.store.store import shown_url, withheld_note

Progress = Callable[[int, int, str], None]


@dataclass
class ExperimentInputs:
    """What an experiment evaluates. ``dataset`` is a registry name or a local file;
    ``run`` a local run file (or None with ``system_url``); ``kg`` a ``--kg`` value (RDF
    file(s), store directory or endpoint URL) or None (score the run's answers);
    ``sandbox_gold``: run the dataset's gold queries through the sandbox
    (:attr:`kgqa.api.ExecutionPolicy.trust_gold` False: a dataset from an unknown source)."""

    dataset: str
    run: str | None
    run_name: str
    profile: str = "kgqa"
    measures: str | None = None
    lang: str = "all"
    kg: str | None = None
    graph: str | None = None
    gold_answers: str = "stored"
    timeout: float = 30.0
    dataset_format: str | None = None
    run_format: str | None = None
    system_url: str | None = None
    system_protocol: str | None = None
    reexecute: bool = False
    sandbox_gold: bool = False
    #: where a live system's answers are journalled as they arrive (a rerun after a kill asks
    #: only the questions not in it): a journal file's path, or a stored experiment's journal in
    #: the store (:class:`kgqa.store.journal.StoreJournal`); None: not journalled
    journal: Any = None

    @property
    def policy(self) -> Any:
        """The :class:`kgqa.api.ExecutionPolicy` the experiment executes under."""
        return api.ExecutionPolicy(timeout=self.timeout, trust_gold=not self.sandbox_gold)


@dataclass
class Result:
    evaluation: api.Evaluation
    headline: str | None
    kg_fingerprint: str | None
    dataset_checksum: str | None


# --------------------------------------------------------------------------- helpers


#: Most characters of an unexpected error's text kept as an experiment's failure message
MAX_FAILURE_TEXT = 500


def safe_filename(name: str | None, default: str = "upload.json") -> str:
    """An uploaded file's name reduced to a plain base name (``[A-Za-z0-9._-]``, no leading
    dot, at most 100 characters): only its extension matters (format detection)."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).lstrip("._")[:100]
    return base or default


def check_profile(name: str, measures: str | None) -> None:
    """A built-in profile (never a file path from a request) and valid measures, said before
    any work (:func:`kgqa.api.get_profile`, as the evaluation reads them)."""
    if name not in api.profile_names():
        raise InputError("profile", f"unknown profile {name!r}; one of: {', '.join(api.profile_names())}")
    api.get_profile(name, measures or None)


def load_dataset(spec: str, fmt: str | None = None, lang: str = "all") -> Dataset:
    """A registry dataset by name (never shadowed by a file of that name in the server's
    working directory), else a local file (an upload), as scoring units of ``lang``
    (:func:`kgqa.api.select_language`)."""
    return api.select_language(api.load_dataset(spec, format=fmt, prefer_registry=True), lang)


def check_run(ds: Dataset, run: Run) -> None:
    """Set-up mistakes said out loud: a run none of whose ids are in the dataset (wrong
    dataset or a broken file) is refused, naming both."""
    if not run.predictions:
        first = f" (first problem: {run.problems[0]})" if run.problems else ""
        raise InputError(run.source[0] if run.source else run.name, f"the run has no usable record{first}")
    known = set(ds.ids)
    if not any(p.id in known for p in run.predictions):
        ids = ", ".join(p.id for p in run.predictions[:3])
        ex = ", ".join(ds.ids[:3])
        raise InputError(run.source[0] if run.source else run.name,
                         f"none of the run's {len(run.predictions)} question ids ({ids}, ...) is in dataset "
                         f"{ds.name} (ids look like {ex}, ...): wrong dataset?")


def _load_run(path: str, ds: Dataset, name: str, fmt: str | None) -> Run:
    run = api.load_run(path, format=fmt, dataset=ds, name=name)
    check_run(ds, run)
    return run


def headline(evaluation: api.Evaluation) -> str | None:
    """The measure a leaderboard ranks by (the first aggregate when none is comparable)."""
    try:
        return api.headline_measure([evaluation])
    except ValueError:
        return next(iter(evaluation.aggregate), None)


# --------------------------------------------------------------------------- evaluation


def evaluate_inputs(inp: ExperimentInputs, progress: Progress | None = None) -> Result:
    """Load, (execute,) score one run, or ask a live system and score its answers: one
    :class:`kgqa.api.Evaluator`, the call ``kgqa evaluate`` makes, its executor reporting
    progress (``progress(done, total, note)``, in percent) for the page."""
    step = progress or (lambda d, t, n: None)
    total = 100  # percent: loading 0-20, KG 20-30, executing 30-90, scoring 90-100
    if inp.gold_answers not in ("stored", "executed"):
        raise InputError("gold answers", f"expected stored or executed, got {inp.gold_answers!r}")
    check_profile(inp.profile, inp.measures)
    if inp.run is None and not inp.system_url:
        raise InputError("run", "an experiment needs a run file or a system URL")
    shown, last = [30], [0.0]  # later batches (the engine check's variants) never move the percentage back

    def executing(done: int, n: int) -> None:
        now = time.monotonic()
        if done < n and now - last[0] < 0.5:  # at most every half second (and each batch's end)
            return
        last[0] = now
        shown[0] = max(shown[0], 30 + (60 * done) // max(1, n))
        step(shown[0], total, f"executing queries: {done} of {n}")

    step(0, total, "loading the dataset")
    dataset = api.load_dataset(inp.dataset, format=inp.dataset_format, prefer_registry=True)
    checksum = api.dataset_checksum(inp.dataset)
    with api.Evaluator(dataset, inp.profile, measures=inp.measures or None, kg=inp.kg, graph=inp.graph,
                       lang=inp.lang, gold_answers=inp.gold_answers, reexecute=inp.reexecute, policy=inp.policy,
                       on_progress=executing) as ev:
        run = None
        if inp.run is not None:
            step(10, total, "reading the run")
            run = _load_run(inp.run, ev.dataset, inp.run_name, inp.run_format)
        fingerprint = None
        if inp.kg is not None:
            step(20, total, "loading the knowledge graph")
            fingerprint = ev.executor.info.fingerprint  # type: ignore[union-attr]
        if run is not None:
            step(30, total, "executing queries" if ev.executes else "scoring")
            evaluation = ev.evaluate(run, name=run.name)
        else:
            step(20, total, f"asking {shown_url(inp.system_url)}")
            evaluation = ev.ask(inp.system_url, inp.system_protocol or "gerbil",  # type: ignore[arg-type]
                                journal=inp.journal)
        step(90, total, "scoring")
    step(total, total, "done")
    return Result(evaluation, headline(evaluation), fingerprint, checksum)


def check_upload(dataset: str, run_path: str, run_name: str, *, lang: str = "all", dataset_format: str | None = None,
                 run_format: str | None = None) -> tuple[int, list[str]]:
    """Read an uploaded run against its dataset before an experiment is made: raises
    :class:`InputError` (naming file and record) when it cannot be used; returns the number of
    predictions and the problems of records that were skipped."""
    run = _load_run(run_path, load_dataset(dataset, dataset_format, lang), run_name, run_format)
    return len(run.predictions), [str(p) for p in run.problems]


def stored_inputs(store: Any, e: Any, d: Path, *, kgs: dict[str, str], timeout: float, system_url: str | None,
                  kg_url: str | None) -> ExperimentInputs:
    """What stored experiment ``e`` evaluates, its uploaded files written to folder ``d``."""
    url = _given(e.system_url, system_url, e.credentials_withheld, "system URL")
    endpoint = _given(e.kg, kg_url, e.kg_credentials_withheld, "kg")

    def materialise(sha: str | None, name: str | None, sub: str) -> str | None:
        if sha is None:
            return None
        p = d / sub / safe_filename(name)
        p.parent.mkdir()
        p.write_bytes(store.get_file(sha))
        return str(p)

    dataset = materialise(e.dataset_file, e.dataset_filename, "dataset") or e.dataset
    run = materialise(e.run_file, e.run_filename, "run")
    kg = materialise(e.kg_file, e.kg_filename, "kg")
    if kg is None and endpoint:
        if endpoint.startswith(("http://", "https://")):
            kg = endpoint
        elif e.kg in kgs:
            kg = kgs[e.kg]
        else:
            raise InputError("kg", f"this server offers no knowledge graph named {e.kg!r} "
                                   f"(offered: {', '.join(kgs) or 'none'})")
    opts = e.options
    return ExperimentInputs(dataset=dataset, run=run, run_name=e.run_name, profile=e.profile, measures=e.measures,
                            lang=e.lang, kg=kg, graph=opts.get("graph"), gold_answers=e.gold_answers,
                            timeout=float(opts.get("timeout", timeout)), dataset_format=opts.get("dataset_format"),
                            run_format=opts.get("run_format"), system_url=url,
                            system_protocol=e.system_protocol, reexecute=bool(opts.get("reexecute", False)),
                            # the one trust rule (docs/reference/trust.md): an uploaded dataset's gold queries
                            # come from an unknown source and go through the sandbox; a registry dataset's
                            # are trusted
                            sandbox_gold=bool(opts.get("sandbox_gold", e.dataset_file is not None)))


def run_experiment(store: Any, eid: str, *, kgs: dict[str, str] | None = None, timeout: float = 30.0,
                   system_url: str | None = None, kg_url: str | None = None, owner: str | None = None,
                   url_rule: UrlRule | None = None, takeover: bool = False) -> bool:
    """Evaluate the stored experiment ``eid`` and record the result (or the failure, with a
    message naming file and record). ``kgs`` maps the KG names the server offers to ``--kg``
    values; ``system_url``: the live system's URL as given, credentials included (the store
    keeps it with them as ``***``; without it such an experiment fails, saying so); ``kg_url``
    the same for a SPARQL endpoint named as the KG. Input files
    are materialised from the store into a private temporary folder. ``url_rule``: what every
    request of the evaluation may reach, each redirect hop included (the web server's: public
    hosts and the listed ones; kgqa.model.urlguard). Returns True when the
    experiment finished. No message, progress note or log line carries the credentials.

    ``owner``: the worker holding the experiment's lease (:meth:`Store.claim`): it records
    only while it holds it; ``takeover``: it took the lease over from a lost worker, which may
    still journal answers it held (a database outage longer than the lease): the journal is
    read again while the live system is asked, and those questions are not asked again (:class:`~kgqa.store.store.LostClaim` ends the run, recording
    nothing). A store that cannot be reached is never the experiment's failure: progress
    notes are skipped while it is away, the result is recorded once it is back
    (:func:`wait_for_store`), and an error of the store itself propagates, the experiment left
    open for the next worker."""
    try:
        e = store.get(eid)
    except MemoryError:  # the worker's cap reached before the evaluation began: said all the same
        _record_failure(store, eid, OUT_OF_MEMORY, owner)
        return False
    if e is None or e.done:
        return False
    kgs = kgs or {}
    tmp = tempfile.mkdtemp(prefix="kgqa-exp-")
    secrets = _url_secrets(system_url) + _url_secrets(kg_url)
    try:
        inp = stored_inputs(store, e, Path(tmp), kgs=kgs, timeout=timeout, system_url=system_url, kg_url=kg_url)
        if inp.system_url:  # answers journalled in the store: whichever worker resumes it asks only the rest
            inp.journal = StoreJournal(store, eid, owner, watch=takeover)
        held = {"owner": owner} if owner else {}  # (a store without leases: the CLI's, a test's double)
        wait_for_store(lambda: store.start(eid, 0, "starting", **held))

        def progress(done: int, total: int, note: str) -> None:
            try:
                store.progress(eid, done, total, note, **held)
            except (DBAPIError, StoreError):
                pass  # the store is away: the note is skipped, the evaluation goes on

        with using(url_rule or current_rule()):
            res = evaluate_inputs(inp, progress)
        if isinstance(inp.journal, StoreJournal):  # answers kept in memory while the store was away
            wait_for_store(inp.journal.settle)
        wait_for_store(lambda: store.finish(eid, res.evaluation, headline=res.headline, **held,
                                            kg_fingerprint=res.kg_fingerprint, dataset_checksum=res.dataset_checksum))
        return True
    except (LostClaim, DBAPIError, StoreError):  # (its journal is kept: the next worker resumes from it)
        raise  # not the experiment's failure: another worker has it, or the store is gone for good
    except InputError as err:
        _record_failure(store, eid, _redact(strip_tmp(str(err), tmp), secrets), owner)
    except MemoryError:
        _record_failure(store, eid, OUT_OF_MEMORY, owner)
    except Exception as err:  # an experiment never takes the server down; the page says what broke
        if _out_of_memory(err):
            _record_failure(store, eid, OUT_OF_MEMORY, owner)
            return False
        print(_redact(traceback.format_exc(), secrets), file=sys.stderr, end="")
        # redacted before it is cut (a secret is never left half there)
        text = " ".join(_redact(strip_tmp(str(err), tmp), secrets).split())
        if len(text) > MAX_FAILURE_TEXT:  # e.g. a library's error that quotes megabytes of its input
            text = text[:MAX_FAILURE_TEXT] + f"... ({len(text):,} characters)"
        _record_failure(store, eid, f"internal error: {type(err).__name__}: {text}", owner)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return False


#: how long a worker waits for a store that went away before giving the experiment back
STORE_WAIT_S = 600.0


def wait_for_store(write: Callable[[], Any], wait_s: float | None = None) -> Any:
    """``write()``, retried while the store cannot be reached (a database restarting, a disk
    full), with backoff up to ``wait_s`` seconds (:data:`STORE_WAIT_S`); then the store's
    error propagates."""
    deadline = time.monotonic() + (STORE_WAIT_S if wait_s is None else wait_s)
    pause = 0.2
    while True:
        try:
            return write()
        except (OperationalError, StoreError) as err:
            if not getattr(err, "operational", True) or time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)  # noqa: a backoff, not a synchronisation
            pause = min(pause * 2, 10.0)


OUT_OF_MEMORY = ("out of memory: the evaluation needed more memory than this server gives a worker "
                 "(kgqa web --worker-memory-mb)")


def _out_of_memory(err: BaseException) -> bool:
    """``err`` (or its cause) is the address-space cap reached outside Python's allocator: a
    shared library that cannot be mapped, ENOMEM."""
    while err is not None:
        if isinstance(err, MemoryError) or "failed to map segment" in str(err) or "Cannot allocate memory" in str(err):
            return True
        err = err.__cause__
    return False


def _record_failure(store: Any, eid: str, message: str, owner: str | None) -> None:
    held = {"owner": owner} if owner else {}
    wait_for_store(lambda: store.fail(eid, message, **held))


def _given(stored: str | None, given: str | None, withheld: bool, what: str) -> str | None:
    """The URL to use: the stored one, or (its credentials withheld) the one given with them."""
    if not withheld:
        return stored

    if given is None or shown_url(given) != stored:
        raise InputError(what, withheld_note(stored))
    return given


def _url_secrets(url: str | None) -> list[str]:
    if not url:
        return []
    try:
        return api.secrets_of(url, {})
    except Exception:  # noqa: BLE001 - an invalid URL fails the run, saying so
        return []


def _redact(message: str, secrets: list[str]) -> str:
    """``message`` with every credential of the system URL as ``***``."""
    for x in secrets:
        message = message.replace(x, "***")
    return message


def strip_tmp(message: str, tmp: str) -> str:
    """Messages name the uploaded file, never the server's private temporary folder."""
    return re.sub(re.escape(str(tmp).rstrip("/")) + r"/(dataset|run|kg)/", "", message)


# --------------------------------------------------------------------------- gold audit


def audit_dataset(dataset: str, kg: str, *, timeout: float = 30.0) -> dict[str, Any]:
    """``kgqa audit`` (:func:`kgqa.api.audit`) of a registry dataset: execute every gold query
    of ``dataset`` on ``kg`` and compare with the stored answers. Returns verdict counts, the KG
    fingerprint, the number of engine-dependent gold queries and the rows that are not ``ok``
    (id, verdict, message, a few missing / extra values)."""

    report = api.audit(api.load_dataset(dataset, prefer_registry=True), kg,
                       policy=api.ExecutionPolicy(timeout=timeout))
    rows = report.rows
    return {
        "n": len(rows), "fingerprint": report.engine.split("kg=")[-1] if "kg=" in report.engine else report.engine,
        "engine": report.engine,
        "verdicts": dict(Counter(r.verdict for r in rows).most_common()),
        "engine_dependent": sum(1 for r in rows if r.engine_dependent),
        "problems": [{"id": r.id, "verdict": r.verdict, "message": r.message, "missing": r.missing[:5],
                      "extra": r.extra[:5], "n_missing": len(r.missing), "n_extra": len(r.extra),
                      "engine_dependent": r.engine_dependent}
                     for r in rows if r.verdict != "ok" or r.engine_dependent][:100],
    }


# --------------------------------------------------------------------------- comparison


def compare(evals: Sequence[Any], *, baseline: str | None = None, measures: Sequence[str] | None = None,
            seed: int = 0, resamples: int = 10_000):
    """``kgqa compare``'s analysis of evaluations of one dataset (:func:`kgqa.api.compare`):
    the :class:`kgqa.analyze.comparison.MultiComparison`; ValueError when they cannot be
    compared."""
    try:
        return api.compare(list(evals), baseline=baseline, measures=measures, seed=seed, resamples=resamples).result
    except InputError as e:
        raise ValueError(e.problem.message) from None
