"""Named benchmark datasets: where their files come from, their checksums, how to load them.

Each :class:`Entry` lists its files as paths relative to a data directory laid out like the
project's shared data folder (``qald-9/qald-9-test-multilingual.json``, ...), each with its
upstream URL (a raw GitHub URL pinned to a commit) and its SHA-256.

:func:`resolve` finds each file, in this order:

1. ``$KGQA_DATA_DIR/<relpath>`` when the variable is set and the file exists (its SHA-256
   is verified; a mismatch raises :class:`~kgqa.model.InputError` unless ``verify=False``);
2. the user cache ``$KGQA_CACHE_DIR/<relpath>`` (default ``~/.cache/kgqa/datasets``), verified
   the same way;
3. a download of the upstream URL with httpx (rich progress bar on a terminal) into a
   temporary file next to the cache path, verified, then atomically renamed into place.
   A checksum mismatch deletes the temporary file and raises InputError.

Files of the built-in ``demo`` entry live inside the package and need no download.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kgqa import lazy
from kgqa.model.registry import Registry
from kgqa.model import Dataset, InputError
from kgqa.load.jsonio import read_yaml
from kgqa.load import formats
from kgqa.model.progress import progress_bar
from kgqa.model.suggest import did_you_mean

#: the download client (httpx through kgqa.model.urlguard) only for a download: every command
#: reads the registry
_urlguard = lazy.module("kgqa.model.urlguard")

PACKAGE_DIR = Path(__file__).resolve().parents[1]

Where = Literal["package", "data dir", "cache", "not downloaded"]


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset: ``path`` relative to the data dir (or to the ``kgqa`` package
    when ``package`` is True), its upstream ``url`` and ``sha256``. Where only the upstream
    git blob id is known, ``git_blob`` holds it and the file is verified by that instead
    (sha1 of ``b"blob <size>\\0"`` + content, what ``git hash-object`` prints). A file with
    neither is not verified (``kgqa datasets list`` says so)."""

    path: str
    url: str | None = None
    sha256: str | None = None
    package: bool = False
    git_blob: str | None = None

    @property
    def checksum(self) -> str:
        """``sha256:<hex>``, ``git-blob:<hex>`` or ``unverified``."""
        if self.sha256:
            return f"sha256:{self.sha256}"
        if self.git_blob:
            return f"git-blob:{self.git_blob}"
        return "unverified"


@dataclass(frozen=True)
class Entry:
    name: str
    description: str
    format: str
    files: tuple[DataFile, ...]
    items: int | None = None
    licence: str = ""
    citation: str = ""
    homepage: str = ""
    options: dict[str, Any] = field(default_factory=dict)


#: The data file the registry is read from (beside this module; shipped as package data).
DATA_FILE = Path(__file__).with_name("datasets.yaml")

_ENTRY_FIELDS: dict[str, type] = {"name": str, "description": str, "format": str, "licence": str, "files": list,
                                  "items": int, "citation": str, "homepage": str, "options": dict}
_ENTRY_REQUIRED = ("name", "description", "format", "licence", "files")
_FILE_FIELDS: dict[str, type] = {"path": str, "url": str, "sha256": str, "git_blob": str, "package": bool}
_HEX_DIGITS = {"sha256": 64, "git_blob": 40}
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


class _Invalid(ValueError):
    """A problem in one record of the registry file (``read_registry`` names the file)."""

    def __init__(self, record: str, message: str):
        super().__init__(message)
        self.record = record


def _check_fields(doc: Any, fields: dict[str, type], required: tuple[str, ...], record: str) -> dict[str, Any]:
    """``doc`` as a mapping whose keys are among ``fields``, each of its type, ``required`` present."""
    if not isinstance(doc, dict):
        raise _Invalid(record, f"expected a mapping of {', '.join(fields)}, got {type(doc).__name__}")
    unknown = sorted(set(doc) - set(fields))
    if unknown:
        raise _Invalid(record, f"unknown field {unknown[0]!r}; expected one of {', '.join(fields)}")
    missing = [k for k in required if doc.get(k) in (None, "")]
    if missing:
        raise _Invalid(record, f"missing field {missing[0]!r}")
    for key, value in doc.items():
        kind = fields[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise _Invalid(record, f"field {key!r} must be {kind.__name__}, got {type(value).__name__} {value!r}")
    return doc


def _data_file(doc: Any, sources: dict[str, str], record: str) -> DataFile:
    f = _check_fields(doc, _FILE_FIELDS, ("path",), record)
    record = f"{record} ({f['path']})"
    for key, digits in _HEX_DIGITS.items():
        if key in f and not re.fullmatch(f"[0-9a-f]{{{digits}}}", f[key]):
            raise _Invalid(record, f"field {key!r} must be {digits} lowercase hex digits, got {f[key]!r}")
    url = f.get("url")
    if url is not None:
        names = _PLACEHOLDER.findall(url)
        unknown = [n for n in names if n not in sources]
        if unknown:
            raise _Invalid(record, f"field 'url' names unknown source {{{unknown[0]}}}; sources: {', '.join(sources)}")
        url = _PLACEHOLDER.sub(lambda m: sources[m.group(1)], url)
    if not f.get("package") and not url:
        raise _Invalid(record, "a file outside the package needs a 'url' (or 'package: true')")
    return DataFile(f["path"], url, f.get("sha256"), bool(f.get("package")), f.get("git_blob"))


def _entry(doc: Any, sources: dict[str, str], index: int) -> Entry:
    name = doc.get("name") if isinstance(doc, dict) else None
    record = f"dataset {name!r}" if isinstance(name, str) else f"datasets[{index}]"
    e = _check_fields(doc, _ENTRY_FIELDS, _ENTRY_REQUIRED, record)
    if not e["files"]:
        raise _Invalid(record, "field 'files' is empty; list at least one file")
    files = tuple(_data_file(f, sources, f"{record}, files[{i}]") for i, f in enumerate(e["files"]))
    return Entry(e["name"], e["description"], e["format"], files, e.get("items"), e["licence"],
                 e.get("citation", ""), e.get("homepage", ""), dict(e.get("options") or {}))


def read_registry(path: Path | None = None) -> tuple[tuple[Entry, ...], dict[str, DataFile], dict[str, str]]:
    """``(entries, kgs, sources)`` of the registry data file (default :data:`DATA_FILE`), checked:
    an unknown or missing field, a value of the wrong type, a malformed checksum, a URL naming an
    unknown source or a repeated name is an :class:`~kgqa.model.InputError` naming the entry and field."""
    path = Path(path) if path is not None else DATA_FILE
    raw = read_yaml(path)
    try:
        doc = _check_fields(raw, {"sources": dict, "citations": dict, "datasets": list, "kgs": dict},
                            ("datasets",), "top level")
        sources = {str(k): v for k, v in (doc.get("sources") or {}).items()}
        bad = [k for k, v in sources.items() if not isinstance(v, str) or not v.startswith(("https://", "http://"))]
        if bad:
            raise _Invalid(f"sources.{bad[0]}", f"expected an http(s) URL, got {sources[bad[0]]!r}")
        entries = tuple(_entry(d, sources, i) for i, d in enumerate(doc["datasets"]))
        seen: set[str] = set()
        for e in entries:
            if e.name.lower() in seen:
                raise _Invalid(f"dataset {e.name!r}", "name repeats an earlier entry (names are case-insensitive)")
            seen.add(e.name.lower())
        kgs = {str(k).lower(): _data_file(v, sources, f"kgs.{k}") for k, v in (doc.get("kgs") or {}).items()}
        return entries, kgs, sources
    except _Invalid as e:
        raise InputError(path, str(e), e.record) from None


@functools.cache
def _loaded() -> tuple[tuple[Entry, ...], dict[str, DataFile], dict[str, str], Registry[Entry]]:
    """The registry data file, read and checked on first use rather than at import (about 20 ms
    a process: a command given files, not names, never reads it)."""
    entries, kgs, sources = read_registry()
    datasets: Registry[Entry] = Registry("dataset", case_insensitive=True)
    for e in entries:
        datasets.register(e.name, e)
    return entries, kgs, sources, datasets


#: The registry's entries, in the data file's order.
ENTRIES: tuple[Entry, ...]
#: Knowledge graphs by the name of the dataset they belong to: what ``--kg NAME`` (CLI, web form,
#: ``kg=`` in the library) executes queries on when NAME is not a file or URL.
KGS: dict[str, DataFile]
#: Upstream repositories pinned to a commit, by the name a file's URL uses (``{qald}``).
SOURCES: dict[str, str]
#: The named datasets as a :class:`~kgqa.model.registry.Registry` (others may register more).
DATASETS: Registry[Entry]
_READ_ON_FIRST_USE = {"ENTRIES": 0, "KGS": 1, "SOURCES": 2, "DATASETS": 3}


def __getattr__(name: str) -> Any:
    """:data:`ENTRIES`, :data:`KGS`, :data:`SOURCES` and :data:`DATASETS`: the data file is read
    when one of them is first used (PEP 562), once a process."""
    if name in _READ_ON_FIRST_USE:
        return _loaded()[_READ_ON_FIRST_USE[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _kgs() -> dict[str, DataFile]:
    return _loaded()[1]


def entries() -> list[Entry]:
    return list(_loaded()[3].values())


def find(name: str) -> Entry | None:
    return _loaded()[3].find(name.strip())


def resolve_kg(spec: str, verify: bool = True, download: bool = True) -> str:
    """A ``--kg`` value as the engine opens it: a registry KG name (``ck25``; see :data:`KGS`)
    becomes its local file (verified against its checksum, downloaded when missing and a source
    is known); a URL, an existing path (a file named like a KG wins) or a comma-separated list
    is returned as it is. A bare word that is neither gets "did you mean"; a registered KG that
    is not on this machine and cannot be fetched is an error saying where it was looked for."""
    text = spec.strip()
    if text.startswith(("http://", "https://")) or "," in text or Path(text).expanduser().exists():
        return spec
    f = _kgs().get(text.lower())
    if f is None:
        if "/" not in text and "." not in text:  # a bare word: a name the user expected us to know

            raise InputError("--kg", f"no such file, directory or registry KG {text!r}{did_you_mean(text, _kgs())}; "
                                     f"registry KGs: {', '.join(_kgs())} (or RDF file(s), a store directory, an "
                                     "http(s) SPARQL endpoint)")
        return spec
    try:
        return str(resolve_file(f, verify, download))
    except InputError as e:
        raise InputError(text, f"the {text.lower()} knowledge graph is not on this machine (looked for {f.path} in "
                               f"the data dir $KGQA_DATA_DIR and the download cache; {e.problem.message}); pass the RDF "
                               "file's path instead") from None


# --------------------------------------------------------------------------- locations


def data_dir() -> Path | None:
    env = os.environ.get("KGQA_DATA_DIR")
    return Path(env).expanduser() if env else None


def cache_dir() -> Path:
    env = os.environ.get("KGQA_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "kgqa" / "datasets"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def git_blob_sha1(path: Path) -> str:
    """The git blob id of a file: sha1 of ``b"blob <size>\\0"`` followed by the content."""
    h = hashlib.sha1()
    h.update(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def checksum_problem(path: Path, f: DataFile) -> str | None:
    """None when ``path`` matches the file's checksum (or it has none), else what differs."""
    if f.sha256:
        got = sha256_of(path)
        return None if got == f.sha256 else f"sha256 {got}, expected {f.sha256}"
    if f.git_blob:
        got = git_blob_sha1(path)
        return None if got == f.git_blob else f"git blob {got}, expected {f.git_blob}"
    return None


def _verify(path: Path, f: DataFile, where: str, verify: bool) -> Path:
    if verify:
        msg = checksum_problem(path, f)
        if msg:
            raise InputError(path, f"checksum mismatch in the {where}: {msg} "
                                   f"(upstream {f.url}); replace the file, or pass verify=False to use it anyway")
    return path


def locate(f: DataFile) -> tuple[Where, Path]:
    """Where a file would be taken from, without downloading or verifying it."""
    if f.package:
        p = PACKAGE_DIR / f.path
        return ("package" if p.exists() else "not downloaded"), p
    dd = data_dir()
    if dd is not None and (dd / f.path).is_file():
        return "data dir", dd / f.path
    cp = cache_dir() / f.path
    if cp.is_file():
        return "cache", cp
    return "not downloaded", cp


def where(entry: Entry) -> Where:
    """Where the entry's files resolve now: the least available location of its files."""
    order: list[Where] = ["package", "data dir", "cache", "not downloaded"]
    return max((locate(f)[0] for f in entry.files), key=order.index)


def _searched(f: DataFile) -> str:
    """Where a named dataset's file was looked for before downloading, and the fix: a data folder
    near the working directory that holds the file is named with the ``KGQA_DATA_DIR`` to set."""
    dd = data_dir()
    looked = (f"{dd / f.path} ($KGQA_DATA_DIR)" if dd is not None else "$KGQA_DATA_DIR (not set)")
    text = f"{f.path} was looked for in {looked} and in the download cache {cache_dir() / f.path}"
    here = Path.cwd()
    near = [here / "data", here / "shared" / "data", here.parent / "shared" / "data", here.parent / "data",
            Path(__file__).resolve().parents[3] / "shared" / "data"]
    found = next((d for d in near if (d / f.path).is_file() and d != dd), None)
    if found is not None:
        return f"{text}; it is in {found}: set KGQA_DATA_DIR={found}"
    return f"{text}; set KGQA_DATA_DIR to the folder that holds {f.path} (offline), or connect to the network"


def _download(f: DataFile, dest: Path, verify: bool) -> Path:
    httpx = lazy.httpx()
    if not f.url:
        raise InputError(dest, "file is not available locally and has no download URL")
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    h = hashlib.sha256()
    try:
        # every redirect hop checked with the URL rule, each connection pinned to the checked address
        with os.fdopen(fd, "wb") as out, _urlguard.guarded_client(f.url, follow_redirects=True, timeout=60.0) as client, \
                client.stream("GET", f.url) as resp:
            if resp.status_code != 200:
                raise InputError(f.url, f"download failed: HTTP {resp.status_code}; {_searched(f)}")
            total = int(resp.headers.get("content-length") or 0) or None

            with progress_bar(total, f"downloading {f.path}", unit="bytes") as bar:
                for chunk in resp.iter_bytes():
                    out.write(chunk)
                    h.update(chunk)
                    bar(len(chunk))
        if verify and f.sha256 and h.hexdigest() != f.sha256:
            raise InputError(f.url, f"checksum mismatch after download: sha256 {h.hexdigest()}, expected {f.sha256}; "
                                    "the upstream file changed or the download is corrupt (nothing was saved)")
        if verify and not f.sha256 and f.git_blob and git_blob_sha1(tmp) != f.git_blob:
            raise InputError(f.url, f"checksum mismatch after download: git blob {git_blob_sha1(tmp)}, expected "
                                    f"{f.git_blob}; the upstream file changed or the download is corrupt (nothing was saved)")
        os.replace(tmp, dest)
        return dest
    except httpx.HTTPError as e:
        raise InputError(f.url, f"download failed: {e}; {_searched(f)}") from None
    except _urlguard.UrlRefused as e:
        raise InputError(f.url, f"download refused: {e}") from None
    finally:
        if tmp.exists():
            tmp.unlink()


def resolve_file(f: DataFile, verify: bool = True, download: bool = True) -> Path:
    kind, path = locate(f)
    if kind == "package":
        return path
    if f.package:
        raise InputError(path, "built-in data file is missing from the kgqa package")
    if kind == "data dir":
        return _verify(path, f, "data dir ($KGQA_DATA_DIR)", verify)
    if kind == "cache":
        return _verify(path, f, "download cache", verify)
    if not download:
        raise InputError(path, f"not downloaded (upstream {f.url})")
    return _download(f, path, verify)


def resolve(entry: Entry, verify: bool = True, download: bool = True) -> list[Path]:
    """Local paths of the entry's files (downloading missing ones; see module docstring)."""
    return [resolve_file(f, verify, download) for f in entry.files]


def load(entry: Entry, verify: bool = True, **options: Any) -> Dataset:
    """The entry's dataset, loaded with its format (``options`` go to the format's loader)."""

    paths = resolve(entry, verify=verify)
    fmt = formats.get("dataset", entry.format)
    ds = fmt.load(paths, **{**entry.options, **options})
    ds.name = entry.name
    ds.format = ds.format or fmt.name
    ds.metadata = {**ds.metadata, "registry": entry.name}
    return ds


# --------------------------------------------------------------------------- knowledge graphs

def kg_path(name: str) -> Path | None:
    """The local RDF file of the registered KG ``name`` (None: no such KG, or not present
    here: the data dir or the download cache lacks it)."""
    f = _kgs().get(name.strip().lower())
    if f is None:
        return None
    kind, path = locate(f)
    return path if kind in ("package", "data dir", "cache") and path.is_file() else None


def available_kgs() -> dict[str, str]:
    """Registered KGs present on this machine: name -> RDF file (what ``kgqa web`` offers)."""
    return {name: str(p) for name in _kgs() if (p := kg_path(name)) is not None}
