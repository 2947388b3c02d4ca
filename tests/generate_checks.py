"""Independent checks of a dataset written by ``kgqa generate`` (used by the test_generate*
modules on the demo KG, CK25 and Virtuoso). They read the dataset back through kgqa's loader
and re-execute SPARQL through a fresh engine; the only generator conventions they rely on are
the documented ones: the question variable is ``?x``, the WHERE block has one triple pattern
or FILTER per line, an argmax/argmin ends in ``ORDER BY ... LIMIT 1``.
"""

from __future__ import annotations

import itertools
import math
import re

from kgqa.load import load_dataset
from kgqa.model import IRI, TableAnswer, TermMatching

VAR = re.compile(r"\?\w+")


def rows(answer) -> frozenset:
    assert isinstance(answer, TableAnswer), answer
    return frozenset(r for r in answer.rows if any(c is not None for c in r))


def parts(sparql: str) -> tuple[str, list[str], str]:
    head, rest = sparql.split("WHERE {\n", 1)
    body, tail = rest.rsplit("\n}", 1)
    return head, [line.strip() for line in body.split("\n") if line.strip()], tail


def triple(line: str) -> tuple[str, str, str] | None:
    if line.startswith(("FILTER(", "BIND(")):
        return None
    assert line.endswith(" ."), line
    s, p, o = line[:-2].split(" ", 2)
    return s, p, o


def execute(engine, queries: list[str]) -> list:
    outs = engine.execute_many(queries, timeout=60)
    for q, o in zip(queries, outs):
        assert o.status.value == "ok", (q, o.status, o.message)
    return [o.answer for o in outs]


def check_answers(items, engine) -> None:
    """Every gold query executes to exactly its stored, non-empty answer."""
    answers = execute(engine, [it.sparql for it in items])
    for it, got in zip(items, answers):
        assert rows(it.answer), it.id
        assert rows(got) == rows(it.answer), (it.id, it.sparql)


def check_exclusive(items, engine) -> int:
    """In every solution of every WHERE block, the entities on different nodes differ (and
    differ from the grounded entities). Returns the number of solutions checked."""
    queries, consts = [], []
    for it in items:
        _, body, _ = parts(it.sparql)
        queries.append("SELECT * WHERE {\n" + "\n".join(body) + "\n}")
        cs = set()
        for line in body:
            t = triple(line)
            if t:
                cs |= {x for x in (t[0], t[2]) if x.startswith("<") and t[1] != "a"}
        consts.append({IRI(c[1:-1]) for c in cs})
    n = 0
    for it, ans, cs in zip(items, execute(engine, queries), consts):
        for row in ans.rows:
            ents = [c for c in row if isinstance(c, IRI)]
            assert len(set(ents)) == len(ents), (it.id, row)
            assert not (set(ents) & cs), (it.id, row, cs)
            n += 1
    return n


VIA = re.compile(r"\?via\w+")
BIND = re.compile(r"^BIND\(.*\) AS (\?\w+)\)$")


def _units(body: list[str]) -> list[tuple[list[int], set[str], bool]]:
    """The graph query's components in the SPARQL body: a triple pattern, or the patterns of a
    relation through blank nodes (and its cast: a BIND, or the FILTER comparing a grounded
    value) joined by their ``?via`` variables. Each: (line indices, end terms, is a class)."""
    groups: list[tuple[list[int], set[str]]] = []
    for i, line in enumerate(body):
        vias = set(VIA.findall(line))
        if not triple(line) and not (vias and (line.startswith("BIND(") or line.startswith("FILTER("))):
            continue
        hit = [g for g in groups if g[1] & vias]
        lines, vs = [i], set(vias)
        for g in hit:
            groups.remove(g)
            lines, vs = sorted(g[0] + lines), g[1] | vs
        groups.append((lines, vs))
    out = []
    for lines, vias in groups:
        ends: set[str] = set()
        cls = False
        for i in lines:
            t = triple(body[i])
            if t:
                ends |= {x for x in (t[0], t[2]) if x not in vias}
                cls = cls or t[1] == "a"
            m = BIND.match(body[i])
            if m:
                ends.add(m.group(1))
        out.append((lines, ends, cls))
    return out


def reductions(sparql: str) -> list[str]:
    """The paper's single-component removals, done on the SPARQL text: drop one component (a
    triple pattern, or a relation through blank nodes: :func:`_units`), then every component no
    longer connected to ?x and every FILTER over a variable or an individual that is gone.
    Removals that leave no relation pattern or take the function away are not questions of the
    same kind and are left out."""
    head, body, tail = parts(sparql)
    units = _units(body)
    in_unit = {i for u in units for i in u[0]}
    out = []
    for drop in range(len(units)):
        rest = [u for k, u in enumerate(units) if k != drop]
        reach, changed = {"?x"}, True
        while changed:
            changed = False
            for _, ends, cls in rest:
                if not cls and ends & reach and not ends <= reach:
                    reach |= ends
                    changed = True
        kept = [u for u in rest if u[1] <= reach or (u[2] and u[1] & reach)]
        if not any(not cls for _, _, cls in kept):
            continue
        vars_ = {v for _, ends, _ in kept for v in ends if v.startswith("?")}
        vars_ |= {v for ls, _, _ in kept for i in ls for v in VIA.findall(body[i])}
        iris = {x for _, ends, _ in kept for x in ends if x.startswith("<")}
        keep_lines = {i for ls, _, _ in kept for i in ls}
        lines = [body[i] for i in sorted(keep_lines)]
        gone = False
        for i, line in enumerate(body):
            if i in in_unit:
                continue
            if line.startswith("FILTER("):
                fv = set(VAR.findall(line))
                # a node that is gone takes its mutual-exclusivity filters with it
                if fv <= vars_ and set(re.findall(r"(?<!\^)<[^>\s]*>", line)) <= iris:
                    lines.append(line)
                elif re.search(r" (<|>|<=|>=) ", line):
                    gone = True  # the comparative went with its node
        ov = VAR.findall(tail)
        if gone or any(v not in vars_ for v in ov):
            continue
        out.append(head + "WHERE {\n" + "".join(f"  {line}\n" for line in lines) + "}" + tail)
    return out


def top_set(sparql: str) -> tuple[str, str | None]:
    """For ``ORDER BY DESC(?v) LIMIT 1``: the query for all (?x, ?v) in that order, so that
    ties are seen (a LIMIT 1 over a tie picks arbitrarily)."""
    m = re.search(r"ORDER BY (?:DESC|ASC)\((\?\w+)\)\nLIMIT 1$", sparql)
    if not m:
        return sparql, None
    v = m.group(1)
    q = sparql.replace("SELECT ?x ", f"SELECT DISTINCT ?x {v} ", 1)
    return q[: q.rindex("\nLIMIT 1")], v


def check_minimal(items, engine) -> int:
    """Every single removal changes the answer unless the item is marked redundant (then the
    marked number of components leave it unchanged). Returns the number of removals run."""
    jobs = [(it, top_set(r)) for it in items for r in reductions(it.sparql)]
    answers = execute(engine, [r for _, (r, _) in jobs])
    same: dict[str, int] = {}
    for (it, (r, order_var)), ans in zip(jobs, answers):
        got = rows(ans)
        if order_var is not None:  # argmax/argmin: every ?x tied at the top is the answer
            key = TermMatching().key
            top = [row for row in ans.rows if key(row[1]) == key(ans.rows[0][1])] if ans.rows else []
            got = frozenset((row[0],) for row in top)
        if got == rows(it.answer):
            same[it.id] = same.get(it.id, 0) + 1
    for it in items:
        if it.metadata.get("redundant"):
            assert same.get(it.id, 0) >= 1, it.id
        else:
            assert same.get(it.id, 0) == 0, (it.id, it.sparql)
    return len(jobs)


def check_characteristics(items) -> dict:
    fc = {it.metadata["function_class"] for it in items}
    edges = {it.metadata["num_edges"] for it in items}
    for it in items:
        c = it.metadata["commonness"]
        assert isinstance(c, float) and math.isfinite(c) and c < 0, (it.id, c)
        assert it.groups["function"] == it.metadata["function_class"]
        assert it.groups["paraphrase"] and it.groups["template"].startswith("t")
        n = len(rows(it.answer))
        assert it.metadata["answer_cardinality"] == ("1" if n == 1 else ">1")
        assert it.metadata["num_edges"] == sum(1 for e in it.metadata["graph_query"]["edges"])
    return {"function_class": fc, "num_edges": edges}


def canonical(path) -> tuple:
    ds = load_dataset(str(path))
    assert not [p for p in ds.problems if p.severity == "error"], ds.problems
    items = [it for it in ds.items if it.metadata.get("paraphrase_source") == "canonical"]
    return ds, items


def check_all(path, engine) -> dict:
    ds, items = canonical(path)
    check_answers(ds.items, engine)
    n_solutions = check_exclusive(items, engine)
    n_reductions = check_minimal(items, engine)
    ch = check_characteristics(items)
    return {"dataset": ds, "items": items, "solutions": n_solutions, "reductions": n_reductions, **ch}


__all__ = ["check_all", "check_answers", "check_exclusive", "check_minimal", "check_characteristics",
           "canonical", "reductions", "rows", "itertools"]
