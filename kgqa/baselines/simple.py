"""``simple``: single-fact questions (one triple: a topic entity, a relation, the answer), after
the simple-QA baselines SimpleDBpediaQA reports.

- **Training items**: those whose gold query is one fact (:func:`single_fact`: a topic IRI or
  literal, a predicate IRI, the answer variable, optionally the answer's ``rdf:type``); the
  class is ``(direction, predicate, answer class)``: ``fwd`` for ``<e> <p> ?x``, ``bwd`` for
  ``?x <p> <e>``. Other items are skipped (their number is kept in ``state.json``).
- **Entity detection**: :class:`kgqa.baselines.labels.LabelIndex` on the KG (``--kg``, needed
  for training and prediction): the longest n-gram of the question that is an entity label
  (the last of equally long ones: questions tend to end on their topic),
  its entities (IRIs, or literal values of the KG) ranked by degree; the words of that match are removed from the question before
  relation prediction (in training, the gold entity's label where found).
- **Relation prediction**: a linear classifier (multinomial logistic regression, L2 ``l2``,
  full-batch gradient descent for ``epochs`` steps of size ``lr`` from zero weights:
  deterministic) over TF-IDF of word unigrams and bigrams.
- **Query**: the first of the match's first ``entities`` entities that has any class the KG
  allows (the entity has that predicate in that direction), with its best-scored allowed class
  (no entity has one: the first entity and the best class): ``SELECT DISTINCT ?x WHERE { <e> <p> ?x . }`` (or reversed; ``?x a <class>`` added
  for a class with one). No entity found: no query.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
import math

import numpy as np

from kgqa import lazy
from kgqa.model import IRI, InputError, Item, TableAnswer
from kgqa.baselines.base import System
from kgqa.baselines.labels import LabelIndex, label_key
from kgqa.baselines.tokens import question_text
from kgqa.execute.executor import Executor
from kgqa.model import Literal
from kgqa.sparql.analyzer import analyze

_WORD = re.compile(r"[^\W_]+")
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def single_fact(sparql: str) -> tuple[str, str, str, str] | None:
    """``(topic, predicate IRI, "fwd"|"bwd", class)`` of a one-fact query, else None: one
    triple pattern between a constant topic (IRI or literal, N-Triples form) and the answer
    variable, optionally with ``?answer rdf:type <class>`` (class "" when absent)."""

    try:
        info = analyze(sparql)
    except Exception:  # noqa: BLE001 - a query the analyzer cannot read is not a single fact
        return None
    if info.values or not 1 <= len(info.triples) <= 2:
        return None
    facts, types = [], []
    for tp in info.triples:
        s, p, o = tp.spo
        if isinstance(p, IRI) and p.value == RDF_TYPE and isinstance(o, IRI) and not isinstance(s, (IRI, Literal)):
            types.append((s, o.value))
        elif isinstance(p, IRI):
            facts.append((s, p, o))
    if len(facts) != 1 or len(types) > 1:
        return None
    s, p, o = facts[0]
    const = (IRI, Literal)
    if isinstance(s, IRI) and not isinstance(o, const):
        var, topic, direction = o, s.n3(), "fwd"
    elif isinstance(o, const) and not isinstance(s, const):
        var, topic, direction = s, o.n3(), "bwd"
    else:
        return None
    if types and types[0][0] != var:
        return None
    return topic, p.value, direction, types[0][1] if types else ""


def _features(text: str) -> list[str]:
    words = [w.lower() for w in _WORD.findall(text)]
    return words + [f"{a} {b}" for a, b in zip(words, words[1:])]


class SimpleSystem(System):
    kind = "simple"
    needs_kg = True
    defaults = {"epochs": 300, "lr": 2.0, "l2": 1e-4, "entities": 3}

    def _index(self, executor: Any) -> LabelIndex:
        if getattr(self, "_labels", None) is None or self._labels[0] is not executor:
            self._labels = (executor, LabelIndex.from_executor(executor, self.lang))
        return self._labels[1]

    def _strip(self, question: str, index: LabelIndex, entity: str | None = None) -> tuple[str, list[str]]:
        """The question without the entity's words, and the detected entities (best first)."""
        words = _WORD.findall(question)
        matches = index.find(question)
        if entity is not None:
            keys = {label_key(lab) for lab in index.labels.get(entity, ())}  # entity: N-Triples form
            matches = [m for m in matches if m[2] in keys] or matches
        if not matches:
            return question, []
        best = max(matches, key=lambda m: (m[1] - m[0], m[0]))  # the longest; the last of equals
        return " ".join(words[: best[0]] + ["<e>"] + words[best[1]:]), best[3]

    def _fit(self, train: list[Item], valid: list[Item] | None, kg: Any) -> None:
        if kg is None:
            raise InputError("--kg", "the simple baseline reads the KG (entity labels, degrees): pass --kg")

        with Executor.open(kg, cache=False) as ex:
            index = self._index(ex)
            rows = []
            for it in train:
                fact = single_fact(it.sparql)
                if fact is None:
                    continue
                text, _ = self._strip(question_text(it, self.lang), index, fact[0])
                rows.append((text, f"{fact[2]} {fact[1]} {fact[3]}".rstrip()))
            self._labels = None
        if not rows:
            raise InputError("TRAIN", "no single-fact item (one triple: entity, predicate, answer variable) to train on")
        self.skipped = len(train) - len(rows)
        self.classes = sorted({c for _, c in rows})
        docs = [Counter(_features(t)) for t, _ in rows]
        df = Counter(f for d in docs for f in d)
        self.vocab = {f: i for i, f in enumerate(sorted(df))}
        self.idf = np.array([np.log((1 + len(docs)) / (1 + df[f])) + 1 for f in sorted(df)])
        X = self._matrix(docs)
        y = np.array([self.classes.index(c) for _, c in rows])
        Y = np.eye(len(self.classes))[y]
        W = np.zeros((X.shape[1], len(self.classes)))
        b = np.zeros(len(self.classes))
        for _ in range(int(self.config["epochs"])):
            Z = X @ W + b
            Z -= Z.max(axis=1, keepdims=True)
            P = np.exp(Z)
            P /= P.sum(axis=1, keepdims=True)
            G = (P - Y) / len(rows)
            W -= self.config["lr"] * (np.asarray(X.T @ G) + self.config["l2"] * W)
            b -= self.config["lr"] * G.sum(axis=0)
        self.W, self.b = W, b

    def _matrix(self, docs: list[Counter]):
        return tfidf_rows(docs, self.vocab, self.idf)

    def _allowed(self, executor: Any, entity: str) -> set[str]:
        """The ``direction predicate`` pairs the KG has for a topic."""
        out: set[str] = set()
        qs = [(f"SELECT DISTINCT ?p WHERE {{ ?s ?p {entity} }}", "bwd")]
        if entity.startswith("<"):
            qs.append((f"SELECT DISTINCT ?p WHERE {{ {entity} ?p ?o }}", "fwd"))
        for q, d in qs:
            oc = executor.execute(q)
            if not oc.status.failed and isinstance(oc.answer, TableAnswer):
                out.update(f"{d} {row[0].value}" for row in oc.answer.rows if row[0] is not None)
        return out

    def _queries(self, items: Sequence[Item], executor: Any) -> list[str | None]:
        if executor is None:
            raise InputError("--kg", "the simple baseline finds entities in the KG: pass --kg")
        index = self._index(executor)
        out: list[str | None] = []
        for it in items:
            text, ents = self._strip(question_text(it, self.lang), index)
            if not ents:
                out.append(None)
                continue
            z = (self._matrix([Counter(_features(text))]) @ self.W + self.b).ravel()
            best: tuple[float, str, str] | None = None
            for ent in ents[: int(self.config["entities"])]:
                allowed = self._allowed(executor, ent)
                k = next((k for k in np.argsort(-z, kind="stable")
                          if " ".join(self.classes[k].split(" ")[:2]) in allowed), None)
                if k is not None:
                    best = (float(z[k]), ent, self.classes[k])
                    break
            if best is None:
                best = (0.0, ents[0], self.classes[int(np.argmax(z))])
            _, e, cls = best
            direction, pred, *klass = cls.split(" ")
            p = IRI(pred).n3()
            triple = f"{e} {p} ?x ." if direction == "fwd" else f"?x {p} {e} ."
            typed = f" ?x a {IRI(klass[0]).n3()} ." if klass else ""
            out.append(f"SELECT DISTINCT ?x WHERE {{ {triple}{typed} }}")
        return out

    def _save_state(self, folder: Path) -> None:
        np.savez(folder / "weights.npz", W=self.W, b=self.b, idf=self.idf)
        (folder / "state.json").write_text(json.dumps({"classes": self.classes, "vocab": list(self.vocab),
                                                       "skipped": self.skipped}, ensure_ascii=False), encoding="utf-8")

    def _load_state(self, folder: Path) -> None:
        state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        self.classes, self.skipped = state["classes"], state["skipped"]
        self.vocab = {f: i for i, f in enumerate(state["vocab"])}
        with np.load(folder / "weights.npz") as z:
            self.W, self.b, self.idf = z["W"], z["b"], z["idf"]


def tfidf_rows(docs: list[Counter], vocab: dict[str, int], idf: Any, *, sublinear: bool = False) -> Any:
    """``docs`` (feature counts) as L2-normalised TF-IDF rows over ``vocab`` (features outside
    it dropped); ``sublinear``: a count n weighs 1 + log n instead of n."""
    sparse = lazy.scipy_sparse()
    csr_matrix, diags = sparse.csr_matrix, sparse.diags
    rows, cols, vals = [], [], []
    for r, d in enumerate(docs):
        for f, n in d.items():
            if f in vocab:
                rows.append(r)
                cols.append(vocab[f])
                vals.append(((1 + math.log(n)) if sublinear else n) * idf[vocab[f]])
    X = csr_matrix((vals, (rows, cols)), shape=(len(docs), len(vocab)))
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0] = 1
    return diags(1 / norms) @ X
