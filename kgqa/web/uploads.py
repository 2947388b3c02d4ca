"""Checks of the New-experiment form that do real work, kept off the server's event loop.

:class:`Checker` runs :func:`check_uploads` (read the uploaded dataset and run against each
other; refuse compression bombs) in a small process pool behind a bounded queue: while uploads
are being read, pages are still served (the pool's processes have their own interpreter, so
parsing a large upload never holds the server's GIL). A full queue answers at once ("busy")
instead of piling up work. :func:`check_url` decides which live-system and endpoint URLs the
server may ask (loopback and private ranges only when listed). :func:`web_wording` says CLI
advice in the form's words.
"""

from __future__ import annotations

import asyncio
import bz2
import os
import gzip
import lzma
import re
import socket
import tempfile
import zlib
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
import io

import kgqa.load  # noqa: F401  (pre-imported in the checking processes)
from kgqa.model import InputError
from kgqa.model.urlguard import UrlRule, resolve_addresses
from kgqa.web.jobs import stop_pool, worker_context, worker_setup
from kgqa.store import runner

#: CLI advice in loader and pipeline messages -> what a web user does instead.
_WORDING = (
    (re.compile(r"pass --dataset-format \(--format in kgqa datasets / split / levels\)"),
     "choose it in the form's “Dataset format” field"),
    (re.compile(r"pass --run-format"), "choose it in the form's “Run format” field"),
    (re.compile(r"--dataset-format"), "the form's “Dataset format” field"),
    (re.compile(r"--run-format"), "the form's “Run format” field"),
    (re.compile(r"\(use --kg\)"), "(choose a KG in the form)"),
    (re.compile(r"needs --kg \(kg=\)"), "needs a knowledge graph (the form's “KG” field)"),
    (re.compile(r"--kg\b"), "the form's “KG” field"),
    (re.compile(r"--lang\b"), "the form's “Language(s)” field"),
    (re.compile(r"--measures\b"), "the form's “Measures” field"),
    (re.compile(r"--timeout\b"), "the form's “Timeout” field"),
    (re.compile(r"set KGQA_MAX_DECOMPRESSION_RATIO to allow it"), "upload the file uncompressed"),
)


def web_wording(message: str | None) -> str | None:
    """``message`` with CLI flags replaced by the form fields that do the same."""
    if not message:
        return message
    for rx, repl in _WORDING:
        message = rx.sub(repl, message)
    return message


# --------------------------------------------------------------------------- compression bombs

_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))


def compression_of(data: bytes) -> str | None:
    return next((name for magic, name in _MAGIC if data.startswith(magic)), None)


def inflated_size(data: bytes, cap: int) -> int:
    """Bytes ``data`` (gzip, bzip2 or xz) inflates to, read in 1 MiB chunks and stopping past
    ``cap`` (returns ``cap + 1`` then): memory stays at one chunk whatever the ratio."""

    opener = {"gzip": gzip.open, "bzip2": bz2.open, "xz": lzma.open}.get(compression_of(data) or "")
    if opener is None:
        return len(data)
    total = 0
    with opener(io.BytesIO(data), "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                return total
            total += len(chunk)
            if total > cap:
                return cap + 1


def check_compressed(name: str, data: bytes, what: str, cap_mb: float) -> None:
    """Refuse a compressed upload that inflates past ``cap_mb`` MB (a decompression bomb), and
    compressed datasets and runs (the loaders read them uncompressed)."""
    kind = compression_of(data)
    if kind is None:
        return
    if what != "RDF file":
        raise InputError(name, f"the uploaded {what} is {kind}-compressed: upload the uncompressed file")
    cap = int(cap_mb * 1024 * 1024)
    try:
        size = inflated_size(data, cap)
    except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as err:
        raise InputError(name, f"the uploaded {what} is not valid {kind} data ({err})") from None
    if size > cap:
        raise InputError(name, f"the uploaded {what} inflates to more than {cap_mb:g} MB ({kind}, "
                               f"{len(data):,} bytes compressed): refused as a decompression bomb (this server "
                               "reads compressed RDF up to that size; kgqa web --max-unpacked-mb)")
    if not name.lower().endswith((".gz", ".bz2", ".xz")):
        raise InputError(name, f"the uploaded {what} is {kind}-compressed but its name does not end in .gz, .bz2 or "
                               ".xz: rename it (e.g. kg.nt.gz)")


# --------------------------------------------------------------------------- the check itself


@dataclass
class UploadJob:
    """What :func:`check_uploads` reads: ``(file name, bytes)`` of each upload (None: not
    uploaded) and the form's settings."""

    dataset: str
    dataset_upload: tuple[str, bytes] | None
    run_upload: tuple[str, bytes] | None
    kg_upload: tuple[str, bytes] | None
    run_name: str
    lang: str = "all"
    dataset_format: str | None = None
    run_format: str | None = None
    max_unpacked_mb: float = 512.0
    extra: dict[str, Any] = field(default_factory=dict)


def check_uploads(job: UploadJob) -> tuple[str, str, str | None] | None:
    """None when the uploads can be used; else ``(file, message, record)`` of the first problem
    (an :class:`InputError` does not survive pickling between processes, a tuple does). Runs in
    a worker process."""

    try:
        for up, what in ((job.dataset_upload, "dataset"), (job.run_upload, "run"), (job.kg_upload, "RDF file")):
            if up is not None:
                check_compressed(up[0], up[1], what, job.max_unpacked_mb)
        with tempfile.TemporaryDirectory(prefix="kgqa-upload-") as tmp:
            d = Path(tmp)
            try:
                ds_spec = job.dataset
                if job.dataset_upload is not None:
                    (d / "dataset").mkdir()
                    p = d / "dataset" / job.dataset_upload[0]
                    p.write_bytes(job.dataset_upload[1])
                    ds_spec = str(p)
                    runner.load_dataset(ds_spec, job.dataset_format, job.lang)
                if job.run_upload is not None:
                    (d / "run").mkdir()
                    p = d / "run" / job.run_upload[0]
                    p.write_bytes(job.run_upload[1])
                    runner.check_upload(ds_spec, str(p), job.run_name, lang=job.lang,
                                        dataset_format=job.dataset_format, run_format=job.run_format)
            except InputError as err:
                pr = err.problem
                return runner.strip_tmp(pr.file, tmp), runner.strip_tmp(pr.message, tmp), pr.record
    except InputError as err:
        pr = err.problem
        return pr.file, pr.message, pr.record
    except MemoryError:
        return ("upload", "the upload is too large to read on this server (out of memory while reading it)", None)
    return None


class Busy(Exception):
    """The upload queue is full."""


class Checker:
    """:func:`check_uploads` in ``workers`` processes, at most ``queue`` jobs waiting."""

    def __init__(self, workers: int = 2, queue: int = 16, memory_mb: float = 0.0):
        self.memory_mb = memory_mb
        self.workers = max(1, workers)
        self.limit = self.workers + max(0, queue)
        self.in_flight = 0
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=worker_context(), initializer=_worker_init,
                                             initargs=(self.memory_mb, os.getpid()))
        return self._pool

    async def check(self, job: UploadJob) -> None:
        """Raises :class:`InputError` (the first problem) or :class:`Busy`. A checking process
        that dies (killed) takes a fresh pool and the check is tried once more: only a check
        that takes its process down twice is blamed on the upload."""
        if self.in_flight >= self.limit:
            raise Busy(f"the server is reading {self.in_flight} uploads already: try again in a moment")
        self.in_flight += 1
        try:
            found = await self._run(job)
        finally:
            self.in_flight -= 1
        if found is not None:
            raise InputError(found[0], found[1], found[2])

    async def _run(self, job: UploadJob) -> tuple[str, str, str | None] | None:
        loop = asyncio.get_running_loop()
        for attempt in range(2):
            pool = self._get_pool()
            try:
                return await loop.run_in_executor(pool, check_uploads, job)
            except BrokenProcessPool:  # a checking process died (killed): a fresh pool
                codes = [p.exitcode for p in (getattr(pool, "_processes", None) or {}).values()]
                if self._pool is pool:
                    self._pool = None
                    await asyncio.to_thread(stop_pool, pool)
                if attempt:
                    how = ", ".join(str(c) for c in codes if c) or "unknown"
                    raise InputError("upload", "reading the upload ended the checking process twice (exit "
                                               f"{how}): it may be too large for this server "
                                               "(kgqa web --worker-memory-mb)") from None
        return None

    def shutdown(self) -> None:
        pool, self._pool = self._pool, None
        stop_pool(pool)


def _worker_init(memory_mb: float = 0.0, server_pid: int | None = None) -> None:
    """Checking processes set up as the experiment workers (:func:`kgqa.web.jobs.worker_setup`)
    (the loaders are imported with this module)."""
    worker_setup(memory_mb, server_pid)


# --------------------------------------------------------------------------- URLs the server asks


def check_url(url: str, field_name: str, allowed_hosts: frozenset[str] | set[str],
              resolve: Any = socket.getaddrinfo) -> str:
    """``url`` when the server may ask it: http(s), a host name, and every address it resolves
    to public, unless the host is listed in ``allowed_hosts`` (``--allowed-url-host``).
    Raises :class:`InputError` naming ``field_name`` otherwise."""
    u = url.strip()
    try:
        parts = urlsplit(u)
        host, port = parts.hostname, parts.port
    except ValueError as err:
        raise InputError(field_name, f"not a URL: {u[:200]!r} ({err})") from None
    if parts.scheme not in ("http", "https") or not host:
        raise InputError(field_name, f"expected an http(s) URL, got {u[:200]!r}")
    if parts.username or parts.password:
        raise InputError(field_name, "URLs with a user name or password are not accepted from the form")
    host = host.rstrip(".").lower()
    if host in allowed_hosts:
        return u
    hint = f"start the server with --allowed-url-host {host} to allow it"
    try:
        addrs = resolve_addresses(host, port or (443 if parts.scheme == "https" else 80), resolve)
    except (OSError, UnicodeError) as err:
        raise InputError(field_name, f"cannot resolve {host!r}: {err}") from None
    why = UrlRule(public_only=True).refusal(host, addrs, strict=True)
    if why:
        raise InputError(field_name, f"{why}: this server only asks public hosts ({hint})")
    return u
