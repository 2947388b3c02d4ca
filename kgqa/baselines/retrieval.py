"""``retrieval``: the nearest training question's query, re-grounded in the test question.

- **Index**: Okapi BM25 (``k1``, ``b``) over the training questions' tokens
  (:func:`kgqa.baselines.tokens.question_tokens`, KB element tokens of tagged questions replaced
  by ``<kb>``), a sparse matrix over numpy/scipy.
- **Template**: the nearest question's query tokens; each KB token is a slot of a kind:
  ``P`` predicate, ``C`` class (object of ``rdf:type``), ``E`` other IRI, ``L`` literal;
  slots are ordered by where the training question mentions them (annotated training items),
  else by their first occurrence in the query.
- **Re-grounding**, in this order of preference:

  1. the test question is annotated (``metadata.mentions`` from ``kgqa annotate --mode
     tagged|tag-end``): its elements get kinds (the kind an element had in training; else
     ``L`` for literals, the majority kind of its namespace in training, and for a namespace
     used for both predicates and classes, ``C`` when the local name starts upper-case); the
     template is the nearest of the ``candidates`` best neighbours whose slot kinds are the
     same multiset, and the i-th slot of a kind takes the i-th element of that kind (question
     order). No neighbour fits: the nearest neighbour, its slots filled where a kind matches;
  2. a KG is at hand (``--kg``): entities found by :class:`kgqa.baselines.labels.LabelIndex`
     fill the ``E`` slots in question order (the first, highest-degree entity of each match),
     literal values found there the ``L`` slots;
  3. otherwise the nearest query is returned as it is.

Deterministic: ties in score go to the earlier training item.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kgqa import lazy
from kgqa.make.annotate import element_text
from kgqa.model import IRI, Item
from kgqa.baselines.base import System
from kgqa.baselines.tokens import detokenize, is_kb, namespace, query_tokens, question_tokens, split_declarations
from kgqa.baselines.labels import LabelIndex

RDF_TYPE = "rdf:type"


def slot_kinds(tokens: Sequence[str]) -> dict[int, str]:
    """Token position -> kind (``P``/``C``/``E``/``L``) of every KB token of a query."""
    out: dict[int, str] = {}
    for i, t in enumerate(tokens):
        if not is_kb(t):
            continue
        if t.startswith(("\"", "'")):
            out[i] = "L"
        elif i > 0 and tokens[i - 1] in (RDF_TYPE, "a"):
            out[i] = "C"
        elif i > 0 and (tokens[i - 1].startswith(("?", "$")) or is_kb(tokens[i - 1])) and \
                i + 1 < len(tokens) and tokens[i + 1] not in (".", "}", ";", ","):
            out[i] = "P"
        else:
            out[i] = "E"
    return out


class BM25:
    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75):
        csr_matrix = lazy.scipy_sparse().csr_matrix
        self.vocab: dict[str, int] = {}
        rows, cols, vals = [], [], []
        lengths = np.zeros(len(docs))
        for d, doc in enumerate(docs):
            lengths[d] = len(doc)
            for t, n in Counter(doc).items():
                rows.append(d)
                cols.append(self.vocab.setdefault(t, len(self.vocab)))
                vals.append(n)
        tf = csr_matrix((np.array(vals, float), (rows, cols)), shape=(len(docs), max(1, len(self.vocab))))
        df = np.bincount(cols, minlength=tf.shape[1]).astype(float)
        idf = np.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
        avg = lengths.mean() if len(docs) else 1.0
        tf = tf.tocoo()
        norm = k1 * (1 - b + b * lengths[tf.row] / max(avg, 1e-9))
        w = idf[tf.col] * tf.data * (k1 + 1) / (tf.data + norm)
        self.weights = csr_matrix((w, (tf.row, tf.col)), shape=tf.shape).tocsc()

    def scores(self, query: Sequence[str]) -> np.ndarray:
        cols = [self.vocab[t] for t in query if t in self.vocab]
        if not cols:
            return np.zeros(self.weights.shape[0])
        return np.asarray(self.weights[:, cols].sum(axis=1)).ravel()


class RetrievalSystem(System):
    kind = "retrieval"
    defaults = {"k1": 1.2, "b": 0.75, "candidates": 50}

    def _doc(self, item: Item) -> list[str]:
        kb = {m["element"] for m in item.metadata.get("mentions", ()) if isinstance(m, dict)}
        return ["<kb>" if (t in kb or (":" in t and t[0].isalpha()) or t.startswith("<")) and len(t) > 1
                else t for t in question_tokens(item, self.lang)]

    def _fit(self, train: list[Item], valid: list[Item] | None, kg: Any) -> None:
        self.prefixes: dict[str, str] = {}
        self.entries: list[dict[str, Any]] = []
        for it in train:
            declared, _ = split_declarations(it.sparql)
            self.prefixes.update(declared)
            toks = query_tokens(it.sparql, self.prefixes)
            kinds = slot_kinds(toks)
            pos = {m["element"]: m.get("start", 0) for m in it.metadata.get("mentions", ()) if isinstance(m, dict)}
            first: dict[str, int] = {}
            for i in kinds:
                first.setdefault(toks[i], i)
            order = sorted(first, key=lambda t: (pos.get(t, math.inf), first[t]))
            self.entries.append({"id": it.id, "doc": self._doc(it), "query": toks,
                                 "slots": [[t, kinds[first[t]]] for t in order]})
        self._index()

    def _index(self) -> None:
        self.bm25 = BM25([e["doc"] for e in self.entries], self.config["k1"], self.config["b"])
        self.element_kind: dict[str, str] = {}
        ns_kinds: dict[str, Counter] = {}
        for e in self.entries:
            for t, k in e["slots"]:
                self.element_kind.setdefault(t, k)
                ns_kinds.setdefault(self._ns(t), Counter())[k] += 1
        self.ns_kinds = ns_kinds
        self.signatures = [Counter(k for _, k in e["slots"]) for e in self.entries]

    def _ns(self, token: str) -> str:
        if token.startswith("<"):
            return namespace(token[1:-1])
        return token.split(":", 1)[0] + ":" if ":" in token else token

    def kind_of(self, token: str) -> str:
        """The kind of a test question's element (module docstring)."""
        if token in self.element_kind:
            return self.element_kind[token]
        if token.startswith(("\"", "'")):
            return "L"
        counts = self.ns_kinds.get(self._ns(token))
        if not counts:
            return "E"
        best = counts.most_common()
        if best[0][0] in "PC" and {"P", "C"} <= set(counts):
            local = token.rstrip(">").rsplit("/", 1)[-1].rsplit("#", 1)[-1].split(":", 1)[-1]
            return "C" if local[:1].isupper() else "P"
        return best[0][0]

    def _queries(self, items: Sequence[Item], executor: Any) -> list[str | None]:
        index = None
        out: list[str | None] = []
        for it in items:
            scores = self.bm25.scores(self._doc(it))
            order = np.argsort(-scores, kind="stable")
            mentions = sorted((m for m in it.metadata.get("mentions", ()) if isinstance(m, dict)),
                              key=lambda m: m.get("start", 0))
            if mentions:
                fill = [(m["element"], self.kind_of(m["element"])) for m in mentions]
            elif executor is not None:
                if index is None:
                    index = LabelIndex.from_executor(executor, self.lang)
                fill = [(element_text(IRI(ents[0][1:-1]), self.prefixes), "E") if ents[0].startswith("<")
                        else (ents[0], "L") for _, _, _, ents in index.find(it.question(self.lang) or "")]
            else:
                fill = []
            out.append(self._ground(order, fill, bool(mentions)))
        return out

    def _ground(self, order: np.ndarray, fill: list[tuple[str, str]], annotated: bool) -> str:
        want = Counter(k for _, k in fill)
        pick = int(order[0])
        if annotated:
            for j in order[: self.config["candidates"]]:
                if self.signatures[int(j)] == want:
                    pick = int(j)
                    break
        entry = self.entries[pick]
        by_kind: dict[str, list[str]] = {}
        for el, k in fill:
            by_kind.setdefault(k, []).append(el)
        seen: dict[str, int] = {}
        subst: dict[str, str] = {}
        for t, k in entry["slots"]:
            n = seen.get(k, 0)
            seen[k] = n + 1
            if n < len(by_kind.get(k, ())):
                subst[t] = by_kind[k][n]
        return detokenize([subst.get(t, t) for t in entry["query"]], self.prefixes)

    def _save_state(self, folder: Path) -> None:
        (folder / "state.json").write_text(json.dumps({"prefixes": self.prefixes, "entries": self.entries},
                                                      ensure_ascii=False), encoding="utf-8")

    def _load_state(self, folder: Path) -> None:
        state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        self.prefixes, self.entries = state["prefixes"], state["entries"]
        self._index()
