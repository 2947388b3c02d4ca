"""Answer item classes looked up on the KG (AIT2KB with source=kg)."""

from __future__ import annotations

import pytest

from kgqa.demo import DATA
from kgqa.execute.embedded import EmbeddedEngine
from kgqa.execute.types import answer_types, class_index
from kgqa.model import BooleanAnswer, IRI, Literal, TableAnswer

R = "http://demo.kgqa.org/resource/"
O = "http://demo.kgqa.org/ontology/"


@pytest.fixture(scope="module")
def engine():
    e = EmbeddedEngine.from_files([DATA / "kg.ttl"], workers=1)
    yield e
    e.close()


def test_class_index_and_unknown_iris(engine):
    index, failures = class_index(engine, [R + "Norland", R + "NoSuchThing"])
    assert failures == []
    assert O + "Country" in index[R + "Norland"]
    assert index[R + "NoSuchThing"] == set()


def test_answer_types_per_side(engine):
    gold = {"1": TableAnswer.single_column([IRI(R + "Norland")]), "2": BooleanAnswer(True)}
    system = {"1": TableAnswer.single_column([Literal("Norland")]), "2": None}
    out = answer_types(engine, gold, system)
    assert O + "Country" in out["1"]["gold"]
    assert out["1"]["system"] == []  # a literal answer has no classes
    assert out["2"] == {"gold": [], "system": []}
