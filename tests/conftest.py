"""Shared fixtures. Real-data tests use ../shared/data (or $KGQA_DATA_DIR) and are skipped,
with the reason, only when that folder is absent, and fail instead with ``KGQA_REQUIRE_DATA=1``
(set by ``.ci/run``, so CI proves it ran them)."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: Free space a RAM file system needs before a test session keeps its temporary files there.
RAM_TMP_MIN_FREE = 4 << 30


def _ram_tmp() -> str | None:
    """Temporary files on a RAM file system (Linux ``/dev/shm``) where one has room: the SQLite
    result caches, experiment stores and journals of the tests sync to disk on every commit
    (an fsync of about 4 ms on a virtual disk: seconds of a quiet run's wall time waiting for it
    per file that writes a store). A ``TMPDIR`` already set is kept (set ``TMPDIR=/tmp`` for
    the disk); too little room (a container's 64 MiB ``/dev/shm``): the default. Set for the
    whole session, so the tests' processes (CLI runs, servers, workers) and pytest's
    ``tmp_path`` use it too; nothing a test checks depends on which file system holds it."""
    if os.environ.get("TMPDIR"):
        return None
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
    except OSError:
        return None
    if st.f_bavail * st.f_frsize < RAM_TMP_MIN_FREE or not os.access(shm, os.W_OK | os.X_OK):
        return None
    return shm


if (_RAM := _ram_tmp()) is not None:
    os.environ["TMPDIR"] = _RAM
    tempfile.tempdir = None  # tempfile reads TMPDIR again at its next use

# the result cache and cached KG stores of a test session live in a folder of its own (one per
# xdist worker, removed at exit): a user's ~/.cache/kgqa, or what ran before, never changes what a
# test sees (the counts of executed queries and cache hits are part of the output)
_CACHE = tempfile.mkdtemp(prefix="kgqa-test-cache-")
os.environ["KGQA_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

# pytest caches the assertion-rewritten test modules as .pyc files (tests/__pycache__, ignored by
# git) unless bytecode writing is off: with PYTHONDONTWRITEBYTECODE=1 each test process would
# rewrite all of them on every run (about 7 s a process); a later run (CI's slow part, a
# developer's rerun) reads them back
sys.dont_write_bytecode = False
# and the kgqa processes tests start (CLI runs, servers, workers) keep kgqa's compiled modules
# too, instead of each compiling every module it imports from source
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# a test run started in the background of a script (`pytest ... &`) inherits SIGINT ignored, and
# so would every kgqa process a test starts: the Ctrl-C tests send SIGINT to those. A handler
# here (reset to the default at exec) gives them the interrupt a terminal user's Ctrl-C gives.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# analyzer bugs raise in tests instead of reading as "invalid query" (kgqa.sparql.analyzer)
os.environ.setdefault("KGQA_ANALYZER_STRICT", "1")


def _shared_data() -> Path | None:
    env = os.environ.get("KGQA_DATA_DIR")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data"]:
        if cand.is_dir():
            return cand
    return None


SHARED = _shared_data()
# the dataset registry reads the shared data, as under .ci/run: set for the whole session (not per
# test), so module-scoped fixtures and the servers tests start as processes read it too
if SHARED is not None:
    os.environ.setdefault("KGQA_DATA_DIR", str(SHARED))


def no_data(reason: str = "real benchmark data not found: set KGQA_DATA_DIR or place shared/data beside the "
                             "checkout") -> None:
    """Skip a real-data test whose data is absent, or fail it under ``KGQA_REQUIRE_DATA=1``."""
    if os.environ.get("KGQA_REQUIRE_DATA") == "1":
        pytest.fail(f"KGQA_REQUIRE_DATA=1: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if SHARED is None:
        no_data()
    return SHARED


def pytest_configure(config):
    """In the README's command (``-m "not slow"``) Hypothesis draws no literals from kgqa's own
    source: to find them it parses every kgqa module a test process has imported (about 2.5
    CPU-s a process in a fresh clone, whose ``.hypothesis/`` has no cache of them yet). The
    thorough examples in CI's slow run keep drawing them. Hypothesis has no setting for this:
    its private hook is replaced, and left alone where a version lacks it."""
    if (config.getoption("markexpr", "") or "").replace(" ", "") != "notslow":
        return
    from hypothesis.internal.conjecture import providers

    if callable(getattr(providers, "_get_local_constants", None)) and hasattr(providers, "_local_constants"):
        providers._get_local_constants = lambda: providers._local_constants  # empty: none collected


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup`` every test of an ``xdist_group`` runs on one worker, so a module's
    servers and expensive fixtures are made once. pytest-xdist marks such a test by suffixing its
    node id with ``@group``; where the pytest in use ignores that (pytest 9.2 with xdist 3.8,
    pytest-dev/pytest-xdist#1386) the groups are split across workers: the run is right but slow,
    and the warnings summary says why."""
    if not (hasattr(config, "workerinput") and config.getvalue("loadgroup")):
        return
    lost = [it.nodeid for it in items if it.get_closest_marker("xdist_group") and "@" not in it.nodeid]
    if lost and config.workerinput.get("workerid") == "gw0":
        import warnings

        warnings.warn(pytest.PytestWarning(
            f"--dist loadgroup has no effect with pytest {pytest.__version__}: the {len(lost)} tests marked "
            f"xdist_group (e.g. {lost[0]}) are spread over the workers, so their servers and module fixtures are "
            "made once per worker (pytest-dev/pytest-xdist#1386); install the test extra's pytest "
            "(pip install -e '.[test]')"))


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    """The servers' zygote (tests/zygote.py), where this process started one, ends with the
    session and is waited for: its CPU time and its servers' count in this process's children's."""
    zygote = sys.modules.get("zygote")
    if zygote is not None:
        zygote.close()


#: The console width every test renders at, whatever the terminal or ``COLUMNS`` of the shell
#: that runs pytest. Set here, before any test module imports kgqa, and again before each test: a
#: rich Console keeps the ``COLUMNS`` it saw when it was made (the CLI's ``out``/``err`` are made on
#: first use, and made afresh before each test); so one value holds for every CliRunner invocation,
#: every ``kgqa.cli.main`` call and every server started as a process.
CONSOLE_WIDTH = 200
_CONSOLE_ENV = {"COLUMNS": str(CONSOLE_WIDTH), "LINES": "50"}
os.environ.update(_CONSOLE_ENV)
os.environ.pop("TERMINAL_WIDTH", None)  # typer's own width override


@pytest.fixture(autouse=True)
def _fixed_console_width(monkeypatch):
    """Every test starts at :data:`CONSOLE_WIDTH`, whatever an earlier test set."""
    for k, v in _CONSOLE_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("TERMINAL_WIDTH", raising=False)
    output = sys.modules.get("kgqa.cli._output")  # the CLI's consoles keep the width they were made at
    if output is not None:  # (made by an earlier test, perhaps at another COLUMNS): made afresh
        output.Console.reset_all()


def squash(text: str) -> str:
    """``text`` without whitespace: assertions on messages compare ``squash(expected) in
    squash(output)``, which holds however rich wrapped the message (at a space) or folded a word
    longer than the width (a path in a deep checkout, split mid-word)."""
    return "".join(text.split())


@pytest.fixture(autouse=True)
def _no_downloads_from_the_internet(monkeypatch):
    """Tests talk to 127.0.0.1 only: a dataset download from any other host fails at once (the
    registry's own download tests use a local server)."""
    from urllib.parse import urlsplit

    from kgqa.load import registry
    from kgqa.model import InputError

    real = registry._download

    def guarded(f, dest, verify):
        host = urlsplit(f.url or "").hostname or ""
        if f.url and host not in ("127.0.0.1", "localhost", "::1"):
            raise InputError(f.url, "not downloaded: tests never reach the internet (file absent locally)")
        return real(f, dest, verify)

    monkeypatch.setattr(registry, "_download", guarded)


#: Chromium flags for the browser tests: no background networking, no name resolution beyond
#: loopback, and a dead local proxy for anything else (tests talk to 127.0.0.1 only).
CHROMIUM_OFFLINE_FLAGS = (
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-features=DnsOverHttps,OptimizationHints,MediaRouter", "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=127.0.0.1;localhost",
)


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    """``kgqa ARGS`` in this process: (exit status, stdout, stderr)."""
    from kgqa.cli import main

    code = 0
    try:
        main(list(args))
    except SystemExit as e:
        code = e.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def examples(n: int, quick: int | None = None):
    """Parametrise a property test with its number of examples (the ``examples`` argument): a
    tenth of ``n`` (at least 25) in the README's test command and all ``n`` in CI's slow run, so
    the same property is checked quickly every time and thoroughly in CI. ``quick`` replaces the
    tenth for a test whose every example is costly (a KG loaded, a store written, a CLI run): a
    few such examples in the README's command, all ``n`` in CI's slow run."""
    quick = max(n // 10, 25) if quick is None else quick
    return pytest.mark.parametrize("examples", [pytest.param(quick, id="quick"),
                                                pytest.param(n, id="thorough", marks=pytest.mark.slow)])


def pairs(names: tuple[str, str], rows, cols) -> pytest.MarkDecorator:
    """Parametrise ``names`` with every (row, column) pair: in the README's test command each row
    once, paired with the columns in turn (every column too, given at least as many rows), all the
    other pairs in CI's slow run."""
    rows, cols = list(rows), list(cols)
    return pytest.mark.parametrize(names, [
        pytest.param(r, c, id=f"{r}-{c}", marks=() if j == i % len(cols) else pytest.mark.slow)
        for i, r in enumerate(rows) for j, c in enumerate(cols)])


def derive_kg_pair():
    """``tools/derive_kg_pair.py`` as a module (it is a script, not a package module)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("derive_kg_pair", REPO / "tools" / "derive_kg_pair.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
