"""The ``mintaka`` / ``mintaka-kg`` profiles reproduce Mintaka's official evaluate.py (text and KG
modes). ``official`` restates the script's formatting and scoring in this test (without
pandas; the oracle), and its numbers are printed beside kgqa's."""

from __future__ import annotations

import collections
import json
import unicodedata

import regex
from hypothesis import given, settings, strategies as st

import kgqa
from conftest import REPO
from official_scripts import pandas_preds

FIX = REPO / "tests" / "fixtures" / "mintaka"


def _fmt_answer(a, mode, lang):
    if a["answerType"] == "entity":
        if mode == "kg":
            return None if a["answer"] is None else [e["name"] for e in a["answer"]]
        if a["answer"] is None:
            return a["mention"]
        return " ".join([e["label"][lang] if e["label"][lang] else e["label"]["en"] for e in a["answer"]])
    return str(a["answer"][0]) if mode == "text" else a["answer"]


def _fmt_pred(p, mode):
    if p is None:
        return p
    if mode == "text":
        return str(p)
    return p if isinstance(p, list) else [p]


def _tok(text):
    r = regex.compile(r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])", flags=regex.IGNORECASE + regex.UNICODE + regex.MULTILINE)
    return [m.group().lower() for m in r.finditer(unicodedata.normalize("NFD", text))]


def _em(p, a, mode):
    if mode == "text" and p and a:
        p, a = _tok(p), _tok(a)
        return any(a == p[i:i + len(a)] for i in range(0, len(p) - len(a) + 1))
    return int(p == a)


def _f1(p, a, mode):
    if not a or not p:
        return int(a == p)
    if mode == "text":
        p, a = p.split(), a.split()
    same = sum((collections.Counter(p) & collections.Counter(a)).values())
    if same == 0:
        return 0
    pr, rc = same / len(p), same / len(a)
    return 2 * pr * rc / (pr + rc)


def _h1(p, a, mode):
    if mode == "text" or p is None or a is None:
        return _em(p, a, mode)
    return int(len(collections.Counter(p) & collections.Counter(a)) > 0)


def official(test: list[dict], preds: dict, mode: str, lang: str = "en") -> dict:
    preds = pandas_preds(preds)  # the pred column as the script's DataFrame types it
    rows = [(_fmt_pred(preds[r["id"]], mode), _fmt_answer(r["answer"], mode, lang)) for r in test]
    n = len(rows)
    return {"Exact Match": sum(float(_em(p, a, mode)) for p, a in rows) / n,
            "F1": sum(_f1(p, a, mode) for p, a in rows) / n,
            "Hits@1": sum(float(_h1(p, a, mode)) for p, a in rows) / n}


def _readable(records):
    """The records the script reads (a null entity answer list included: None in KG mode, the
    mention in text mode)."""
    return [r for r in records if (r["answer"].get("answer") is not None or r["answer"]["answerType"] == "entity")
            and r["answer"]["answerType"] in ("entity", "boolean", "numerical", "date", "string")]


def _kgqa(tmp_path, test, preds, profile):
    d, r = tmp_path / "mintaka_test.json", tmp_path / "pred.json"
    d.write_text(json.dumps(test))
    r.write_text(json.dumps(preds))
    return kgqa.evaluate(d, r, profile=profile, run_format="mintaka-run").aggregate


def test_fixture_matches_the_official_script_in_both_modes(tmp_path, capsys):
    test = _readable(json.loads((FIX / "mintaka_test.sample.json").read_text()))
    for mode, profile in (("text", "mintaka"), ("kg", "mintaka-kg")):
        preds = json.loads((FIX / f"predictions_{mode}.json").read_text())
        preds = {r["id"]: preds.get(r["id"]) for r in test}
        want, got = official(test, preds, mode), _kgqa(tmp_path, test, preds, profile)
        with capsys.disabled():
            print(f"\nMintaka evaluate.py --mode {mode}:", {k: round(v, 4) for k, v in want.items()})
            print(f"kgqa -p {profile}:".ljust(31), {k: round(got[k], 4) for k in want})
        assert all(abs(got[k] - want[k]) < 1e-12 for k in want), (mode, got, want)


ENT = st.sampled_from([("Q1", "Mount Lucania"), ("Q2", "John Glenn"), ("Q3", "Café Noir")])
ANSWER = st.one_of(
    st.lists(ENT, min_size=1, max_size=2).map(lambda es: {"answerType": "entity", "mention": "m", "answer": [
        {"name": q, "label": {"en": lab, "de": None}} for q, lab in es]}),
    st.booleans().map(lambda b: {"answerType": "boolean", "answer": [b], "mention": "Yes"}),
    st.integers(0, 5).map(lambda n: {"answerType": "numerical", "answer": [n], "mention": str(n)}))
PRED = st.one_of(st.none(), st.booleans(), st.integers(0, 5),
                 st.sampled_from(["Mount Lucania", "mount lucania!", "Q1", "John", "Cafe Noir", "Café Noir", "True", "4"]),
                 st.lists(st.sampled_from(["Q1", "Q2", "Q3"]), max_size=3))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(ANSWER, PRED), min_size=1, max_size=5), st.sampled_from(["text", "kg"]))
def test_random_files_match_the_official_script(tmp_path_factory, rows, mode):
    test = [{"id": f"{i:08x}", "question": f"q{i}?", "answer": a, "complexityType": "generic", "category": "x"}
            for i, (a, _) in enumerate(rows)]
    preds = {f"{i:08x}": p for i, (_, p) in enumerate(rows)}
    want = official(test, preds, mode)
    got = _kgqa(tmp_path_factory.mktemp("mk"), test, preds, "mintaka" if mode == "text" else "mintaka-kg")
    assert all(abs(got[k] - want[k]) < 1e-12 for k in want), (got, want)
