"""KG pairs derived from real KGs for ``kgqa migrate`` tests (issue 37): a transformation spec
chosen from a KG's own statistics for ``tools/derive_kg_pair.py`` (renamed namespaces, two
relations merged into one, an inverted relation, a relation split over an extra node, bare
twins, a linear unit change), and the truth per item (the transformation is known)."""

from __future__ import annotations

from collections import Counter

import pyoxigraph as ox

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
KEEP = ("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "http://www.w3.org/2000/01/rdf-schema#",
        "http://www.w3.org/2002/07/owl#", "http://www.w3.org/2001/XMLSchema#")
T = "http://target.example.org/"


def _ns(iri: str) -> str:
    cut = max(iri.rfind("/", 0, len(iri) - 1), iri.rfind("#")) + 1
    return iri[:cut]


def spec_for(path) -> dict:
    """The transformation of the KG at ``path``, from its predicate statistics."""
    triples = [(q.subject, q.predicate, q.object) for q in ox.parse(path=str(path))]
    ent, num, subj_types = Counter(), {}, {}
    types = {}
    for s, p, o in triples:
        if p.value == RDF_TYPE and isinstance(s, ox.NamedNode):
            types.setdefault(s.value, set()).add(o.value)
    for s, p, o in triples:
        if not isinstance(s, ox.NamedNode) or p.value.startswith(KEEP):
            continue
        if isinstance(o, ox.NamedNode):
            ent[p.value] += 1
            subj_types.setdefault(p.value, Counter()).update(types.get(s.value, {"-"}))
        elif isinstance(o, ox.Literal):
            try:
                float(o.value)
                num[p.value] = num.get(p.value, 0) + 1
            except ValueError:
                num[p.value] = -10**9
    preds = [p for p, _ in ent.most_common()]
    spaces = sorted({_ns(x.value) for t in triples for x in t if isinstance(x, ox.NamedNode)
                     and not x.value.startswith(KEEP)})
    spec: dict = {"rename": {ns: f"{T}ns{i}/" for i, ns in enumerate(spaces) if ns.startswith("http")}}
    if len(preds) >= 1:
        spec["flip"] = {preds[0]: T + "o/inverseOf-first"}
    if len(preds) >= 2:
        spec["two_hop"] = {preds[1]: [T + "o/via", T + "o/to"]}
    merge = _separable(preds[2:], subj_types)
    if merge:
        spec["merge"] = {T + "o/merged": merge}
    numeric = [p for p, n in sorted(num.items(), key=lambda kv: -kv[1]) if n >= 10]
    if numeric:
        spec["unit_change"] = {numeric[0]: [T + "o/scaled", 0.001]}
    subs = Counter(s.value for s, _, _ in triples if isinstance(s, ox.NamedNode))
    spec["twins"] = [s for s, _ in subs.most_common(5)]
    return spec


def _separable(preds: list[str], subj_types: dict) -> list[str]:
    """Two predicates whose subjects' main classes differ (a type constraint separates them);
    none when no two do (the KG has no separable merge)."""
    for i, a in enumerate(preds):
        ta = subj_types[a].most_common(1)[0][0]
        for b in preds[i + 1:]:
            tb = subj_types[b].most_common(1)[0][0]
            if ta != tb and "-" not in (ta, tb):
                return [a, b]
    return []


PV = "http://ld.company.org/prod-vocab/"


def ck25_spec(tool) -> dict:
    """Issue 37's CK25 pair: the hard CK25 pair (classes renamed, twins, weight in kilograms)
    with supplier and product manager merged into one relation."""
    spec = dict(tool.CK25_HARD_SPEC)
    spec["merge"] = {**spec["merge"], tool.T_ONT + "contact": [PV + "hasSupplier", PV + "hasProductManager"]}
    return spec


def world_spec(repo) -> dict:
    """The World pair of issue 37: kgqa's demo KG by ``tools/demo_pair_spec.yaml`` (a merge, an
    inversion, a split capital, redirect and disambiguation pages) with bare twins and the
    area in thousands (nothing dropped)."""
    import yaml

    spec = yaml.safe_load((repo / "tools" / "demo_pair_spec.yaml").read_text())
    o, r = "http://demo.kgqa.org/ontology/", "http://demo.kgqa.org/resource/"
    spec["unit_change"] = {o + "area": ["http://example.net/kb/prop/areaThousands", 0.001]}
    spec["twins"] = [r + "Velmont_Rail", r + "Brevia", r + "Karl_Voss"]
    spec["drop_predicates"] = []
    return spec
