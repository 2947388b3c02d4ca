"""How a command ends when it does not succeed: one path for every command.

A command never prints an error and exits by itself. It raises:

- :class:`kgqa.model.InputError` (or a subclass) for a mistake in what it was given (a file,
  a record, an option value, a set-up): exit status 2, the message naming the file, the
  record and the fix;
- :class:`Failure` for a command that ran and whose result is a failure (``kgqa datasets
  validate`` found errors: 1; ``kgqa evaluate --strict`` with set-up warnings: 3; Ctrl-C while
  asking a live system: 130), with a message or none when the command has printed it.

:func:`kgqa.cli.main` catches both and calls :func:`exit_with`, the one place that prints the
error line and leaves with a non-zero status (``tests/cli/test_cli_house.py`` checks that no
other module of the command line exits with one).
"""

from __future__ import annotations

import sys
from typing import NoReturn

from rich.markup import escape

from kgqa.model import InputError
from kgqa.report.term import SafeConsole, clean

#: the exit status of an InputError (a usage or set-up mistake), as click's own usage errors
INPUT_ERROR = 2

err = SafeConsole(stderr=True)


class Failure(Exception):
    """A command that ran and failed: ``message`` (None: the command has said why) printed
    after ``label``, then exit status ``code``."""

    def __init__(self, message: str | None, code: int = 1, label: str = "error"):
        super().__init__(message or "")
        self.message, self.code, self.label = message, code, label


def say_error(message: str, label: str = "error") -> None:
    """``label: message`` on stderr: wrapped at words in a terminal, one line when piped (as
    warnings are); control characters from data shown as escapes."""
    err.print(f"[bold red]{label}:[/] {escape(clean(message))}", highlight=False, soft_wrap=not err.is_terminal)


def exit_with(e: BaseException) -> NoReturn:
    """The one exit of a failed command: an :class:`InputError` (status 2), a :class:`Failure`
    (its status) or an unreadable/unwritable file named on the command line (``OSError``:
    status 2, as an input mistake)."""
    if isinstance(e, Failure):
        if e.message:
            say_error(e.message, e.label)
        sys.exit(e.code)
    if isinstance(e, OSError):
        where = f"{e.filename}: " if e.filename else ""
        say_error(f"{where}{e.strerror or e}")
    else:
        say_error(str(e))
    sys.exit(INPUT_ERROR)


__all__ = ["Failure", "InputError", "exit_with", "say_error", "INPUT_ERROR"]
