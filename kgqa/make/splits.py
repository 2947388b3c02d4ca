"""Generalization splits (Reyd & Zouaq 2023, Sect. 3.3): train / validation / test parts
whose held-out items are guaranteed to contain something the training part never shows.

Definitions (exact):

- **characteristics** c(d) of an item d, by split kind:

  - ``uri``: the set of IRIs of the item's gold query as found by
    :func:`kgqa.sparql.analyzer.analyze` (``QueryInfo.iris``: full IRIs, prefixed names expanded,
    every IRI used as a term in triple patterns, property paths, VALUES, expressions,
    GRAPH/SERVICE/FROM; *not* literals, PREFIX declarations or literal datatypes). An item
    without a query has none.
  - ``template``: ``{t}`` where t is the dataset's global template id ``item.groups["template"]``
    or, when the dataset has none (or ``template_source="structure"``), the query's
    :func:`~kgqa.sparql.canonical.structure_template` (IRIs and literals replaced by
    placeholders, variables renamed canonically). An item without a template (no query, or a
    query the analyzer finds invalid) has none.
  - ``iid``: ``{item id}`` (a plain random split; the property is trivially true).

- **generalization property** gp(D, D1): every item of D1 has at least one characteristic that no
  item of D \\ D1 has. For a three-way split kgqa checks, for X in {validation, test},
  gp(train ∪ X, X): every held-out item has a characteristic absent from *train*. (Whether a test
  item's characteristic is also absent from validation is reported, not required.)

- **groups**: ``template``: the items sharing a template; ``uri``: a URI is *rare* when it occurs
  in fewer than ``k = rare_below`` items; items without a rare URI are *reserved* for train; the
  other items are grouped into the connected components of the relation "shares a rare URI"
  (:func:`scipy.sparse.csgraph.connected_components` on the graph whose nodes are the rare URIs
  and where each item links its rare URIs in a chain; linear in the number of URI occurrences,
  never pairwise). ``iid``: one group per item. Items without any
  characteristic are reserved for train (they can never satisfy gp). Any union of groups
  satisfies gp against the rest of the data: a rare URI of a group occurs in no other group
  (else the two would be connected), and nothing outside the held-out groups can hold it.

- **assignment** (one *try*): with N = round(r_train * |D|) the train target, the groups are
  visited in a seeded random order; a group goes to test if train already holds ≥ N items, to
  train if test already holds ≥ |D| - N items, else to train with probability
  p = (N - |train|) / (|D| - |train| - |test|). |train| counts the reserved items from the start,
  so this is the same p as (N' - |train'|) / (|D'| - |train'| - |test|) over the grouped items D'
  only, with N' = N - |reserved| (the paper's N = |D~| - 0.2|D| for URI splits).
  delta = |N - |train|| / |D|. ``tries`` assignments are made (try t uses the random stream
  ``numpy.random.default_rng([seed, t])``); the one with the lowest delta is kept (ties: the
  first).

- **held-out division**: the held-out items (in dataset order) are shuffled with
  ``numpy.random.default_rng([seed, 2**32 - 1])``; the first round(H * r_val / (r_val + r_test))
  become validation, the rest test. Every subset of the held-out part keeps gp against train
  (each held-out item's unseen characteristic is absent from train whatever the subset), so
  both parts keep the property.

Parts keep the dataset's item order. Same input, options and seed give the same parts.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
import json
from pathlib import Path

import numpy as np

from kgqa import lazy
from kgqa.model import Dataset, InputError, Item
from kgqa.load import formats, load_dataset
from kgqa.load.jsonio import write_atomic
from kgqa.load.subset import subset_writer
from kgqa.sparql.analyzer import analyze
from kgqa.sparql.canonical import structure_template

__all__ = [
    "KINDS", "Characteristics", "Assignment", "Split", "uri_characteristics", "template_key",
    "characteristics", "group_labels", "assign_groups", "split_characteristics", "split_dataset",
    "unseen_items", "parse_ratios", "concat_datasets", "PARTS",
]

KINDS = ("iid", "template", "uri")
HELDOUT_STREAM = 2**32 - 1


# --------------------------------------------------------------------------- characteristics


def uri_characteristics(item: Item) -> tuple[str, ...]:
    """The IRIs (as strings, first-occurrence order) of the item's gold query; () without one."""
    if not item.sparql:
        return ()

    return tuple(i.value for i in analyze(item.sparql).iris)


def template_key(item: Item, source: str = "auto") -> str | None:
    """The item's global template: ``item.groups["template"]`` (``source="dataset"``), the
    analyzer's structure template of its query (``"structure"``), or the first of those that
    exists (``"auto"``). None when there is none."""
    if source not in ("auto", "dataset", "structure"):
        raise ValueError(f"template source must be auto, dataset or structure, not {source!r}")
    if source in ("auto", "dataset"):
        t = item.groups.get("template")
        if t is not None and str(t) != "":
            return "id:" + str(t)
        if source == "dataset":
            return None
    if not item.sparql:
        return None

    return structure_template(analyze(item.sparql))


@dataclass
class Characteristics:
    """Characteristic sets of n items in CSR form: item i has ``indices[indptr[i]:indptr[i+1]]``
    (distinct integers into ``vocab``)."""

    indptr: np.ndarray
    indices: np.ndarray
    vocab: list[Hashable]

    @property
    def n(self) -> int:
        return len(self.indptr) - 1

    @classmethod
    def from_sets(cls, sets: Iterable[Iterable[Hashable]]) -> "Characteristics":
        """Intern the keys (vocabulary in first-occurrence order); duplicates within an item
        are dropped."""
        ids: dict[Hashable, int] = {}
        indptr = [0]
        flat: list[int] = []
        for s in sets:
            seen = dict.fromkeys(ids.setdefault(k, len(ids)) for k in s)
            flat.extend(seen)
            indptr.append(len(flat))
        return cls(np.asarray(indptr, dtype=np.int64), np.asarray(flat, dtype=np.int64), list(ids))

    def rows(self) -> np.ndarray:
        """The item index of every entry of ``indices``."""
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))

    def of(self, i: int) -> list[Hashable]:
        return [self.vocab[j] for j in self.indices[self.indptr[i]:self.indptr[i + 1]]]


def characteristics(items: Sequence[Item], by: str, template_source: str = "auto") -> Characteristics:
    """c(d) for every item (see the module docstring)."""
    if by == "uri":
        return Characteristics.from_sets(uri_characteristics(it) for it in items)
    if by == "template":
        keys = (template_key(it, template_source) for it in items)
        return Characteristics.from_sets(() if k is None else (k,) for k in keys)
    if by == "iid":
        return Characteristics.from_sets((i,) for i in range(len(items)))
    raise ValueError(f"split kind must be one of {', '.join(KINDS)}, not {by!r}")


# --------------------------------------------------------------------------- groups


def group_labels(ch: Characteristics, by: str, rare_below: int = 5) -> tuple[np.ndarray, dict[str, int]]:
    """Group label of every item (0..G-1, numbered by first item in dataset order), -1 for an
    item reserved for train. Also returns counts: ``characteristics`` (distinct), ``rare``
    (rare URIs, ``uri`` only), ``without_characteristics`` (items), ``reserved`` (items)."""
    n = ch.n
    sizes = np.diff(ch.indptr)
    empty = sizes == 0
    info = {"characteristics": len(ch.vocab), "without_characteristics": int(empty.sum())}
    if by == "uri":
        if rare_below < 1:
            raise ValueError("rare_below must be at least 1")
        df = np.bincount(ch.indices, minlength=len(ch.vocab))
        rare = (df < rare_below) & (df > 0)
        info["rare"] = int(rare.sum())
        occ_rare = rare[ch.indices]
        rows = ch.rows()[occ_rare]
        cols = ch.indices[occ_rare]
        raw = np.full(n, -1, dtype=np.int64)
        if rows.size:
            coo_matrix = lazy.scipy_sparse().coo_matrix
            connected_components = lazy.scipy_csgraph().connected_components

            # graph over the rare URIs only: an item links its consecutive rare URIs (a chain), so
            # two URIs are connected iff some items link them; an item's group is the component
            # of its first rare URI. Nodes: rare URIs; edges: rare occurrences minus items.
            compact = np.cumsum(rare) - 1
            nodes = compact[cols]
            same = rows[1:] == rows[:-1]
            m = int(rare.sum())
            graph = coo_matrix((np.ones(int(same.sum()), dtype=np.int8), (nodes[:-1][same], nodes[1:][same])),
                               shape=(m, m)).tocsr()
            _, comp = connected_components(graph, directed=False)
            first = np.ones(rows.size, dtype=bool)
            first[1:] = ~same
            raw[rows[first]] = comp[nodes[first]]
    elif by in ("template", "iid"):
        raw = np.full(n, -1, dtype=np.int64)
        first = ch.indptr[:-1][~empty]
        raw[~empty] = ch.indices[first]
    else:
        raise ValueError(f"split kind must be one of {', '.join(KINDS)}, not {by!r}")
    labels = _renumber(raw)
    info["reserved"] = int((labels < 0).sum())
    info["groups"] = int(labels.max()) + 1 if n and labels.max() >= 0 else 0
    return labels, info


def _renumber(raw: np.ndarray) -> np.ndarray:
    """Relabel non-negative labels 0..G-1 in order of first occurrence; keep -1. Linear time."""
    out = np.full(raw.shape, -1, dtype=np.int64)
    mask = raw >= 0
    if not mask.any():
        return out
    vals = raw[mask]
    pos = np.arange(len(vals), dtype=np.int64)
    first = np.full(int(vals.max()) + 1, len(vals), dtype=np.int64)
    np.minimum.at(first, vals, pos)
    is_first = first[vals] == pos
    rank = np.empty(len(first), dtype=np.int64)
    rank[vals[is_first]] = np.arange(int(is_first.sum()), dtype=np.int64)
    out[mask] = rank[vals]
    return out


# --------------------------------------------------------------------------- assignment


@dataclass(frozen=True)
class Assignment:
    """The kept try: ``to_train[g]`` says whether group g went to train; ``train`` the resulting
    train size (reserved items included), ``delta`` = |target - train| / total, ``best_try``."""

    to_train: np.ndarray
    train: int
    target: int
    total: int
    delta: float
    best_try: int


def _one_try(sizes: np.ndarray, reserved: int, target: int, total: int, rng: np.random.Generator,
             record: bool) -> tuple[int, np.ndarray | None]:
    order = rng.permutation(len(sizes))
    draws = rng.random(len(sizes))
    cap = total - target
    train, test = reserved, 0
    if not record:
        sz = sizes[order].tolist()
        for s, u in zip(sz, draws.tolist()):
            if train >= target:
                return train, None  # every remaining group goes to test
            if test >= cap:
                return total - test, None  # every remaining group goes to train
            if u * (total - train - test) < target - train:
                train += s
            else:
                test += s
        return train, None
    to_train = np.zeros(len(sizes), dtype=bool)
    for g, u in zip(order.tolist(), draws.tolist()):
        s = int(sizes[g])
        if train >= target:
            test += s
        elif test >= cap or u * (total - train - test) < target - train:
            train += s
            to_train[g] = True
        else:
            test += s
    return train, to_train


def assign_groups(sizes: Sequence[int] | np.ndarray, reserved: int, target: int, tries: int = 100,
                  seed: int = 0) -> Assignment:
    """Assign groups of the given ``sizes`` to train or test (module docstring: *assignment*);
    ``reserved`` items are in train from the start and ``target`` is N."""
    sizes = np.asarray(sizes, dtype=np.int64)
    total = int(sizes.sum()) + reserved
    if tries < 1:
        raise ValueError("tries must be at least 1")
    best: tuple[int, int] | None = None  # (|target - train|, try)
    for t in range(tries):
        train, _ = _one_try(sizes, reserved, target, total, np.random.default_rng([seed, t]), False)
        dev = abs(target - train)
        if best is None or dev < best[0]:
            best = (dev, t)
            if dev == 0:
                break  # no later try can be strictly better
    assert best is not None
    train, to_train = _one_try(sizes, reserved, target, total, np.random.default_rng([seed, best[1]]), True)
    assert to_train is not None and abs(target - train) == best[0]
    return Assignment(to_train, train, target, total, best[0] / total if total else 0.0, best[1])


# --------------------------------------------------------------------------- the split


def unseen_items(ch: Characteristics, part: np.ndarray, seen_in: np.ndarray) -> np.ndarray:
    """Boolean mask over ``part`` (item indices): the item has at least one characteristic that
    no item of ``seen_in`` has."""
    seen = np.zeros(len(ch.vocab), dtype=bool)
    if len(seen_in):
        starts, ends = ch.indptr[seen_in], ch.indptr[seen_in + 1]
        seen[ch.indices[_ranges(starts, ends)]] = True
    if not len(part):
        return np.zeros(0, dtype=bool)
    starts, ends = ch.indptr[part], ch.indptr[part + 1]
    occ = _ranges(starts, ends)
    owner = np.repeat(np.arange(len(part)), ends - starts)
    fresh = ~seen[ch.indices[occ]]
    return np.bincount(owner[fresh], minlength=len(part)) > 0


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, e)`` for every pair, vectorised."""
    lens = ends - starts
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return np.arange(total, dtype=np.int64) + offsets


def _present(ch: Characteristics, part: np.ndarray) -> np.ndarray:
    """Boolean mask over the vocabulary: the characteristic occurs in some item of ``part``."""
    mask = np.zeros(len(ch.vocab), dtype=bool)
    if len(part):
        mask[ch.indices[_ranges(ch.indptr[part], ch.indptr[part + 1])]] = True
    return mask


def parse_ratios(text: str | Sequence[float]) -> tuple[float, float, float]:
    """``"0.8,0.1,0.1"`` -> (0.8, 0.1, 0.1); two numbers mean (train, test) without validation.
    The ratios must be non-negative and sum to 1 (within 1e-6)."""
    vals = [float(x) for x in text.split(",")] if isinstance(text, str) else [float(x) for x in text]
    if len(vals) == 2:
        vals = [vals[0], 0.0, vals[1]]
    if len(vals) != 3 or any(v < 0 for v in vals) or abs(sum(vals) - 1) > 1e-6:
        raise InputError("--ratios", f"expected train,validation,test ratios >= 0 summing to 1, got {text!r}")
    return vals[0], vals[1], vals[2]


@dataclass
class Split:
    """Item indices of each part (``train``, ``validation``, ``test``, dataset order) and the
    report (see :func:`split_characteristics`)."""

    parts: dict[str, np.ndarray]
    report: dict[str, Any] = field(default_factory=dict)


PARTS = ("train", "validation", "test")


def split_characteristics(ch: Characteristics, by: str, ratios: Sequence[float] = (0.8, 0.1, 0.1),
                          rare_below: int = 5, tries: int = 100, seed: int = 0) -> Split:
    """The split of n items with characteristics ``ch`` (no Item objects needed: the benchmark
    calls this directly). Raises :class:`AssertionError` if gp does not hold afterwards (a bug).

    The report holds: ``by``, ``seed``, ``ratios``, ``tries``, ``rare_below`` (uri), ``sizes``
    per part, ``target_train`` (N), ``delta``, ``best_try``, ``groups``, ``reserved``,
    ``characteristics`` (distinct), ``rare`` (uri), ``without_characteristics``,
    ``unseen`` per held-out part (``items``: items with a characteristic absent from train —
    all of them by gp; ``characteristics``: distinct characteristics of the part absent from
    train; ``of``: distinct characteristics of the part), ``gp`` per held-out part (bool),
    ``test_unseen_in_train_and_validation`` (test items with a characteristic absent from train
    and validation) and ``warnings``."""
    r_train, r_val, r_test = parse_ratios(ratios)
    n = ch.n
    if n == 0:
        raise InputError("dataset", "cannot split an empty dataset")
    labels, info = group_labels(ch, by, rare_below)
    warnings: list[str] = []
    target = int(round(r_train * n))
    reserved = info["reserved"]
    if reserved > target:
        warnings.append(f"{reserved} items reserved for train (no {'rare URI' if by == 'uri' else 'characteristic'}) "
                        f"exceed the train share N = {target}: train has {reserved / n:.1%} of the items")
    if info["without_characteristics"]:
        warnings.append(f"{info['without_characteristics']} items have no {_what(by)} (no or unparsable query) "
                        f"and were reserved for train")
    gsizes = np.bincount(labels[labels >= 0], minlength=info["groups"])
    asg = assign_groups(gsizes, reserved, target, tries, seed)
    in_train = labels < 0
    in_train[labels >= 0] = asg.to_train[labels[labels >= 0]]
    train = np.flatnonzero(in_train)
    held = np.flatnonzero(~in_train)
    rng = np.random.default_rng([seed, HELDOUT_STREAM])
    shuffled = held[rng.permutation(len(held))]
    n_val = int(round(len(held) * r_val / (r_val + r_test))) if r_val + r_test > 0 else 0
    val = np.sort(shuffled[:n_val])
    test = np.sort(shuffled[n_val:])
    parts = {"train": train, "validation": val, "test": test}

    unseen: dict[str, dict[str, int]] = {}
    gp: dict[str, bool] = {}
    in_train_chars = _present(ch, train)
    for name in ("validation", "test"):
        mask = unseen_items(ch, parts[name], train)
        chars = _present(ch, parts[name])
        unseen[name] = {"items": int(mask.sum()), "of_items": int(len(parts[name])),
                        "characteristics": int((chars & ~in_train_chars).sum()), "of": int(chars.sum())}
        gp[name] = bool(mask.all())
    assert all(gp.values()), f"generalization property violated: {gp}"  # guaranteed by construction
    strict = unseen_items(ch, test, np.sort(np.concatenate([train, val])))
    if by != "iid" and len(held) == 0:
        warnings.append("no items were held out: every group went to train")
    report: dict[str, Any] = {
        "by": by, "seed": seed, "ratios": [r_train, r_val, r_test], "tries": tries,
        **({"rare_below": rare_below} if by == "uri" else {}),
        "items": n, "sizes": {k: int(len(v)) for k, v in parts.items()},
        "target_train": target, "delta": asg.delta, "best_try": asg.best_try,
        **info, "unseen": unseen, "gp": gp,
        "test_unseen_in_train_and_validation": int(strict.sum()),
        "warnings": warnings,
    }
    return Split(parts, report)


def _what(by: str) -> str:
    return {"uri": "URI", "template": "template", "iid": "id"}[by]


def concat_datasets(datasets: Sequence[Dataset]) -> tuple[Dataset, list[str]]:
    """One dataset holding the items of all ``datasets`` in order (e.g. QALD-9 train + test).
    When ids collide across inputs, every id becomes ``<dataset name>:<id>`` (the original id
    is kept in ``metadata["source_id"]``) and a warning says so. The format is the first
    input's when all inputs share it, else empty (parts are then written as JSONL)."""
    if len(datasets) == 1:
        return datasets[0], []
    seen: set[str] = set()
    clash = False
    for d in datasets:
        ids = set(d.ids)
        clash = clash or bool(ids & seen)
        seen |= ids
    warnings: list[str] = []
    items: list[Item] = []
    for d in datasets:
        if clash:
            items.extend(replace(it, id=f"{d.name}:{it.id}", metadata={**it.metadata, "source_id": it.id})
                         for it in d.items)
        else:
            items.extend(d.items)
    if clash:
        names = [d.name for d in datasets]
        if len(set(names)) < len(names):
            raise InputError(", ".join(names), "item ids collide across inputs that have the same name")
        warnings.append("item ids collide across the inputs; ids were prefixed with the dataset name "
                        "(<name>:<id>, original id in metadata.source_id)")
    fmts = {d.format for d in datasets}
    ds = Dataset("+".join(d.name for d in datasets), items, fmts.pop() if len(fmts) == 1 else "",
                 [p for d in datasets for p in d.source], [p for d in datasets for p in d.problems])
    return ds, warnings


def _part_counts(ch: Characteristics, parts: dict[str, np.ndarray]) -> dict[str, dict[str, int]]:
    """Per part: distinct characteristics (``distinct``); for held-out parts also how many of
    them are absent from train (``unseen``) and the items having one (``items_with_unseen``)."""
    train = parts["train"]
    in_train_chars = _present(ch, train)
    out: dict[str, dict[str, int]] = {}
    for name, idx in parts.items():
        chars = _present(ch, idx)
        row = {"distinct": int(chars.sum())}
        if name != "train":
            row["unseen"] = int((chars & ~in_train_chars).sum())
            row["items_with_unseen"] = int(unseen_items(ch, idx, train).sum())
        out[name] = row
    return out


def split_dataset(ds: Dataset, by: str, ratios: Sequence[float] | str = (0.8, 0.1, 0.1),
                  rare_below: int = 5, tries: int = 100, seed: int = 0,
                  template_source: str = "auto") -> tuple[dict[str, Dataset], dict[str, Any]]:
    """Split a dataset: the three parts as Datasets (named ``<name>-<part>``, same format and
    source) and the report of :func:`split_characteristics`, plus the dataset name,
    ``template_source`` and ``uris`` / ``templates``: per part the distinct URIs / templates and,
    for validation and test, how many are unseen in train (:func:`_part_counts`), whatever the
    split kind (Reyd & Zouaq, Table 2)."""
    if by not in KINDS:
        raise InputError("--by", f"split kind must be one of {', '.join(KINDS)}, not {by!r}")
    ch = characteristics(ds.items, by, template_source)
    sp = split_characteristics(ch, by, ratios, rare_below, tries, seed)
    out = {name: Dataset(f"{ds.name}-{name}", [ds.items[i] for i in idx.tolist()], ds.format, list(ds.source))
           for name, idx in sp.parts.items()}
    uris = ch if by == "uri" else characteristics(ds.items, "uri")
    templates = ch if by == "template" else characteristics(ds.items, "template", template_source)
    report = {"dataset": ds.name, **sp.report, "template_source": template_source,
              "uris": _part_counts(uris, sp.parts), "templates": _part_counts(templates, sp.parts)}
    return out, report


# --------------------------------------------------------------------------- files


def dataset_writer(ds: Dataset):
    """The input's format: its writer, or (JSON record formats without one: LC-QuAD,
    GraphQuestions, WebQSP, ...) its source records of each part (:mod:`kgqa.load.subset`);
    else JSONL."""

    if ds.format:
        try:
            fmt = formats.get("dataset", ds.format)
            if fmt.write is not None:
                return fmt
            sub_writer = subset_writer(fmt.name)
            renamed = any("source_id" in it.metadata for it in ds.items)  # ids prefixed by concat
            if sub_writer is not None and ds.source and not renamed:
                return replace(fmt, write=sub_writer, extensions=fmt.extensions or (".json",))
        except InputError:
            pass
    return formats.get("dataset", "jsonl")


def write_split(datasets: Sequence[Any], by: str, output: Any, ratios: Sequence[float] | str = (0.8, 0.1, 0.1),
                rare_below: int = 5, tries: int = 100, seed: int = 0, template_source: str = "auto",
                format: str | None = None) -> dict[str, Any]:
    """``kgqa split``: load (and concatenate) ``datasets`` (names, paths or Datasets), split
    them (:func:`split_dataset`), write ``train``/``validation``/``test`` files in the input's
    format (else JSONL) and ``split.json`` to the folder ``output``, load the written files again
    and verify the generalization property on them. Returns the report (also in split.json):
    :func:`split_dataset`'s plus ``warnings``, ``format``, ``files`` and ``verified_on_files``
    (per part, and whether ids round-trip)."""

    loaded_inputs = [d if isinstance(d, Dataset) else load_dataset(d, format=format) for d in datasets]
    ds, warnings = concat_datasets(loaded_inputs)
    parts, report = split_dataset(ds, by, parse_ratios(ratios), rare_below, tries, seed, template_source)
    report["warnings"] = warnings + report["warnings"]
    fmt = dataset_writer(ds)
    ext = fmt.extensions[0] if fmt.extensions else ".jsonl"
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    files = {}
    for name in PARTS:
        fmt.write(parts[name], output / f"{name}{ext}")
        files[name] = f"{name}{ext}"
    report["format"] = fmt.name
    report["files"] = files
    # verify gp again on what was written (the writer must keep ids and queries)
    loaded = {name: load_dataset(output / files[name], format=fmt.name) for name in PARTS}
    ch = characteristics([it for name in PARTS for it in loaded[name].items], by, template_source)
    bounds = np.cumsum([0] + [len(loaded[n]) for n in PARTS])
    idx = {n: np.arange(bounds[i], bounds[i + 1]) for i, n in enumerate(PARTS)}
    verified = {n: bool(unseen_items(ch, idx[n], idx["train"]).all()) for n in ("validation", "test")}
    report["verified_on_files"] = {**verified, "ids_round_trip": all(loaded[n].ids == parts[n].ids for n in PARTS)}
    write_atomic(output / "split.json", [json.dumps(report, indent=2, ensure_ascii=False) + "\n"])
    return report
