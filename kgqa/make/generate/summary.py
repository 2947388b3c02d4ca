"""The dataset analysis printed after generation (like Su et al. 2016, Table 1 and Sec. 7.1):
counts of graph queries and questions by number of edges, function class and function,
commonness decade, answer cardinality; distinct templates, classes, relations, topic entities;
what was rejected and why."""

from __future__ import annotations

from collections import Counter
from typing import Any

from kgqa.model.item import Dataset

COMMONNESS_BINS = (-40.0, -30.0, -20.0, -10.0, 0.0)


def _bin(c: float) -> str:
    if c < COMMONNESS_BINS[0]:
        return f"< {COMMONNESS_BINS[0]:g}"
    for lo, hi in zip(COMMONNESS_BINS, COMMONNESS_BINS[1:]):
        if lo <= c < hi:
            return f"[{lo:g}, {hi:g})"
    return f">= {COMMONNESS_BINS[-1]:g}"


def summarize(ds: Dataset, rejected: Counter | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    canon = [it for it in ds.items if it.metadata.get("paraphrase_source") == "canonical"]
    sentence = {(it.groups.get("paraphrase"), it.metadata.get("sentence_paraphrase")) for it in ds.items}
    classes, relations, topics = set(), set(), set()
    for it in canon:
        gq = it.metadata.get("graph_query") or {}
        for n in gq.get("nodes", []):
            if n.get("class") and not n.get("literal"):
                classes.add(n["class"])
        for e in gq.get("edges", []):
            relations.add(e["relation"])
        topics.update(it.metadata.get("topic_entities", []))

    def count(key) -> dict[str, int]:
        c = Counter(str(key(it)) for it in canon)
        return dict(sorted(c.items()))

    out = {
        "graph_queries": len(canon),
        "sentence_paraphrases": len(sentence),
        "questions": len(ds.items),
        "templates": len({it.groups.get("template") for it in canon}),
        "classes": len(classes), "relations": len(relations), "topic_entities": len(topics),
        "num_edges": count(lambda it: it.metadata.get("num_edges")),
        "function_class": count(lambda it: it.metadata.get("function_class")),
        "function": count(lambda it: it.metadata.get("function")),
        "commonness": count(lambda it: _bin(float(it.metadata.get("commonness", 0.0)))),
        "answer_cardinality": count(lambda it: it.metadata.get("answer_cardinality")),
        "redundant": sum(1 for it in canon if it.metadata.get("redundant")),
        "rejected": dict(sorted((rejected or {}).items())),
    }
    if canon:
        cs = [float(it.metadata["commonness"]) for it in canon]
        out["commonness_min"] = min(cs)
        out["commonness_max"] = max(cs)
    out.update(extra or {})
    return out
