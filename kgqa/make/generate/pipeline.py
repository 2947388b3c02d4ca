"""The generation loop: templates -> groundings -> validation -> minimization -> commonness ->
language, until ``n`` graph queries are accepted or the attempt budget is spent.

Seeded: one :class:`random.Random` (``seed``) draws every template, and the grounding salt is
derived from it; candidates are drawn in SPARQL by a hash order (see
:mod:`kgqa.make.generate.grounding`), so the same seed on the same KG gives the same dataset, byte
for byte. Target edge counts are drawn uniformly from ``edges``, function classes as
:func:`~kgqa.make.generate.functions.choose_function` says; a graph query whose SPARQL has the same canonical form as one already
accepted (:func:`kgqa.sparql.canonical.canonical_form`: variables renamed, patterns sorted)
is skipped.

With a lexicon (``lex``), every graph query is checked before it is accepted: its canonical
question must say the whole query (:func:`~kgqa.make.generate.language.faithfulness`; a failure is
rejected as ``unfaithful``), and no other accepted graph query may have the same text
(``duplicate-text``), nor a topic entity without a label whose local name has no letter
(``unlabelled-topic``). ``groundings`` holds per template over the whole run (the same template
may be drawn again). A count template whose answer is 1 for every grounding (a lookup: "How
many departments are called Sales?") is not used (``count-always-one``).

On a large KG the grounding queries of the templates the next attempts draw if nothing is
accepted meanwhile (:class:`_Ahead`, on a copy of the random state) are read ahead: in a
background thread on a second engine over the same KG (:meth:`KGAccess.read_ahead`), so they
run while the loop validates this template's candidates, or, where the engine has no second
one (an endpoint), in one batch with this template's. The draws, the candidates and so the
dataset are the same as asking each in turn.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
import math

from kgqa.make.generate.commonness import Commonness
from kgqa.make.generate.functions import choose_function, parse_function_shares
from kgqa.make.generate.graphquery import FUNCTION_CLASSES, FUNCTIONS, GraphQuery
from kgqa.make.generate.grounding import (SIGNATURE_MAX_TRIPLES, apply, candidates, comparative_constants,
                                         count_varies, may_ground, named_classes, node_signatures, prefetch_few_values,
                                         solutions_query, validate_many)
from kgqa.make.generate.kg import KGAccess, QueryFailed
from kgqa.make.generate.language import (canonical_question, faithfulness, problem_kind, unreadable_term,
                                         unreadable_topics, wording_problems)
from kgqa.make.generate.minimization import minimize, redundant_components
from kgqa.make.generate.readings import answers_problem, readings_problem
from kgqa.make.generate.schema import Schema
from kgqa.make.generate.templates import grow_template, template_key
from kgqa.model.problems import InputError
from kgqa.sparql.canonical import canonical_form
from kgqa.make.generate.functions import default_shares
from kgqa.make.generate.language import canonical_question, faithfulness, unreadable_topics


#: templates tried in a row without a new graph query before generation stops (``stalled``)
STALL = 400
#: plain questions stay at least their share less this (two points) of the questions accepted:
#: functions wait for them (:func:`_room`)
MIX_SLACK = 0.02
#: a function class none of whose first this many templates was accepted is given up (the KG
#: offers no such question: no comparable numbers, every count a lookup)
GIVE_UP = 60


@dataclass
class GenerateOptions:
    n: int = 100
    edges: tuple[int, int] = (1, 3)
    functions: tuple[str, ...] = FUNCTIONS
    seed: int = 0
    groundings: int = 3              # graph queries kept per template at most (whole run)
    candidates: int = 20             # grounding candidates drawn per template
    min_commonness: float | None = None
    keep_redundant: bool = False
    max_attempts: int | None = None  # templates tried (default 50 x n)
    #: target share per function class (default: the paper's, see kgqa.make.generate.functions)
    shares: dict[str, float] | None = None

    @classmethod
    def parse(cls, *, edges: str = "1-3", functions: str | None = None, **fields) -> "GenerateOptions":
        """The options from their command-line text (the one place ``kgqa generate`` builds
        them): ``edges`` is ``N`` or ``LOW-HIGH`` (:func:`parse_edges`), ``functions`` a share
        per function class or a list of allowed functions (:func:`parse_function_shares`); the
        other fields are taken as they are. A bad text raises :class:`InputError`."""
        try:
            allowed, shares = parse_function_shares(functions)
            return cls(edges=parse_edges(edges), functions=allowed, shares=shares, **fields)
        except ValueError as e:
            raise InputError("--edges/--functions", str(e)) from None


@dataclass
class Generated:
    """One accepted graph query."""

    index: int
    template: int
    query: GraphQuery
    sparql: str
    answer: object
    commonness: float
    redundant: list[str]
    removed: list[str]
    edges_before: int
    question: str = ""


@dataclass
class GenerationRun:
    queries: list[Generated]
    rejected: Counter = field(default_factory=Counter)
    #: why ``unreadable`` candidates were not published (:func:`~kgqa.make.generate.language.problem_kind`)
    unreadable: Counter = field(default_factory=Counter)
    templates: int = 0
    attempts: int = 0


def _shares(opts: GenerateOptions, allowed: tuple[str, ...]) -> dict[str, float]:
    """The target share of each function class still allowed (renormalised over them)."""
    classes = {FUNCTION_CLASSES[f] for f in allowed}
    shares = {c: v for c, v in (opts.shares or default_shares(tuple(opts.functions))).items() if c in classes}
    total = sum(shares.values()) or 1.0
    return {c: v / total for c, v in shares.items()}


def _caps(opts: GenerateOptions, allowed: tuple[str, ...]) -> dict[str, int]:
    """The most graph queries of each function class: its share (renormalised over the
    classes still allowed) of ``n``, rounded up, so that the several groundings of one template
    never push a class past its share."""
    return {c: math.ceil(v * opts.n) for c, v in _shares(opts, allowed).items()}


def _room(shares: dict[str, float], accepted: dict[str, int], cls: str, cap: int) -> bool:
    """Whether one more graph query of class ``cls`` may be accepted: below its cap and, for a
    function class while plain questions are allowed too, below its share of the questions
    accepted so far plus one (rounded to the nearest) with plain questions still at least
    their share less :data:`MIX_SLACK` of them. A KG whose plain questions run out (organs-it's
    after 17) then keeps the mix: 17 plain questions with 2 + 2 + 2 functions, not 3 + 3 + 2."""
    n = accepted.get(cls, 0)
    if n >= cap:
        return False
    if cls == "none" or "none" not in shares:
        return True
    total = sum(accepted.get(c, 0) for c in shares) + 1
    return n < shares.get(cls, 0.0) * total + 0.5 and accepted.get("none", 0) >= (shares["none"] - MIX_SLACK) * total


def parse_edges(spec: str) -> tuple[int, int]:
    """``"1-3"`` or ``"2"`` -> (low, high)."""
    try:
        if "-" in spec:
            lo, hi = (int(x) for x in spec.split("-", 1))
        else:
            lo = hi = int(spec)
    except ValueError:
        raise ValueError(f"--edges {spec!r}: expected N or LOW-HIGH, e.g. 1-3") from None
    if lo < 1 or hi < lo:
        raise ValueError(f"--edges {spec!r}: need 1 <= LOW <= HIGH")
    return lo, hi


def _draw(rng: random.Random, opts: GenerateOptions, allowed: tuple[str, ...], accepted: dict[str, int],
          tried: dict[str, int], schema: Schema, named_cls) -> tuple[str, GraphQuery | None, str]:
    """One attempt's draws: its function, its template (None: none grows) and the function
    class given up on this attempt ("" if none: the attempt then draws no template).
    Counts the attempt in ``tried``."""
    fn = choose_function(rng, allowed, accepted, opts.shares)
    if "none" in allowed and not _room(_shares(opts, allowed), accepted, FUNCTION_CLASSES[fn], opts.n):
        fn = "none"  # functions wait for plain questions (and are not given up meanwhile)
    cls_ = FUNCTION_CLASSES[fn]
    tried[cls_] = tried.get(cls_, 0) + 1
    if tried[cls_] > GIVE_UP and not accepted.get(cls_) and len({FUNCTION_CLASSES[f] for f in allowed}) > 1:
        return fn, None, cls_
    k = rng.randint(*opts.edges)
    return fn, grow_template(schema, rng, k, fn, named_cls), ""


#: grounding queries of the templates drawn next read ahead (module docstring): a second
#: engine answers them while the loop's own queries and Python run (fso-hgde: 83 questions in
#: 46-48 s instead of 53-64, read back to back on this 2-core machine)
AHEAD = 3
#: attempts looked ahead at most for them
AHEAD_ATTEMPTS = 12
#: grounding queries are read ahead on KGs of at least this many triples (as the schema
#: counts them); on smaller ones (gocam-nod2, iaml-genres: under 7,000) they take a few
#: milliseconds and drawing ahead costs more than it saves. Read ahead in the background (a
#: second engine), autry-museum's (14,600 triples, dates through three edges) took 33-41 s
#: against 38-42 without, one run after the other; fso-hgde (191,000) gains most
AHEAD_MIN_TRIPLES = 10_000


@dataclass
class _Ahead:
    """The attempts after the loop's current one as they go if it accepts nothing more: the
    draws then depend on the random state alone (what is accepted changes them: a guess, right
    most of the time). Drawn on a copy of the loop's random state, each attempt once while
    nothing is accepted (:meth:`upcoming`)."""

    rng: random.Random = field(default_factory=random.Random)
    accepted: int = -1     # questions accepted when the draws below were made
    attempt: int = 0       # the attempt the next draw is
    tried: dict = field(default_factory=dict)
    allowed: tuple = ()
    drawn: list = field(default_factory=list)  # (attempt, template or None)

    def upcoming(self, rng: random.Random, attempt: int, accepted: dict[str, int], n_accepted: int,
                 tried: dict[str, int], allowed: tuple[str, ...], opts: GenerateOptions, schema: Schema, named_cls,
                 grounded: Callable[[GraphQuery], bool]) -> list[GraphQuery]:
        """The templates that the attempts after ``attempt`` (the loop's, its random state
        ``rng``) draw and ground (``grounded``), up to :data:`AHEAD` of the next
        :data:`AHEAD_ATTEMPTS`, if nothing is accepted meanwhile (``n_accepted`` questions now)."""
        if n_accepted != self.accepted or self.attempt <= attempt:
            self.rng.setstate(rng.getstate())
            self.accepted, self.attempt, self.drawn = n_accepted, attempt + 1, []
            self.tried, self.allowed = dict(tried), allowed
        self.drawn = [(a, t) for a, t in self.drawn if a > attempt]
        out = [t for _, t in self.drawn if t is not None and grounded(t)]
        while AHEAD > 0 and len(out) < AHEAD and self.attempt <= attempt + AHEAD_ATTEMPTS:
            _, t, given_up = _draw(self.rng, opts, self.allowed, accepted, self.tried, schema, named_cls)
            if given_up:
                self.allowed = tuple(f for f in self.allowed if FUNCTION_CLASSES[f] != given_up)
            self.drawn.append((self.attempt, t))
            self.attempt += 1
            if t is not None and grounded(t):
                out.append(t)
        return out[:AHEAD]


def _grounded(t: GraphQuery, kept: dict, varies: dict, ungroundable: set, sigs, named: tuple[str, ...],
              opts: GenerateOptions) -> bool:
    """Whether the loop, drawing ``t`` now, would run its grounding query (as far as is known
    without a query: a count template not yet checked is not)."""
    key = template_key(t)
    if kept.get(key, 0) >= opts.groundings or key in ungroundable:
        return False
    if t.function.name == "count" and not varies.get(key, False):
        return False
    return may_ground(sigs, t, named)


# long function: the generation loop (module docstring): its caps, stall stop and per-class quotas share the loop's counters
def run(kg: KGAccess, schema: Schema, common: Commonness, opts: GenerateOptions,
        progress: Callable[[int], None] | None = None, lex=None) -> GenerationRun:
    """The loop (module docstring); ``lex``: a :class:`~kgqa.make.generate.language.Lexicon` for
    the faithfulness and duplicate-text checks (None: no check)."""
    rng = random.Random(opts.seed)
    out = GenerationRun([])
    seen: set = set()
    seen_templates: dict[tuple, int] = {}
    kept_per_template: dict[tuple, int] = {}
    texts: dict[str, str] = {}
    accepted: dict[str, int] = {}
    varies: dict[tuple, bool] = {}
    ungroundable: set[tuple] = set()  # template keys without a grounding (the salt only orders them)
    budget = opts.max_attempts if opts.max_attempts is not None else 50 * max(1, opts.n)

    def accept(answered, edges_before: int) -> bool:
        nonlocal last_accept
        removed: list[str] = []
        redundant: list[str] = []
        try:  # what the answers alone decide, before minimization spends queries on them
            early = answers_problem(answered, lex)
        except QueryFailed:
            early = "engine-error"
        if early:
            out.rejected[early] += 1
            return False
        if opts.keep_redundant:
            redundant = redundant_components(kg, answered)
        else:
            answered, removed = minimize(kg, answered)
        if answered.query.function.cls in ("none", "count") and not answered.query.topic_entities:
            out.rejected["no-topic"] += 1  # "Which subdivision has a broader concept?": vague
            return False
        sig = canonical_form(answered.sparql) or answered.sparql
        if sig in seen:
            out.rejected["duplicate"] += 1
            return False
        try:
            c = common.log10(answered.query)
        except QueryFailed:
            out.rejected["engine-error"] += 1
            return False
        if opts.min_commonness is not None and c < opts.min_commonness:
            out.rejected["below-min-commonness"] += 1
            return False
        text = ""
        if lex is not None:
            try:
                text = canonical_question(answered.query, lex)[0]
                problems = faithfulness(answered.query, lex, text)
                unlabelled = unreadable_topics(answered.query, lex)
                wording = wording_problems(answered.query, lex)
            except QueryFailed:
                out.rejected["engine-error"] += 1
                return False
            if unlabelled:
                out.rejected["unlabelled-topic"] += 1
                return False
            if wording:
                out.rejected["unreadable"] += 1
                out.unreadable[problem_kind(wording[0])] += 1
                return False
            if problems:
                out.rejected["unfaithful"] += 1
                return False
            try:
                why = readings_problem(kg, answered, lex, text)
            except QueryFailed:
                out.rejected["engine-error"] += 1
                return False
            if why:
                out.rejected[why] += 1
                return False
            if texts.get(text, sig) != sig:
                out.rejected["duplicate-text"] += 1
                return False
            texts[text] = sig
        seen.add(sig)
        if key not in seen_templates:
            seen_templates[key] = len(seen_templates) + 1
        out.queries.append(Generated(len(out.queries) + 1, seen_templates[key], answered.query,
                                     answered.sparql, answered.answer, c, redundant, removed, edges_before,
                                     text))
        cls = answered.query.function.cls
        accepted[cls] = accepted.get(cls, 0) + 1
        accepted["fn:" + answered.query.function.name] = accepted.get("fn:" + answered.query.function.name, 0) + 1
        kept_per_template[key] = kept_per_template.get(key, 0) + 1
        if progress is not None:
            progress(1)
        last_accept = out.attempts
        return True

    # a KG that names its entities: topics drawn named in SPARQL (unnamed ones would be
    # rejected as unlabelled after costing their validation queries)
    named = tuple(lex.props) if lex is not None and lex.require_labels else ()
    try:  # question nodes of functions on numbers: classes whose instances are named
        named_cls = named_classes(kg, schema.classes, named)
    except QueryFailed:
        named_cls = frozenset()
    sigs = None  # what meets at the KG's nodes: templates that cannot be grounded cost no query
    if schema.stats.get("triples", 0) <= SIGNATURE_MAX_TRIPLES:
        try:
            sigs = node_signatures(kg)
        except QueryFailed:
            sigs = None
        if kg.join_stats is None:  # checks sent in a better join order (module joinorder)
            kg.read_join_stats()
    allowed = tuple(opts.functions)
    tried: dict[str, int] = {}  # templates tried per function class since its last acceptance
    last_accept = 0
    reader = _Ahead()  # the grounding queries of the next attempts, read ahead on a large KG
    read_ahead = sigs is not None and schema.stats.get("triples", 0) >= AHEAD_MIN_TRIPLES
    while len(out.queries) < opts.n and out.attempts < budget:
        if out.attempts - last_accept > STALL:  # the KG offers no new question
            out.rejected["stalled"] += 1
            break
        out.attempts += 1
        fn, t, given_up = _draw(rng, opts, allowed, accepted, tried, schema, named_cls)
        if given_up:
            allowed = tuple(f for f in allowed if FUNCTION_CLASSES[f] != given_up)  # the KG offers none
            out.rejected[f"gave-up-{given_up}"] += 1
            continue
        if t is None:
            out.rejected["no-template"] += 1
            continue
        key = template_key(t)
        if kept_per_template.get(key, 0) >= opts.groundings:
            out.rejected["template-full"] += 1
            continue
        if fn == "count":
            if key not in varies and sigs is not None and not may_ground(sigs, t):
                varies[key] = False  # no grounding: count_varies would find no row
            if key not in varies:
                try:
                    varies[key] = count_varies(kg, t)
                except QueryFailed:
                    out.rejected["engine-error"] += 1
                    continue
            if not varies[key]:
                out.rejected["count-always-one"] += 1
                continue
        if key not in ungroundable and sigs is not None and not may_ground(sigs, t, named):
            ungroundable.add(key)  # its grounding query would come back empty
        if key in ungroundable:  # its grounding query came back empty: it does under every salt
            out.rejected["no-grounding"] += 1
            continue
        sq = solutions_query(t, named)
        if read_ahead and sq is not None and (kg.reads_in_background or not kg.has_answer(sq[0])):
            # the grounding queries of the next templates drawn if this one accepts nothing: in
            # the background (a second engine), or in one batch with this one's (both workers busy)
            ahead = reader.upcoming(rng, out.attempts, accepted, len(out.queries), tried, allowed, opts, schema,
                                    named_cls, lambda u: _grounded(u, kept_per_template, varies, ungroundable,
                                                                   sigs, named, opts))
            later = [q[0] for u in ahead if (q := solutions_query(u, named))]
            if not kg.read_ahead(later):
                kg.select_many(list(dict.fromkeys([sq[0]] + later)))
        salt = hashlib.sha256(f"{opts.seed}:{out.attempts}".encode()).hexdigest()[:16]
        try:
            cands = candidates(kg, t, opts.candidates, salt, named)
        except QueryFailed:
            out.rejected["engine-error"] += 1
            continue
        if not cands:
            ungroundable.add(key)
            out.rejected["no-grounding"] += 1
            continue
        try:
            cands = common.rank_candidates(cands, lex)
        except QueryFailed:
            out.rejected["engine-error"] += 1
            continue
        if lex is not None:  # topics no reader could recognise: dropped before they cost queries
            keep = [c for c in cands if not any(unreadable_term(v, lex) for v in c.values())]
            out.rejected["unlabelled-topic"] += len(cands) - len(keep)
            cands = keep
        kept = kept_per_template.get(key, 0)
        pos = 0
        cap = _caps(opts, allowed).get(t.function.cls, opts.n)
        shares = _shares(opts, allowed)
        if t.function.cls == "superlative" and kept < opts.groundings and len(out.queries) < opts.n and \
                _room(shares, accepted, t.function.cls, cap):  # the loop below checks them: in one batch
            prefetch_few_values(kg, [q for q in (apply(t, v) for v in cands) if q is not None])
        while pos < len(cands) and kept < opts.groundings and len(out.queries) < opts.n and \
                _room(shares, accepted, t.function.cls, cap):
            chunk = cands[pos:pos + opts.groundings - kept]  # validated as one batch
            pos += len(chunk)
            qs = []
            for values in chunk:
                q = apply(t, values)
                if q is None:
                    out.rejected["not-exclusive"] += 1
                else:
                    qs.append(q)
            if t.function.cls == "comparative":
                with_c = comparative_constants(kg, qs)
                out.rejected["no-constant"] += sum(1 for q in with_c if q is None)
                qs = [q for q in with_c if q is not None]
            for q, (answered, why) in zip(qs, validate_many(kg, qs)):
                if kept >= opts.groundings or len(out.queries) >= opts.n or \
                        not _room(shares, accepted, t.function.cls, cap):
                    break
                if answered is None:
                    out.rejected[why] += 1
                    continue
                if accept(answered, len(q.edges)):
                    kept += 1
    kg.stop_reading_ahead()  # guesses the loop will not ask for
    out.templates = len(seen_templates)
    return out
