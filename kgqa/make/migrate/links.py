"""Entity links and entity mapping (Azmy et al. 2018, section 4.1).

Links come from any mix of

- RDF files (N-Triples, Turtle, N-Quads, TriG, RDF/XML; plain, ``.gz`` or ``.bz2``) holding
  ``owl:sameAs`` triples (or other link predicates) **in either direction**;
- TSV/CSV files of two columns (``source<TAB>target``; a header row without IRIs is skipped);
- links stored in the target KG itself (``--links target``).

A link is taken as undirected: for a source IRI, the candidates are all IRIs linked to it that
**occur in the target KG** (checked by a query), so the same file works whichever side its
subjects are on. Only links touching the IRIs being mapped are kept in memory, so a
multi-million-line link dump streams through.

Each source IRI gets an :class:`EntityMapping` saying how it was mapped: ``link`` (a link
file), ``target-link`` (a link stored in the target KG), ``identity`` (the same IRI occurs in
the target KG), ``label`` (fallback: the source label equals a target label; always marked,
never silent), or ``unmapped``. Several candidates (a real entity and a bare "twin", say) are
recorded and chosen between by evidence, never by sort order
(:meth:`EntityMapper.choose`): pages that are not redirect/disambiguation pages first, then the
most neighbours shared with the source entity (its source neighbours mapped through the
links; source KG needed), then the most triples on the target (a bare twin has few); the
choice and its evidence are recorded in the mapping's ``note``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path


from kgqa.load.links import OWL_SAMEAS, read_pairs
from kgqa.make.migrate.kg import KG, iri_ref

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"

TARGET = "target"  # the --links value that means "links stored in the target KG"


@dataclass
class EntityMapping:
    source: str
    target: str | None
    how: str  # link | target-link | identity | label | unmapped
    candidates: list[str] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict:
        d = {"source": self.source, "target": self.target, "how": self.how}
        if len(self.candidates) > 1:
            d["candidates"] = self.candidates
        if self.note:
            d["note"] = self.note
        return d


class Links:
    """Undirected links between IRIs, restricted to those touching ``wanted`` (when given)."""

    def __init__(self) -> None:
        self.pairs: dict[str, set[str]] = {}
        self.sources: list[str] = []
        self.in_target = False

    def add(self, a: str, b: str) -> None:
        if a == b:
            return
        self.pairs.setdefault(a, set()).add(b)
        self.pairs.setdefault(b, set()).add(a)

    def linked(self, iri: str) -> list[str]:
        return sorted(self.pairs.get(iri, ()))

    @classmethod
    def load(cls, specs: Sequence[str | Path], wanted: set[str] | None = None,
             predicates: Sequence[str] = (OWL_SAMEAS,)) -> "Links":
        """Links from link files (read by :func:`kgqa.load.links.read_pairs`: RDF or TSV/CSV,
        compressed or not) and the word ``target`` (links stored in the target KG); only pairs
        touching ``wanted`` are kept (when given)."""
        links = cls()
        for spec in specs:
            if str(spec) == TARGET:
                links.in_target = True
                links.sources.append(TARGET)
                continue
            links.sources.append(str(spec))
            for a, b in read_pairs(spec, predicates):
                if wanted is None or a in wanted or b in wanted:
                    links.add(a, b)
        return links


class EntityMapper:
    """Maps source IRIs to target IRIs; results are memoised per IRI."""

    def __init__(self, target: KG, links: Links, *, source: KG | None = None, label_fallback: bool = False,
                 label_predicate: str = RDFS_LABEL, link_predicates: Sequence[str] = (OWL_SAMEAS,),
                 special: Iterable[str] = ()):
        self.target = target
        self.links = links
        self.source = source
        self.label_fallback = label_fallback
        self.label_predicate = label_predicate
        self.link_predicates = tuple(link_predicates)
        self.special = tuple(special)
        self.memo: dict[str, EntityMapping] = {}

    def map(self, iris: Iterable[str]) -> dict[str, EntityMapping]:
        todo = [i for i in dict.fromkeys(iris) if i not in self.memo]
        if todo:
            self._map(todo)
        return {i: self.memo[i] for i in dict.fromkeys(iris)}

    def _map(self, todo: list[str]) -> None:
        cands: dict[str, tuple[str, list[str]]] = {}
        file_links = {i: self.links.linked(i) for i in todo}
        target_links: dict[str, list[str]] = {}
        if self.links.in_target:
            for lp in self.link_predicates:
                for k, v in self.target.sameas(todo, lp).items():
                    target_links[k] = sorted(set(target_links.get(k, [])) | set(v))
        everything = set(todo) | {c for v in file_links.values() for c in v} | {c for v in target_links.values() for c in v}
        present = self.target.existing(everything)
        special_out = self.target.objects(sorted(present), self.special) if self.special else {}
        for i in todo:
            fl = [c for c in file_links[i] if c in present]
            tl = [c for c in target_links.get(i, []) if c in present and c not in fl]
            if fl:
                cands[i] = ("link", fl)
            elif tl:
                cands[i] = ("target-link", tl)
            elif i in present:
                cands[i] = ("identity", [i])
        missing = [i for i in todo if i not in cands]
        if missing and self.label_fallback and self.source is not None:
            labels = self.source.labels(missing, self.label_predicate)
            index = self.target.by_label({lab for v in labels.values() for lab in v}, self.label_predicate)
            for i in missing:
                hits = sorted({t for lab in labels.get(i, []) for t in index.get(lab.casefold(), [])})
                if hits:
                    cands[i] = ("label", hits)
        for i in todo:
            if i not in cands:
                note = ""
                if file_links[i]:
                    note = f"linked to {', '.join(file_links[i][:3])}, absent from the target KG"
                self.memo[i] = EntityMapping(i, None, "unmapped", file_links[i][:5], note)
                continue
            how, cs = cands[i]
            plain = [c for c in cs if c not in special_out]
            chosen, note = self.choose(i, plain or cs) if len(cs) > 1 else (cs[0], "")
            self.memo[i] = EntityMapping(i, chosen, how, cs, note)

    def choose(self, source_iri: str, candidates: Sequence[str]) -> tuple[str, str]:
        """The candidate with the most evidence for ``source_iri`` and a note saying why: most
        neighbours shared with the source entity (its source neighbours mapped through the
        links; needs the source KG), then most triples on the target. A tie on both is said."""
        cs = sorted(candidates)
        if len(cs) == 1:
            return cs[0], ""
        shared = self.shared_neighbours(source_iri, cs)
        degree = self.target.degrees(cs)
        ranked = sorted(cs, key=lambda c: (-shared.get(c, 0), -degree.get(c, 0), c))
        best, second = ranked[0], ranked[1]
        why = ", ".join(f"{c}: {shared.get(c, 0)} shared neighbours, {degree.get(c, 0)} triples" for c in ranked[:3])
        tie = (shared.get(best, 0), degree.get(best, 0)) == (shared.get(second, 0), degree.get(second, 0))
        return best, (f"{len(cs)} candidates, no evidence tells them apart ({why}); chose {best}" if tie else
                      f"{len(cs)} candidates; chose by evidence ({why})")

    def shared_neighbours(self, source_iri: str, candidates: Sequence[str]) -> dict[str, int]:
        """Per candidate: how many of the source entity's neighbours (IRIs one triple away on
        the source KG, at most 200, mapped through the link files) it is joined to on the
        target. Empty without a source KG."""
        if self.source is None:
            return {}
        r = self.source.rows([
            f"SELECT DISTINCT ?n WHERE {{ {{ {iri_ref(source_iri)} ?p ?n }} UNION {{ ?n ?p {iri_ref(source_iri)} }} "
            f"FILTER(isIRI(?n) && ?p != <{OWL_SAMEAS}>) }} ORDER BY ?n LIMIT 200"])[0]
        if isinstance(r, str):
            return {}
        mapped = sorted({t for row in r for t in (self.links.linked(row[0].value) or [row[0].value])})
        if not mapped:
            return {}
        vals = " ".join(iri_ref(x) for x in mapped)
        out = {}
        for c in candidates:
            out[c] = self.target.count(f"VALUES ?n {{ {vals} }} {{ {iri_ref(c)} ?p ?n }} UNION {{ ?n ?p {iri_ref(c)} }}") or 0
        return out
