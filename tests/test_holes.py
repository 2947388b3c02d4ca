"""Issue 34, scope 4 ("the holes closed"): GROUP_CONCAT orders counted, never enumerated past
the bound; an empty separator and numeric overflow handled as values."""

from __future__ import annotations

import itertools
from decimal import Decimal

import pytest
from hypothesis import given, settings, strategies as st

from conftest import examples

from kgqa.execute import engine_findings
from kgqa.execute.embedded import EmbeddedEngine
from kgqa.execute.engine_findings import DEFAULT_BOUND, assess_many, distinct_orders
from kgqa.execute.executor import Executor
from kgqa.model import Dataset, Item, Prediction, Run, Status, TableAnswer
from kgqa.model.terms import DEFAULT_MATCHING, XSD_DECIMAL, XSD_DOUBLE, Literal, from_sparql_json
from kgqa.api import evaluate

TINY_KG = '<http://x/a> <http://x/p> "a" .\n'


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    kg = tmp_path_factory.mktemp("kg") / "tiny.nt"
    kg.write_text(TINY_KG, encoding="utf-8")
    engine = EmbeddedEngine.from_files([kg], workers=1)
    yield Executor(engine)
    engine.close()


def _assess(runner, q: str):
    outs = runner.run({"q": q})
    return assess_many({"q": q}, outs, runner).get("q"), outs["q"]


def concat(n: int, sep: str | None = None) -> str:
    vals = " ".join(f'"{chr(97 + i)}"' for i in range(n))
    s = "" if sep is None else f'; SEPARATOR="{sep}"'
    return f"SELECT (GROUP_CONCAT(?o{s}) AS ?g) WHERE {{ VALUES ?o {{ {vals} }} }}"


# --------------------------------------------------------------------------- n! in the engine check


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from("abcd"), max_size=7), st.integers(1, 6000))
def test_distinct_orders_is_the_number_of_distinct_permutations_capped(elements, cap):
    true = len(set(itertools.permutations(elements)))
    assert distinct_orders(elements, cap) == (true if true <= cap else cap + 1)
    listed = list(engine_findings._distinct_permutations(elements))
    assert len(listed) == len(set(listed)) == true


def test_distinct_orders_of_a_huge_group_is_immediate():
    # 100,000 elements: counted with a few integer operations (never a factorial of 100,000)
    assert distinct_orders(["a"] * 100_000, DEFAULT_BOUND) == 1
    assert distinct_orders(["a"] * 99_999 + ["b"], DEFAULT_BOUND) == DEFAULT_BOUND + 1
    assert distinct_orders([str(i) for i in range(100_000)], DEFAULT_BOUND) == DEFAULT_BOUND + 1


def test_twelve_values_give_up_with_the_flag_without_listing_an_order(runner, monkeypatch):
    listed = []
    real = engine_findings._distinct_permutations
    monkeypatch.setattr(engine_findings, "_distinct_permutations", lambda xs: listed.append(xs) or real(xs))
    a, out = _assess(runner, concat(12))  # 12! = 479,001,600 orders: was listed before the bound check
    assert out.answer.rows[0][0].value == "a b c d e f g h i j k l"
    assert a.confirmed is True and a.open == ["group-concat"] and a.alternatives == []
    assert listed == []
    a, out = _assess(runner, concat(6))  # 720 orders <= the bound: every one listed
    assert a.open == [] and len(a.alternatives) == 720
    assert listed and all(len(x) == 6 for x in listed)  # (once per pass: planning, then assessing)


def test_repeated_values_are_listed_once(runner):
    q = 'SELECT (GROUP_CONCAT(?o) AS ?g) WHERE { VALUES ?o { "a" "a" "a" "a" "a" "a" "a" "a" "a" "a" "a" "b" } }'
    a, out = _assess(runner, q)  # 12 values, 12 distinct orders (not 12!)
    assert a.open == [] and len(a.alternatives) == 12


# --------------------------------------------------------------------------- empty separator


def test_empty_separator_is_a_value_not_a_crash(runner):
    a, out = _assess(runner, concat(3, ""))
    assert out.answer.rows[0][0].value == "abc"
    # the elements cannot be recovered from "abc": engine-dependent, left open (a bound)
    assert a.dependent and a.confirmed is None and a.open == ["group-concat"] and a.alternatives == []
    a, out = _assess(runner, concat(1, ""))  # one one-character value: nothing to order
    assert a.confirmed is False and not a.dependent


def test_empty_separator_scores_through_evaluate(runner):
    ds = Dataset("d", [Item(id="1", questions={"en": "q"},
                            answer=TableAnswer.single_column([Literal("abc")], "g"))])
    run = Run("r", [Prediction(id="1", sparql=concat(3, ""))])
    e = evaluate(ds, run, kg=runner.engine, cache=False)
    assert e.aggregate["F1"] == 1.0


# --------------------------------------------------------------------------- numeric overflow


NUMERIC = [None, XSD_DECIMAL, XSD_DOUBLE]


@pytest.mark.parametrize("dt", NUMERIC)
@pytest.mark.parametrize("text", ["1E100000000", "1E999999999999", "-1e999999999999", "1E-999999999999",
                                  "1E99999999999999999999", "9" * 40 + "e999999999999999999"])
def test_huge_exponents_are_keys_not_overflow(text, dt):
    k = DEFAULT_MATCHING.key(Literal(text, datatype=dt))
    assert k == DEFAULT_MATCHING.key(Literal(text, datatype=dt))
    assert k != DEFAULT_MATCHING.key(Literal("0", datatype=dt))  # no underflow to 0, no overflow to equal
    assert k != DEFAULT_MATCHING.key(Literal("1", datatype=dt))


def test_huge_exponents_compare_by_value_where_decimal_holds_them():
    key = DEFAULT_MATCHING.key
    assert key(Literal("1E100000000")) == key(Literal("10E99999999")) == key(Literal("0.1e100000001"))
    assert key(Literal("1E100000000")) != key(Literal("1E100000001"))
    assert key(Literal("0E99999999999999999999")) == key(Literal("0"))
    # beyond |exponent| 10**18 the lexical form is compared
    assert key(Literal("1E99999999999999999999")) == ("text", "1E99999999999999999999")


_digits = st.text("0123456789", min_size=1, max_size=30)
_lexical = st.builds(
    lambda sign, whole, frac, e, exp: f"{sign}{whole}{frac}{e}{exp}",
    st.sampled_from(["", "+", "-"]), _digits,
    st.one_of(st.just(""), st.builds(lambda d: "." + d, st.text("0123456789", max_size=30))),
    st.sampled_from(["e", "E"]),
    st.one_of(st.integers(-10**25, 10**25), st.integers(-2000, 2000)).map(str),
)


@examples(150)
def test_every_numeric_lexical_form_has_a_key(examples):
    @settings(max_examples=examples, deadline=None)
    @given(_lexical, st.sampled_from(NUMERIC))
    def check(text, dt):
        _check_every_numeric_lexical_form_has_a_key(text, dt)

    check()


def _check_every_numeric_lexical_form_has_a_key(text, dt):
    k = DEFAULT_MATCHING.key(Literal(text, datatype=dt))
    assert k[0] in ("num", "text")
    if k[0] == "num":
        # the same value written with its exponent moved matches
        mant, _, exp = text.lower().partition("e")
        moved = f"{mant}0e{int(exp) - 1}" if "." not in mant else f"{mant}0e{exp}"
        assert DEFAULT_MATCHING.key(Literal(moved, datatype=dt)) == k
        assert isinstance(k[1], Decimal)


@settings(max_examples=40, deadline=None)
@given(st.lists(_lexical, min_size=1, max_size=4))
def test_answers_with_any_numeric_forms_score(texts):
    gold = TableAnswer.single_column([Literal(t) for t in texts], "x")
    ds = Dataset("d", [Item(id="1", questions={"en": "q"}, answer=gold)])
    run = Run("r", [Prediction(id="1", answer=TableAnswer.single_column([Literal(t) for t in reversed(texts)], "x"))])
    assert evaluate(ds, run).aggregate["F1"] == 1.0


def test_run_answer_overflow_scores(runner):
    gold = TableAnswer.single_column([from_sparql_json({"type": "literal", "value": "1E999999999999"})], "x")
    ds = Dataset("d", [Item(id="1", questions={"en": "q"}, answer=gold),
                       Item(id="2", questions={"en": "q"}, answer=TableAnswer.single_column([Literal("5")], "x"))])
    run = Run("r", [Prediction(id="1", answer=gold),
                    Prediction(id="2", sparql='SELECT ?x WHERE { BIND("1E100000000"^^<%s> AS ?x) }' % XSD_DECIMAL)])
    e = evaluate(ds, run, kg=runner.engine, cache=False)
    assert e.outcomes == {"ok": 2} and e.aggregate["F1"] == 0.5


# --------------------------------------------------------------------------- a worker killed from outside


def _killer(monkeypatch, tmp_path, blocks: int):
    """Workers (forked after this) block on the query "# BLOCK" for its first ``blocks``
    attempts, telling the test their pid through a pipe; a thread of the test kills each such
    worker with SIGKILL (as the OOM killer or ``kill -9`` would). Returns (thread, pids)."""
    import os
    import signal
    import threading

    from kgqa.execute import embedded

    r, w = os.pipe()
    tries = tmp_path / "tries"
    real = embedded.evaluate

    def evaluate(store, query, *a, **k):
        if "# BLOCK" in query:
            with open(tries, "ab") as fh:  # O_APPEND: one byte per attempt, across worker processes
                fh.write(b".")
            if tries.stat().st_size <= blocks:
                os.write(w, f"{os.getpid()}\n".encode())
                while True:  # blocked until killed
                    signal.pause()
        return real(store, query, *a, **k)

    monkeypatch.setattr(embedded, "evaluate", evaluate)
    pids: list[int] = []

    def kill() -> None:
        with os.fdopen(r, "rb", buffering=0) as fh:
            for _ in range(blocks):
                pid = int(fh.readline())
                pids.append(pid)
                os.kill(pid, signal.SIGKILL)

    t = threading.Thread(target=kill, daemon=True)
    t.start()
    return t, pids, w


@pytest.mark.parametrize("blocks", [1, 2])
def test_a_worker_killed_from_outside_is_retried_and_final_only_when_it_repeats(monkeypatch, tmp_path, blocks):
    import os

    thread, pids, w = _killer(monkeypatch, tmp_path, blocks)
    kg = tmp_path / "kg.nt"
    kg.write_text('<http://x/a> <http://x/p> "a" .\n', encoding="utf-8")
    try:
        with EmbeddedEngine.from_files([kg], workers=1) as engine:
            outs = engine.execute_many(["SELECT ?o WHERE { ?s ?p ?o } # BLOCK", "ASK { ?s ?p ?o }"], timeout=300)
    finally:
        os.close(w)
    thread.join()
    assert len(pids) == blocks and len(set(pids)) == blocks  # each attempt on its own (fresh) worker
    first, after = outs
    assert after.status is Status.OK and after.answer.value is True
    if blocks == 1:  # killed once: asked again, the answer is the query's own
        assert first.status is Status.OK and first.answer.rows[0][0].value == "a"
    else:  # killed twice: final, and the message says the failure repeated
        assert first.status is Status.EXEC_ERROR and "exit code -9" in first.message
        assert "the failure repeats" in first.message
        assert (tmp_path / "tries").stat().st_size == 2  # asked twice, not more


# --------------------------------------------------------------------------- disk full, database errors


def _limited(store, pages: int | None = None, query_only: bool = False):
    """Every new connection of ``store`` limited as a full disk (SQLite's max_page_count at
    the pages the file has) or read-only (query_only): real SQLite errors, no mount needed."""
    from sqlalchemy import event

    def limit(dbapi_conn, _record):
        cur = dbapi_conn.cursor()
        if pages is not None:
            cur.execute(f"PRAGMA max_page_count = {pages}")
        if query_only:
            cur.execute("PRAGMA query_only = ON")
        cur.close()

    store.engine.dispose()
    event.listen(store.engine, "connect", limit)


def test_store_on_a_full_disk_is_one_clear_line(tmp_path):
    from kgqa.store import Store, StoreError

    store = Store(tmp_path / "x.sqlite")
    pages = store.engine.connect().exec_driver_sql("PRAGMA page_count").scalar()
    _limited(store, pages=pages)
    with pytest.raises(StoreError) as e:
        store.put_file(b"x" * 2_000_000)
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'x.sqlite'}: cannot write: No space left on device (database or disk is full)")
    assert "--store" in msg and "\n" not in msg and "INSERT" not in msg and "xxxx" not in msg


def test_database_errors_never_carry_the_statement_or_its_parameters(tmp_path):
    from kgqa.store import Store, StoreError

    store = Store(tmp_path / "x.sqlite")
    _limited(store, query_only=True)
    with pytest.raises(StoreError) as e:
        store.put_file(b"y" * 2_000_000)  # SQLAlchemy's own text quotes this 2 MB parameter
    msg = str(e.value)
    assert "database error: OperationalError: attempt to write a readonly database" in msg
    assert len(msg) < 500 and "yyyy" not in msg and "[SQL:" not in msg and "parameters" not in msg


def _tmpfs(path, size: str) -> bool:
    import subprocess

    path.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    return r.returncode == 0


def test_evaluate_store_on_a_full_disk_cli(tmp_path, capsys):
    import os
    import subprocess

    from conftest import run_cli

    full = tmp_path / "full"
    if os.geteuid() != 0 or not _tmpfs(full, "128k"):
        pytest.skip("a tmpfs needs root (the full disk is also simulated by test_store_on_a_full_disk_is_one_clear_line)")
    try:
        with open(full / "fill", "wb") as fh:  # fill the file system to the last byte
            try:
                fh.write(b"\0" * (256 << 10))
            except OSError:
                pass
        ds = tmp_path / "ds.jsonl"
        ds.write_text('{"id": "1", "question": "q", "answers": ["1"]}\n', encoding="utf-8")
        code, out, err = run_cli(capsys, "evaluate", str(ds), str(ds), "--store", str(full / "x.sqlite"))
        lines = [x for x in err.splitlines() if x.strip()]
        assert code == 2 and "Traceback" not in err
        assert lines[-1].startswith(f"error: {full / 'x.sqlite'}: cannot write: No space left on device")
        assert "AnswerEM" in out  # the scores were printed before the store was written
    finally:
        subprocess.run(["umount", "-l", str(full)], capture_output=True)  # lazy: the store may still hold it
