"""The one adapter between the experiment store / web platform and the pipeline.

Every scoring and comparison call of :mod:`kgqa.store`, :mod:`kgqa.web` and ``kgqa
experiments`` goes through this module: :func:`evaluate_inputs` (load -> execute -> score, the
same steps as ``kgqa evaluate``), :func:`run_experiment` (a stored experiment, with progress and
its result recorded), :func:`check_upload` (a run upload read against its dataset before an
experiment is made) and :func:`compare` (``kgqa compare``'s analysis).

Live systems (a system URL + protocol instead of a run file) are asked through
:meth:`kgqa.api.Evaluator.ask` (the GERBIL QA / Text2SPARQL client), then scored like a run.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgqa.model import Dataset, InputError, Run

#: Protocols a live system can speak (the store column ``system_protocol``).
PROTOCOLS = ("gerbil", "text2sparql")

Progress = Callable[[int, int, str], None]


@dataclass
class Inputs:
    """What an experiment evaluates. ``dataset`` is a registry name or a local file;
    ``run`` a local run file (or None with ``system_url``); ``kg`` a ``--kg`` value (RDF
    file(s), store directory or endpoint URL) or None (score the run's answers)."""

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
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Result:
    evaluation: Any  # kgqa.score.evaluate.Evaluation
    headline: str | None
    kg_fingerprint: str | None
    dataset_checksum: str | None


# --------------------------------------------------------------------------- helpers


def safe_filename(name: str | None, default: str = "upload.json") -> str:
    """An uploaded file's name reduced to a plain base name (``[A-Za-z0-9._-]``, no leading
    dot, at most 100 characters): only its extension matters (format detection)."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).lstrip("._")[:100]
    return base or default


def registry_names() -> list[str]:
    from kgqa.load import registry

    return [e.name for e in registry.entries()]


def profile_names() -> list[str]:
    from kgqa.score import profiles

    return profiles.names()


def dataset_checksum(spec: str) -> str | None:
    """``sha256:<hex>`` over the dataset's file(s) (registry entries: their resolved files)."""
    from kgqa.load import registry

    p = Path(spec)
    entry = registry.find(spec) if not p.is_absolute() else None
    if entry is None:
        if not p.is_file():
            return None
        paths = [p]
    else:
        try:
            paths = registry.resolve(entry, download=False)
        except Exception:
            return None
    h = hashlib.sha256()
    for path in paths:
        h.update(registry.sha256_of(path).encode() + b"\n")
    return "sha256:" + h.hexdigest()


def _profile(name: str, measures: str | None):
    from kgqa.score import measures as measure_registry
    from kgqa.score import profiles

    if name not in profiles.names():  # never a file path from a request
        raise InputError("profile", f"unknown profile {name!r}; one of: {', '.join(profiles.names())}")
    prof = profiles.get(name)
    if measures:
        try:
            prof = prof.with_measures(measure_registry.parse_list(measures))
        except ValueError as e:
            raise InputError("measures", str(e)) from None
    return prof


def load_dataset(spec: str, fmt: str | None = None, lang: str = "all") -> Dataset:
    """A registry dataset by name (never shadowed by a file of that name in the server's
    working directory), else a local file (an upload), restricted to ``lang``."""
    from kgqa.load import load_dataset as _load
    from kgqa.load import registry

    langs = None if lang == "all" else [x.strip() for x in lang.split(",") if x.strip()]
    entry = registry.find(spec) if not Path(spec).is_absolute() else None
    ds = registry.load(entry) if entry is not None and fmt is None else _load(spec, format=fmt)
    return ds.by_language(langs)


def load_run(path: str, ds: Dataset, name: str, fmt: str | None = None) -> Run:
    from kgqa.load import load_run as _load

    run = _load(path, format=fmt, dataset=ds)
    run.name = name
    return run


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


# --------------------------------------------------------------------------- evaluation


def _reporting_engine(engine: Any, cache: Any, report: Callable[[int, int], None]):
    """The execute stage's cached engine, reporting ``(done, total)`` queries of each batch
    (at most every half second) so a page can show live progress."""
    import time

    from kgqa.execute.cache import CachedEngine

    class Reporting(CachedEngine):
        def execute_many(self, queries, timeout=30.0, max_rows=None, progress=None):  # type: ignore[override]
            total, done, last = len(queries), 0, 0.0

            def cb(n: int) -> None:
                nonlocal done, last
                done += n
                now = time.monotonic()
                if done >= total or now - last >= 0.5:
                    last = now
                    report(done, total)
                if progress is not None:
                    progress(n)

            kw = {} if max_rows is None else {"max_rows": max_rows}
            return super().execute_many(queries, timeout=timeout, progress=cb, **kw)

    return Reporting(engine, cache)



def evaluate_inputs(inp: Inputs, progress: Progress | None = None) -> Result:
    """Load, (execute,) score one run, or ask a live system and score its answers: one call of
    the public pipeline (:class:`kgqa.api.Evaluator`), the steps of ``kgqa evaluate``, with the
    execution reporting progress for the page."""
    from kgqa.analyze.characteristics import headline_measure
    from kgqa.api import Evaluator
    from kgqa.execute.policy import ExecutionPolicy

    step = progress or (lambda d, t, n: None)
    total = 100  # percent: loading 0-20, KG 20-30, executing 30-90, scoring 90-100
    if inp.gold_answers not in ("stored", "executed"):
        raise InputError("gold answers", f"expected stored or executed, got {inp.gold_answers!r}")
    _profile(inp.profile, inp.measures)  # a built-in profile and valid measures, before any work
    step(0, total, "loading the dataset")
    ds = load_dataset(inp.dataset, inp.dataset_format, inp.lang)
    checksum = dataset_checksum(inp.dataset)
    step(10, total, "reading the run")
    run = None
    if inp.run is not None:
        run = load_run(inp.run, ds, inp.run_name, inp.run_format)
        check_run(ds, run)
    elif not inp.system_url:
        raise InputError("run", "an experiment needs a run file or a system URL")
    engine = cache = None
    fingerprint = None
    kg: Any = None
    if inp.kg is not None:
        from kgqa.execute import open_engine
        from kgqa.execute.cache import ResultCache

        step(20, total, "loading the knowledge graph")
        engine = open_engine(inp.kg, inp.graph, progress=False)
        cache = ResultCache()
        fingerprint = engine.info.fingerprint
        step(30, total, "executing queries")
        shown = [30]  # the engine check executes variants in later batches: the percentage never goes back

        def executing(done: int, n: int) -> None:
            shown[0] = max(shown[0], 30 + (60 * done) // max(1, n))
            step(shown[0], total, f"executing queries: {done} of {n}")

        kg = _reporting_engine(engine, cache, executing)
    try:
        # ds holds the scoring units of inp.lang already (selecting again changes nothing); the
        # language goes to the signature
        with Evaluator(ds, inp.profile, measures=inp.measures or None, kg=kg, lang=inp.lang, gold_answers=inp.gold_answers, reexecute=inp.reexecute,
                       policy=ExecutionPolicy(timeout=inp.timeout)) as ev:
            if run is not None:
                ev_ = ev.evaluate(run, name=run.name)
            else:
                step(20, total, f"asking {inp.system_url}")
                ev_ = ev.ask(inp.system_url, inp.system_protocol or "gerbil")
            step(90, total, "scoring")
    finally:
        if engine is not None:
            engine.close()
        if cache is not None:
            cache.close()
    try:
        headline = headline_measure([ev_])
    except ValueError:
        headline = next(iter(ev_.aggregate), None)
    step(total, total, "done")
    return Result(ev_, headline, fingerprint, checksum)


def check_upload(dataset: str, run_path: str, run_name: str, *, lang: str = "all", dataset_format: str | None = None,
                 run_format: str | None = None) -> tuple[int, list[str]]:
    """Read an uploaded run against its dataset before an experiment is made: raises
    :class:`InputError` (naming file and record) when it cannot be used; returns the number of
    predictions and the problems of records that were skipped."""
    ds = load_dataset(dataset, dataset_format, lang)
    run = load_run(run_path, ds, run_name, run_format)
    check_run(ds, run)
    return len(run.predictions), [str(p) for p in run.problems]


def run_experiment(store: Any, eid: str, *, kgs: dict[str, str] | None = None, timeout: float = 30.0) -> bool:
    """Evaluate the stored experiment ``eid`` and record the result (or the failure, with a
    message naming file and record). ``kgs`` maps the KG names the server offers to ``--kg``
    values. Input files are materialised from the store into a private temporary folder.
    Returns True when the experiment finished."""
    e = store.get(eid)
    if e is None or e.done:
        return False
    kgs = kgs or {}
    tmp = tempfile.mkdtemp(prefix="kgqa-exp-")
    try:
        d = Path(tmp)

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
        if kg is None and e.kg:
            if e.kg.startswith(("http://", "https://")):
                kg = e.kg
            elif e.kg in kgs:
                kg = kgs[e.kg]
            else:
                raise InputError("kg", f"this server offers no knowledge graph named {e.kg!r} "
                                       f"(offered: {', '.join(kgs) or 'none'})")
        opts = e.options
        inp = Inputs(dataset=dataset, run=run, run_name=e.run_name, profile=e.profile, measures=e.measures,
                     lang=e.lang, kg=kg, graph=opts.get("graph"), gold_answers=e.gold_answers,
                     timeout=float(opts.get("timeout", timeout)), dataset_format=opts.get("dataset_format"),
                     run_format=opts.get("run_format"), system_url=e.system_url,
                     system_protocol=e.system_protocol, reexecute=bool(opts.get("reexecute", False)))
        store.start(eid, 0, "starting")
        res = evaluate_inputs(inp, lambda done, total, note: store.progress(eid, done, total, note))
        store.finish(eid, res.evaluation, headline=res.headline, kg_fingerprint=res.kg_fingerprint,
                     dataset_checksum=res.dataset_checksum)
        return True
    except InputError as err:
        store.fail(eid, strip_tmp(str(err), tmp))
    except Exception as err:  # an experiment never takes the server down; the page says what broke
        traceback.print_exc(file=sys.stderr)
        store.fail(eid, strip_tmp(f"internal error: {type(err).__name__}: {err}", tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return False


def strip_tmp(message: str, tmp: str) -> str:
    """Messages name the uploaded file, never the server's private temporary folder."""
    return re.sub(re.escape(str(tmp).rstrip("/")) + r"/(dataset|run|kg)/", "", message)


# --------------------------------------------------------------------------- gold audit


def audit_dataset(dataset: str, kg: str, *, timeout: float = 30.0) -> dict[str, Any]:
    """``kgqa audit`` (:func:`kgqa.execute.audit.audit_kg`): execute every gold query of
    ``dataset`` on ``kg`` and compare with the stored answers. Returns verdict counts, the KG
    fingerprint, the number of engine-dependent gold queries and the rows that are not ``ok``
    (id, verdict, message, a few missing / extra values)."""
    from collections import Counter

    from kgqa.execute.audit import audit_kg
    from kgqa.execute.policy import ExecutionPolicy

    ds = load_dataset(dataset)
    report = audit_kg(ds, kg, policy=ExecutionPolicy(timeout=timeout))
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
    """``kgqa compare``'s analysis of evaluations of one dataset
    (:func:`kgqa.analyze.comparison.compare_evaluations`)."""
    from kgqa.analyze.comparison import compare_evaluations

    return compare_evaluations(list(evals), baseline=baseline, measures=measures, seed=seed, resamples=resamples,
                               trials=resamples)


def mean_ci(evaluation: Any, label: str, *, seed: int = 0, resamples: int = 10_000):
    """Bootstrap CI of the mean of a measure's per-question values (None: no per-question values)."""
    from kgqa.analyze.characteristics import per_question_scores
    from kgqa.analyze.stats import bootstrap_ci

    vals = list(per_question_scores(evaluation, label).values())
    if not vals:
        return None
    return bootstrap_ci(vals, resamples=resamples, seed=seed)
