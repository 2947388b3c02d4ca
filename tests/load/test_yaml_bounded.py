"""YAML is read with bounded expansion everywhere (issue 24, scope 3): a few hundred bytes of
nested aliases ("billion laughs") are refused before anything is expanded, in the dataset
loader, ``migrate --rules`` and scoring profiles; ordinary aliases and merge keys still load."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from kgqa.load import load_dataset
from kgqa.load.jsonio import MAX_YAML_ALIAS_NODES, load_yaml_text, read_yaml
from kgqa.make.migrate.rules import load_rules
from kgqa.model import InputError
from kgqa.score import profiles


def bomb(levels: int = 9, width: int = 9) -> str:
    lines = ["a: &a [" + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_the_issue_bomb_is_under_700_bytes_and_refused(tmp_path):
    text = bomb()
    assert len(text.encode()) < 700
    p = tmp_path / "questions.yml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="alias bomb"):
        read_yaml(p)
    with pytest.raises(InputError, match="alias bomb"):
        load_dataset(p, format="text2sparql")


def test_migrate_rules_and_profiles_refuse_the_bomb(tmp_path):
    p = tmp_path / "rules.yaml"
    p.write_text(bomb(), encoding="utf-8")
    with pytest.raises(InputError, match="alias bomb"):
        load_rules(p)
    prof = tmp_path / "p.yaml"
    prof.write_text(bomb(), encoding="utf-8")
    with pytest.raises(ValueError, match="alias bomb"):
        profiles.get(str(prof))


def test_recursive_alias_refused():
    with pytest.raises(InputError, match="recursive alias"):
        load_yaml_text("a: &a [1, *a]\n", "r.yml")


def test_ordinary_aliases_and_merge_keys_load():
    doc = load_yaml_text("base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\nlist: [*b, *b]\n", "m.yml")
    assert doc == {"base": {"x": 1}, "use": {"x": 1, "y": 2}, "list": [{"x": 1}, {"x": 1}]}


@settings(max_examples=40, deadline=None)
@given(levels=st.integers(2, 7), width=st.integers(2, 12))
def test_refused_exactly_when_aliases_add_more_than_the_cap(levels, width):
    text = bomb(levels, width)
    # distinct nodes: the root mapping, its keys, one list per level, the first list's scalars
    sizes = [1 + width]
    for _ in range(levels - 1):
        sizes.append(1 + width * sizes[-1])
    expanded = 1 + levels + sum(sizes)
    distinct = 1 + 2 * levels + width
    if expanded - distinct > MAX_YAML_ALIAS_NODES:
        with pytest.raises(InputError, match="alias bomb"):
            load_yaml_text(text, "b.yml")
    else:
        doc = load_yaml_text(text, "b.yml")
        assert len(doc) == levels


def amplified(scalar: int, aliases: int) -> str:
    return f'a: &a "{"x" * scalar}"\nb: [' + ", ".join(["*a"] * aliases) + "]\n"


def test_amplification_by_size_is_refused_before_expansion(tmp_path, monkeypatch):
    # the issue's case scaled down (its 8 MB x 4,000 aliases is 33 GB; bench/faults.py runs it
    # whole): one scalar, few aliases (far under the node cap), but the aliases add more text
    # than the cap (here 1 MiB instead of 16). Keys "a" and "b" are 2 characters.
    import kgqa.load.jsonio as jsonio

    monkeypatch.setattr(jsonio, "MAX_YAML_ALIAS_BYTES", 1 << 20)
    scalar = 64 << 10
    aliases = jsonio.MAX_YAML_ALIAS_BYTES // scalar + 1
    p = tmp_path / "questions.yml"
    p.write_text(amplified(scalar, aliases), encoding="utf-8")
    with pytest.raises(InputError, match=f"to {scalar * (aliases + 1) + 2:,} .*alias bomb"):
        read_yaml(p)
    with pytest.raises(InputError, match="alias bomb"):
        load_dataset(p, format="text2sparql")
    doc = load_yaml_text(amplified(scalar, aliases - 1), "ok.yml")  # exactly at the cap: loads
    assert len(doc["b"]) == aliases - 1 and doc["b"][0] is doc["a"]


@settings(max_examples=30, deadline=None)
@given(scalar=st.integers(0, 5000), aliases=st.integers(0, 50), cap=st.integers(0, 100_000))
def test_refused_exactly_when_aliases_add_more_text_than_the_cap(scalar, aliases, cap):
    import kgqa.load.jsonio as jsonio

    old = jsonio.MAX_YAML_ALIAS_BYTES
    jsonio.MAX_YAML_ALIAS_BYTES = cap
    try:
        text = amplified(scalar, aliases)
        added = scalar * aliases
        if added > cap:
            with pytest.raises(InputError, match="characters of text"):
                load_yaml_text(text, "b.yml")
        else:
            assert load_yaml_text(text, "b.yml")["b"] == ["x" * scalar] * aliases
    finally:
        jsonio.MAX_YAML_ALIAS_BYTES = old
