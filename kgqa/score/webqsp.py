"""WebQuestionsSP's official evaluation (``eval/eval.py`` of the WebQSP release, Yih et al.
2016; Microsoft Research, MIT licence), as the ``webqsp`` profile.

What the script does, and this module reproduces:

- a question is counted only when one of its parses has ``AnnotatorComment.QuestionQuality ==
  "Good"`` and ``ParseQuality == "Complete"`` (and it has a parse at all); others are skipped;
- per parse, ``CalculatePRF1(gold, pred)`` over *lists* of answer strings (the parse's
  ``AnswerArgument`` values, the prediction's ``Answers``): gold empty -> (1, 1, 1) if the
  prediction is empty too, else (0, 1, 0); prediction empty -> (1, 0, 0); otherwise TP counts
  gold entries found in the prediction (duplicates count), FN the others, FP prediction entries
  not in gold, starting from TP = 1e-40 ("numerical trick", so no F is 0/0);
- the question's P, R, F1 are those of the parse with the **best F1** (the first on a tie);
- a question the predictions lack is counted with P = R = F1 = 0;
- a gold QuestionId given twice is counted twice (eval.py loops over the records); a prediction
  QuestionId given twice: the last record (eval.py's dict), kept so by the run loader;
- answers are compared as the JSON values they are (``2005`` is not ``"2005"``, ``" m.x"`` is
  not ``"m.x"``): the run loader keeps the ``Answers`` list as written;
- reported: average precision, average recall, average F1 ("accuracy"), the F1 of the average
  recall and precision, and "true accuracy" (questions whose best F1 is exactly 1.0).

kgqa compares the same strings: a predicted answer term is written back as the release writes
it (an ``http://rdf.freebase.com/ns/m.x`` IRI as ``m.x``, any other term by its lexical form).
On a dataset of another format, the item's gold answer is the only parse and every question is
counted.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgqa.model import IRI, Status, TableAnswer
from kgqa.model.terms import FREEBASE_NS
from kgqa.score.measures import Inputs, ItemContext, MeasureDef, Param, nothing_scored, register

PARTS = ("P", "R", "F1", "EM")


def _argument(term) -> str:
    if isinstance(term, IRI):
        return term.value[len(FREEBASE_NS):] if term.value.startswith(FREEBASE_NS) else term.value
    return getattr(term, "value", str(term))


def calculate_prf1(gold: Sequence[str], pred: Sequence[str]) -> tuple[float, float, float]:
    """``CalculatePRF1`` of eval.py, on lists of answer strings."""
    if not gold:
        return (1.0, 1.0, 1.0) if not pred else (0.0, 1.0, 0.0)
    if not pred:
        return 1.0, 0.0, 0.0
    tp, fp, fn = 1e-40, 0.0, 0.0
    for g in gold:
        if g in pred:
            tp += 1
        else:
            fn += 1
    for p in pred:
        if p not in gold:
            fp += 1
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return precision, recall, (2 * precision * recall) / (precision + recall)


def best_parse(parses: Sequence[Sequence[str]], pred: Sequence[str]) -> tuple[float, float, float]:
    """P, R, F1 of the parse with the best F1 (the first of equals, as eval.py's ``>``)."""
    best = (-9999.0, -9999.0, -9999.0)
    for gold in parses:
        p, r, f = calculate_prf1(gold, pred)
        if f > best[2]:
            best = (p, r, f)
    return best


def _pred(ctx: ItemContext) -> list:
    """The prediction's answers as eval.py compares them: the ``Answers`` list as written
    (a run of another format: its answer terms written back as the release writes them)."""
    meta = ctx.prediction.metadata or {}
    if "webqsp_answers" in meta:
        raw = meta["webqsp_answers"]
        return raw if isinstance(raw, list) else []  # eval.py stops there (the loader warns)
    ans = ctx.outcome.answer if ctx.outcome.status is Status.OK else None
    return [_argument(c) for row in ans.rows for c in row if c is not None] if isinstance(ans, TableAnswer) else []


def _records(ctx: ItemContext) -> list[tuple[float, float, float]]:
    """(P, R, F1) of every gold record of this id that eval.py counts (a QuestionId the gold file
    repeats is counted once per record; see ``metadata["webqsp_repeats"]``)."""
    meta = ctx.item.metadata
    parses = meta.get("parse_arguments")
    if parses is None:  # another dataset format: its gold answer is the one parse, counted
        gold = ctx.item.answer
        if gold is None:
            return []
        parses = [[_argument(c) for row in gold.rows for c in row if c is not None]] \
            if isinstance(gold, TableAnswer) else [[]]
        records = [(True, parses)]
    else:
        records = [(meta.get("webqsp_counted", True), parses), *meta.get("webqsp_repeats", ())]
    out = []
    for counted, record_parses in records:
        if not counted or not record_parses:
            continue
        if ctx.prediction is None:  # not in the prediction set: counted, contributing nothing
            out.append((0.0, 0.0, 0.0))
        else:
            out.append(best_parse(record_parses, _pred(ctx)))
    return out


def _question(ctx: ItemContext) -> tuple[float, float, float] | None:
    recs = _records(ctx)
    return recs[0] if recs else None


def _value(prf: tuple[float, float, float], part: str) -> float:
    if part == "EM":
        return 1.0 if prf[2] == 1.0 else 0.0
    return prf[PARTS.index(part)]


def _item(ctx: ItemContext, part: str) -> float | None:
    prf = _question(ctx)
    return None if prf is None else _value(prf, part)


def _fold(ctx: ItemContext, part: str = "F1") -> list[tuple[float, float, float]]:
    return _records(ctx)


def _sums(folds) -> tuple[int, float, float, float, int]:
    """eval.py's running sums in its order: total, precSum, recSum, f1sum, numCorrect."""
    total, prec, rec, f1, correct = 0, 0.0, 0.0, 0.0, 0
    for recs in folds:
        for p, r, f in recs or ():
            total += 1
            prec += p
            rec += r
            f1 += f
            correct += f == 1.0
    if total == 0:
        raise nothing_scored("WebQSP eval.py", "no question has a Good/Complete parse (eval.py divides by zero)")
    return total, prec, rec, f1, correct


def _aggregate(folds, values, part: str) -> float:
    total, prec, rec, f1, correct = _sums(folds)
    return {"P": prec, "R": rec, "F1": f1, "EM": correct}[part] / total


register(MeasureDef(
    name="WebQSP",
    definition=(
        "WebQuestionsSP's official eval.py: per question the precision, recall or F1 (`part`; EM: 1 iff "
        "that F1 is exactly 1, the script's 'true accuracy') of the parse whose answers give the best F1 "
        "against the prediction, over lists of answer values as written (CalculatePRF1: gold empty -> 1 if the "
        "prediction is empty too, else P=0,R=1,F=0; prediction empty -> P=1,R=0,F=0; TP from 1e-40; a JSON "
        "number never equals a string, padding counts); questions without a Good/Complete parse are not "
        "counted, questions the predictions lack count 0, a QuestionId the gold file repeats counts per record."
    ),
    convention="answer",
    item=_item,
    aggregate=_aggregate,
    fold=_fold,
    inputs=Inputs(answers=False),
    params=(Param("part", "F1", PARTS, "P, R, F1, or EM (best F1 == 1)"),),
))


def _f1_of_averages(folds, values) -> float:
    total, prec, rec, _f1, _correct = _sums(folds)
    p, r = prec / total, rec / total
    return 2 * r * p / (r + p)  # eval.py: ZeroDivisionError when both are 0; kgqa: see below


def _f1_of_averages_guarded(folds, values) -> float:
    try:
        return _f1_of_averages(folds, values)
    except ZeroDivisionError:  # eval.py stops here (both averages 0); kgqa reports 0.0
        return 0.0


register(MeasureDef(
    name="WebQSPF1avg",
    definition=("WebQuestionsSP eval.py's 'F1 of average recall and average precision': 2·mean(R)·mean(P) / "
                "(mean(R)+mean(P)) over the counted questions, per-question P and R as in WebQSP. Corpus-level only "
                "(0.0 where both means are 0: eval.py divides by zero there)."),
    convention="answer",
    item=lambda ctx: None,
    aggregate=_f1_of_averages_guarded,
    fold=lambda ctx: _records(ctx),
    inputs=Inputs(answers=False),
))
