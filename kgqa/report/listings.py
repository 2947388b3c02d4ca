"""Terminal listings of what kgqa knows: measures and profiles, short by default, whole on demand."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from kgqa.score import measures as registry
from kgqa.score import profiles
from kgqa.model import InputError


def _summary(text: str) -> str:
    """The first sentence of a definition: up to the first '.' outside parentheses that ends a
    word (followed by a space or the end)."""
    text = " ".join(text.split())
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch == "." and depth == 0 and (i + 1 == len(text) or text[i + 1] == " ") and i > 0 and text[i - 1] != ".":
            return text[: i + 1]
    return text


def _params(d) -> str:
    return "\n".join(f"{p.name}={p.default}" + (f" ({'|'.join(map(str, p.choices))})" if p.choices else "")
                     for p in d.params) or "-"


def print_measures(console: Console, names: Sequence[str] = ()) -> None:
    """Every measure on one row (name, parameters, first sentence of its definition); with
    ``names``, those measures' whole definitions."""
    defs = registry.all_measures()
    if names:
        wanted = []
        for n in names:
            d = registry.parse(n).defn if "(" in n else next((x for x in defs if x.name.lower() == n.lower()), None)
            if d is None:
                registry.parse(n)  # raises with "did you mean"
            wanted.append(d)
        for d in wanted:
            console.print(f"[bold]{d.name}[/]", highlight=False)
            console.print(f"  parameters: {_params(d).replace(chr(10), ', ')}", highlight=False)
            console.print(f"  {d.definition}", highlight=False)
            console.print()
        return
    t = Table(title=None, show_lines=False, pad_edge=False)
    t.add_column("measure", style="bold", no_wrap=True)
    t.add_column("parameters (default, choices)", overflow="fold")
    t.add_column("what it is", overflow="fold")
    for d in defs:
        t.add_row(d.name, _params(d), _summary(d.definition))
    console.print(f"[bold]kgqa measures[/] ({len(defs)}; `kgqa measures NAME` prints a whole definition)",
                  highlight=False)
    console.print(t)


def print_profiles(console: Console, names: Sequence[str] = ()) -> None:
    """One row per profile (what it reproduces, how it compares, its measure labels); with
    ``names``, each profile in full."""
    if names:
        for n in names:
            try:
                p = profiles.get(n)
            except ValueError as e:
                raise InputError("profile", str(e)) from None
            console.print(f"[bold]{p.name}[/] — {p.reference}", highlight=False)
            console.print(f"  {' '.join(p.description.split())}", highlight=False)
            for s in p.measures:
                over = " (over processed questions)" if s.over != "all" else ""
                console.print(f"  {s.label} = {s.measure.full}{over}", highlight=False)
            console.print(f"  signature: {p.signature()}", highlight=False, soft_wrap=True)
            console.print()
        return
    t = Table(pad_edge=False)
    t.add_column("profile", style="bold", no_wrap=True)
    t.add_column("reproduces", overflow="fold")
    t.add_column("answers", no_wrap=True)
    t.add_column("measures", overflow="fold")
    for name in profiles.names():
        p = profiles.get(name)
        how = f"{p.matching.mode}, {p.view}\nfail:{p.failures}\nmissing:{p.missing}"
        labels = [s.label for s in p.measures]
        shown = ", ".join(labels[:8]) + (f" and {len(labels) - 8} more" if len(labels) > 8 else "")
        t.add_row(p.name, p.reference, how, shown)
    console.print("[bold]kgqa profiles[/] (`kgqa profiles NAME` prints one in full)", highlight=False)
    console.print(t)
