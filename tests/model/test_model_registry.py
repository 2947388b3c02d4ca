"""The generic Registry behind measures, formats, query features and named datasets."""

from __future__ import annotations

import pytest

from kgqa.load import formats, registry
from kgqa.model.registry import Registry
from kgqa.score import measures
from kgqa.score.query_measures import FEATURES


def test_register_lookup_aliases_and_errors():
    r: Registry[int] = Registry("thing", case_insensitive=True)
    assert r.register("One", 1, aliases=("uno",)) == 1
    assert r["One"] == 1 and r["uno"] == 1 and r.find("ONE") == 1
    assert "One" in r and "uno" in r and "one" not in r  # membership is exact
    assert list(r) == ["One"] and len(r) == 1 and dict(r) == {"One": 1}
    r.register("One", 1)  # the same entry again is fine
    with pytest.raises(ValueError, match="thing uno registered twice"):
        r.register("Other", 2, aliases=("uno",))
    assert r.find("two") is None
    with pytest.raises(KeyError):
        r["two"]
    r.register("One", 3, replace=True)
    assert r["One"] == 3


def test_modules_are_imported_on_first_use(tmp_path, monkeypatch):
    (tmp_path / "kgqa_test_plugin.py").write_text(
        "from tests_registry_target import R\nR.register('late', 42)\n", encoding="utf-8")
    (tmp_path / "tests_registry_target.py").write_text(
        "from kgqa.model.registry import Registry\nR = Registry('plugin', modules=['kgqa_test_plugin'])\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import tests_registry_target as t

    assert t.R._entries == {}  # nothing imported yet
    assert t.R["late"] == 42 and t.R.names() == ["late"]


def test_the_kgqa_registries_are_registries():
    assert isinstance(measures.REGISTRY, Registry) and measures.REGISTRY.kind == "measure"
    assert isinstance(FEATURES, Registry) and "sem" in FEATURES
    assert formats.get("dataset", "qald-json").name == "qald-json"
    assert isinstance(registry.DATASETS, Registry) and registry.find("QALD-9-Test").name == "qald-9-test"
    with pytest.raises(ValueError, match="unknown measure 'F9'"):
        measures.parse("F9")
    assert measures.parse("f1").key == "F1"  # case-insensitive fallback, as before
