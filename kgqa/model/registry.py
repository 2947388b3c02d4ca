"""One generic registry for kgqa's pluggable parts (measures, formats, query features, dataset
entries, degradations): named entries, aliases, lazy loading of the modules that register
them, duplicate detection and an error that lists what is known.

    >>> r = Registry("colour")
    >>> _ = r.register("red", 1, aliases=("rouge",))
    >>> r["rouge"], "red" in r, r.names()
    (1, True, ['red'])
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """Entries by name (a read-only :class:`Mapping`; aliases resolve on lookup but are not
    iterated). ``modules`` are imported on first access: each registers its own entries.
    ``case_insensitive`` lookups fall back to a case-insensitive match."""

    def __init__(self, kind: str, *, modules: Sequence[str] = (), case_insensitive: bool = False):
        self.kind = kind
        self.modules = list(modules)
        self.case_insensitive = case_insensitive
        self._entries: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        self._loaded = not self.modules

    # ------------------------------------------------------------------ registering

    def register(self, name: str, entry: T, *, aliases: Sequence[str] = (), replace: bool = False) -> T:
        """Add ``entry`` under ``name`` (and ``aliases``); a name taken by another entry raises
        ValueError unless ``replace``."""
        for n in (name, *aliases):
            current = self._entries.get(n) if n == name else self._entries.get(self._aliases.get(n, ""))
            if current is not None and current is not entry and not replace:
                raise ValueError(f"{self.kind} {n} registered twice")
        self._entries[name] = entry
        for a in aliases:
            if a != name:
                self._aliases[a] = name
        return entry

    def decorator(self, name: str) -> Callable[[T], T]:
        """``@registry.decorator("name")`` registers the decorated object."""
        def deco(entry: T) -> T:
            return self.register(name, entry)

        return deco

    # ------------------------------------------------------------------ lookup

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self._loaded = True
            for mod in self.modules:
                importlib.import_module(mod)

    def _load_until(self, name: str) -> None:
        """Import the registering modules in order until one has registered ``name`` exactly (a
        lookup by exact name then imports no module it does not need: answers-only scoring
        does not import the query measures and their SPARQL lexer)."""
        for mod in self.modules:
            if self._loaded or name in self._entries or name in self._aliases:
                return
            importlib.import_module(mod)
        self._loaded = True

    def find(self, name: str) -> T | None:
        """The entry for ``name`` or an alias (case-insensitively if so configured), else None."""
        self._load_until(name)
        if name in self._entries:
            return self._entries[name]
        if name in self._aliases:
            return self._entries[self._aliases[name]]
        self._ensure_loaded()
        if self.case_insensitive:
            lower = {k.lower(): k for k in (*self._entries, *self._aliases)}
            if name.lower() in lower:
                return self.find(lower[name.lower()])
        return None

    def names(self) -> list[str]:
        self._ensure_loaded()
        return sorted(self._entries)

    def __getitem__(self, name: str) -> T:
        entry = self.find(name)
        if entry is None:
            raise KeyError(name)
        return entry

    def __contains__(self, name: object) -> bool:
        """Exact names and aliases (no case folding)."""
        if not isinstance(name, str):
            return False
        self._ensure_loaded()
        return name in self._entries or name in self._aliases

    def __iter__(self) -> Iterator[str]:
        self._ensure_loaded()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._ensure_loaded()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._entries)} entries)"
