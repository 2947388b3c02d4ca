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
general path, so every number is the same either way (``tests/score/test_lean.py`` holds the two
equal).

A dataset file of :data:`PARALLEL_BYTES` or more is cut into byte ranges of whole lines
(:data:`CHUNK_BYTES` each) scored by two processes where a second core is there: this one takes
ranges from the front, a forked one (sharing the run already in memory) from the back, each the
next as it gets free (:class:`kgqa.model.fork.Deal`), and the child sends back its columns,
joined in order: the same columns as one process makes. A range the child did not score (it
failed) is scored here.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgqa.load.generic import flat_answer_blocks, line_start_near
from kgqa.model import InputError, Outcome, Run, Status, fork
from kgqa.model.answer import TextColumn
from kgqa.model.run import QUERY_NOT_EXECUTED
from kgqa.score.answer_measures import item_flagged
from kgqa.score.measures import Columns, Inputs
from kgqa.score.profiles import Profile
from kgqa.score.rules import CountsColumn
from kgqa.score.scored import NO_GOLD, NOT_EXECUTED, SKIPPED_MISSING, collect, finish

#: gates (MeasureDef.gate) that read only an item's metadata, which a flat record does not have:
#: they let no flat question through
_METADATA_GATES = frozenset({item_flagged})

#: a single dataset file of this many bytes or more (about 60,000 flat records) is scored in
#: two processes where two cores are available
PARALLEL_BYTES = 8 << 20
#: bytes of one range of lines dealt to a process
CHUNK_BYTES = 4 << 20


def applies(profile: Profile) -> bool:
    """Whether :func:`score_flat` can score under ``profile``: answers-only measures, each with a
    vector form over every question (no ``over: processed``), gates that read metadata only, a
    set view."""
    measures = [s.measure for s in profile.measures]
    return (bool(measures) and profile.view in ("values", "tuples")
            and all(m.inputs == Inputs() and m.vector is not None for m in measures)
            and all(m.defn.gate is None or m.defn.gate in _METADATA_GATES for m in measures)
            and all(s.over == "all" for s in profile.measures))


class _Part:
    """What one byte range of the dataset gave: per scored question its id, outcome label and
    (|S∩G|, |S|, |G|); ``rare``: position -> (message, failed, outcome) of the questions off
    the common case (a missing or failed answer); what was skipped; lines read."""

    __slots__ = ("ids", "labels", "tps", "nss", "ngs", "rare", "skipped", "missing_ids", "skipped_missing", "lines")

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.labels: list[str] = []
        self.tps, self.nss, self.ngs = array("q"), array("q"), array("q")
        self.rare: dict[int, tuple[str, bool, Outcome]] = {}
        self.skipped: list[dict[str, str]] = []
        self.missing_ids: list[str] = []
        self.skipped_missing = 0
        self.lines = 0

    def __getstate__(self) -> tuple:
        return tuple(getattr(self, k) for k in self.__slots__)

    def __setstate__(self, state: tuple) -> None:
        for k, v in zip(self.__slots__, state):
            setattr(self, k, v)

    def extend(self, other: "_Part") -> None:
        at = len(self.ids)
        self.ids += other.ids
        self.labels += other.labels
        self.tps += other.tps
        self.nss += other.nss
        self.ngs += other.ngs
        self.rare.update((at + k, v) for k, v in other.rare.items())
        self.skipped += other.skipped
        self.missing_ids += other.missing_ids
        self.skipped_missing += other.skipped_missing
        self.lines += other.lines


def _scan(paths: list[Path], start: int, end: int | None, run: Run, profile: Profile) -> _Part | None:
    """The lean path over the lines of ``paths`` (or the byte range ``start``-``end`` of the one
    file), or None where it declines."""
    gold_reason = NO_GOLD
    m, view = profile.matching, profile.view
    lexical = m.mode == "lexical" and m.links is None and m.labels is None  # text_keys(texts) is texts
    text_keys = m.text_keys
    zero_failures, zero_missing, skip_missing = profile.failures == "zero", profile.missing == "zero", \
        profile.missing == "skip"
    sys_side = "system" if profile.qrels else None
    run_get = run._by_id.get if type(run) is Run else run.get
    ok, missing_status, text_column = Status.OK, Status.MISSING, TextColumn
    part = _Part()
    ids, labels, rare, skipped = part.ids, part.labels, part.rare, part.skipped
    add_tp, add_ns, add_ng = part.tps.append, part.nss.append, part.ngs.append
    try:
        for block in flat_answer_blocks(paths, start, end):
            if block is None:
                return None
            block_ids, block_answers = block
            part.lines += len(block_ids)
            for iid, gold in zip(block_ids, block_answers):
                if gold is None:
                    skipped.append({"id": iid, "reason": gold_reason})
                    continue
                gold_items = frozenset(gold if lexical else text_keys(gold))
                pred = run_get(iid)
                if (pred is not None and pred.status is ok and pred.bag is None
                        and pred.answer.__class__ is text_column):  # the stored bare strings
                    texts = pred.answer.texts
                    sys_items = frozenset(texts if lexical else text_keys(texts))
                    labels.append("ok" if texts else "empty")
                else:  # evaluate's general system side, for this question alone
                    if pred is None:
                        outcome = Outcome.missing()
                        part.missing_ids.append(iid)
                        if skip_missing:
                            skipped.append({"id": iid, "reason": SKIPPED_MISSING})
                            part.skipped_missing += 1
                            continue
                    elif pred.bag is not None:
                        return None  # a graded bag (Text2SPARQL result sets): the general path reads it
                    else:
                        outcome = pred.outcome()
                    status = outcome.status
                    failed = status is not ok
                    zero = failed and (zero_failures if status is not missing_status else zero_missing)
                    sys_items = collect(outcome.answer if not failed else None, m, view, sys_side)
                    if sys_items.__class__ is not frozenset:
                        return None
                    if view == "tuples":
                        if not all(len(k) == 1 for k in sys_items):
                            return None
                        sys_items = frozenset(k for (k,) in sys_items)
                    rare[len(ids)] = (outcome.message, zero, outcome)
                    labels.append(outcome.label)
                ids.append(iid)
                ns, ng = len(sys_items), len(gold_items)
                add_tp(len(gold_items & sys_items) if ns and ng else 0)
                add_ns(ns)
                add_ng(ng)
    except InputError:
        return None  # a byte that is not UTF-8: the general path says where
    return part


class _Sources(Sequence):
    """What each question's record is made from (see :class:`~kgqa.score.evaluate.QuestionList`),
    looked up when read: a stored answer's prediction, or (None, prediction, outcome, None)
    for a question off the common case."""

    __slots__ = ("_ids", "_get", "_rare")

    def __init__(self, ids: list[str], run: Run, rare: dict[int, Outcome]):
        self._ids, self._get, self._rare = ids, run._by_id.get if type(run) is Run else run.get, rare

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self._ids)))]
        pred = self._get(self._ids[i])
        outcome = self._rare.get(i if i >= 0 else i + len(self._ids))
        return pred if outcome is None else (None, pred, outcome, None)


def _ranges(path: Path, size: int) -> list[tuple[int, int]]:
    """``path`` cut into byte ranges of whole lines of about :data:`CHUNK_BYTES` each."""
    starts = sorted({line_start_near(path, k * CHUNK_BYTES) for k in range(-(-size // CHUNK_BYTES))})
    bounds = [s for s in starts if s < size] + [size]
    return list(zip(bounds, bounds[1:]))


def _scan_dealt(paths: list[Path], ranges: list[tuple[int, int]], deal: fork.Deal, front: bool, run: Run,
                profile: Profile) -> dict[int, _Part] | None:
    """:func:`_scan` of each range ``deal`` gives this process (``front``: the parent), by
    number; None where one declines (and no more ranges are dealt)."""
    out: dict[int, _Part] = {}
    while (k := deal.take(front)) is not None:
        part = _scan(paths, *ranges[k], run, profile)
        if part is None:
            deal.stop()
            return None
        out[k] = part
    return out


def score_flat(dataset: Any, run: Run, profile: Profile, signature_extra: Any = None) -> Any:
    """The :class:`~kgqa.score.evaluate.Evaluation` of ``run`` on the streamed JSONL ``dataset``
    (a :class:`~kgqa.load.stream.DatasetStream`) by the lean path, or None where the general
    path must score it (see the module docstring). Sets the stream's ``count``, ``languages``
    and ``problems`` as reading it would."""
    if not applies(profile) or not hasattr(dataset, "source"):
        return None
    paths = list(dataset.source)
    size = paths[0].stat().st_size if len(paths) == 1 else 0
    ranges = _ranges(paths[0], size) if size >= PARALLEL_BYTES else []
    deal = fork.dealer(len(ranges))
    child = fork.forked(_scan_dealt, paths, ranges, deal, False, run, profile) if deal is not None else None
    if child is None:
        part = _scan(paths, 0, None, run, profile)
    else:
        mine = None
        try:
            mine = _scan_dealt(paths, ranges, deal, True, run, profile)
        finally:
            if mine is None:  # declined or failed here: the child stops after its range
                deal.stop()  # type: ignore[union-attr]
            theirs = child()
        if mine is None or theirs is None:
            return None
        parts = {**mine, **({} if theirs is fork.FAILED else theirs)}
        for k, (start, end) in enumerate(ranges):  # a range the child took but did not send back
            if k not in parts:
                parts[k] = _scan(paths, start, end, run, profile)  # type: ignore[assignment]
                if parts[k] is None:
                    return None
        part = parts[0]
        for k in range(1, len(ranges)):
            part.extend(parts[k])
    if part is None:
        return None
    seen = set(part.ids)
    seen.update(s["id"] for s in part.skipped)
    if len(seen) != part.lines:
        return None  # a duplicate id: the general path lists it as a problem
    if hasattr(dataset, "count"):  # what reading the stream would have set
        dataset.problems, dataset.count = [], part.lines
        dataset.languages = [dataset._lang] if part.lines else []
        dataset.unit_languages = []
    ids, n = part.ids, len(part.ids)
    counts = CountsColumn(part.tps, part.nss, part.ngs)
    sources = _Sources(ids, run, {k: outcome for k, (_m, _z, outcome) in part.rare.items()})
    failed_flags = [False] * n
    messages: Any = [""] * n
    for k, (message, zero, _outcome) in part.rare.items():
        messages[k], failed_flags[k] = message, zero
    equal = [t == s and t == g for t, s, g in zip(part.tps, part.nss, part.ngs)]  # G == S for sets
    outcome_counter = Counter(part.labels)
    for _message, _zero, outcome in part.rare.values():  # query-only entries: as the general path counts them
        if outcome is not None and outcome.label == "missing" and outcome.message == QUERY_NOT_EXECUTED:
            outcome_counter["missing"] -= 1
            outcome_counter[NOT_EXECUTED] += 1
    outcome_counter = +outcome_counter  # drop zero counts
    if part.skipped_missing:
        outcome_counter["missing"] += part.skipped_missing
    measures = [s.measure for s in profile.measures]
    calls = [(mm.defn.item, mm.folder, mm.kwargs) for mm in measures]
    vectors = [mm.vector for mm in measures]
    return finish(dataset, run, profile, signature_extra, None, True, calls, vectors, {},
                   Columns(counts, failed_flags, part.labels, equal), ids, messages, sources, None,
                   [[] for _ in measures], [[] for _ in measures], seen, part.skipped, part.missing_ids,
                   outcome_counter, {})
