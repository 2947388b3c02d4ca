"""Documentation tables that cannot go stale (issue 40.4).

A table in ``docs/*.md`` kept by a script sits between two markers naming the Markdown report
the script writes (``bench/experiments/common.py:write_report``: title, command, commit, note,
table)::

    <!-- table: bench/experiments/results/reyd-zouaq-quick.md -->
    ... the command, the commit and the table, copied from that file ...
    <!-- /table -->

``--write`` copies each report's command, commit line and table into its block; ``--check``
(the default) exits 1 naming every block whose table differs from its report's (the command and
commit lines may differ: a rerun on a later commit with the same table is still in step).
``tests/baselines/test_doc_tables.py`` (slow) reruns the quick-preset scripts into a temporary folder and
checks the docs against what the code now produces.

    python bench/experiments/doc_tables.py [--write] [--results DIR]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"(<!-- table: (?P<src>\S+) -->\n)(?P<body>.*?)(<!-- /table -->)", re.S)


def table_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("|")]


def report_block(report: str) -> str:
    """What a block holds of a report: its command, its commit line and its table."""
    lines = report.splitlines()
    cmd = next((ln for ln in lines if ln.startswith("`")), "")
    made = next((ln for ln in lines if ln.startswith("Made by kgqa commit")), "")
    return "\n".join([f"```bash\n{cmd.strip('`')}\n```", *([made] if made else []), "", *table_lines(report)]) + "\n"


def blocks(docs: Path = ROOT / "docs"):
    for page in sorted(docs.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            yield page, m


def check(results: Path | None = None) -> list[str]:
    """The blocks whose table differs from their report's (``results``: where the reports are,
    default: the path each block names, under the repository)."""
    bad = []
    for page, m in blocks():
        src = (results / Path(m["src"]).name) if results else ROOT / m["src"]
        if not src.exists():
            bad.append(f"{page.relative_to(ROOT)}: {m['src']}: no such report")
            continue
        if table_lines(m["body"]) != table_lines(src.read_text(encoding="utf-8")):
            bad.append(f"{page.relative_to(ROOT)}: the table from {m['src']} differs from what its script wrote "
                       f"({src}); rerun the command in the block and python bench/experiments/doc_tables.py --write")
    return bad


def write() -> int:
    n = 0
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")

        def fill(m: re.Match) -> str:
            nonlocal n
            n += 1
            return m.group(1) + report_block((ROOT / m["src"]).read_text(encoding="utf-8")) + m.group(4)

        new = BLOCK.sub(fill, text)
        if new != text:
            page.write_text(new, encoding="utf-8")
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="copy every report into its block")
    ap.add_argument("--results", default="", help="compare with the reports in this folder instead")
    args = ap.parse_args()
    if args.write:
        print(f"wrote {write()} table(s)")
        return
    bad = check(Path(args.results) if args.results else None)
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
