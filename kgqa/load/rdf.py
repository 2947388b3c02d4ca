"""RDF file formats by file name extension: the one map every reader of RDF files uses
(KG files, link files, ontologies)."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox

from kgqa.load.decompress import COMPRESSIONS
from kgqa.model import InputError

#: File name extension (after removing a compression suffix) -> RDF format.
RDF_EXTENSIONS: dict[str, ox.RdfFormat] = {
    ".ttl": ox.RdfFormat.TURTLE,
    ".turtle": ox.RdfFormat.TURTLE,
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".ntriples": ox.RdfFormat.N_TRIPLES,
    ".nq": ox.RdfFormat.N_QUADS,
    ".nquads": ox.RdfFormat.N_QUADS,
    ".trig": ox.RdfFormat.TRIG,
    ".rdf": ox.RdfFormat.RDF_XML,
    ".owl": ox.RdfFormat.RDF_XML,
    ".xml": ox.RdfFormat.RDF_XML,
    ".rdfxml": ox.RdfFormat.RDF_XML,
    ".n3": ox.RdfFormat.N3,
    ".jsonld": ox.RdfFormat.JSON_LD,
}


def rdf_format(path: str | Path) -> tuple[ox.RdfFormat, str | None]:
    """The RDF format of ``path`` from its extension, and its compression suffix (``.gz``,
    ``.bz2``, ``.xz`` or None). Raises :class:`InputError` for an unknown extension."""
    p = Path(path)
    suffixes = [s.lower() for s in p.suffixes]
    comp = suffixes[-1] if suffixes and suffixes[-1] in COMPRESSIONS else None
    ext = (suffixes[-2] if comp and len(suffixes) >= 2 else (suffixes[-1] if suffixes and not comp else ""))
    fmt = RDF_EXTENSIONS.get(ext)
    if fmt is None:
        known = ", ".join(sorted(RDF_EXTENSIONS))
        raise InputError(path, f"unknown RDF file extension {ext or '(none)'!r}; expected one of {known}"
                               " (optionally followed by .gz, .bz2 or .xz)")
    return fmt, comp
