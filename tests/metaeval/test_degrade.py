"""Synthetic degradations (kgqa.metaeval.degrade): token-precise edits, seeded selection, T3
partners on CK25, and the `kgqa degrade` command."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from kgqa.metaeval.degrade import (
    Context, Vocabulary, answer_key, build_context, degrade, get, item_rng, names, rename_variables,
    same_answer_partners, triple_patterns, where_braces,
)
from kgqa.cli import _register, app
from kgqa.load import formats, load_dataset, load_run
from kgqa.model import BooleanAnswer, Dataset, IRI, Item, Literal, Outcome, Status, TableAnswer
from kgqa.score.query_measures import sem_set, tri_set
from kgqa.sparql.analyzer import analyze
from kgqa.sparql.lexer import tokenize

EX = "PREFIX ex: <http://example.org/>\n"
VOC = Vocabulary(entities=("http://kg/e1", "http://kg/e2", "http://kg/e3"),
                 predicates=("http://kg/p1", "http://kg/p2"), strings=("alpha", "beta"))


def _ctx(items=()) -> Context:
    return Context(Dataset("t", list(items)), VOC)


def _apply(name: str, q: str, seed: int = 0) -> str | None:
    return get(name).apply(q, random.Random(seed), _ctx(), "x")


@pytest.fixture(scope="module")
def ck25(shared_data) -> Dataset:
    return load_dataset(shared_data / "ck25" / "questions.yml")


@pytest.fixture(scope="module")
def runner(shared_data):
    from kgqa.execute.executor import Executor
    from kgqa.execute.embedded import EmbeddedEngine

    e = EmbeddedEngine.from_files([shared_data / "ck25" / "graphs" / "prod-inst.ttl"], workers=2)
    yield Executor(e)
    e.close()


def test_registry_declares_desiderata():
    assert names()[:3] == ["T1", "T2", "T3"]
    assert set(names()) == {"T1", "T2", "T3", "swap", "drop", "distinct", "count-distinct", "filter-constant",
                            "truncate"}
    assert get("T1").keeps == {"D1"} and get("T1").breaks == {"D2", "D3"}
    assert get("T2").keeps == {"D2"} and get("T2").breaks == {"D1", "D3"}
    assert get("T3").keeps == {"D2", "D3"} and get("T3").breaks == {"D1"}
    assert get("t1") is get("T1")
    for n in names():
        t = get(n)
        assert not (t.keeps & t.breaks) and t.breaks
    with pytest.raises(ValueError, match="known: T1"):
        get("nope")


def test_t1_removes_exactly_the_where_closing_brace():
    q = EX + 'SELECT ?x WHERE { ?x ex:p "}" . OPTIONAL { ?x ex:q ?y } } # }\nORDER BY ?x'
    out = _apply("T1", q)
    before, after = tokenize(q), tokenize(out)
    wb = where_braces(q)
    assert [t[:2] for t in after] == [t[:2] for i, t in enumerate(before) if i != wb[1]]
    assert '"}"' in out and "# }" in out  # strings and comments untouched
    assert not analyze(out).valid
    assert _apply("T1", EX + "SELECT ?x WHERE { ?x ex:p ?y") is None  # already unclosed


def test_t2_replaces_every_entity_and_predicate_consistently():
    q = EX + 'SELECT ?x WHERE { ?x ex:p ex:A ; a ex:C . ex:A ex:q "ex:A" . FILTER(?x != ex:Z) }'
    out = _apply("T2", q, seed=3)
    gold_sem = sem_set(q)
    new_sem = sem_set(out)
    assert not (gold_sem & new_sem)
    assert {i.value for i in analyze(out).predicates} <= set(VOC.predicates)
    assert {i.value for i in analyze(out).entities} <= set(VOC.entities)
    assert '"ex:A"' in out and "ex:Z" in out  # literal and FILTER IRI untouched
    toks = [t.value for t in tokenize(out) if t.kind == "IRIREF"]
    # ex:A occurs twice and gets the same replacement both times
    a1, a2 = toks[2], toks[5]
    assert a1 == a2
    assert analyze(out).valid
    assert _apply("T2", q, seed=3) == out  # seeded


def test_swap_and_drop_are_valid_and_precise():
    q = EX + "SELECT ?x WHERE { ?x ex:p ex:A . ?x ex:q ?y , ?z ; ex:r ?w . }"
    pats = triple_patterns(q)
    assert len(pats) == 4 == len(analyze(q).triples)
    for seed in range(20):
        s = _apply("swap", q, seed)
        d = _apply("drop", q, seed)
        assert analyze(s).valid and analyze(d).valid, (s, d)
        assert len(analyze(d).triples) == 3
        assert len(tri_set(s, False)) == 4 and tri_set(s, False) != tri_set(q, False)
    single = EX + "SELECT ?x WHERE { ?x ex:p ex:A }"
    assert _apply("swap", single) == EX + "SELECT ?x WHERE { ex:A ex:p ?x }"
    assert _apply("drop", single) is None  # would leave no pattern
    assert _apply("swap", EX + 'SELECT ?x WHERE { ?x ex:p "lit" }') is None  # literal subject is invalid


def test_distinct_count_filter_truncate():
    q = EX + "SELECT DISTINCT ?x WHERE { ?x ex:p ?y }"
    assert _apply("distinct", q) == EX + "SELECT ?x WHERE { ?x ex:p ?y }"
    assert _apply("distinct", _apply("distinct", q)) == q
    c = EX + "SELECT (COUNT(?x) AS ?n) WHERE { ?x ex:p ?y }"
    assert _apply("count-distinct", c) == EX + "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x ex:p ?y }"
    assert _apply("count-distinct", _apply("count-distinct", c)) == c
    f = EX + 'SELECT ?x WHERE { ?x ex:age ?a ; ex:name ?n FILTER(?a > 30 && CONTAINS(?n, "Bob")) } LIMIT 10'
    changed = {_apply("filter-constant", f, s) for s in range(30)}
    assert all(x != f and x.endswith("LIMIT 10") for x in changed)
    assert any('"alpha"' in x or '"beta"' in x for x in changed)
    assert any("?a > 30" not in x and '"Bob"' in x for x in changed)
    for s in range(10):
        t = _apply("truncate", f, s)
        assert f.startswith(t) and len(t) < len(f) and "WHERE {" in t


def test_rename_variables_keeps_semantic_sets():
    q = EX + "SELECT ?x WHERE { ?x ex:p ?v1 . ?v1 ex:q ?y } ORDER BY ?y"
    r = rename_variables(q)
    assert "?x" not in r and sem_set(r) == sem_set(q) and tri_set(r) == tri_set(q)
    assert len({t.value for t in tokenize(r) if t.kind == "VAR"}) == 3


def _toy(n: int) -> Dataset:
    return Dataset("toy", [Item(f"q{i}", {"en": "?"}, EX + f"SELECT ?x WHERE {{ ?x ex:p{i} ex:o{i} }}")
                           for i in range(n)] + [Item("noq", {"en": "?"}, None)])


@given(n=st.integers(1, 40), rate=st.floats(0, 1), seed=st.integers(0, 10**6))
@settings(max_examples=40, deadline=None)
def test_degrade_selection_property(n, rate, seed):
    ds = _toy(n)
    d = degrade(ds, "T1", rate, seed)
    k = int(rate * n + 0.5)
    assert d.items == n and d.requested == k and len(d.changed) == k
    assert [p.id for p in d.run.predictions] == [f"q{i}" for i in range(n)]
    for p in d.run.predictions:
        gold = ds[p.id].sparql
        if p.id in d.changed:
            assert p.sparql == get("T1").apply(gold, item_rng(seed, "T1", p.id), Context(ds), p.id)
            assert p.metadata == {"degraded": "T1"}
        else:
            assert p.sparql == gold and not p.metadata
    again = degrade(ds, "T1", rate, seed)
    assert [p.sparql for p in again.run.predictions] == [p.sparql for p in d.run.predictions]


def test_among_all_leaves_inapplicable_items_gold():
    ds = _toy(10)
    ds.items[0].sparql = EX + "ASK { ex:a ex:b ex:c }"  # no SELECT: distinct does not apply
    ds = Dataset("toy", ds.items)
    app_ = degrade(ds, "distinct", 1.0, 0)
    assert app_.applicable == 9 and len(app_.changed) == 9
    all_ = degrade(ds, "distinct", 1.0, 0, among="all")
    assert all_.drawn == 10 and len(all_.changed) == 9 and "q0" not in all_.changed
    with pytest.raises(ValueError):
        degrade(ds, "T1", 1.5, 0)


def test_partners_and_answer_key():
    a = TableAnswer(("x", "y"), ((IRI("http://a"), Literal("1")),))
    b = TableAnswer(("y", "x"), ((Literal("1.0", "http://www.w3.org/2001/XMLSchema#decimal"), IRI("http://a")),))
    assert answer_key(a) == answer_key(b)
    ds = Dataset("p", [Item("1", {}, "ASK {}"), Item("2", {}, "ASK { ?s ?p ?o }"), Item("3", {}, "ASK {}"),
                       Item("4", {}, "SELECT * {}")])
    gold = {"1": Outcome.ok(BooleanAnswer(True)), "2": Outcome.ok(BooleanAnswer(True)),
            "3": Outcome.ok(BooleanAnswer(True)), "4": Outcome(Status.EXEC_ERROR, None, "x")}
    p = same_answer_partners(ds, gold)
    assert p == {"1": ["2"], "2": ["1", "3"], "3": ["2"]}  # 1 and 3 have the same text


def test_t3_on_ck25(ck25, runner):
    ctx = build_context(ck25, ["T3"], runner)
    assert {k: v for k, v in ctx.partners.items() if v} == {"ck25:16": ["ck25:28"], "ck25:28": ["ck25:16"]}
    d = degrade(ck25, "T3", 0.1, 0, ctx)
    assert d.applicable == 2 and sorted(d.changed) == ["ck25:16", "ck25:28"] and d.requested == 5
    assert d.run.get("ck25:16").sparql == ck25["ck25:28"].sparql
    outs = runner.run({p.id: p.sparql for p in d.run.predictions})
    gold = runner.run({it.id: it.sparql for it in ck25.items}, untrusted=False)
    assert all(answer_key(outs[i].answer) == answer_key(gold[i].answer) for i in d.changed)
    assert "(items with a same-answer partner)" in d.summary()


def test_every_transformation_keeps_ck25_queries_parseable(ck25, runner):
    ctx = build_context(ck25, ["T2"], runner)
    assert len(ctx.vocabulary.predicates) > 20 and len(ctx.vocabulary.entities) > 1000
    for name in ("T2", "swap", "drop", "distinct", "count-distinct", "filter-constant"):
        for it in ck25.items:
            out = get(name).apply(it.sparql, item_rng(0, name, it.id), ctx, it.id)
            if out is not None:
                assert analyze(out).valid, (name, it.id, out)
    outs = runner.run({it.id: get("T1").apply(it.sparql, item_rng(0, "T1", it.id), ctx, it.id) for it in ck25.items})
    assert all(o.status is Status.PARSE_ERROR for o in outs.values())


def test_cli_degrade_byte_identical(shared_data, tmp_path):
    _register()
    cli = CliRunner()
    kg = str(shared_data / "ck25" / "graphs" / "prod-inst.ttl")
    outs = []
    for n in (1, 2):
        path = tmp_path / f"run{n}.jsonl"
        r = cli.invoke(app, ["degrade", "ck25", "--kg", kg, "--transform", "T2", "--rate", "0.2", "--seed", "7",
                             "--cache", str(tmp_path / "c.sqlite"), "-o", str(path)])
        assert r.exit_code == 0, r.output
        outs.append(path.read_bytes())
    assert outs[0] == outs[1]
    run = load_run(tmp_path / "run1.jsonl", format="jsonl")
    changed = [p for p in run.predictions if p.metadata.get("degraded") == "T2"]
    assert len(run) == 50 and len(changed) == 10
    assert json.loads(outs[0].splitlines()[0])["id"] == "ck25:1-en"  # issue 12: the ids evaluate scores
    r = cli.invoke(app, ["degrade", "ck25", "--transform", "T2", "-o", str(tmp_path / "x.jsonl")])
    assert r.exit_code != 0 and "needs a KG" in str(r.exception)
    assert formats.get("run", "jsonl").write is not None
