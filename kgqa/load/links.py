"""Link files: pairs of IRIs that denote the same thing, for meaning matching
(:class:`kgqa.model.terms.IriLinks`, ``kgqa evaluate --links``) and for migration.

A link file is

- an RDF file (N-Triples, Turtle, N-Quads, TriG, RDF/XML, N3; plain or compressed) whose
  ``owl:sameAs`` triples (or other link predicates) are read **in either direction**;
- a TSV/CSV file of two IRI columns (``source<TAB>target``; a header row without IRIs is
  skipped; ``<...>`` around an IRI is dropped; ``#`` starts a comment line).

Compressed files (``.gz``, ``.bz2``, ``.xz``) are read under the decompression bomb guard of
KG files (:mod:`kgqa.load.decompress`); a line that is not UTF-8 or not two IRIs is an
:class:`~kgqa.model.InputError` naming the file and the physical line. This is the one reader of
link files: ``kgqa evaluate --links`` and ``kgqa migrate --links`` both read through it.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pyoxigraph as ox

from kgqa.load.decompress import base_suffix, compression, open_binary
from kgqa.load.rdf import RDF_EXTENSIONS
from kgqa.model import InputError
from kgqa.model.terms import IriLinks, looks_like_iri

OWL_SAMEAS = "http://www.w3.org/2002/07/owl#sameAs"
TABLES = {".tsv": "\t", ".txt": "\t", ".csv": ","}
#: the ``--links`` word for the built-in DBpedia variants alone (no file)
BUILTIN = "dbpedia"


def _clean(cell: str) -> str:
    cell = cell.strip()
    return cell[1:-1] if cell.startswith("<") and cell.endswith(">") else cell


def _text_lines(path: Path, fh: Iterable[bytes]) -> Iterator[str]:
    """The lines of ``fh`` decoded as UTF-8; an undecodable line is an InputError naming the
    file, the line and the byte."""
    for n, raw in enumerate(fh, start=1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(path, f"line {n}: not valid UTF-8 (byte 0x{raw[e.start]:02x} at column {e.start + 1}); "
                                   "links files must be UTF-8") from None


def _table_pairs(path: Path, delim: str) -> Iterator[tuple[str, str]]:
    with open_binary(path) as fh:
        rows = csv.reader(_text_lines(path, fh), delimiter=delim)
        while True:
            try:
                row = next(rows)
            except StopIteration:
                return
            except csv.Error as e:
                raise InputError(path, f"line {rows.line_num}: {e}") from None
            n = rows.line_num  # the physical line a row ends on (a quoted cell may span lines)
            if not row or row[0].lstrip().startswith("#"):
                continue
            if len(row) < 2:
                raise InputError(path, f"line {n}: expected two columns (source, target IRI), got {row!r}")
            a, b = _clean(row[0]), _clean(row[1])
            if not (looks_like_iri(a) and looks_like_iri(b)):
                if n == 1:
                    continue  # a header
                raise InputError(path, f"line {n}: expected two IRIs, got {row[0]!r}, {row[1]!r}")
            yield a, b


def _rdf_pairs(path: Path, fmt: ox.RdfFormat, predicates: set[str]) -> Iterator[tuple[str, str]]:
    try:
        if compression(path):
            with open_binary(path) as fh:
                yield from _links_of(ox.parse(fh, format=fmt), predicates)
        else:
            yield from _links_of(ox.parse(path=str(path), format=fmt), predicates)
    except SyntaxError as e:
        raise InputError(path, f"links file is not valid {fmt}: {e}") from None
    except (OSError, EOFError) as e:
        raise InputError(path, f"cannot read links file: {e}") from None


def _links_of(quads: Iterable[ox.Quad], predicates: set[str]) -> Iterator[tuple[str, str]]:
    for q in quads:
        if q.predicate.value in predicates and isinstance(q.subject, ox.NamedNode) \
                and isinstance(q.object, ox.NamedNode):
            yield q.subject.value, q.object.value


def read_pairs(path: str | Path, predicates: Sequence[str] = (OWL_SAMEAS,)) -> Iterator[tuple[str, str]]:
    """The (IRI, IRI) pairs of one link file, in file order (see the module docstring)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "no such links file")
    suffix = base_suffix(p)
    if suffix in TABLES:
        return _table_pairs(p, TABLES[suffix])
    if suffix in RDF_EXTENSIONS:
        return _rdf_pairs(p, RDF_EXTENSIONS[suffix], set(predicates))
    raise InputError(p, f"links file: unknown extension {suffix!r} (expected an RDF file "
                        f"{', '.join(sorted(RDF_EXTENSIONS))}, or .tsv/.csv, optionally .gz/.bz2/.xz)")


def load_links(specs: Sequence[str | Path], *, extra: Iterable[tuple[str, str]] = (), extra_name: str = "",
               dbpedia: bool = True) -> IriLinks:
    """Meaning-matching links from link files (``specs``; the word ``dbpedia`` alone adds no
    file: the built-in DBpedia variants are always included when ``dbpedia``) plus ``extra``
    pairs (e.g. the KG's redirects, counted under ``extra_name``)."""
    pairs: list[tuple[str, str]] = []
    sources: list[str] = []
    files = [s for s in specs if str(s) != BUILTIN]
    if files:
        before = 0
        for f in files:
            pairs.extend(read_pairs(f))
        sources.append(f"sameAs={len(pairs) - before}")
    more = list(extra)
    if extra_name:
        sources.append(f"{extra_name}={len(more)}")
    return IriLinks.from_pairs(pairs + more, dbpedia=dbpedia, sources=sources)
