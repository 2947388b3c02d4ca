"""LaTeX fragments: balanced environments, booktabs rules, escaping, best bold, superscripts."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from analysis_evals import make_eval

from kgqa.analyze.breakdown import breakdown_table
from kgqa.analyze.paraphrase import paraphrase_table
from kgqa.analyze.comparison import compare_evaluations
from kgqa.report.latex import breakdown_latex, comparison_latex, escape, evaluations_latex, paraphrase_latex

IDS = [f"q{i}" for i in range(10)]
A = dict(zip(IDS, [1, 1, 1, 1, 1, 1, 1, 1, 1, 0.0]))
B = dict(zip(IDS, [0, 0, 0, 0, 0, 0, 0, 0, 1, 0.0]))


def _balanced(tex: str) -> None:
    stack = []
    for kind, env in re.findall(r"\\(begin|end)\{([^}]+)\}", tex):
        if kind == "begin":
            stack.append(env)
        else:
            assert stack and stack.pop() == env
    assert not stack
    # braces balance outside escaped \{ \}
    depth = 0
    for m in re.finditer(r"\\[{}]|[{}]", tex):
        t = m.group(0)
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            assert depth >= 0
    assert depth == 0


def _rules(tex: str) -> None:
    for table in re.findall(r"\\begin\{tabular\}.*?\\end\{tabular\}", tex, re.S):
        assert table.count(r"\toprule") == 1 and table.count(r"\midrule") == 1 and table.count(r"\bottomrule") == 1
        cols = len(re.match(r"\\begin\{tabular\}\{([lcr]+)\}", table).group(1))
        for line in table.splitlines():
            if line.endswith(r"\\"):
                assert len(re.split(r"(?<!\\)&", line)) == cols, line


def test_escape_specials():
    assert escape("a_b % c & d # e $ {x} ~ ^ \\") == (
        r"a\_b \% c \& d \# e \$ \{x\} \textasciitilde{} \textasciicircum{} \textbackslash{}")


@pytest.fixture(scope="module")
def cmp():
    return compare_evaluations([make_eval("sys_A%", A), make_eval("sys#B&", B)], resamples=500, trials=500)


def test_comparison_table(cmp):
    tex = comparison_latex(cmp)
    _balanced(tex)
    _rules(tex)
    assert r"sys\_A\% (a)" in tex and r"sys\#B\& (b)" in tex
    # A is best (0.9 vs 0.1), bold, and significantly better than b (McNemar 8 vs 0: p = 2/256)
    assert r"\textbf{0.9000}\textsuperscript{b}" in tex
    assert r"\textbf{0.1000}" not in tex
    assert "$p_{\\mathrm{McN}}$" in tex and "8/2/0" in tex


def test_evaluations_breakdown_paraphrase_tables(tmp_path):
    from analysis_synthetic import evaluation

    e = evaluation(tmp_path, "my_run")
    for tex in (evaluations_latex([e]), breakdown_latex(breakdown_table([e], "num_edge", resamples=200)),
                paraphrase_latex(paraphrase_table([e]))):
        _balanced(tex)
        _rules(tex)
        assert "_run" not in tex.replace(r"\_run", "")
    tex = evaluations_latex([make_eval("x", A), make_eval("y", B)])
    assert r"\textbf{0.9000}" in tex and r"\textbf{0.1000}" not in tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine installed (structure is checked above)")
def test_compiles_with_pdflatex(cmp, tmp_path):
    doc = ("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + comparison_latex(cmp)
           + "\\end{document}\n")
    (tmp_path / "t.tex").write_text(doc)
    r = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 0
