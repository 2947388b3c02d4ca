"""Query-level measures and the compound measures of Linjordet, Balog and Setty (ICTIR 2022).

Every measure here compares the predicted SPARQL (``ctx.prediction.sparql``) with the gold
SPARQL (``ctx.item.sparql``) and/or looks at the predicted query's execution outcome
(``ctx.outcome``). Common conventions (each definition string repeats what applies):

- A question whose gold item has no SPARQL is *undefined* (None, left out of the mean) for the
  query-comparison measures.
- A question the run lacks, or whose entry has no query, counts as an empty prediction: 0 on
  the comparison measures (it predicted nothing).
- The semantic components (F1_Sem, F1_Tri) read the query through the tolerant analyzer
  (:func:`kgqa.sparql.analyzer.analyze`), so a broken or truncated query still yields its
  IRIs and triple patterns; prefixed names and full IRIs compare equal after expansion.
- Execution: ``Exec`` is 1 for an OK outcome, 0 for a parse error, execution error, timeout or
  refusal, and undefined (None) when nothing was executed although the run has a query
  (outcome ``missing``: run without ``--kg``) or when the entry has an answer but no query.
- Compound measures floor each component as ``P = gamma + (1 - gamma) * value`` and multiply
  them; an undefined component makes the compound undefined.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kgqa import lazy
from kgqa.model import BNode, Status
from kgqa.model.registry import Registry
from kgqa.score.measures import QUERY, Inputs, ItemContext, Measure, MeasureDef, Param, parse, register
from kgqa.score.rules import kgqa_rule
from kgqa.score.tokenize import escape_ws, sparql_tokens, tokens
from kgqa.sparql.analyzer import Path, QueryInfo, Var, analyze
from kgqa.sparql.canonical import canonical_form

if TYPE_CHECKING:
    from sacrebleu.metrics import BLEU as _SacreBLEU

__all__ = [
    "compound", "query_em", "bleu", "rouge_l", "exec_value", "f1_ans", "f1_sem", "f1_tri",
    "sem_set", "tri_set", "lcs_length", "floored_product", "query_features", "feature", "feature_extractor",
]

TOKENIZE = Param("tokenize", "sparql", ("sparql", "nspm"),
                 "sparql: lexer tokens (IRIs, prefixed names, variables, literals single tokens); "
                 "nspm: the lossy NSpM/Soru encoding split on whitespace")
SMOOTH = Param("smooth", "exp", ("exp", "floor", "add-k", "none"), "sacrebleu smoothing method")
GAMMA = Param("gamma", 1e-4, None, "floor of each component: P = gamma + (1 - gamma) * value")
VARS = Param("vars", "ignored", ("ignored", "aligned"),
             "ignored: every variable position matches every other; aligned: best one-to-one renaming")


# --------------------------------------------------------------------------- helpers


# The one rule for query text (docs/fidelity.md): loaders keep a query as its file has it, and
# every query measure reads it without surrounding whitespace, so a dataset given as its own run
# scores the maximum whichever loader read either side (LC-QuAD's upstream queries start or end
# with a space in 1 of 4).


def gold_query(ctx: ItemContext) -> str | None:
    """The gold query without surrounding whitespace (None when there is none)."""
    q = ctx.item.sparql
    return (q.strip() or None) if q is not None else None


def pred_query(ctx: ItemContext) -> str | None:
    """The predicted query without surrounding whitespace (None when there is none)."""
    p = ctx.prediction
    if p is None or p.sparql is None:
        return None
    return p.sparql.strip() or None


def set_f1(pred: frozenset, gold: frozenset) -> float:
    """F1 of two sets; both empty scores 1.0 (Usbeck et al., as the ICTIR paper adopts)."""
    if not pred and not gold:
        return 1.0
    tp = len(pred & gold)
    if tp == 0:
        return 0.0
    return 2 * tp / (len(pred) + len(gold))


# --------------------------------------------------------------------------- per-query features
# The evaluator runs every measure on a question, then the next question. Every feature any
# measure needs is extracted from one analysis of a query (:func:`query_features`), and what
# the measures compare is kept *per question* (:func:`question_memo`: a few numbers on the
# question's context, dropped with it when the evaluation ends), so each query is analysed and
# tokenised once per question whatever the number of measures, and no global cache has to hold
# every query of the evaluation (a global LRU smaller than the number of distinct queries
# thrashed: every measure re-analysed every query). The global caches below only share work
# between questions with the same query text close together (language units, templates).

#: Recently seen queries whose features are kept (an entry is a few small tuples).
FEATURE_CACHE_SIZE = 1 << 14

#: feature name -> function of a QueryInfo. Other measure modules add their own.
FEATURES: Registry[Callable[[QueryInfo], Any]] = Registry("query feature")


def feature_extractor(name: str):
    """Register ``fn(info) -> value`` as the query feature ``name`` (see :func:`feature`)."""

    def deco(fn: Callable[[QueryInfo], Any]) -> Callable[[QueryInfo], Any]:
        FEATURES.register(name, fn)
        return fn

    return deco


class _Packed(tuple):
    """A set-valued feature stored as a tuple (a third of a frozenset's memory)."""

    __slots__ = ()


def _pack(value: Any) -> Any:
    return _Packed(value) if isinstance(value, frozenset) else value


@functools.lru_cache(maxsize=FEATURE_CACHE_SIZE)
def query_features(query: str) -> dict[str, Any]:
    """Every registered feature of ``query``, from one analysis (cached; set-valued features
    are stored packed, :func:`feature` unpacks them)."""
    info = analyze(query)
    return {name: _pack(fn(info)) for name, fn in FEATURES.items()}


def _features(query: str) -> dict[str, Any]:
    """:func:`query_features` with every registered extractor's value (extractors registered
    after the query was cached are run now)."""
    feats = query_features(query)
    if len(feats) != len(FEATURES):
        info = None
        for name, fn in FEATURES.items():
            if name not in feats:
                info = info or analyze(query)
                feats[name] = _pack(fn(info))
    return feats


def feature(query: str, name: str) -> Any:
    """One feature of ``query`` (extractors registered after the query was cached are run on
    demand)."""
    feats = query_features(query)
    if name not in feats:
        feats[name] = _pack(FEATURES[name](analyze(query)))
    v = feats[name]
    return frozenset(v) if type(v) is _Packed else v


# --------------------------------------------------------------------------- per-question memo

def question_memo(ctx: ItemContext) -> dict[Any, Any]:
    """A dict that lives as long as the question's context (one evaluation): what several
    measures compute from the same question is computed once and kept here (a handful of
    numbers per question, never the queries' token lists or feature sets)."""
    return ctx.memo


#: feature layout (names and whether each is set-valued) -> name -> (offset, set-valued)
_LAYOUTS: dict[tuple[tuple[str, bool], ...], dict[str, tuple[int, bool]]] = {}


class FeatureComparison:
    """The predicted query's features against the gold query's, summarised: for a set-valued
    feature :meth:`sizes` ``(|pred|, |gold|, |pred & gold|)`` (what every set measure here
    needs), for any other feature :meth:`values` ``(pred value, gold value)``, kept in one flat
    tuple. ``pred`` is False when there is no predicted query (its sizes are then 0 and its
    values None)."""

    __slots__ = ("pred", "_index", "_data")

    def __init__(self, pred: str | None, gold: str) -> None:
        g = _features(gold)
        p = _features(pred) if pred is not None else None
        self.pred = p is not None
        layout: list[tuple[str, bool]] = []
        data: list[Any] = []
        for name, gv in g.items():
            pv = p.get(name) if p is not None else None
            if type(gv) is _Packed:
                layout.append((name, True))
                if pv is None:
                    data += (0, len(gv), 0)
                elif pv is gv or pv == gv:
                    data += (len(pv), len(gv), len(gv))
                else:
                    data += (len(pv), len(gv), len(frozenset(pv).intersection(gv)))
            else:
                layout.append((name, False))
                data += (pv, gv)
        key = tuple(layout)
        index = _LAYOUTS.get(key)
        if index is None:
            index, i = {}, 0
            for name, is_set in key:
                index[name] = (i, is_set)
                i += 3 if is_set else 2
            index = _LAYOUTS.setdefault(key, index)
        self._index = index
        self._data = tuple(data)

    def has(self, name: str) -> bool:
        return name in self._index

    def sizes(self, name: str) -> tuple[int, int, int]:
        """``(|pred|, |gold|, |pred & gold|)`` of the set-valued feature ``name``."""
        i, is_set = self._index[name]
        if not is_set:
            raise TypeError(f"query feature {name!r} is not set-valued")
        return self._data[i : i + 3]  # type: ignore[return-value]

    def values(self, name: str) -> tuple[Any, Any]:
        """``(pred value, gold value)`` of the feature ``name`` that is not set-valued."""
        i, is_set = self._index[name]
        if is_set:
            raise TypeError(f"query feature {name!r} is set-valued: use sizes()")
        return self._data[i : i + 2]  # type: ignore[return-value]

    def set_f1(self, name: str) -> float:
        """:func:`set_f1` of the two sets of feature ``name``."""
        np_, ng, tp = self.sizes(name)
        if not np_ and not ng:
            return 1.0
        if tp == 0:
            return 0.0
        return 2 * tp / (np_ + ng)


def feature_comparison(ctx: ItemContext, name: str) -> FeatureComparison | None:
    """The :class:`FeatureComparison` of the question's predicted and gold queries, holding
    feature ``name`` (None without a gold query), computed once per question."""
    memo = question_memo(ctx)
    fc = memo.get("features", _UNSET)
    if fc is _UNSET or (fc is not None and not fc.has(name)):
        g = gold_query(ctx)
        fc = memo["features"] = FeatureComparison(pred_query(ctx), g) if g is not None else None
    return fc


@functools.lru_cache(maxsize=FEATURE_CACHE_SIZE)
def _canonical(query: str) -> str | None:
    return canonical_form(analyze(query))


def _canonical_equal(a: str, b: str) -> bool:
    """kgqa.sparql.canonical.canonical_equal: both valid and the same canonical form."""
    fa = _canonical(a)
    return fa is not None and fa == _canonical(b)


# --------------------------------------------------------------------------- exact match


def query_em(pred: str | None, gold: str | None, norm: str = "raw", memo: dict | None = None) -> float | None:
    """1.0 / 0.0 by ``norm`` (raw, whitespace, canonical), None without a gold query. ``memo``
    (a question's memo) keeps the token and canonical comparisons for other measures."""
    if gold is None:
        return None
    if pred is None:
        return 0.0
    if pred == gold:
        return 1.0
    if norm == "raw":
        return 0.0
    memo = {} if memo is None else memo
    same = memo.get("tokens_equal")
    if same is None:
        same = memo["tokens_equal"] = sparql_tokens(pred) == sparql_tokens(gold)
    if same:
        return 1.0
    if norm == "whitespace":
        return 0.0
    canon = memo.get("canonical_equal")
    if canon is None:
        canon = memo["canonical_equal"] = _canonical_equal(pred, gold)
    return 1.0 if canon else 0.0


def _query_em_ctx(ctx: ItemContext, norm: str) -> float | None:
    """:func:`query_em` of the question's queries; the token comparison and the canonical
    comparison are kept per question (QueryEM(norm=whitespace) and CanonicalEM share them)."""
    return query_em(pred_query(ctx), gold_query(ctx), norm, question_memo(ctx))


register(MeasureDef(
    name="QueryEM",
    definition=(
        "Query exact match: 1 iff the predicted query equals the gold query, else 0. norm=raw: "
        "identical stripped text; whitespace: identical token sequences (whitespace, comments "
        "ignored, literals verbatim); canonical: whitespace-equal or canonical_equal (both "
        "valid, same canonical form: prefixes expanded, variables renamed, patterns sorted, keyword "
        "case normalised). No predicted query: 0; no gold query: undefined."
    ),
    convention="query",
    item=_query_em_ctx,
    params=(Param("norm", "raw", ("raw", "whitespace", "canonical"), "what counts as equal text"),),
    binary=True,
    inputs=QUERY,
))

register(MeasureDef(
    name="CanonicalEM",
    definition=(
        "Canonical query exact match (= QueryEM(norm=canonical)): 1 iff the queries are equal up to "
        "whitespace or have the same canonical form (prefixes expanded, variables renamed by first "
        "occurrence in canonical pattern order, triple patterns sorted inside each basic graph "
        "pattern, keyword case and whitespace normalised; DISTINCT/LIMIT/ORDER kept). No predicted "
        "query: 0; no gold query: undefined."
    ),
    convention="query",
    item=lambda ctx: _query_em_ctx(ctx, "canonical"),
    binary=True,
    inputs=QUERY,
))


# --------------------------------------------------------------------------- BLEU


@functools.lru_cache(maxsize=8)
def _bleu_scorer(smooth: str, sentence: bool) -> _SacreBLEU:
    BLEU = lazy.sacrebleu_metrics().BLEU  # imported when a BLEU measure is computed
    return BLEU(tokenize="none", smooth_method=smooth, effective_order=sentence)


@functools.lru_cache(maxsize=FEATURE_CACHE_SIZE)
def _joined(text: str, scheme: str) -> str:
    return " ".join(escape_ws(t) for t in tokens(text, scheme))


@functools.lru_cache(maxsize=FEATURE_CACHE_SIZE)
def _sentence_bleu(pred: str, gold: str, scheme: str, smooth: str) -> float:
    h, r = _joined(pred, scheme), _joined(gold, scheme)
    if not r:
        return 1.0 if not h else 0.0
    if not h:
        return 0.0
    if h == r:
        return 1.0
    return min(1.0, _bleu_scorer(smooth, True).sentence_score(h, [r]).score / 100.0)


def bleu(pred: str | None, gold: str | None, tokenize: str = "sparql", smooth: str = "exp") -> float | None:
    """Instance-level BLEU in [0, 1] (see the BLEU measure's definition)."""
    if gold is None:
        return None
    if pred is None:
        return 0.0
    return _sentence_bleu(pred, gold, tokenize, smooth)


class NgramComparison:
    """What BLEU (sentence and corpus) and ROUGE-L need of one question's predicted and gold
    token sequences under one tokenisation, kept per question instead of the tokens:
    sacrebleu's segment statistics ``stats`` = ``[hyp_len, ref_len, correct_1..4, total_1..4]``
    of the space-joined (:func:`escape_ws`) tokens as sacrebleu's ``tokenize='none'`` splits
    them, whether each joined side is empty and whether they are equal, and the token counts
    and longest common subsequence length for ROUGE-L. A missing prediction is the empty
    hypothesis (as corpus BLEU reads it)."""

    __slots__ = ("stats", "hyp_empty", "ref_empty", "equal", "hyp_tokens", "ref_tokens", "lcs")

    def __init__(self, pred: str | None, gold: str, scheme: str) -> None:
        r_toks = tokens(gold, scheme)
        h_toks = tokens(pred, scheme) if pred is not None else ()
        r_join, r_split = _joined_split(r_toks)
        h_join, h_split = _joined_split(h_toks)
        self.ref_empty, self.hyp_empty, self.equal = not r_join, not h_join, h_join == r_join
        self.stats = _segment_stats(h_split, r_split, self.equal)
        self.hyp_tokens, self.ref_tokens = len(h_toks), len(r_toks)
        self.lcs = lcs_length(h_toks, r_toks) if pred is not None else 0


def _joined_split(toks: Sequence[str]) -> tuple[str, list[str]]:
    """``" ".join(escape_ws(t) for t in toks)`` and its ``split()`` (what sacrebleu reads)."""
    raw = " ".join(toks)
    if "\\" not in raw:
        parts = raw.split()
        if parts == list(toks):  # every token is non-empty and without whitespace: nothing to escape
            return raw, parts
    joined = " ".join(escape_ws(t) for t in toks)
    return joined, joined.split()


def _segment_stats(h: list[str], r: list[str], equal: bool) -> tuple[int, ...]:
    """sacrebleu BLEU's ``_compute_segment_statistics`` for one reference (4-gram orders):
    ``[hyp_len, ref_len, correct_1..4, total_1..4]`` (clipped n-gram matches and n-gram
    counts), integers, so sums over questions are exact."""
    hl, rl = len(h), len(r)
    total = [hl - n + 1 if hl >= n else 0 for n in (1, 2, 3, 4)]
    if equal:
        return (hl, rl, *total, *total)
    correct = [0, 0, 0, 0]
    for n in (1, 2, 3, 4):
        if hl < n or rl < n:
            break
        if n == 1:
            hg, rg = h, r
        else:
            hg = list(zip(*(h[i:] for i in range(n))))
            rg = list(zip(*(r[i:] for i in range(n))))
        hs, rs = set(hg), set(rg)
        if len(hs) == len(hg) and len(rs) == len(rg):  # no repeated n-gram: clipping changes nothing
            c = len(hs.intersection(rs))
        else:
            hc, rc = Counter(hg), Counter(rg)
            c = 0
            for g, k in hc.items():
                m = rc.get(g)
                if m:
                    c += k if k < m else m
        if not c:
            break  # no n-gram matches, so no longer one does either
        correct[n - 1] = c
    return (hl, rl, *correct, *total)


def ngram_comparison(ctx: ItemContext, scheme: str) -> NgramComparison | None:
    """The :class:`NgramComparison` of the question under ``scheme`` (None without a gold
    query), computed once per question."""
    memo = question_memo(ctx)
    key = ("ngram", scheme)
    nc = memo.get(key, _UNSET)
    if nc is _UNSET:
        g = gold_query(ctx)
        nc = memo[key] = NgramComparison(pred_query(ctx), g, scheme) if g is not None else None
    return nc


def _bleu_from_stats(stats: Sequence[int], smooth: str, sentence: bool) -> float:
    scorer = _bleu_scorer(smooth, sentence)
    return scorer._compute_score_from_stats(list(stats)).score


def _bleu_ctx(ctx: ItemContext, tokenize: str = "sparql", smooth: str = "exp") -> float | None:
    """:func:`bleu` of the question's queries, from its :class:`NgramComparison`."""
    if gold_query(ctx) is None:
        return None
    if pred_query(ctx) is None:
        return 0.0
    nc = ngram_comparison(ctx, tokenize)
    if nc.ref_empty:
        return 1.0 if nc.hyp_empty else 0.0
    if nc.hyp_empty:
        return 0.0
    if nc.equal:
        return 1.0
    return min(1.0, _bleu_from_stats(nc.stats, smooth, True) / 100.0)


def _corpus_bleu(ctxs: Sequence[ItemContext], values: Sequence[float | None], tokenize: str, smooth: str) -> float:
    """sacrebleu corpus BLEU: the questions' segment statistics summed, then one score."""
    total = [0] * 10
    n = 0
    equal = True
    for c in ctxs:
        nc = ngram_comparison(c, tokenize)
        if nc is None:
            continue
        n += 1
        equal = equal and nc.equal
        for i, x in enumerate(nc.stats):
            total[i] += x
    if not n:
        return float("nan")
    if equal:
        return 1.0
    return min(1.0, _bleu_from_stats(total, smooth, False) / 100.0)


register(MeasureDef(
    name="BLEU",
    definition=(
        "Instance-level BLEU in [0,1]: sacrebleu sentence BLEU/100 (4-grams, brevity penalty, effective "
        "order, smoothing `smooth`, default exp) of the predicted vs gold query over the tokens of "
        "`tokenize` (sparql: IRIs, prefixed names, variables, literals, keywords, punctuation each one "
        "token; nspm: the lossy NSpM/Soru encoding). No predicted query 0; no gold query undefined."
    ),
    convention="query",
    item=_bleu_ctx,
    params=(TOKENIZE, SMOOTH),
    inputs=QUERY,
))

register(MeasureDef(
    name="CorpusBLEU",
    definition=(
        "Corpus-level BLEU in [0,1]: sacrebleu corpus BLEU (n-gram counts and lengths summed over "
        "all questions with a gold query before the geometric mean and brevity penalty; smoothing "
        "`smooth`, default 'exp') over the tokens of `tokenize`, divided by 100. A missing predicted "
        "query is an empty hypothesis. No per-question value."
    ),
    convention="query",
    item=lambda ctx, tokenize, smooth: None,
    aggregate=_corpus_bleu,
    params=(TOKENIZE, SMOOTH),
    inputs=QUERY,
))


# --------------------------------------------------------------------------- ROUGE-L


def lcs_length(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Length of the longest common subsequence (bit-parallel, Hyyrö 2004: O(|a|·|b|/w))."""
    if not a or not b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    masks: dict[Any, int] = {}
    for i, x in enumerate(a):
        masks[x] = masks.get(x, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for y in b:
        u = v & masks.get(y, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - bin(v).count("1")


@functools.lru_cache(maxsize=FEATURE_CACHE_SIZE)
def _rouge_l(pred: str, gold: str, scheme: str, beta: float) -> float:
    h, r = tokens(pred, scheme), tokens(gold, scheme)
    if not h and not r:
        return 1.0
    lcs = lcs_length(h, r)
    if lcs == 0:
        return 0.0
    p, rc = lcs / len(h), lcs / len(r)
    b2 = beta * beta
    return (1 + b2) * p * rc / (rc + b2 * p)


def _rouge_l_ctx(ctx: ItemContext, tokenize: str = "sparql", beta: float = 1.0) -> float | None:
    """:func:`rouge_l` of the question's queries, from its :class:`NgramComparison`."""
    if gold_query(ctx) is None:
        return None
    if pred_query(ctx) is None:
        return 0.0
    nc = ngram_comparison(ctx, tokenize)
    if not nc.hyp_tokens and not nc.ref_tokens:
        return 1.0
    lcs = nc.lcs
    if lcs == 0:
        return 0.0
    p, rc = lcs / nc.hyp_tokens, lcs / nc.ref_tokens
    b2 = float(beta) * float(beta)
    return (1 + b2) * p * rc / (rc + b2 * p)


def rouge_l(pred: str | None, gold: str | None, tokenize: str = "sparql", beta: float = 1.0) -> float | None:
    if gold is None:
        return None
    if pred is None:
        return 0.0
    return _rouge_l(pred, gold, tokenize, float(beta))


register(MeasureDef(
    name="ROUGE_L",
    definition=(
        "ROUGE-L F-measure over the tokens of `tokenize` (as for BLEU): with L the length of the "
        "longest common subsequence of predicted and gold tokens, P = L/|pred|, R = L/|gold|, "
        "F = (1+b²)PR/(R+b²P), b = `beta` (default 1). L = 0 gives 0; both without tokens 1. No "
        "predicted query: 0; no gold query: undefined."
    ),
    convention="query",
    item=_rouge_l_ctx,
    params=(TOKENIZE, Param("beta", 1.0, None, "recall weight of the F-measure")),
    inputs=QUERY,
))


# --------------------------------------------------------------------------- Exec and F1_Ans


def _not_executed(ctx: ItemContext) -> bool:
    """True when the predicted query's execution is unknown: the run has a query but kgqa did
    not execute it (outcome missing), or the entry is answer-only (no query at all)."""
    pred = ctx.prediction
    if pred is None:
        return False  # not in the run: no query was produced
    has_query = pred_query(ctx) is not None
    if ctx.outcome.status is Status.MISSING and has_query:
        return True
    return not has_query and pred.status is Status.OK and ctx.outcome.status is Status.OK


def exec_value(ctx: ItemContext) -> float | None:
    if _not_executed(ctx):
        return None
    return 1.0 if ctx.outcome.status is Status.OK else 0.0


register(MeasureDef(
    name="Exec",
    definition=(
        "Executability (ICTIR 2022): 1 iff the predicted query executed without error (OK outcome, "
        "empty answers included); 0 for a parse error, execution error, timeout (reported apart "
        "in the outcome counts) or refusal, and for a question the run lacks. Undefined when "
        "nothing was executed although the run has a query (no --kg), or the entry has an answer "
        "but no query."
    ),
    convention="query",
    item=lambda ctx: exec_value(ctx),
    binary=True,
    inputs=Inputs(answers=False, execution=True),
))


def f1_ans(ctx: ItemContext) -> float | None:
    if _not_executed(ctx) and pred_query(ctx) is not None:
        return None
    if ctx.outcome.status is not Status.OK:
        return 0.0
    return kgqa_rule(ctx.counts)[2]


register(MeasureDef(
    name="F1_Ans",
    definition=(
        "Answer F1 (ICTIR 2022): F1 of the system's answer collection against the gold one as the "
        "profile compares them (answer tuples in the kgqa profile); both empty 1.0, exactly one "
        "empty 0; any failed outcome (parse/execution error, timeout, refusal, missing) 0, whatever "
        "the profile's failure rule. Undefined when the run has a query that was not executed."
    ),
    convention="query",
    item=lambda ctx: f1_ans(ctx),
    inputs=Inputs(answers=True, execution=True),
))


# --------------------------------------------------------------------------- F1_Sem


@feature_extractor("sem")
def _sem(info: QueryInfo) -> frozenset:
    return frozenset(info.entities) | frozenset(info.predicates)


def sem_set(query: str) -> frozenset:
    """Entities (IRIs in subject/object position, classes and VALUES IRIs included) and
    predicates (IRIs in predicate position, every IRI of a property path) of ``query``, as full
    IRIs, from the tolerant analyzer."""
    return feature(query, "sem")


def f1_sem(pred: str | None, gold: str | None) -> float | None:
    if gold is None:
        return None
    if pred is None:
        return 0.0
    return set_f1(sem_set(pred), sem_set(gold))


def _f1_sem_ctx(ctx: ItemContext) -> float | None:
    """:func:`f1_sem` of the question's queries, from its :class:`FeatureComparison`."""
    if gold_query(ctx) is None:
        return None
    if pred_query(ctx) is None:
        return 0.0
    return feature_comparison(ctx, "sem").set_f1("sem")


register(MeasureDef(
    name="F1_Sem",
    definition=(
        "F1 over semantic elements (ICTIR 2022 Eq. 5-6, beta=1): the set of entities (IRIs in "
        "subject/object position incl. classes and VALUES IRIs) and predicates (incl. every IRI of a "
        "property path), as full IRIs after prefix expansion, of the predicted vs the gold query, "
        "read by the tolerant analyzer (a broken query keeps its IRIs). Both empty 1; no predicted "
        "query 0; no gold query undefined."
    ),
    convention="query",
    item=_f1_sem_ctx,
    inputs=QUERY,
))


# --------------------------------------------------------------------------- F1_Tri

_ANY = ("?",)  # the placeholder every variable becomes when variables are ignored


def _node(t: Any, ignore: bool) -> Any:
    if isinstance(t, (Var, BNode)):
        return _ANY if ignore else ("var", t.name if isinstance(t, Var) else "_:" + t.id)
    if isinstance(t, Path):
        return ("path", t.text)
    return t


def _tri(info: QueryInfo, ignore: bool) -> frozenset:
    return frozenset(
        (_node(t.subject, ignore), _node(t.predicate, ignore), _node(t.object, ignore))
        for t in (*info.triples, *info.template)
    )


feature_extractor("tri")(lambda info: _tri(info, True))
feature_extractor("tri_named")(lambda info: _tri(info, False))


def tri_set(query: str, ignore_vars: bool = True) -> frozenset:
    """The query's triple patterns (WHERE clause and CONSTRUCT template, ``;``/``,`` expanded,
    patterns in OPTIONAL/UNION/MINUS/subqueries included) as ``(s, p, o)`` tuples; a variable or
    blank node becomes ``("?",)`` when ``ignore_vars``, else ``("var", name)``; a property path
    ``("path", text)``."""
    return feature(query, "tri" if ignore_vars else "tri_named")


def _is_var(x: Any) -> bool:
    return isinstance(x, tuple) and len(x) == 2 and x[0] == "var"


MAX_ALIGN_STEPS = 200_000


# long function: branch and bound with its bounds inlined (the hot path of the query measures)
def aligned_matches(pred: frozenset, gold: frozenset) -> int:
    """max over one-to-one maps f from predicted to gold variables (a variable may stay
    unmapped) of |{t in pred : f(t) in gold}|. Exhaustive branch and bound; after
    :data:`MAX_ALIGN_STEPS` search steps the best map found so far is used."""
    ground = sum(1 for t in pred if not any(_is_var(x) for x in t) and t in gold)
    pv = [t for t in pred if any(_is_var(x) for x in t)]
    gv = [t for t in gold if any(_is_var(x) for x in t)]
    if not pv or not gv:
        return ground
    # candidate (pred triple, partial map) pairs
    cands: list[list[dict]] = []
    for t in pv:
        opts = []
        for g in gv:
            m: dict = {}
            ok = True
            for x, y in zip(t, g):
                if _is_var(x):
                    if not _is_var(y) or m.get(x, y) != y:
                        ok = False
                        break
                    m[x] = y
                elif x != y:
                    ok = False
                    break
            if ok and len(set(m.values())) == len(m):
                opts.append(m)
        cands.append(opts)
    live = [(t, o) for t, o in zip(pv, cands) if o]
    if not live:
        return ground
    order: list = []
    count: dict = {}
    for t, _ in live:
        for x in t:
            if _is_var(x):
                count[x] = count.get(x, 0) + 1
    order = sorted(count, key=lambda v: (-count[v], repr(v)))
    best = 0
    steps = 0
    assign: dict = {}
    used: set = set()

    def consistent(m: dict) -> bool:
        for k, v in m.items():
            a = assign.get(k, _UNSET)
            if a is _UNSET:
                if v in used:
                    return False
            elif a != v:
                return False
        return True

    def bound() -> int:
        return sum(1 for _, opts in live if any(consistent(m) for m in opts))

    def rec(i: int) -> None:
        nonlocal best, steps
        steps += 1
        if steps > MAX_ALIGN_STEPS:
            return
        if i == len(order):
            got = sum(1 for _, opts in live if any(all(assign.get(k) == v for k, v in m.items()) for m in opts))
            best = max(best, got)
            return
        if bound() <= best:
            return
        var = order[i]
        options = []
        for _, opts in live:
            for m in opts:
                y = m.get(var)
                if y is not None and y not in used and y not in options:
                    options.append(y)
        for y in sorted(options, key=repr):
            assign[var] = y
            used.add(y)
            rec(i + 1)
            used.discard(y)
            del assign[var]
        assign[var] = None  # unmapped
        rec(i + 1)
        del assign[var]

    rec(0)
    return ground + best


_UNSET = object()


def f1_tri(pred: str | None, gold: str | None, vars: str = "ignored") -> float | None:
    if gold is None:
        return None
    if pred is None:
        return 0.0
    ignore = vars == "ignored"
    g = tri_set(gold, ignore)
    p = tri_set(pred, ignore)
    if ignore:
        return set_f1(p, g)
    return _f1_aligned(p, g)


@functools.lru_cache(maxsize=FEATURE_CACHE_SIZE)
def _f1_aligned(p: frozenset, g: frozenset) -> float:
    if not p and not g:
        return 1.0
    if not p or not g:
        return 0.0
    tp = aligned_matches(p, g)
    return 2 * tp / (len(p) + len(g)) if tp else 0.0


def _f1_tri_ctx(ctx: ItemContext, vars: str = "ignored") -> float | None:
    """:func:`f1_tri` of the question's queries: with variables ignored from its
    :class:`FeatureComparison`, aligned computed once per question."""
    if gold_query(ctx) is None:
        return None
    if pred_query(ctx) is None:
        return 0.0
    if vars == "ignored":
        return feature_comparison(ctx, "tri").set_f1("tri")
    memo = question_memo(ctx)
    v = memo.get("tri_aligned")
    if v is None:
        v = memo["tri_aligned"] = f1_tri(pred_query(ctx), gold_query(ctx), vars)
    return v


register(MeasureDef(
    name="F1_Tri",
    definition=(
        "F1 over triple patterns (ICTIR 2022, beta=1): sets of (s,p,o) patterns of predicted vs gold "
        "query (';'/',' expanded, OPTIONAL/UNION/subquery patterns included, IRIs expanded, paths by "
        "text), from the tolerant analyzer. vars=ignored (paper): any variable or blank node matches "
        "any other; vars=aligned: the one-to-one variable renaming maximising matches. Both empty 1; "
        "no predicted query 0."
    ),
    convention="query",
    item=_f1_tri_ctx,
    params=(VARS,),
    inputs=QUERY,
))


# --------------------------------------------------------------------------- compounds


def floor(value: float, gamma: float) -> float:
    """``gamma + (1 - gamma) * value`` (written ``value + gamma * (1 - value)`` so 1 stays 1)."""
    v = min(1.0, max(0.0, float(value)))
    return v + gamma * (1.0 - v)


def floored_product(values: Sequence[float | None], gammas: Sequence[float],
                    weights: Sequence[float] | None = None) -> float | None:
    """prod_i floor(v_i, gamma_i) ** w_i; None if any value is None."""
    if any(v is None for v in values):
        return None
    out = 1.0
    for i, (v, g) in enumerate(zip(values, gammas)):
        f = floor(v, g)
        out *= f if weights is None or weights[i] == 1 else f ** weights[i]
    return out


def _gek(semantic):
    def item(ctx: ItemContext, gamma: float, **kw: Any) -> float | None:
        ex = exec_value(ctx)
        if ex is None:
            return None
        g = gold_query(ctx)
        if g is None:
            return None
        sem = semantic(ctx, **kw)
        if ex == 0.0:
            # ICTIR 2022: r_K(f) = error -> P(D2) = P(D3) = gamma
            return floor(sem, gamma) * gamma * gamma
        ans = f1_ans(ctx)
        return floored_product((sem, ex, ans), (gamma, gamma, gamma))

    return item


_GEK_INPUTS = Inputs(answers=True, query=True, execution=True)

_GEK_TAIL = (
    "x Exec x F1_Ans, each component floored as gamma + (1-gamma) x value (gamma default 1e-4); a "
    "prediction that does not execute has P(D2)=P(D3)=gamma, so its score is floor(semantic) x "
    "gamma². Undefined when Exec is undefined or there is no gold query."
)

register(MeasureDef(
    name="GEK1",
    definition="GEK-1 (Linjordet, Balog, Setty, ICTIR 2022) = BLEU(tokenize) " + _GEK_TAIL,
    convention="query",
    item=_gek(lambda ctx, tokenize: _bleu_ctx(ctx, tokenize)),
    params=(GAMMA, TOKENIZE),
    inputs=_GEK_INPUTS,
))

register(MeasureDef(
    name="GEK2",
    definition="GEK-2 (Linjordet, Balog, Setty, ICTIR 2022) = F1_Sem " + _GEK_TAIL,
    convention="query",
    item=_gek(_f1_sem_ctx),
    params=(GAMMA,),
    inputs=_GEK_INPUTS,
))

register(MeasureDef(
    name="GEK3",
    definition="GEK-3 (Linjordet, Balog, Setty, ICTIR 2022) = F1_Tri(vars) " + _GEK_TAIL,
    convention="query",
    item=_gek(_f1_tri_ctx),
    params=(GAMMA, VARS),
    inputs=_GEK_INPUTS,
))


def compound(
    name: str,
    components: Sequence[str | Measure],
    floors: float | Sequence[float] = 1e-4,
    weights: Sequence[float] | None = None,
    *,
    definition: str | None = None,
    convention: str = "compound",
    register_measure: bool = False,
) -> MeasureDef:
    """Define a compound measure (registered under ``name`` only with ``register_measure=True``;
    otherwise use the returned definition directly: ``kgqa.evaluate(..., measures=[defn()])``,
    so defining one never changes what other code in the process sees): per question
    ``prod_i (gamma_i + (1 - gamma_i) * v_i) ** w_i`` over the component measures' per-question
    values ``v_i`` (clamped to [0,1]), undefined if any component is undefined; averaged over
    questions like any measure.

    ``components`` are measure specs (``"F1_Tri(vars=aligned)"``) or bound measures, resolved
    when the compound is first used. ``floors`` is one gamma for all components (then the
    compound gets a ``gamma`` parameter with that default) or one per component. ``weights``
    are exponents (default all 1: the ICTIR 2022 product).

    To honour D3-depends-on-D2 use F1_Ans (0 for a failed query) as the answer component."""
    specs = list(components)
    if not specs:
        raise ValueError(f"compound {name}: needs at least one component")
    uniform = isinstance(floors, (int, float))
    per = None if uniform else [float(f) for f in floors]  # type: ignore[union-attr]
    if per is not None and len(per) != len(specs):
        raise ValueError(f"compound {name}: {len(per)} floors for {len(specs)} components")
    w = None if weights is None else [float(x) for x in weights]
    if w is not None and len(w) != len(specs):
        raise ValueError(f"compound {name}: {len(w)} weights for {len(specs)} components")
    for g in ([float(floors)] if uniform else per):  # type: ignore[arg-type]
        if not 0.0 <= g <= 1.0:
            raise ValueError(f"compound {name}: floor {g} is not in [0, 1]")
    if w is not None and any(x < 0 for x in w):
        raise ValueError(f"compound {name}: weights must be >= 0")
    resolved: list[Measure] = []

    def bound() -> list[Measure]:
        if not resolved:
            resolved.extend(parse(s) if isinstance(s, str) else s for s in specs)
        return resolved

    def label(s: str | Measure) -> str:
        return s if isinstance(s, str) else s.key

    def item(ctx: ItemContext, **params: Any) -> float | None:
        ms = bound()
        gammas = [params["gamma"]] * len(ms) if uniform else per
        return floored_product([m.item_value(ctx) for m in ms], gammas, w)  # type: ignore[arg-type]

    if definition is None:
        parts = " x ".join(label(s) + (f"^{w[i]:g}" if w is not None and w[i] != 1 else "") for i, s in enumerate(specs))
        fl = "gamma" if uniform else ", ".join(f"{g:g}" for g in per)  # type: ignore[union-attr]
        definition = (f"Compound {name} = {parts}, each component floored as g + (1-g) x value "
                      f"(g = {fl}); undefined if any component is undefined.")
    defn = MeasureDef(
        name=name,
        definition=definition,
        convention=convention,
        item=item,
        params=(Param("gamma", float(floors), None, "floor of every component"),) if uniform else (),
        inputs=lambda **_: Inputs.union(m.inputs for m in bound()),
    )
    if register_measure:
        register(defn)
    return defn
