"""What keeps the test suite independent of the machine that runs it (tests/conftest.py): the
console width, and the switch that makes absent real data a failure instead of a skip."""

from __future__ import annotations

import os

import pytest
from rich.console import Console

from conftest import CONSOLE_WIDTH, no_data, squash


def test_every_test_renders_at_the_fixed_width_whatever_the_shell_says():
    # .ci/run and developers' shells may export COLUMNS=40 (or a terminal may be 300 wide)
    assert os.environ["COLUMNS"] == str(CONSOLE_WIDTH)
    assert Console().width == CONSOLE_WIDTH
    from kgqa.cli import _output

    assert _output.out.width == CONSOLE_WIDTH  # a console made at import time measures again


def test_a_cli_message_longer_than_the_width_matches_once_squashed(tmp_path):
    from kgqa.cli import _output

    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 12)  # a checkout path of 300+ characters
    deep.mkdir(parents=True)
    missing = deep / "no-such-dataset.json"
    console = _output.Console(stderr=True, force_terminal=True)  # a terminal folds at the console width
    with console.capture() as captured:
        _output.say(console, f"{missing}: no such file, and not a registered dataset name", "error: ")
    text = captured.get()
    assert f"{missing}: no such file" not in text  # folded: the path is wider than the console
    assert squash(f"{missing}: no such file, and not a registered dataset name") in squash(text)


def test_absent_data_skips_or_fails_as_the_switch_says(monkeypatch):
    monkeypatch.delenv("KGQA_REQUIRE_DATA", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not found"):
        no_data("x.json not found")
    monkeypatch.setenv("KGQA_REQUIRE_DATA", "1")
    with pytest.raises(pytest.fail.Exception, match="KGQA_REQUIRE_DATA=1: x.json not found"):
        no_data("x.json not found")


def test_ci_sets_the_switch():
    from conftest import REPO

    assert "export KGQA_REQUIRE_DATA=1" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
