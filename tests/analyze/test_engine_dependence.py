"""Engine dependence (issue 12): static detection, confirmation by execution on a small KG,
score ranges, --exclude-engine-dependent, and the CK25 acceptance on the teams' real runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from kgqa.execute.engine_findings import (
    Choice, assess_many, detect, iri_comparison_variants, with_projected, without_outer_limit,
)
from kgqa.model import TableAnswer
from kgqa.model.terms import DEFAULT_MATCHING

EX = "http://ex.org/"
P = f"PREFIX ex: <{EX}> "

# departments with product counts: d1 5, d2 5, d3 3, d4 2, d5 2, d6 1
KG = "\n".join(
    [f"<{EX}d{d}> <{EX}responsibleFor> <{EX}p{d}_{i}> ." for d, n in ((1, 5), (2, 5), (3, 3), (4, 2), (5, 2), (6, 1)) for i in range(n)]
    + [f"<{EX}d{d}> <{EX}size> {n} ." for d, n in ((1, 5), (2, 5), (3, 3), (4, 2), (5, 2), (6, 1))]
    + [f"<{EX}p1_0> <{EX}compatible> <{EX}p2_0> .", f"<{EX}p2_0> <{EX}compatible> <{EX}p1_0> .",
       f"<{EX}d1> <{EX}label> \"one\" .", f"<{EX}d2> <{EX}label> \"two\" ."]
) + "\n"

COUNT = P + "SELECT ?d (COUNT(?p) AS ?n) WHERE { ?d ex:responsibleFor ?p } GROUP BY ?d ORDER BY DESC(?n) LIMIT {k}"


def kinds(q: str) -> set[str]:
    return {f.kind for f in detect(q)}


@pytest.mark.parametrize("q,expected", [
    (P + "SELECT ?d WHERE { ?d ex:size ?n } LIMIT 3", {"limit-without-order"}),
    (P + "SELECT ?d WHERE { ?d ex:size ?n } OFFSET 1", {"limit-without-order"}),
    (P + "SELECT ?d WHERE { ?d ex:size ?n } ORDER BY ?n LIMIT 3", {"order-limit"}),
    (P + "SELECT (COUNT(*) AS ?c) WHERE { ?d ex:size ?n } LIMIT 1", set()),  # one row whatever the engine
    (P + "SELECT ?d WHERE { ?d ex:size ?n }", set()),
    (P + "SELECT ?d (SAMPLE(?p) AS ?s) WHERE { ?d ex:responsibleFor ?p } GROUP BY ?d", {"sample"}),
    (P + "SELECT ?d (GROUP_CONCAT(?p) AS ?s) WHERE { ?d ex:responsibleFor ?p } GROUP BY ?d", {"group-concat"}),
    (P + "SELECT ?a ?b WHERE { ?a ex:compatible ?b FILTER(?a < ?b) }", {"comparison"}),
    (P + "SELECT ?a WHERE { ?a ex:size ?n FILTER(?n < 3) }", set()),
    (P + "SELECT ?a WHERE { ?a ex:size ?n FILTER(RAND() < 0.5) }", {"nondeterministic"}),
    (P + "SELECT ?a (NOW() AS ?t) (STRUUID() AS ?u) WHERE { ?a ex:size ?n }", {"nondeterministic"}),
    (P + "SELECT ?a WHERE { { SELECT ?a WHERE { ?a ex:size ?n } LIMIT 2 } }", {"limit-without-order"}),
    ("ASK { ?s ?p ?o }", set()),
    # an ASK's window holds a solution or not by their number alone, whichever the engine keeps
    ("ASK { ?s ?p ?o } LIMIT 1", set()),
    ("ask { ?s ?p ?o } OFFSET 3 LIMIT 1", set()),
    (P + "ASK { { SELECT ?a WHERE { ?a ex:size ?n } LIMIT 2 } ?a ex:size 3 }", {"limit-without-order"}),
    ("this is not SPARQL at all", set()),
])
def test_detect(q, expected):
    assert kinds(q) == expected


def test_subquery_findings_say_so():
    (f,) = detect(P + "SELECT ?a WHERE { { SELECT ?a WHERE { ?a ex:size ?n } ORDER BY ?n LIMIT 2 } }")
    assert f.level == "subquery" and "in a subquery" in f.message


def test_rewrites():
    q = P + "SELECT ?d WHERE { { SELECT ?d WHERE { ?d ex:size ?n } LIMIT 9 } } ORDER BY ?d LIMIT 3 OFFSET 1"
    stripped = without_outer_limit(q)
    assert "LIMIT 9" in stripped and "LIMIT 3" not in stripped and "OFFSET" not in stripped
    assert without_outer_limit(P + "SELECT ?d WHERE { ?d ex:size ?n }") is None
    assert with_projected(P + "SELECT ?d WHERE { ?d ex:size ?n }", ["n"]) == P + "SELECT ?d  ?n WHERE { ?d ex:size ?n }"
    assert with_projected(P + "SELECT * WHERE { ?d ex:size ?n }", ["n"]) is None
    a, b = iri_comparison_variants(P + "SELECT ?a WHERE { ?a ex:c ?b FILTER(?a < ?b) }")
    assert "(IF(isIRI(?a) || isIRI(?b) || (isLiteral(?a) && isLiteral(?b) && isNumeric(?a) != isNumeric(?b)), " \
           "STR(?a) < STR(?b), ?a < ?b))" in a
    assert "STR(?a) > STR(?b), ?a < ?b" in b


def test_choice_enumerates_every_legal_answer():
    r = [(i,) for i in range(5)]
    c = Choice(("x",), ((9,),), ((tuple(r), 2),))
    assert c.count() == 10
    answers = c.answers()
    assert len(answers) == 10 and all(len(a) == 3 and a.rows[0] == (9,) for a in answers)
    assert len(c.answers(bound=4)) == 4


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    from kgqa.execute.opener import open_engine
    from kgqa.execute.executor import Executor

    path = tmp_path_factory.mktemp("kg") / "kg.ttl"
    path.write_text(KG)
    engine = open_engine(str(path), None, progress=False)
    yield Executor(engine)
    engine.close()


def _assess(runner, q: str):
    outs = runner.run({"q": q})
    return assess_many({"q": q}, outs, runner).get("q"), outs["q"]


def test_tie_at_the_cut_is_confirmed_with_every_choice(runner):
    a, out = _assess(runner, COUNT.replace("{k}", "1"))
    assert a.confirmed is True and "keeps 1 of 2" in a.reason
    assert a.choice.count() == 2
    got = {frozenset(ans.rows) for ans in a.choice.answers()}
    assert frozenset(out.answer.rows) in got and len(got) == 2


def test_no_tie_at_the_cut_is_not_flagged(runner):
    a, _ = _assess(runner, COUNT.replace("{k}", "3"))  # 5, 5, 3 | 2: no tie at the cut
    assert a.confirmed is False and not a.dependent and a.notes == ["no tie at the cut"]


def test_tie_on_a_sort_key_that_is_not_projected(runner):
    a, _ = _assess(runner, P + "SELECT ?d WHERE { ?d ex:size ?n } ORDER BY DESC(?n) LIMIT 4")  # 5 5 3 2 | 2 1
    assert a.confirmed is True and a.choice.variables == ("d",) and a.choice.count() == 2


def test_limit_without_order(runner):
    a, _ = _assess(runner, P + "SELECT ?d WHERE { ?d ex:size ?n } LIMIT 2")
    assert a.confirmed is True and a.choice.count() == 15  # any 2 of 6
    a, _ = _assess(runner, P + "SELECT ?d WHERE { ?d ex:label ?l } LIMIT 5")  # only 2 rows: all fit
    assert a.confirmed is False and not a.dependent


def test_group_concat_notes_say_why_it_is_not_confirmed(runner):
    a, out = _assess(runner, P + "SELECT ?d (GROUP_CONCAT(?p) AS ?s) WHERE { ?d ex:responsibleFor ?p } GROUP BY ?d")
    assert all(row[1] is None for row in out.answer.rows)  # over IRIs: the aggregate fails, unbound
    assert a.confirmed is False and a.notes == ["every GROUP_CONCAT value is unbound (the aggregate failed: nothing to order)"]
    a, out = _assess(runner, P + "SELECT ?d (GROUP_CONCAT(STR(?n)) AS ?s) WHERE { ?d ex:size ?n } GROUP BY ?d")
    assert a.confirmed is False and a.notes == ["every GROUP_CONCAT group has one value"]
    a, out = _assess(runner, P + "SELECT ?d (GROUP_CONCAT(STR(?p)) AS ?s) WHERE { ?d ex:responsibleFor ?p } GROUP BY ?d")
    assert a.confirmed is True


def test_group_concat_orders_are_the_legal_answers(runner):
    # d1 and d2 have five products each, d3 three, d4/d5 two, d6 one: 5!·5!·3!·2·2 orders > bound
    a, out = _assess(runner, P + "SELECT ?d (GROUP_CONCAT(STR(?p)) AS ?s) WHERE { ?d ex:responsibleFor ?p } GROUP BY ?d")
    assert a.open == ["group-concat"] and not a.alternatives
    a, out = _assess(runner, P + "SELECT (GROUP_CONCAT(STR(?p); separator='|') AS ?s) WHERE { ex:d3 ex:responsibleFor ?p }")
    assert a.confirmed is True and a.open == [] and len(a.alternatives) == 6  # 3! orders
    assert a.alternatives[0] is out.answer
    assert {x.rows[0][0].value for x in a.alternatives} == {
        "|".join(p) for p in __import__("itertools").permutations(sorted(out.answer.rows[0][0].value.split("|")))}


def test_sample_and_rand_leave_the_legal_answers_open(runner):
    a, _ = _assess(runner, P + "SELECT ?d (SAMPLE(?p) AS ?s) WHERE { ?d ex:responsibleFor ?p } GROUP BY ?d")
    assert a.dependent and a.open == ["sample"] and a.to_json()["legal_answers"] is None


def test_iri_comparison_confirmed_with_alternatives(runner):
    a, out = _assess(runner, P + "SELECT ?a ?b WHERE { ?a ex:compatible ?b FILTER(?a < ?b) }")
    assert len(out.answer) == 0  # standard SPARQL: comparing IRIs is an error, the row is dropped
    assert a.confirmed is True and len(a.alternatives) == 3
    assert {len(x) for x in a.alternatives} == {0, 1}
    a, _ = _assess(runner, P + "SELECT ?a WHERE { ?a ex:size ?n FILTER(?n < 3) }")
    assert a is None  # no finding: nothing executed


def test_mixed_type_comparison_confirmed(runner):
    # a number against a string: a type error in SPARQL 1.1 (no row), compared as text elsewhere
    a, out = _assess(runner, P + "SELECT ?d WHERE { ?d ex:size ?n ; ex:label ?l FILTER(?n < ?l) }")
    assert len(out.answer) == 0 and a.confirmed is True
    assert {len(x) for x in a.alternatives} == {0, 2}


def test_failed_queries_are_not_assessed(runner):
    outs = runner.run({"q": P + "SELECT ?d WHERE { ?d ex:size ?n } LIMIT 2 ORDER BY ?n"})  # syntax error
    assert assess_many({"q": P + "SELECT ?d WHERE { ?d ex:size ?n } LIMIT 2 ORDER BY ?n"}, outs, runner) == {}


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.integers(0, 4), st.booleans())
def test_engine_answer_is_always_a_legal_answer(runner, k, offset, desc):
    q = (P + f"SELECT ?d ?n WHERE {{ ?d ex:size ?n }} ORDER BY {'DESC(?n)' if desc else '?n'} LIMIT {k}"
         + (f" OFFSET {offset}" if offset else ""))
    a, out = _assess(runner, q)
    if a is None or not a.dependent:
        return
    legal = {frozenset(x.rows) for x in a.choice.answers()}
    assert frozenset(out.answer.rows) in legal
    assert all(len(x) == len(out.answer) for x in a.choice.answers())


# ----------------------------------------------------------------- through evaluate --kg


def _cli(capsys, *args):
    from kgqa.cli import main

    try:
        main(list(args))
    except SystemExit as e:
        assert not e.code, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _cli_text(capsys, *args) -> str:
    from kgqa.cli import main

    try:
        main(list(args))
    except SystemExit as e:
        assert not e.code, capsys.readouterr().err
    return capsys.readouterr().out


def test_evaluate_marks_ranges_and_excludes(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    kg = tmp_path / "kg.ttl"
    kg.write_text(KG)
    ds = tmp_path / "ds.jsonl"
    ds.write_text("\n".join(json.dumps(r) for r in [
        {"id": "top", "question": "Which department is responsible for the most products?",
         "answers": [f"{EX}d2"]},
        {"id": "three", "question": "Which department has three products?", "answers": [f"{EX}d3"]},
    ]) + "\n")
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(json.dumps(r) for r in [
        {"id": "top", "query": P + "SELECT ?d WHERE { ?d ex:size ?n } ORDER BY DESC(?n) LIMIT 1"},
        {"id": "three", "query": P + "SELECT ?d WHERE { ?d ex:size 3 }"},
    ]) + "\n")
    (doc,) = _cli(capsys, "evaluate", str(ds), str(run), "--kg", str(kg), "-f", "json", "-m", "F1,AnswerEM")["runs"]
    by = {q["id"]: q for q in doc["questions"]}
    assert "engine_dependent" not in by["three"]["details"]
    top = by["top"]["details"]
    assert "tied" in top["engine_dependent"] and by["top"]["engine_dependent"] == top["engine_dependent"]
    assert top["score_range"]["AnswerEM"] == [0.0, 1.0] and top["score_range_kind"] == "exact"
    assert by["top"]["scores"]["AnswerEM"] in (0.0, 1.0)
    ed = doc["engine_dependence"]
    assert ed["questions"] == 1 and ed["confirmed"] == 1 and ed["with_range"] == 1 and ed["ids"] == ["top"]
    assert ed["aggregate_range"]["AnswerEM"] == [0.5, 1.0]
    csv_text = _cli_text(capsys, "evaluate", str(ds), str(run), "--kg", str(kg), "-f", "csv", "-m", "F1,AnswerEM")
    header, first = csv_text.splitlines()[:2]
    assert header.endswith(",engine_dependent,score_range") and first.startswith("run,top,") and "tied" in first
    assert first.endswith('"F1=[0.0,1.0] AnswerEM=[0.0,1.0] (exact)"')  # the range beside the score (issue 34)
    md = _cli_text(capsys, "evaluate", str(ds), str(run), "--kg", str(kg), "-f", "md", "-m", "F1,AnswerEM")
    assert "score range F1 [0.5000, 1.0000], AnswerEM [0.5000, 1.0000] (exact)" in md
    (ex,) = _cli(capsys, "evaluate", str(ds), str(run), "--kg", str(kg), "-f", "json", "-m", "F1,AnswerEM",
                 "--exclude-engine-dependent")["runs"]
    assert [q["id"] for q in ex["questions"]] == ["three"] and ex["aggregate"]["AnswerEM"] == 1.0
    assert "exclude:engine-dependent" in ex["signature"] and ex["signature"].endswith("n:1")
    assert any(s["id"] == "top" and s["reason"].startswith("engine-dependent:") for s in ex["skipped"])
    assert ex["unknown_ids"] == []


# ----------------------------------------------------------------- CK25 acceptance

#: questions where kgqa's executed set_F differs from the official one for a reason kgqa
#: cannot see in the query (README, "Engine dependence": known, explained differences)
KNOWN = {"INFAI": {"ck25:30-en", "ck25:31-en", "ck25:42-en", "ck25:48-en"}, "WSE": set(), "AIFB": set()}


@pytest.mark.slow  # three real runs executed on CK25; test_evaluate_marks_ranges_and_excludes runs in the README's command
def test_ck25_every_difference_is_flagged_with_the_official_value_in_range_or_known(shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    teams = list(KNOWN)
    runs = [str(shared_data / "ck25-runs" / t / "ck25_answers.json") for t in teams]
    kg = str(shared_data / "ck25" / "graphs" / "prod-inst.ttl")
    doc = _cli(capsys, "evaluate", "ck25", *runs, "--kg", kg, "-p", "text2sparql", "-f", "json")
    for team, result in zip(teams, doc["runs"]):
        official = json.loads((shared_data / "ck25-runs" / team / "ck25_eval.json").read_text())
        differing, explained = set(), set()
        for q in result["questions"]:
            want = official[q["id"]]["set_F"]
            if abs(q["scores"]["set_F"] - want) <= 1e-9:
                continue
            differing.add(q["id"])
            rng = q["details"].get("score_range", {}).get("set_F")
            if "engine_dependent" in q["details"] and rng and rng[0] - 1e-9 <= want <= rng[1] + 1e-9:
                explained.add(q["id"])
        assert differing - explained == KNOWN[team], (team, sorted(differing - explained))
    wse = doc["runs"][1]
    assert {"ck25:40-en", "ck25:50-en"} <= set(wse["engine_dependence"]["ids"])


def test_audit_has_an_engine_dependence_column(shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    kg = str(shared_data / "ck25" / "graphs" / "prod-inst.ttl")
    doc = _cli(capsys, "audit", "ck25", "--kg", kg, "--format", "json")
    by = {q["id"]: q for q in doc["queries"]}
    # gold 50: two departments tie under ORDER BY DESC(?count) LIMIT 1 (the README's "id 50")
    assert "tied" in by["ck25:50"]["engine_dependent"] and by["ck25:50"]["verdict"] == "mismatch"
    assert by["ck25:1"]["engine_dependent"] is None
    assert doc["engine_dependent"] == sum(1 for q in doc["queries"] if q["engine_dependent"])
    assert doc["verdicts"] == {"mismatch": 3, "ok": 47}


def test_exclude_needs_kg(capsys):
    from kgqa.cli import main

    with pytest.raises(SystemExit) as e:
        main(["evaluate", "demo", "demo", "--exclude-engine-dependent"])
    assert e.value.code == 2 and "needs --kg" in capsys.readouterr().err


def test_excluding_engine_dependent_questions_keeps_kg_answer_types(tmp_path):
    """The rescoring without engine-dependent questions keeps the KG lookups AIT2KB(source=kg) reads."""
    import kgqa
    from kgqa.demo import DATA

    kw = dict(measures="AIT2KB(source=kg)", kg=DATA / "kg.ttl", reexecute=True, cache=tmp_path / "c.sqlite")
    full = kgqa.evaluate(DATA / "questions.json", DATA / "runs" / "strong.json", **kw)
    excl = kgqa.evaluate(DATA / "questions.json", DATA / "runs" / "strong.json", exclude_engine_dependent=True, **kw)
    assert "exclude:engine-dependent" in str(excl.signature)
    label = next(iter(full.aggregate))
    assert excl.aggregate[label] == excl.aggregate[label]  # a number, not NaN
    assert not any("types" in reason for reasons in excl.measure_skips.values() for reason in reasons)
    scored = sum(1 for q in excl.questions if q.scores.get(label) is not None)
    assert scored == sum(1 for q in full.questions if q.scores.get(label) is not None) - excl.engine_dependence["excluded"]


def test_nondeterministic_calls_are_read_from_tokens_not_text():
    from kgqa.execute.engine_findings import detect

    assert [f.kind for f in detect("SELECT (RAND() AS ?r) WHERE {}")] == ["nondeterministic"]
    assert [f.kind for f in detect("SELECT * { BIND(BNODE(?x) AS ?b) }")] == ["nondeterministic"]
    # the name in a string or a comment is not a call
    assert detect('SELECT ?s WHERE { ?s ?p "now( rand(" } # UUID()') == []
