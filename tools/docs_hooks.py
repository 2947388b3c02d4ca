"""MkDocs hook: the measure and profile reference pages are generated from kgqa's registries
when the site is built (``<!-- kgqa:measures -->`` and ``<!-- kgqa:profiles -->`` markers), so
the documentation cannot drift from the code (a measure is described once: in its definition)."""

from __future__ import annotations


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def measures_table() -> str:
    """Markdown table of every registered measure: name, parameters, convention, inputs, definition."""
    from kgqa.score import measures as registry

    rows = ["| measure | parameters (default, choices) | convention | needs | definition |", "|---|---|---|---|---|"]
    for d in registry.all_measures():
        params = ", ".join(_param(p) for p in d.params) or "-"
        rows.append(f"| `{d.name}` | {params} | {_cell(d.convention)} | {_cell(_needs(d))} | {_cell(d.definition)} |")
    return "\n".join(rows)


def _param(p) -> str:
    choices = " (" + "\\|".join(map(str, p.choices)) + ")" if p.choices else ""
    return f"{p.name}={p.default}{choices}"


def _needs(d) -> str:
    """The inputs a measure declares (with its default parameters when they decide them)."""
    inputs = d.inputs
    if callable(inputs):
        inputs = inputs(**{p.name: p.default for p in d.params})
    names = [k for k in inputs.__dataclass_fields__ if getattr(inputs, k)]
    return ", ".join(n.replace("_", " ") for n in names) or "-"


def profiles_table() -> str:
    """Markdown table of every shipped profile: what it reproduces, matching, view, rules, labels."""
    from kgqa.score import profiles

    rows = ["| profile | reproduces | matching, view | failures, missing | measures (label = measure) |",
            "|---|---|---|---|---|"]
    for name in profiles.names():
        p = profiles.get(name)
        labels = "<br>".join(f"{_cell(s.label)} = `{_cell(s.measure.full)}`" for s in p.measures)
        rows.append(f"| `{p.name}`{' (default)' if p.name == 'kgqa' else ''} | {_cell(p.reference)} | "
                    f"{p.matching.mode}, {p.view} | {p.failures}, {p.missing} | {labels} |")
    return "\n".join(rows)


MARKERS = {"<!-- kgqa:measures -->": measures_table, "<!-- kgqa:profiles -->": profiles_table}


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (MkDocs hook signature)
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown
