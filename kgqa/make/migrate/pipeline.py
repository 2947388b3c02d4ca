"""The migration itself: :func:`migrate` (see :mod:`kgqa.make.migrate` for the method)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kgqa.make.migrate.agreement import MATCHING, Agreement, compare, map_answer
from kgqa.make.migrate.kg import KG, TYPE_PATH, iri_ref
from kgqa.make.migrate.links import OWL_SAMEAS, RDFS_LABEL, EntityMapper, Links
from kgqa.make.migrate.paths import DEFAULT_DISAMBIGUATION, DEFAULT_REDIRECT, PairPaths, PathFinder, direction, path_text
from kgqa.make.migrate.predicates import (DEFAULT_MIN_SHARE, DEFAULT_MIN_SUPPORT, Candidate, PredicateEvidence, propose,
                                     verify)
from kgqa.make.migrate.rewrite import PredicateTarget, constants, rewrite
from kgqa.make.migrate.rules import Rule, RuleSet
from kgqa.make.migrate.stats import Tables, sparql_tables, triple_tables
from kgqa.model import IRI, Dataset, Item, Literal, Outcome, Status, TableAnswer
from kgqa.model.progress import progress_bar
from kgqa.model.terms import Term
from kgqa.make.migrate.align import align_classes, find_page_predicates, value_transform
from kgqa.make.migrate.scale import object_vars, scale_answer, scale_filters, scaled_columns
from kgqa.make.migrate.separate import separate
from kgqa.sparql.analyzer import Var, analyze


DEFAULT_MIN_PRECISION = 0.9


@dataclass
class MigrateOptions:
    """Settings of a migration (all part of its signature)."""

    seed: int = 0
    sample: int = 20  # evidence triples per source predicate (complex queries, with a source KG)
    min_support: int = DEFAULT_MIN_SUPPORT  # evidence pairs a predicate mapping needs at least ...
    min_share: float = DEFAULT_MIN_SHARE  # ... and this share of the mapped pairs (see predicates)
    disambiguation: tuple[str, ...] = DEFAULT_DISAMBIGUATION
    redirect: tuple[str, ...] = DEFAULT_REDIRECT
    link_predicates: tuple[str, ...] = (OWL_SAMEAS,)
    label_fallback: bool = False
    label_predicate: str = RDFS_LABEL
    two_hop: bool = True
    constraints: str = "both"  # proposed type constraints: both | object | none
    progress: bool = False
    #: align unlinked classes from their linked instances (needs the source KG)
    align_classes: bool = True
    #: find the target's redirect/disambiguation predicates when the defaults are not changed
    find_pages: bool = True
    #: a mapping whose precision measured on the sampled facts (with its best separating
    #: constraint) is below this is not used (the predicate is reported unmapped)
    min_precision: float = DEFAULT_MIN_PRECISION
    #: write the items whose target answers differ from the mapped source answers into the
    #: migrated dataset too (flagged ``verified: false``) instead of apart
    keep_unverified: bool = False

    @classmethod
    def parse(cls, *, disambiguation: Sequence[str] | None = None, redirect: Sequence[str] | None = None,
              link_predicates: Sequence[str] | None = None, **fields) -> "MigrateOptions":
        """The options from command-line values (the one place ``kgqa migrate`` builds them):
        predicate lists that were not given (None or empty) keep their defaults; the other
        fields are taken as they are."""
        return cls(disambiguation=tuple(disambiguation or DEFAULT_DISAMBIGUATION),
                   redirect=tuple(redirect or DEFAULT_REDIRECT),
                   link_predicates=tuple(link_predicates or (OWL_SAMEAS,)), **fields)

    def signature(self) -> str:
        sig = (f"seed:{self.seed}|sample:{self.sample}|min-support:{self.min_support}|"
               f"min-share:{self.min_share:g}|"
               f"two-hop:{'yes' if self.two_hop else 'no'}|labels:{'yes' if self.label_fallback else 'no'}|"
               f"constraints:{self.constraints}")
        if tuple(self.disambiguation) != DEFAULT_DISAMBIGUATION:
            sig += "|disambiguation:" + ",".join(self.disambiguation)
        if tuple(self.redirect) != DEFAULT_REDIRECT:
            sig += "|redirect:" + ",".join(self.redirect)
        if tuple(self.link_predicates) != (OWL_SAMEAS,):
            sig += "|link:" + ",".join(self.link_predicates)
        if not self.align_classes:
            sig += "|class-alignment:no"
        if not self.find_pages:
            sig += "|find-pages:no"
        if self.min_precision != DEFAULT_MIN_PRECISION:
            sig += f"|min-precision:{self.min_precision:g}"
        if self.keep_unverified:
            sig += "|keep-unverified:yes"
        return sig


@dataclass
class Migration:
    """Everything a migration produced."""

    mode: str  # "triples" | "sparql"
    source: Dataset
    #: the migrated items: those whose target answers equal the mapped source answers
    #: (``exact``); with ``keep_unverified`` the others kept too, flagged
    dataset: Dataset
    records: list[dict[str, Any]]  # one per source item, kept or not
    evidence: list[PredicateEvidence]
    proposed: list[Rule]
    rules: RuleSet | None
    tables: Tables
    signature: str
    execution: dict[str, dict[str, int]] = field(default_factory=dict)
    #: what the migration found or decided on its own (aligned classes, found redirect /
    #: disambiguation predicates, suggested flags), printed by the CLI and kept in the report
    notes: list[str] = field(default_factory=list)
    #: items whose migrated query runs but whose answers differ from (or could not be compared
    #: with) the mapped source answers: written apart unless ``keep_unverified``
    unverified: list[Item] = field(default_factory=list)
    keep_unverified: bool = False

    def summary(self) -> dict[str, Any]:
        """Counts by outcome: ``migrated`` (exact, in the dataset), ``unverified`` (by category;
        in the separate file, or flagged in the dataset), ``not_migrated`` (by category)."""
        c = Counter(r.get("agreement", "not migrated") for r in self.records)
        unv = Counter(r["category"] for r in self.records if r.get("kept") and not r.get("verified"))
        dropped = Counter(r["category"] or "not-migrated" for r in self.records if not r.get("kept"))
        return {"items": len(self.records), "migrated": sum(1 for r in self.records if r.get("kept") and r.get("verified")),
                "kept": len(self.dataset), "unverified": dict(sorted(unv.items())),
                "not_migrated": dict(sorted(dropped.items())), "agreement": dict(sorted(c.items())),
                "rescaled": sorted(r["id"] for r in self.records if r.get("rescaled") and r.get("kept"))}


class _Resolver:
    """Target entities for query constants and answers: a mapped node that is a redirect page is
    followed; a disambiguation page is replaced by the candidate with the most evidence
    (:meth:`EntityMapper.choose`: shared neighbours with the source entity, then triples on the
    target; the evidence is noted)."""

    def __init__(self, mapper: EntityMapper, target: KG, source: KG | None, opts: MigrateOptions):
        self.mapper, self.target, self.source, self.opts = mapper, target, source, opts
        self.memo: dict[str, tuple[str | None, str]] = {}
        #: source IRI -> how its target was chosen among several, or aligned (the evidence)
        self.choices: dict[str, str] = {}
        self.notes: list[str] = []

    def resolve(self, iris: Sequence[str]) -> dict[str, tuple[str | None, str]]:
        todo = [i for i in dict.fromkeys(iris) if i not in self.memo]
        if todo:
            maps = self.mapper.map(todo)
            aligned = self._align([i for i in todo if maps[i].target is None])
            nodes = sorted({m.target for m in maps.values() if m.target} | {t for t, _ in aligned.values() if t})
            redir = self.target.objects(nodes, self.opts.redirect)
            disamb = self.target.objects(nodes, self.opts.disambiguation)
            for i in todo:
                m = maps[i]
                if i in aligned and aligned[i][0] is not None:
                    self.memo[i] = (aligned[i][0], "class-alignment")
                    self.choices[i] = aligned[i][1]
                elif m.target is None:
                    self.memo[i] = (None, "unmapped")
                    if i in aligned:
                        self.choices[i] = "class alignment failed: " + aligned[i][1]
                elif m.target in redir:
                    self.memo[i] = (redir[m.target][0], f"{m.how}+redirection")
                elif m.target in disamb:
                    choice, note = self._choose(i, disamb[m.target])
                    self.memo[i] = (choice, f"{m.how}+disambiguation")
                    if note:
                        self.choices[i] = note
                else:
                    self.memo[i] = (m.target, m.how)
                if m.note and len(m.candidates) > 1:
                    self.choices[i] = m.note + (f"; {self.choices[i]}" if i in self.choices else "")
        return {i: self.memo[i] for i in iris}

    def _align(self, unmapped: list[str]) -> dict[str, tuple[str | None, str]]:
        """Classes among ``unmapped`` aligned from their linked instances (see
        :func:`kgqa.make.migrate.align.align_classes`; needs the source KG), each noted."""
        if not unmapped or self.source is None or not self.opts.align_classes:
            return {}

        got = align_classes(unmapped, self.source, self.target, self.mapper, min_support=self.opts.min_support,
                            min_share=self.opts.min_share, seed=self.opts.seed)
        for c, (t, why) in sorted(got.items()):
            self.notes.append(f"class {c} has no link; " + (f"aligned to {t}: {why}" if t else f"not aligned: {why}"))
        return got

    def _choose(self, source_iri: str, candidates: list[str]) -> tuple[str, str]:
        """The chosen candidate and the evidence ("" for the only one), see
        :meth:`EntityMapper.choose` (shared neighbours, then triples on the target)."""
        if len(candidates) == 1:
            return candidates[0], ""
        return self.mapper.choose(source_iri, candidates)


def _term(value: Any) -> Term:
    return value if isinstance(value, (IRI, Literal)) else IRI(str(value))


# --------------------------------------------------------------------------- simple (triple) records


def _simple_query(topic: str, rules: Sequence[Rule]) -> str:
    """SELECT ?x from the topic through every target of the rules (alternatives, UNION)."""
    parts = []
    for r in rules:
        for path in r.paths():
            p = path_text(path)
            pat = f"{iri_ref(topic)} {p if len(path) == 1 and not path[0][1] else '(' + p + ')'} ?x ."
            if r.constraint and r.constraint_on == "object":
                pat += f" ?x {TYPE_PATH} {iri_ref(r.constraint)} ."
            elif r.constraint:
                pat += f" FILTER EXISTS {{ {iri_ref(topic)} {TYPE_PATH} {iri_ref(r.constraint)} }}"
            parts.append(pat)
    if len(parts) == 1:
        return f"SELECT DISTINCT ?x WHERE {{ {parts[0]} }}"
    return "SELECT DISTINCT ?x WHERE {\n" + "\n  UNION\n".join(f"  {{ {p} }}" for p in parts) + "\n}"


def _migrate_triples(ds: Dataset, target: KG, mapper: EntityMapper, finder: PathFinder, rules: RuleSet | None,
                     opts: MigrateOptions) -> tuple[list[dict], list[Item], list[PredicateEvidence], list[Rule]]:
    """Records, kept items, evidence and proposed rules of SimpleQuestions-style records: paths
    between the mapped entities, the initial mapping (or the rules), and each item's query run
    from its topic and compared with its answer entity."""
    triples = [it.metadata["triple"] for it in ds.items]
    maps = mapper.map([t["subject"] for t in triples] + [t["object"] for t in triples])
    records, pair_idx, pairs = _triple_records(ds, triples, maps)
    found: dict[int, PairPaths] = {}
    with progress_bar(len(pairs), "paths", enabled=opts.progress) as tick:
        for k in range(0, len(pairs), 200):
            for i, pp in zip(pair_idx[k:k + 200], finder.find_many(pairs[k:k + 200])):
                found[i] = pp
            tick(len(pairs[k:k + 200]))
    evidence = _triple_evidence(records, triples, found, maps, opts)
    ev_list = [evidence[k] for k in sorted(evidence)]
    proposed = propose(ev_list, target, constraints="object" if opts.constraints == "both" else opts.constraints)
    queries: dict[int, str] = {}
    plans: dict[int, dict] = {}
    uncompressed: dict[int, str] = {}
    for i, rec in enumerate(records):
        t, pp = triples[i], found.get(i)
        got = (_initial_plan(rec, t, pp, evidence, maps) if rules is None
               else _rule_plan(rec, t, pp, rules, maps))
        if got is None:
            continue
        queries[i], plans[i] = _simple_query(got["plan"]["topic"], got["rules"]), got
        if rules is not None and not got["plan"].get("compressed"):
            uncompressed[i] = got["plan"]["topic"]
    if uncompressed:
        _resolve_topics(uncompressed, plans, queries, target, opts)
    outcomes = _run_all(target, queries, opts.progress, "target", trusted=True)
    items = [it for i, q in queries.items()
             if (it := _judge_triple(records[i], ds.items[i], triples[i], q, outcomes[i], plans[i])) is not None]
    return records, items, ev_list, proposed


def _triple_records(ds: Dataset, triples: list[dict], maps: dict) -> tuple[list[dict], list[int], list]:
    """A record per item with its entity mapping; the indexes and target pairs of the items
    whose topic and answer both map."""
    records: list[dict] = []
    pair_idx: list[int] = []
    pairs: list[tuple[Term, Term]] = []
    for i, (it, t) in enumerate(zip(ds.items, triples)):
        ms, mo = maps[t["subject"]], maps[t["object"]]
        rec = {"id": it.id, "question": it.question(), "source": dict(t),
               "entities": {"topic": ms.to_json(), "answer": mo.to_json()}}
        if ms.target and mo.target:
            pair_idx.append(i)
            pairs.append((IRI(ms.target), IRI(mo.target)))
            rec["category"] = None  # set from the paths
        else:
            rec["category"] = "only-answer" if mo.target else "only-topic" if ms.target else "neither"
        records.append(rec)
    return records, pair_idx, pairs


def _triple_evidence(records: list[dict], triples: list[dict], found: dict[int, PairPaths], maps: dict,
                     opts: MigrateOptions) -> dict[str, PredicateEvidence]:
    """Evidence per source predicate from the found paths (each record gets its path kind and
    initial paths); records without a pair count in their entity category."""
    evidence: dict[str, PredicateEvidence] = {}

    def ev_of(p: str) -> PredicateEvidence:
        return evidence.setdefault(p, PredicateEvidence(p, min_support=opts.min_support, min_share=opts.min_share))

    for i, pp in found.items():
        t = triples[i]
        ev = ev_of(t["predicate"])
        ev.pairs += 1
        ev.add(pp, maps[t["subject"]].target, maps[t["object"]].target)
        records[i]["category"] = pp.kind
        if pp.of_kind():
            first = sorted(pp.of_kind(), key=lambda f: path_text(f.path))[0]
            records[i]["initial"] = {"kind": pp.kind, "paths": sorted({path_text(f.path) for f in pp.of_kind()}),
                                     "direction": direction(first.path)}
        if pp.errors:
            records[i]["errors"] = pp.errors
    for i, rec in enumerate(records):
        if i not in found:
            ev = ev_of(triples[i]["predicate"])
            ev.pairs += 1
            ev.categories[rec["category"]] += 1
    return evidence


def _initial_plan(rec: dict, t: dict, pp: PairPaths | None, evidence: dict, maps: dict) -> dict | None:
    """The initial mapping of an item: its own path of the chosen kind, best-supported first
    (None, with the reason in ``rec``, when there is none)."""
    if pp is None or not pp.of_kind():
        rec["kept"] = False
        rec["reason"] = ("no path between the mapped entities" if pp is not None
                         else "topic or answer entity not mapped")
        return None
    ev = evidence[t["predicate"]]
    f = sorted(pp.of_kind(), key=lambda f: (-ev.candidates[f.path].support, path_text(f.path)))[0]
    topic = f.topic or maps[t["subject"]].target
    rule = Rule(t["predicate"], (path_text(f.path) if len(f.path) > 1 else f.path[0][0],),
                "backward" if len(f.path) == 1 and f.path[0][1] else "forward")
    plan = {"kind": pp.kind, "path": path_text(f.path), "direction": direction(f.path), "topic": topic,
            **({"compressed": f.via, "via": maps[t["subject"]].target if f.via == "topic"
                else maps[t["object"]].target} if f.via else {})}
    return {"plan": plan, "expected": f.answer or maps[t["object"]].target, "rules": [rule]}


def _rule_plan(rec: dict, t: dict, pp: PairPaths | None, rules: RuleSet, maps: dict) -> dict | None:
    """The mapping of an item by the rules of its predicate, from its topic (compressed when a
    found path went through a page); None, with the reason in ``rec``, without rule or topic."""
    rs = rules.for_predicate(t["predicate"])
    topic = maps[t["subject"]].target
    if not rs or topic is None:
        rec["kept"] = False
        rec["reason"] = "no rule for the source predicate" if not rs else "topic entity not mapped"
        return None
    compressed = None
    allowed = {p for r in rs for p in r.paths()}
    if pp is not None:
        hits = [f for f in pp.found if f.path in allowed]
        fv = [f for f in hits if f.via == "topic"]
        if fv and not any(f.via is None for f in hits):
            topic, compressed = fv[0].topic, fv[0].kind
    expected = maps[t["object"]].target
    if pp is not None:
        for f in pp.found:
            if f.answer and f.via == "answer":
                expected = f.answer
    plan = {"kind": rec["category"], "rule": [r.to_json() for r in rs], "topic": topic,
            **({"compressed": compressed} if compressed else {})}
    if pp is not None and pp.of_kind():
        drift = sorted({path_text(f.path) for f in pp.of_kind() if f.path not in allowed})
        if drift and not any(f.path in allowed for f in pp.of_kind()):
            plan["filtered"] = drift  # semantic drift: the found path is not in the rule
    return {"plan": plan, "expected": expected, "rules": rs}


def _judge_triple(rec: dict, it: Item, triple: dict, q: str, o: Outcome, p: dict) -> Item | None:
    """Compare an item's query result with its answer entity; the kept item (any answer) or
    None (the reason in ``rec``)."""
    rec["mapping"] = p["plan"]
    rec["query"] = q
    expected = TableAnswer(("x",), ((IRI(p["expected"]),),)) if p["expected"] else None
    ag = compare(expected, o, view="values")
    if p["expected"] is None and ag.label == "unverified":
        ag = Agreement("unverified", None, "answer entity not mapped; kept because the rule query has answers") \
            if len(o.answer or ()) else Agreement("empty", 0.0, "the rule query returns nothing on the target "
                                                                 "(and the answer entity is not mapped)")
    rec.update(ag.to_json())
    kept = o.status is Status.OK and isinstance(o.answer, TableAnswer) and len(o.answer.rows) > 0
    rec["kept"] = kept
    if not kept:
        rec["reason"] = ag.reason or "the migrated query has no answer on the target"
        return None
    return replace(it, sparql=q, answer=o.answer, metadata={
        **{k: v for k, v in it.metadata.items() if k != "triple"},
        "source_triple": dict(triple), "subject": p["plan"]["topic"],
        "predicates": [{"Predicate": tgt, "Direction": r.direction, "Constraint": r.constraint}
                       for r in p["rules"] for tgt in r.targets],
        "category": rec["category"], "agreement": ag.label})


def _resolve_topics(topics: dict[int, str], plans: dict[int, dict], queries: dict[int, str], target: KG,
                    opts: MigrateOptions) -> None:
    """Rule queries start from the topic entity; one that is a redirect page is replaced by
    its redirect target, one that is a disambiguation page by the only candidate the rule query
    answers from (several or none: left as it is, noted)."""
    tops = sorted(set(topics.values()))
    redir = target.objects(tops, opts.redirect)
    dis = target.objects(tops, opts.disambiguation)
    for i, tp in topics.items():
        plan = plans[i]["plan"]
        if tp in redir:
            new, how = redir[tp][0], "redirection"
        elif tp in dis:
            cands = dis[tp]
            outs = target.run([_simple_query(c, plans[i]["rules"]) for c in cands])
            ok = [c for c, o in zip(cands, outs) if o.status is Status.OK and o.answer is not None and len(o.answer)]
            if len(ok) != 1:
                plan["note"] = (f"topic is a disambiguation page; the rule answers from {len(ok)} of its "
                                f"{len(cands)} candidates")
                continue
            new, how = ok[0], "disambiguation"
        else:
            continue
        plan.update(topic=new, compressed=how, via=tp)
        queries[i] = _simple_query(new, plans[i]["rules"])


def _run_all(kg: KG, queries: dict[Any, str], progress: bool, label: str, trusted: bool = False) -> dict[Any, Outcome]:
    """Outcomes by key, in batches (one engine call each). ``trusted``: queries kgqa built itself
    (no normaliser, no sandbox); otherwise (rewritten gold queries) as ``kgqa audit`` runs them."""
    keys = list(queries)
    out: dict[Any, Outcome] = {}
    with progress_bar(len(keys), label, enabled=progress) as tick:
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            texts = [queries[k] for k in chunk]
            outs = kg.run(texts) if trusted else kg.run_gold_many(texts)
            out.update(zip(chunk, outs))
            tick(len(chunk))
    return out


# --------------------------------------------------------------------------- SPARQL datasets


def _sample(source: KG, predicate: str, n: int, seed: int) -> tuple[list[tuple[Term, Term]], str]:
    pairs, note = source.sample(predicate, n, seed)
    return [(s, o) for s, o in pairs if isinstance(s, IRI) and isinstance(o, (IRI, Literal))], note


def _pairs_from_items(ds: Dataset, answers: dict[str, Any]) -> dict[str, list[tuple[Term, Term]]]:
    """Evidence without a source KG: for a pattern with a constant IRI on one side and a
    projected variable on the other, (constant, answer) pairs from the item's gold answer."""

    out: dict[str, list[tuple[Term, Term]]] = {}
    for it in ds.items:
        ans = answers.get(it.id)
        if not it.sparql or not isinstance(ans, TableAnswer):
            continue
        info = analyze(it.sparql)
        for tp in info.triples:
            if not isinstance(tp.predicate, IRI):
                continue
            for const, var, fwd in ((tp.subject, tp.object, True), (tp.object, tp.subject, False)):
                if isinstance(const, (IRI, Literal)) and isinstance(var, Var) and var.name in ans.variables:
                    for v in ans.column(var.name):
                        if isinstance(v, (IRI, Literal)) and not (not fwd and isinstance(v, Literal)):
                            pair = (const, v) if fwd else (v, const)
                            if isinstance(pair[0], IRI):
                                out.setdefault(tp.predicate.value, []).append(pair)
    return out


def _migrate_sparql(ds: Dataset, target: KG, source: KG | None, mapper: EntityMapper, finder: PathFinder,
                    rules: RuleSet | None, opts: MigrateOptions) -> tuple:
    """Records (one per item), kept items, evidence, proposed rules and notes of a SPARQL
    dataset: source answers, predicate evidence, predicate mappings, then each item rewritten,
    run on the target and compared with its mapped (and rescaled) source answers."""
    items = [it for it in ds.items if it.sparql]
    no_query = [{"id": it.id, "question": it.question(), "category": "failed", "agreement": "failed",
                 "reason": "the item has no gold SPARQL query", "kept": False, "entities": [], "predicates": []}
                for it in ds.items if not it.sparql]
    answers, answer_from = _source_answers(items, source, opts)
    consts = {it.id: constants(it.sparql) for it in items}
    preds = sorted({p for _, ps in consts.values() for p in ps})
    resolver = _Resolver(mapper, target, source, opts)
    evidence = _gather_evidence(ds, preds, answers, source, target, mapper, finder, resolver, opts)
    ev_list = [evidence[p] for p in preds]
    proposed = propose(ev_list, target, constraints=opts.constraints)
    maps = _predicate_maps(preds, evidence, rules, {r.source: r for r in proposed}, target, source, opts)
    run = _SparqlRun(items, answers, answer_from, consts, maps, resolver)
    records, kept = _rewrite_and_judge(run, target, source, opts)
    order = {it.id: i for i, it in enumerate(ds.items)}
    records = sorted(records + no_query, key=lambda r: order[r["id"]])
    return records, kept, ev_list, proposed, resolver.notes


def _source_answers(items: Sequence[Item], source: KG | None, opts: MigrateOptions) -> tuple[dict, dict]:
    """Each item's answer (re-derived on the source KG when given, else the stored one) and
    where it came from."""
    answers: dict[str, Any] = {}
    answer_from: dict[str, str] = {}
    if source is not None:
        outs = _run_all(source, {it.id: it.sparql for it in items}, opts.progress, "source")
        for it in items:
            o = outs[it.id]
            answers[it.id] = o.answer if o.status is Status.OK else None
            answer_from[it.id] = "source-kg" if o.status is Status.OK else f"source query {o.status.value}: {o.message}"
    else:
        for it in items:
            answers[it.id] = it.answer
            answer_from[it.id] = "stored" if it.answer is not None else "none"
    return answers, answer_from


def _samples(ds: Dataset, preds: list[str], answers: dict, source: KG | None, evidence: dict,
             opts: MigrateOptions) -> dict[str, list[tuple[Term, Term]]]:
    """Evidence pairs per predicate: sampled source triples, or (without a source KG) pairs
    from the items' answers."""
    if source is None:
        from_items = _pairs_from_items(ds, answers)
        return {p: sorted(set(from_items.get(p, [])), key=str)[: opts.sample] for p in preds}
    samples = {}
    for p in preds:
        evidence[p].source_count = source.count(f"?s {iri_ref(p)} ?o")
        samples[p], note = _sample(source, p, opts.sample, opts.seed)
        if note:
            evidence[p].errors.append(note)
    return samples


def _gather_evidence(ds: Dataset, preds: list[str], answers: dict, source: KG | None, target: KG,
                     mapper: EntityMapper, finder: PathFinder, resolver: "_Resolver",
                     opts: MigrateOptions) -> dict[str, PredicateEvidence]:
    """Per source predicate: path enumeration over its evidence pairs, verification and the
    measured separating constraint of the best candidate (with a source KG), and a unit change
    (a literal predicate without a path)."""
    evidence = {p: PredicateEvidence(p, min_support=opts.min_support, min_share=opts.min_share) for p in preds}
    samples = _samples(ds, preds, answers, source, evidence, opts)
    ends = {x.value for v in samples.values() for pair in v for x in pair if isinstance(x, IRI)}
    emaps = mapper.map(sorted(ends))
    jobs: list[tuple[str, Term, Term, tuple[Term, Term]]] = []
    for p in preds:
        for s, o in samples[p]:
            evidence[p].pairs += 1
            ts = emaps[s.value].target if isinstance(s, IRI) else None
            to = emaps[o.value].target if isinstance(o, IRI) else (o if isinstance(o, Literal) else None)
            if ts is None or to is None:
                evidence[p].categories["only-object" if to is not None else "only-subject" if ts else "neither"] += 1
                continue
            jobs.append((p, IRI(ts), _term(to), (s, o)))
    job_kind: list[str] = []
    with progress_bar(len(jobs), "paths", enabled=opts.progress) as tick:
        for k in range(0, len(jobs), 200):
            chunk = jobs[k:k + 200]
            for (p, ts, to, _), pp in zip(chunk, finder.find_many([(a, b) for _, a, b, _ in chunk])):
                evidence[p].add(pp, ts.value, to.value if isinstance(to, IRI) else None)
                job_kind.append(pp.kind)
            tick(len(chunk))
    if source is not None:
        with progress_bar(len(preds), "verify", enabled=opts.progress) as tick:
            for p in preds:
                own = [(j, k) for j, k in zip(jobs, job_kind) if j[0] == p]
                facts = _verify(evidence[p], samples[p], own, source, target, finder, resolver, opts)
                if facts is not None and evidence[p].ranked():
                    _separate(evidence[p], facts, target, opts)
                tick()
    _find_transformed(preds, evidence, samples, emaps, target)
    return evidence


def _separate(ev: PredicateEvidence, facts: tuple[dict, dict], target: KG, opts: MigrateOptions) -> None:
    """The best candidate's constraint, measured on the facts (:mod:`kgqa.make.migrate.separate`);
    the proposed constraint (from instance counts) is tried first."""

    best = ev.best()
    if best is None:
        return
    proposed = propose([ev], target, constraints=opts.constraints)
    rule = proposed[0] if proposed else None
    hint = (rule.constraint, rule.constraint_on) if rule is not None and rule.constraint else None
    ev.separation = separate(target, path_text(best.path), facts[0], facts[1], MATCHING.key, hint, ev.source_count)


@dataclass
class _PredicateMaps:
    """Each source predicate's target (None: no mapping), what is said about it, and the unit
    changes (source predicate -> Scale)."""

    targets: dict[str, PredicateTarget | None] = field(default_factory=dict)
    info: dict[str, dict] = field(default_factory=dict)
    scales: dict[str, Any] = field(default_factory=dict)


def _rule_target(rs: Sequence[Rule]) -> PredicateTarget:
    """The target of a predicate with rules: their paths as alternatives, the first constraint."""
    paths = [x for r in rs for x in r.paths()]
    if len(paths) == 1 and len(paths[0]) == 1 and not paths[0][0][1]:
        text = iri_ref(paths[0][0][0])
    else:
        text = "(" + "|".join(f"({path_text(x)})" for x in paths) + ")"
    c = next((x for x in rs if x.constraint), None)
    return PredicateTarget(text, c.constraint if c else None, c.constraint_on if c else "object")


def _predicate_maps(preds: list[str], evidence: dict[str, PredicateEvidence], rules: RuleSet | None,
                    proposed_by: dict[str, Rule], target: KG, source: KG | None,
                    opts: MigrateOptions) -> _PredicateMaps:
    """Every predicate's mapping: its rules; else the best candidate with its measured
    constraint (a measured precision below ``min_precision``: unmapped, said), with the
    proposed constraint when nothing was measured; a unit change with its factor; else unmapped
    with the reason."""
    maps = _PredicateMaps()
    for p in preds:
        rs = rules.for_predicate(p) if rules is not None else []
        ev = evidence[p]
        if rs:
            maps.targets[p] = _rule_target(rs)
            maps.info[p] = {"rule": [x.to_json() for x in rs]}
        elif ev.best() is not None and not ev.transformed:
            maps.targets[p], maps.info[p] = _candidate_target(ev, proposed_by.get(p), opts)
        elif ev.transformed is not None:
            sc = ev.transformed
            maps.targets[p] = PredicateTarget(iri_ref(sc.target))
            maps.scales[p] = sc
            maps.info[p] = {"path": iri_ref(sc.target), "direction": "forward", "support": sc.support,
                            "of": sc.of, "kinds": {"scaled": sc.support}, "scale": sc.factor,
                            "note": f"unit or scale change: {sc.text()}"}
        elif ev.mapped_pairs == 0 and (target.count(f"?s {iri_ref(p)} ?o") or 0) > 0:
            maps.targets[p] = PredicateTarget(iri_ref(p))
            maps.info[p] = {"path": iri_ref(p), "direction": "forward", "support": 0, "of": 0,
                            "kinds": {"identity": 0},
                            "note": "no evidence pair; the same predicate IRI is used in the target KG"}
        else:
            maps.targets[p] = None
            maps.info[p] = {"unmapped": _unmapped_reason(ev, source)}
    return maps


def _unmapped_reason(ev: PredicateEvidence, source: KG | None) -> str:
    if ev.pairs == 0:
        return ("no evidence pair (without --source-kg only patterns joining a constant and a projected "
                "variable give evidence)" if source is None else "no triple of it on the source KG")
    if ev.ranked():
        top = ev.ranked()[0]
        return (f"best candidate {path_text(top.path)} connects only {top.support} of {ev.mapped_pairs} "
                f"evidence pairs with both ends mapped (needs {ev.required()}: --min-support "
                f"{ev.min_support}, --min-share {ev.min_share:g})")
    return f"no path found for {ev.mapped_pairs} pairs with both ends mapped, of {ev.pairs} sampled"


def _candidate_target(ev: PredicateEvidence, rule: Rule | None,
                      opts: MigrateOptions) -> tuple[PredicateTarget | None, dict]:
    """The best candidate as a target with its constraint: the measured one (refused below
    ``min_precision``), else the proposed rule's."""
    best = ev.best()
    path = best.path
    text = path_text(path)
    if len(path) > 1 or path[0][1]:
        text = f"({text})"
    info = {"path": path_text(path), "direction": direction(path), "support": best.support,
            "of": ev.mapped_pairs, "kinds": dict(best.kinds)}
    sep = ev.separation
    if sep is not None:
        m = sep.chosen
        info["precision"] = round(m.precision, 4)
        if m.precision < opts.min_precision:
            tried = "; ".join(x.text() for x in sep.tried)
            return None, {"unmapped": f"target {path_text(path)} reaches more than the source predicate: "
                                      f"precision {m.precision:.2f} on the sampled facts, below --min-precision "
                                      f"{opts.min_precision:g}; no constraint separates it (tried {tried})",
                          "precision": round(m.precision, 4)}
        if m.constraint:
            info.update(constraint=m.constraint, constraint_on=m.side, **({"negated": True} if m.negated else {}))
        return PredicateTarget(text, m.constraint, m.side, m.negated), info
    constrained = rule is not None and rule.constraint and rule.paths() == [path]
    if constrained:
        info.update(constraint=rule.constraint, constraint_on=rule.constraint_on)
    return PredicateTarget(text, rule.constraint if constrained else None,
                           rule.constraint_on if constrained else "object"), info


@dataclass
class _SparqlRun:
    """What rewriting and judging the items of a SPARQL migration needs."""

    items: list[Item]
    answers: dict[str, Any]
    answer_from: dict[str, str]
    consts: dict[str, tuple[list[str], list[str]]]
    maps: _PredicateMaps
    resolver: "_Resolver"


def _rewrite_all(run: _SparqlRun, resolved: dict) -> tuple[dict, dict, dict]:
    """Rewritten queries (by id), the rewrites, and the rescaling of each item that uses a
    predicate with a unit change (:mod:`kgqa.make.migrate.scale`)."""

    queries, rewritten, rescaled = {}, {}, {}
    for it in run.items:
        ents, ps = run.consts[it.id]
        rw = rewrite(it.sparql, {e: resolved[e][0] for e in ents}, {p: run.maps.targets[p] for p in ps})
        rewritten[it.id] = rw
        if rw.query is None:
            continue
        queries[it.id] = rw.query
        for p in (p for p in ps if p in run.maps.scales):
            sc = run.maps.scales[p]
            names = object_vars(analyze(it.sparql).triples, p)
            queries[it.id], changes = scale_filters(queries[it.id], names, sc.factor, sc.target)
            rescaled.setdefault(it.id, []).append({"predicate": p, "target": sc.target, "factor": sc.factor,
                                                   "vars": sorted(names), "filters": changes})
        rw.query = queries[it.id]
    return queries, rewritten, rescaled


def _expected(run: _SparqlRun, it: Item, amap: dict, rescaled: list[dict] | None) -> tuple[Any, list[str]]:
    """The item's mapped source answer, rescaled in the columns a unit change touches."""

    expected, lost = map_answer(run.answers[it.id], amap)
    for r in rescaled or []:
        if isinstance(expected, TableAnswer):
            expected, n = scale_answer(expected, scaled_columns(it.sparql, set(r["vars"])), r["factor"])
            r["answer_cells"] = n
    return expected, lost


def _rewrite_and_judge(run: _SparqlRun, target: KG, source: KG | None, opts: MigrateOptions) -> tuple[list, list]:
    """Each item rewritten, run on the target and compared with its expected answers: a record
    per item and the kept items (``metadata["agreement"]`` says which are verified)."""
    answer_iris = {it.id: sorted({c.value for row in run.answers[it.id].rows for c in row if isinstance(c, IRI)})
                   if isinstance(run.answers.get(it.id), TableAnswer) else [] for it in run.items}
    allents = sorted({e for es, _ in run.consts.values() for e in es} | {a for v in answer_iris.values() for a in v})
    resolved = run.resolver.resolve(allents)
    queries, rewritten, rescaled = _rewrite_all(run, resolved)
    outs = _run_all(target, queries, opts.progress, "target")
    unlimited = _without_limit(run.items, queries, source, target)
    records, kept = [], []
    for it in run.items:
        amap = {a: resolved[a][0] for a in answer_iris[it.id]}
        expected, lost = _expected(run, it, amap, rescaled.get(it.id))
        rec = _item_record(run, it, resolved, amap, lost)
        if it.id in rescaled:
            rec["rescaled"] = rescaled[it.id]
        rw = rewritten[it.id]
        ag = _judge(run, it, rw, rec, expected, lost, outs.get(it.id), unlimited.get(it.id))
        rec.update(ag.to_json())
        rec["category"] = _category(rec, ag)
        rec["kept"] = rw.query is not None and outs[it.id].status is Status.OK
        records.append(rec)
        if rec["kept"]:
            kept.append(replace(it, sparql=rw.query, answer=outs[it.id].answer,
                                metadata={**it.metadata, "source_sparql": it.sparql, "agreement": ag.label}))
    return records, kept


def _item_record(run: _SparqlRun, it: Item, resolved: dict, amap: dict, lost: list[str]) -> dict[str, Any]:
    ents, ps = run.consts[it.id]
    choices = run.resolver.choices
    return {"id": it.id, "question": it.question(), "source_query": it.sparql, "source_answer": run.answer_from[it.id],
            "entities": [{"source": e, "target": resolved[e][0], "how": resolved[e][1],
                          **({"choice": choices[e]} if e in choices else {})} for e in ents],
            "predicates": [{"source": p, **run.maps.info[p]} for p in ps],
            "answer_entities": {"mapped": sum(1 for a in amap.values() if a), "unmapped": lost}}


def _judge(run: _SparqlRun, it: Item, rw, rec: dict, expected, lost: list[str], out: Outcome | None,
           unlimited: tuple[Outcome, Outcome] | None) -> Agreement:
    """The item's agreement: failed (no query, with the reasons), else the comparison of the
    target's answers with the expected ones (checked without LIMIT too)."""
    ps = run.consts[it.id][1]
    if rw.query is None:
        whys = [f"{p}: {run.maps.info[p]['unmapped']}" for p in ps if "unmapped" in run.maps.info.get(p, {})]
        return Agreement("failed", None, "; ".join(rw.problems + whys))
    rec["query"] = rw.query
    ag = compare(expected if run.answers[it.id] is not None else None, out)
    if lost and ag.label == "exact":
        ag = Agreement("partial", ag.f1, f"{len(lost)} answer entit(y/ies) have no target")
    if unlimited is not None and ag.label in ("exact", "partial", "superset"):
        ag, rec["without_limit"] = _limit_check(ag, *unlimited, run.resolver)
    return ag


def _find_transformed(preds: Sequence[str], evidence: dict[str, PredicateEvidence], samples: dict, emaps: dict,
                      target: KG) -> None:
    """Find a unit change for each literal-valued predicate without a supported mapping: the
    target predicate holding its values times one factor
    (:func:`kgqa.make.migrate.align.value_transform`)."""

    for p in preds:
        ev = evidence[p]
        if ev.best() is not None:
            continue
        pairs = [(emaps[s.value].target, o) for s, o in samples.get(p, [])
                 if isinstance(s, IRI) and isinstance(o, Literal) and emaps.get(s.value) and emaps[s.value].target]
        if pairs:
            ev.transformed = value_transform(pairs, target, min_share=ev.min_share, min_support=ev.min_support)


_LIMIT = re.compile(r"\s+(LIMIT\s+\d+(\s+OFFSET\s+\d+)?|OFFSET\s+\d+\s+LIMIT\s+\d+)\s*$", re.IGNORECASE)


def _without_limit(items: Sequence[Item], queries: dict[str, str], source: KG | None,
                   target: KG) -> dict[str, tuple[Outcome, Outcome]]:
    """For items whose source and migrated queries end in LIMIT: both executed without it
    (source on the source KG, migrated on the target), by item id. Empty without a source KG."""
    if source is None:
        return {}
    pairs = {it.id: (_LIMIT.sub("", it.sparql), _LIMIT.sub("", queries[it.id])) for it in items
             if it.id in queries and _LIMIT.search(it.sparql) and _LIMIT.search(queries[it.id])}
    if not pairs:
        return {}
    src = source.run_gold_many([a for a, _ in pairs.values()])
    tgt = target.run_gold_many([b for _, b in pairs.values()])
    return {k: (a, b) for k, a, b in zip(pairs, src, tgt)}


def _limit_check(ag: Agreement, src: Outcome, tgt: Outcome, resolver: _Resolver) -> tuple[Agreement, str]:
    """A LIMIT query's agreement checked without the LIMIT (issue 26: a single-answer LIMIT
    can agree by coincidence under a wrong mapping): agreeing only under LIMIT is ``partial``;
    agreeing without it but not with it means LIMIT chose another of tied rows (``exact``,
    said). Returns the agreement and the label without LIMIT."""
    if src.status is not Status.OK or tgt.status is not Status.OK:
        return ag, "failed"
    iris = sorted({c.value for row in src.answer.rows for c in row if isinstance(c, IRI)}) \
        if isinstance(src.answer, TableAnswer) else []
    res = resolver.resolve(iris)
    expected, _ = map_answer(src.answer, {a: res[a][0] for a in iris})
    un = compare(expected, tgt)
    if ag.label == "exact" and un.label != "exact":
        return Agreement("partial", ag.f1, f"agrees only under LIMIT (without it: {un.label}, {un.reason}): a "
                                           "coincidence, not a verified mapping"), un.label
    if ag.label != "exact" and un.label == "exact":
        return Agreement("exact", 1.0, "LIMIT picked another of rows that tie under ORDER BY; without LIMIT the "
                                       "answers agree"), un.label
    return ag, un.label


VERIFY_TOP = 3


def _verify(ev: PredicateEvidence, sample: Sequence[tuple[Term, Term]], jobs: list, source: KG, target: KG,
            finder: PathFinder, resolver: _Resolver, opts: MigrateOptions) -> tuple[dict, dict] | None:
    """Check the top candidates of one source predicate against what the predicate says on the
    source for the sampled subjects (precision / recall, see predicates.verify). When the best
    one is not precise, two-hop paths are enumerated for every pair too (the paper looks for them
    only where no one-hop path exists), added as candidates and checked the same way. Returns
    the mapped facts (forward, backward; see :func:`_facts`), None without candidates."""
    if not ev.candidates:
        return None
    facts = _facts(ev.source, sample, source, resolver)
    if facts is None:
        return None
    key = MATCHING.key
    verify(ev, ev.ranked()[:VERIFY_TOP], facts[0], target, key)
    best = ev.ranked()[0]
    if (best.precision is None or best.precision >= 1.0) or not opts.two_hop:
        return facts
    todo = [(j, k) for j, k in jobs if k in ("one-hop", "disambiguation", "redirection")]
    if not todo:
        return facts
    added = []
    for (_, ts, to, _), pp in zip([j for j, _ in todo], finder.find_many([(j[1], j[2]) for j, _ in todo], all_two_hop=True)):
        for path in {f.path for f in pp.found if f.kind == "complex"}:
            c = ev.candidates.get(path)
            if c is None:
                c = ev.candidates[path] = Candidate(path)
                added.append(c)
            c.support += 1
            c.kinds["complex"] += 1
            ev.subject_ends.setdefault(path, set()).add(ts.value)
            if isinstance(to, IRI):
                ev.object_ends.setdefault(path, set()).add(to.value)
    added.sort(key=lambda c: (-c.support, path_text(c.path)))
    verify(ev, added[:VERIFY_TOP], facts[0], target, key)
    return facts


def _facts(predicate: str, sample: Sequence[tuple[Term, Term]], source: KG,
           resolver: _Resolver) -> tuple[dict, dict] | None:
    """What ``predicate`` says on the source, mapped to the target: forward, for the sampled
    subjects (target subject -> keys of its objects); backward, for the sampled IRI objects
    (target object -> keys of its subjects). Facts touching an entity whose target was a guess
    (candidates no evidence tells apart) are left out: they would measure the entity mapping,
    not the predicate's. None when the source query fails."""
    key = MATCHING.key
    out: list[dict[str, set]] = [{}, {}]
    for side, nodes in ((0, sample and {s.value for s, _ in sample if isinstance(s, IRI)}),
                        (1, {o.value for _, o in sample if isinstance(o, IRI)})):
        if not nodes:
            continue
        vals = " ".join(iri_ref(x) for x in sorted(nodes))
        fixed = "?s" if side == 0 else "?o"
        r = source.rows([f"SELECT ?s ?o WHERE {{ VALUES {fixed} {{ {vals} }} ?s {iri_ref(predicate)} ?o }}"])[0]
        if isinstance(r, str):
            return None
        ends = resolver.resolve(sorted({x.value for row in r for x in row if isinstance(x, IRI)}))
        guessed = {x for x in ends if "no evidence tells them apart" in resolver.choices.get(x, "")}
        for s_, o in r:
            a, b = (s_, o) if side == 0 else (o, s_)
            ta = ends.get(a.value, (None, ""))[0]
            if ta is None or a.value in guessed or (isinstance(b, IRI) and b.value in guessed):
                continue
            if isinstance(b, IRI):
                tb = ends[b.value][0]
                k = key(IRI(tb)) if tb else ("unmapped", b.value)
            else:
                k = key(b)
            out[side].setdefault(ta, set()).add(k)
    return out[0], out[1]


def _category(rec: dict, ag: Agreement) -> str:
    if ag.label != "failed":
        return ag.label
    if any(e["target"] is None for e in rec["entities"]):
        return "unmapped-entity"
    if any("unmapped" in p for p in rec["predicates"]):
        return "unmapped-predicate"
    return "failed"


# --------------------------------------------------------------------------- entry point


def migrate(dataset: Dataset, target: KG, links: Links, *, source: KG | None = None, rules: RuleSet | None = None,
            options: MigrateOptions | None = None) -> Migration:
    """Migrate ``dataset`` to the ``target`` KG through ``links`` (see :mod:`kgqa.make.migrate`).

    Items whose ``metadata["triple"]`` holds a ``subject``/``predicate``/``object`` record are
    migrated the SimpleQuestions way; items with gold SPARQL are rewritten. ``rules`` switch
    from the initial mapping (paper's Table 2) to the refined one (Table 3).
    """
    opts = options or MigrateOptions()
    notes: list[str] = []
    if opts.find_pages and tuple(opts.disambiguation) == DEFAULT_DISAMBIGUATION and \
            tuple(opts.redirect) == DEFAULT_REDIRECT:
        opts, notes = _find_pages(target, links, opts)
    special = tuple(opts.disambiguation) + tuple(opts.redirect)
    mapper = EntityMapper(target, links, source=source, label_fallback=opts.label_fallback,
                          label_predicate=opts.label_predicate, link_predicates=opts.link_predicates,
                          special=special)
    finder = PathFinder(target, opts.disambiguation, opts.redirect, opts.two_hop)
    simple = bool(dataset.items) and all("triple" in it.metadata for it in dataset.items)
    if simple:
        records, items, evidence, proposed = _migrate_triples(dataset, target, mapper, finder, rules, opts)
        tables = triple_tables(records, refined=rules is not None)
    else:
        records, items, evidence, proposed, more = _migrate_sparql(dataset, target, source, mapper, finder, rules,
                                                                   opts)
        notes += more
        tables = sparql_tables(records, evidence)
    unmapped = (sorted(i for i, m in mapper.memo.items() if m.target is None) if simple else
                sorted(i for r in records for e in r.get("entities", []) if isinstance(e, dict)
                       and e.get("target") is None for i in [e["source"]]))
    notes += _label_fallback_hint(unmapped, target, source, opts)
    sig = (f"kgqa-migrate|{'triples' if simple else 'sparql'}|target:{target.signature}"
           + (f"|source:{source.signature}" if source is not None else "")
           + f"|links:{len(links.sources)}|rules:{'yes' if rules is not None else 'no'}|{opts.signature()}")
    main, unverified = _split(records, items, opts.keep_unverified)
    out = Dataset(f"{dataset.name}-migrated", main, dataset.format, dataset.source, [],
                  {**dataset.metadata, "migration": sig})
    execution = {"target": target.counts, **({"source": source.counts} if source is not None else {})}
    return Migration("triples" if simple else "sparql", dataset, out, records, evidence, proposed, rules, tables,
                     sig, execution, notes, unverified, opts.keep_unverified)


def _split(records: list[dict], items: list[Item], keep_unverified: bool) -> tuple[list[Item], list[Item]]:
    """The kept items split into verified (agreement ``exact``) and the others; each record
    says where its item went (``output``: main, unverified or none). With ``keep_unverified``
    every kept item is in the main list, flagged ``verified`` true or false."""
    exact = {r["id"] for r in records if r.get("kept") and r.get("agreement") == "exact"}
    main, other = [], []
    for it in items:
        ok = it.id in exact
        if keep_unverified:
            it = replace(it, metadata={**it.metadata, "verified": ok})
        (main if ok or keep_unverified else other).append(it)
    for r in records:
        r["verified"] = r["id"] in exact
        r["output"] = (None if not r.get("kept") else "main" if r["verified"] or keep_unverified
                       else "unverified")
    return main, other


PAGE_SAMPLE = 5000


def _find_pages(target: KG, links: Links, opts: MigrateOptions) -> tuple[MigrateOptions, list[str]]:
    """Add the target's own redirect / disambiguation predicates (found from its statistics,
    :func:`kgqa.make.migrate.align.find_page_predicates`) to the options, with a note each."""

    linked = {t for vs in links.pairs.values() for t in vs}
    found = find_page_predicates(target, linked, limit=PAGE_SAMPLE)
    notes = []
    dis, red = list(opts.disambiguation), list(opts.redirect)
    for p, (kind, n) in sorted(found.items()):
        if p in dis or p in red:
            continue
        (dis if kind == "disambiguation" else red).append(p)
        flag = "--disambiguation-predicate" if kind == "disambiguation" else "--redirect-predicate"
        notes.append(f"found the target's {kind} predicate {p} ({n} linked page(s) in a sample of "
                     f"{min(len(linked), PAGE_SAMPLE)} linked IRIs use it); followed as {flag} {p} would")
    return replace(opts, disambiguation=tuple(dis), redirect=tuple(red)), notes


def _label_fallback_hint(unmapped: list[str], target: KG, source: KG | None, opts: MigrateOptions) -> list[str]:
    """A note when --label-fallback would map entities of the items that are unmapped now."""
    if opts.label_fallback or source is None or not unmapped:
        return []
    unmapped = sorted(set(unmapped))
    labels = source.labels(unmapped, opts.label_predicate)
    index = target.by_label({lab for v in labels.values() for lab in v}, opts.label_predicate)
    hits = [i for i in unmapped if any(index.get(lab.casefold()) for lab in labels.get(i, []))]
    if not hits:
        return []
    return [f"{len(hits)} unmapped entit{'y has' if len(hits) == 1 else 'ies have'} a target with the same label "
            f"(e.g. {hits[0]}); --label-fallback would map them (marked 'label')"]
