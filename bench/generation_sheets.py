"""Reading sheets for generated questions (issue 36): ``kgqa generate -n 40 --seed 1`` on every
KG of ``$KGQA_DATA_DIR/kgs`` and on CK25's KG, each canonical question printed next to its
SPARQL (prefixes shortened to ``:local``) and its answer (labels, at most 3 shown), as the
Markdown rows of ``docs/guide/generation-reading.md``. Scores and reasons come from a JSON file
``{kg: [[score, reason], ...]}`` (``--scores``; empty cells without one), so the sheets are
regenerated from the code and the reader's scores kept apart.

Usage: ``python bench/generation_sheets.py [--n 40] [--seed 1] [--only ck25] [--scores s.json]
[--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from generate_kgs import KG_FILES, kg_options  # noqa: E402

from kgqa.make.generate import GenerateOptions, generate  # noqa: E402
from kgqa.make.generate.kg import KGAccess  # noqa: E402
from kgqa.make.generate.language import Lexicon  # noqa: E402
from kgqa.make.generate.schema import label_properties  # noqa: E402
from kgqa.model.problems import InputError  # noqa: E402
from kgqa.model.terms import IRI, Literal  # noqa: E402


def short_query(sparql: str) -> str:
    """The SPARQL on one line with IRIs as ``:local`` and datatypes as ``^^:type``."""
    body = sparql[sparql.find("SELECT"):] if "SELECT" in sparql else sparql
    body = re.sub(r"<[^<>\s]*?([^/#<>\s]+)>", r":\1", body)  # IRIs only, not a '<' comparison
    return re.sub(r"\s+", " ", body).strip().replace("|", "\\|")


def answer_text(item, lex: Lexicon) -> str:
    vals = []
    for row in item.answer.rows:
        for t in row:
            if isinstance(t, IRI):
                vals.append(lex.label(t.value))
            elif isinstance(t, Literal):
                vals.append(t.value)
    shown = ", ".join(v[:40] for v in vals[:3])
    return (shown + (f" (+{len(vals) - 3})" if len(vals) > 3 else "")).replace("|", "\\|")


def sheet(name: str, path: Path, n: int, seed: int, scores: list | None) -> tuple[str, dict]:
    t0 = time.perf_counter()
    try:
        res = generate(path, GenerateOptions(n=n, seed=seed), **kg_options(name))
    except InputError as e:
        return f"## {name}\n\nNo questions: {e}\n", {"n": 0}
    secs = time.perf_counter() - t0
    items = [it for it in res.dataset.items if it.metadata.get("paraphrase_source") == "canonical"]
    s = res.summary
    rej = ", ".join(f"{k} {v}" for k, v in sorted(s["rejected"].items()))
    why = s.get("unreadable_reasons") or {}
    mix = "/".join(str(s["function_class"].get(c, 0)) for c in ("none", "count", "superlative", "comparative"))
    rows = []
    got = []
    with KGAccess.open(path, **kg_options(name).get("engine_options", {})) as acc:
        lex = Lexicon(acc, label_properties=label_properties(acc))
        for k, it in enumerate(items):
            sc, reason = (scores[k] if scores and k < len(scores) else ("", ""))
            if sc != "":
                got.append(int(sc))
            rows.append(f"| {k + 1} | {it.question()} | `{short_query(it.sparql)}` | {answer_text(it, lex)} | {sc} | {reason} |")
    mean = sum(got) / len(got) if got else None
    stats = {"n": len(items), "mix": mix, "mean": mean, "secs": secs,
             "dist": [got.count(2), got.count(1), got.count(0)]}
    head = (f"## {name}\n\n{len(items)} questions, {secs:.1f} s" + (f", mean {mean:.2f}" if mean is not None else "")
            + f". Opaque relations (never used): {len(s.get('opaque_relations', []))}. Rejected: {rej}"
            + (". Unreadable, most often because: " + "; ".join(f"{k} ({v})" for k, v in why.items()) if why else "")
            + "\n\n"
            "| # | question | query | answer | score | reason |\n|---|---|---|---|---|---|\n")
    return head + "\n".join(rows) + "\n", stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("KGQA_DATA_DIR") or str(REPO.parent / "shared" / "data"))
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--scores", default="")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    scores = json.loads(Path(args.scores).read_text()) if args.scores else {}
    names = [n for n in ["ck25", *[k for k in KG_FILES if k != "ck25"]] if not args.only or n in args.only.split(",")]
    parts, table = [], []
    for name in names:
        text, st = sheet(name, Path(args.data) / KG_FILES[name], args.n, args.seed, scores.get(name))
        parts.append(text)
        print(text, flush=True)
        table.append((name, st))
    means = ["| KG | questions | none/count/sup/comp | mean readability | 2 / 1 / 0 |", "|---|---|---|---|---|"]
    for name, st in table:
        m = f"{st['mean']:.2f}" if st.get("mean") is not None else "-"
        d = " / ".join(map(str, st.get("dist", []))) or "-"
        means.append(f"| {name} | {st['n']} | {st.get('mix', '-')} | {m} | {d} |")
    print("\n".join(means))
    if args.out:
        Path(args.out).write_text("\n".join(means) + "\n\n" + "\n".join(parts), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
