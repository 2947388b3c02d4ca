"""Fault rows of the command line (issue 24, CLI): every everyday path that used to end in a
traceback, a silent zero or a cut name, run for real through ``kgqa`` in subprocesses (and in a
pseudo-terminal 80 columns wide), as attack -> expected -> observed.

``bench/faults.py --only cli`` runs them; :func:`cli_rows` is the one entry point.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from clijson import run_json  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "kgqa" / "demo" / "data"

Row = Callable[[str, str, str, str, bool], None]


def _kgqa(args: list[str], env: dict, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kgqa.cli", *args], env=env, cwd=str(cwd or REPO),
                          capture_output=True, text=True, timeout=timeout)


def _first(text: str, needle: str = "") -> str:
    lines = [ln for ln in text.splitlines() if needle in ln]
    return (lines[0] if lines else text.strip().splitlines()[-1] if text.strip() else "(nothing)")[:100]


def _clean(r: subprocess.CompletedProcess) -> bool:
    return "Traceback" not in r.stderr + r.stdout


def cli_rows(row: Row, tmp: Path, data: Path) -> None:
    """Add the CLI rows (see the module docstring) through ``row(group, attack, expected,
    observed, ok)``; ``tmp`` is a scratch folder, ``data`` the shared benchmark data."""
    sys.path.insert(0, str(REPO / "tests"))
    from faultserver import EMPTY_SELECT, FaultServer  # noqa: E402
    from ptyrun import run_pty  # noqa: E402

    tmp = tmp / "cli"
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "KGQA_CACHE_DIR": str(tmp / "cache"), "KGQA_DATA_DIR": str(data),
           "COLUMNS": "200"}
    runs = DEMO / "runs"

    # ------------------------------------------------------------------ tracebacks
    shutil.copy(runs / "strong.json", tmp / "sysA.json")
    r = _kgqa(["evaluate", "demo", "A=sysA.json", "--store", "exp.sqlite"], env, cwd=tmp)
    row("cli", "evaluate demo A=sysA.json --store exp.sqlite", "recorded under the name A, exit 0",
        f"exit {r.returncode}; {_first(r.stderr, 'recorded') if r.returncode == 0 else _first(r.stderr)}",
        r.returncode == 0 and "recorded experiment" in r.stderr and _clean(r))

    n = 400
    ds, run = tmp / "ds.jsonl", tmp / "run.jsonl"
    ds.write_text("".join(json.dumps({"id": str(i), "question": f"q{i}", "answers": ["http://x/a"]}) + "\n"
                          for i in range(n)), encoding="utf-8")
    run.write_text("".join(json.dumps({"id": str(i), "sparql": f"SELECT ?x WHERE {{ ?x ?p {i} }}"}) + "\n"
                           for i in range(n)), encoding="utf-8")
    class Slow:
        """An endpoint answering every SELECT empty after 4 ms, counting them."""

        def __init__(self) -> None:
            self.selects = 0

        def __call__(self, req):
            time.sleep(0.004)
            self.selects += bool(req.query and req.query.startswith("SELECT"))
            return EMPTY_SELECT

    outcomes = []
    for k in range(5):  # at different moments of the run: some land while the cache commits
        slow = Slow()
        e = {**env, "KGQA_CACHE_DIR": str(tmp / f"cache-int-{k}")}
        with FaultServer(slow, lifetime=300) as server:
            args = ["evaluate", str(ds), str(run), "--kg", server.url(), "--format", "json"]
            proc = subprocess.Popen([sys.executable, "-m", "kgqa.cli", *args], env=e, cwd=str(REPO),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 120
            while slow.selects < 40 + 60 * k and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.002)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)
        text = err.decode("utf-8", "replace")
        outcomes.append((proc.returncode, "Traceback" in text, "resume with: kgqa evaluate" in text.replace("\n", " ")))
    row("cli", "Ctrl-C during execution (5 times, at different moments)",
        "exit 130, the resume command, no traceback (no sqlite 'cannot rollback')",
        ", ".join(f"{c}{'+hint' if h else ''}{' TRACEBACK' if t else ''}" for c, t, h in outcomes),
        all(c == 130 and h and not t for c, t, h in outcomes))

    # ------------------------------------------------------------------ loud defaults
    other = tmp / "other.jsonl"
    other.write_text("".join(json.dumps({"id": f"q{i}", "answers": ["http://x"]}) + "\n" for i in range(20)),
                     encoding="utf-8")
    r = _kgqa(["evaluate", "demo", str(other)], env)
    row("cli", "a run whose ids match no question (another dataset's run)", "error naming both sides' ids, exit 2",
        f"exit {r.returncode}; {_first(r.stderr, 'error')}",
        r.returncode == 2 and "matches a question id" in r.stderr and _clean(r))

    part = tmp / "part.jsonl"
    part.write_text(json.dumps({"id": "1", "answers": ["http://x"]}) + "\n" + other.read_text(encoding="utf-8"),
                    encoding="utf-8")
    r = _kgqa(["evaluate", "demo", str(part)], env)
    rs = _kgqa(["evaluate", "demo", str(part), "--strict"], env)
    row("cli", "a run matching under half of the ids", "warning with the fix (exit 0); --strict exits 3",
        f"exit {r.returncode}/{rs.returncode}; {_first(r.stderr, 'set-up warning')[:80]}",
        r.returncode == 0 and rs.returncode == 3 and "29 of 30 questions have no entry" in r.stderr)

    ck25 = data / "ck25" / "questions.yml"
    wse = data / "ck25-runs" / "WSE"
    if ck25.is_file():
        r = _kgqa(["evaluate", "ck25", str(wse / "ck25_answers.json"), "-p", "text2sparql"], env)
        rq = _kgqa(["evaluate", "ck25", str(wse / "ck25_answers.json"), "-m", "BLEU,QueryEM", "-f", "json"], env)
        row("cli", "query-only run without --kg (text2sparql measures need answers)",
            "error naming --kg (exit 2); query measures alone still score",
            f"exit {r.returncode}/{rq.returncode}; {_first(r.stderr, 'error')[:70]}",
            r.returncode == 2 and "--kg" in r.stderr and rq.returncode == 0
            and run_json(rq.stdout)["aggregate"]["BLEU"] > 0)

        r = _kgqa(["evaluate", "ck25", str(wse / "ck25_answers.json"), "--kg", "ck25", "-p", "text2sparql", "-f",
                   "json"], env)
        ok = r.returncode == 0 and run_json(r.stdout)["execution"]["executed"] == 50
        row("cli", "--kg ck25 (a registry KG name, as the web offers it)", "the CK25 KG: 50 queries executed",
            f"exit {r.returncode}; " + (f"set_F {run_json(r.stdout)['aggregate']['set_F']:.4f}" if ok
                                        else _first(r.stderr)), ok and _clean(r))

        for team in ("INFAI", "AIFB"):
            copy = data / "ck25-runs" / team / "ck25_system_result_set.json"
            r = _kgqa(["evaluate", "ck25", str(copy), "-p", "text2sparql"], env)
            row("cli", f"{team}'s published result set (a copy of the gold answers)",
                "refused naming the file, --allow-gold-copy to go on (exit 2; issue 34)",
                f"exit {r.returncode}; {_first(r.stderr, 'copy of the gold')[7:96]}",
                r.returncode == 2 and f"{copy}: the answers equal" in r.stderr and "--allow-gold-copy" in r.stderr)
        r = _kgqa(["evaluate", "ck25", str(wse / "ck25_system_result_set.json"), "-p", "text2sparql"], env)
        row("cli", "WSE's genuine result set", "no gold-copy warning", f"exit {r.returncode}; "
            f"{'warned' if 'copy of the gold' in r.stderr else 'no warning'}",
            r.returncode == 0 and "copy of the gold" not in r.stderr)
    else:
        row("cli", "CK25 rows", "run on the shared data", f"skipped: {ck25} not found", False)

    qald9 = data / "qald-9" / "qald-9-test-multilingual.json"
    if qald9.is_file():
        r = _kgqa(["evaluate", "qald-9-test", str(runs / "weak.json"), "--lang", "english"], env)
        row("cli", "--lang english on QALD-9", "refused: did you mean 'en'? (exit 2)",
            f"exit {r.returncode}; {_first(r.stderr, 'error')[:90]}",
            r.returncode == 2 and "did you mean 'en'?" in r.stderr)

    empty = tmp / "empty.json"
    empty.write_bytes(b"")
    r = _kgqa(["evaluate", "demo", str(empty)], env)
    row("cli", "an empty run file", "'the run file is empty' (not 'cannot tell which run format')",
        f"exit {r.returncode}; {_first(r.stderr, 'error')[:90]}",
        r.returncode == 2 and "is empty" in r.stderr and "cannot tell" not in r.stderr)

    r2 = _kgqa(["evaluate", "demo", str(runs / "weak.json"), "-m", "F2"], env)
    rl = _kgqa(["evaluate", "demo", str(runs / "weak.json"), "-m", "ThisIsNoMeasureAtAll"], env)
    row("cli", "-m F2; -m ThisIsNoMeasureAtAll", "F2: did you mean 'F1'; the long name: no 'R' suggested",
        f"{_first(r2.stderr, 'error')[9:60]}...; {'suggests R' if 'mean ' + repr('R') in rl.stderr else 'no R'}",
        "did you mean 'F1'" in r2.stderr and "did you mean" not in rl.stderr and r2.returncode == rl.returncode == 2)

    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    r = _kgqa(["demo"], env, cwd=elsewhere)
    nxt = r.stdout.split("Next:", 1)[-1]
    cmds = [shlex.split(ln.strip()) for ln in nxt.splitlines() if ln.strip().startswith("kgqa ")]
    results = [_kgqa([a for a in c[1:] if "*" not in a] if "compare" not in c else
                     c[1:3] + [str(p) for p in sorted(Path(c[3].rsplit("/", 1)[0]).glob("*.json"))] + c[4:],
                     env, cwd=elsewhere) for c in cmds]
    row("cli", "the demo's 'Next:' commands, run from another directory", "each runs (exit 0)",
        f"{len(cmds)} commands; exits {[x.returncode for x in results]}",
        len(cmds) == 3 and all(x.returncode == 0 for x in results))

    evil = json.loads((runs / "weak.json").read_text(encoding="utf-8"))
    evil["questions"].append({**evil["questions"][0], "id": "\x1b[2J\x1b]0;owned\x07"})
    (tmp / "evil.json").write_text(json.dumps(evil), encoding="utf-8")
    r = _kgqa(["evaluate", "demo", "\x1b[31mred=" + str(tmp / "evil.json"), "-q"], env)
    row("cli", "ESC sequences in a run's name and ids", "printed escaped (\\x1b), never raw",
        f"exit {r.returncode}; raw ESC in output: {chr(27) in r.stdout + r.stderr}",
        r.returncode == 0 and chr(27) not in r.stdout + r.stderr and "\\x1b[2J" in r.stdout)

    # ------------------------------------------------------------------ 80 columns
    env80 = {k: v for k, v in env.items() if k != "COLUMNS"}
    shutil.copy(tmp / "exp.sqlite", tmp / "exp80.sqlite")
    for name, args in [("experiments list", ["experiments", "list", "--store", str(tmp / "exp80.sqlite")]),
                       ("datasets list", ["datasets", "list"]), ("evaluate --help", ["evaluate", "--help"]),
                       ("compare (3 runs)", ["compare", "demo", *map(str, sorted(runs.glob("*.json"))),
                                             "--resamples", "200"])]:
        code, text = run_pty(args, cols=80, env=env80)
        widest = max((len(ln) for ln in text.splitlines() if not ln.lower().startswith("signature: ")), default=0)
        cut = text.count("…")
        row("cli", f"{name} in an 80-column terminal", "no line over 80 columns, no name cut",
            f"exit {code}; widest line {widest}; cut {cut}", code == 0 and widest <= 80 and cut == 0)
    code, text = run_pty(["compare", "demo", *map(str, sorted(runs.glob("*.json"))), "--resamples", "200"],
                         cols=80, env=env80)
    blocks = [b for b in re.split(r"Paired tests[^\n]*\n", text)[1:]]
    row("cli", "compare's significance letters at 80 columns", "'sig' beside the p-values in every block",
        f"{len(blocks)} block(s); sig in {sum('sig' in b.split(chr(10), 3)[1] for b in blocks if b.count(chr(10)) > 2)}",
        bool(blocks) and all("sig" in b.split("\n", 3)[1] for b in blocks if b.count("\n") > 2))
