"""GERBIL's meaning matching (issue 25): IRIs linked by owl:sameAs files, KG redirects or the
DBpedia variants compare equal (``--links``, ``--redirects``); without them nothing changes."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings, strategies as st

import kgqa
from kgqa.load.links import load_links, read_pairs
from kgqa.model import InputError
from kgqa.model.terms import IRI, IriLinks, Literal, TermMatching, dbpedia_canonical
from conftest import REPO, examples

FIX = REPO / "tests" / "fixtures" / "meaning"


def _f1(links=None, redirects=None, kg=None, profile="gerbil"):
    e = kgqa.evaluate(FIX / "ds.jsonl", FIX / "run.jsonl", profile=profile, measures="F1", links=links,
                      redirects=redirects, kg=kg, cache=False)
    return [q.scores["F1"] for q in e.questions], str(e.signature)


def test_links_files_and_redirects_score_what_gerbil_matches():
    plain, sig = _f1()
    assert plain == [0.0, 0.0, 0.0] and "links" not in sig
    dbp, sig = _f1(links=["dbpedia"])
    assert dbp == [1.0, 0.0, 0.0] and "links:dbpedia#" in sig
    same, sig = _f1(links=[FIX / "sameas.tsv"])
    assert same == [1.0, 0.0, 1.0] and "sameAs=1" in sig
    allm, sig = _f1(links=[FIX / "sameas.tsv"], redirects="dbo:wikiPageRedirects", kg=FIX / "kg.nt")
    assert allm == [1.0, 1.0, 1.0] and "redirects=1" in sig


def test_typed_profile_too_and_the_cli_says_which(capsys, monkeypatch, tmp_path):
    assert _f1(links=["dbpedia"], profile="kgqa")[0] == [1.0, 0.0, 0.0]
    from kgqa.cli import main

    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", str(FIX / "ds.jsonl"), str(FIX / "run.jsonl"), "-p", "gerbil", "-f", "json",
              "--links", str(FIX / "sameas.tsv"), "--kg", str(FIX / "kg.nt"), "--redirects", "dbo:wikiPageRedirects"])
    out = capsys.readouterr().out
    assert exit_.value.code in (0, None), out
    (doc,) = json.loads(out[out.index("{"):])["runs"]
    assert "links:dbpedia+sameAs=1+redirects=1#" in doc["signature"]
    assert doc["aggregate"]["Macro F1 score"] == 1.0


def test_redirects_need_a_kg_and_a_predicate():
    with pytest.raises(InputError, match="--kg"):
        kgqa.Evaluator(FIX / "ds.jsonl", "gerbil", redirects="dbo:wikiPageRedirects")
    with pytest.raises(InputError, match="prefixed name"):
        kgqa.Evaluator(FIX / "ds.jsonl", "gerbil", redirects="wikiPageRedirects", kg=FIX / "kg.nt")


def test_two_iris_of_one_meaning_in_gold_count_once():
    links = IriLinks.from_pairs([("http://x/a", "http://x/b")])
    m = TermMatching(links=links)
    assert len({*m.keys([IRI("http://x/a"), IRI("http://x/b")])}) == 1
    assert m.key(Literal("http://x/a")) != m.key(IRI("http://x/a"))  # literals are not IRIs


def test_dbpedia_variants():
    assert dbpedia_canonical("https://dbpedia.org/resource/X") == "http://dbpedia.org/resource/X"
    assert dbpedia_canonical("http://en.dbpedia.org/page/X") == "http://dbpedia.org/resource/X"
    assert dbpedia_canonical("http://fr.dbpedia.org/resource/X") == "http://fr.dbpedia.org/resource/X"
    assert dbpedia_canonical("http://dbpedia.org/ontology/X") == "http://dbpedia.org/ontology/X"


def test_link_files_read_either_format_and_refuse_bad_lines(tmp_path):
    nt = tmp_path / "l.nt.gz"
    import gzip

    with gzip.open(nt, "wt") as fh:
        fh.write("<http://x/a> <http://www.w3.org/2002/07/owl#sameAs> <http://x/b> .\n"
                 "<http://x/a> <http://x/other> <http://x/c> .\n")
    assert list(read_pairs(nt)) == [("http://x/a", "http://x/b")]
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(b"http://x/a\thttp://x/b\nhttp://x/\xff\thttp://x/c\n")
    with pytest.raises(InputError, match="line 2: not valid UTF-8"):
        list(read_pairs(bad))
    bad.write_text("http://x/a\thttp://x/b\nnot an iri\tx\n")
    with pytest.raises(InputError, match="line 2: expected two IRIs"):
        list(read_pairs(bad))
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(InputError, match="unknown extension"):
        list(read_pairs(tmp_path / "x.json"))
    with pytest.raises(InputError, match="no such links file"):
        list(read_pairs(tmp_path / "missing.tsv"))
    assert len(load_links([FIX / "sameas.tsv"])) == 1


iris = st.sampled_from([f"http://x/{c}" for c in "abcdefgh"])


@examples(200)
def test_links_are_the_connected_components(examples):
    @settings(max_examples=examples, deadline=None)
    @given(st.lists(st.tuples(iris, iris), max_size=12))
    def check(pairs):
        _check_links_are_the_connected_components(pairs)

    check()


def _check_links_are_the_connected_components(pairs):
    links = IriLinks.from_pairs(pairs, dbpedia=False)
    nodes = {x for p in pairs for x in p} | {"http://x/z"}
    comp = {x: {x} for x in nodes}  # brute force: merge until nothing changes
    changed = True
    while changed:
        changed = False
        for a, b in pairs:
            if comp[a] is not comp[b]:
                merged = comp[a] | comp[b]
                for x in merged:
                    comp[x] = merged
                changed = True
    for a, b in itertools.product(nodes, repeat=2):
        assert (links.map(a) == links.map(b)) == (b in comp[a])
    for x in nodes:
        assert links.map(x) == min(comp[x]) and links.map(links.map(x)) == links.map(x)
    assert IriLinks.from_pairs(list(reversed(pairs)), dbpedia=False) == links


def test_text_answers_match_entity_labels_from_the_kg_and_the_dataset(tmp_path):
    def scores(**kw):
        e = kgqa.evaluate(FIX / "ds.jsonl", FIX / "text_run.jsonl", profile="kgqa", measures="F1", cache=False, **kw)
        return {q.id: q.scores["F1"] for q in e.questions}, str(e.signature)

    plain, sig = scores(kg=FIX / "kg.nt")
    assert plain == {"1": 0.0, "2": 0.0, "3": 0.0} and "labels" not in sig
    labelled, sig = scores(kg=FIX / "kg.nt", match_labels=True)
    assert labelled == {"1": 0.0, "2": 1.0, "3": 0.0} and "labels:kg=1#" in sig
    # the dataset's own labels (Mintaka ships entity labels) without any KG
    mk = REPO / "tests" / "fixtures" / "mintaka"
    e = kgqa.evaluate(mk / "mintaka_test.sample.json", mk / "predictions_text.json", profile="kgqa",
                      measures="F1", match_labels=True)
    assert {q.id: q.scores["F1"] for q in e.questions}["a9011ddf"] == 1.0 and "labels:dataset=" in str(e.signature)


def test_an_ambiguous_label_is_no_match():
    from kgqa.model.terms import TextLabels

    labels = TextLabels.from_pairs([("http://x/a", "Paris"), ("http://x/b", "paris "), ("http://x/c", "The Hague")])
    assert labels.iri("Paris") is None and labels.iri("hague") == "http://x/c"
    m = TermMatching(labels=labels)
    assert m.key(Literal("the hague")) == m.key(IRI("http://x/c")) and m.key(Literal("Paris")) != m.key(IRI("http://x/a"))
