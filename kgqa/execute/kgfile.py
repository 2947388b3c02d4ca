"""RDF files and persistent stores: format detection, loading with progress, KG fingerprints.

A KG loaded by kgqa is identified by its **content fingerprint**::

    sha256( "".join(sorted(f"{sha256(content(f))}\\n" for f in files)) + f"graph={IRI}\\n" )

written ``"sha256:<64 hex>"``, where ``content(f)`` is the *decompressed* bytes of file ``f``
and the ``graph=`` line is present only when the files are loaded into a named graph. The
fingerprint therefore depends on the files' contents and the target graph, never on their
names, paths, order on the command line, or compression.

A persistent store (``kgqa kg load FILE... --store DIR``) is an Oxigraph RocksDB directory
plus :data:`MANIFEST` (``kgqa-store.json``) recording the fingerprint, the files loaded
(name, size, sha256, quads added), the target graph, the total quad count and the pyoxigraph
version. kgqa reopens such a store read-only.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
import os
import uuid

import pyoxigraph as ox

from kgqa.load.decompress import DecompressingReader
from kgqa.load.rdf import rdf_format
from kgqa.model.problems import InputError
from kgqa.model.progress import progress_bar
from kgqa.execute.cache import default_cache_dir
from kgqa.load.jsonio import write_atomic

MANIFEST = "kgqa-store.json"

Progress = Callable[[int], None]  # called with the number of (compressed) bytes just read

class _HashingReader(DecompressingReader):
    """Reads the decompressed stream, hashing what it reads and reporting raw progress."""

    def __init__(self, path: Path, progress: Progress | None):
        super().__init__(path, rdf_format(path)[1])
        self.sha = hashlib.sha256()
        self.progress = progress
        self._pos = 0

    def readinto(self, b) -> int:  # type: ignore[override]
        n = super().readinto(b)
        if n:
            self.sha.update(memoryview(b)[:n])
        if self.progress is not None:
            pos = self.raw.tell()
            if pos != self._pos:
                self.progress(pos - self._pos)
                self._pos = pos
        return n


def file_digest(path: str | Path) -> str:
    """sha256 hex of the decompressed content of one RDF file."""
    r = _HashingReader(Path(path), None)
    try:
        while r.read(1 << 20):
            pass
        return r.sha.hexdigest()
    finally:
        r.close()


def combine_fingerprint(digests: Sequence[str], graph: str | None = None, base: str | None = None) -> str:
    """The KG fingerprint from per-file content digests (see the module docstring); a base IRI
    given for relative IRIs changes the KG, so it changes the fingerprint."""
    h = hashlib.sha256()
    for d in sorted(digests):
        h.update(f"{d}\n".encode())
    if graph:
        h.update(f"graph={graph}\n".encode())
    if base:
        h.update(f"base={base}\n".encode())
    return "sha256:" + h.hexdigest()


def fingerprint(paths: Sequence[str | Path], graph: str | None = None, base: str | None = None) -> str:
    """The KG fingerprint of files, without loading them."""
    return combine_fingerprint([file_digest(p) for p in paths], graph, base)


@dataclass
class LoadedFile:
    name: str
    size: int
    sha256: str
    quads: int


@dataclass
class Manifest:
    """What was loaded into a store (memory or disk). ``quads`` counts all quads in the store."""

    fingerprint: str
    files: list[LoadedFile] = field(default_factory=list)
    graph: str | None = None
    quads: int = 0
    pyoxigraph: str = ox.__version__
    created: str = ""
    #: the base IRI relative IRIs were resolved against (None: each file's own file: URI)
    base: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any], where: str) -> "Manifest":
        try:
            files = [LoadedFile(**f) for f in doc.get("files", [])]
            return cls(fingerprint=str(doc["fingerprint"]), files=files, graph=doc.get("graph"),
                       quads=int(doc.get("quads", 0)), pyoxigraph=str(doc.get("pyoxigraph", "")),
                       created=str(doc.get("created", "")), base=doc.get("base"))
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(where, f"not a kgqa store manifest ({e}); expected keys fingerprint, files, quads")


def _check_files(paths: Sequence[str | Path]) -> list[Path]:
    out = []
    for p in paths:
        p = Path(p)
        if not p.is_file():
            raise InputError(p, "RDF file not found")
        rdf_format(p)
        out.append(p)
    if not out:
        raise InputError("(kg)", "no RDF files given")
    return out


def _load_one(store: ox.Store, path: Path, graph: str | None, bulk: bool, progress: Progress | None,
              loaded: list[LoadedFile], base: str | None = None) -> LoadedFile:
    fmt, _ = rdf_format(path)
    before = len(store)
    reader = _HashingReader(path, progress)
    to_graph = ox.NamedNode(graph) if graph else None
    base = base or path.resolve().as_uri()
    try:
        if bulk:
            store.bulk_load(input=reader, format=fmt, to_graph=to_graph, base_iri=base)
        else:
            store.load(input=reader, format=fmt, to_graph=to_graph, base_iri=base)
        # the parser may stop before EOF (e.g. trailing data after a final statement)
        while reader.read(1 << 20):
            pass
    except SyntaxError as e:
        done = sum(f.quads for f in loaded)
        what = (f"{len(loaded)} earlier file(s) with {done} quads were loaded" if loaded
                else "nothing was loaded")
        this = ("the store is incomplete and was not finalised" if bulk
                else "nothing from this file was loaded")
        raise InputError(path, f"not valid {fmt.name}: {e.args[0] if e.args else e}; "
                               f"{this} ({what})") from None
    except (OSError, EOFError, ValueError) as e:
        raise InputError(path, f"cannot read {fmt.name} file: {e}") from None
    finally:
        reader.close()
    return LoadedFile(path.name, path.stat().st_size, reader.sha.hexdigest(), len(store) - before)


def load_files(paths: Sequence[str | Path], graph: str | None = None, *, progress: bool = False,
               store: ox.Store | None = None, bulk: bool = False,
               base: str | None = None) -> tuple[ox.Store, Manifest]:
    """Load RDF files into ``store`` (a new in-memory store by default), triples into
    ``graph`` when given (quad formats keep their own graphs); relative IRIs resolve against
    ``base`` (default: each file's own ``file:`` URI, which depends on where it lies). Each file is loaded in one
    transaction (``bulk=False``): a file with a syntax error adds nothing and raises
    :class:`InputError` naming the file, line and column and what was loaded before it."""
    files = _check_files(paths)
    store = ox.Store() if store is None else store
    loaded: list[LoadedFile] = []
    with progress_bar(sum(p.stat().st_size for p in files), "loading", enabled=progress, unit="bytes") as bar:
        for p in files:
            bar(0, description=f"loading {p.name}")
            loaded.append(_load_one(store, p, graph, bulk, bar or None, loaded, base))
    fp = combine_fingerprint([f.sha256 for f in loaded], graph, base)
    return store, Manifest(fp, loaded, graph, len(store),
                           created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), base=base)


def create_store(paths: Sequence[str | Path], directory: str | Path, graph: str | None = None, *,
                 progress: bool = False, replace: bool = False, base: str | None = None) -> Manifest:
    """Bulk-load RDF files into a new persistent store at ``directory`` and write its
    manifest. An existing non-empty directory is refused, unless ``replace`` is set and it is
    a kgqa store (has a manifest), which is then deleted first. The manifest is written only
    after every file loaded, so a directory without one is an incomplete store."""
    d = Path(directory)
    if d.exists() and (not d.is_dir() or any(d.iterdir())):
        if replace and (d / MANIFEST).is_file():
            shutil.rmtree(d)
        else:
            hint = " (pass --replace to overwrite a kgqa store)" if (d / MANIFEST).is_file() else ""
            raise InputError(d, f"store directory exists and is not empty{hint}")
    files = _check_files(paths)
    d.mkdir(parents=True, exist_ok=True)
    store = ox.Store(str(d))
    try:
        _, manifest = load_files(files, graph, progress=progress, store=store, bulk=True, base=base)
        store.flush()
        store.optimize()
        manifest.quads = len(store)
    finally:
        del store

    write_atomic(d / MANIFEST, [json.dumps(manifest.to_json(), indent=2) + "\n"])
    return manifest


def read_manifest(directory: str | Path) -> Manifest:
    """The manifest of a persistent store, or :class:`InputError` if it has none."""
    d = Path(directory)
    m = d / MANIFEST
    if not m.is_file():
        raise InputError(d, f"not a kgqa store: {MANIFEST} missing (create one with `kgqa kg load FILE... --store DIR`;"
                            " a store without it is incomplete)")
    try:
        doc = json.loads(m.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(m, f"unreadable manifest: {e}")
    if not isinstance(doc, dict):
        raise InputError(m, "manifest is not a JSON object")
    return Manifest.from_json(doc, str(m))


def is_store_dir(path: str | Path) -> bool:
    return Path(path).is_dir() and (Path(path) / MANIFEST).is_file()


# ---------------------------------------------------------------------- stores kept in the cache

#: RDF files of at least this many bytes in all (as stored on disk, compressed or not) are not
#: loaded into memory: they are bulk-loaded once into an on-disk store kept in the cache
#: (:func:`cached_store`) and reopened read-only by every later run. Setting: the
#: ``KGQA_KG_STORE_BYTES`` environment variable (bytes; 0 = always, ``off`` = never).
DISK_STORE_BYTES = 64 << 20
_INDEX = "index.json"


def disk_store_threshold() -> int | None:
    """The size from which ``--kg FILE`` goes through a cached on-disk store (None: never)."""

    raw = os.environ.get("KGQA_KG_STORE_BYTES", "").strip().lower()
    if raw in ("off", "never", "none"):
        return None
    try:
        return int(raw) if raw else DISK_STORE_BYTES
    except ValueError:
        raise InputError("KGQA_KG_STORE_BYTES", f"expected a number of bytes or 'off', got {raw!r}") from None


def store_cache_dir() -> Path:
    """Where cached KG stores live: ``$KGQA_CACHE_DIR/kgs`` (default ``~/.cache/kgqa/kgs``)."""

    return default_cache_dir() / "kgs"


def _stat_key(files: Sequence[Path], graph: str | None, base: str | None = None) -> str:
    parts = []
    for f in files:
        st = f.stat()
        parts.append(f"{f.resolve()}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}")
    return "\n".join(sorted(parts)) + f"\ngraph={graph or ''}" + (f"\nbase={base}" if base else "")


def _read_index(root: Path) -> dict[str, str]:
    try:
        doc = json.loads((root / _INDEX).read_text(encoding="utf-8"))
        return {str(k): str(v) for k, v in doc.items()} if isinstance(doc, dict) else {}
    except (OSError, ValueError):
        return {}


def _store_name(fp: str) -> str:
    return fp.replace("sha256:", "")[:40]


def _remove_stale_partials(root: Path) -> None:
    """Partial stores of loads that were killed (their process is gone) are deleted."""

    for d in root.glob("partial-*"):
        try:
            pid = int(d.name.split("-")[1])
            os.kill(pid, 0)
        except (ValueError, IndexError, ProcessLookupError):
            shutil.rmtree(d, ignore_errors=True)
        except PermissionError:
            pass


def cached_store(paths: Sequence[str | Path], graph: str | None = None, *, progress: bool = False,
                 root: str | Path | None = None, base: str | None = None) -> Path:
    """The directory of a persistent store holding ``paths`` (triples into ``graph``), made once
    and kept in the cache (:func:`store_cache_dir`), named by the KG's content fingerprint.

    - A later run finds it without reading the files again: a memo maps each file's resolved
      path, size, modification time and inode (plus ``graph``) to the fingerprint. A file
      changed in place gets a new memo entry, is hashed, and gets a store of its own (the same
      content under another name or path reuses the existing store after one hashing pass).
    - A store is bulk-loaded into ``partial-<pid>-...`` and renamed when complete, so a load
      killed half-way leaves no store that looks finished (its partial directory is removed by a
      later run), and two processes loading the same files end with one store.
    """
    files = _check_files(paths)
    cache = Path(root) if root is not None else store_cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(cache, f"cannot create the KG store cache: {e}; set KGQA_CACHE_DIR to a writable "
                               "directory or KGQA_KG_STORE_BYTES=off to load KGs into memory") from None
    key = _stat_key(files, graph, base)
    fp = _read_index(cache).get(key)
    if fp is None or not is_store_dir(cache / _store_name(fp)):
        fp = combine_fingerprint([file_digest(f) for f in files], graph, base)
        target = cache / _store_name(fp)
        if not is_store_dir(target):
            _remove_stale_partials(cache)
            partial = cache / f"partial-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            try:
                manifest = create_store(files, partial, graph, progress=progress, base=base)
                if manifest.fingerprint != fp:  # a file changed while it was read
                    raise InputError(files[0], "an RDF file changed while it was loaded; run again")
                try:
                    partial.rename(target)
                except OSError:
                    if not is_store_dir(target):
                        raise
            except OSError as e:
                raise InputError(cache, f"cannot write the KG store cache: {e}; free space or set "
                                       "KGQA_CACHE_DIR, or KGQA_KG_STORE_BYTES=off to load into memory") from None
            finally:
                shutil.rmtree(partial, ignore_errors=True)
        index = _read_index(cache)
        index[key] = fp

        try:
            write_atomic(cache / _INDEX, [json.dumps(index, indent=1) + "\n"])
        except OSError:
            pass  # the memo only saves hashing next time
    return cache / _store_name(fp)
