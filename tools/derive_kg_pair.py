#!/usr/bin/env python3
"""Derive a (source, target) KG pair for testing ``kgqa migrate``: transform an RDF graph the
way real KGs differ from one another, and write the links between them.

The transformation (a JSON/YAML spec, or the built-in one for CK25's ``prod-inst.ttl``):

- ``rename``: IRI prefix -> new prefix (instances, classes and properties get new IRIs);
- ``links``: every renamed IRI that is never used as a predicate gets an ``owl:sameAs`` link,
  written in either direction (chosen by a seeded hash of the IRI);
- ``flip``: source predicate -> target predicate with subject and object swapped;
- ``two_hop``: source predicate -> ``[p1, p2]``: ``s p o`` becomes ``s p1 n . n p2 o`` through a
  new intermediate node ``n``;
- ``merge``: target predicate <- several source predicates (the target predicate is more
  general: mapping one source predicate needs a type constraint);
- ``disambiguate``: source IRIs whose link points to a disambiguation node that
  ``dbo:wikiPageDisambiguates`` the real node and a decoy;
- ``redirect``: source IRIs whose link points to a redirect node that ``dbo:wikiPageRedirects``
  to the real node;
- ``drop_predicates``: source predicates with no triple in the target;
- ``drop_facts``: ``[subject, predicate]`` pairs whose triples are left out of the target;
- ``class_rename``: source class -> target class of another name (applied before ``rename``);
- ``class_links``: false -> classes (objects of ``rdf:type``) get no link (default true);
- ``disambiguation_predicate`` / ``redirect_predicate``: the target's own IRIs for those
  pages' predicates (default DBpedia's);
- ``twins``: source IRIs that get a bare duplicate in the target (only a label, IRI sorting
  before the real one) linked by ``owl:sameAs`` too, as link sets often have;
- ``unit_change``: source predicate -> ``[target predicate, factor]``: numeric values are
  multiplied by the factor (grams to kilograms: 0.001).

Outputs in ``OUT``: ``target.nt``, ``links.nt``, ``surviving.nt`` (the source graph minus
every triple the target lost: what the target still knows, in source terms) and
``manifest.json`` (the spec, the seed and counts). Deterministic for a given input and seed.

Usage: ``python tools/derive_kg_pair.py SOURCE.ttl OUT [--spec SPEC.json|yaml|ck25|ck25-hard] [--seed N]``
(without ``--spec``: the CK25 transformation below; ``ck25-hard``: issue 26's harder one).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import pyoxigraph as ox

OWL_SAMEAS = "http://www.w3.org/2002/07/owl#sameAs"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
DBO = "http://dbpedia.org/ontology/"
DISAMBIGUATES = DBO + "wikiPageDisambiguates"
REDIRECTS = DBO + "wikiPageRedirects"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD_DECIMAL = "http://www.w3.org/2001/XMLSchema#decimal"

PV = "http://ld.company.org/prod-vocab/"
PI = "http://ld.company.org/prod-instances/"
T_ONT = "http://kg.example.org/ontology/"
T_RES = "http://kg.example.org/resource/"

CK25_SPEC = {
    "rename": {PI: T_RES, PV: T_ONT},
    "flip": {PV + "hasManager": T_ONT + "manages"},
    "two_hop": {PV + "memberOf": [T_ONT + "assignment", T_ONT + "unit"]},
    "merge": {T_ONT + "category": [PV + "hasCategory", PV + "areaOfExpertise"]},
    "disambiguate": [PI + "prod-cat-Sensor", PI + "dept-85880"],
    "redirect": [PI + "prod-cat-Transistor", PI + "empl-Heinrich.Hoch%40company.org", PI + "hw-U990-5234138"],
    "drop_predicates": [PV + "reliabilityIndex"],
    "drop_facts": [[PI + "empl-Baldwin.Dirksen%40company.org", PV + "phone"]],
}

#: The harder CK25 pair of issue 26: classes renamed with no class links, the target's own
#: redirect and disambiguation predicates, bare twins that sort first, a merged predicate and
#: a unit change (weight in grams -> kilograms).
CK25_HARD_SPEC = {
    **CK25_SPEC,
    "class_rename": {PV + "Hardware": T_ONT + "Device", PV + "Employee": T_ONT + "StaffMember",
                     PV + "Department": T_ONT + "OrgUnit", PV + "Supplier": T_ONT + "Vendor",
                     PV + "Service": T_ONT + "Offering", PV + "BillOfMaterial": T_ONT + "PartsList",
                     PV + "ProductCategory": T_ONT + "Category", PV + "Manager": T_ONT + "Supervisor"},
    "class_links": False,
    "disambiguation_predicate": T_ONT + "mayRefer",
    "redirect_predicate": T_ONT + "primaryPage",
    "twins": [PI + "prod-cat-Coil", PI + "prod-cat-Compensator", PI + "dept-41622", PI + "hw-K367-1320550",
              PI + "hw-M558-2275045", PI + "empl-Karen.Brant%40company.org", PI + "prod-cat-Rheostat",
              PI + "dept-84279"],
    "unit_change": {PV + "weight_g": [T_ONT + "weightKg", 0.001]},
}


def _h(text: str, seed: int) -> int:
    return int(hashlib.sha256(f"{seed}:{text}".encode()).hexdigest()[:8], 16)


def _nt(term) -> str:
    return str(term)


def derive(source: str | Path, out: str | Path, spec: dict | None = None, seed: int = 0) -> dict:
    """Write the pair into ``out`` (see the module docstring); returns the manifest."""
    spec = spec or CK25_SPEC
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    quads = list(ox.parse(path=str(source)))
    triples = [(q.subject, q.predicate, q.object) for q in quads]
    rename = sorted(spec.get("rename", {}).items(), key=lambda kv: -len(kv[0]))
    flip = spec.get("flip", {})
    two_hop = spec.get("two_hop", {})
    merged = {s: t for t, srcs in spec.get("merge", {}).items() for s in srcs}
    disamb = set(spec.get("disambiguate", []))
    redirect = set(spec.get("redirect", []))
    drop_p = set(spec.get("drop_predicates", []))
    drop_f = {tuple(x) for x in spec.get("drop_facts", [])}
    class_rename = spec.get("class_rename", {})
    class_links = spec.get("class_links", True)
    disamb_p = spec.get("disambiguation_predicate", DISAMBIGUATES)
    redirect_p = spec.get("redirect_predicate", REDIRECTS)
    twins = set(spec.get("twins", []))
    unit = spec.get("unit_change", {})
    predicates = {p.value for _, p, _ in triples}
    classes = {o.value for _, p, o in triples if p.value == RDF_TYPE and isinstance(o, ox.NamedNode)}

    def ren(iri: str) -> str:
        if iri in class_rename:
            return class_rename[iri]
        for a, b in rename:
            if iri.startswith(a):
                return b + iri[len(a):]
        return iri

    def node(t):
        return ox.NamedNode(ren(t.value)) if isinstance(t, ox.NamedNode) else t

    target: list[tuple] = []
    surviving: list[tuple] = []
    n_two = 0
    lost = 0
    for s, p, o in sorted(triples, key=lambda t: (str(t[0]), str(t[1]), str(t[2]))):
        pv = p.value
        if pv in drop_p or (s.value if isinstance(s, ox.NamedNode) else None, pv) in drop_f:
            lost += 1
            continue
        surviving.append((s, p, o))
        if pv in flip:
            target.append((node(o), ox.NamedNode(flip[pv]), node(s)))
        elif pv in two_hop:
            n_two += 1
            mid = ox.NamedNode(f"{ren(s.value) if isinstance(s, ox.NamedNode) else 'node'}/{pv.rsplit('/', 1)[-1]}-{n_two}")
            p1, p2 = two_hop[pv]
            target.append((node(s), ox.NamedNode(p1), mid))
            target.append((mid, ox.NamedNode(p2), node(o)))
        elif pv in merged:
            target.append((node(s), ox.NamedNode(merged[pv]), node(o)))
        elif pv in unit and isinstance(o, ox.Literal):
            tp, factor = unit[pv]
            value = f"{float(o.value) * float(factor):.6f}".rstrip("0").rstrip(".")
            target.append((node(s), ox.NamedNode(tp), ox.Literal(value, datatype=ox.NamedNode(XSD_DECIMAL))))
        else:
            target.append((node(s), ox.NamedNode(ren(pv)), node(o)))
    # links, disambiguation and redirect nodes
    entities = sorted({t.value for s, _, o in triples for t in (s, o) if isinstance(t, ox.NamedNode)} - predicates)
    links = []
    n_twins = 0
    for e in entities:
        r = ren(e)
        if r == e or (e in classes and not class_links):
            continue
        linked = r
        if e in disamb:
            linked = r + "_(disambiguation)"
            decoy = r + "_(other)"
            target.append((ox.NamedNode(linked), ox.NamedNode(disamb_p), ox.NamedNode(r)))
            target.append((ox.NamedNode(linked), ox.NamedNode(disamb_p), ox.NamedNode(decoy)))
            target.append((ox.NamedNode(decoy), ox.NamedNode(RDFS_LABEL), ox.Literal("an unrelated namesake")))
        elif e in redirect:
            linked = r + "_(redirect)"
            target.append((ox.NamedNode(linked), ox.NamedNode(redirect_p), ox.NamedNode(r)))
        a, b = (e, linked) if _h(e, seed) % 2 == 0 else (linked, e)
        links.append((ox.NamedNode(a), ox.NamedNode(OWL_SAMEAS), ox.NamedNode(b)))
        if e in twins:  # a bare duplicate whose IRI sorts before the real one
            n_twins += 1
            twin = ox.NamedNode(r.rsplit("/", 1)[0] + "/0-twin-" + r.rsplit("/", 1)[1])
            target.append((twin, ox.NamedNode(RDFS_LABEL), ox.Literal("twin of " + r.rsplit("/", 1)[1])))
            links.append((ox.NamedNode(e), ox.NamedNode(OWL_SAMEAS), twin))

    def write(name: str, rows) -> None:
        tmp = out / (name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for s, p, o in rows:
                fh.write(f"{_nt(s)} {_nt(p)} {_nt(o)} .\n")
        tmp.replace(out / name)

    write("target.nt", target)
    write("links.nt", links)
    write("surviving.nt", surviving)
    manifest = {"source": str(source), "seed": seed, "spec": spec,
                "counts": {"source_triples": len(triples), "target_triples": len(target), "links": len(links),
                           "lost_triples": lost, "intermediate_nodes": n_two, "twins": n_twins}}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--spec", help="JSON or YAML transformation spec, or 'ck25' / 'ck25-hard' (default: ck25)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    spec = None
    if a.spec in ("ck25", "ck25-hard"):
        spec = CK25_SPEC if a.spec == "ck25" else CK25_HARD_SPEC
    elif a.spec:
        text = Path(a.spec).read_text(encoding="utf-8")
        if a.spec.endswith((".yaml", ".yml")):
            import yaml
            spec = yaml.safe_load(text)
        else:
            spec = json.loads(text)
    m = derive(a.source, a.out, spec, a.seed)
    print(json.dumps(m["counts"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
