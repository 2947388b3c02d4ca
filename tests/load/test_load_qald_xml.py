"""Legacy QALD XML datasets (fixture from real QALD-3/QALD-4 files, see fixtures/qald/README.md)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from kgqa.load import load_dataset
from kgqa.model import BooleanAnswer, InputError, TableAnswer
from kgqa.model.terms import IRI, XSD, Literal

FIX = Path(__file__).parents[1] / "fixtures" / "qald"


def test_qald4_sample_items():
    path = FIX / "qald4_sample.xml"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    ds = load_dataset(path)
    assert ds.format == "qald-xml" and ds.name == "qald-4_multilingual_train"
    assert ds.ids == ["132", "181", "56", "35", "3", "30", "173"]
    jane = ds["132"]
    assert jane.questions["en"] == "How often did Jane Fonda marry?"
    assert jane.questions["es"] == "¿Cuántas veces ha estado casada Jane Fonda?"
    assert jane.keywords["de"] == ["Jane Fonda", "heiraten", "wie oft"]
    assert jane.answer_type == "number"
    assert jane.metadata == {"aggregation": True, "onlydbo": True}
    assert jane.answer == TableAnswer(("result",), ((Literal("3", XSD + "integer"),),))
    assert "COUNT(DISTINCT ?uri)" in jane.sparql
    books = ds["181"].answer.column("result")
    assert len(books) == 5 and books[0] == IRI("http://dbpedia.org/resource/On_the_Road")
    assert ds["35"].answer == BooleanAnswer(True)  # <boolean>True</boolean>
    assert ds["35"].sparql is None  # empty CDATA query
    assert ds["35"].metadata["onlyesdbp"] is True
    assert ds["3"].answer.rows == ((Literal("Juan Carlos Izagirre Hortelano"),),)
    assert ds["30"].answer == TableAnswer(("result",), ())  # <answers/>
    assert ds["173"].answer.rows == ((Literal("1995-01-01", XSD + "date"),),)
    assert ds["173"].keywords["en"] == ["Finland", "European Union", "join"]
    [p] = ds.problems
    assert p.severity == "warning" and p.record == "question id 30" and "unknown answer type 'num'" in p.message
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_broken_records_are_reported_and_skipped():
    ds = load_dataset(FIX / "qald_broken.xml")
    assert ds.ids == ["1", "3"]
    got = {(p.record, p.severity): p.message for p in ds.problems}
    assert "unknown answer element <resource>" in got[("question id 2", "error")]
    assert "duplicate id '1'" in got[("question id 1", "error")]
    assert "no id attribute" in got[("question #5", "error")]
    assert "answer type is boolean but the answer is a table" in got[("question id 3", "warning")]
    assert all(p.file.endswith("qald_broken.xml") for p in ds.problems)


def test_malformed_xml_names_line_and_column():
    with pytest.raises(InputError) as e:
        load_dataset(FIX / "qald_malformed.xml")
    assert "qald_malformed.xml: malformed XML at line 5, column 3" in str(e.value)


def test_entity_declarations_are_refused(tmp_path):
    p = tmp_path / "bomb.xml"
    p.write_text('<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY a "aaaa">]>\n<dataset><question id="1">'
                 "<string>&a;</string></question></dataset>", encoding="utf-8")
    with pytest.raises(InputError, match="DOCTYPE or entity"):
        load_dataset(p, format="qald-xml")


def test_latin1_xml(tmp_path):
    p = tmp_path / "l1.xml"
    p.write_bytes('<dataset id="x"><question id="1"><string lang="de">Zürich</string></question></dataset>'.encode("latin-1"))
    with pytest.raises(InputError, match=r"byte 0xfc at offset 52 \(line 1, column 53\)"):
        load_dataset(p)
