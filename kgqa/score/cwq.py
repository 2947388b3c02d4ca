"""ComplexWebQuestions' official evaluation script (``eval_script.py`` of v1.0, Talmor & Berant
2018), as the ``cwq`` profile.

The script reads one predicted answer text per question (``{"ID", "answer"}``) and counts a
question right (precision@1 = 100) when that text, **as written** (not lower-cased), equals

- a gold answer or alias lower-cased and stripped, or
- that text NFKD-folded to ASCII, every non-word character made a space, lower-cased, stripped,
  and a leading "the ", "a " or "an " removed, or
- when the question (lower-cased) contains "year": the first four-digit year (1000-2999) in a
  gold answer or alias;

the gold list is every answer's ``answer`` followed by its ``aliases``; a question whose list
holds a None scores 0; the score is the sum over the predictions divided by the number of
**dataset** questions (questions without a prediction count 0); every prediction row adds
its 1, so an ID given twice and right twice adds 2 (the run loader keeps every row in
``metadata["cwq_answers"]``). A dataset in the ``ID``/``question``/``answer`` shape some KBQA
codebases distribute (no ``answers``; the script stops on it) is read with ``answer`` as the
answers. kgqa reports it in [0, 1] (the
script prints a percentage). On datasets of other formats the gold list is the gold answer's
lexical forms (an empty one: not applicable), and a prediction of another run format is its
first answer value, lower-cased (as the script expects its predictions).
"""

from __future__ import annotations

import re
import unicodedata

from kgqa.model import Status, TableAnswer
from kgqa.score.measures import Inputs, ItemContext, MeasureDef, nothing_scored, register

_YEAR = re.compile(r"([1-2][0-9]{3})")


def preprocess(answer: str) -> str:
    """The script's answer normalisation (NFKD to ASCII, non-word characters to spaces, lower
    case, strip, a leading article removed)."""
    text = unicodedata.normalize("NFKD", answer).encode("ascii", "ignore").decode("utf-8")
    text = re.sub(r"\W", " ", text).lower().strip()
    for article in ("the ", "a ", "an "):  # one after the other, as the script's three ifs
        if text.startswith(article):
            text = text[len(article):]
    return text


def matches(span, gold: list, question: str) -> bool:
    """Whether the predicted text ``span`` matches the gold list (``compare_span_to_answer``
    with one span: anything found)."""
    spans = [span]
    answers = [str(a).lower().strip() for a in gold]
    has_year = question.lower().strip().find("year") > -1
    for answer in answers:
        if answer in spans or preprocess(answer) in spans:
            return True
        if has_year:
            m = _YEAR.search(answer)
            if m is not None and m.group(0) in spans:
                return True
    return False


def _item(ctx: ItemContext) -> float | None:
    meta = ctx.item.metadata
    gold = meta.get("cwq_gold")
    official = gold is not None
    if not official:  # another dataset format: its gold answer's lexical forms
        ans = ctx.item.answer
        if not isinstance(ans, TableAnswer):
            return None
        gold = [c.value for row in ans.rows for c in row if c is not None]
        if not gold:
            return None  # nothing a text could match: not applicable
    if ctx.prediction is None or None in gold:  # `if not None in golden_answer_list`: the row adds 0
        return 0.0
    pmeta = ctx.prediction.metadata or {}
    if "cwq_answers" in pmeta:
        texts = pmeta["cwq_answers"]  # every prediction row of this ID: `P1 += curr_P1` per row
    elif "cwq_answer" in pmeta:
        texts = [pmeta["cwq_answer"]]
    else:  # another run format: its first answer value
        ans = ctx.outcome.answer if ctx.outcome.status is Status.OK else None
        cells = [c.value for row in ans.rows for c in row if c is not None] if isinstance(ans, TableAnswer) else []
        if not cells:
            return 0.0
        texts = [cells[0]]
    if not official:
        texts = [t.lower().strip() if isinstance(t, str) else t for t in texts]  # the script's case rule
    question = meta.get("cwq_question") or ctx.item.questions.get("en", "")
    return float(sum(1 for t in texts if matches(t, gold, question)))


def _aggregate(ctxs, values) -> float:
    """``P1 / len(dataset_df)``: every row's 1 summed over the dataset's questions (a question
    answered right in two rows adds 2)."""
    vals = [v for v in values if v is not None]
    if not vals:
        raise nothing_scored("ComplexWebQuestions eval_script.py", "no question has gold answers")
    return sum(vals) / len(vals)


register(MeasureDef(
    name="CWQP1",
    definition=(
        "ComplexWebQuestions' official precision@1 (eval_script.py v1.0): 1 iff the one predicted text, as "
        "written, equals a gold answer or alias lower-cased, or its normalisation (NFKD to ASCII, non-word "
        "characters to spaces, lower case, leading the/a/an removed), or, when the question mentions 'year', "
        "the first year in a gold answer; summed over the prediction rows of the question (the script adds "
        "every row: an ID given twice and right twice adds 2); a question without a prediction, or whose gold "
        "list holds a null, scores 0; averaged over the dataset's questions (the script prints 100 x that)."
    ),
    convention="answer",
    item=_item,
    aggregate=_aggregate,
    fold=lambda ctx: None,
    inputs=Inputs(answers=False),
))
