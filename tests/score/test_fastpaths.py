"""Issue 17 fast paths give exactly what the general paths give.

- the block line reader (``iter_text_lines``) against the line-at-a-time reader it replaced;
- ``jsonio.plain_object`` against ``jsonio.loads``;
- the JSONL dataset/run fast paths (``_fast_item``, ``_fast_prediction``) against
  ``item_from_record`` / ``prediction_from_record``, record by record and file by file (items,
  predictions and problems), on generated records including odd ones;
- vector measures (``MeasureDef.vector`` / ``gate``) against their per-question ``item`` /
  ``fold``, and whole evaluations with and without vector forms, on generated and real data.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples, pairs
from kgqa.load import generic, jsonio, load_dataset, load_run
from kgqa.model import InputError, Outcome, Status, TableAnswer
from kgqa.model.terms import IRI, Literal, guess_term, guess_terms, iri, simple_literal
from kgqa.score import profiles
from kgqa.score.evaluate import evaluate
from kgqa.score.measures import Columns, ItemContext, Measure, REGISTRY
from kgqa.score.profiles import MeasureSpec
from kgqa.score.rules import Counts

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.function_scoped_fixture])


# --------------------------------------------------------------------------- line reader


def _reference_lines(path: Path):
    """The line-at-a-time reader the block reader replaced (kgqa before issue 17's second round)."""
    with open(path, "rb") as fh:
        offset = 0
        for n, raw in enumerate(fh):
            start = 3 if n == 0 and raw.startswith(jsonio.BOM) else 0
            try:
                line = raw[start:].decode("utf-8")
            except UnicodeDecodeError as e:
                at = start + e.start
                raise jsonio.not_utf8(path, raw[at], offset + at, n + 1, at + 1) from None
            offset += len(raw)
            if line.endswith("\n"):
                line = line[:-1]
            yield line[:-1] if line.endswith("\r") else line


def _read_all(reader, path):
    out = []
    try:
        for line in reader(path):
            out.append(line)
    except InputError as e:
        out.append(("error", str(e)))
    return out


_PIECES = st.sampled_from([b"\n", b"\r\n", b"\r", b"a", b"{}", b" ", "é".encode(), "\u2028".encode(), b"\xe9",
                           b"\xe2\x82", b"\xff", b"\x85", jsonio.BOM, "😀".encode(), b'{"id": "1"}'])


@examples(150)
def test_block_line_reader_equals_the_line_reader(tmp_path, monkeypatch, examples):
    @settings(SETTINGS, max_examples=examples)
    @given(st.lists(_PIECES, max_size=40), st.sampled_from([1, 2, 3, 7, 1 << 20]))
    def check(pieces, block):
        path = tmp_path / "f.jsonl"
        path.write_bytes(b"".join(pieces))
        monkeypatch.setattr(generic, "_BLOCK", block)
        assert _read_all(generic.iter_text_lines, path) == _read_all(_reference_lines, path)

    check()


# --------------------------------------------------------------------------- JSON records

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))
_JSON = st.recursive(_SCALARS, lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                      st.dictionaries(st.text(max_size=4), kids, max_size=3)),
                     max_leaves=8)


@examples(150)
def test_plain_object_equals_loads(examples):
    @settings(SETTINGS, max_examples=examples)
    @given(_JSON)
    def check(doc):
        text = json.dumps(doc)
        plain = jsonio.plain_object(text)
        if plain is not None:
            full = jsonio.loads(text)
            assert plain == full and list(plain) == list(full)
            assert repr(plain) == repr(full)  # integers stay integers

    check()


@examples(150)
def test_fast_loads_equals_json_loads(examples):
    """orjson where it reads the same value; integers of 19+ digits (exact only in json) found by
    the long-digits search, wherever they stand."""
    @settings(SETTINGS, max_examples=examples)
    @given(_JSON, st.sampled_from(["", " ", "\n"]))
    def check(doc, pad):
        text = pad + json.dumps(doc, ensure_ascii=False) + pad
        fast, full = jsonio.fast_loads(text), json.loads(text)
        assert repr(fast) == repr(full) or (fast != fast and full != full)  # NaN != NaN
        for big in (2**64, -(2**63) - 1, 10**40):
            assert repr(jsonio.fast_loads(json.dumps([big, doc]))) == repr(json.loads(json.dumps([big, doc])))

    check()


_BIG = st.one_of(st.integers(min_value=2**63 - 4, max_value=2**64 + 4),
                 st.integers(min_value=-(2**63) - 4, max_value=-(2**63) + 4), st.integers(min_value=10**30))


@examples(150)
def test_dumps_writes_integers_beyond_64_bits_as_json_does(examples):
    """jsonio.dumps writes integers orjson refuses (beyond 64 bits, values and keys) through
    orjson fragments: digit for digit json's text, indented the same."""
    @settings(SETTINGS, max_examples=examples)
    @given(st.recursive(st.one_of(_BIG, st.integers(), st.text(max_size=4), st.booleans(), st.none()),
                        lambda kids: st.one_of(st.lists(kids, max_size=3),
                                               st.dictionaries(st.one_of(st.text(max_size=4), _BIG), kids, max_size=3)),
                        max_leaves=8), st.booleans())
    def check(doc, indent):
        expected = json.dumps(doc, indent=2 if indent else None, ensure_ascii=False,
                              separators=None if indent else (",", ":"))
        assert jsonio.dumps(doc, indent=indent) == expected

    check()


def test_plain_object_refuses_what_orjson_reads_differently():
    for text in ('{"a": 18446744073709551616}', '{"a": 1.5}', '{"a": NaN}', '{"a": {"b": 1}}', '[1]',
                 '{"a": "\\ud800"}', '{"a": [[1]]}', "", "  ", "{"):
        assert jsonio.plain_object(text) is None, text
    assert jsonio.plain_object('{"a": [1, "x", null, true], "b": -9223372036854775808}') == {
        "a": [1, "x", None, True], "b": -9223372036854775808}


_TERM_TEXT = st.one_of(st.sampled_from(["http://x/a", "https://x/b c", "urn:a:b", "http://x/%41", "", " ", "42",
                                         "2020-01-01", "true", "http://x/a"]),
                       st.text(max_size=6).map(lambda t: "http://e/" + t), st.text(max_size=6))
_ID = st.one_of(st.sampled_from(["1", "2", " 3 ", "", "  ", "1"]), st.integers(-3, 3), st.booleans(), st.none(),
                st.text(max_size=3))
_QUESTION = st.one_of(st.sampled_from(["q?", "", "  ", "Wer?"]), st.none(), st.integers(0, 2),
                      st.dictionaries(st.sampled_from(["en", "de"]), st.text(max_size=3), max_size=2))
_ANSWERS = st.one_of(st.none(), st.lists(_TERM_TEXT, max_size=5), st.booleans(),
                     st.lists(st.one_of(_TERM_TEXT, st.integers(), st.floats(allow_nan=False),
                                        st.just({"type": "uri", "value": "http://x/u"})), max_size=3),
                     st.just({"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "v",
                                                                                        "xml:lang": "en"}}]}}),
                     st.just({"head": {}, "boolean": True}), st.just([{"type": "bnode", "value": "b0"}]),
                     st.just("http://x/not-a-list"))
_SPARQL = st.one_of(st.none(), st.just("SELECT * WHERE { ?s ?p ?o }"), st.integers(0, 1))


def _record(kind: str):
    answer_key = "answers" if kind == "dataset" else "answer"
    base = st.fixed_dictionaries({"id": _ID, answer_key: _ANSWERS},
                                 optional={"question": _QUESTION, "sparql": _SPARQL, "query": _SPARQL,
                                           "answers" if kind == "run" else "answer": _ANSWERS,
                                           "answer_type": st.sampled_from(["resource", 3]),
                                           "elapsed": st.sampled_from([0.5, -1, "x"]),
                                           "error": st.sampled_from(["boom", 1]),
                                           "metadata": st.sampled_from([{"a": 1}, 3]),
                                           "extra": _JSON, "question_de": st.sampled_from(["Wer?", " "]),
                                           "lang_ids": st.sampled_from([{"en": "x-en"}, {"en": 1}])})
    if kind == "dataset":
        base = st.one_of(base, st.fixed_dictionaries({"id": _ID, "question": _QUESTION, "answers": _ANSWERS}))
    return base


def _line(kind: str):
    return st.one_of(
        _record(kind).map(lambda d: json.dumps(d)),
        _record(kind).map(lambda d: json.dumps(d, ensure_ascii=False, indent=None, separators=(",", ":"))),
        st.sampled_from(["", "   ", "not json", "[1, 2]", "42", '{"id": "1", "question": "q", "answers": [1e999]}',
                         '{"id": 12345678901234567890123, "question": "q"}', '{"id": "d", "question": "q", "answers": ["a", "a"]}',
                         '{"id":"1","question":"q","answers":["http://x/1"]}', '{"id": "1", "answer": ["http://x/1"]}',
                         "\u00a0{\"id\": \"1\", \"question\": \"q\"}", '{"id": "1", "question": "q"} x']),
        _JSON.map(json.dumps),
    )


def _general_only(monkeypatch):
    monkeypatch.setattr(generic, "_fast_items", lambda lines, lang: [None] * len(lines))
    monkeypatch.setattr(generic, "_fast_predictions", lambda lines: [None] * len(lines))
    monkeypatch.setattr(jsonio, "plain_object", lambda text: None)


@examples(150)
@pytest.mark.parametrize("kind", ["dataset", "run"])
def test_fast_jsonl_equals_the_general_path(tmp_path, monkeypatch, kind, examples):
    loader = {"dataset": generic.load_jsonl_dataset, "run": generic.load_jsonl_run}[kind]

    @settings(SETTINGS, max_examples=examples)
    @given(st.lists(_line(kind), max_size=12))
    def check(lines):
        path = tmp_path / f"{kind}.jsonl"
        path.write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
        if kind == "dataset":
            monkeypatch.setattr(generic, "_BLOCK", 64)  # several blocks of lines
        fast = _load(lambda: loader([path]))
        with monkeypatch.context() as m:
            _general_only(m)
            slow = _load(lambda: loader([path]))
        assert fast == slow

    check()


def _load(fn):
    try:
        obj = fn()
    except InputError as e:
        return ("error", str(e))
    rows = obj.items if hasattr(obj, "items") else obj.predictions
    return rows, [str(p) for p in obj.problems]


@examples(150)
def test_fast_item_is_item_from_record(examples):
    @settings(SETTINGS, max_examples=examples)
    @given(_record("dataset"))
    def check(rec):
        line = json.dumps(rec)
        item = generic._fast_item(line, "de")
        if item is not None:
            assert item == generic.item_from_record(jsonio.loads(line), "de")

    check()


@examples(150)
def test_fast_prediction_is_prediction_from_record(examples):
    @settings(SETTINGS, max_examples=examples)
    @given(_record("run"))
    def check(rec):
        line = json.dumps(rec)
        pred = generic._fast_prediction(line)
        if pred is not None:
            problems: list = []
            assert pred == generic.prediction_from_record(jsonio.loads(line), "f", "line 1", problems)
            assert problems == []

    check()


def test_the_fast_paths_take_the_common_records():
    item = generic._fast_item('{"id": " 7 ", "question": "q?", "answers": ["http://x/a", "b c"]}', "en")
    assert item is not None and item.id == "7" and item.questions == {"en": "q?"}
    assert item.answer == TableAnswer(("answer",), ((IRI("http://x/a"),), (Literal("b c"),)))
    assert generic._fast_prediction('{"id": "7", "answer": ["http://x/a"], "query": "ASK {}"}').sparql == "ASK {}"
    for line in ('{"id": "7", "question": "q", "answers": [1]}', '{"id": "7", "question": " "}',
                 '{"id": 7, "question": "q"}', '{"id": "7", "question": "q", "x": 1}'):
        assert generic._fast_item(line, "en") is None, line


@examples(150)
def test_guess_terms_is_guess_term_of_each(examples):
    @settings(SETTINGS, max_examples=examples)
    @given(st.lists(_TERM_TEXT, max_size=6))
    def check(texts):
        made = guess_terms(texts)
        assert made == [guess_term(t) for t in texts]
        assert [type(t) for t in made] == [type(guess_term(t)) for t in texts]

    check()


def test_fast_term_constructors_make_equal_terms():
    assert iri("http://x/a") == IRI("http://x/a") and hash(iri("a")) == hash(IRI("a"))
    assert simple_literal("v") == Literal("v") and repr(simple_literal("v")) == repr(Literal("v"))
    assert Counts.from_sets(frozenset({1, 2, 3}), frozenset({3, 4})) == Counts(1, 1, 2, 2, 3, 1, 1)


@pytest.mark.parametrize("case", ["qald9", "ck25-wse", "ck25-wse-answers"])
def test_fast_loaders_equal_the_general_path_on_real_data(shared_data, tmp_path, monkeypatch, case):
    """Real datasets and runs written as JSONL, as written by kgqa (answers as results objects)
    and as the common flat records (answers as lists of strings), load the same either way."""
    ds_spec, run_spec, run_format = REAL[case](shared_data)
    d = load_dataset(str(ds_spec) if isinstance(ds_spec, Path) else ds_spec)
    r = load_run(run_spec, format=run_format, dataset=d)
    flat_items = [{"id": it.id, "question": it.question("en") or "?",
                   "answers": [c.value if not hasattr(c, "id") else c.id for row in it.answer.rows for c in row if c]}
                  for it in d.items if isinstance(it.answer, TableAnswer)]
    flat_preds = [{"id": p.id, "answer": [c.value if not hasattr(c, "id") else c.id for row in p.answer.rows
                                          for c in row if c]}
                  for p in r.predictions if isinstance(p.answer, TableAnswer)]
    files = {"ds.jsonl": [generic.item_to_json(it) for it in d.items], "run.jsonl": [
        generic.prediction_to_json(p) for p in r.predictions], "flat-ds.jsonl": flat_items, "flat-run.jsonl": flat_preds}
    for name, docs in files.items():
        (tmp_path / name).write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in docs), encoding="utf-8")
    assert flat_items
    loaders = {"ds.jsonl": generic.load_jsonl_dataset, "flat-ds.jsonl": generic.load_jsonl_dataset,
               "run.jsonl": generic.load_jsonl_run, "flat-run.jsonl": generic.load_jsonl_run}
    for name, loader in loaders.items():
        fast = _load(lambda: loader([tmp_path / name]))
        with monkeypatch.context() as m:
            _general_only(m)
            slow = _load(lambda: loader([tmp_path / name]))
        assert fast == slow, name
        assert fast[0] or name == "flat-run.jsonl", name


# --------------------------------------------------------------------------- vector measures


def _vector_measures():
    out = []
    for name in REGISTRY.names():
        d = REGISTRY[name]
        if d.vector is None:
            continue
        choices = [p.choices or (p.default,) for p in d.params]
        combos = [()]
        for p, cs in zip(d.params, choices):
            combos = [c + ((p.name, v),) for c in combos for v in cs]
        out += [m for m in (Measure(d, combo) for combo in combos) if m.vector is not None]
    return out


VECTOR_MEASURES = _vector_measures()

_SET = st.frozensets(st.sampled_from("abcdef"), max_size=5)


@st.composite
def _question_columns(draw):
    gold, system = draw(_SET), draw(_SET)
    failed = draw(st.booleans())
    status = draw(st.sampled_from(list(Status)))
    empty = draw(st.booleans())
    answer = TableAnswer.single_column([] if empty else [IRI("http://x/a")], "x")
    outcome = Outcome(status, answer if status is Status.OK else None)
    return gold, system, failed, outcome


def _first_of_each_family(measures):
    seen: set[str] = set()
    for m in measures:
        quick = m.defn.name not in seen
        seen.add(m.defn.name)
        yield m if quick else pytest.param(m, marks=pytest.mark.slow)


# the first variant of each measure in the README's test command on 50 examples; in CI's slow
# part, every variant (rules, aggregations, rankings) on 150 (test_vector_equals_item_and_fold_thoroughly)
@pytest.mark.parametrize("measure", [m for m in _first_of_each_family(VECTOR_MEASURES) if not isinstance(m, tuple)],
                         ids=lambda m: m.full)
@settings(SETTINGS, max_examples=50)
@given(st.lists(_question_columns(), max_size=8))
def test_vector_equals_item_and_fold(monkeypatch, measure, questions):
    _check_vector_equals_item_and_fold(monkeypatch, measure, questions)


@pytest.mark.slow
@pytest.mark.parametrize("measure", VECTOR_MEASURES, ids=lambda m: m.full)
@SETTINGS
@given(st.lists(_question_columns(), max_size=8))
def test_vector_equals_item_and_fold_thoroughly(monkeypatch, measure, questions):
    _check_vector_equals_item_and_fold(monkeypatch, measure, questions)


def _check_vector_equals_item_and_fold(monkeypatch, measure, questions):
    from kgqa.model import Item
    from kgqa.score import answer_measures

    monkeypatch.setattr(answer_measures, "_CHUNK", 3)  # columns computed a few questions at a time
    kw = measure.kwargs
    ctxs = [ItemContext(str(i), Item(str(i), {"en": "q"}), o, g, s, Counts.from_sets(g, s), f)
            for i, (g, s, f, o) in enumerate(questions)]
    q = Columns([c.counts for c in ctxs], [c.failed for c in ctxs], [c.outcome.label for c in ctxs],
                [c.gold_items == c.sys_items for c in ctxs])
    values, folds = measure.vector(q, **kw)
    gate = measure.defn.gate
    for i, ctx in enumerate(ctxs):
        if gate is not None and gate(ctx.item):
            continue  # scored one by one
        assert _bits(values[i]) == _bits(measure.defn.item(ctx, **kw) if measure.defn.item else None)
        fold = measure.folder
        if fold is not None:
            assert _bits(folds[i]) == _bits(fold(ctx, **kw))


def _bits(v):
    if isinstance(v, float):
        return "nan" if math.isnan(v) else repr(v)
    if isinstance(v, tuple):
        return tuple(_bits(x) for x in v)
    return v


def _without_vectors(profile):
    specs = [MeasureSpec(s.label, Measure(dataclasses.replace(s.measure.defn, vector=None, gate=None, vectorized=None),
                                          s.measure.params), s.over) for s in profile.measures]
    return profile.with_measures(specs)


def _scored(e):
    return ({k: _bits(v) for k, v in e.aggregate.items()},
            [(q.id, q.outcome, q.message, {k: _bits(v) for k, v in q.scores.items()}, q.counts) for q in e.questions],
            e.outcomes, e.skipped, e.measure_skips, e.missing_ids, e.unknown_ids, str(e.signature))


@pytest.mark.parametrize("profile", profiles.names())
def test_vector_measures_change_no_score_on_generated_data(tmp_path, profile):
    import random

    rnd = random.Random(profile)
    ds, run = tmp_path / "ds.jsonl", tmp_path / "run.jsonl"
    with ds.open("w") as fd, run.open("w") as fr:
        for i in range(300):
            gold = [f"http://x/e{rnd.randrange(40)}" for _ in range(rnd.randint(0, 4))]
            rec = {"id": str(i), "question": f"q{i}", "answers": gold, "sparql": "SELECT ?x WHERE { ?x ?p ?o }"}
            if i % 11 == 0:
                rec["features"] = ["RESULT_ORDER_MATTERS"]
            if i % 13 == 0:
                rec["answers"] = rnd.choice([True, False, None, []])
            fd.write(json.dumps(rec) + "\n")
            if i % 9 == 4:
                continue  # missing
            sys_answer = [g for g in gold if rnd.random() < 0.6] + [f"http://x/w{rnd.randrange(9)}"] * rnd.randint(0, 2)
            pred = {"id": str(i), "answer": sys_answer}
            if i % 17 == 0:
                pred = {"id": str(i), "error": "boom"}
            if i % 19 == 0:
                pred["answer"] = rnd.choice([True, False, None])
            fr.write(json.dumps(pred) + "\n")
    d, r = load_dataset(ds, format="jsonl"), load_run(run, format="jsonl")
    p = profiles.get(profile)
    assert _scored(evaluate(d, r, p)) == _scored(evaluate(d, r, _without_vectors(p)))


REAL = {
    "qald9": lambda s: (s / "qald-9" / "qald-9-test-multilingual.json", s / "qald-9" / "qald-9-test-multilingual.json",
                        "qald-json"),
    "ck25-wse": lambda s: ("ck25", s / "ck25-runs" / "WSE" / "ck25_system_result_set.json", None),
    "ck25-wse-answers": lambda s: ("ck25", s / "ck25-runs" / "WSE" / "ck25_answers.json", None),
}


@pairs(("profile", "case"), profiles.names(), sorted(REAL))
def test_vector_measures_change_no_score_on_real_data(shared_data, case, profile):
    from kgqa.api import select_language

    ds_spec, run_spec, run_format = REAL[case](shared_data)
    d = select_language(load_dataset(str(ds_spec) if isinstance(ds_spec, Path) else ds_spec))
    r = load_run(run_spec, format=run_format, dataset=d)
    p = profiles.get(profile)
    assert _scored(evaluate(d, r, p)) == _scored(evaluate(d, r, _without_vectors(p)))
