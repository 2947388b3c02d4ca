"""Mintaka's official evaluation (``evaluate/evaluate.py`` of amazon-science/mintaka, Sen, Aji &
Saffari 2022), as the ``mintaka`` (text mode) and ``mintaka-kg`` (KG mode) profiles.

Gold answers as the script formats them (``format_answers``):

- KG mode: an entity answer is the list of its Q-codes (None when no entity is linked); any
  other answer the released ``answer`` list as is;
- text mode (``lang``): an entity answer is its entities' labels in ``lang`` (English where a
  label is empty) joined by spaces, or the annotator's ``mention`` when no entity is linked; any
  other answer ``str()`` of its first value (``True``, ``4``, ``2001-11-16``).

Predictions (``{id: answer}``) as ``format_predictions``: text mode ``str(pred)``; KG mode a list
(a single value becomes a one-element list); null stays None. Per question:

- **EM**: text mode, when both are non-empty: the gold tokens occur as a contiguous run in the
  predicted tokens (DPR's tokenizer: NFD, runs of letters/digits/marks or single other
  non-space characters, lower-cased); otherwise plain equality (lists: order and duplicates
  matter);
- **F1**: SQuAD-style token overlap (text: whitespace tokens, not normalised; KG: list
  elements, as multisets); an empty side gives 1 iff both are equal;
- **H1** (hits@1): text mode or a None side: EM; KG mode: any element in common.

On a dataset of another format the gold answer is held the same way as a prediction of another
run format (its values, Wikidata IRIs as Q-codes; text mode joined by spaces), so a dataset
scored against itself scores 1. Scores are means over the dataset's questions, every question
included (a null entity answer list is None in KG mode and the annotator's ``mention`` in text
mode, as in the script).

Where the script stops, kgqa scores what it can and the loaders say which questions stop it:

- a question without a prediction: the script's left merge gives NaN and ``calculate_f1``
  (KG mode: ``Counter(NaN)``) or ``calculate_em`` (text mode: ``normalize(NaN)``) raises unless
  the gold answer is empty; kgqa scores the question 0 (the run loader warns);
- v1.0 entity labels (one English string): text mode's ``ent['label'][lang]`` raises; kgqa
  reads the string as the label (the dataset loader warns);
- a non-entity answer whose list is null or empty in text mode (``answer['answer'][0]``
  raises): kgqa holds it as None.

A prediction is read as the script's DataFrame holds it (see
:func:`kgqa.load.mintaka.as_pandas`: an all-numeric column with a null or a float is float64).
"""

from __future__ import annotations

import collections
import unicodedata
from typing import Any

import regex

from kgqa.score.measures import Inputs, ItemContext, MeasureDef, Param, nothing_scored, register

_TOKEN = regex.compile(r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])", flags=regex.IGNORECASE | regex.UNICODE | regex.MULTILINE)


def tokens(text: str) -> list[str]:
    """DPR's ``normalize_and_tokenize_text`` as the script uses it."""
    return [m.group().lower() for m in _TOKEN.finditer(unicodedata.normalize("NFD", text))]


def gold_answer(answer: dict, mode: str, lang: str) -> Any:
    """``format_answers`` of the script."""
    if answer.get("answerType") == "entity":
        ents = answer.get("answer")
        if mode == "kg":
            return None if ents is None else [e.get("name") for e in ents]
        if ents is None:
            return answer.get("mention")
        return " ".join(_label(e.get("label"), lang) for e in ents)
    values = answer.get("answer")
    if mode == "text":
        return str(values[0]) if values else None  # the script raises on a null or empty list
    return values


def _label(label: Any, lang: str) -> str:
    """``ent['label'][lang]``, English where empty; a v1.0 label (one string, on which the script
    stops) is that string in every language."""
    if isinstance(label, str):
        return label
    label = label or {}
    return label.get(lang) or label.get("en") or ""


def prediction(pred: Any, mode: str) -> Any:
    """``format_predictions`` of the script."""
    if pred is None:
        return None
    if mode == "text":
        return str(pred)
    return pred if isinstance(pred, list) else [pred]


def em(pred: Any, answer: Any, mode: str) -> float:
    if mode == "text" and pred and answer:
        p, a = tokens(pred), tokens(answer)
        return 1.0 if any(a == p[i:i + len(a)] for i in range(0, len(p) - len(a) + 1)) else 0.0
    return 1.0 if pred == answer else 0.0


def f1(pred: Any, answer: Any, mode: str) -> float:
    if not answer or not pred:
        return 1.0 if answer == pred else 0.0
    if mode == "text":
        pred, answer = pred.split(), answer.split()
    same = sum((collections.Counter(pred) & collections.Counter(answer)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(answer)
    return 2 * p * r / (p + r)


def h1(pred: Any, answer: Any, mode: str) -> float:
    if mode == "text" or pred is None or answer is None:
        return em(pred, answer, mode)
    return 1.0 if collections.Counter(pred) & collections.Counter(answer) else 0.0


PARTS = {"EM": em, "F1": f1, "H1": h1}


def _values(ans: Any, mode: str) -> Any:
    """An answer of another format the way the script would hold it: KG mode the list of values
    (Wikidata IRIs as Q-codes; a boolean as itself), text mode the values joined by spaces."""
    if ans is None:
        return None
    rows = getattr(ans, "rows", None)
    if rows is None:
        value = getattr(ans, "value", None)
        return value if mode == "kg" or value is None else value
    vals = [c.value.rsplit("/", 1)[-1] if c.value.startswith(WIKIDATA) else c.value
            for row in rows for c in row if c is not None]
    return vals if mode == "kg" else (" ".join(vals) if vals else None)


WIKIDATA = "http://www.wikidata.org/entity/"


def _sides(ctx: ItemContext, mode: str, lang: str) -> tuple[Any, Any] | None:
    raw = ctx.item.metadata.get("mintaka_answer")
    if isinstance(raw, dict):
        gold = gold_answer(raw, mode, lang)
    elif ctx.item.answer is not None:  # another dataset format: its gold answer, held the script's way
        gold = prediction(_values(ctx.item.answer, mode), mode)
    else:
        return None
    if ctx.prediction is None:
        return ...  # type: ignore[return-value]
    meta = ctx.prediction.metadata or {}
    pred = meta["mintaka_pred"] if "mintaka_pred" in meta else _values(ctx.outcome.answer, mode)
    return prediction(pred, mode), gold


def _item(ctx: ItemContext, mode: str, part: str, lang: str) -> float | None:
    sides = _sides(ctx, mode, lang)
    if sides is None:
        return None
    if sides is ...:
        return 0.0
    return PARTS[part](*sides, mode)


def _aggregate(ctxs: Any, values: Any, mode: str, part: str, lang: str) -> float:
    """The mean over the dataset's questions (``mintaka_test.exact_match.mean()``); no question
    with a gold answer is a set-up error, not a NaN."""
    vals = [v for v in values if v is not None]
    if not vals:
        raise nothing_scored("Mintaka evaluate.py", "no question has a gold answer")
    return sum(vals) / len(vals)


register(MeasureDef(
    name="Mintaka",
    definition=(
        "Mintaka's official evaluate.py: exact match, F1 or hits@1 (`part`) of the prediction as written "
        "against the released answer, in `mode` text (entity labels in `lang` joined by spaces, or str() of the "
        "value; EM: the gold tokens occur contiguously in the predicted tokens, DPR tokenizer; F1: whitespace "
        "token overlap; H1 = EM) or kg (lists of Q-codes or values; EM: equal lists; F1: multiset overlap; "
        "H1: any element in common). A question without a prediction scores 0 (the script stops there)."
    ),
    convention="answer",
    item=_item,
    aggregate=_aggregate,
    fold=lambda ctx, **_: None,
    inputs=Inputs(answers=False),  # a null entity answer list is scored (None in KG mode, the mention in text mode)
    params=(Param("mode", "text", ("text", "kg"), "text answers (labels) or KG answers (Q-codes, values)"),
            Param("part", "EM", tuple(PARTS), "EM, F1 or H1 (hits@1)"),
            Param("lang", "en", ("en", "ar", "de", "es", "fr", "hi", "it", "ja", "pt"), "language of text answers")),
))
