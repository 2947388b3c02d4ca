"""Issue 29: bare-string answers are scored without making RDF terms, with the same scores.

- ``TermMatching.text_keys(texts)`` equals ``keys(guess_terms(texts))`` for every matching the
  profiles use and the settings a user can give (hypothesis, on IRIs, percent escapes, numbers,
  dates, language-less literals, blanks);
- a :class:`TextColumn` is the :class:`TableAnswer` of those terms in every respect (equality,
  hash, rows, length, emptiness, pickling, repr);
- whole evaluations (every built-in profile, in memory and streamed) of random datasets and
  runs give bit-identical aggregates, per-question scores, counts, outcomes and records whether
  the answers are bare-string columns (the fast path) or tables of terms (the general path).
"""

from __future__ import annotations

import json
import math
import pickle
import random
import struct
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples

from kgqa.load import load_dataset, load_run
from kgqa.load.stream import open_stream
from kgqa.model import Dataset, Item, Run, TableAnswer, is_empty
from kgqa.model.answer import TextColumn, to_results_json
from kgqa.model.run import Prediction
from kgqa.model.terms import IriLinks, TermMatching, TextLabels, guess_terms
from kgqa.score import profiles
from kgqa.score.evaluate import evaluate

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_TEXT = st.one_of(
    st.sampled_from(["http://x/a", "http://x/a%20b", "http://x/%C3%A9", "https://x/b", "urn:x:1", "http://x/a b",
                     "8", "8.0", "+8", " 8 ", "1e3", "-0", "2020-01-05", "2020-01-05T00:00:00Z",
                     "2020-01-05T10:00:00+02:00", "true", "false", "Berlin", "berlin", "the Berlin", "", " ",
                     "_:b0", "http://dbpedia.org/resource/X", "https://en.dbpedia.org/page/X", "é", "\u2028"]),
    st.text(max_size=12),
    st.builds(lambda a, b: f"http://{a}/{b}", st.text("ab%2C", max_size=4), st.text("xy %", max_size=4)),
)

_MATCHINGS = [
    TermMatching(),
    TermMatching(mode="lexical"),
    TermMatching(case="insensitive", language="match"),
    TermMatching(iri="exact", numbers="lexical", dates="lexical", untyped_numbers=False),
    TermMatching(literal_vs_iri=True),
    TermMatching(links=IriLinks.from_pairs([("http://x/a", "http://x/b")])),
    TermMatching(mode="lexical", links=IriLinks.from_pairs([("http://x/a", "urn:x:1")])),
    TermMatching(labels=TextLabels.from_pairs([("http://x/berlin", "Berlin")])),
    *{p.matching for p in (profiles.get(n) for n in profiles.names())},
]


@examples(200)
def test_text_keys_are_the_keys_of_the_guessed_terms(examples):
    @settings(SETTINGS, max_examples=examples)
    @given(st.lists(_TEXT, max_size=8))
    def check(texts):
        for m in _MATCHINGS:
            assert m.text_keys(texts) == m.keys(guess_terms(texts)), m

    check()


@examples(200)
def test_a_text_column_is_the_table_of_its_terms(examples):
    @settings(SETTINGS, max_examples=examples)
    @given(st.lists(_TEXT, max_size=8), st.sampled_from(["answer", "x"]))
    def check(texts, variable):
        table = TableAnswer.single_column(guess_terms(texts), variable)
        col = TextColumn.of(list(texts), variable)
        assert len(col) == len(table) and is_empty(col) == is_empty(table)
        assert col == table and table == col and hash(col) == hash(table)
        assert col.rows == table.rows and col.variables == table.variables and col.column(variable) == table.column(variable)
        assert repr(col) == repr(table)
        assert to_results_json(TextColumn.of(list(texts), variable)) == to_results_json(table)  # written without terms
        again = pickle.loads(pickle.dumps(col))
        assert again == table and again.texts == list(texts)
        assert (TextColumn.of(list(texts) + ["http://x/other"], variable) == table) is False

    check()


def test_a_text_column_is_made_of_its_strings_only():
    with pytest.raises(TypeError, match="TextColumn.of"):
        TextColumn(("answer",), ())
    col = TextColumn.of(["http://x/a", "b"])
    assert col.texts == ["http://x/a", "b"] and not hasattr(col, "nothing")


# --------------------------------------------------------------------------- whole evaluations


def _bits(v):
    return struct.pack("<d", v).hex() if isinstance(v, float) and not math.isnan(v) else repr(v)


def _scored(e):
    return ({k: _bits(v) for k, v in e.aggregate.items()},
            [(q.id, q.outcome, q.message, {k: _bits(v) for k, v in q.scores.items()}, tuple(q.counts or ()),
              q.record.predicted_answer, q.details) for q in e.questions],
            e.outcomes, e.skipped, e.measure_skips, e.missing_ids, e.unknown_ids, str(e.signature), e.problems)


_POOL = ["http://x/e{}", "http://x/e{}%20", "urn:x:{}", "{}", "{}.0", "label {}", "2020-01-{:02d}", "Label {}"]


def _texts(rnd: random.Random, n: int) -> list[str]:
    return [rnd.choice(_POOL).format(rnd.randrange(1, 28)) for _ in range(n)]


def _write(tmp_path, n: int, seed: int):
    """A random JSONL dataset and run of the common flat records (bare-string answers), with
    empty and null answers, duplicates, flagged questions, missing, unknown and failed entries."""
    rnd = random.Random(seed)
    ds, run = tmp_path / f"ds{seed}.jsonl", tmp_path / f"run{seed}.jsonl"
    with ds.open("w") as fd, run.open("w") as fr:
        for i in range(n):
            rec = {"id": str(i), "question": f"q{i}", "answers": _texts(rnd, rnd.randint(0, 5))}
            if i % 23 == 0:
                rec["answers"] = rnd.choice([None, []])
            if i % 29 == 0:
                rec["features"] = ["RESULT_ORDER_MATTERS"]  # a general record: the item path
            fd.write(json.dumps(rec) + "\n")
            if i % 31 == 0:
                fd.write(json.dumps({"id": str(i), "question": "again", "answers": ["x"]}) + "\n")  # duplicate
            if i % 9 == 4:
                continue  # missing from the run
            gold = rec["answers"] or []
            pred = {"id": str(i), "answer": [g for g in gold if rnd.random() < 0.6] + _texts(rnd, rnd.randint(0, 2))}
            if i % 17 == 0:
                pred = {"id": str(i), "error": "boom"}
            elif i % 19 == 0:
                pred["answer"] = rnd.choice([None, [], True])
            fr.write(json.dumps(pred) + "\n")
        fr.write(json.dumps({"id": "unknown", "answer": ["http://x/e1"]}) + "\n")
    return ds, run


def _terms(answer):
    """A bare-string column as the table of its terms (the general path); anything else as it is."""
    return TableAnswer.single_column(guess_terms(answer.texts), answer.variables[0]) \
        if answer.__class__ is TextColumn else answer


def _general(d: Dataset, r: Run) -> tuple[Dataset, Run]:
    items = [replace(it, answer=_terms(it.answer)) for it in d.items]
    preds = [Prediction(p.id, p.sparql, _terms(p.answer), p.ranked, p.elapsed, p.status, p.message, p.metadata, p.bag)
             for p in r.predictions]
    assert not any(type(x.answer) is TextColumn for x in (*items, *preds))
    return Dataset(d.name, items, d.format, d.source, d.problems), Run(r.name, preds, r.format, r.source, r.problems)


@pytest.mark.parametrize("profile", profiles.names())
def test_every_profile_scores_text_columns_as_tables_of_terms(tmp_path, profile):
    ds, run = _write(tmp_path, 1000, seed=len(profile))
    d, r = load_dataset(ds, format="jsonl"), load_run(run, format="jsonl")
    assert sum(type(it.answer) is TextColumn for it in d.items) > 800
    assert sum(type(p.answer) is TextColumn for p in r.predictions) > 700
    p = profiles.get(profile)
    fast = _scored(evaluate(d, r, p))
    assert fast == _scored(evaluate(*_general(d, r), p))
    if p.matching.mode == "lexical":  # the streamed dataset: the same scores (records hold the run's side)
        streamed = evaluate(open_stream(ds), load_run(run, format="jsonl"), p)
        assert _scored(streamed)[:1] == fast[:1]
        assert [(q.id, q.scores, q.counts, q.record.predicted_answer) for q in streamed.questions] == \
               [(q.id, q.scores, q.counts, q.record.predicted_answer) for q in evaluate(d, r, p).questions]


@pytest.mark.parametrize("n", [2_000, pytest.param(10_000, marks=pytest.mark.slow)])
def test_ten_thousand_questions_text2sparql(tmp_path, n):
    """2,000 questions in the README's test command, 10,000 in CI's slow run."""
    ds, run = _write(tmp_path, n, seed=7)
    d, r = load_dataset(ds, format="jsonl"), load_run(run, format="jsonl")
    p = profiles.get("text2sparql")
    e = evaluate(d, r, p)
    assert _scored(e) == _scored(evaluate(*_general(d, r), p))
    no_gold = sum(s["reason"].startswith("no gold answer") for s in e.skipped)
    assert 0.0 < e.aggregate["set_F"] < 1.0 and no_gold > n // 100 and len(e.questions) + no_gold == n


def test_a_flat_record_keeps_its_strings_until_a_term_is_read(tmp_path):
    ds, run = _write(tmp_path, 50, seed=1)
    r = load_run(run, format="jsonl")
    pred = next(p for p in r.predictions if type(p.answer) is TextColumn and p.answer.texts)
    with pytest.raises(AttributeError):
        TableAnswer.rows.__get__(pred.answer)  # no rows made yet
    evaluate(load_dataset(ds, format="jsonl"), r, profiles.get("text2sparql"))
    with pytest.raises(AttributeError):
        TableAnswer.rows.__get__(pred.answer)  # scoring by lexical form made none
    assert pred.answer.rows == TableAnswer.single_column(guess_terms(pred.answer.texts), "answer").rows
    assert isinstance(Item("1", answer=pred.answer).answer, TableAnswer)
