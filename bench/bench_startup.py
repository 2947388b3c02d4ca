"""Start-up time of the command line and of ``import kgqa`` (issue 17 target: ``kgqa --help``
<= 0.25 s wall), and which heavy libraries the CLI and answers-only scoring import.

    .venv/bin/python bench/bench_startup.py [--repeat 7] [--baseline-repo ../main]

Every figure is the wall time (and the CPU time) of a child process (best and median of
``--repeat`` runs, after one warm-up run) started from this process:

- ``kgqa --help``: the ``kgqa`` console script installed beside this interpreter (``kgqa.cli:main``,
  see pyproject.toml), with PYTHONPATH set to this checkout so that its code is the one imported
  (without the script, the same two imports and call from ``python -c``);
- ``import kgqa``: ``python -c "import kgqa"``;
- the interpreter alone: ``python -c "import sys"``, the floor under both.

Bytecode: an installed kgqa has its modules compiled (pip writes the .pyc files), so the
``cached bytecode`` rows let the children write and read .pyc files under a private
PYTHONPYCACHEPREFIX (warmed by the first run); the ``no bytecode`` rows run with
PYTHONDONTWRITEBYTECODE=1 and that prefix unset, so kgqa's own modules are compiled from source
in every run (as in a checkout used with PYTHONDONTWRITEBYTECODE). The target is judged on the
cached-bytecode best. With ``--baseline-repo`` the same commands are timed on another checkout
(e.g. the main branch before the change) in the same run, and the ratio is printed.

Then, in fresh interpreters, the heavy modules loaded after ``import kgqa.cli`` and building the
click command, after printing ``kgqa --help``, after ``import kgqa``, and after an answers-only
``kgqa.evaluate`` (text2sparql and kgqa profiles) of a generated JSONL dataset and run.
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
HEAVY = ["matplotlib", "scipy", "sacrebleu", "pandas", "numpy", "sqlalchemy", "starlette", "uvicorn", "jinja2",
         "pyoxigraph", "yaml", "portalocker", "rapidfuzz", "kgqa.sparql", "kgqa.make.migrate", "kgqa.score.evaluate",
         "kgqa.api"]


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


def wall(cmd: list[str], env: dict[str, str], repeat: int) -> tuple[list[float], list[float]]:
    """Wall seconds and CPU seconds (user + system, of the child) of ``repeat`` runs of ``cmd``
    (after one warm-up run, which fills the bytecode cache and the OS file cache); a failing
    command raises. CPU time barely moves when other processes load the machine; wall time does."""
    times, cpu = [], []
    for i in range(repeat + 1):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(ROOT))
        dt = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
        if i:
            times.append(dt)
            cpu.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
    return times, cpu


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--baseline-repo", type=Path, default=None,
                    help="another checkout (e.g. the main branch) timed with the same commands, for a ratio")
    args = ap.parse_args()
    help_cmd, help_name = kgqa_command()
    import_cmd = [sys.executable, "-c", "import kgqa"]
    floor_cmd = [sys.executable, "-c", "import sys"]
    repos = [("this checkout", ROOT)] + ([("baseline", args.baseline_repo.resolve())] if args.baseline_repo else [])
    print(f"interpreter: {sys.executable}")
    print(f"kgqa --help runs: {help_name} --help")
    results: dict[tuple[str, str, bool], list[float]] = {}
    cpus: dict[tuple[str, str, bool], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="kgqa-bench-startup-") as tmp:
        for bytecode in (True, False):
            print(f"\n== {'cached bytecode' if bytecode else 'no bytecode (kgqa compiled from source every run)'}"
                  f" ({args.repeat} runs each after a warm-up)")
            for label, repo in repos:
                prefix = str(Path(tmp) / f"pyc-{len(results)}")
                env = env_for(repo, bytecode, prefix)
                for name, cmd in (("kgqa --help", help_cmd), ("import kgqa", import_cmd), ("import sys", floor_cmd)):
                    if name == "import sys" and label != "this checkout":
                        continue
                    ts, cpu = wall(cmd, env, args.repeat)
                    results[(label, name, bytecode)] = ts
                    cpus[(label, name, bytecode)] = cpu
                    print(f"{label:14s} {name:12s} {fmt_times(ts, cpu)}")
            if args.baseline_repo:
                for what, table in (("wall", results), ("cpu", cpus)):
                    new, old = min(table[("this checkout", "kgqa --help", bytecode)]), \
                        min(table[("baseline", "kgqa --help", bytecode)])
                    print(f"kgqa --help {what}: {new:.3f} s vs baseline {old:.3f} s: {old / new:.2f}x faster")
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
