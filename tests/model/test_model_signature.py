"""The Signature object: built once from every contributor's parts, rendered the same way."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples

from kgqa.model.signature import Signature

_keys = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
_values = st.one_of(st.text(min_size=1, max_size=20), st.integers(), st.booleans())


def test_rendering_and_access():
    s = Signature.build({"profile": "kgqa", "lang": "all", "none": None, "empty": ""}, version="0.1.0")
    assert str(s) == "kgqa:0.1.0|profile:kgqa|lang:all" and s == "kgqa:0.1.0|profile:kgqa|lang:all"
    assert s["profile"] == "kgqa" and s.get("n") is None and list(s.keys()) == ["profile", "lang"]
    t = s.with_parts({"engine": "oxigraph-0.5:kg=sha256:ab"}, n=3, lang=None)
    assert str(t) == "kgqa:0.1.0|profile:kgqa|engine:oxigraph-0.5:kg=sha256:ab|n:3"
    assert t.parts["engine"] == "oxigraph-0.5:kg=sha256:ab"  # split on the first ':' only
    assert Signature.build({"normalise": True}, version="x").parts == {"normalise": "yes"}
    with pytest.raises(ValueError, match="signature key"):
        Signature.build({"a|b": 1})


@examples(200)
def test_a_rendered_signature_reads_back_into_the_same_parts(examples):
    @settings(max_examples=examples, deadline=None)
    @given(st.dictionaries(_keys, _values, max_size=8), st.dictionaries(_keys, _values, max_size=4))
    def check(parts, more):
        _check_a_rendered_signature_reads_back_into_the_same_parts(parts, more)

    check()


def _check_a_rendered_signature_reads_back_into_the_same_parts(parts, more):
    s = Signature.build(parts, version="0.1.0")
    again = Signature.parse(str(s))
    assert again.parts == s.parts and again.version == "0.1.0" and str(again) == str(s)
    assert len(s.parts) == len(parts)  # a value never splits into extra parts
    extended = s.with_parts(more)
    assert Signature.parse(str(extended)).parts == extended.parts
    assert extended.with_parts() == extended  # re-building never encodes twice
