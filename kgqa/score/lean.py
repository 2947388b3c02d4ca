"""The lean path of a streamed answers-only evaluation: a JSONL dataset whose every line is the
common flat record (``id``, ``question``, ``answers`` as strings, ``sparql``) scored by measures
that read only answer counts (set_P / set_recall / set_F and the like), without making an
:class:`~kgqa.model.Item`, a term or a :class:`~kgqa.score.rules.Counts` per question.

Per question it keeps the id, the outcome label and three integers (|S∩G|, |S|, |G|), in
columns; the measures' vector forms then read those columns (a rule's (P, R, F) a column at a
time, see :data:`kgqa.score.rules.RULE_COLUMNS`). :func:`score_flat` returns None as soon as
it meets anything it does not decide exactly as :func:`kgqa.score.evaluate.evaluate` does (a
line holding another record, a duplicate id, a measure scored question by question, a graded
gold bag, a system answer that is not a set of strings, ...): the caller then scores by the
general path, so every number is the same either way (``tests/test_lean.py`` holds the two
equal).
"""

from __future__ import annotations

from array import array
from collections import Counter
from typing import Any

from kgqa.load.generic import flat_answer_blocks
from kgqa.model import Outcome, Run, Status
from kgqa.model.answer import TextColumn
from kgqa.score.answer_measures import _item_flagged
from kgqa.score.measures import Columns, Inputs
from kgqa.score.profiles import Profile
from kgqa.score.rules import CountsColumn

#: gates (MeasureDef.gate) that read only an item's metadata, which a flat record does not have:
#: they let no flat question through
_METADATA_GATES = frozenset({_item_flagged})


def applies(profile: Profile) -> bool:
    """Whether :func:`score_flat` can score under ``profile``: answers-only measures, each with a
    vector form over every question (no ``over: processed``), gates that read metadata only, a
    set view."""
    measures = [s.measure for s in profile.measures]
    return (bool(measures) and profile.view in ("values", "tuples")
            and all(m.inputs == Inputs() and m.vector is not None for m in measures)
            and all(m.defn.gate is None or m.defn.gate in _METADATA_GATES for m in measures)
            and all(s.over == "all" for s in profile.measures))


def score_flat(dataset: Any, run: Run, profile: Profile, signature_extra: Any = None) -> Any:
    """The :class:`~kgqa.score.evaluate.ScoredRun` of ``run`` on the streamed JSONL ``dataset``
    (a :class:`~kgqa.load.stream.DatasetStream`) by the lean path, or None where the general
    path must score it (see the module docstring). Sets the stream's ``count``, ``languages``
    and ``problems`` as reading it would."""
    from kgqa.score.evaluate import _collect, _finish

    if not applies(profile) or not hasattr(dataset, "source"):
        return None
    m, view = profile.matching, profile.view
    lexical = m.mode == "lexical" and m.links is None and m.labels is None  # text_keys(texts) is texts
    text_keys = m.text_keys
    zero_failures, zero_missing, skip_missing = profile.failures == "zero", profile.missing == "zero", \
        profile.missing == "skip"
    sys_side = "system" if profile.qrels else None
    specs = list(profile.measures)
    measures = [s.measure for s in specs]
    run_get = run._by_id.get if type(run) is Run else run.get
    ok, missing_status, text_column = Status.OK, Status.MISSING, TextColumn
    gold_reason = "no gold answer (execute the gold queries with --kg)"

    ids: list[str] = []
    labels: list[str] = []
    sources: list[Any] = []
    tps, nss, ngs = array("q"), array("q"), array("q")
    rare: dict[int, tuple[str, bool]] = {}  # position -> (message, failed) of a question off the common case
    seen: set[str] = set()
    skipped: list[dict[str, str]] = []
    missing_ids: list[str] = []
    outcome_counter: Counter[str] = Counter()
    lines = 0
    for block in flat_answer_blocks(dataset.source):
        if block is None:
            return None
        block_ids, block_answers = block
        lines += len(block_ids)
        for iid, gold in zip(block_ids, block_answers):
            if iid in seen:
                return None  # a duplicate id: the general path lists it as a problem
            seen.add(iid)
            if gold is None:
                skipped.append({"id": iid, "reason": gold_reason})
                continue
            gold_items = frozenset(gold if lexical else text_keys(gold))
            pred = run_get(iid)
            if (pred is not None and pred.status is ok and pred.bag is None
                    and pred.answer.__class__ is text_column):  # the stored bare strings
                texts = pred.answer.texts
                sys_items = frozenset(texts if lexical else text_keys(texts))
                label = "ok" if texts else "empty"
                sources.append(pred)
            else:  # evaluate's general system side, for this question alone
                if pred is None:
                    outcome = Outcome.missing()
                    missing_ids.append(iid)
                    if skip_missing:
                        skipped.append({"id": iid, "reason": "not in the run (profile rule missing=skip)"})
                        outcome_counter["missing"] += 1
                        continue
                elif pred.bag is not None:
                    return None  # a graded bag (Text2SPARQL result sets): the general path reads it
                else:
                    outcome = pred.outcome()
                status = outcome.status
                failed = status is not ok
                zero = failed and (zero_failures if status is not missing_status else zero_missing)
                sys_items = _collect(outcome.answer if not failed else None, m, view, sys_side)
                if sys_items.__class__ is not frozenset:
                    return None
                if view == "tuples":
                    sys_items = frozenset(k for (k,) in sys_items) if all(len(k) == 1 for k in sys_items) else None
                    if sys_items is None:
                        return None
                label = outcome.label
                rare[len(ids)] = (outcome.message, zero)
                sources.append((None, pred, outcome, None))
            outcome_counter[label] += 1
            ids.append(iid)
            labels.append(label)
            ns, ng = len(sys_items), len(gold_items)
            tps.append(len(gold_items & sys_items) if ns and ng else 0)
            nss.append(ns)
            ngs.append(ng)
    if hasattr(dataset, "count"):  # what reading the stream would have set
        dataset.problems, dataset.count = [], lines
        dataset.languages = [dataset._lang] if lines else []
        dataset.unit_languages = []
    n = len(ids)
    counts = CountsColumn(tps, nss, ngs)
    failed_flags = [False] * n
    messages: Any = [""] * n
    for k, (message, zero) in rare.items():
        messages[k], failed_flags[k] = message, zero
    equal = [t == s and t == g for t, s, g in zip(tps, nss, ngs)]  # G == S for sets
    calls = [(mm.defn.item, mm.folder, mm.kwargs) for mm in measures]
    vectors = [mm.vector for mm in measures]
    return _finish(dataset, run, profile, signature_extra, None, True, calls, vectors, {},
                   Columns(counts, failed_flags, labels, equal), ids, messages, sources, None,
                   [[] for _ in specs], [[] for _ in specs], seen, skipped, missing_ids, outcome_counter, {})
