"""Start-up time of the command line and of ``import kgqa`` (issue 17 target: ``kgqa --help``
<= 0.25 s wall), and which heavy libraries the CLI and answers-only scoring import.

    .venv/bin/python bench/bench_startup.py [--repeat 7] [--baseline-repo ../main]

Every figure is the wall time (and the CPU time) of a child process (best and median of
``--repeat`` runs, after one warm-up run) started from this process:

- ``kgqa --help``: the ``kgqa`` console script installed beside this interpreter (``kgqa.cli:main``,
  see pyproject.toml), with PYTHONPATH set to this checkout so that its code is the one imported
  (without the script, the same two imports and call from ``python -c``);
- ``evaluate --kg``, ``evaluate (answers)`` and ``evaluate (answers, table)``: ``kgqa evaluate``
  of the demo's questions and its strong run, on the demo KG and answers-only (``-f json``, and
  the default table): a call like the quick suite's 150-odd CLI processes, whose CPU is nearly
  all start-up (imports, building the command);
- ``import kgqa``: ``python -c "import kgqa"``;
- the interpreter alone: ``python -c "import sys"``, the floor under both.

Bytecode: an installed kgqa has its modules compiled (pip writes the .pyc files), so the
``cached bytecode`` rows let the children write and read .pyc files under a private
PYTHONPYCACHEPREFIX (warmed by the first run); the ``no bytecode`` rows run with
PYTHONDONTWRITEBYTECODE=1 and that prefix unset, so kgqa's own modules are compiled from source
in every run (as in a checkout used with PYTHONDONTWRITEBYTECODE). The target is judged on the
cached-bytecode best. With ``--baseline-repo`` the same commands are timed on another checkout
(e.g. the main branch before the change) in the same run, the two taking turns run by run, and
the ratio is printed.

Then, in fresh interpreters, the heavy modules loaded after ``import kgqa.cli`` and building the
click command, after printing ``kgqa --help``, after ``kgqa evaluate --kg`` of the demo files,
after ``import kgqa``, and after an answers-only ``kgqa.evaluate`` (text2sparql and kgqa
profiles) of a generated JSONL dataset and run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.25
DEMO = ROOT / "kgqa" / "demo" / "data"
HEAVY = ["matplotlib", "scipy", "pydantic", "httpx", "sacrebleu", "pandas", "numpy", "sqlalchemy", "starlette",
         "uvicorn", "jinja2", "pyoxigraph", "yaml", "portalocker", "rapidfuzz", "kgqa.sparql", "kgqa.make.migrate",
         "kgqa.score.evaluate", "kgqa.api"]


def kgqa_command() -> tuple[list[str], str]:
    """The console script beside this interpreter, else its equivalent from ``python -c``."""
    script = Path(sys.executable).parent / "kgqa"
    if script.is_file():
        return [str(script), "--help"], str(script)
    return [sys.executable, "-c", "import re, sys; from kgqa.cli import main; sys.exit(main())", "--help"], \
        "python -c 'from kgqa.cli import main; main()'"


def env_for(repo: Path, bytecode: bool, prefix: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPATH"] = str(repo)
    env["COLUMNS"] = "100"
    if bytecode:
        env["PYTHONPYCACHEPREFIX"] = prefix
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, of the child) of one run of ``cmd``; a failing
    command raises. CPU time barely moves when other processes load the machine; wall time does."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(ROOT))
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return dt, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def loaded_after(code: str, repo: Path, prefix: str) -> list[str]:
    """The HEAVY modules (or a submodule of one) imported by ``code`` in a fresh interpreter."""
    probe = code + f"""
import sys as _s
_s.__stdout__.write("\\n@@" + repr(sorted(m for m in {HEAVY!r}
                                         if any(k == m or k.startswith(m + ".") for k in _s.modules))))
"""
    proc = subprocess.run([sys.executable, "-c", probe], env=env_for(repo, True, prefix), capture_output=True,
                          text=True, cwd=str(ROOT))
    if proc.returncode != 0:
        raise SystemExit(f"probe failed: {proc.stderr[-2000:]}")
    return eval(proc.stdout.rsplit("\n@@", 1)[1])  # a list literal written by the probe above


def answers_only_files(folder: Path, n: int = 1000) -> tuple[Path, Path]:
    ds, run = folder / "ds.jsonl", folder / "run.jsonl"
    ds.write_text("".join(json.dumps({"id": str(i), "question": f"q{i}?", "answers": [f"http://x/{i}", "http://x/0"]})
                          + "\n" for i in range(n)), encoding="utf-8")
    run.write_text("".join(json.dumps({"id": str(i), "answers": [f"http://x/{i}"]}) + "\n" for i in range(0, n, 2)),
                   encoding="utf-8")
    return ds, run


def fmt_times(ts: list[float], cpu: list[float]) -> str:
    return (f"wall best {min(ts):6.3f} s  median {statistics.median(ts):6.3f} s   "
            f"cpu best {min(cpu):6.3f} s  median {statistics.median(cpu):6.3f} s")


def commands() -> list[tuple[str, list[str]]]:
    """The timed commands: ``kgqa --help``, two ``kgqa evaluate`` calls of the demo's files (the
    quick suite starts about 150 CLI processes like these), ``import kgqa`` and the interpreter."""
    help_cmd, _ = kgqa_command()
    kgqa = help_cmd[:-1]
    demo = ["evaluate", str(DEMO / "questions.json"), str(DEMO / "runs" / "strong.json")]
    return [("kgqa --help", help_cmd), ("evaluate --kg", [*kgqa, *demo, "--kg", str(DEMO / "kg.ttl")]),
            ("evaluate (answers)", [*kgqa, *demo, "-f", "json"]), ("evaluate (answers, table)", [*kgqa, *demo]),
            ("import kgqa", [sys.executable, "-c", "import kgqa"]),
            ("import sys", [sys.executable, "-c", "import sys"])]


def time_all(repos: list[tuple[str, Path]], tmp: str, repeat: int):
    """Wall and CPU seconds of every command of :func:`commands` on every checkout, with and without
    cached bytecode; printed as they come, with the baseline's ratio. The checkouts take turns run
    by run (one warm-up each, which fills the bytecode cache and the OS file cache, then
    ``repeat`` rounds), so a load that comes and goes on the machine falls on both alike."""
    results: dict[tuple[str, str, bool], list[float]] = {}
    cpus: dict[tuple[str, str, bool], list[float]] = {}
    for bytecode in (True, False):
        print(f"\n== {'cached bytecode' if bytecode else 'no bytecode (kgqa compiled from source every run)'}"
              f" ({repeat} runs each after a warm-up, checkouts in turn)")
        envs = {label: env_for(repo, bytecode, str(Path(tmp) / f"pyc-{label.replace(' ', '-')}-{bytecode}"))
                for label, repo in repos}
        for name, cmd in commands():
            labels = [label for label, _ in repos if name != "import sys" or label == "this checkout"]
            for label in labels:
                run_once(cmd, envs[label])  # warm-up
                results[(label, name, bytecode)], cpus[(label, name, bytecode)] = [], []
            for _ in range(repeat):
                for label in labels:
                    dt, cpu = run_once(cmd, envs[label])
                    results[(label, name, bytecode)].append(dt)
                    cpus[(label, name, bytecode)].append(cpu)
            for label in labels:
                key = (label, name, bytecode)
                print(f"{label:14s} {name:24s} {fmt_times(results[key], cpus[key])}")
        for name, _ in commands() if len(repos) > 1 else ():
            if name != "import sys":
                new, old = (statistics.median(cpus[(r, name, bytecode)]) for r in ("this checkout", "baseline"))
                print(f"{name}: median CPU {new:.3f} s vs baseline {old:.3f} s: {old / new:.2f}x less")
    return results, cpus


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--baseline-repo", type=Path, default=None,
                    help="another checkout (e.g. the main branch) timed with the same commands, for a ratio")
    args = ap.parse_args()
    repos = [("this checkout", ROOT)] + ([("baseline", args.baseline_repo.resolve())] if args.baseline_repo else [])
    print(f"interpreter: {sys.executable}")
    print(f"kgqa --help runs: {kgqa_command()[1]} --help")
    with tempfile.TemporaryDirectory(prefix="kgqa-bench-startup-") as tmp:
        results, cpus = time_all(repos, tmp, args.repeat)
        floor = min(results[("this checkout", "import sys", True)])
        best = min(results[("this checkout", "kgqa --help", True)])
        cold = min(results[("this checkout", "kgqa --help", False)])
        best_cpu = min(cpus[("this checkout", "kgqa --help", True)])
        print(f"\nkgqa --help: {best:.3f} s wall (cached bytecode; {best - floor:.3f} s above the bare interpreter's "
              f"{floor:.3f} s; {cold:.3f} s without bytecode)")
        print(f"target: kgqa --help <= {TARGET_S:.2f} s wall: {'met' if best <= TARGET_S else 'NOT met'}"
              f" (without bytecode: {'met' if cold <= TARGET_S else 'not met'}; CPU time {best_cpu:.3f} s:"
              f" wall well above it means other processes load the machine)")

        ds, run = answers_only_files(Path(tmp))
        probes = {
            "import kgqa.cli + command()": "from kgqa.cli import command\ncommand()",
            "kgqa --help (printed)": "from kgqa.cli import main\nimport contextlib, io\n"
                                     "with contextlib.redirect_stdout(io.StringIO()):\n"
                                     "    try:\n        main(['--help'])\n    except SystemExit:\n        pass",
            "kgqa evaluate --kg (demo files)": "from kgqa.cli import main\nimport contextlib, io\n"
                                               "with contextlib.redirect_stdout(io.StringIO()):\n"
                                               f"    try:\n        main({commands()[1][1][-5:]!r})\n"
                                               "    except SystemExit:\n        pass",
            "import kgqa": "import kgqa",
            "import kgqa.api": "import kgqa.api",
        }
        for profile in ("text2sparql", "kgqa"):
            probes[f"kgqa.evaluate answers-only -p {profile}"] = \
                f"import kgqa\nkgqa.evaluate({str(ds)!r}, {str(run)!r}, profile={profile!r})"
        print(f"\nheavy modules loaded (of {', '.join(HEAVY)}):")
        for name, code in probes.items():
            loaded = loaded_after(code, ROOT, str(Path(tmp) / "pyc-probe"))
            print(f"  {name:40s} {', '.join(loaded) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
