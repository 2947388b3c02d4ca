"""Lazy imports (issue 17): building the command line and printing its help import no library that
only some command needs, and answers-only scoring imports no plotting, statistics, BLEU or
dataframe library. Each check runs in a fresh interpreter (this process has imported everything).
Not timed: bench/bench_startup.py measures the start-up time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO
from kgqa.cli import command
from tests.ptyrun import check_fits, help_paths

WIDTH = 80  # as in tests/cli/test_cli_80_columns.py

#: Never imported by building the CLI or printing any command's help.
HELP_FREE = ["matplotlib", "scipy", "sacrebleu", "pandas", "sqlalchemy", "starlette", "uvicorn", "jinja2",
             "pyoxigraph", "numpy", "yaml", "kgqa.sparql", "kgqa.make.migrate", "kgqa.score.evaluate", "kgqa.api"]
#: Never imported by answers-only scoring.
SCORING_FREE = ["matplotlib", "scipy", "sacrebleu", "pandas", "sqlalchemy", "starlette", "uvicorn", "jinja2"]
#: Never imported by ``kgqa evaluate`` answers-only either: no statistic is printed (the statistics
#: modules import NumPy at their top) and no query is executed (the embedded engine, pyoxigraph).
EVALUATE_FREE = [*SCORING_FREE, "numpy", "pyoxigraph", "kgqa.analyze.stats", "kgqa.execute.embedded"]
#: Nor by the library's answers-only scoring, which parses no query either.
LIBRARY_SCORING_FREE = [*EVALUATE_FREE, "kgqa.sparql"]


def _loaded_after(code: str, modules: list[str], env: dict[str, str] | None = None) -> dict:
    """Run ``code`` in a fresh interpreter (``env`` added to its environment); return which of
    ``modules`` (or their submodules) it imported, and what ``code`` left in ``result``."""
    script = code + f"""
import json as _json, sys as _sys
_mods = {modules!r}
_loaded = sorted(m for m in _mods if any(k == m or k.startswith(m + ".") for k in _sys.modules))
_sys.__stdout__.write("\\n@@" + _json.dumps({{"loaded": _loaded, "result": globals().get("result")}}) + "\\n")
"""
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300,
                          cwd=str(REPO))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.rsplit("\n@@", 1)[1])


def test_building_the_cli_and_its_help_import_no_heavy_library():
    """Also issue 24's claim that every help fits 80 columns and keeps every option name: the helps
    are rendered here once, at ``COLUMNS=80`` (test_cli_80_columns.py's in-process twin runs under
    slow)."""
    out = _loaded_after("""
import io, contextlib
from kgqa.cli import command, main
import sys
cmd = command()
after_command = sorted(sys.modules)

def paths(c, prefix=""):
    for name, sub in (getattr(c, "commands", None) or {}).items():
        yield f"{prefix} {name}".strip()
        yield from paths(sub, f"{prefix} {name}".strip())

helps = {}
for path in ["", *paths(cmd)]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            main([*path.split(), "--help"])
        except SystemExit:
            pass
    helps[path] = buf.getvalue()
result = {"after_command": after_command, "helps": helps}
""", HELP_FREE, env={"COLUMNS": str(WIDTH)})
    heavy_after_command = [m for m in HELP_FREE
                           if any(k == m or k.startswith(m + ".") for k in out["result"]["after_command"])]
    assert heavy_after_command == []
    assert out["loaded"] == [], "imported by rendering --help: " + ", ".join(out["loaded"])
    helps = out["result"]["helps"]
    assert len(helps) > 30 and all(len(t) > 200 for t in helps.values()), helps  # every help was printed
    paths = help_paths(command())
    assert sorted(helps) == sorted(path for path, _ in paths)
    for path, sub in paths:  # at 80 columns no line is wider, and no option name is cut
        check_fits(helps[path], [o for p in sub.params for o in p.opts if o.startswith("--")], WIDTH)


def test_version_imports_no_heavy_library():
    out = _loaded_after("""
from kgqa.cli import main
try:
    main(["--version"])
except SystemExit:
    pass
""", HELP_FREE)
    assert out["loaded"] == []


def test_import_kgqa_and_the_api_are_light():
    assert _loaded_after("import kgqa", [*HELP_FREE, "kgqa.load", "kgqa.score"])["loaded"] == []
    assert _loaded_after("import kgqa.api", SCORING_FREE)["loaded"] == []


def test_answers_only_scoring_imports_no_plotting_statistics_bleu_or_dataframes(tmp_path):
    ds = tmp_path / "ds.jsonl"
    run = tmp_path / "run.jsonl"
    ds.write_text("".join(json.dumps({"id": str(i), "question": f"q{i}?", "answers": [f"http://x/{i}", "http://x/0"]})
                          + "\n" for i in range(1, 6)), encoding="utf-8")
    run.write_text("".join(json.dumps({"id": str(i), "answers": [f"http://x/{i}"]}) + "\n" for i in range(1, 5)),
                   encoding="utf-8")
    for profile in ("text2sparql", "kgqa"):
        out = _loaded_after(f"""
import kgqa
e = kgqa.evaluate({str(ds)!r}, {str(run)!r}, profile={profile!r})
result = dict(e.aggregate)
""", LIBRARY_SCORING_FREE)
        assert out["loaded"] == [], (profile, out["loaded"])
        assert out["result"]  # scored


def test_cli_evaluate_of_the_demo_runs_answers_imports_no_heavy_library():
    from kgqa.demo import DATA

    for fmt in ("table", "json"):
        out = _loaded_after(f"""
import io, contextlib
from kgqa.cli import main
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        main(["evaluate", {str(DATA / "questions.json")!r}, {str(DATA / "runs" / "strong.json")!r},
              "-p", "text2sparql", "-f", {fmt!r}])
    except SystemExit as e:
        assert e.code in (0, None), e.code
result = len(buf.getvalue())
""", EVALUATE_FREE)
        assert out["loaded"] == [], (fmt, out["loaded"])
        assert out["result"] > 100


def test_cli_show_of_one_demo_question_imports_no_statistics():
    """``kgqa show`` prints one question: no comparison, breakdown or interval, so no NumPy."""
    from kgqa.demo import DATA

    out = _loaded_after(f"""
import io, contextlib
from kgqa.cli import main
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        main(["show", {str(DATA / "questions.json")!r}, {str(DATA / "runs" / "weak.json")!r}, "--id", "12"])
    except SystemExit as e:
        assert e.code in (0, None), e.code
result = buf.getvalue()
""", EVALUATE_FREE)
    assert out["loaded"] == [], out["loaded"]
    assert "Which books have more than 400 pages?" in out["result"]


def test_profile_names_are_their_files_names():
    """``profiles.names()`` lists the files without parsing them: each file's profile has its name."""
    from kgqa.score import profiles

    names = profiles.names()
    assert names == sorted(p.stem for p in profiles.PROFILE_DIR.glob("*.yaml"))
    assert {"kgqa", "text2sparql", "gerbil", "qald"} <= set(names)
    assert [profiles.get(n).name for n in names] == names


def test_migrate_help_defaults_are_the_pipelines():
    from kgqa.cli import migrate as cli_migrate
    from kgqa.make.migrate.paths import DEFAULT_DISAMBIGUATION, DEFAULT_REDIRECT

    assert (cli_migrate.HELP_DEFAULT_DISAMBIGUATION,) == DEFAULT_DISAMBIGUATION
    assert (cli_migrate.HELP_DEFAULT_REDIRECT,) == DEFAULT_REDIRECT


def test_bootstrap_intervals_import_no_scipy_and_paired_tests_do():
    """An evaluation's intervals (the CLI table, a report, a web page) draw with NumPy alone:
    SciPy (about a second to import) comes in with the first paired test."""
    out = _loaded_after("""
from kgqa.analyze import stats
ci = stats.bootstrap_ci([0.0, 1.0, 0.5, 1.0, 0.25], resamples=500)
before = "scipy" in __import__("sys").modules
p = stats.wilcoxon([0.0, 1.0, 0.5, 1.0, 0.25], [0.5, 0.0, 0.0, 0.25, 0.0])
result = {"ci": [ci.low, ci.high], "scipy_before_test": before, "p": p}
""", ["scipy"])
    r = out["result"]
    assert r["scipy_before_test"] is False and out["loaded"] == ["scipy"]
    assert 0.0 <= r["ci"][0] <= r["ci"][1] <= 1.0 and 0.0 < r["p"] <= 1.0


def test_a_lazy_module_is_imported_on_first_use_and_reads_the_module_live():
    code = """
from kgqa import lazy
render = lazy.module("kgqa.report.render")
before = "kgqa.report.render" in __import__("sys").modules
parse_bins = render.parse_bins
import kgqa.report.render as real
real.parse_bins = lambda bins: "patched"  # a monkeypatch of the module is seen through the binding
result = [before, repr(render), parse_bins is not None, render.parse_bins(None), render.__name__]
"""
    got = _loaded_after(code, ["kgqa.report.render", "numpy"])
    assert got["result"] == [False, "<lazy module 'kgqa.report.render'>", True, "patched", "kgqa.report.render"]
    assert got["loaded"][0] == "kgqa.report.render"
