"""NSpM / DBNQA parallel files: decoding, pairing, line-count checks."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from kgqa.load import formats, load_dataset
from kgqa.load.nspm import decode, expand_prefixes, load_nspm_dataset as load
from kgqa.model import InputError

FIX = Path(__file__).parents[1] / "fixtures" / "nspm"
EN, SP = FIX / "data.en", FIX / "data.sparql"
R, O = "http://dbpedia.org/resource/", "http://dbpedia.org/ontology/"

# NSpM's decode of each fixture line, worked out by hand from generator_utils.py
DECODED = [
    "select ?x where{dbr:Tour_de_la_Bourse dbo:architect ?x }",
    "select ?a where{dbr:Raymond's_Tomb georss:point ?a }",
    "ask where{dbr:Garibaldi_Monument_in_Taganrog dbo:location dbr:Taganrog }",
    "select distinct ?date where{dbr:Haunting_of_Cassie_Palmer dbo:creator ?x . ?x dbo:deathDate ?date . }",
    "SELECT DISTINCT ?uri where{dbr:Mad_River_(California)  dbo:city ?uri }",
    "ask where{dbr:Island_Barn_Reservoir dbo:areaTotal ?a1 . dbr:Arab_League dbo:areaTotal ?a2 . filter (?a1 > ?a2)  }",
    "SELECT DISTINCT COUNT(?uri)  where{?uri dbp:distributor dbr:Electronic_Arts }",
    "select distinct ?uri where{?uri rdf:type dbo:Mountain . ?uri dbo:locatedInArea dbr:Liechtenstein . "
    "?uri dbo:elevation ?elevation  . }order by desc (?elevation)  limit 1",
]


def test_decode_matches_nspm():
    encoded = SP.read_text(encoding="utf-8").splitlines()
    assert [decode(e) for e in encoded] == DECODED


def test_items():
    ds = load_dataset([EN, SP])
    assert ds.format == "nspm"
    assert ds.name == "nspm"  # files named data.*: the folder name
    assert ds.ids == [str(i) for i in range(1, 9)]
    assert ds.problems == []
    it = ds["1"]
    assert it.questions == {"en": "what is the architect of tour de la bourse ?"}
    assert it.sparql == f"select ?x where{{<{R}Tour_de_la_Bourse> <{O}architect> ?x }}"
    assert it.metadata == {
        "sparql_encoded": "select var_x where brack_open dbr_Tour_de_la_Bourse dbo_architect var_x brack_close",
        "sparql_decoded": DECODED[0],
    }
    assert it.answer is None
    assert ds["5"].sparql == f"SELECT DISTINCT ?uri where{{<{R}Mad_River_(California)>  <{O}city> ?uri }}"
    assert ds["8"].sparql.startswith(f"select distinct ?uri where{{?uri <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{O}Mountain> .")
    assert ds["2"].sparql == f"select ?a where{{<{R}Raymond's_Tomb> <http://www.georss.org/georss/point> ?a }}"


def test_expanded_queries_parse():
    ds = load([EN, SP])
    store = ox.Store()
    failed = []
    for it in ds:
        try:
            store.query(it.sparql)
        except SyntaxError:
            failed.append(it.id)
    # line 7 is Virtuoso's COUNT without AS, as in LC-QuAD: not standard SPARQL
    assert failed == ["7"]


def test_expand_prefixes_edges():
    assert expand_prefixes("filter(?x = dbr:A_(b))") == f"filter(?x = <{R}A_(b)>)"
    assert expand_prefixes("filter(?x = dbr:A)") == f"filter(?x = <{R}A>)"
    assert expand_prefixes("?x rdfs:label ?l") == "?x <http://www.w3.org/2000/01/rdf-schema#label> ?l"
    assert expand_prefixes("<http://x/dbr:A> 'dbo:' ") == "<http://x/dbr:A> 'dbo:' "


def test_one_path_finds_the_other():
    a = load([EN])
    b = load([SP])
    assert a.ids == b.ids and [i.sparql for i in a] == [i.sparql for i in b]
    assert a.source == [EN, SP] == b.source


def test_no_expand_option():
    ds = load([EN, SP], expand=False)
    assert [it.sparql for it in ds] == DECODED


def test_line_count_mismatch(tmp_path):
    en, sp = tmp_path / "data.en", tmp_path / "data.sparql"
    en.write_text("q1\nq2\nq3\n", encoding="utf-8")
    sp.write_text("select var_x where brack_open var_x dbo_p dbr_A brack_close\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        load([en, sp])
    assert str(e.value) == (
        f"{en}: the question file {en} has 3 lines but the query file {sp} has 1; "
        "NSpM files must be parallel (one query per question, line by line)"
    )


def test_missing_partner(tmp_path):
    en = tmp_path / "train.en"
    en.write_text("q1\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected the query file train.sparql beside it"):
        load([en])


def test_empty_lines_are_reported(tmp_path):
    en, sp = tmp_path / "dev.en", tmp_path / "dev.sparql"
    en.write_text("q1\n\nq3\n", encoding="utf-8")
    sp.write_text("ask where brack_open dbr_A dbo_p dbr_B brack_close\nask where brack_open dbr_A dbo_p dbr_C brack_close\n\n", encoding="utf-8")
    ds = load([sp, en])  # order of the two paths does not matter
    assert ds.name == "dev"
    assert ds.ids == ["1"]
    assert [(p.file, p.record, p.message) for p in ds.problems] == [
        (str(en), "line 2", "empty question line; skipped (with its query)"),
        (str(sp), "line 3", "empty query line; skipped (with its question)"),
    ]


def test_detect():
    assert formats.detect([EN], "dataset").name == "nspm"
    assert formats.detect([SP], "dataset").name == "nspm"
