"""kgqa's public pipeline: load -> (execute) -> score -> compare, one call each.

Everything ``kgqa evaluate`` / ``kgqa compare`` / ``kgqa demo`` do is a call into this module
(the CLI only parses arguments and renders), so the library and the command line give the same
numbers under the same signature. ``import kgqa`` re-exports the names below lazily::

    >>> import kgqa                                                    # doctest: +SKIP
    >>> e = kgqa.evaluate("ck25", "ck25_system_result_set.json", profile="text2sparql")
    >>> e.aggregate["set_F"]
    0.3203...
    >>> evals = kgqa.evaluate_many("qald-9-test", ["a.json", "b.json"], kg="dbpedia.nt")
    >>> kgqa.compare(evals).to_dataframe()

Datasets, runs and profiles are accepted as names, paths or already-loaded objects.
Per-language datasets (Text2SPARQL) are expanded to their scoring units here: there is no
``by_language()`` to forget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
import hashlib
import html
import importlib
import json
import os

from kgqa import lazy
from kgqa.load import load_dataset as _load_dataset, load_run as _load_run, formats
from kgqa.model import Dataset, InputError, Run, TableAnswer
from kgqa.model.gcpause import paused
from kgqa.model.signature import Signature
from kgqa.model.run import run_input
from kgqa.score import measures as _measures
from kgqa.score import profiles as _profiles
from kgqa.score.evaluate import Evaluation
from kgqa.score.evaluate import evaluate as _score
from kgqa.score.measures import Inputs, Measure
from kgqa.score.profiles import Profile
from kgqa.load.runspec import run_names as _names, split_run_spec
from kgqa.model.suggest import did_you_mean
from kgqa.model.terms import IRI as _IRI, TextLabels
from kgqa.score.setup_check import (
    MAX_KG_FAILURES,
    SetupWarning,
    check_setup,
    foreign_kg,
    kg_failures,
    raise_errors,
    transport_warnings,
)
from kgqa.load.stream import open_stream
from kgqa.load import registry
from kgqa.load.registry import resolve_kg
from kgqa.load.summary import summarize
from kgqa.execute.engine import Engine
from kgqa.execute.types import iris_of
from kgqa.load.validate import validate

if TYPE_CHECKING:
    from kgqa.execute.executor import Executor
    from kgqa.execute.policy import ExecutionPolicy

#: The stages beyond answers-only scoring, imported on their first use (kgqa.lazy.module): scoring
#: a run's stored answers imports 40 kgqa modules and no executor, SPARQL parser, NumPy, httpx or
#: rich; each function below reaches its stage through one of these
_analyze_comparison = lazy.module("kgqa.analyze.comparison")
_analyze_engine_dependence = lazy.module("kgqa.analyze.engine_dependence")
_execute_audit = lazy.module("kgqa.execute.audit")
_execute_cache = lazy.module("kgqa.execute.cache")
_execute_executor = lazy.module("kgqa.execute.executor")
_execute_kgfile = lazy.module("kgqa.execute.kgfile")
_execute_live = lazy.module("kgqa.execute.live")
_execute_policy = lazy.module("kgqa.execute.policy")
_live_client = lazy.module("kgqa.execute.live.client")
_load_links = lazy.module("kgqa.load.links")
_metaeval_axioms = lazy.module("kgqa.metaeval.axioms")
_metaeval_degrade = lazy.module("kgqa.metaeval.degrade")
_metaeval_sensitivity = lazy.module("kgqa.metaeval.sensitivity")
_report_analysis = lazy.module("kgqa.report.analysis")
_report_dataframe = lazy.module("kgqa.report.dataframe")
_report_evaluation = lazy.module("kgqa.report.evaluation")
_report_html = lazy.module("kgqa.report.html")
_report_latex = lazy.module("kgqa.report.latex")
_report_metaeval = lazy.module("kgqa.report.metaeval")
_report_model = lazy.module("kgqa.report.model")
_report_render = lazy.module("kgqa.report.render")
_sparql_prefixes = lazy.module("kgqa.sparql.prefixes")

#: imported on first use (answers-only scoring executes nothing and needs none of them)
_LAZY = {"ExecutionPolicy": "kgqa.execute.policy", "Executor": "kgqa.execute.executor",
         "PROTOCOLS": "kgqa.execute.live.protocols"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kgqa.api' has no attribute {name!r}")

__all__ = [
    "load_dataset", "load_run", "evaluate", "evaluate_many", "compare", "Evaluator", "Evaluation", "Comparison",
    "ExecutionPolicy", "Signature", "get_profile", "select_language", "run_names", "parse_langs", "load_evaluations",
    "save_evaluations", "audit", "dataset_names", "profile_names", "dataset_checksum", "PROTOCOLS",
    # documented operations the command line calls one each (docs/reference/python-api.md)
    "render_evaluations", "render_comparison", "render_report", "find_question", "dataset_summary", "validate_files",
    "export_dataset", "degrade", "sensitivity", "check_axioms", "render_validation",
    # the KG, cache and live-system operations (kgqa kg / cache / system ask) and their settings
    "load_kg", "kg_info", "cache_stats", "clear_cache", "ask_system", "AskSettings", "AskInterrupted",
    "parse_measures", "write_run", "parse_bytes", "display_url",
]

GoldAnswers = Literal["stored", "executed"]
PathLike = str | Path


# --------------------------------------------------------------------------- loading


def load_dataset(dataset: PathLike | Sequence[PathLike] | Dataset, *, format: str | None = None,
                 prefer_registry: bool = False, **options: Any) -> Dataset:
    """A dataset from a registry name (``kgqa datasets list``), file path(s), or a loaded
    :class:`~kgqa.model.Dataset` (returned as it is). ``options`` go to the loader (e.g.
    ``question_field="paraphrased_question"`` for LC-QuAD 2.0). A file wins over a registry
    name of the same spelling, unless ``prefer_registry`` (a server's rule: a request names
    registry datasets, never a file in the server's working directory)."""
    if isinstance(dataset, Dataset):
        return dataset
    if prefer_registry and format is None and isinstance(dataset, (str, Path)) and not Path(dataset).is_absolute():
        entry = registry.find(str(dataset))
        if entry is not None:
            return registry.load(entry, **options)
    return _load_dataset(dataset, format=format, **options)


def dataset_names() -> list[str]:
    """The registry's dataset names (``kgqa datasets list``)."""
    return [e.name for e in registry.entries()]


def profile_names() -> list[str]:
    """The built-in profiles' names (``kgqa profiles``)."""
    return _profiles.names()


def dataset_checksum(spec: PathLike) -> str | None:
    """``sha256:<hex>`` over a dataset's file(s): a registry name's resolved files (None when
    they are not here), else the file ``spec`` (None when there is none)."""

    p = Path(spec)
    entry = registry.find(str(spec)) if not p.is_absolute() else None
    if entry is None:
        if not p.is_file():
            return None
        paths = [p]
    else:
        try:
            paths = registry.resolve(entry, download=False)
        except Exception:  # not downloaded (or unreadable): no checksum, the experiment still runs
            return None
    h = hashlib.sha256()
    for path in paths:
        h.update(registry.sha256_of(path).encode() + b"\n")
    return "sha256:" + h.hexdigest()


def load_run(run: PathLike | Sequence[PathLike] | Run, *, format: str | None = None, dataset: Dataset | None = None,
             name: str | None = None, **options: Any) -> Run:
    """A run from file path(s) or a loaded :class:`~kgqa.model.Run` (returned as it is, renamed
    when ``name`` is given). ``dataset`` lets formats that need it (id mapping) see it."""
    if not isinstance(run, Run):
        run = _load_run(run, format=format, dataset=dataset, **options)
    if name is not None:
        run.name = name
    return run


def run_names(specs: Sequence[PathLike]) -> list[str]:
    """Display names of run arguments: ``NAME`` of ``NAME=PATH``, else the file stem, or
    ``folder/stem`` where stems collide (the Text2SPARQL teams' files are all called
    ``ck25_system_result_set.json``); see :func:`kgqa.load.runspec.run_names`."""

    return [n for n, _ in _names([str(s) for s in specs])]


def _run_path(spec: Any) -> Any:
    """The path of a ``NAME=PATH`` run argument (anything else as it is)."""
    if isinstance(spec, (str, Path)):
        return split_run_spec(str(spec))[1]
    return spec


def parse_langs(lang: str | Sequence[str] | None) -> list[str] | None:
    """``"en,es"`` or a list -> the language codes; None, ``"all"`` (any case) or nothing -> None (all)."""
    if lang is None:
        return None
    if isinstance(lang, str):
        if lang.strip().lower() == "all":
            return None
        return [x.strip() for x in lang.split(",") if x.strip()] or None
    return list(lang) or None


def _lang_text(lang: str | Sequence[str] | None) -> str:
    langs = parse_langs(lang)
    return "all" if langs is None else ",".join(langs)


def select_language(dataset: Dataset, lang: str | Sequence[str] | None = None) -> Dataset:
    """The scoring units of ``dataset``: per-language items expanded (one unit per language in
    ``lang``, ``"en,es"``, a list, or every language for None / ``"all"``). A language no item
    has is an error, not an empty dataset."""
    langs = parse_langs(lang)
    units = dataset.by_language(langs)
    have = {code for it in dataset.items for code in it.lang_ids}
    # a dataset without per-language units (QALD) still names its questions' languages: a code
    # none of them has (--lang english) is refused rather than written into the signature
    _check_langs(langs, have or {code for it in dataset.items for code in it.questions}, dataset.name)
    return units


#: Language names users type for ``--lang`` -> the codes datasets use (for "did you mean").
LANGUAGE_NAMES = {
    "english": "en", "spanish": "es", "german": "de", "french": "fr", "italian": "it", "russian": "ru",
    "portuguese": "pt", "dutch": "nl", "hindi": "hi", "romanian": "ro", "persian": "fa", "farsi": "fa",
    "lithuanian": "lt", "armenian": "hy", "belarusian": "be", "ukrainian": "uk", "bashkir": "ba",
    "chinese": "zh", "japanese": "ja", "arabic": "ar", "polish": "pl", "czech": "cs", "korean": "ko",
}


def _check_langs(langs: list[str] | None, have: set[str], name: str) -> None:
    """A language selection naming a language no question of the dataset has is an error, with
    "did you mean" (``english`` -> ``en``)."""
    if langs is None or not have:
        return
    unknown = [code for code in langs if code not in have]
    if unknown:
        hint = ""
        for code in unknown:
            named = LANGUAGE_NAMES.get(code.strip().lower())
            hint = hint or (f"; did you mean {named!r}?" if named in have else did_you_mean(code, sorted(have)))
        raise InputError("--lang", f"no question in language(s) {', '.join(unknown)}{hint}; "
                                   f"{name} has {', '.join(sorted(have))}")


def get_profile(profile: str | Path | Profile = "kgqa",
                measures: str | Sequence[str | Measure] | None = None, view: str | None = None) -> Profile:
    """A built-in profile by name, a profile YAML file, or a :class:`Profile`; with ``measures``
    (``"F1(rule=gerbil),AnswerEM"``, labels the profile prints such as ``set_F``, a list of specs or
    bound measures) replacing its list; ``view`` (values, tuples, list) replacing its answer view."""
    if not isinstance(profile, Profile):
        try:
            profile = _profiles.get(str(profile))
        except ValueError as e:
            raise InputError("profile", str(e)) from None
    if view:
        try:
            profile = profile.with_view(view)
        except ValueError as e:
            raise InputError("view", str(e)) from None
    if measures:
        try:
            if isinstance(measures, str):  # a label the profile prints (set_F) selects that measure
                return profile.select(measures)
            if all(isinstance(m, str) for m in measures):
                return profile.select(list(measures))
            bound = [m if isinstance(m, Measure) else _measures.parse(m) for m in measures]
        except ValueError as e:
            raise InputError("measures", str(e)) from None
        profile = profile.with_measures(bound)
    return profile


# --------------------------------------------------------------------------- evaluation


def _dataframe_view(e: Evaluation, *, characteristics: bool = True):
    return _report_dataframe.to_dataframe(e, characteristics=characteristics)


def _markdown_view(e: Evaluation) -> str:
    return _report_evaluation.to_markdown([e])


def _html_view(e: Evaluation) -> str:
    return _report_evaluation.to_html([e])


# Evaluation's notebook views render with the report stage (scoring cannot import it)
Evaluation.views.update(dataframe=_dataframe_view, markdown=_markdown_view, html=_html_view)


def load_evaluations(paths: PathLike | Sequence[PathLike]) -> list[Evaluation]:
    """Evaluations saved by ``kgqa evaluate --save`` (or :func:`save_evaluations`), re-read
    without re-running."""
    return _analyze_comparison.load_evaluations([paths] if isinstance(paths, (str, Path)) else list(paths))


def save_evaluations(evaluations: Evaluation | Sequence[Evaluation], path: PathLike) -> None:
    """Write evaluations as JSON (atomically) for ``kgqa report`` / ``kgqa show`` /
    :func:`load_evaluations`."""
    chosen = [evaluations] if isinstance(evaluations, Evaluation) else list(evaluations)
    _report_render.save_evaluations(chosen, Path(path))


def _is_many(runs: Any) -> bool:
    return isinstance(runs, (list, tuple))


class Evaluator:
    """A dataset, a profile and (optionally) a KG, reused across runs: one engine, one result
    cache, one signature base.

    - ``dataset``: a name, path(s) or :class:`Dataset`; ``lang`` selects languages of
      per-language datasets (default: all);
    - ``profile``: a name, YAML path or :class:`Profile`; ``measures`` replaces its list;
    - ``kg``: RDF file(s), a store directory, an endpoint URL, or an open engine/
      :class:`Executor` to execute queries on (``graph``: its named/default graph);
    - ``gold_answers``: ``stored`` (the dataset's answers; gold queries executed only where an
      item has none) or ``executed`` (every gold query re-run on ``kg``);
    - ``policy`` (or ``timeout`` / ``normalise``): the :class:`ExecutionPolicy`, which also holds
      the one trust rule for the dataset's gold queries (``ExecutionPolicy(trust_gold=False)``
      sandboxes them like predicted queries: a dataset from an unknown source; see
      docs/reference/trust.md);
    - ``progress``: a progress bar on a terminal; ``on_progress(done, total)``: called as each
      batch of queries sent to the engine advances (see :class:`Executor`);
    - ``reexecute``: execute the run's queries even where the run also gives answers;
    - ``stream``: read a JSONL dataset one question at a time and keep none of its items
      (memory then grows only by a few compact arrays per question; per-question records keep
      the run's side only). Every score is the same as without it. ``None`` (the default)
      streams by itself when that is possible and the dataset is large (a JSONL file of
      :func:`stream_threshold` bytes or more, no ``kg``): memory stays bounded without a flag;
      :attr:`streamed_why` then says so. ``False`` keeps the dataset in memory.
    - ``links`` / ``redirects``: meaning matching, as GERBIL compares resources: IRIs linked by
      owl:sameAs in the ``links`` files (RDF or two-column TSV/CSV; ``"dbpedia"`` alone: only the
      built-in DBpedia http/https/host variants, which are always included), or by the KG
      predicate ``redirects`` (e.g. ``dbo:wikiPageRedirects``, looked up for the answers' IRIs),
      compare equal (signature ``match:...,links:...``).
    - ``allow_foreign_kg`` / ``allow_gold_copy`` / ``allow_score_file``: score anyway what the
      set-up check refuses (a KG holding none of the dataset's or run's IRIs; a run that copies
      the gold answers; an evaluation file given as a run); they are then warnings;
      ``max_kg_failures``: the share of executed queries that may fail (EXEC_ERROR, TIMEOUT)
      before the KG/endpoint is refused (default 0.5; 1: never);
    - ``match_labels``: text answers match entities by label (signature ``match:...,labels:...``):
      a plain literal naming exactly one entity among the answers (its rdfs:label, skos
      labels, schema/foaf name on ``kg``, or the dataset's entity labels, names and aliases)
      compares as that entity.

    What is executed is planned from the measures' declared inputs: nothing without a measure
    that needs answers, execution or KG types. Use as a context manager (or call
    :meth:`close`) to release the engine it opened.
    """

    def __init__(self, dataset: PathLike | Sequence[PathLike] | Dataset, profile: str | Path | Profile = "kgqa", *,
                 measures: str | Sequence[str | Measure] | None = None, kg: Any = None, graph: str | None = None,
                 lang: str | Sequence[str] | None = None, gold_answers: GoldAnswers = "stored",
                 policy: ExecutionPolicy | None = None, timeout: float | None = None, normalise: bool | None = None,
                 reexecute: bool = False, cache: Any = True, dataset_format: str | None = None,
                 dataset_options: Mapping[str, Any] | None = None, progress: bool = False,
                 on_progress: Callable[[int, int], None] | None = None,
                 engine_options: Mapping[str, Any] | None = None, engine_check: bool = True,
                 exclude_engine_dependent: bool = False, view: str | None = None, stream: bool | None = None,
                 links: Sequence[PathLike] | None = None, redirects: str | None = None,
                 match_labels: bool = False, allow_foreign_kg: bool = False,
                 max_kg_failures: float | None = None, allow_gold_copy: bool = False,
                 allow_score_file: bool = False):
        if gold_answers not in ("stored", "executed"):
            raise InputError("gold_answers", f"expected stored or executed, got {gold_answers!r}")
        if gold_answers == "executed" and kg is None:
            raise InputError("gold_answers", "executed gold answers need a KG to execute the gold queries on (kg=)")
        self.profile = get_profile(profile, measures, view)

        self.max_kg_failures = MAX_KG_FAILURES if max_kg_failures is None else float(max_kg_failures)
        if not 0 <= self.max_kg_failures <= 1:
            raise InputError("max_kg_failures", f"expected a share between 0 and 1, got {max_kg_failures!r}")
        #: set-up checks that stay warnings (see kgqa.score.setup_check.ALLOW_FLAGS)
        self.allow = {code for code, on in (("foreign-kg", allow_foreign_kg), ("gold-copy", allow_gold_copy),
                                            ("not-a-run", allow_score_file)) if on}
        self._kg_name = _kg_name(kg)
        if isinstance(kg, (str, Path)):  # a registry KG name (ck25) as the web form offers it
            kg = resolve_kg(str(kg))
        self._links = [str(x) for x in links or ()]
        self._redirects = _expand_iri(redirects) if redirects else None
        self._match_labels = match_labels
        if redirects and kg is None:
            raise InputError("redirects", "redirects are looked up on the KG: pass --kg (kg=) with --redirects")
        if self._links and not redirects:
            self.profile = self.profile.with_links(_load_links.load_links(self._links))
        #: why the dataset is streamed without being asked to (None: it is not, or was asked)
        self.streamed_why: str | None = None
        if stream is None:
            self.streamed_why = _auto_stream(dataset, kg, dataset_format)
            stream = self.streamed_why is not None
        self.stream = stream
        if stream:  # read one question at a time, keeping none (JSONL dataset files only)
            if kg is not None:
                raise InputError("stream", "a streamed dataset is scored on the answers it stores and the run's; "
                                           "executing queries (kg=, --kg) needs the dataset in memory: drop --stream")
            if isinstance(dataset, Dataset):
                raise InputError("stream", "stream=True reads dataset files; this dataset is already in memory")

            self.full_dataset = self.dataset = open_stream(dataset, format=dataset_format, langs=parse_langs(lang),
                                                           progress=progress, **dict(dataset_options or {}))
        else:
            self.full_dataset = load_dataset(dataset, format=dataset_format, **dict(dataset_options or {}))
            self.dataset = select_language(self.full_dataset, lang)
        self._lang = _lang_text(lang)
        self.gold_answers = gold_answers
        self.reexecute = reexecute
        if exclude_engine_dependent and kg is None:
            raise InputError("exclude_engine_dependent", "needs --kg (kg=): which answers depend on the engine is "
                             "found by executing the queries")
        self.engine_check = engine_check or exclude_engine_dependent
        self.exclude_engine_dependent = exclude_engine_dependent
        self._policy_given = policy
        self._policy_changes = {k: v for k, v in (("timeout", timeout), ("normalise", normalise)) if v is not None}
        self._policy: ExecutionPolicy | None = None
        self.needs = _needs(self.profile)
        self._kg, self._graph, self._cache, self._progress = kg, graph, cache, progress
        self._on_progress = on_progress
        self._engine_options = dict(engine_options or {})
        self._executor: Executor | None = None
        self._owns_executor = False
        base: dict[str, Any] = {"lang": _lang_text(lang), "gold": gold_answers if self.executes else "stored"}
        if measures:
            base["measures"] = "+".join(s.measure.full for s in self.profile.measures)
        self._base = base

    # ------------------------------------------------------------------ engine

    @property
    def policy(self) -> "ExecutionPolicy":
        """The :class:`ExecutionPolicy` (made on first use: answers-only scoring needs none)."""
        if self._policy is None:
            policy = self._policy_given or _execute_policy.ExecutionPolicy()
            self._policy = policy.with_(**self._policy_changes) if self._policy_changes else policy
        return self._policy

    @property
    def executes(self) -> bool:
        """Whether runs are executed: a KG is given and some measure needs answers, execution
        or KG types."""
        return self._kg is not None and (self.needs.answers or self.needs.execution or self.needs.kg_types)

    @property
    def executor(self) -> Executor | None:
        """The executor (opened on first use; None without ``kg``)."""
        if self._executor is None and self._kg is not None:
            kg, Executor = self._kg, _execute_executor.Executor
            if isinstance(kg, Executor):
                self._executor = kg
            elif isinstance(kg, Engine):
                rc = self._cache if isinstance(self._cache, _execute_cache.ResultCache) else None
                self._executor = Executor(kg, policy=self.policy, cache=rc, progress=self._progress,
                                          on_progress=self._on_progress)
            else:
                self._executor = Executor.open(kg, self._graph, policy=self.policy, cache=self._cache,
                                               progress=self._progress, on_progress=self._on_progress,
                                               **self._engine_options)
            # an engine or executor passed in is the caller's to close
            self._owns_executor = not isinstance(kg, (Executor, Engine))
        return self._executor

    def close(self) -> None:
        """Close what this evaluator opened (an engine or executor passed in stays open)."""
        executor, self._executor = self._executor, None
        if executor is not None and self._owns_executor:
            executor.close()

    def __enter__(self) -> "Evaluator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ scoring

    def signature_parts(self) -> dict[str, Any]:
        """What the selection and execution add to the profile's signature parts."""
        parts = dict(self._base)
        if self.executes:
            ex = self.executor
            assert ex is not None
            parts.update(ex.signature_parts())
            parts["answers"] = "executed" if self.reexecute else "run-first"
        return parts

    def evaluate(self, run: PathLike | Sequence[PathLike] | Run, *, name: str | None = None,
                 run_format: str | None = None, run_options: Mapping[str, Any] | None = None,
                 signature_extra: Mapping[str, Any] | None = None) -> Evaluation:
        """Score one run (a path, paths of one run, or a :class:`Run`); ``signature_extra``
        adds this run's own signature parts (a live system's URL and client settings)."""
        # executing a run (and re-reading it from the cache) makes millions of small objects
        # that form no cycles: the cyclic collector stays paused throughout (see kgqa.model.gcpause)
        with paused() if self.executes else nullcontext():
            return self._evaluate(run, name, run_format, run_options, signature_extra)

    def _evaluate(self, run: PathLike | Sequence[PathLike] | Run, name: str | None, run_format: str | None,
                  run_options: Mapping[str, Any] | None, signature_extra: Mapping[str, Any] | None) -> Evaluation:
        if name is None and not isinstance(run, Run) and not _is_many(run):
            name = run_names([run])[0]
        r = load_run(_run_path(run), format=run_format, dataset=None if self.stream else self.dataset, name=name,
                     **dict(run_options or {}))

        # a query-only run without a KG is a set-up mistake only when some measure needs answers
        kg_for_check = self._kg if self.needs.answers else "not needed"
        query_measures = any(not s.measure.inputs.answers for s in self.profile.measures)
        sig = {**self.signature_parts(), "input": run_input(r) or None, **dict(signature_extra or {})}
        if self.stream:  # the set-up is checked once the dataset has been read
            e = _score(self.dataset, r, self.profile, signature_extra=sig)
            _check_langs(self.dataset.langs, set(self.dataset.unit_languages), self.dataset.name)
            unknown = set(e.unknown_ids)
            ids = [*e.questions.ids, *(s["id"] for s in e.skipped if s["id"] not in unknown)]
            e.setup_warnings = tuple(raise_errors(check_setup(self.dataset, [r], kg=kg_for_check, lang=self._lang,
                                                              ids=ids, query_measures=query_measures,
                                                              allow=self.allow)))
            e.notes = (f"streamed: {self.streamed_why}",) if self.streamed_why else ()
            return e
        # errors (no id matches, queries without a KG) are raised before anything is executed
        warnings = raise_errors(check_setup(self.dataset, [r], kg=kg_for_check, lang=self._lang,
                                            full_dataset=self.full_dataset, query_measures=query_measures,
                                            allow=self.allow))
        if not self.executes:
            profile = self._with_labels(None, r, None, self.profile) if self._match_labels else self.profile
            e = _score(self.dataset, r, profile, signature_extra=sig)
            e.setup_warnings = tuple(warnings)
            return e
        e = self._execute_and_score(r, sig, warnings)
        e.setup_warnings = tuple(warnings)
        return e

    def _execute_and_score(self, r: Run, sig: dict[str, Any], warnings: list) -> Evaluation:
        """Execute ``r`` (and the gold queries scoring needs), score it and check which answers
        depend on the engine (``warnings`` gets the transport warnings)."""

        ex = self.executor
        assert ex is not None
        foreign = foreign_kg(ex, self._kg_name, self.dataset, r, self.policy.timeout, self.allow)
        warnings += raise_errors([foreign] if foreign else [])
        # gold queries only when some measure reads gold answers (or their KG types)
        gold = self.gold_answers if (self.needs.answers or self.needs.kg_types) else "none"
        execution = ex.execute_run(self.dataset, r, gold=gold, reexecute=self.reexecute)
        failing = kg_failures(r.name, self._kg_name, [*execution.gold.values(), *execution.predicted.values()],
                              self.max_kg_failures)
        raise_errors([failing] if failing else [])
        warnings += transport_warnings(r.name, execution.predicted.values())
        if not execution.gold and not execution.predicted:  # nothing executed: the engine is no part of the score
            for key in (*ex.signature_parts(), "answers"):
                sig.pop(key, None)
        extras = self._kg_types(ex, r, execution) if self.needs.kg_types else None
        profile = self._with_redirects(ex, r, execution) if self._redirects else self.profile
        if self._match_labels:
            profile = self._with_labels(ex, r, execution, profile)
        scored = _score(self.dataset, r, profile, predicted=execution.predicted, gold=execution.gold,
                        signature_extra=sig, execution=execution.counts, extras=extras)
        if self.engine_check:  # which answers would differ on another engine (ties, LIMIT, ...)
            scored = _analyze_engine_dependence.check(scored, self.dataset, r, profile, execution, ex)
            if self.exclude_engine_dependent:
                scored = _analyze_engine_dependence.rescore_without(scored, self.dataset, r, profile, execution,
                                            signature_extra=sig, extras=extras)
        return scored

    def _answers(self, run: Run, execution: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """Gold and system answers per question id, executed where they were executed (``execution``
        None: as stored)."""
        done_gold = execution.gold if execution is not None else {}
        done_pred = execution.predicted if execution is not None else {}
        gold = {it.id: (done_gold[it.id].answer if it.id in done_gold else it.answer) for it in self.dataset.items}
        system = {}
        for it in self.dataset.items:
            p = run.get(it.id)
            system[it.id] = (done_pred[it.id].answer if it.id in done_pred else (p.answer if p is not None else None))
        return gold, system

    def _with_labels(self, ex: Executor | None, run: Run, execution: Any, profile: Profile) -> Profile:
        """``profile`` matching text answers against the labels of this run's answer entities: the
        dataset's own labels and, with a KG, the KG's."""

        pairs = _dataset_labels(self.dataset.items)
        sources = [f"dataset={len(pairs)}"] if pairs else []
        if ex is not None:
            gold, system = self._answers(run, execution)
            kg_pairs, failed = ex.label_pairs(iris_of([*gold.values(), *system.values()]))
            if failed:
                raise InputError("match_labels", f"looking up labels on the KG failed: {failed[0]}")
            pairs += kg_pairs
            sources.append(f"kg={len(kg_pairs)}")
        return profile.with_labels(TextLabels.from_pairs(pairs, sources))

    def _with_redirects(self, ex: Executor, run: Run, execution: Any) -> Profile:
        """The profile with meaning matching over the link files and the KG redirects that touch
        this run's answers (gold and system)."""
        gold, system = self._answers(run, execution)
        pairs, failed = ex.link_pairs(iris_of([*gold.values(), *system.values()]), self._redirects)
        if failed:
            raise InputError("redirects", f"looking up redirects ({self._redirects}) on the KG failed: {failed[0]}")
        return self.profile.with_links(_load_links.load_links(self._links, extra=pairs, extra_name="redirects"))

    def evaluate_many(self, runs: Sequence[PathLike | Run], *, names: Sequence[str] | None = None,
                      run_format: str | None = None, run_options: Mapping[str, Any] | None = None) -> list[Evaluation]:
        """Score several runs; file runs are named by :func:`run_names` unless ``names`` given."""
        runs = list(runs)
        if names is None:
            files = [r for r in runs if not isinstance(r, Run)]
            auto = iter(run_names(files))
            names = [r.name if isinstance(r, Run) else next(auto) for r in runs]
        return [self.evaluate(r, name=n, run_format=run_format, run_options=run_options) for r, n in zip(runs, names)]

    def ask(self, url: str, protocol: str = "gerbil", settings: Any = None, journal: Any = None) -> Evaluation:
        """Ask a live QA system every question of the dataset (GERBIL QA or Text2SPARQL web
        service, :func:`kgqa.execute.live.ask`), then execute and score its answers like a run;
        the system (scheme, host, port), protocol and client settings join the signature. A
        system failing too many questions raises :class:`kgqa.execute.live.SystemFailed`
        (unless ``settings.allow_failures``); fewer failures are a ``system`` set-up warning."""
        asked = _execute_live.ask(self.dataset, url, protocol, settings, journal=journal)
        e = self.evaluate(asked.run, name=asked.run.name, signature_extra=asked.signature_parts())
        failures = asked.failure_summary()  # fewer than the client's limit, or allowed: --strict still sees them
        if failures:
            e.setup_warnings = (*e.setup_warnings, SetupWarning(
                "system", f"the live system failed: {failures}", "fix the system and rerun (transient failures are "
                "asked again when the run is journalled)", asked.run.name))
        return e

    def _kg_types(self, ex: Executor, run: Run, execution: Any) -> dict[str, dict[str, Any]]:
        """Answer item classes looked up on the KG for measures that declare ``kg_types``."""
        gold, system = self._answers(run, execution)
        return {qid: {"answer_types": t} for qid, t in ex.answer_types(gold, system).items()}


def _kg_name(kg: Any) -> str:
    """What ``kg`` is called in messages: the name, path(s) or URL given, else the engine's kind."""
    if isinstance(kg, (str, Path)):
        return str(kg)
    if isinstance(kg, (list, tuple)) and kg and all(isinstance(k, (str, Path)) for k in kg):
        return ", ".join(str(k) for k in kg)
    return type(kg).__name__ if kg is not None else "no KG"


#: a JSONL dataset file of this many bytes or more is streamed when nothing needs it in memory
STREAM_BYTES = 64 << 20


def stream_threshold() -> int | None:
    """Bytes from which a JSONL dataset is streamed by default (``KGQA_STREAM_BYTES``: a number,
    or ``off``); None: never by default."""

    raw = os.environ.get("KGQA_STREAM_BYTES", "").strip().lower()
    if raw in ("off", "never", "none"):
        return None
    try:
        return int(raw) if raw else STREAM_BYTES
    except ValueError:
        raise InputError("KGQA_STREAM_BYTES", f"expected a number of bytes or 'off', got {raw!r}") from None


def _auto_stream(dataset: Any, kg: Any, dataset_format: str | None) -> str | None:
    """Why ``dataset`` is streamed by default (a sentence for the user), or None: a JSONL file
    (or files) of :func:`stream_threshold` bytes or more, scored without a KG."""
    threshold = stream_threshold()
    if threshold is None or kg is not None or isinstance(dataset, Dataset):
        return None
    paths = [Path(p) for p in (dataset if isinstance(dataset, (list, tuple)) else [dataset])]
    if not all(p.is_file() for p in paths):
        return None  # a registry name or a missing file: loaded (or refused) as usual
    size = sum(p.stat().st_size for p in paths)
    if size < threshold:
        return None

    try:
        fmt = formats.get("dataset", dataset_format).name if dataset_format else formats.detect(paths, "dataset").name
    except InputError:
        return None
    if fmt != "jsonl":
        return None
    return (f"the dataset ({size / 1e6:.0f} MB of JSONL) is read one question at a time and no item is kept "
            "(bounded memory); per-question records keep the run's side, so `kgqa show` and HTML reports "
            "of this evaluation need --no-stream")


def _dataset_labels(items: Sequence[Any]) -> list[tuple[str, str]]:
    """(IRI, label) pairs a dataset ships for its answer entities: Mintaka's ``answer_labels``
    (one dict language -> label per entity), and ``answer_names`` / ``answer_aliases`` (CWQ,
    WebQSP), aligned with the gold answer's rows."""

    pairs: list[tuple[str, str]] = []
    for it in items:
        ans, meta = it.answer, it.metadata
        if not isinstance(ans, TableAnswer) or not meta:
            continue
        cells = [row[0] if row else None for row in ans.rows]
        per_row: list[list[str]] = [[] for _ in cells]
        for i, lab in enumerate(meta.get("answer_labels") or []):
            if i < len(per_row) and isinstance(lab, dict):
                per_row[i] += [v for v in lab.values() if isinstance(v, str)]
        for i, name in enumerate(meta.get("answer_names") or []):
            if i < len(per_row) and isinstance(name, str):
                per_row[i].append(name)
        for i, aliases in enumerate(meta.get("answer_aliases") or []):
            if i < len(per_row) and isinstance(aliases, list):
                per_row[i] += [a for a in aliases if isinstance(a, str)]
        pairs += [(c.value, lab) for c, labs in zip(cells, per_row) if isinstance(c, _IRI) for lab in labs]
    return pairs


def _expand_iri(text: str) -> str:
    """A predicate given as a full IRI (``<...>`` optional) or a standard prefixed name (``dbo:x``)."""
    t = text.strip().strip("<>")
    prefix, _, local = t.partition(":")
    if prefix in _sparql_prefixes.STANDARD_PREFIXES and not local.startswith("//"):
        return _sparql_prefixes.STANDARD_PREFIXES[prefix] + local
    if "://" not in t:
        raise InputError("redirects", f"expected a predicate IRI or a standard prefixed name such as "
                                      f"dbo:wikiPageRedirects, got {text!r}")
    return t


def _needs(profile: Profile) -> Inputs:
    return Inputs.union(s.measure.inputs for s in profile.measures)


def evaluate(dataset: PathLike | Sequence[PathLike] | Dataset, run: PathLike | Run | None = None, *,
             profile: str | Path | Profile = "kgqa", measures: str | Sequence[str | Measure] | None = None,
             kg: Any = None, lang: str | Sequence[str] | None = None, gold_answers: GoldAnswers = "stored",
             name: str | None = None, run_format: str | None = None,
             run_options: Mapping[str, Any] | None = None, system: str | None = None, protocol: str = "gerbil",
             system_settings: Any = None, system_journal: Any = None, **options: Any) -> Evaluation:
    """Score one run on a dataset: one :class:`Evaluation` (for several runs, one list:
    :func:`evaluate_many`). With ``system=`` (and no ``run``) the live system at that URL is
    asked every question and its answers are scored like a run.

    ``dataset``: a registry name (``"qald-9-test"``, ``"ck25"``), file path(s) or a
    :class:`Dataset`; ``run``: a run file or a :class:`Run`; ``profile``: a scoring convention
    (``kgqa profiles``); ``measures``: replaces the profile's measures; ``kg``: execute queries on
    this KG (RDF files, a store directory, an endpoint URL, or an open engine); ``lang``:
    languages of per-language datasets; ``gold_answers``: ``stored`` or ``executed``; ``name``:
    the run's name (default: from its file name). Further keywords go to :class:`Evaluator`
    (``graph``, ``policy``, ``timeout``, ``normalise``, ``reexecute``, ``cache``,
    ``dataset_format``, ``dataset_options``, ``progress``, ``engine_options``).

    >>> e = evaluate("ck25", "ck25-runs/WSE/ck25_system_result_set.json", profile="text2sparql")  # doctest: +SKIP
    >>> round(e.aggregate["set_F"], 4), str(e.signature)                                         # doctest: +SKIP
    """
    if isinstance(run, (list, tuple)):
        raise TypeError("kgqa.evaluate scores one run and returns one Evaluation; for a list of runs call "
                        "kgqa.evaluate_many(dataset, runs), which returns a list")
    if (run is None) == (system is None):
        raise TypeError("kgqa.evaluate scores one run: pass a run, or system= (a live system's URL), not "
                        f"{'both' if run is not None else 'neither'}; for several use kgqa.evaluate_many")
    with Evaluator(dataset, profile, measures=measures, kg=kg, lang=lang, gold_answers=gold_answers,
                   **options) as ev:
        if system is not None:
            return ev.ask(system, protocol, system_settings, system_journal)
        return ev.evaluate(run, name=name, run_format=run_format, run_options=run_options)


def evaluate_many(dataset: PathLike | Sequence[PathLike] | Dataset, runs: Sequence[PathLike | Run], *,
                  profile: str | Path | Profile = "kgqa", measures: str | Sequence[str | Measure] | None = None,
                  kg: Any = None, lang: str | Sequence[str] | None = None, gold_answers: GoldAnswers = "stored",
                  names: Sequence[str] | None = None, run_format: str | None = None,
                  run_options: Mapping[str, Any] | None = None, system: str | None = None, protocol: str = "gerbil",
                  system_settings: Any = None, system_journal: Any = None,
                  **options: Any) -> list[Evaluation]:
    """Score several runs on a dataset with one :class:`Evaluator` (one engine, one cache): a
    list of :class:`Evaluation`, in the order of ``runs`` (file runs are named by
    :func:`run_names` unless ``names`` are given). With ``system=`` the live system's evaluation
    is appended last. The other arguments are :func:`evaluate`'s.

    >>> evals = evaluate_many("qald-9-test", ["a.json", "b.json"], kg="dbpedia.nt")  # doctest: +SKIP
    >>> compare(evals).to_dataframe()                                                # doctest: +SKIP
    """
    if isinstance(runs, (str, Path, Run)):
        raise TypeError("kgqa.evaluate_many takes a list of runs; for one run call kgqa.evaluate(dataset, run)")
    with Evaluator(dataset, profile, measures=measures, kg=kg, lang=lang, gold_answers=gold_answers,
                   **options) as ev:
        out = ev.evaluate_many(list(runs), names=names, run_format=run_format, run_options=run_options)
        if system is not None:  # a live system is asked, then scored like one more run
            out.append(ev.ask(system, protocol, system_settings, system_journal))
        return out


def audit(dataset: PathLike | Sequence[PathLike] | Dataset, kg: Any, *, graph: str | None = None,
          policy: ExecutionPolicy | None = None, cache: Any = True, progress: bool = False,
          dataset_format: str | None = None):
    """``kgqa audit``: execute every gold query of ``dataset`` on ``kg`` (under ``policy``, whose
    ``trust_gold`` decides whether the gold queries are sandboxed) and compare with the stored
    answers; returns the :class:`kgqa.execute.audit.AuditReport` (one row per gold query)."""
    return _execute_audit.audit_kg(load_dataset(dataset, format=dataset_format), kg, graph=graph, policy=policy,
                                   cache=cache, progress=progress)


# --------------------------------------------------------------------------- comparison


class Comparison:
    """Two or more evaluations compared (means with bootstrap CIs, paired tests with Holm/BH
    corrections, win/tie/loss, significance letters), renderable in every format.

    ``result`` is the :class:`kgqa.analyze.comparison.MultiComparison` with every number."""

    def __init__(self, evaluations: Sequence[Evaluation], result: Any):
        self.evaluations = list(evaluations)
        self.result = result
        self._report: Any = None

    @property
    def systems(self) -> list[str]:
        return list(self.result.systems)

    @property
    def report(self):
        """The comparison's tables as data (:class:`kgqa.report.model.ComparisonReport`: cells
        with mean, CI, best flag and significance letters), built once; every ``to_*`` renders it."""
        if self._report is None:
            self._report = _report_model.comparison_report(self.result)
        return self._report

    def __rich__(self):
        summary, pairs, notes = _report_analysis.comparison_grids(self.report)
        Text = lazy.rich_text().Text
        return lazy.rich_console().Group(summary, pairs, *(Text(n, style="dim") for n in notes))

    def to_table(self, width: int = 130) -> str:
        """The terminal tables as plain text."""
        con = lazy.rich_console().Console(width=width, record=True, file=_NullFile(), color_system=None)
        con.print(self)
        return con.export_text()

    def to_markdown(self) -> str:
        return _report_analysis.comparison_markdown(self.report)

    def to_latex(self, **kwargs: Any) -> str:
        return _report_latex.comparison_latex(self.report, **kwargs)

    def to_html(self, **kwargs: Any) -> str:
        """A standalone HTML report (scores, comparison, outcomes, taxonomy, questions)."""
        return _report_html.html_report(self.evaluations, baseline=self.result.baseline, seed=self.result.seed,
                           comparison=self.result, **kwargs)

    def to_json(self) -> dict[str, Any]:
        return self.result.to_json()

    def to_dataframe(self):
        """One row per (measure, system): ``measure``, ``system``, ``n``, ``mean``, ``low``,
        ``high`` (the bootstrap CI), ``letters`` (systems it significantly beats), ``aggregate``
        (the corpus value under the profile)."""
        pd = lazy.pandas()

        rows = []
        for m in self.result.measures:
            for s in self.result.systems:
                c = m.ci[s]
                rows.append({"measure": m.measure, "system": s, "n": m.n, "mean": c.mean, "low": c.low,
                             "high": c.high, "letters": m.letters.get(s, ""),
                             "aggregate": self.result.aggregates.get(s, {}).get(m.measure)})
        return pd.DataFrame(rows, columns=["measure", "system", "n", "mean", "low", "high", "letters", "aggregate"])

    def _repr_html_(self) -> str:
        return "<pre>" + html.escape(self.to_table()) + "</pre>"

    def __repr__(self) -> str:
        return f"Comparison(systems={self.systems!r}, measures={[m.measure for m in self.result.measures]!r})"


class _NullFile:
    def write(self, _: str) -> int:
        return 0

    def flush(self) -> None:
        pass


def resolve_baseline(baseline: str | None, evaluations: Sequence[Evaluation],
                     specs: Sequence[PathLike] = ()) -> str | None:
    """A baseline given as a run name or as one of the run files ``specs`` -> the system name
    used in the comparison (duplicates get ``#2``, ...)."""
    if baseline is None:
        return None
    names = _analyze_comparison.system_names(evaluations)
    if baseline in names:
        return baseline
    for i, s in enumerate(specs):
        if baseline == str(s) or Path(baseline).resolve() == Path(s).resolve():
            return names[i]
    raise InputError("baseline", f"{baseline!r} is neither one of the runs ({', '.join(map(str, specs))}) nor a "
                                 f"run name ({', '.join(names)})")


def compare(evaluations: Sequence[Evaluation], *, baseline: str | None = None, seed: int = 0,
            measures: Sequence[str] | None = None, family: str = "measure", resamples: int = 10_000,
            alpha: float = 0.05, confidence: float = 0.95, runs: Sequence[PathLike] = ()) -> Comparison:
    """Compare two or more evaluations of one dataset (see :mod:`kgqa.analyze.comparison`):
    every number is seeded (``seed``), so the same call gives the same output. ``baseline``: a
    run name (or one of the run files ``runs``) to compare the others with (default: all
    pairs); ``measures``: labels to compare (default: all with per-question values);
    ``family``: Holm/BH over the comparisons of one ``measure`` or ``all``.

    >>> kgqa.compare(kgqa.evaluate_many("ck25", [a, b], profile="text2sparql")).to_dataframe()  # doctest: +SKIP
    """
    evaluations = list(evaluations)
    if resamples < 1:
        raise InputError("resamples", f"expected a positive integer, got {resamples}")
    try:
        result = _analyze_comparison.compare_evaluations(
            evaluations, baseline=resolve_baseline(baseline, evaluations, runs), seed=seed, measures=measures,
            family=family, resamples=resamples, trials=resamples, alpha=alpha, confidence=confidence)
    except ValueError as e:
        raise InputError("compare", str(e)) from None
    return Comparison(evaluations, result)


# ---------------------------------------------------------------- CLI entry points (evaluation side)
# What ``kgqa evaluate / compare / report / show / demo / measures / profiles / datasets /
# degrade / sensitivity / axioms`` do beyond :func:`evaluate` and :func:`compare`, one call each:
# the command line parses its options, makes the call and prints; a notebook makes the same call.

_LAZY.update({
    "SafeConsole": "kgqa.report.term",  # a rich console that never prints a control character from data
    "clean": "kgqa.report.term",  # text with its control characters shown as escapes
    "AskSettings": "kgqa.execute.live",  # a live system's client settings (Evaluator.ask)
    "AskInterrupted": "kgqa.execute.live",  # Ctrl-C while asking a live system
    "parse_bytes": "kgqa.execute.engine",  # "2GiB" / "off" -> an engine cap
    "display_url": "kgqa.execute.live.client",  # a URL with its credentials shown as ***
    "secrets_of": "kgqa.execute.live.client",  # the credentials in a URL (and headers), to redact
    "headline_measure": "kgqa.analyze.characteristics",  # the measure a leaderboard ranks by
    "split_run_spec": "kgqa.load.runspec",  # "NAME=PATH" -> (name, path)
})

#: Output formats of :func:`render_evaluations` (``table`` is printed by :func:`print_evaluations`).
EVALUATION_FORMATS = ("table", "json", "csv", "md")


def render_evaluations(evaluations: Sequence[Evaluation], fmt: str) -> str:
    """The evaluations as ``json``, ``csv`` or ``md`` text (``table`` outside a terminal: ``md``)."""
    report = _report_evaluation
    render = {"json": report.to_json, "csv": report.to_csv, "md": report.to_markdown, "table": report.to_markdown}
    if fmt not in render:
        raise InputError("format", f"expected one of {', '.join(EVALUATION_FORMATS)}, got {fmt!r}")
    return render[fmt](list(evaluations))


def render_comparison(comparison: Comparison, fmt: str) -> Any:
    """A comparison alone: ``md``, ``latex``, ``json`` text, or (``table``) a rich renderable."""
    return _report_render.comparison_text(comparison.result, fmt)


def render_report(evaluations: Sequence[Evaluation], fmt: str, *, by: Sequence[str] = (),
                  bins: Sequence[str] | None = None, baseline: str | None = None, runs: Sequence[PathLike] = (),
                  seed: int = 0, measure: str | None = None, family: str = "measure", resamples: int = 10_000,
                  full_json: str | None = None) -> Any:
    """The report of saved or fresh evaluations (``html``, ``md``, ``latex``, ``csv``, ``json``
    text; ``table``: a list of rich renderables for :func:`print_rendered`); two or more are
    compared (``baseline``: a run name, or one of the run files ``runs``). ``full_json``: the
    link from an HTML report to the saved evaluation holding every answer row."""
    evaluations = list(evaluations)
    return _report_render.render_report(
        evaluations, fmt, by=by, bins=_report_render.parse_bins(bins), seed=seed, measure=measure, family=family,
        baseline=resolve_baseline(baseline, evaluations, runs), resamples=resamples, full_json=full_json)


def find_question(evaluations: Sequence[Evaluation], qid: str, run: str | None = None) -> list[tuple[Any, Any]]:
    """``(evaluation, question)`` for question ``qid`` in each evaluation (of run ``run`` only,
    if given) that scored it; an :class:`InputError` says why there is none."""
    evaluations = list(evaluations)
    if run is not None:
        chosen = [e for e in evaluations if e.run == run]
        if not chosen:
            raise InputError("--run", f"no run named {run!r}; runs: {', '.join(e.run for e in evaluations)}")
        evaluations = chosen
    found = [(e, next(q for q in e.questions if q.id == qid)) for e in evaluations
             if any(q.id == qid for q in e.questions)]
    if not found:
        skipped = [s for e in evaluations for s in e.skipped if s["id"] == qid]
        if skipped:
            raise InputError("--id", f"question {qid!r} was not scored: {skipped[0]['reason']}")
        some = ", ".join(q.id for q in evaluations[0].questions[:5]) if evaluations else ""
        raise InputError("--id", f"no question {qid!r} in the evaluation(s); ids look like: {some} ...")
    return found


def parse_measures(spec: str | Sequence[str], what: str = "measures") -> list[Measure]:
    """``"F1(rule=gerbil),AnswerEM"`` (or a list of such names) -> measures; an unknown one is an
    :class:`InputError` about ``what``."""
    try:
        return _measures.parse_list(spec)
    except ValueError as e:
        raise InputError(what, str(e)) from None


# ---- datasets


def dataset_summary(dataset: PathLike | Dataset, format: str | None = None) -> Any:
    """``kgqa datasets info``: counts per language, answer kinds and types, items with SPARQL or
    answers, problems (a :class:`kgqa.load.summary.DatasetSummary`)."""
    return summarize(dataset, format)


def validate_files(paths: Sequence[PathLike], format: str | None = None) -> list[Any]:
    """Every problem of dataset or run files (``kgqa datasets validate``), errors and warnings."""

    return validate(list(paths), format)


def export_dataset(dataset: PathLike | Dataset, to: str, output: PathLike, *, format: str | None = None) -> Dataset:
    """Write ``dataset`` to ``output`` with format ``to``'s writer (never over one of its own
    input files); returns the dataset written."""

    ds = load_dataset(dataset, format=format)
    fmt = formats.get("dataset", to)
    if fmt.write is None:
        raise InputError("--to", f"format {to!r} has no writer")
    if Path(output).resolve() in {Path(p).resolve() for p in ds.source}:
        raise InputError(output, "refusing to overwrite an input file")
    fmt.write(ds, Path(output))
    return ds


# ---- validating measures (ICTIR 2022)


def open_kg(kg: Any, *, timeout: float = 30.0, cache: Any = True) -> Executor:
    """An :class:`Executor` on ``kg`` (RDF files, a store directory, an endpoint) with a
    per-query ``timeout``; ``cache``: the result cache (True: the user's, a path, or False)."""
    return _execute_executor.Executor.open(kg, policy=_execute_policy.ExecutionPolicy(timeout=timeout), cache=cache)


def degrade(dataset: PathLike | Dataset, transform: str, rate: float, seed: int = 0, *, kg: Any = None,
            among: str = "applicable", timeout: float = 30.0, cache: Any = True) -> Any:
    """Gold queries with one transformation applied to a seeded share ``rate`` of the items
    (``kgqa degrade``): a :class:`kgqa.metaeval.degrade.Degradation` whose ``run`` scores like any
    run (:func:`write_run`). ``kg`` is opened for the transformations that need one."""
    ds = load_dataset(dataset)
    t = _metaeval_degrade.get(transform)
    if not t.needs:
        d = _metaeval_degrade.degrade(ds, t, rate, seed, _metaeval_degrade.Context(ds), among=among)
    elif kg is None:
        raise InputError("--kg", f"{t.name} needs a KG ({', '.join(t.needs)})")
    else:
        with open_kg(kg, timeout=timeout, cache=cache) as runner:
            context = _metaeval_degrade.build_context(ds, [t], runner, timeout=timeout)
            d = _metaeval_degrade.degrade(ds, t, rate, seed, context, among=among)
    return replace(d, run=_metaeval_degrade.scoring_run(d.run, ds))  # ids as evaluate expects them


def write_run(run: Run, path: PathLike, format: str = "jsonl") -> None:
    """Write ``run`` with ``format``'s writer (default: the JSONL run format)."""

    formats.get("run", format).write(run, Path(path))


def sensitivity(dataset: PathLike | Dataset, kg: Any, *, transforms: Sequence[str] = ("T1", "T2", "T3"),
                rates: Sequence[float] = (0.1, 0.2), seeds: Sequence[int] = (0, 1, 2),
                measures: str | Sequence[str] | None = None, profile: str = "kgqa", among: str = "applicable",
                timeout: float = 30.0, cache: Any = True) -> Any:
    """Sensitivity of measures to synthetic degradations (ICTIR 2022 Table 3) on ``kg``: a
    :class:`kgqa.metaeval.sensitivity.SensitivityTable` for :func:`render_validation`."""
    ms = parse_measures(measures or _metaeval_sensitivity.DEFAULT_MEASURES, "--measures")
    ds = load_dataset(dataset)
    with open_kg(kg, timeout=timeout, cache=cache) as runner:
        return _metaeval_sensitivity.sensitivity(ds, runner, transforms=list(transforms), rates=list(rates),
                                                 seeds=list(seeds), measures=ms, profile=profile, among=among)


def check_axioms(measures: str | Sequence[str] | None = None, *, dataset: PathLike | Dataset | None = None,
                 kg: Any = None, limit: int | None = None, strict: bool = False, synthetic: bool = True,
                 timeout: float = 30.0, cache: Any = True) -> Any:
    """Check measures against the axioms A1-A3 of ICTIR 2022 (Table 1) on the synthetic suites
    and (with ``dataset`` and ``kg``) pairs built from the dataset's gold queries."""
    ms = parse_measures(list(measures) if measures else _metaeval_axioms.DEFAULT_AXIOM_MEASURES, "MEASURE")
    suites = _metaeval_axioms.synthetic_suites() if synthetic else []
    if dataset is not None:
        if kg is None:
            raise InputError("--kg", "--dataset needs --kg to execute the derived queries")
        ds = load_dataset(dataset)
        ids = [it.id for it in ds.items][:limit] if limit else None
        with open_kg(kg, timeout=timeout, cache=cache) as runner:
            suites += _metaeval_axioms.dataset_suites(ds, runner, ids=ids)
    if not suites:
        raise InputError("--no-synthetic", "no suites to check (give --dataset and --kg)")
    return _metaeval_axioms.check(ms, suites, strict=strict)


def render_validation(result: Any, fmt: str) -> Any:
    """A sensitivity table or an axioms report as ``md``, ``latex`` or ``json`` text, or
    (``table``) a list of rich renderables (the last one soft-wrapped)."""

    if fmt == "json":
        return json.dumps(result.to_json(), ensure_ascii=False, indent=2)
    V = _report_metaeval
    if isinstance(result, _metaeval_sensitivity.SensitivityTable):
        render = {"table": V.sensitivity_renderables, "md": V.sensitivity_markdown, "latex": V.sensitivity_latex}
    else:
        render = {"table": V.axioms_renderables, "md": V.axioms_markdown, "latex": V.axioms_latex}
    if fmt not in render:
        raise InputError("format", f"expected table, md, latex or json, got {fmt!r}")
    return render[fmt](result)


# ---------------------------------------------------------------- CLI entry points (builder side)
# What ``kgqa kg``, ``kgqa cache``, ``kgqa audit``, ``kgqa system ask`` and ``kgqa experiments``
# call: each is the whole job of one command, so a notebook gets what the command gets.

_LAZY.update({"write_atomic": "kgqa.load.jsonio"})  # a file written whole or not at all


@dataclass
class KGSummary:
    """What ``kgqa kg load`` / ``kgqa kg info`` print: the KG's manifest (quads, fingerprint,
    files), its named graphs (None when not listed) and the store directory (None: files)."""

    manifest: Any
    graphs: list[str] | None = None
    store: str | None = None


def load_kg(files: Sequence[PathLike], *, store: PathLike | None = None, graph: str | None = None,
            progress: bool = False, replace: bool = False, base: str | None = None) -> KGSummary:
    """``kgqa kg load``: load RDF ``files`` into a new persistent ``store`` directory (an existing
    kgqa store only with ``replace``), or, without ``store``, into memory to check them (the
    named graphs are then listed). Triples go into ``graph`` when given; relative IRIs resolve
    against ``base`` (default: each file's own ``file:`` URI)."""
    if store is not None:
        made = _execute_kgfile.create_store(files, store, graph, progress=progress, replace=replace, base=base)
        return KGSummary(made, None, str(store))
    st, manifest = _execute_kgfile.load_files(files, graph, progress=progress, base=base)
    return KGSummary(manifest, [str(g.value) for g in st.named_graphs()])


def kg_info(kg: Sequence[PathLike], *, graph: str | None = None) -> KGSummary:
    """``kgqa kg info``: a store directory (one path; opened read-only, its quads counted) or RDF
    file(s) (loaded into memory, triples into ``graph``); named graphs listed either way."""
    kg = list(kg)
    for k in kg:  # a path taken apart as a URL would read "http:/host": say what kg info takes
        if str(k).startswith(("http://", "https://")):
            raise InputError(_live_client.display_url(str(k)), "kgqa kg info reads RDF files or a kgqa store "
                             "directory, not a SPARQL endpoint: evaluate with --kg URL queries an endpoint")
    if len(kg) == 1 and Path(kg[0]).is_dir():
        ox = lazy.pyoxigraph()

        manifest = _execute_kgfile.read_manifest(kg[0])  # an InputError explains a directory that is no kgqa store
        st = ox.Store.read_only(str(kg[0]))
        graphs = [str(g.value) for g in st.named_graphs()]
        manifest.quads = len(st)
        del st
        return KGSummary(manifest, graphs, str(kg[0]))
    st, manifest = _execute_kgfile.load_files(kg, graph)
    return KGSummary(manifest, [str(g.value) for g in st.named_graphs()])


def cache_stats(path: PathLike | None = None):
    """``kgqa cache stats``: entries per engine and outcome status, and the size of the result
    cache (``path``, default ``$KGQA_CACHE_DIR/results.sqlite``); a
    :class:`kgqa.execute.cache.CacheStats`."""
    with _execute_cache.ResultCache(path) as c:
        return c.stats()


def clear_cache(engine: str | None = None, *, path: PathLike | None = None) -> int:
    """``kgqa cache clear``: delete the cached results of ``engine`` (a key as in
    :func:`cache_stats`; a trailing ``*`` matches a prefix), or all; returns how many."""
    with _execute_cache.ResultCache(path) as c:
        return c.clear(engine)


def ask_system(dataset: PathLike, url: str, output: PathLike, *, protocol: str = "gerbil", fmt: str | None = None,
               dataset_format: str | None = None, **settings: Any):
    """``kgqa system ask``: ask a live QA system at ``url`` every question of ``dataset`` (over
    ``protocol``: gerbil or text2sparql), journalling each response beside ``output`` (a rerun
    asks only what is missing), and write the run (``fmt``: jsonl, qald or text2sparql; default
    from the file name). ``settings`` are the fields of
    :class:`kgqa.execute.live.AskSettings` (langs, concurrency, timeout, retries, rps,
    headers, ...). Returns the ask result, the format written and the journal path."""
    return _execute_live.ask_to_file(str(dataset), url, output, protocol=protocol,
                                     settings=_execute_live.AskSettings(**settings), fmt=fmt,
                                     dataset_format=dataset_format)

