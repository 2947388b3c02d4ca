"""No silent zeros: check an evaluation's set-up before scoring and say what is wrong, with the fix.

A broken set-up scores like a bad system (every question "missing", 0.000). :func:`check_setup`
looks at the dataset (after language selection), the run(s), whether a KG will execute
queries, and (when there are any) the executions, and returns one :class:`SetupWarning` per
problem:

- ``empty-dataset``: n = 0 (e.g. ``--lang de`` on an English dataset): names the languages the
  dataset has;
- ``ids``: more than half of the dataset's questions have no entry in the run: names the first
  unmatched ids on both sides, suggests ``--lang`` (language-suffixed ids such as ``ck25:1-en``)
  or an id mapping; an **error** when not one question has an entry (a run of another dataset);
- ``no-kg``: more than half of the run's entries have a query but no answer, no KG was given
  (``--kg``) and some measure needs answers: every such question would be scored "missing" by
  them. An **error** when every selected measure needs answers; a warning when some are query
  measures (QueryEM, BLEU, ...), which still score;
- ``gold-copy``: the run's answers equal the dataset's gold answers on (nearly) every question
  that has one (at least :data:`COPY_SHARE` of them, and :data:`COPY_MIN` questions): a copy of
  the gold answers given as a run (two such files are among the published Text2SPARQL'25
  results) scores near 1 and says nothing about a system;
- ``transport``: more than half of the executions failed for the same transient reason
  (endpoint down, HTTP 5xx/429, connection refused, memory limit): the reason is printed once;
- ``not-a-run``: the run file is recognisably something else: an evaluation/score file (per
  question precision/recall/F values, e.g. Text2SPARQL's ``ck25_eval.json``). An **error**
  (``allow={"not-a-run"}``, ``--allow-score-file``, to score it anyway); so is ``gold-copy``
  (``allow={"gold-copy"}``, ``--allow-gold-copy``);
- ``foreign-kg`` (:func:`foreign_kg`, with a KG that executes queries): the KG contains none of
  the IRIs of the dataset's gold answers and queries, nor of the run's: a KG of another dataset.
  An **error** naming sample IRIs of both sides (``allow={"foreign-kg"}``, ``--allow-foreign-kg``);
- ``kg-failures`` (:func:`kg_failures`): more than ``max_share`` (default
  :data:`MAX_KG_FAILURES`, as for live systems) of the executed queries failed (EXEC_ERROR or
  TIMEOUT, whatever the cause: bad JSON/XML, connection refused, redirect loops, memory): the
  KG or endpoint is broken. An **error** (``--max-kg-failures 1`` to score anyway).

Errors (``SetupWarning.error``) are raised by :func:`raise_errors` as a :class:`SetupError`
before anything is scored, by the library and the CLI alike (exit status 2); the CLI prints each
warning as one line and, under ``--strict``, exits non-zero.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgqa import lazy
from kgqa.execute.engine import is_transient, transient_reason
from kgqa.execute.types import iris_of
from kgqa.model.item import Dataset
from kgqa.model.outcome import Outcome, Status
from kgqa.model.problems import InputError
from kgqa.model.run import Run
from kgqa.model.answer import answer_items
from kgqa.model.terms import TermMatching

#: the SPARQL analyzer (the parser) only when queries were executed: answers-only scoring parses none
_analyzer = lazy.module("kgqa.sparql.analyzer")

#: Keys of a per-question score object (an evaluation file, not answers).
_SCORE_KEY = re.compile(
    r"^(set_|macro_|micro_)?(p|r|f|f1|prec|precision|recall|f_?measure|accuracy|acc|em|ndcg(@\d+)?|map|mrr|"
    r"hits(@\d+)?|bleu|score)$", re.IGNORECASE)
SHOW_IDS = 3
#: A run is flagged as a copy of the gold answers when at least this share of the questions
#: with a gold answer (and at least COPY_MIN of them) have exactly the gold answer in the run.
COPY_SHARE = 0.9
COPY_MIN = 10
#: Default share of executed queries that may fail before the KG/endpoint is refused (``kg-failures``).
MAX_KG_FAILURES = 0.5
#: IRIs of each side looked up on the KG by the ``foreign-kg`` check.
FOREIGN_SAMPLE = 200
#: Fewer distinct IRIs than this on both sides together are too few to call a KG foreign.
FOREIGN_MIN = 10
#: Vocabularies any KG may use: never evidence that a KG belongs to a dataset.
COMMON_VOCABULARIES = ("http://www.w3.org/", "http://xmlns.com/foaf/", "http://purl.org/dc/", "http://schema.org/",
                       "https://schema.org/", "http://www.wikidata.org/prop/direct/P31")
#: The flag that lets each refusable code through on the command line.
ALLOW_FLAGS = {"not-a-run": "--allow-score-file", "gold-copy": "--allow-gold-copy", "foreign-kg": "--allow-foreign-kg"}


@dataclass(frozen=True)
class SetupWarning:
    """One set-up problem: ``code`` (see the module docstring), ``message`` (what is wrong),
    ``fix`` (what to do), ``run`` (the run it concerns, or None for the dataset)."""

    code: str
    message: str
    fix: str
    run: str | None = None
    error: bool = False

    def __str__(self) -> str:
        where = f"{self.run}: " if self.run else ""
        return f"{where}{self.message}; {self.fix}"


class SetupError(InputError):
    """A set-up that cannot give a meaningful score (no run id matches the dataset, queries
    without a KG to answer them): raised before scoring, with the fix in the message."""

    def __init__(self, problems: Sequence[SetupWarning]):
        self.problems = list(problems)
        super().__init__(self.problems[0].run or "set-up", "; ".join(
            f"{p.message}; {p.fix}" if i == 0 or p.run is None else f"{p.run}: {p.message}; {p.fix}"
            for i, p in enumerate(self.problems)))

    def __reduce__(self):  # pickled (worker processes) and rebuilt from the problems, not the text
        return (SetupError, (self.problems,))


def raise_errors(found: Sequence[SetupWarning]) -> list[SetupWarning]:
    """Raise :class:`SetupError` for the errors among ``found``; return the warnings."""
    errors = [w for w in found if w.error]
    if errors:
        raise SetupError(errors)
    return list(found)


def _ids(ids: Iterable[str]) -> str:
    ids = list(ids)
    shown = ", ".join(repr(i) for i in ids[:SHOW_IDS])
    return shown + (f" (+{len(ids) - SHOW_IDS} more)" if len(ids) > SHOW_IDS else "")


def _languages(dataset: Dataset) -> list[str]:
    if not hasattr(dataset, "items"):  # a streamed dataset counts its languages as it is read
        return list(getattr(dataset, "languages", []))
    langs: dict[str, None] = {}
    for it in dataset.items:
        for lang in (*it.questions, *it.lang_ids):
            langs.setdefault(lang, None)
    return list(langs)


def _looks_like_scores(run: Run) -> bool:
    """Most entries carry only a bag of measure values in [0, 1] (``{"set_P": 1.0, ...}``)."""
    if not run.predictions:
        return False
    hits = 0
    for p in run.predictions:
        bag = getattr(p, "bag", None)
        if bag is None:  # the common case, without the (slow) isinstance check against Mapping
            continue
        if isinstance(bag, Mapping) and bag and all(_SCORE_KEY.match(str(k)) for k in bag) and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1 for v in bag.values()):
            hits += 1
    return hits * 2 > len(run.predictions)


def check_setup(dataset: Dataset, runs: Sequence[Run], *, kg: Any = None, lang: str | None = None,
                full_dataset: Dataset | None = None,
                executions: Mapping[str, Mapping[str, Outcome]] | None = None,
                ids: Sequence[str] | None = None, query_measures: bool = False,
                allow: Iterable[str] = ()) -> list[SetupWarning]:
    """Set-up problems of an evaluation (see the module docstring).

    ``dataset``: the scoring units (after ``--lang``); ``full_dataset``: before language
    selection (used to name the available languages); ``kg``: what ``--kg`` names (None: no
    execution); ``executions``: run name -> {question id: executed outcome of the run's query};
    ``ids``: the dataset's question ids when ``dataset`` is streamed (not held in memory);
    ``query_measures``: some selected measure scores queries without answers (then queries
    without a KG are a warning, not an error); ``allow``: codes that stay warnings (``not-a-run``,
    ``gold-copy``), errors otherwise.
    """
    allow = set(allow)
    out: list[SetupWarning] = []
    ids = [it.id for it in dataset.items] if ids is None else list(ids)
    n = len(ids)
    if n == 0:
        langs = _languages(full_dataset if full_dataset is not None else dataset)
        if langs:
            fix = f"the dataset has languages {', '.join(langs)}: pass --lang {langs[0]} (or --lang all)"
        else:
            fix = "check the dataset file (it loaded no questions; see `kgqa datasets validate`)"
        sel = f" for --lang {lang}" if lang and lang != "all" else ""
        out.append(SetupWarning("empty-dataset", f"the dataset has no questions{sel} (n = 0)", fix))
    id_set: set[str] | None = None
    for run in runs:
        if _looks_like_scores(run):
            src = ", ".join(str(s) for s in run.source) or run.name
            out.append(SetupWarning(
                "not-a-run", f"{src} looks like an evaluation/score file (per-question precision/recall/F values), "
                             "not a system's answers",
                "pass the system's answers or result set (e.g. ck25_answers.json or ck25_system_result_set.json)"
                + _allow_hint("not-a-run", allow), run.name, error="not-a-run" not in allow))
        run_ids = [p.id for p in run.predictions]
        if n:
            have = set(run_ids)  # what `i in run` looks up, without a method call per id
            missing = [i for i in ids if i not in have]
            if len(missing) == n:
                extra = run_ids[:SHOW_IDS + 1]
                langs = _languages(full_dataset if full_dataset is not None else dataset)
                lang_hint = ("select one language with --lang (the run's ids look language-suffixed) or "
                             if langs and any(re.search(r"[-_:.]([a-z]{2,3})$", e) for e in extra) else "")
                src = ", ".join(str(s) for s in run.source) or run.name
                what = (f"no entry of {src} matches a question id of the dataset (dataset ids: {_ids(ids)}; "
                        f"run ids: {_ids(run_ids)})" if run_ids else f"{src} has no entries")
                out.append(SetupWarning(
                    "ids", what, f"{lang_hint}check that the run belongs to this dataset, or map its ids "
                                 "(e.g. with --run-option)", run.name, error=True))
            elif len(missing) * 2 > n:
                id_set = set(ids) if id_set is None else id_set
                extra = [i for i in run_ids if i not in id_set]
                hint = []
                langs = _languages(full_dataset if full_dataset is not None else dataset)
                if extra and any(re.search(r"[-_:.]([a-z]{2,3})$", e) for e in extra[:20]) and langs:
                    hint.append("the run's ids look language-suffixed: select one language with --lang")
                hint.append("map the run's ids to the dataset's (e.g. with --run-option) or check that the run "
                            "belongs to this dataset")
                unmatched = f"; run ids not in the dataset: {_ids(extra)}" if extra else "; the run has no other ids"
                out.append(SetupWarning(
                    "ids", f"{len(missing)} of {n} questions have no entry in the run (first: {_ids(missing)})"
                           f"{unmatched}", "; ".join(hint), run.name))
        if kg is None and run.predictions:
            query_only = [p for p in run.predictions if p.sparql and p.answer is None and p.ranked is None]
            if query_only and len(query_only) * 2 > len(run.predictions):
                out.append(SetupWarning(
                    "no-kg", f"{len(query_only)} of {len(run.predictions)} run entries have a query but no answer, "
                             "and no KG was given: they would all score as missing",
                    "pass --kg (RDF file(s), a store directory, a SPARQL endpoint URL or a registry KG name "
                    "such as ck25) to execute the queries, or select query measures only (-m QueryEM,BLEU)",
                    run.name, error=not query_measures))
        if copy := _gold_copy(dataset, run, allow):
            out.append(copy)
        out += transport_warnings(run.name, (executions or {}).get(run.name, {}).values())
    return out


def _allow_hint(code: str, allow: set[str]) -> str:
    return "" if code in allow else f" ({ALLOW_FLAGS[code]} to score it anyway)"


def _gold_copy(dataset: Dataset, run: Run, allow: set[str] = frozenset()) -> SetupWarning | None:
    """``gold-copy``: the run's answers equal the gold answers on (nearly) every question that
    has one (compared as sets of lexical values, the loosest reading of both), and none of
    those predictions carries a query of its own (a system whose own queries find the gold
    answers is good, not a copy; a dataset given as its own run carries the gold queries)."""
    items = getattr(dataset, "items", None)
    if not items or not run.predictions:
        return None

    with_gold = sum(it.answer is not None for it in items)
    if with_gold < COPY_MIN:
        return None
    lexical = TermMatching(mode="lexical")
    allowed = with_gold - COPY_SHARE * with_gold  # differences a copy may have; stop once past them
    equal = differ = 0
    for it in items:
        if it.answer is None:
            continue
        p = run.get(it.id)
        if p is not None and p.answer is not None and not _own_query(p.sparql, it.sparql) and \
                answer_items(p.answer, lexical) == answer_items(it.answer, lexical):
            equal += 1
        else:
            differ += 1
            if differ > allowed:
                return None
    src = ", ".join(str(s) for s in run.source) or run.name
    return SetupWarning(
        "gold-copy", f"{src}: the answers equal the dataset's gold answers on {equal} of {with_gold} questions: "
                     "a copy of the gold answers?",
        "score the system's own answers or queries (a copy of gold says nothing about a system)"
        + _allow_hint("gold-copy", allow), run.name, error="gold-copy" not in allow)


def _own_query(sparql: str | None, gold: str | None) -> bool:
    """The prediction carries a query of its own (not the gold query, spaces aside): its
    answer is what that query found, a system's work, never a copy of the gold answer."""
    return bool(sparql) and " ".join(sparql.split()) != " ".join((gold or "").split())


def transport_warnings(run: str, outcomes: Iterable[Outcome]) -> list[SetupWarning]:
    """The ``transport`` check alone (for a run whose other checks were made before execution):
    more than half of ``outcomes`` failed for the same transient reason."""
    outcomes = list(outcomes)
    if not outcomes:  # answers-only scoring: nothing executed
        return []
    reasons = Counter(_reason(o) for o in outcomes if is_transient(o))
    if not reasons:
        return []
    reason, count = reasons.most_common(1)[0]
    if count * 2 <= len(outcomes):
        return []
    return [SetupWarning("transport", f"{count} of {len(outcomes)} executions failed for the same transient reason: "
                                      f"{reason}",
                         "fix the KG/endpoint set-up and rerun (transient failures are not cached)", run)]


def _reason(o: Outcome) -> str:
    """A transient failure's reason with counts of attempts and timings removed (so that the
    same cause groups together)."""
    text = transient_reason(o)
    text = re.sub(r"\s*\(gave up after .*$", "", text)
    text = re.sub(r"\d+(\.\d+)? s\b", "N s", text)
    return text.strip()


def _query_iris(query: str | None) -> set[str]:
    """The entity, predicate and class IRIs a query names (none when it does not parse)."""
    if not query or not query.strip():
        return set()
    try:
        info = _analyzer.analyze(query)
    except Exception:  # noqa: BLE001 - a query kgqa cannot read names no IRI for this check
        return set()
    return {i.value for i in (*info.entities, *info.predicates, *info.classes)}


def side_iris(answers: Iterable[Any], queries: Iterable[str | None]) -> list[str]:
    """A sample (:data:`FOREIGN_SAMPLE`, spread over the sorted list) of the IRIs of one side's
    answers and queries, without the common vocabularies (:data:`COMMON_VOCABULARIES`)."""
    found = iris_of(answers)
    for q in queries:
        found |= _query_iris(q)
    usable = sorted(i for i in found if not i.startswith(COMMON_VOCABULARIES) and ">" not in i and " " not in i
                    and "\\" not in i and "\n" not in i)
    if len(usable) <= FOREIGN_SAMPLE:
        return usable
    step = len(usable) / FOREIGN_SAMPLE
    return [usable[int(k * step)] for k in range(FOREIGN_SAMPLE)]


def foreign_kg(executor: Any, kg_name: str, dataset: Dataset, run: Run, timeout: float = 30.0,
               allow: Iterable[str] = ()) -> SetupWarning | None:
    """``foreign-kg``: the KG holds none of the (sampled) IRIs of the gold answers and queries,
    nor of the run's answers and queries, in any position (at least :data:`FOREIGN_MIN` distinct
    IRIs: fewer say little). One lookup query per side; a lookup that fails says nothing (the ``kg-failures`` check sees a broken KG)."""
    items = getattr(dataset, "items", None) or []
    gold = side_iris((it.answer for it in items), (it.sparql for it in items))
    pred = side_iris((p.answer for p in run.predictions), (p.sparql for p in run.predictions))
    if len({*gold, *pred}) < FOREIGN_MIN:
        return None
    for sample in (gold, pred):
        if not sample:
            continue
        values = " ".join(f"<{x}>" for x in sample)
        query = (f"SELECT ?x WHERE {{ VALUES ?x {{ {values} }} {{ ?x ?p ?o }} UNION {{ ?s ?x ?o }} UNION "
                 f"{{ ?s ?p ?x }} }} LIMIT 1")
        out = executor.execute(query, timeout=timeout)
        if out.status.failed or getattr(out.answer, "rows", None):
            return None  # found one (or cannot tell)
    allow = set(allow)
    return SetupWarning(
        "foreign-kg", f"the KG {kg_name} contains none of the dataset's gold IRIs ({_ids(gold) or 'none'}) nor "
                      f"of the run's ({_ids(pred) or 'none'}): a KG of another dataset?",
        "pass the dataset's KG with --kg" + _allow_hint("foreign-kg", allow), run.name,
        error="foreign-kg" not in allow)


def kg_failures(run: str, kg_name: str, outcomes: Iterable[Outcome],
                max_share: float = MAX_KG_FAILURES) -> SetupWarning | None:
    """``kg-failures``: more than ``max_share`` of the executed queries (``outcomes``: gold and
    predicted, refusals by the sandbox left out) failed with EXEC_ERROR or TIMEOUT, whatever the
    cause; names the most common reason. An error: the scores would measure the KG, not the run."""

    done = [o for o in outcomes if o.status is not Status.REFUSED]
    failed = [o for o in done if o.status in (Status.EXEC_ERROR, Status.TIMEOUT)]
    if not done or len(failed) <= max_share * len(done):
        return None
    reason, count = Counter(_reason(o) or o.status.value for o in failed).most_common(1)[0]
    return SetupWarning(
        "kg-failures", f"{len(failed)} of {len(done)} queries executed on {kg_name} failed (more than "
                       f"{max_share:.0%}); most often ({count}): {reason[:300]}",
        "check the KG / endpoint (--kg) and rerun (failures of the endpoint are not cached), or pass "
        "--max-kg-failures 1 to score anyway", run, error=True)
