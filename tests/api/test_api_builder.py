"""The library entry points behind the builder-side commands (``kgqa kg``, ``kgqa cache``,
``kgqa audit``, ``kgqa levels``, ``kgqa generate``, ``kgqa migrate``): one call does what the
command does, so a notebook gets the command's result."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgqa import api
from kgqa.model import Dataset, InputError, Item
from pathlib import Path

import kgqa

DEMO = Path(kgqa.__file__).parent / "demo" / "data"
TTL = """@prefix ex: <http://example.org/> .
ex:a ex:p ex:b .
ex:b ex:p ex:c .
ex:c ex:q "x" .
"""


@pytest.fixture()
def ttl(tmp_path):
    path = tmp_path / "kg.ttl"
    path.write_text(TTL, encoding="utf-8")
    return path


def test_load_kg_in_memory_and_into_a_store_give_one_manifest(ttl, tmp_path):
    mem = api.load_kg([ttl], graph="http://g/")
    assert (mem.manifest.quads, mem.graphs, mem.store, mem.manifest.graph) == (3, ["http://g/"], None, "http://g/")
    plain = api.load_kg([ttl])
    assert plain.graphs == [] and plain.manifest.fingerprint != mem.manifest.fingerprint  # the graph counts
    stored = api.load_kg([ttl], store=tmp_path / "st")
    assert (stored.manifest.quads, stored.graphs, stored.store) == (3, None, str(tmp_path / "st"))
    assert stored.manifest.fingerprint == plain.manifest.fingerprint
    info = api.kg_info([str(tmp_path / "st")])
    assert (info.manifest.quads, info.graphs, info.store) == (3, [], str(tmp_path / "st"))
    assert info.manifest.fingerprint == plain.manifest.fingerprint
    files = api.kg_info([str(ttl)], graph="http://g/")
    assert (files.store, files.graphs, files.manifest.fingerprint) == (None, ["http://g/"], mem.manifest.fingerprint)
    with pytest.raises(InputError, match="not empty"):
        api.load_kg([ttl], store=tmp_path / "st")
    assert api.load_kg([ttl], store=tmp_path / "st", replace=True).manifest.quads == 3


def test_kg_info_on_a_directory_that_is_no_store_says_so(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="not a kgqa store"):
        api.kg_info([str(tmp_path / "empty")])


def test_cache_stats_and_clear_count_what_an_audit_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    assert api.cache_stats().entries == 0
    report = api.audit(str(DEMO / "questions.json"), str(DEMO / "kg.ttl"))
    n = len(report.rows)
    stats = api.cache_stats()
    assert n > 0 and stats.entries == n and stats.path == str(tmp_path / "cache" / "results.sqlite")
    assert sum(sum(d.values()) for d in stats.by_engine.values()) == n
    assert api.clear_cache("no-such-engine") == 0 and api.cache_stats().entries == n
    assert api.clear_cache() == n and api.cache_stats().entries == 0
    from kgqa.report import console

    text = [str(getattr(r, "plain", r)) for r in console.audit_renderables(report)[:1]]
    assert text[0].startswith("audit ") and f"({n} items)" in text[0]


P = "PREFIX ex: <http://example.org/> "
TRAIN = [Item("t1", {"en": "a"}, P + "SELECT ?x WHERE { ex:a ex:p ?x }")]
TEST = [Item("iid", {"en": "b"}, P + "SELECT ?y WHERE { ex:z ex:p ?y }"),
        Item("zero", {"en": "c"}, P + "SELECT ?y WHERE { ex:z ex:new ?y }"),
        Item("none", {"en": "d"}, None)]


def test_level_datasets_counts_and_writes_the_levels(tmp_path):
    from kgqa.make.levels import level_datasets

    report = level_datasets(Dataset("train", TRAIN, "jsonl"), Dataset("test", TEST, "jsonl"))
    assert report.labels == {"iid": "iid", "zero": "zero-shot", "none": "unknown"}
    assert report.counts == {"iid": 1, "compositional": 0, "zero-shot": 1, "unknown": 1}
    assert report.write(tmp_path / "test.jsonl") == "jsonl"
    written = api.load_dataset(tmp_path / "test.jsonl")
    assert {it.id: it.metadata["generalization_level"] for it in written.items} == report.labels
    # from files: the same labels
    level_datasets(Dataset("train", TRAIN, "jsonl"), Dataset("train", TRAIN, "jsonl")).write(tmp_path / "train.jsonl")
    assert level_datasets(tmp_path / "train.jsonl", tmp_path / "test.jsonl").labels == report.labels


def test_level_datasets_names_a_missing_file(tmp_path):
    from kgqa.make.levels import level_datasets

    with pytest.raises(InputError, match="no-such.json"):
        level_datasets(tmp_path / "no-such.json", tmp_path / "no-such.json")


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a loaded machine
@given(st.integers(1, 9), st.integers(0, 5))
def test_generate_options_parse_reads_edges(lo, extra):
    from kgqa.make.generate import GenerateOptions

    opts = GenerateOptions.parse(edges=f"{lo}-{lo + extra}", n=7, seed=3)
    assert (opts.edges, opts.n, opts.seed) == ((lo, lo + extra), 7, 3)
    assert GenerateOptions.parse(edges=str(lo)).edges == (lo, lo)


def test_generate_options_parse_reads_functions_and_refuses_bad_text():
    from kgqa.make.generate import PAPER_SHARES, GenerateOptions, parse_function_shares

    assert GenerateOptions.parse().shares == PAPER_SHARES and GenerateOptions.parse().edges == (1, 3)
    opts = GenerateOptions.parse(functions="none=3,count=1")
    assert (opts.functions, opts.shares) == parse_function_shares("none=3,count=1")
    assert opts.shares == {"none": 0.75, "count": 0.25}
    for edges, functions in (("0", None), ("3-1", None), ("x", None), ("1-3", "none=-1")):
        with pytest.raises(InputError, match="--edges/--functions"):
            GenerateOptions.parse(edges=edges, functions=functions)


def test_migrate_options_parse_keeps_defaults_for_lists_not_given():
    from kgqa.make.migrate import MigrateOptions

    assert MigrateOptions.parse() == MigrateOptions()
    assert MigrateOptions.parse(disambiguation=[], redirect=None, link_predicates=[]) == MigrateOptions()
    opts = MigrateOptions.parse(disambiguation=["http://x/d"], link_predicates=["http://x/l", "http://x/m"], seed=4,
                                two_hop=False)
    assert (opts.disambiguation, opts.redirect, opts.link_predicates) == (
        ("http://x/d",), MigrateOptions().redirect, ("http://x/l", "http://x/m"))
    assert (opts.seed, opts.two_hop) == (4, False)
    assert "disambiguation:http://x/d" in opts.signature() and "link:http://x/l,http://x/m" in opts.signature()


def test_write_atomic_is_offered_by_the_api(tmp_path):
    api.write_atomic(tmp_path / "x.json", [json.dumps({"a": 1}), "\n"])
    assert json.loads((tmp_path / "x.json").read_text(encoding="utf-8")) == {"a": 1}
