"""The score signature: one object every part of a run contributes to, rendered once.

A :class:`Signature` is an immutable, ordered set of ``key:value`` parts behind the kgqa
version. The profile contributes its convention (``profile``, ``match``, ``view``, ``fail``,
``missing``, ``qrels``), the selection ``lang`` and the gold source ``gold``, a replaced measure
list ``measures``, the engine ``engine``, the execution policy ``normalise`` (and any non-default
cap), the answer source ``answers``, and the scorer the number of scored questions ``n``.

It *is* a string (``str(sig)`` is the rendering ``kgqa:0.1.0|profile:gerbil|...|n:1``, so JSON,
comparisons and saved files keep working) with structured access on top::

    >>> s = Signature.build({"profile": "kgqa", "lang": "all"}, version="0.1.0")
    >>> str(s)
    'kgqa:0.1.0|profile:kgqa|lang:all'
    >>> s.with_parts(n=3)["n"]
    '3'
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import kgqa


def _render(value: Any) -> str:
    """A part's text: booleans as yes/no; ``|`` (the separator) and newlines percent-encoded so
    a rendered signature always reads back into the same parts."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, _Rendered):
        return str(value)
    return str(value).replace("%", "%25").replace("|", "%7C").replace("\n", "%0A").replace("\r", "%0D")


class _Rendered(str):
    """A part value that is already in its rendered form."""


class Signature(str):
    """Ordered ``key:value`` parts after ``kgqa:<version>``; empty values (None, "") are left out.
    Build with :meth:`build`, extend with :meth:`with_parts`, read back with :meth:`parse`."""

    _parts: tuple[tuple[str, str], ...]
    version: str

    def __new__(cls, text: str = "") -> "Signature":
        parsed = cls._split(text)
        obj = super().__new__(cls, text)
        obj.version, obj._parts = parsed
        return obj

    @staticmethod
    def _split(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        version, parts = "", []
        for i, piece in enumerate(t for t in text.split("|") if t):
            k, _, v = piece.partition(":")
            if i == 0 and k == "kgqa":
                version = v
            else:
                parts.append((k, v))
        return version, tuple(parts)

    @classmethod
    def build(cls, parts: Mapping[str, Any] | Iterable[tuple[str, Any]] = (), *, version: str | None = None) -> "Signature":
        """A signature from ``parts`` in order (later keys replace earlier ones in place)."""
        if version is None:
            version = kgqa.__version__
        merged: dict[str, str] = {}
        for k, v in (parts.items() if isinstance(parts, Mapping) else parts):
            if not k or any(c in k for c in ":|\n\r"):
                raise ValueError(f"signature key {k!r}: expected a non-empty name without ':', '|' or newlines")
            if v is None or v == "":
                merged.pop(k, None)
                continue
            merged[k] = _render(v)
        return cls("|".join([f"kgqa:{version}"] + [f"{k}:{v}" for k, v in merged.items()]))

    @classmethod
    def parse(cls, text: str) -> "Signature":
        """The object behind a rendered signature (e.g. read from a saved evaluation)."""
        return text if isinstance(text, Signature) else cls(str(text))

    def with_parts(self, parts: Mapping[str, Any] | None = None, **more: Any) -> "Signature":
        """A new signature: existing keys updated in place, new keys appended (None removes)."""
        upd = {**(parts or {}), **more}
        kept = [(k, _Rendered(v)) for k, v in self._parts]  # already rendered: not encoded twice
        return Signature.build([*kept, *upd.items()], version=self.version)

    @property
    def parts(self) -> dict[str, str]:
        """The parts after the version, in order."""
        return dict(self._parts)

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            return self.parts[key]
        return str.__getitem__(self, key)

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.parts.get(key, default)

    def keys(self) -> Iterator[str]:
        return iter(k for k, _ in self._parts)

    def __repr__(self) -> str:
        return f"Signature({str.__str__(self)!r})"

    def __str__(self) -> str:
        return str.__str__(self)

    def __reduce__(self):
        return (Signature, (str.__str__(self),))
