"""Profiles: data (YAML files in ``kgqa/score/profiles/``) that select measures, their names,
the term matching, the answer view and the edge-case rules of one official convention.

Nothing about a convention is coded as an if-chain elsewhere: to add one, add a YAML file.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kgqa import lazy
from kgqa.model.signature import Signature
from kgqa.model.terms import IriLinks, TermMatching, TextLabels
from kgqa.model import InputError
from kgqa.model.suggest import did_you_mean

if TYPE_CHECKING:
    from kgqa.score.measures import Measure

#: the command line imports this module while it is built (the --profile help lists the profile
#: files): the measures and the YAML reader only when a profile is read
_measures = lazy.module("kgqa.score.measures")
_jsonio = lazy.module("kgqa.load.jsonio")

PROFILE_DIR = Path(__file__).parent / "profiles"

View = Literal["values", "tuples", "list"]
FailureRule = Literal["zero", "empty"]
MissingRule = Literal["zero", "empty", "skip"]


@dataclass(frozen=True)
class MeasureSpec:
    """One measure as a profile shows it: its label (the official tool's name for it), the
    bound measure, and over which questions it is averaged (``all`` or ``processed``: those
    with a non-empty system answer, as QALD's evaluation.rb also reports)."""

    label: str
    measure: Measure
    over: Literal["all", "processed"] = "all"


@dataclass(frozen=True)
class Profile:
    """A scoring convention.

    - ``matching``: how terms compare (:class:`~kgqa.model.terms.TermMatching`).
    - ``view``: ``values`` (all bound cells flattened to a set), ``tuples`` (each row a tuple,
      column order and names ignored) or ``list`` (flattened values with duplicates kept).
    - ``failures``: a parse/execution error, timeout or refusal is scored ``zero`` on every
      measure (and counted apart), or treated as an ``empty`` answer (what the legacy tools do).
    - ``missing``: a question the run lacks is scored ``zero``, treated as ``empty``, or
      ``skip``-ped (left out of the averages and listed).
    - ``qrels``: use Text2SPARQL's graded bags where the data has them (gold: grade > 0 is
      relevant; system: every key is retrieved), exactly as pytrec_eval reads them.
    """

    name: str
    description: str
    reference: str
    matching: TermMatching
    view: View
    failures: FailureRule
    missing: MissingRule
    measures: tuple[MeasureSpec, ...]
    qrels: bool = False
    source: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def signature_parts(self) -> dict[str, str]:
        return {
            "profile": self.name,
            "match": self.matching.signature(),
            "view": self.view,
            "fail": self.failures,
            "missing": self.missing,
            **({"qrels": "yes"} if self.qrels else {}),
        }

    def signature(self) -> Signature:
        """The profile's own part of every score signature (see :mod:`kgqa.model.signature`)."""
        return Signature.build(self.signature_parts())

    def with_measures(self, measures: "list[Measure | MeasureSpec]") -> "Profile":
        specs = tuple(m if isinstance(m, MeasureSpec) else MeasureSpec(m.key, m) for m in measures)
        return Profile(**{**self.__dict__, "measures": specs})

    def with_view(self, view: str) -> "Profile":
        """This profile comparing answers under another view (values, tuples or list)."""
        if view not in ("values", "tuples", "list"):
            raise ValueError(f"unknown answer view {view!r}{did_you_mean(view, ['values', 'tuples', 'list'])}; "
                             "expected values, tuples or list")
        return Profile(**{**self.__dict__, "view": view})

    def with_links(self, links: "IriLinks | None") -> "Profile":
        """This profile comparing IRIs by meaning (:class:`~kgqa.model.terms.IriLinks`: owl:sameAs,
        redirects, DBpedia variants), as GERBIL does; the signature's ``match:`` names the links."""

        return Profile(**{**self.__dict__, "matching": replace(self.matching, links=links)})

    def with_labels(self, labels: "TextLabels | None") -> "Profile":
        """This profile matching text answers against entity labels (``match:labels``)."""

        return Profile(**{**self.__dict__, "matching": replace(self.matching, labels=labels)})

    def select(self, text: str | list[str]) -> "Profile":
        """This profile with the measures named in ``text`` (comma-separated): a label the profile
        prints (``set_F``, ``Macro F1 QALD``) selects that measure under its label; anything else
        is parsed as a measure spec (``F1(rule=qald)``)."""
        labels = {s.label: s for s in self.measures}
        lower = {s.label.lower(): s for s in self.measures}
        split = _measures.split_list
        specs = split(text) if isinstance(text, str) else [p for t in text for p in split(t)]
        chosen: list[Measure | MeasureSpec] = []
        for spec in specs:
            hit = labels.get(spec.strip()) or lower.get(spec.strip().lower())
            chosen.append(hit if hit is not None else _measures.parse(spec, extra_names=list(labels)))
        return self.with_measures(chosen)


_ALLOWED = {"name", "description", "reference", "matching", "view", "failures", "missing", "measures", "qrels"}


def _from_dict(doc: dict[str, Any], source: str) -> Profile:
    unknown = set(doc) - _ALLOWED
    if unknown:
        raise ValueError(f"{source}: unknown profile keys {sorted(unknown)}")
    try:
        matching = TermMatching(**(doc.get("matching") or {}))
        specs = []
        for i, m in enumerate(doc["measures"]):
            spec = _measures.parse(m["measure"])
            specs.append(MeasureSpec(str(m.get("label", spec.key)), spec, m.get("over", "all")))
        return Profile(
            name=doc["name"],
            description=" ".join(str(doc.get("description", "")).split()),
            reference=str(doc.get("reference", "")),
            matching=matching,
            view=doc.get("view", "values"),
            failures=doc.get("failures", "zero"),
            missing=doc.get("missing", "zero"),
            measures=tuple(specs),
            qrels=bool(doc.get("qrels", False)),
            source=source,
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{source}: invalid profile: {e}") from None


def _read(path: Path, source: str) -> Profile:
    try:
        doc = _jsonio.load_yaml_text(path.read_text(encoding="utf-8"), source, "profile")
    except InputError as e:  # bounded expansion: a profile is YAML from the user
        raise ValueError(str(e)) from None
    return _from_dict(doc, source)


@lru_cache(maxsize=None)
def _builtin_one(name: str) -> Profile:
    """The built-in profile in ``<name>.yaml`` (read on first use: listing names parses nothing)."""
    p = _read(PROFILE_DIR / f"{name}.yaml", f"{name}.yaml")
    if p.name != name:
        raise ValueError(f"{name}.yaml: the profile is named {p.name!r}; a built-in profile's file is named after it")
    return p


@lru_cache(maxsize=None)
def _names() -> tuple[str, ...]:
    return tuple(sorted(path.stem for path in PROFILE_DIR.glob("*.yaml")))


def names() -> list[str]:
    """The built-in profiles' names: their files' names (nothing is parsed)."""
    return list(_names())


def get(name_or_path: str) -> Profile:
    """A built-in profile by name, or a profile YAML file of the user's."""
    if name_or_path in _names():
        return _builtin_one(name_or_path)
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") and path.exists():
        return _read(path, str(path))

    raise ValueError(f"unknown profile {name_or_path!r}{did_you_mean(name_or_path, names())}; "
                     f"built-in: {', '.join(names())} (or a .yaml file)")
