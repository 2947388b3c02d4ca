"""QALD's official evaluation script (``evaluation.rb`` of ag-sc/QALD, QALD-6 onwards; the
last version, which prints the F of averaged P and R), as the ``qald`` profile.

What the script does (line numbers of ``6/scripts/evaluation.rb`` at commit ceabb5f), and this
module reproduces:

- ``read_answers`` (l. 21-50): a question's answers are its rows, each the **multiset** of its
  bound values (``value["value"]`` of every variable, l. 33-36), each value passed through
  ``normalize``; a boolean answer object contributes the boolean itself (l. 38-39); the rows
  of a question are then made unique (``answers.uniq``, l. 46; Multiset defines ``hash`` and
  ``eql?`` by value). A question without ``answers`` has no rows;
- ``normalize`` (l. 52-59): a value of ASCII digits only becomes ``"N.0"``; any other value is
  stripped (Ruby's ``strip``: ASCII whitespace, and NUL at the end) and percent-unescaped
  (``URI.unescape``: every ``%XX``, ``+`` kept);
- a question is **processed** when the system file has it, whatever its answers (l. 69-76);
  an unprocessed question scores P = R = F = 0 (l. 124-127);
- per processed question (l. 104-123): empty gold -> 1, 1, 1 when the system has no row too,
  else 0, 0, 0; otherwise P = correct/|user| (1 when the user has no row), R = correct/|gold|,
  F = 2PR/(P+R) (0 when P = R = 0), where correct counts the user's rows found in gold;
- macro P and R over all questions (divided by the number of gold questions, l. 173-174) and
  over the processed ones (l. 152-153); micro P = Σcorrect/Σ|user| (processed and all alike),
  micro R = Σcorrect/Σ|gold| over processed (l. 146) or all (l. 166) questions; every F is
  ``fscore`` of the P and R it sits beside (l. 17-19), so the macro F1 is the F1 of the averaged
  P and R, never a mean of per-question F1.

Where the script stops (a value that is not a string makes ``strip`` raise), kgqa scores the
value by its text and lists the question in :func:`refused`; a duplicate question id in a file
is read as the script reads it, the last record winning (the loaders keep that record's answer
in ``metadata["qald_script_answer"]``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote_to_bytes

from kgqa.load.qald_json import LAST_ANSWER
from kgqa.model import BooleanAnswer, Status, TableAnswer
from kgqa.model.answer import from_results_json
from kgqa.score.measures import ItemContext, Inputs, MeasureDef, Param, register

_DIGITS = re.compile(r"[0-9]+")
_LEAD = " \t\n\v\f\r"
_TRAIL = " \t\n\v\f\r\0"


def normalize(value: str) -> str:
    """``normalize`` of evaluation.rb (l. 52-59)."""
    if _DIGITS.fullmatch(value):  # answer =~ /\A\d+\z/ (Ruby's \d is ASCII)
        return value + ".0"
    text = value.lstrip(_LEAD).rstrip(_TRAIL)  # String#strip
    if "%" not in text:
        return text
    # URI.unescape: each %XX to its byte, the string's encoding kept (invalid UTF-8 stays as bytes)
    return unquote_to_bytes(text).decode("utf-8", "surrogateescape")


def rows(answer: Any) -> list:
    """The question's answers as ``read_answers`` holds them: unique rows, each a multiset of
    normalised values (a sorted tuple of (value, count)), or a boolean."""
    out: list = []
    if isinstance(answer, BooleanAnswer):
        out.append(bool(answer.value))
    elif isinstance(answer, TableAnswer):
        for row in answer.rows:
            vals = [normalize(str(c.value)) for c in row if c is not None]
            out.append(tuple(sorted(Counter(vals).items())))
    return list(dict.fromkeys(out))  # answers.uniq keeps the first of equals, in order


def _answer(meta: dict | None, default: Any) -> Any:
    """The answer the script reads: the last record's when the file repeats the id."""
    if meta and LAST_ANSWER in meta:
        last = meta[LAST_ANSWER]
        return None if last is None else from_results_json(last)
    return default


def question(ctx: ItemContext) -> tuple[bool, float, float, float, int, int, int] | None:
    """(processed, P, R, F, |gold|, |user|, correct) of one question, as compute_results (None:
    the gold query was executed and failed, so there is no gold to compare with)."""
    g = ctx.gold_outcome
    if g is not None and g.status is not Status.OK:
        return None
    gold = rows(g.answer if g is not None else _answer(ctx.item.metadata, ctx.item.answer))
    if ctx.prediction is None:
        return False, 0.0, 0.0, 0.0, len(gold), 0, 0
    stored = ctx.outcome.answer if ctx.outcome.status is Status.OK else ctx.prediction.answer
    user = rows(_answer(ctx.prediction.metadata, stored))
    gold_set = set(gold)
    correct = sum(1 for x in user if x in gold_set)
    if not gold:
        p = r = f = 1.0 if not user else 0.0
    else:
        p = correct / len(user) if user else 1.0
        r = correct / len(gold)
        f = fscore(p, r)
    return True, p, r, f, len(gold), len(user), correct


def fscore(p: float, r: float) -> float:
    """``fscore`` of evaluation.rb (l. 17-19)."""
    return 0.0 if p == 0 and r == 0 else 2 * p * r / (p + r)


PARTS = ("P", "R", "F1")


def _item(ctx: ItemContext, part: str, agg: str, over: str) -> float | None:
    if agg == "micro" or part == "F1":
        return None  # corpus-level: micro sums, and the macro F1 is the F of averaged P and R
    q = question(ctx)
    if q is None or (over == "processed" and not q[0]):
        return None  # not in the system file: outside the processed questions
    return q[1 + PARTS.index(part)]


def _fold(ctx: ItemContext, part: str, agg: str, over: str) -> tuple | None:
    return question(ctx)


def measures(folds: Sequence[tuple]) -> dict[str, dict[str, tuple[float, float, float]]]:
    """Every figure the script prints: ``{"all"|"processed": {"micro"|"macro": (P, R, F)}}``
    (questions whose executed gold query failed, None, are left out)."""
    folds = [f for f in folds if f is not None]
    sum_p = sum_r = 0.0
    correct = gold_all = gold_proc = user = processed = 0
    for proc, p, r, _f, ng, nu, c in folds:
        gold_all += ng
        if proc:
            processed += 1
            gold_proc += ng
            user += nu
            correct += c
        sum_p += p  # unprocessed questions add 0
        sum_r += r
    total = len(folds)
    micro_p = correct / user if user else 0.0
    micro_r_proc = correct / gold_proc if gold_proc else 0.0
    micro_r_all = correct / gold_all if gold_all else 0.0
    macro_p_proc = sum_p / processed if processed else 0.0
    macro_r_proc = sum_r / processed if processed else 0.0
    macro_p_all = sum_p / total if total else 0.0
    macro_r_all = sum_r / total if total else 0.0
    return {
        "processed": {"micro": (micro_p, micro_r_proc, fscore(micro_p, micro_r_proc)),
                      "macro": (macro_p_proc, macro_r_proc, fscore(macro_p_proc, macro_r_proc))},
        "all": {"micro": (micro_p, micro_r_all, fscore(micro_p, micro_r_all)),
                "macro": (macro_p_all, macro_r_all, fscore(macro_p_all, macro_r_all))},
    }


def _aggregate(folds: Sequence[tuple], values: Any, part: str, agg: str, over: str) -> float:
    return measures(folds)[over][agg][PARTS.index(part)]


def refused(values: Sequence[Any]) -> bool:
    """Whether evaluation.rb would stop on one of these raw binding values (``strip`` of a
    value that is not a string raises NoMethodError)."""
    return any(not isinstance(v, str) for v in values)


register(MeasureDef(
    name="QALD",
    definition=(
        "QALD's evaluation.rb: per question, rows compared as multisets of their normalised values "
        "(digits -> 'N.0', stripped, percent-unescaped; unique rows; a boolean answer is the boolean); "
        "a question the system file lacks scores 0 and is not processed; empty gold -> 1 iff no row; "
        "no system row -> P=1, R=0; `part` P, R or F1; `agg` macro (mean P, mean R over `over`: all "
        "questions or processed = present in the system file; F1 = F of those means) or micro (summed "
        "correct / system rows / gold rows of `over`). Per question: P and R (the script's breakdown; its F1 "
        "there is fscore(P, R)); corpus-level for micro and for F1."
    ),
    convention="answer",
    item=_item,
    aggregate=_aggregate,
    fold=_fold,
    inputs=Inputs(answers=False),
    params=(Param("part", "F1", PARTS, "P, R or F1"),
            Param("agg", "macro", ("macro", "micro"), "macro or micro"),
            Param("over", "all", ("all", "processed"), "all gold questions, or those in the system file")),
))
