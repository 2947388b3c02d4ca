"""Every command's table output at 80 columns (issue 24): run in a pseudo-terminal 80 columns
wide, as a user's terminal is, no line is wider and no name a user must type is cut (no "…",
names whole); piped, the names are printed in full too. Help fits and keeps every option name.
(The commands in a terminal run as processes forked from the test process's zygote, their
imports done: tests/zygote.py; what a terminal shows does not depend on the interpreter's start,
which the piped test here and test_lazy_imports.py's terminal runs start afresh.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

from kgqa.demo import DATA
from tests.ptyrun import REPO, check_fits, help_paths, run_pty, run_pty_many

pytestmark = pytest.mark.xdist_group("cli80")

WIDTH = 80
RUNS = DATA / "runs"
LONG = "a-system-with-a-rather-long-name"  # a run name wider than a narrow column


def _check(text: str, names: list[str] = ()) -> None:
    check_fits(text, names, WIDTH)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    import kgqa
    from kgqa.store import Store
    from kgqa.store.record import record_evaluations

    d = tmp_path_factory.mktemp("cli80")
    specs = [f"{LONG}={RUNS / 'strong.json'}", str(RUNS / "weak.json"), str(RUNS / "medium.json")]
    evals = kgqa.evaluate_many("demo", specs)
    kgqa.save_evaluations(evals, d / "results.json")
    ids = record_evaluations(Store(str(d / "exp.sqlite")), "demo", [str(RUNS / p) for p in
                                                                    ("strong.json", "weak.json", "medium.json")],
                             evals, profile="kgqa", kg=str(DATA / "kg.ttl"))
    return {"dir": d, "ids": ids, "specs": specs}


def _commands(f) -> dict[str, tuple[list[str], list[str]]]:
    from kgqa.load import registry
    from kgqa.score import measures, profiles

    d, specs = f["dir"], f["specs"]
    return {
        "evaluate": (["evaluate", "demo", *specs, "-q", "--by", "hops", "--by", "answer_cardinality"],
                     [LONG, "weak", "medium", "AnswerEM", "Coverage"]),
        "compare": (["compare", "demo", *specs, "--resamples", "200"], [LONG, "AnswerEM", "Coverage"]),
        "report": (["report", str(d / "results.json"), "-f", "table", "--resamples", "200"], [LONG, "weak"]),
        "show": (["show", str(d / "results.json"), "--id", "12", "--run", "weak"], ["weak", "12"]),
        "measures": (["measures"], [m.name for m in measures.all_measures()]),
        "profiles": (["profiles"], list(profiles.names())),
        "datasets list": (["datasets", "list"], [e.name for e in registry.entries()]),
        "datasets info": (["datasets", "info", "demo"], ["demo"]),
        "experiments list": (["experiments", "list", "--store", str(d / "exp.sqlite")], f["ids"]),
        "experiments show": (["experiments", "show", f["ids"][0], "--store", str(d / "exp.sqlite")], [f["ids"][0]]),
        "kg info": (["kg", "info", str(DATA / "kg.ttl")], []),
        "cache stats": (["cache", "stats"], []),
        "levels": (["levels", "demo", "demo"], []),
    }


TABLES = ["evaluate", "compare", "report", "show", "measures", "profiles", "datasets list", "datasets info",
          "experiments list", "experiments show", "kg info", "cache stats", "levels"]


@pytest.fixture(scope="module")
def tables(files, tmp_path_factory):
    """Each command of :data:`TABLES` run in one 80-column terminal, one after another in one
    process (as ``python -m kgqa.cli`` runs one): name -> (exit status, terminal text)."""
    commands = _commands(files)
    cache = tmp_path_factory.mktemp("cli80cache")
    ran = run_pty_many([commands[n][0] for n in TABLES], cols=WIDTH, env={"KGQA_CACHE_DIR": str(cache)}, fork=True)
    return dict(zip(TABLES, ran))


@pytest.mark.parametrize("name", TABLES)
def test_every_table_fits_80_columns_in_a_terminal(files, tables, name):
    code, text = tables[name]
    assert code == 0, text[-3000:]
    _check(text, _commands(files)[name][1])


def test_demo_fits_80_columns(tmp_path):
    code, text = run_pty(["demo"], cols=WIDTH, env={"KGQA_CACHE_DIR": str(tmp_path / "cache")}, fork=True)
    assert code == 0, text[-3000:]
    _check(text, ["strong", "weak", "medium"])
    assert "kgqa/demo/data/runs/weak.json" in text  # Next: commands, whole (run from the checkout)


def test_dataset_names_are_whole_when_piped():
    from kgqa.load import registry

    proc = subprocess.run([sys.executable, "-m", "kgqa.cli", "datasets", "list"], capture_output=True, text=True,
                          cwd=str(REPO), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout  # piped output may be wider than 80 columns, but names are whole
    words = set(proc.stdout.split())
    assert [e.name for e in registry.entries() if e.name not in words] == []


@pytest.mark.slow  # the quick suite renders every help at 80 columns once, in the fresh process of
# test_lazy_imports.py::test_building_the_cli_and_its_help_import_no_heavy_library, which checks this claim
def test_every_help_fits_80_columns_and_keeps_option_names(monkeypatch):
    import io
    from contextlib import redirect_stdout

    from kgqa import cli

    monkeypatch.setenv("COLUMNS", str(WIDTH))
    root = cli.command()
    for path, sub in help_paths(root):
        buf = io.StringIO()
        with redirect_stdout(buf):
            try:
                cli.main([*path.split(), "--help"])
            except SystemExit as e:
                assert e.code in (0, None), path
        opts = [o for p in sub.params for o in p.opts if o.startswith("--")]
        _check(buf.getvalue(), opts)


def test_warnings_wrap_at_word_boundaries_in_a_terminal(tmp_path):
    ds = tmp_path / "ds.jsonl"
    ds.write_text("".join(f'{{"id": "q{i}", "question": "q?", "answers": ["http://x/a"]}}\n' for i in range(3)),
                  encoding="utf-8")
    run = tmp_path / "run.jsonl"
    run.write_text('{"id": "q0", "answers": ["http://x/a"]}\n{"id": "elsewhere", "answers": ["http://x/a"]}\n',
                   encoding="utf-8")
    code, text = run_pty(["evaluate", str(ds), str(run)], cols=WIDTH, fork=True)
    assert code == 0, text
    _check(text)
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("set-up warning:"))
    block = lines[start:start + 6]
    words = " ".join(block).split()
    # every line ends at a word boundary: joining the lines with spaces gives the message's words
    assert "'elsewhere';" in words or "'elsewhere'" in words
    assert all(len(ln) <= WIDTH for ln in block)


def test_iris_break_only_after_a_slash_or_hash():
    from kgqa.report.term import wrap_iris

    iri = "http://example.org/resource/Some_Very_Long_Resource_Name_That_Goes_On#fragment_part/and/more"
    text = f"?uri={iri} ?label=plain words here"
    for width in (20, 33, 47, 60):
        lines = wrap_iris(text, width).split("\n")
        assert all(len(ln) <= width for ln in lines) and len(lines) > 1
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    for width in (47, 60):  # no piece between two allowed breaks is longer than these
        start = 0
        for ln in wrap_iris(text, width).split("\n")[:-1]:
            pos = text.index(ln, start)
            end = pos + len(ln)
            assert text[end - 1] in "/#" or text[end:end + 1] == " ", (width, ln)
            start = end
