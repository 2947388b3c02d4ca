"""Terminal tables fit 80, 120 and 200 columns without breaking or dropping a number."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from conftest import examples

from kgqa.demo import DATA
from kgqa.report import evaluation as report
from kgqa.report.fit import Grid, fit, print_grid
from kgqa.report.numbers import score as fmt_number


def _evaluations(profile: str):
    from kgqa.api import evaluate_many as run_evaluations

    runs = sorted(str(p) for p in (DATA / "runs").glob("*.json"))
    return run_evaluations(str(DATA / "questions.json"), runs, profile=profile)


def _render(evals, width: int) -> str:
    buf = io.StringIO()
    con = Console(file=buf, width=width, color_system=None, force_terminal=False)
    report.terminal(con, evals)
    return buf.getvalue()


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"[-\w./@<+]+", text))


@pytest.mark.parametrize("profile", ["gerbil", "kgqa", "ictir2022"])
@pytest.mark.parametrize("width", [80, 120, 200])
def test_every_aggregate_number_appears_intact(profile, width):
    evals = _evaluations(profile)
    text = _render(evals, width)
    tokens = _tokens(text)
    for e in evals:
        assert e.run in tokens
        for label, v in e.to_json()["aggregate"].items():
            assert fmt_number(v) in tokens, (profile, width, e.run, label, fmt_number(v))
    assert all(len(line) <= width for line in text.splitlines() if not line.startswith("signature"))


def test_signature_is_printed_on_one_line():
    evals = _evaluations("gerbil")
    text = _render(evals, 80)
    sig = evals[0].signature
    assert f"signature: {sig}" in text


def test_wide_table_is_transposed_when_that_fits():
    g = Grid("t", ["run", "n"], [f"measure {i}" for i in range(30)],
             [["a", "3", *(fmt_number(i / 7) for i in range(30))], ["b", "3", *(fmt_number(i / 9) for i in range(30))]],
             numeric={"n", *(f"measure {i}" for i in range(30))})
    tables = fit(g, 80)
    assert len(tables) == 1
    assert [c.header for c in tables[0].columns] == ["measure", "a", "b"]


def test_blocks_repeat_the_key_columns():
    runs = [f"run-{i}" for i in range(12)]
    g = Grid("t", ["run", "n"], ["F1", "P", "R", "AnswerEM", "Coverage", "Hits@5"],
             [[r, "100", *(fmt_number(0.123456 * (k + 1)) for k in range(6))] for r in runs],
             numeric={"n", "F1", "P", "R", "AnswerEM", "Coverage", "Hits@5"})
    tables = fit(g, 40, transpose=False)
    assert len(tables) > 1
    for t in tables:
        assert [c.header for c in t.columns][:2] == ["run", "n"]


@examples(60)
def test_fit_never_breaks_a_number(examples):
    @settings(max_examples=examples, deadline=None)
    @given(
        n_rows=st.integers(1, 6),
        n_cols=st.integers(1, 40),
        width=st.integers(30, 220),
        values=st.lists(st.one_of(st.floats(min_value=-1e6, max_value=1e6), st.just(float("nan")), st.none()), min_size=1, max_size=20),
    )
    def check(n_rows, n_cols, width, values):
        _check_fit_never_breaks_a_number(n_rows, n_cols, width, values)

    check()


def _check_fit_never_breaks_a_number(n_rows, n_cols, width, values):
    cols = [f"m{j}" for j in range(n_cols)]
    cells = [[f"r{i}", *(fmt_number(values[(i * n_cols + j) % len(values)]) for j in range(n_cols))] for i in range(n_rows)]
    g = Grid(None, ["run"], cols, cells, numeric=set(cols))
    buf = io.StringIO()
    print_grid(Console(file=buf, width=width, color_system=None), g)
    tokens = _tokens(buf.getvalue())
    for row in cells:
        for c in row:
            assert c in tokens


def test_runs_can_be_named_and_typos_get_suggestions():
    from kgqa.api import evaluate_many as run_evaluations
    from kgqa.model import InputError

    strong = str(DATA / "runs" / "strong.json")
    evals = run_evaluations(str(DATA / "questions.json"), [f"best={strong}", strong], profile="kgqa")
    assert [e.run for e in evals] == ["best", "strong"]
    assert evals[0].aggregate == evals[1].aggregate
    with pytest.raises(InputError, match="did you mean 'ck25'"):
        run_evaluations("ck52", [strong])
    with pytest.raises(InputError, match="did you mean 'gerbil'"):
        run_evaluations(str(DATA / "questions.json"), [strong], profile="gerbill")
    with pytest.raises(InputError, match="did you mean 'BLEU'"):
        run_evaluations(str(DATA / "questions.json"), [strong], measures="BLUE")


def test_profile_labels_are_accepted_as_measure_names():
    from kgqa.api import evaluate_many as run_evaluations

    strong = str(DATA / "runs" / "strong.json")
    full = run_evaluations(str(DATA / "questions.json"), [strong], profile="text2sparql")[0]
    one = run_evaluations(str(DATA / "questions.json"), [strong], profile="text2sparql", measures="set_F")[0]
    assert list(one.aggregate) == ["set_F"]
    assert one.aggregate["set_F"] == full.aggregate["set_F"]


@pytest.mark.parametrize("width", [80, 120])
def test_measure_and_profile_listings_fit_without_truncation(width):
    from kgqa.report.listings import print_measures, print_profiles
    from kgqa.score import measures as registry
    from kgqa.score import profiles

    buf = io.StringIO()
    con = Console(file=buf, width=width, color_system=None)
    print_measures(con)
    print_profiles(con)
    text = buf.getvalue()
    assert all(len(line) <= width for line in text.splitlines())
    tokens = _tokens(text)
    for d in registry.all_measures():
        assert d.name in tokens
        for p in d.params:
            for c in p.choices or ():
                assert str(c) in text.replace("\n", "").replace("│", "").replace(" ", "") or str(c) in tokens
    for name in profiles.names():
        assert name in tokens
    assert "…" not in text  # nothing truncated


def test_one_measure_in_full_and_suggestions():
    from kgqa.report.listings import print_measures

    buf = io.StringIO()
    print_measures(Console(file=buf, width=100, color_system=None), ["gek2"])
    assert buf.getvalue().startswith("GEK2") and "gamma" in buf.getvalue()
    with pytest.raises(ValueError, match="did you mean 'BLEU'"):
        print_measures(Console(file=io.StringIO()), ["BLUE"])


@pytest.mark.parametrize("width", [80, 120, 200])
def test_comparison_shows_every_number_intact(width):
    from kgqa.analyze.comparison import compare_evaluations
    from kgqa.report.analysis import print_comparison
    from kgqa.report.numbers import ci as fci, pvalue as fp, score as fnum

    evals = _evaluations("kgqa")
    cmp = compare_evaluations(evals, seed=0, resamples=300, trials=300)
    buf = io.StringIO()
    print_comparison(Console(file=buf, width=width, color_system=None), cmp)
    text = buf.getvalue()
    tokens = _tokens(text)
    flat = text.replace("\n", " ")
    # the signature is one unwrapped line on purpose (the terminal folds it; a copy gives it whole)
    assert all(len(line) <= width for line in text.splitlines() if not line.lower().startswith("signature"))
    for m in cmp.measures:
        for s in cmp.systems:
            c = m.ci[s]
            assert fnum(c.mean) in tokens
            assert fci(c.low, c.high) in flat
        for pair in m.comparisons:
            for p in pair.p.values():
                assert fp(p) in tokens
            assert f"{pair.wtl.wins}/{pair.wtl.ties}/{pair.wtl.losses}" in tokens


def test_the_command_line_comparison_prints_its_signature_whole_at_any_width():
    from kgqa.analyze.comparison import compare_evaluations
    from kgqa.report.console import print_rendered
    from kgqa.report.render import comparison_renderable

    cmp = compare_evaluations(_evaluations("kgqa"), seed=0, resamples=50, trials=50)
    assert cmp.signatures
    for width in (40, 80):
        buf = io.StringIO()
        print_rendered(Console(file=buf, width=width, color_system=None), comparison_renderable(cmp))
        for sig in cmp.signatures:  # one line, never cut (the terminal folds it; a copy gives it whole)
            assert f"signature: {sig}\n" in buf.getvalue(), width
