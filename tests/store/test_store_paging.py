"""Keyset paging of the experiment store (issue 29, store at scale): pages read after or
before an experiment (the seek method) give the same rows and order as OFFSET pages, count the
rows before them exactly, and neither skip nor repeat an experiment while others are added
between page loads."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, insert

from conftest import examples

import kgqa
from kgqa.store import Store
from kgqa.store.schema import experiments
from kgqa.store.store import SORTS


@pytest.fixture(scope="module")
def store():
    with tempfile.TemporaryDirectory() as d:
        s = Store(Path(d) / "exp.sqlite")
        yield s
        s.close()


def _rows(specs: list[tuple[int, float | None, int, str]], start: int = 0) -> list[dict]:
    """Experiment rows from (created second, headline value, run number, status): few distinct
    values, so that every sort key has ties (broken by created, then id)."""
    return [dict(id=f"{start + i:010x}", status=status, created=f"2026-01-01T00:00:{sec:02d}+00:00",
                 dataset="demo", run_name=f"run{run}", profile="kgqa", lang="all", gold_answers="stored",
                 options="{}", kgqa_version=kgqa.__version__, headline="F1", headline_value=hv,
                 aggregate=json.dumps({"F1": hv}), outcomes="{}", progress_done=0, progress_total=0)
            for i, (sec, hv, run, status) in enumerate(specs)]


def _fill(s: Store, rows: list[dict], *, clear: bool = True) -> None:
    with s.engine.begin() as c:
        if clear:
            c.execute(delete(experiments))
        if rows:
            c.execute(insert(experiments), rows)


def _walk(page, per: int) -> list[str]:
    """Every id of a listing by following its pages' cursors (``page(**kw)`` -> Page),
    checking each page's offset on the way."""
    pg = page(limit=per)
    seen: list[str] = []
    while pg.experiments:
        assert pg.offset == len(seen)
        seen += [e.id for e in pg.experiments]
        pg = page(limit=per, after=seen[-1])
    assert pg.offset == len(seen)
    return seen


SPEC = st.tuples(st.integers(0, 3), st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 1.0])), st.integers(0, 3),
                 st.sampled_from(["finished", "finished", "failed"]))


_SEEK = dict(specs=st.lists(SPEC, max_size=25), per=st.integers(1, 6), sort=st.sampled_from(sorted(SORTS)),
             desc=st.booleans())
_SEEK_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@examples(60, quick=10)
def test_seek_pages_equal_offset_pages(store, examples):
    """The property on listings (each pages from every row: ~50 queries an example): 10 in the
    README's command, 60 in the slow part."""
    @settings(max_examples=examples, **_SEEK_SETTINGS)
    @given(**_SEEK)
    def check(specs, per, sort, desc):
        _check_seek_pages(store, specs, per, sort, desc)

    check()


def _check_seek_pages(store, specs, per, sort, desc):
    _fill(store, _rows(specs))
    full = [e.id for e in store.list(sort=sort, descending=desc)]
    assert len(full) == len(specs)
    page = lambda **kw: store.list_page(sort=sort, descending=desc, **kw)  # noqa: E731
    assert _walk(page, per) == full
    for k in range(0, len(full) + 1, per):  # numbered pages (OFFSET) are the same slices
        assert [e.id for e in store.list(sort=sort, descending=desc, limit=per, offset=k)] == full[k:k + per]
    for i, eid in enumerate(full):  # from every row: the next page and the previous one
        after = page(limit=per, after=eid)
        assert [e.id for e in after.experiments] == full[i + 1:i + 1 + per]
        assert after.offset == (i + 1 if i + 1 < len(full) else len(full))
        before = page(limit=per, before=eid)
        if i >= per:
            assert [e.id for e in before.experiments] == full[i - per:i] and before.offset == i - per
        else:  # near the start: the first page, full
            assert [e.id for e in before.experiments] == full[:per] and before.offset == 0
    # a filtered listing (the compare picker: finished only) pages the same way
    fin = [e.id for e in store.list(status="finished", sort=sort, descending=desc)]
    assert _walk(lambda **kw: store.list_page(status="finished", sort=sort, descending=desc, **kw), per) == fin


@examples(40, quick=15)
def test_leaderboard_seek_pages_rank_like_offset_pages(store, examples):
    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(specs=st.lists(SPEC, max_size=25), per=st.integers(1, 6))
    def check(specs, per):
        _check_leaderboard_seek_pages_rank_like_offset_pages(store, specs, per)

    check()


def _check_leaderboard_seek_pages_rank_like_offset_pages(store, specs, per):
    _fill(store, _rows(specs))
    full = store.leaderboard("demo", "kgqa")
    assert all(e.status == "finished" for e in full)
    values = [e.headline_value for e in full]
    defined = [v for v in values if v is not None]
    assert defined == sorted(defined, reverse=True) and values == defined + [None] * (len(values) - len(defined))
    ids = [e.id for e in full]
    assert _walk(lambda **kw: store.leaderboard_page("demo", "kgqa", **kw), per) == ids
    for i, eid in enumerate(ids):
        pg = store.leaderboard_page("demo", "kgqa", limit=per, after=eid)
        assert [e.id for e in pg.experiments] == ids[i + 1:i + 1 + per]


@pytest.mark.parametrize("sort,desc", [("created", True), ("run", False), ("headline", True), ("status", False)])
def test_walk_sees_every_experiment_once_while_experiments_are_added(store, sort, desc):
    rng = random.Random(7)
    spec = lambda: (rng.randrange(4), rng.choice([None, 0.0, 0.5, 1.0]), rng.randrange(6), "finished")  # noqa: E731
    _fill(store, _rows([spec() for _ in range(40)]))
    before = {e.id for e in store.list()}
    seen: list[str] = []
    added = 0
    pg = store.list_page(sort=sort, descending=desc, limit=6)
    while pg.experiments:
        seen += [e.id for e in pg.experiments]
        # experiments arrive between page loads, sorting before, among and after those seen
        _fill(store, _rows([spec() for _ in range(3)], start=1000 + added), clear=False)
        added += 3
        pg = store.list_page(sort=sort, descending=desc, limit=6, after=seen[-1])
    assert len(seen) == len(set(seen))  # nothing twice
    assert before <= set(seen)  # every experiment there at the start, once
    assert store.count() == 40 + added


def test_a_cursor_that_is_not_in_the_store_is_a_key_error(store):
    _fill(store, _rows([(0, 0.5, 0, "finished")]))
    with pytest.raises(KeyError, match="no experiment 00000000ff"):
        store.list_page(limit=5, after="00000000ff")
    with pytest.raises(KeyError):
        store.leaderboard_page("demo", "kgqa", limit=5, before="00000000ff")
