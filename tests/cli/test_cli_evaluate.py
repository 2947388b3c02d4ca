"""`kgqa evaluate` / `demo` / `measures` / `profiles` end to end, including bad input."""

from __future__ import annotations

import json

import pytest

from kgqa.cli import main
from kgqa.demo import DATA


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = 0
    try:
        main(list(args))
    except SystemExit as e:  # typer exits through SystemExit
        code = e.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def test_demo_compares_three_runs(capsys):
    code, out, _ = run_cli(capsys, "demo", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    names = [r["run"] for r in doc["runs"]]
    assert len(names) == 3
    assert sorted(names) == ["medium", "strong", "weak"]
    f1 = {r["run"]: r["aggregate"]["F1"] for r in doc["runs"]}
    assert all(r["execution"]["executed"] + r["execution"]["cache_hits"] >= 28 for r in doc["runs"])
    assert f1["strong"] > f1["medium"] > f1["weak"]
    assert all(r["signature"].startswith("kgqa:") for r in doc["runs"])


def test_json_output_has_the_documented_keys(capsys):
    q = str(DATA / "questions.json")
    code, out, _ = run_cli(capsys, "evaluate", q, str(DATA / "runs" / "medium.json"), "-f", "json", "-p", "gerbil")
    assert code == 0
    (doc,) = json.loads(out)["runs"]  # one shape: {"runs": [...]}, one run too
    assert {"signature", "profile", "aggregate", "questions", "skipped"} <= set(doc)
    assert doc["profile"] == "gerbil"
    assert set(doc["aggregate"]) >= {
        "Micro Precision", "Micro Recall", "Micro F1 score", "Macro Precision", "Macro Recall",
        "Macro F1 score", "Macro F1 QALD",
    }
    assert all({"id", "outcome", "scores"} <= set(x) for x in doc["questions"])
    assert "28" in doc["missing_ids"]  # the medium run has no entry for question 28


def test_custom_measures_and_csv(capsys):
    q = str(DATA / "questions.json")
    code, out, _ = run_cli(capsys, "evaluate", q, str(DATA / "runs" / "strong.json"), "-m", "F1(rule=qald),AnswerEM", "-f", "csv")
    assert code == 0
    header = out.splitlines()[0].split(",")
    assert header[:5] == ["run", "id", "outcome", "F1(rule=qald)", "AnswerEM"]
    assert len(out.splitlines()) == 31


@pytest.mark.parametrize(
    "args,needle",
    [
        (["evaluate", "/nonexistent/data.json", "/nonexistent/run.json"], "/nonexistent/data.json"),
        (["evaluate", "DATA", "DATA", "-p", "nope"], "unknown profile 'nope'"),
        (["evaluate", "DATA", "DATA", "-m", "F9"], "unknown measure 'F9'"),
        (["evaluate", "DATA", "BROKEN"], "BROKEN"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(capsys, tmp_path, args, needle):
    broken = tmp_path / "broken.json"
    broken.write_text('{"questions": [{"id": "1", "question": [', encoding="utf-8")
    subst = {"DATA": str(DATA / "questions.json"), "BROKEN": str(broken)}
    args = [subst.get(a, a) for a in args]
    needle = subst.get(needle, needle)
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    assert "Traceback" not in err
    assert needle in err.replace("\n", "")
    assert err.strip().startswith("error:")


def test_measures_and_profiles_listings(capsys):
    code, out, _ = run_cli(capsys, "measures")
    assert code == 0 and "QALDF1" in out and "Hits" in out
    code, out, _ = run_cli(capsys, "profiles")
    assert code == 0 and "text2sparql" in out and "set_F" in out


def test_by_with_json_is_refused_before_any_output(capsys):
    q = str(DATA / "questions.json")
    code, out, err = run_cli(capsys, "evaluate", q, str(DATA / "runs" / "strong.json"), "--by", "function", "-f", "json")
    assert code == 2
    assert out == ""  # nothing half-printed
    assert "--by" in err and "--format table or md" in err.replace("\n", "")
