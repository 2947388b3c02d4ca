"""Axiomatic checks of measures (Linjordet, Balog, Setty, ICTIR 2022, Sect. 4, Table 1).

A *suite* is one gold query ``f*`` with its outcome and a set of *cases*: predictions (query
text and outcome) derived from it. From the cases, pairs ``(f1, f2)`` where ``f1`` is strictly
better than ``f2`` on one axiom's comparison — with the other desiderata held equal (ceteris
paribus) — are formed, and each measure is asked to order them strictly,
``m(f1) > m(f2)``. Comparison views (all from :mod:`kgqa.score.query_measures` and the kgqa
profile's answer view): ``S`` the semantic elements (entities and predicates), ``T`` the
triple patterns (variables ignored), ``A`` the answer as a set of tuples; ``g_X`` is the set F1
of a case's ``X`` against the gold's (both empty: 1).

- **A1** (semantic representation): both execute with the *same answer*, and
  ``g_S(f1) > g_S(f2)`` and ``g_T(f1) > g_T(f2)`` (more correct semantic elements and triple
  patterns). ``A1.a`` is the part where ``f1`` is the gold query itself.
- **A2** (executability): ``f1`` executes (any answer, the empty one included), ``f2`` fails
  (parse or execution error), and both have the same ``S`` and ``T``.
- **A3** (answer completeness): both execute, ``g_A(f1) > g_A(f2)``, and the queries have the
  same *skeleton*: the same token sequence once every number and string is replaced by a
  placeholder and DISTINCT/REDUCED are dropped (they differ only in answer-changing constants),
  hence the same ``S`` and ``T``.

Each pair is *strict* (``m(f1) > m(f2)``), a *tie* or *reversed* (``<``); pairs where the
measure is undefined on either side are not counted. Verdicts:

- ``satisfied`` (●): every pair strict;
- A1 ``partial`` (◐, "only A1.a"): every pair whose ``f1`` is the gold query is strict (a perfect
  prediction scores strictly above every worse one), others are not;
- A2/A3 ``partial`` (◑): every gold pair strict and no pair reversed (the measure never contradicts
  the axiom, but cannot separate some pairs);
- ``violated`` (○): otherwise; ``n/a`` when no pair was formed.

**Paper reading** (default; ``strict=False``): the paper counts answer-level measures as
satisfying A2 and A3 because answer correctness presupposes execution (Sect. 4.2), while they
give no partial reward (a separate column). So for measures that do not read the query
(registry ``needs`` without ``query``), an A2/A3 tie whose better prediction does not return
the gold answer is *excused* (counted apart, with an example). With ``strict=True`` nothing is
excused (then Answer EM is ◑ on A2/A3 and answer F1 ◑ on A2: an empty answer and an error both
score 0).

General properties: *instance level* — the measure gives per-question values; *partial
reward* — some case scores strictly between 0 and 1.

The counterexample shown for a verdict below ● is the offending pair (reversed pair first,
else a tie on a gold pair, else any tie) with the shortest pair of query texts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kgqa.metaeval.degrade import answer_key, get as get_transform, item_rng, rename_variables, Context, build_context
from kgqa.model import BooleanAnswer, Dataset, IRI, Item, Outcome, Prediction, Run, Status, TableAnswer
from kgqa.score import profiles
from kgqa.score.evaluate import evaluate
from kgqa.score.measures import Measure, parse_list
from kgqa.score.query_measures import sem_set, set_f1, tri_set
from kgqa.sparql.lexer import tokenize

__all__ = [
    "Case", "Suite", "PairResult", "AxiomVerdict", "MeasureReport", "AxiomReport", "check",
    "synthetic_suites", "dataset_suites", "PAPER_TABLE1", "SYMBOLS", "DEFAULT_AXIOM_MEASURES",
]

AXIOMS = ("A1", "A2", "A3")
SYMBOLS = {"satisfied": "●", "violated": "○", "n/a": "-"}
DEFAULT_AXIOM_MEASURES = "QueryEM,AnswerEM,F1_Ans,BLEU,ROUGE_L,GEK1,GEK2,GEK3"

#: Table 1 of the paper (axioms A1, A2, A3, instance level, partial reward), for the registered
#: measures it covers (F1_Ans stands for "Acc/F1/R/P (Answer)").
PAPER_TABLE1: dict[str, tuple[str, str, str, str, str]] = {
    "QueryEM": ("◐", "◑", "◑", "●", "○"),
    "AnswerEM": ("○", "●", "●", "●", "○"),
    "F1_Ans": ("○", "●", "●", "●", "●"),
    "F1": ("○", "●", "●", "●", "●"),
    "BLEU": ("◐", "○", "○", "◑", "●"),
    "ROUGE_L": ("◐", "○", "○", "●", "●"),
    "GEK1": ("◐", "●", "●", "●", "●"),
    "GEK2": ("●", "●", "●", "●", "●"),
    "GEK3": ("●", "●", "●", "●", "●"),
}

TOL = 1e-12


@dataclass(frozen=True)
class Case:
    """A prediction: its ``name`` (how it was derived), query text and outcome."""

    name: str
    query: str | None
    outcome: Outcome


@dataclass
class Suite:
    """A gold query, its outcome, and the cases derived from it (the gold itself included,
    named ``gold``)."""

    name: str
    gold_query: str
    gold_outcome: Outcome
    cases: list[Case]


@dataclass(frozen=True)
class PairResult:
    axiom: str
    suite: str
    better: Case
    worse: Case
    m_better: float
    m_worse: float
    relation: str  # "strict" | "tie" | "reversed"
    gold_pair: bool
    excused: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "better": {"case": self.better.name, "query": self.better.query,
                                                 "outcome": self.better.outcome.label, "score": self.m_better},
                "worse": {"case": self.worse.name, "query": self.worse.query,
                          "outcome": self.worse.outcome.label, "score": self.m_worse},
                "relation": self.relation}

    def explain(self, measure: str) -> str:
        rel = {"strict": ">", "tie": "=", "reversed": "<"}[self.relation]
        return (f"{self.suite}: {measure}({self.better.name}) = {self.m_better:.4g} {rel} "
                f"{measure}({self.worse.name}) = {self.m_worse:.4g}, although {self.better.name} is better on "
                f"{self.axiom} ({self.better.outcome.label} vs {self.worse.outcome.label})")


@dataclass
class AxiomVerdict:
    measure: str
    axiom: str
    verdict: str  # satisfied | partial | violated | n/a
    symbol: str
    detail: str
    pairs: int
    strict: int
    ties: int
    reversed: int
    excused: int
    counterexample: PairResult | None = None
    excused_example: PairResult | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict, "symbol": self.symbol, "detail": self.detail,
                               "pairs": self.pairs, "strict": self.strict, "ties": self.ties,
                               "reversed": self.reversed, "excused": self.excused}
        if self.counterexample is not None:
            out["counterexample"] = self.counterexample.to_json()
            out["explanation"] = self.counterexample.explain(self.measure)
        if self.excused_example is not None:
            out["excused_example"] = self.excused_example.to_json()
        return out


@dataclass
class MeasureReport:
    measure: str
    verdicts: dict[str, AxiomVerdict]
    instance_level: bool
    partial_reward: bool
    paper: tuple[str, str, str, str, str] | None = None

    @property
    def symbols(self) -> tuple[str, str, str]:
        return tuple(self.verdicts[a].symbol for a in AXIOMS)  # type: ignore[return-value]

    @property
    def agrees_with_paper(self) -> bool | None:
        return None if self.paper is None else self.symbols == self.paper[:3]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"measure": self.measure,
                               "axioms": {a: v.to_json() for a, v in self.verdicts.items()},
                               "instance_level": self.instance_level, "partial_reward": self.partial_reward}
        if self.paper is not None:
            out["paper_table1"] = {"A1": self.paper[0], "A2": self.paper[1], "A3": self.paper[2],
                                   "instance_level": self.paper[3], "partial_reward": self.paper[4]}
            out["agrees_with_paper"] = self.agrees_with_paper
        return out


@dataclass
class AxiomReport:
    measures: list[MeasureReport]
    suites: list[str]
    cases: int
    pairs: dict[str, int]
    reading: str
    signature: str

    def to_json(self) -> dict[str, Any]:
        return {"measures": [m.to_json() for m in self.measures], "suites": self.suites, "cases": self.cases,
                "pairs": self.pairs, "reading": self.reading, "signature": self.signature}

    def get(self, measure: str) -> MeasureReport:
        for m in self.measures:
            if m.measure == measure:
                return m
        raise KeyError(measure)


# --------------------------------------------------------------------------- views


def _answer_set(o: Outcome) -> frozenset:
    k = answer_key(o.answer)
    if isinstance(k, tuple):  # boolean
        return frozenset({k})
    return k if k is not None else frozenset()


def _skeleton(q: str | None) -> tuple:
    if q is None:
        return ()
    out = []
    for t in tokenize(q):
        if t.kind in ("NUMBER", "STRING"):
            out.append(("CONST",))
        elif t.kind == "KEYWORD" and t.value in ("DISTINCT", "REDUCED"):
            continue
        else:
            out.append((t.kind, t.value))
    return tuple(out)


@dataclass
class _View:
    case: Case
    ok: bool
    failed: bool
    S: frozenset
    T: frozenset
    A: frozenset | None
    gS: float
    gT: float
    gA: float | None
    skeleton: tuple


def _views(s: Suite) -> list[_View]:
    S0, T0 = sem_set(s.gold_query), tri_set(s.gold_query)
    A0 = _answer_set(s.gold_outcome)
    out = []
    for c in s.cases:
        q = c.query or ""
        S, T = (sem_set(q), tri_set(q)) if c.query else (frozenset(), frozenset())
        ok = c.outcome.status is Status.OK
        A = _answer_set(c.outcome) if ok else None
        out.append(_View(c, ok, c.outcome.status in (Status.PARSE_ERROR, Status.EXEC_ERROR), S, T, A,
                         set_f1(S, S0), set_f1(T, T0), set_f1(A, A0) if A is not None else None, _skeleton(c.query)))
    return out


def pairs(s: Suite) -> dict[str, list[tuple[_View, _View]]]:
    """The admissible (better, worse) pairs of a suite per axiom (module docstring)."""
    vs = _views(s)
    out: dict[str, list[tuple[_View, _View]]] = {a: [] for a in AXIOMS}
    for v1 in vs:
        for v2 in vs:
            if v1 is v2:
                continue
            if v1.ok and v2.ok and v1.A == v2.A and v1.gS > v2.gS + TOL and v1.gT > v2.gT + TOL:
                out["A1"].append((v1, v2))
            if v1.ok and v2.failed and v1.S == v2.S and v1.T == v2.T:
                out["A2"].append((v1, v2))
            if (v1.ok and v2.ok and v1.skeleton == v2.skeleton and v1.gA is not None and v2.gA is not None
                    and v1.gA > v2.gA + TOL):
                out["A3"].append((v1, v2))
    return out


# --------------------------------------------------------------------------- checking


def _score_cases(suites: Sequence[Suite], measures: Sequence[Measure], profile: str) -> dict[tuple[str, str], dict[str, float | None]]:
    prof = profiles.get(profile).with_measures(list(measures))
    items, preds, predicted, gold = [], [], {}, {}
    for s in suites:
        for c in s.cases:
            iid = f"{s.name}#{c.name}"
            items.append(Item(iid, {"en": s.name}, s.gold_query))
            preds.append(Prediction(iid, sparql=c.query))
            predicted[iid] = c.outcome
            gold[iid] = s.gold_outcome
    ev = evaluate(Dataset("axioms", items), Run("axioms", preds), prof, predicted=predicted, gold=gold)
    by_id = {q.id: q.scores for q in ev.questions}
    out: dict[tuple[str, str], dict[str, float | None]] = {}
    for s in suites:
        for c in s.cases:
            sc = by_id.get(f"{s.name}#{c.name}", {})
            out[(s.name, c.name)] = {m.key: sc.get(m.key) for m in measures}
    return out


def _pick(results: Sequence[PairResult]) -> PairResult | None:
    if not results:
        return None
    return min(results, key=lambda r: (len(r.better.query or "") + len(r.worse.query or ""), r.suite,
                                       r.better.name, r.worse.name))


def _verdict(measure: str, axiom: str, results: list[PairResult]) -> AxiomVerdict:
    counted = [r for r in results if not r.excused]
    strict = [r for r in counted if r.relation == "strict"]
    ties = [r for r in counted if r.relation == "tie"]
    rev = [r for r in counted if r.relation == "reversed"]
    excused = [r for r in results if r.excused]
    gold_bad = [r for r in counted if r.gold_pair and r.relation != "strict"]
    n_gold = sum(1 for r in counted if r.gold_pair)
    base = dict(measure=measure, axiom=axiom, pairs=len(results), strict=len(strict), ties=len(ties),
                reversed=len(rev), excused=len(excused), excused_example=_pick(excused))
    if not results:
        return AxiomVerdict(verdict="n/a", symbol=SYMBOLS["n/a"], detail="no admissible pair", **base)
    if not ties and not rev:
        return AxiomVerdict(verdict="satisfied", symbol="●", detail="every pair strictly ordered", **base)
    if axiom == "A1" and n_gold and not gold_bad:
        return AxiomVerdict(verdict="partial", symbol="◐", detail="only A1.a: the gold query scores strictly above "
                            "every worse prediction, other pairs are not strictly ordered",
                            counterexample=_pick(rev) or _pick(ties), **base)
    if axiom != "A1" and n_gold and not gold_bad and not rev:
        return AxiomVerdict(verdict="partial", symbol="◑", detail=f"never reversed and strict when the better "
                            f"prediction is the gold query, but ties on {len(ties)} pairs",
                            counterexample=_pick(ties), **base)
    ce = _pick(rev) or _pick(gold_bad) or _pick(ties)
    why = ("reverses the order" if rev else "does not separate the gold query from a worse prediction"
           if gold_bad else "never strictly orders a gold pair")
    return AxiomVerdict(verdict="violated", symbol="○", detail=why, counterexample=ce, **base)


def check(measures: str | Sequence[str | Measure] = DEFAULT_AXIOM_MEASURES, suites: Sequence[Suite] | None = None, *,
          strict: bool = False, profile: str = "kgqa") -> AxiomReport:
    """Check each measure against A1-A3 on ``suites`` (default: :func:`synthetic_suites`)."""
    ms = parse_list(measures) if isinstance(measures, str) else [
        m for x in measures for m in (parse_list(x) if isinstance(x, str) else [x])]
    suites = list(suites) if suites is not None else synthetic_suites()
    values = _score_cases(suites, ms, profile)
    all_pairs = {s.name: pairs(s) for s in suites}
    reports = []
    for m in ms:
        answer_level = "query" not in m.defn.needs
        results: dict[str, list[PairResult]] = {a: [] for a in AXIOMS}
        case_values: list[float] = []
        for s in suites:
            gold_key = _answer_set(s.gold_outcome)
            for c in s.cases:
                v = values[(s.name, c.name)][m.key]
                if v is not None and not math.isnan(v):
                    case_values.append(v)
            for axiom, ps in all_pairs[s.name].items():
                for v1, v2 in ps:
                    a = values[(s.name, v1.case.name)][m.key]
                    b = values[(s.name, v2.case.name)][m.key]
                    if a is None or b is None or math.isnan(a) or math.isnan(b):
                        continue
                    rel = "strict" if a > b + TOL else ("tie" if abs(a - b) <= TOL else "reversed")
                    excused = (not strict and answer_level and axiom != "A1" and rel == "tie"
                               and v1.A != gold_key)
                    results[axiom].append(PairResult(axiom, s.name, v1.case, v2.case, a, b, rel,
                                                     v1.case.name == "gold", excused))
        verdicts = {a: _verdict(m.key, a, results[a]) for a in AXIOMS}
        reports.append(MeasureReport(
            m.key, verdicts, instance_level=bool(case_values),
            partial_reward=any(TOL < v < 1 - TOL for v in case_values),
            paper=PAPER_TABLE1.get(m.key)))
    n_pairs = {a: sum(len(all_pairs[s.name][a]) for s in suites) for a in AXIOMS}
    reading = "strict" if strict else "paper"
    sig = "|".join([f"axioms:{reading}", f"profile:{profile}", f"suites:{len(suites)}",
                    f"cases:{sum(len(s.cases) for s in suites)}",
                    "pairs:" + ",".join(f"{a}={n_pairs[a]}" for a in AXIOMS),
                    "measures:" + "+".join(m.full for m in ms)])
    return AxiomReport(reports, [s.name for s in suites], sum(len(s.cases) for s in suites), n_pairs, reading, sig)


# --------------------------------------------------------------------------- suites

_EX = "http://example.org/"


def _people(*names: str) -> Outcome:
    return Outcome.ok(TableAnswer(("person",), tuple((IRI(_EX + n),) for n in names)))


def _error(query: str) -> Outcome:
    return Outcome(Status.PARSE_ERROR, None, "syntax error (synthetic)")


def synthetic_suites() -> list[Suite]:
    """Hand-made suites with stated outcomes (no KG needed). Suite ``people``: a SELECT with two
    entity patterns and an age FILTER (gold answer p1-p4; ages p1 35, p2 40, p3 45, p4 55, p5 30,
    p6 25); suite ``ask``: the paper's own ASK example (Sect. 3.1: ``dbp:university`` vs
    ``dbo:almaMater``, both true)."""
    gold = ("PREFIX ex: <http://example.org/>\nSELECT DISTINCT ?person WHERE {\n  ?person ex:memberOf ex:Sales .\n"
            "  ?person ex:expertIn ex:Sensors .\n  ?person ex:age ?age .\n  FILTER(?age > 30 && ?age < 60)\n}")
    a_star = _people("p1", "p2", "p3", "p4")
    w1 = gold.replace("ex:Sales", "ex:Marketing")
    w2 = w1.replace("ex:Sensors", "ex:Motors")
    wide = gold.replace("?age > 30 && ?age < 60", "?age > 29 && ?age < 61")
    narrow = gold.replace("?age < 60", "?age < 40")
    none = gold.replace("?age < 60", "?age < 31")
    t1 = get_transform("T1")

    def broken(q: str) -> str:
        out = t1.apply(q, item_rng(0, "T1", "syn"), Context(Dataset("syn", [])), "syn")
        assert out is not None
        return out

    ren = rename_variables(gold)
    people = Suite("synthetic:people", gold, a_star, [
        Case("gold", gold, a_star),
        Case("renamed", ren, a_star),                     # D1-equivalent rewrite, same answer
        Case("wrong-entity", w1, a_star),                 # one wrong entity, same answer (A1)
        Case("wrong-entity-renamed", rename_variables(w1), a_star),
        Case("two-wrong-entities", w2, a_star),
        Case("wider-filter", wide, _people("p1", "p2", "p3", "p4", "p5")),  # two constants changed
        Case("narrower-filter", narrow, _people("p1")),   # one constant changed
        Case("empty-filter", none, Outcome.ok(TableAnswer(("person",), ()))),
        Case("unclosed", broken(gold), _error(gold)),
        Case("unclosed-renamed", broken(ren), _error(ren)),
        Case("empty-filter-unclosed", broken(none), _error(none)),
        Case("no-query", None, Outcome(Status.MISSING, None, "no prediction")),
    ])
    ask_gold = ("PREFIX dbr: <http://dbpedia.org/resource/>\nPREFIX dbp: <http://dbpedia.org/property/>\n"
                "ASK WHERE { dbr:Justin_Madden dbp:university dbr:Australian_Catholic_University }")
    ask_alt = ("PREFIX dbr: <http://dbpedia.org/resource/>\nPREFIX dbo: <http://dbpedia.org/ontology/>\n"
               "ASK WHERE { dbr:Justin_Madden dbo:almaMater ?uri . }")
    true = Outcome.ok(BooleanAnswer(True))
    ask = Suite("synthetic:ask", ask_gold, true, [
        Case("gold", ask_gold, true),
        Case("alma-mater", ask_alt, true),
        Case("unclosed", broken(ask_gold), _error(ask_gold)),
        Case("false", ask_gold.replace("Australian_Catholic_University", "University_of_Melbourne"),
             Outcome.ok(BooleanAnswer(False))),
    ])
    return [people, ask]


#: Transformations whose outputs become cases of a dataset suite (each with T1 applied too).
CASE_TRANSFORMS = ("drop", "swap", "T2", "distinct", "count-distinct", "filter-constant")


def dataset_suites(dataset: Dataset, runner: Any, *, ids: Iterable[str] | None = None, seeds: Sequence[int] = (0, 1),
                   context: Context | None = None) -> list[Suite]:
    """Suites from real gold queries: for each item (or those in ``ids``), the cases are the
    gold, its variable renaming, the outputs of :data:`CASE_TRANSFORMS` for each seed, and T1
    (closing brace removed) of each of those; every case is executed with ``runner`` (a
    :class:`kgqa.execute.executor.Executor`). Items whose gold query fails are left out."""

    wanted = set(ids) if ids is not None else None
    items = [it for it in dataset.items if it.sparql and it.sparql.strip() and (wanted is None or it.id in wanted)]
    ctx = context or build_context(dataset, CASE_TRANSFORMS, runner)
    t1 = get_transform("T1")
    texts: dict[str, dict[str, str]] = {}
    for it in items:
        cases = {"gold": it.sparql, "renamed": rename_variables(it.sparql)}
        for name in CASE_TRANSFORMS:
            t = get_transform(name)
            for seed in seeds:
                out = t.apply(it.sparql, item_rng(seed, name, it.id), ctx, it.id)
                if out is not None and out not in cases.values():
                    cases[f"{name}@{seed}"] = out
        for name, q in list(cases.items()):
            b = t1.apply(q, item_rng(0, "T1", it.id), ctx, it.id)
            if b is not None and b not in cases.values():
                cases[f"unclosed({name})"] = b
        texts[it.id] = cases
    flat = {f"{iid}\x00{name}": q for iid, cs in texts.items() for name, q in cs.items()}
    outcomes = runner.run(flat)
    suites = []
    for it in items:
        gold_o = outcomes[f"{it.id}\x00gold"]
        if gold_o.status is not Status.OK:
            continue
        cases = [Case(name, q, outcomes[f"{it.id}\x00{name}"]) for name, q in texts[it.id].items()]
        suites.append(Suite(it.id, it.sparql, gold_o, cases))
    return suites
