"""Constraints that separate a merged target relation, measured on the facts (issue 37,
:mod:`kgqa.make.migrate.separate`)."""

from __future__ import annotations

import pytest

from kgqa.make.migrate import KG
from kgqa.make.migrate.agreement import MATCHING
from kgqa.make.migrate.separate import measure, separate
from kgqa.model import IRI

T = "http://t/"
KEY = MATCHING.key


def _kg(tmp_path, extra: str = "") -> KG:
    """Products reach their manager and their supplier through one ``contact`` relation; the
    products are all Devices, the suppliers Vendors, one manager has no type."""
    ttl = f"""@prefix t: <{T}> .
t:p1 a t:Device ; t:contact t:m1, t:s1 .
t:p2 a t:Device ; t:contact t:m2, t:s2 .
t:p3 a t:Device ; t:contact t:m1, t:s1 .
t:m1 a t:Staff .
t:s1 a t:Vendor . t:s2 a t:Vendor .
{extra}"""
    (tmp_path / "t.ttl").write_text(ttl)
    return KG([tmp_path / "t.ttl"], cache=False)


def _facts():
    fwd = {T + "p1": {KEY(IRI(T + "m1"))}, T + "p2": {KEY(IRI(T + "m2"))}}
    bwd = {T + "m1": {KEY(IRI(T + "p1")), KEY(IRI(T + "p3"))}, T + "m2": {KEY(IRI(T + "p2"))}}
    return fwd, bwd


def test_the_merge_shows_from_the_subjects_only(tmp_path):
    kg = _kg(tmp_path)
    fwd, bwd = _facts()
    m = measure(kg, f"<{T}contact>", fwd, {}, KEY)
    assert (m.precision, m.recall) == (0.5, 1.0)
    assert measure(kg, f"<{T}contact>", {}, bwd, KEY).precision == 1.0
    kg.close()


def test_subject_type_cannot_separate_and_a_type_the_object_must_not_have_does(tmp_path):
    kg = _kg(tmp_path)
    fwd, bwd = _facts()
    sep = separate(kg, f"<{T}contact>", fwd, bwd, KEY, proposed=(T + "Device", "subject"), source_count=3)
    texts = [m.text() for m in sep.tried]
    assert texts[0].startswith("no constraint: precision 0.50")
    assert any(t.startswith(f"subject a <{T}Device>: precision 0.50") for t in texts)  # measured, not used
    c = sep.chosen
    assert (c.constraint, c.side, c.negated, c.precision, c.recall) == (T + "Vendor", "object", True, 1.0, 1.0)
    kg.close()


def test_nothing_separates_twins_of_the_same_kind(tmp_path):
    """Suppliers without any type: no constraint restores precision; the chosen measure keeps
    precision 0.5, which the pipeline refuses below --min-precision."""
    kg = _kg(tmp_path)
    (tmp_path / "u.ttl").write_text((tmp_path / "t.ttl").read_text().replace("a t:Vendor", "t:x 1"))
    kg.close()
    kg = KG([tmp_path / "u.ttl"], cache=False)
    fwd, bwd = _facts()
    sep = separate(kg, f"<{T}contact>", fwd, bwd, KEY)
    assert sep.chosen.precision == pytest.approx(0.5)
    kg.close()
