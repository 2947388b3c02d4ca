"""Alignment of what links do not cover (issue 26): classes and the target's redirect and
disambiguation predicates, from evidence kgqa already has.

- :func:`align_classes`: a source class with no link gets the target class most of its
  linked instances have (a seeded sample of its instances on the source KG, mapped through the
  links; their direct ``rdf:type`` on the target). It needs the majority of the mapped
  instances (``min_share``) and at least ``min(min_support, mapped)`` of them; ties go to the
  class whose label equals the source class's label, then to the class whose instance count on
  the target is closest to the source class's. Every alignment comes with its evidence.
- :func:`find_page_predicates`: the target's redirect / disambiguation predicates, from its
  statistics: predicates whose subjects are *pages* (no ``rdf:type``, nothing but labels and
  that one predicate) that entities are linked to, used (on the whole target) by pages for at
  least :data:`PAGE_SHARE` of its subjects (two pages at least), whose pages mostly point at
  entities nobody links to (a link points at the page, not past it); a predicate whose pages point at
  one entity each is a redirect predicate, at several, a disambiguation predicate.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

from kgqa.make.migrate.kg import KG, RDF_TYPE, iri_ref
from kgqa.model import IRI, Literal
from kgqa.make.migrate.scale import Scale

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
CLASS_SAMPLE = 60
#: share of a predicate's subjects on the whole target that must be pages (see find_page_predicates)
PAGE_SHARE = 0.9


def align_classes(classes: Sequence[str], source: KG, target: KG, mapper, *, min_support: int = 5,
                  min_share: float = 0.5, seed: int = 0) -> dict[str, tuple[str | None, str]]:
    """Source class IRI -> (target class or None, evidence) for each of ``classes`` that has
    instances on the source KG (others are left out)."""
    if not classes:
        return {}
    vals = " ".join(iri_ref(c) for c in classes)
    r = source.rows([f"SELECT ?c (COUNT(DISTINCT ?x) AS ?n) WHERE {{ VALUES ?c {{ {vals} }} ?x <{RDF_TYPE}> ?c }} "
                     "GROUP BY ?c"])[0]
    sizes = {} if isinstance(r, str) else {c.value: int(n.value) for c, n in r if isinstance(c, IRI)}
    out: dict[str, tuple[str | None, str]] = {}
    labels_src = source.labels([c for c in classes if c in sizes], RDFS_LABEL)
    for c in classes:
        if not sizes.get(c):
            continue
        rows = source.rows([f"SELECT ?x WHERE {{ ?x <{RDF_TYPE}> {iri_ref(c)} FILTER(isIRI(?x)) }} "
                            f'ORDER BY MD5(CONCAT(STR(?x), "{int(seed)}")) LIMIT {CLASS_SAMPLE}'])[0]
        inst = [] if isinstance(rows, str) else [row[0].value for row in rows]
        mapped = [m.target for m in mapper.map(inst).values() if m.target]
        types = target.objects(mapped, [RDF_TYPE])
        votes = Counter(t for x in mapped for t in types.get(x, []))
        if not votes:
            out[c] = (None, f"none of {len(inst)} sampled instances has a typed target ({len(mapped)} mapped)")
            continue
        need = max(1, math.ceil(min_share * len(mapped)), min(min_support, len(mapped)))
        cands = [t for t, v in votes.items() if v >= need]
        if not cands:
            top, v = votes.most_common(1)[0]
            out[c] = (None, f"no target class has {need} of {len(mapped)} linked instances (best {top}: {v})")
            continue
        labels_t = target.labels(cands, RDFS_LABEL)
        counts = _instances(target, cands)
        own = {x.casefold() for x in labels_src.get(c, [])}

        def key(t: str):
            same_label = bool(own & {x.casefold() for x in labels_t.get(t, [])})
            return (-votes[t], not same_label, abs(counts.get(t, 0) - sizes[c]), t)

        best = sorted(cands, key=key)[0]
        others = ", ".join(f"{t} {votes[t]}" for t in sorted(cands, key=key)[1:3])
        out[c] = (best, f"{votes[best]} of {len(mapped)} linked instances (of {len(inst)} sampled) are typed {best}"
                        + (f"; also {others}" if others else ""))
    return out


def _instances(kg: KG, classes: Iterable[str]) -> dict[str, int]:
    cs = sorted(set(classes))
    if not cs:
        return {}
    vals = " ".join(iri_ref(c) for c in cs)
    r = kg.rows([f"SELECT ?c (COUNT(DISTINCT ?x) AS ?n) WHERE {{ VALUES ?c {{ {vals} }} ?x <{RDF_TYPE}> ?c }} GROUP BY ?c"])[0]
    return {} if isinstance(r, str) else {c.value: int(n.value) for c, n in r if isinstance(c, IRI)}


def find_page_predicates(target: KG, linked: Iterable[str], *, limit: int = 5000) -> dict[str, tuple[str, int]]:
    """Predicate -> (``redirect`` | ``disambiguation``, pages) for the target's page
    predicates (module docstring), judged on the ``linked`` target IRIs (at most ``limit``)."""
    linked_set = set(linked)
    todo = sorted(linked_set)[:limit]
    if not todo:
        return {}
    found: dict[str, Counter] = {}
    pages: dict[str, set[str]] = {}
    for i in range(0, len(todo), 200):
        vals = " ".join(iri_ref(x) for x in todo[i:i + 200])
        q = (f"SELECT ?v ?p (COUNT(DISTINCT ?o) AS ?n) (SAMPLE(?o) AS ?one) WHERE {{ VALUES ?v {{ {vals} }} ?v ?p ?o . "
             "FILTER(isIRI(?o)) "
             f"FILTER NOT EXISTS {{ ?v <{RDF_TYPE}> ?t }} "
             f"FILTER NOT EXISTS {{ ?v ?q ?o2 . FILTER(?q != ?p && ?q != <{RDFS_LABEL}>) }} }} GROUP BY ?v ?p")
        r = target.rows([q])[0]
        if isinstance(r, str):
            continue
        for v, p, n, one in r:
            if isinstance(p, IRI) and isinstance(n, Literal) and p.value != RDF_TYPE:
                found.setdefault(p.value, Counter())[int(n.value) > 1] += 1
                pages.setdefault(p.value, set()).add(v.value)
                if isinstance(one, IRI) and one.value in linked_set:  # a page points past the links
                    found[p.value]["linked-object"] += 1
    out = {}
    for p, c in found.items():
        # a page predicate is used (almost) only by pages, on the whole target
        page = (f"FILTER NOT EXISTS {{ ?s <{RDF_TYPE}> ?t }} "
                f"FILTER NOT EXISTS {{ ?s ?q ?o2 . FILTER(?q != {iri_ref(p)} && ?q != <{RDFS_LABEL}>) }}")
        r = target.rows([f"SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s {iri_ref(p)} ?o }}",
                         f"SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s {iri_ref(p)} ?o {page} }}"])
        if any(isinstance(x, str) or not x for x in r):
            continue
        r = [(r[0][0][0], r[1][0][0])]
        if len(pages[p]) < 2 or c["linked-object"] * 2 >= c[True] + c[False]:
            continue  # its "pages" point at linked entities: ordinary facts of sparse entities
        total, n_pages = int(r[0][0].value), int(r[0][1].value)
        if total == 0 or n_pages < PAGE_SHARE * total or n_pages < 2:
            continue
        out[p] = ("disambiguation" if c[True] >= c[False] else "redirect", len(pages[p]))
    return out


def value_transform(pairs: Sequence[tuple[str, Literal]], target: KG, *, min_share: float = 0.5,
                    min_support: int = 5):
    """The target predicate holding a literal-valued source predicate's values transformed (a
    unit change, a scaled number): ``pairs`` are (target subject, source value); when most
    subjects have a target predicate whose numeric value is the source value times one constant
    factor other than 1, that :class:`~kgqa.make.migrate.scale.Scale`, else None."""

    nums = []
    for s, o in pairs:
        try:
            nums.append((s, float(o.value)))
        except ValueError:
            continue
    if not nums:
        return None
    ratios = _ratios(nums, target)
    need = max(1, math.ceil(min_share * len(nums)), min(min_support, math.ceil(0.75 * len(nums))))
    best = None
    for p, c in sorted(ratios.items()):
        factor, k = c.most_common(1)[0]
        if factor > 0 and factor != 1.0 and k >= need and (best is None or k > best[2]):
            best = (p, factor, k)
    if best is None:
        return None
    return Scale(best[0], best[1], best[2], len(nums))


def _ratios(nums: list[tuple[str, float]], target: KG) -> dict[str, Counter]:
    """Target predicate -> Counter of (target value / source value) over ``nums``."""
    subs = sorted({s for s, _ in nums})
    vals = " ".join(iri_ref(x) for x in subs[:200])
    r = target.rows([f"SELECT ?v ?p ?x WHERE {{ VALUES ?v {{ {vals} }} ?v ?p ?x FILTER(isNumeric(?x)) }}"])[0]
    if isinstance(r, str):
        return {}
    by: dict[tuple[str, str], list[float]] = {}
    for v, p, x in r:
        try:
            by.setdefault((v.value, p.value), []).append(float(x.value))
        except ValueError:
            continue
    ratios: dict[str, Counter] = {}
    for s, val in nums:
        for (v, p), xs in by.items():
            if v == s:
                for x in xs:
                    if val != 0 and x != 0:
                        ratios.setdefault(p, Counter())[float(f"{x / val:.6g}")] += 1
    return ratios
