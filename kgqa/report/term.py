"""Text for a terminal that no input can take over, and tables that fit it.

- :func:`clean`: control characters (C0 but newline and tab, DEL, C1, and the bidirectional
  overrides) in run ids, answers, KG content or messages are shown as escapes (``\\x1b``), so
  an ESC sequence read from a file is printed, never executed by the terminal.
- :class:`SafeConsole`: a rich console that cleans every string before markup is parsed and
  every segment it renders (rich's own styling is added later and stays intact); the CLI's
  consoles are SafeConsoles.
- :func:`wrap`: text wrapped at word boundaries (a word longer than the width is the only thing
  broken), for warnings and hints.
- :func:`break_iri`: where an IRI may break: only after ``/`` or ``#``.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

#: C0 controls except tab and newline, DEL, C1 controls, and the bidirectional embedding,
#: override and isolate characters (they reorder what the terminal shows).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def clean(text: str, newlines: bool = True) -> str:
    """``text`` with control characters escaped (``\\x1b``); ``newlines=False`` escapes line
    breaks too (one-line cells)."""
    if not newlines:
        text = text.replace("\r", "\\r").replace("\n", "\\n")
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


class SafeConsole(Console):
    """A :class:`rich.console.Console` that never writes a control character taken from data
    (see :func:`clean`)."""

    def render_str(self, text: str, **kwargs):  # type: ignore[override]
        return super().render_str(clean(text), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for seg in super().render(renderable, options):
            if not seg.control and _CONTROL.search(seg.text):
                yield Segment(clean(seg.text), seg.style)
            else:
                yield seg


def wrap(text: str, width: int, indent: str = "", first: str = "") -> str:
    """``text`` wrapped at word boundaries to ``width`` columns, the first line starting with
    ``first`` and the others with ``indent``; a single word longer than a line is the only
    thing broken."""
    return "\n".join(textwrap.wrap(text, width=max(20, width), initial_indent=first, subsequent_indent=indent,
                                   break_long_words=True, break_on_hyphens=False)) or text


_IRI_BREAK = re.compile(r"(?<=[/#])")


def break_iri(text: str) -> list[str]:
    """The pieces of ``text`` between allowed IRI breaks: after each ``/`` or ``#``."""
    return [p for p in _IRI_BREAK.split(text) if p]


def wrap_iris(text: str, width: int) -> str:
    """``text`` with every line longer than ``width`` broken at spaces, or else after a ``/`` or
    ``#`` (never inside an IRI's other characters unless a piece has no such break)."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        cur = ""
        for piece in re.split(r"(?<=[ /#])", line):
            if cur and len(cur) + len(piece) > width:
                out.append(cur.rstrip(" ") if cur.strip() else cur)
                cur = ""
            while len(piece) > width:  # no break point at all: fold
                out.append(piece[:width])
                piece = piece[width:]
            cur += piece
        out.append(cur)
    return "\n".join(out)


class IriWrapped:
    """A renderable made from text wrapped by :func:`wrap_iris` at the width it is printed at,
    less ``margin`` (a panel's border and padding); ``make`` turns the text into the renderable
    (plain text by default, ``lambda t: Syntax(t, "sparql")`` for a query)."""

    def __init__(self, text: str, margin: int = 0, make=None):
        self.text, self.margin, self.make = text, margin, make

    def __rich_console__(self, console: Console, options: ConsoleOptions):
        wrapped = wrap_iris(clean(self.text), max(10, options.max_width - self.margin))
        yield self.make(wrapped) if self.make else Text(wrapped)
