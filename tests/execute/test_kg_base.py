"""Relative IRIs in KG files resolve against ``base`` when given (``open_engine(..., base=)``),
not against the file's own location; the base is part of the KG's fingerprint and of the
cached on-disk store's key."""

from __future__ import annotations

import pytest

from kgqa.execute.opener import open_engine
from kgqa.execute.kgfile import cached_store, fingerprint, load_files, read_manifest
from kgqa.model import InputError

TTL = "<a> <p> <b> .\n<b> <p> <http://abs.example/c> .\n"
QUERY = "SELECT ?s ?o WHERE { ?s <http://ex.org/kg/p> ?o } ORDER BY ?s"


def _kg(tmp_path):
    p = tmp_path / "rel.ttl"
    p.write_text(TTL, encoding="utf-8")
    return p


def test_load_files_resolves_relative_iris_against_the_base(tmp_path):
    p = _kg(tmp_path)
    store, manifest = load_files([p], base="http://ex.org/kg/")
    subjects = sorted(q.subject.value for q in store)
    assert subjects == ["http://ex.org/kg/a", "http://ex.org/kg/b"] and manifest.base == "http://ex.org/kg/"
    plain, m0 = load_files([p])
    assert sorted(q.subject.value for q in plain) == [(tmp_path / "a").as_uri(), (tmp_path / "b").as_uri()]
    assert m0.base is None and m0.fingerprint == fingerprint([p]) != manifest.fingerprint
    assert manifest.fingerprint == fingerprint([p], base="http://ex.org/kg/")


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_engine_workers_see_the_based_iris(tmp_path, start):
    p = _kg(tmp_path)
    with open_engine(p, base="http://ex.org/kg/", workers=1, start_method=start) as e:
        out = e.execute(QUERY)
    rows = [(s.value, o.value) for s, o in out.answer.rows]
    assert rows == [("http://ex.org/kg/a", "http://ex.org/kg/b"), ("http://ex.org/kg/b", "http://abs.example/c")]


def test_cached_store_is_keyed_by_base(tmp_path):
    p = _kg(tmp_path)
    a = cached_store([p], root=tmp_path / "cache", base="http://ex.org/kg/")
    b = cached_store([p], root=tmp_path / "cache", base="http://other.example/")
    assert a != b and read_manifest(a).base == "http://ex.org/kg/" and read_manifest(b).base == "http://other.example/"
    assert cached_store([p], root=tmp_path / "cache", base="http://ex.org/kg/") == a


def test_base_for_an_endpoint_or_a_store_is_refused(tmp_path):
    with pytest.raises(InputError, match="--base applies when loading RDF files"):
        open_engine("http://127.0.0.1:9/sparql", base="http://ex.org/")
    store = cached_store([_kg(tmp_path)], root=tmp_path / "cache")
    with pytest.raises(InputError, match="--base applies when loading RDF files, not to an existing store"):
        open_engine(store, base="http://ex.org/")


def test_kg_load_and_generate_take_base_on_the_command_line(tmp_path):
    import json

    from typer.testing import CliRunner

    from kgqa.cli import _register, app

    _register()
    runner = CliRunner()
    ttl = tmp_path / "people.ttl"
    ttl.write_text("@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                   + "".join(f'<p{i}> a <Person> ; rdfs:label "Person {i}" ; <livesIn> <c{i % 2}> .\n' for i in range(6))
                   + '<c0> a <City> ; rdfs:label "Paris" .\n<c1> a <City> ; rdfs:label "Rome" .\n', encoding="utf-8")
    r = runner.invoke(app, ["kg", "load", str(ttl), "--store", str(tmp_path / "st"), "--quiet", "--base", "http://ex.org/"])
    assert r.exit_code == 0, r.output
    assert read_manifest(tmp_path / "st").base == "http://ex.org/"
    out = tmp_path / "q.json"
    r = runner.invoke(app, ["generate", "--kg", str(ttl), "--base", "http://ex.org/", "-n", "2", "--edges", "1",
                            "-o", str(out), "--no-cache", "-q", "-f", "json"])
    assert r.exit_code == 0, r.output
    queries = [q["query"]["sparql"] for q in json.loads(out.read_text())["questions"]]
    assert queries and all("<http://ex.org/livesIn>" in q and "file:" not in q for q in queries)
