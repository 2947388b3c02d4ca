"""Reading compressed input files safely: one decompressing reader for every file kgqa reads
(KG files, link files) with the decompression bomb guard.

Reading stops with an :class:`~kgqa.model.InputError` naming the file once it has inflated to
more than :data:`MAX_DECOMPRESSION_RATIO` times the compressed bytes read so far, after at least
:data:`DECOMPRESSION_FLOOR` bytes (RDF compresses 5-30x with gzip/bz2/xz; a zip bomb ~1000x).
Setting: the ``KGQA_MAX_DECOMPRESSION_RATIO`` environment variable (0 turns the guard off).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
from pathlib import Path

from kgqa.model import InputError

#: compression suffix -> file class
COMPRESSIONS = {".gz": gzip.GzipFile, ".bz2": bz2.BZ2File, ".xz": lzma.LZMAFile}

#: Decompression bomb guard for compressed RDF files: reading stops with an InputError once a
#: file has inflated to more than :data:`MAX_DECOMPRESSION_RATIO` times the compressed bytes
#: read so far, after at least :data:`DECOMPRESSION_FLOOR` bytes (RDF compresses 5-30x with
#: gzip/bz2/xz; a zip bomb ~1000x). Settings: the ``KGQA_MAX_DECOMPRESSION_RATIO`` environment
#: variable (0 turns the guard off).
MAX_DECOMPRESSION_RATIO = 200
DECOMPRESSION_FLOOR = 64 << 20


def _max_ratio() -> float:
    try:
        return float(os.environ.get("KGQA_MAX_DECOMPRESSION_RATIO", MAX_DECOMPRESSION_RATIO))
    except ValueError:
        return float(MAX_DECOMPRESSION_RATIO)


class DecompressingReader(io.RawIOBase):
    """The decompressed bytes of ``path`` (``comp``: ``.gz``, ``.bz2``, ``.xz`` or None for a
    plain file), with the decompression bomb guard: reading raises :class:`InputError` naming
    the file once it has inflated to more than :data:`MAX_DECOMPRESSION_RATIO` times the
    compressed bytes read (after :data:`DECOMPRESSION_FLOOR`). Wrap it in ``io.BufferedReader``
    for line reading; used for KG files and for ``migrate --links`` files."""

    def __init__(self, path: Path, comp: str | None):
        self.raw = open(path, "rb")
        if comp == ".gz":
            self.stream = gzip.GzipFile(fileobj=self.raw)
        elif comp:
            self.stream = COMPRESSIONS[comp](self.raw)
        else:
            self.stream = self.raw
        self.path = path
        self.inflated = 0
        self.ratio = _max_ratio() if self.stream is not self.raw else 0.0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        n = self.stream.readinto(b)
        if n:
            self.inflated += n
            if self.ratio and self.inflated > DECOMPRESSION_FLOOR and \
                    self.inflated > self.ratio * max(1, self.raw.tell()):
                raise InputError(self.path, f"decompressed to more than {self.ratio:g} times its compressed size "
                                            f"({self.inflated} bytes from {self.raw.tell()}): refused as a "
                                            "decompression bomb (set KGQA_MAX_DECOMPRESSION_RATIO to allow it)")
        return n or 0

    def close(self) -> None:
        try:
            if self.stream is not self.raw:
                self.stream.close()
        finally:
            self.raw.close()
            super().close()



def compression(path: str | Path) -> str | None:
    """The compression suffix of ``path`` (``.gz``, ``.bz2``, ``.xz``) or None."""
    suffix = Path(path).suffix.lower()
    return suffix if suffix in COMPRESSIONS else None


def base_suffix(path: str | Path) -> str:
    """The extension that names the format, under a compression suffix (``x.nt.gz`` -> ``.nt``)."""
    p = Path(path)
    return Path(p.stem).suffix.lower() if compression(p) else p.suffix.lower()


def open_binary(path: str | Path, buffer: int = 1 << 20) -> io.BufferedReader:
    """The (decompressed) bytes of ``path``, buffered, under the bomb guard."""
    p = Path(path)
    return io.BufferedReader(DecompressingReader(p, compression(p)), buffer)
