"""What a reference system reads: its *input*, part of every score made from its predictions.

A question reaches a system in one of these forms (Reyd & Zouaq 2023, Sect. 3.1; ``kgqa annotate``):

- ``raw``: the question as a person writes it. A system may link entities itself (the
  ``retrieval`` and ``simple`` baselines with a KG: label matching, :mod:`kgqa.baselines.labels`);
  that is part of the system, and the input stays ``raw``.
- ``tagged`` / ``tag-end``: the question with the KB elements *of its gold query* written into it
  (``kgqa annotate --mode tagged|tag-end``): an oracle entity and relation linker. Scores on such
  input measure query structure given perfect linking, not question answering.

:func:`item_input` reads an item's form from its ``metadata`` (``annotation`` as ``kgqa annotate``
writes it, with ``mentions``; anything else is ``raw``); :func:`summary` names a set of items'
form (``tagged``, or ``mixed(raw=77,tagged=923)`` where some items could not be tagged and kept
their raw form). A system records the form it was trained on in its ``manifest.json``
(``input``) and each prediction the form of the question it answered (``metadata.input``); the
score's signature gains ``input:...`` from them (:func:`run_input`).

A served system receives text only: a ``tagged`` question's elements are read back from the text
(:func:`text_mentions`: prefixed names, ``<IRI>`` and literals as ``kgqa annotate`` writes them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kgqa.model import Item
from kgqa.model.run import input_summary as summary, run_input

INPUTS = ("raw", "tagged", "tag-end")
ORACLE = ("tagged", "tag-end")
SEP = "<sep>"

_ELEMENT = re.compile(r"<[^<>\s]+>|\"[^\"]*\"(?:@[\w-]+|\^\^\S+)?|(?<![\w:])[A-Za-z][\w-]*:[^\s,;!?()]*[^\s,;!?().]")

__all__ = ["INPUTS", "ORACLE", "item_input", "summary", "run_input", "text_mentions", "served_item", "describe"]


def item_input(item: Item) -> str:
    """``tagged`` / ``tag-end`` for an item ``kgqa annotate`` tagged (its ``metadata.annotation``
    and at least one mention), else ``raw``."""
    md = item.metadata
    mode = md.get("annotation")
    if mode in ORACLE and md.get("mentions"):
        return str(mode)
    return "raw"


def describe(kind: str) -> str:
    """A sentence naming what an input form means."""
    if kind == "raw":
        return "raw questions (as people write them)"
    if kind in ORACLE:
        return (f"questions {kind} with the KB elements of their gold query (kgqa annotate --mode {kind}: "
                "an oracle entity linker)")
    return f"{kind} input"


def text_mentions(text: str) -> list[dict[str, Any]]:
    """The KB elements written in a tagged or tag-end question, in text order, as
    ``{"element", "start"}`` mentions (``start``: for tag-end, where the element's mention text
    is found in the question before the first ``<sep>``, else after it)."""
    head, sep, tail = text.partition(f" {SEP} ")
    out: list[dict[str, Any]] = []
    if not sep:
        for m in _ELEMENT.finditer(text):
            el, at = m.group(0), m.start()
            inner = _ELEMENT.fullmatch(el[1:-1]) if el.startswith('"') and el.endswith('"') else None
            if inner is not None and not inner.group(0).startswith('"'):  # "dbr:X": an element in quotes
                el, at = inner.group(0), at + 1
            if el != SEP:
                out.append({"element": el, "start": at})
        return out
    for seg in tail.split(f" {SEP} "):
        m = _ELEMENT.match(seg.strip())
        if not m:
            continue
        mention = seg.strip()[m.end():].strip().lower()
        at = head.lower().find(mention) if mention else -1
        out.append({"element": m.group(0), "start": at if at >= 0 else len(head) + len(out)})
    return out


def served_item(question: str, form: str, lang: str = "en") -> Item:
    """The item a served question becomes for a system that reads ``form``."""
    if form in ORACLE:
        return Item("q", {lang: question}, metadata={"annotation": form, "mentions": text_mentions(question)})
    return Item("q", {lang: question})
