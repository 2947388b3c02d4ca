"""Fault rows of issue 34 (scope 1 and 3): inputs that used to give a number that looks right and
is not, or a message that hid the cause, each run for real through ``kgqa`` in subprocesses (a
misbehaving endpoint from ``tests/faultserver.py`` on 127.0.0.1), as input -> expected -> observed.

``bench/faults.py --only numbers`` runs them; :func:`number_rows` is the one entry point.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from clijson import run_json  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "kgqa" / "demo" / "data"

Row = Callable[[str, str, str, str, bool], None]


def _kgqa(args: list[str], env: dict, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kgqa.cli", *args], env=env, cwd=str(cwd or REPO),
                          capture_output=True, text=True, timeout=600)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _first(text: str, needle: str) -> str:
    flat = _flat(text)
    at = flat.find(needle)
    return flat[max(0, at - 20):at + 80] if at >= 0 else (flat[-100:] or "(nothing)")


def _clean(r: subprocess.CompletedProcess) -> bool:
    return "Traceback" not in r.stderr + r.stdout


def number_rows(row: Row, tmp: Path, data: Path) -> None:
    """Add issue 34's rows through ``row(group, attack, expected, observed, ok)``."""
    sys.path.insert(0, str(REPO / "tests"))
    from faultserver import FaultServer, Reply  # noqa: E402

    tmp = tmp / "numbers"
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "KGQA_CACHE_DIR": str(tmp / "cache"), "KGQA_DATA_DIR": str(data),
           "COLUMNS": "200"}
    runs = DEMO / "runs"
    g = "numbers"

    r = _kgqa(["evaluate", "demo", str(runs / "strong.json"), "-m", "BLEU", "-m", "QueryEM(norm=whitespace)",
               "-m", "F1_Sem", "-m", "F1_Tri", "-f", "json"], env)
    got = list(run_json(r.stdout)["aggregate"]) if r.returncode == 0 else []
    row(g, "evaluate -m BLEU -m 'QueryEM(norm=whitespace)' -m F1_Sem -m F1_Tri", "all four measures",
        f"exit {r.returncode}; {', '.join(got) or _first(r.stderr, 'error')}", len(got) == 4 and _clean(r))

    kg = data / "ck25" / "graphs" / "prod-inst.ttl"
    if kg.is_file():
        r = _kgqa(["evaluate", "demo", str(runs / "strong.json"), "--kg", str(kg)], env)
        row(g, "a KG holding none of the dataset's or run's IRIs (demo run, CK25 KG)",
            "error naming sample IRIs of both sides, --allow-foreign-kg (exit 2)",
            f"exit {r.returncode}; {_first(r.stderr, 'contains none')}",
            r.returncode == 2 and "nor of the run's" in r.stderr and "--allow-foreign-kg" in _flat(r.stderr))
        r = _kgqa(["evaluate", "demo", str(runs / "strong.json"), "--kg", str(kg), "--allow-foreign-kg", "-f", "json"],
                  env)
        sig = run_json(r.stdout)["signature"] if r.returncode == 0 else ""
        row(g, "... with --allow-foreign-kg, nothing executed", "a warning; no engine:...kg= in the signature",
            f"exit {r.returncode}; {'engine in signature' if 'engine:' in sig else 'no engine in signature'}",
            r.returncode == 0 and "set-up warning" in r.stderr and sig and "engine:" not in sig)

    replies = {"bad JSON": Reply(body=b"{not json"),
               "bad XML": Reply(body=b"<sparql><results>", content_type="application/sparql-results+xml"),
               "redirect loop": Reply(status=307, headers={"Location": "/sparql"}),
               "HTTP 500": Reply.error(500, "boom")}
    for name, reply in replies.items():
        with FaultServer(lambda req, reply=reply: reply, lifetime=300) as server:
            r = _kgqa(["evaluate", "demo", str(runs / "strong.json"), "--kg", server.url(), "--reexecute",
                       "--no-cache"], env)
        row(g, f"an endpoint answering every query with {name} (--reexecute)",
            "error naming the share and the cause, --max-kg-failures (exit 2), no table",
            f"exit {r.returncode}; {_first(r.stderr, 'queries executed')}",
            r.returncode == 2 and "queries executed on" in r.stderr and "F1" not in r.stdout and _clean(r))

    wse = data / "ck25-runs" / "WSE" / "ck25_eval.json"
    if wse.is_file():
        r = _kgqa(["evaluate", "ck25", str(wse), "-p", "text2sparql"], env)
        row(g, "ck25_eval.json (official scores) given as a run", "refused, --allow-score-file (exit 2), no table",
            f"exit {r.returncode}; {_first(r.stderr, 'looks like')}",
            r.returncode == 2 and "--allow-score-file" in _flat(r.stderr) and "set_F" not in r.stdout)
        copy = data / "ck25-runs" / "INFAI" / "ck25_system_result_set.json"
        r = _kgqa(["evaluate", "ck25", str(copy), "-p", "text2sparql"], env)
        row(g, "a copy of the gold answers given as a run", "refused, --allow-gold-copy (exit 2)",
            f"exit {r.returncode}; {_first(r.stderr, 'copy of the gold')}",
            r.returncode == 2 and "--allow-gold-copy" in _flat(r.stderr))

    _compare_row(row, g, tmp, env)
    _engine_rows(row, g, tmp, env)
    _message_rows(row, g, tmp, env, data)


def _compare_row(row: Row, g: str, tmp: Path, env: dict) -> None:
    ds = json.loads((DEMO / "questions.json").read_text(encoding="utf-8"))
    ds["questions"] = [q for q in ds["questions"] if q["id"] in ("1", "2")]
    (tmp / "ds2.json").write_text(json.dumps(ds), encoding="utf-8")
    files = []
    for name in ("weak", "strong"):
        r = json.loads((DEMO / "runs" / f"{name}.json").read_text(encoding="utf-8"))
        r["questions"] = [q for q in r["questions"] if q["id"] in ("1", "2")]
        (tmp / f"{name}2.json").write_text(json.dumps(r), encoding="utf-8")
        files.append(str(tmp / f"{name}2.json"))
    ok_all, seen = True, []
    for fmt in ("table", "md", "latex"):
        r = _kgqa(["compare", str(tmp / "ds2.json"), *files, "-f", fmt], env)
        flat = _flat(r.stdout)
        ok = (r.returncode == 0 and "<0.0001" not in flat and "too few questions" in flat and "Outcomes:" in flat
              and "signature:" in flat)
        ok_all &= ok
        seen.append(f"{fmt} {'ok' if ok else 'MISSING'}")
    row(g, "compare on n = 2 (table, Markdown, LaTeX)", "no p-value (with the reason), signature and outcome counts",
        "; ".join(seen), ok_all)


def _engine_rows(row: Row, g: str, tmp: Path, env: dict) -> None:
    ex = "http://ex.org/"
    kg = tmp / "counts.nt"
    kg.write_text("".join(f"<{ex}d{d}> <{ex}has> <{ex}p{d}{i}> .\n" for d, n in ((1, 27), (2, 26), (3, 26))
                          for i in range(n)), encoding="utf-8")
    p = f"PREFIX ex: <{ex}> "
    top = p + "SELECT ?d WHERE { ?d ex:has ?p } GROUP BY ?d ORDER BY DESC(COUNT(?p)) LIMIT 1"
    two = p + "SELECT ?d WHERE { ?d ex:has ?p } GROUP BY ?d ORDER BY DESC(COUNT(?p)) LIMIT 2"
    for name, gold, pred, flagged in (("first place 27 vs 26, LIMIT 1, another variable name", top,
                                       top.replace("?p", "?q"), False),
                                      ("the gold query scored against itself, a tie at the cut", two, two, False),
                                      ("a tie at the cut (26 and 26), LIMIT 2", two, two.replace("?p", "?q"), True)):
        ds, run = tmp / "cds.jsonl", tmp / "crun.jsonl"
        ds.write_text(json.dumps({"id": "q", "question": "Which department has the most parts?", "sparql": gold}) + "\n",
                      encoding="utf-8")
        run.write_text(json.dumps({"id": "q", "sparql": pred}) + "\n", encoding="utf-8")
        r = _kgqa(["evaluate", str(ds), str(run), "--kg", str(kg), "-m", "F1", "-f", "md"], env)
        has = "score range F1" in r.stdout
        want = "the exact range under the table" if flagged else "not engine-dependent, no range"
        row(g, f"ORDER BY DESC(COUNT(...)): {name}", want,
            f"exit {r.returncode}; {_first(r.stdout, 'score range') if has else 'no range'}",
            r.returncode == 0 and has == flagged and (not flagged or "(exact)" in r.stdout))


def _message_rows(row: Row, g: str, tmp: Path, env: dict, data: Path) -> None:
    q = json.loads((DEMO / "runs" / "strong.json").read_text(encoding="utf-8"))
    for it in q["questions"]:
        it.pop("answers", None)
    (tmp / "queries.json").write_text(json.dumps(q), encoding="utf-8")
    r = _kgqa(["evaluate", "demo", str(tmp / "queries.json"), "-m", "BLEU"], env)
    row(g, "a query-only run scored with query measures, no --kg", "outcomes: not_executed 30 (not 'missing')",
        f"exit {r.returncode}; {_first(r.stdout, 'outcomes:')}",
        r.returncode == 0 and "not_executed 30" in r.stdout and "outcomes: missing" not in r.stdout)

    r = _kgqa(["evaluate", "qald-9-test", str(DEMO / "runs" / "weak.json")],
              {**env, "KGQA_DATA_DIR": str(tmp / "nodata"), "KGQA_CACHE_DIR": str(tmp / "nocache")}, cwd=tmp)
    online = r.returncode != 2 or "download failed" not in r.stderr
    row(g, "a named dataset offline, KGQA_DATA_DIR without it", "the error names $KGQA_DATA_DIR and the folder searched",
        f"exit {r.returncode}; {_first(r.stderr, 'looked for')}",
        online or ("$KGQA_DATA_DIR" in r.stderr and str(tmp / "nodata") in _flat(r.stderr)))

    (tmp / "cut.json").write_bytes((DEMO / "runs" / "weak.json").read_bytes()[:2])
    r = _kgqa(["evaluate", "demo", str(tmp / "cut.json")], env)
    row(g, "a JSON run cut after 2 bytes", "malformed JSON at line L, column C (not 'cannot tell which format')",
        f"exit {r.returncode}; {_first(r.stderr, 'malformed')}",
        r.returncode == 2 and "malformed JSON at line 2, column 1" in r.stderr and "cannot tell" not in r.stderr)

    r = _kgqa(["evaluate", str(DEMO / "runs" / "weak.json"), "demo"], env)
    row(g, "dataset and run in swapped order", "a hint: the dataset comes first",
        f"exit {r.returncode}; {_first(r.stderr, 'dataset name')}",
        r.returncode == 2 and "the dataset comes first" in r.stderr)

    bad = json.loads((DEMO / "runs" / "weak.json").read_text(encoding="utf-8"))
    for it in bad["questions"]:
        if it["id"] == "12":
            it.pop("answers", None)
            it["query"]["sparql"] = "SELECT ?x WHERE { ?x ?p ?o . FILTR(?x) }"
    (tmp / "parse.json").write_text(json.dumps(bad), encoding="utf-8")
    r = _kgqa(["show", "demo", str(tmp / "parse.json"), "--id", "12", "--kg", "demo"], env)
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("outcome")), "")
    row(g, "kgqa show --id of a query with a parse error", "one line: position and the token found there",
        f"exit {r.returncode}; {line.strip()[:100]}",
        r.returncode == 0 and "FILTR" in line and "column 30" in line)

    (tmp / "store-dir").mkdir(exist_ok=True)
    r = _kgqa(["web", "--store", str(tmp / "store-dir"), "--port", "1"], env)
    row(g, "kgqa web --store DIR (a folder, not a SQLite file)", "refused with the reason (exit 2)",
        f"exit {r.returncode}; {_first(r.stderr, 'is a directory')}",
        r.returncode == 2 and "is a directory" in r.stderr and _clean(r))

    from kgqa.cli.generate import queries_line

    text = queries_line(120, 80, cached=False)
    row(g, "kgqa generate --no-cache: the queries line", "no claim of results from the cache", text,
        "from the result cache" not in text and "--no-cache" in text)
