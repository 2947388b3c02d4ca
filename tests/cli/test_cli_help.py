"""Help that teaches: every command shows typed metavars and examples; typos get suggestions."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout

import pytest

from kgqa.cli import command, main
from kgqa.cli.helptext import EXAMPLES


def _paths(cmd, prefix=""):
    subs = getattr(cmd, "commands", None) or {}
    for name, sub in subs.items():
        path = f"{prefix} {name}".strip()
        yield path, sub
        yield from _paths(sub, path)


ALL = [p for p, _ in _paths(command())]


def _help(path: str) -> str:
    buf = io.StringIO()
    with redirect_stdout(buf):
        try:
            main([*path.split(), "--help"])
        except SystemExit as e:
            assert e.code in (0, None)
    return buf.getvalue()


def test_every_command_has_examples():
    assert set(ALL) <= set(EXAMPLES), sorted(set(ALL) - set(EXAMPLES))


@pytest.mark.parametrize("path", ALL)
def test_help_has_typed_metavars_and_examples(path):
    text = _help(path)
    assert "Examples:" in text
    assert f"$ kgqa {path.split()[0]}" in text
    assert not re.search(r"<(str|bool|int|float|list\[str\]|path)>", text), text
    assert "{dataset}" not in text and "{runs}" not in text


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code in (0, None)
    from kgqa import __version__

    assert capsys.readouterr().out.strip() == f"kgqa {__version__}"
