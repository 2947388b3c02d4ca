"""``--before REF`` for the builder benches: run the same bench script against the kgqa source
of a git revision (``git archive REF`` into a temporary directory, first on ``PYTHONPATH``)
in a subprocess, so one command prints the figures before and after a change."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_before(ref: str, script: Path, argv: list[str]) -> int:
    """Run ``script`` with ``argv`` on the kgqa of ``ref``; its output goes to ours, each line
    prefixed ``[before REF]``. Returns its exit status."""
    with tempfile.TemporaryDirectory() as d:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "kgqa", "tests"], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", d], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": d + os.pathsep + os.environ.get("PYTHONPATH", "")}
        p = subprocess.run([sys.executable, str(script), *argv], env=env, capture_output=True, text=True, cwd=d)
        for line in (p.stdout + p.stderr).splitlines():
            print(f"[before {ref}] {line}")
        return p.returncode
