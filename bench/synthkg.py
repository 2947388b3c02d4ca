"""A deterministic synthetic KG for the large-KG bench (issue 29): typed entities with labels,
numeric and date literals, and entity-to-entity links whose targets follow a skewed (Zipf-like)
degree distribution, written as N-Triples (optionally .gz).

Entity ``i``'s triples depend only on ``(seed, i)``, so a KG of 10^5 triples is (up to the
entities it has) a prefix of the 10^7 one made with the same seed: queries generated from the
small KG run unchanged on the large one. About 10 triples per entity.

Usage: ``python bench/synthkg.py --triples 10000000 -o kg.nt[.gz] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
from pathlib import Path

NS = "http://synth.example/"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
RDFS_LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
XSD = "http://www.w3.org/2001/XMLSchema#"
CLASSES = ["Person", "Organisation", "City", "Product", "Event", "Book", "Film", "Company"]
#: per class: (link predicate, target class) pairs and (numeric predicate, date predicate)
LINKS = {
    "Person": [("bornIn", "City"), ("worksFor", "Company"), ("memberOf", "Organisation"), ("authorOf", "Book")],
    "Organisation": [("locatedIn", "City"), ("partnerOf", "Organisation")],
    "City": [("twinnedWith", "City"), ("countryCapitalOf", "City")],
    "Product": [("madeBy", "Company"), ("soldIn", "City")],
    "Event": [("heldIn", "City"), ("organisedBy", "Organisation"), ("featured", "Person")],
    "Book": [("publishedBy", "Company"), ("about", "Person")],
    "Film": [("directedBy", "Person"), ("starring", "Person"), ("basedOn", "Book")],
    "Company": [("headquarteredIn", "City"), ("foundedBy", "Person"), ("subsidiaryOf", "Company")],
}
NUMBERS = {"Person": "height", "Organisation": "members", "City": "population", "Product": "price",
           "Event": "attendance", "Book": "pages", "Film": "runtime", "Company": "revenue"}
DATES = {"Person": "birthDate", "Organisation": "founded", "City": "founded", "Product": "released",
         "Event": "date", "Book": "published", "Film": "released", "Company": "founded"}
SYLLABLES = ["ka", "ro", "mi", "ta", "le", "no", "vi", "sa", "du", "pe", "li", "an", "or", "el", "us"]


def entity_class(i: int) -> str:
    return CLASSES[i % len(CLASSES)]


def _target(rng: random.Random, i: int, cls: str) -> int:
    """A skewed choice among the earlier entities of class ``cls`` (it depends on ``i`` only, so
    a smaller KG is a prefix of a larger one): a log-uniform rank, so low ranks are linked to far
    more often (Zipf-like in-degrees)."""
    bound = i // len(CLASSES) + 2
    rank = int(bound ** rng.random()) - 1
    return rank * len(CLASSES) + CLASSES.index(cls)


def entity_triples(i: int, seed: int) -> list[str]:
    rng = random.Random(seed * 1_000_003 + i)
    cls = entity_class(i)
    s = f"<{NS}e{i}>"
    name = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()
    out = [f"{s} {RDF_TYPE} <{NS}{cls}> .",
           f'{s} {RDFS_LABEL} "{name} {i}"@en .',
           f'{s} <{NS}{NUMBERS[cls]}> "{rng.randint(1, 10 ** rng.randint(2, 7))}"^^<{XSD}integer> .',
           f'{s} <{NS}{DATES[cls]}> "{rng.randint(1900, 2024):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"^^<{XSD}date> .']
    for pred, target in LINKS[cls]:
        for _ in range(rng.choice((0, 1, 1, 1, 2, 3))):
            j = _target(rng, i, target)
            if j != i:
                out.append(f"{s} <{NS}{pred}> <{NS}e{j}> .")
    return out


def write(path: Path, triples: int, seed: int = 0) -> int:
    """Write about ``triples`` triples (whole entities; returns the exact count)."""
    opener = gzip.open if path.suffix == ".gz" else open
    written = 0
    with opener(path, "wt", encoding="utf-8", newline="\n") as fh:
        i = 0
        buf: list[str] = []
        while written < triples:
            t = entity_triples(i, seed)
            buf.extend(t)
            written += len(t)
            i += 1
            if len(buf) >= 50_000:
                fh.write("\n".join(buf) + "\n")
                buf.clear()
        if buf:
            fh.write("\n".join(buf) + "\n")
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--triples", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", type=Path, required=True)
    args = ap.parse_args(argv)
    n = write(args.output, args.triples, args.seed)
    print(f"{args.output}: {n} triples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
