"""The identity axiom for every loader (issue 25, part 3): a dataset given as its own run (its
upstream text verbatim, in every run format that can hold it) scores the maximum on every
measure that applies; QALD XML and JSON releases give the same items and the same n."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

import kgqa
from kgqa.load import formats, load_dataset, load_run
from kgqa.model.answer import answer_items
from kgqa.model.terms import DEFAULT_MATCHING

FIX = Path(__file__).parents[1] / "fixtures" / "qald"
EX = "http://ex.org/"

#: every query measure that reads the query texts only (nothing executed)
QUERY_MEASURES = ["QueryEM", "QueryEM(norm=whitespace)", "CanonicalEM", "BLEU", "ROUGE_L", "F1_Sem", "F1_Tri",
                  "GEK1", "GEK2", "GEK3"]
ANSWER_MEASURES = ["P", "R", "F1", "AnswerEM"]

ws = st.sampled_from(["", " ", "\n", "  \n\t", "\r\n "])


@st.composite
def records(draw):
    n = draw(st.integers(1, 4))
    out = []
    for i in range(n):
        e, p = draw(st.integers(0, 9)), draw(st.integers(0, 9))
        body = draw(st.sampled_from([
            f"SELECT DISTINCT ?x WHERE {{ <{EX}e{e}> <{EX}p{p}> ?x }}",
            f"SELECT ?x WHERE {{ ?x <{EX}p{p}> <{EX}e{e}> . ?x a <{EX}C{p}> }} LIMIT 5",
            f"PREFIX ex: <{EX}>\nSELECT ?x ?y WHERE {{ ?x ex:p{p} ?y .\n  ?y ex:q ex:e{e} }}",
        ]))
        answers = [f"{EX}a{k}" for k in sorted(draw(st.sets(st.integers(0, 5), max_size=3)))]
        out.append({"id": str(i + 1), "question": f"Question {i}?", "query": draw(ws) + body + draw(ws),
                    "answers": answers})
    return out


def _bindings(answers):
    return [{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": a}} for a in answers]}}]


def _qald_json(recs, run: bool) -> str:
    return json.dumps({"dataset": {"id": "t"}, "questions": [
        {"id": r["id"], **({} if run else {"question": [{"language": "en", "string": r["question"]}]}),
         "query": {"sparql": r["query"]}, "answers": _bindings(r["answers"])} for r in recs]})


def _qald_xml(recs, run: bool) -> str:
    out = ['<?xml version="1.0"?>', '<dataset id="t">']
    for r in recs:
        out.append(f'<question id="{r["id"]}" answertype="resource">')
        if not run:
            out.append(f'<string lang="en"><![CDATA[{r["question"]}]]></string>')
        out.append(f'<query><![CDATA[{r["query"]}]]></query>')
        out.append("<answers>" + "".join(f"<answer><uri>{escape(a)}</uri></answer>" for a in r["answers"]) + "</answers>")
        out.append("</question>")
    return "\n".join(out + ["</dataset>"]) + "\n"


def _csv(recs) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["id", "question", "sparql", "answers"])
    for r in recs:
        w.writerow([r["id"], r["question"], r["query"], json.dumps(r["answers"])])
    return buf.getvalue()


def _datasets(recs, d: Path) -> dict[str, tuple[Path, bool]]:
    """Every dataset format that holds the records: path and whether it holds the answers."""
    (d / "ds.jsonl").write_text("".join(json.dumps({"id": r["id"], "question": r["question"], "sparql": r["query"],
                                                    "answers": r["answers"]}) + "\n" for r in recs))
    (d / "ds.csv").write_text(_csv(recs))
    (d / "ds_qald.json").write_text(_qald_json(recs, False))
    (d / "ds_qald.xml").write_text(_qald_xml(recs, False))
    (d / "lcquad.json").write_text(json.dumps([{"_id": r["id"], "corrected_question": r["question"],
                                                "sparql_query": r["query"], "sparql_template_id": 1} for r in recs]))
    t2s = d / "t2s"
    t2s.mkdir(exist_ok=True)
    (t2s / "questions.yml").write_text(yaml.safe_dump({
        "dataset": {"id": "https://ex.org/t", "prefix": "t"},
        "questions": [{"id": int(r["id"]), "question": {"en": r["question"]}, "query": {"sparql": r["query"]}}
                      for r in recs]}, allow_unicode=True))
    (t2s / "t_true_result_set.json").write_text(json.dumps({f"t:{r['id']}-en": {a: 1 for a in r["answers"]} for r in recs}))
    return {"jsonl": (d / "ds.jsonl", True), "csv": (d / "ds.csv", True), "qald-json": (d / "ds_qald.json", True),
            "qald-xml": (d / "ds_qald.xml", True), "lcquad": (d / "lcquad.json", False),
            "text2sparql": (t2s / "questions.yml", True)}


def _runs(recs, d: Path, t2s: bool) -> dict[str, tuple[Path, bool]]:
    """Every run format that can hold the records: path and whether it holds the answers."""
    if t2s:
        (d / "answers.json").write_text(json.dumps([{"qname": f"t:{r['id']}-en", "query": r["query"]} for r in recs]))
        (d / "result_set.json").write_text(json.dumps({f"t:{r['id']}-en": {a: 1 for a in r["answers"]} for r in recs}))
        return {"text2sparql-answers": (d / "answers.json", False), "text2sparql-results": (d / "result_set.json", True)}
    (d / "run.jsonl").write_text("".join(json.dumps({"id": r["id"], "query": r["query"], "answer": r["answers"]}) + "\n"
                                         for r in recs))
    (d / "run_qald.json").write_text(_qald_json(recs, True))
    (d / "run_qald.xml").write_text(_qald_xml(recs, True))
    return {"jsonl": (d / "run.jsonl", True), "qald-json": (d / "run_qald.json", True),
            "qald-xml": (d / "run_qald.xml", True)}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records())
def test_every_dataset_format_as_its_own_run_scores_the_maximum(tmp_path_factory, recs):
    d = tmp_path_factory.mktemp("identity")
    for ds_format, (ds_path, ds_answers) in _datasets(recs, d).items():
        detected = formats.detect([ds_path], "dataset").name
        assert detected == ds_format or ds_format == "text2sparql", (ds_format, detected)
        is_t2s = ds_format == "text2sparql"
        for run_format, (run_path, run_answers) in _runs(recs, d, is_t2s).items():
            assert formats.detect([run_path], "run").name == run_format
            measures = (QUERY_MEASURES if run_format != "text2sparql-results" else []) + \
                (ANSWER_MEASURES if ds_answers and run_answers else [])
            if not measures:
                continue
            e = kgqa.evaluate(ds_path, run_path, profile="kgqa", measures=measures, allow_gold_copy=True)
            assert len(e.questions) == len(recs), (ds_format, run_format, e.skipped)
            for m in measures:
                if m in e.measure_skips and all(q.scores.get(m) is None for q in e.questions):
                    continue  # does not apply (e.g. GEK needs gold answers; LC-QuAD has none)
                assert e.aggregate[m] == 1.0, (ds_format, run_format, m, [q.scores.get(m) for q in e.questions])


# ----------------------------------------------------------------- QALD-5: XML and JSON


def test_qald5_xml_and_json_give_the_same_items_as_datasets_and_as_runs():
    xml, js = FIX / "qald5_sample.xml", FIX / "qald5_sample.json"
    assert formats.detect([xml], "dataset").name == "qald-xml" and formats.detect([xml], "run").name == "qald-xml"
    dx, dj = load_dataset(xml), load_dataset(js)
    assert dx.ids == dj.ids == ["1", "10", "100", "104", "900001"]
    for a, b in zip(dx, dj):
        assert answer_items(a.answer, DEFAULT_MATCHING) == answer_items(b.answer, DEFAULT_MATCHING), a.id
        assert "".join((a.sparql or "").split()) == "".join((b.sparql or "").split()) and a.questions["en"] == b.questions["en"]
    assert dx["100"].sparql is None and dx["100"].metadata["query"] == {"out_of_scope": True}
    assert len(dx["100"].answer) == 0 and len(dj["100"].answer) == 0  # the empty gold answer, in both
    rx, rj = load_run(xml), load_run(js)
    assert [p.id for p in rx] == [p.id for p in rj] == dx.ids
    for ds in (xml, js):
        for run in (xml, js):
            e = kgqa.evaluate(ds, run, profile="qald", allow_gold_copy=True)
            assert len(e.questions) == 5 and all(v == 1.0 for k, v in e.aggregate.items() if "processed" not in k), (ds, run, e.aggregate)


# ----------------------------------------------------------------- LC-QuAD 1.0 train, verbatim


def test_lcquad1_train_as_its_own_jsonl_run_with_the_upstream_spaces_scores_query_em_1(shared_data, tmp_path):
    src = shared_data / "lcquad-1.0" / "train-data.json"
    raw = json.loads(src.read_text(encoding="utf-8"))
    spaced = sum(1 for r in raw if r["sparql_query"] != r["sparql_query"].strip())
    assert len(raw) == 4000 and spaced > 1000  # the upstream text starts or ends with a space in 1 of 4
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps({"id": r["_id"], "query": r["sparql_query"]}) + "\n" for r in raw))
    e = kgqa.evaluate(src, run, profile="kgqa", measures=["QueryEM", "BLEU", "F1_Sem", "F1_Tri"], allow_gold_copy=True)
    assert len(e.questions) == 4000
    assert e.aggregate == {"QueryEM": 1.0, "BLEU": 1.0, "F1_Sem": 1.0, "F1_Tri": 1.0}


# ----------------------------------------------------------------- every loader, real shapes

ROOT = Path(__file__).parents[1] / "fixtures"
#: a fixture in each upstream shape kgqa reads (dataset format: path)
SHAPES = {
    "qald-json (QALD-9 style)": "qald/eqald_sample.json",
    "qald-json (QALD-5)": "qald/qald5_sample.json",
    "qald-json (QALD-7 extended)": "qald/qald7_extended_sample.json",
    "qald-xml (QALD-3/4)": "qald/qald4_sample.xml",
    "qald-xml (QALD-5)": "qald/qald5_sample.xml",
    "text2sparql": "text2sparql/questions.yml",
    "lcquad": "lcquad/lcquad1-test.json",
    "lcquad2": "lcquad/lcquad2-sample.json",
    "simpledbpediaqa": "simpledbpediaqa/valid.json",
    "graphquestions": "graphquestions/graphquestions-sample.json",
    "nspm": "nspm/data.en",
    "jsonl": "generic/dataset.jsonl",
    "csv": "generic/dataset.csv",
    "webqsp": "webqsp/WebQSP.test.sample.json",
    "cwq": "cwq/ComplexWebQuestions_dev.sample.json",
    "mintaka": "mintaka/mintaka_test.sample.json",
    "kqapro": "kqapro/train.sample.json",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_loader_as_its_own_run_scores_the_maximum(shape, tmp_path):
    """Each loader's items written as a run (JSONL and QALD JSON, the formats that hold a query
    and an answer of any shape) score 1.0 on every query and answer measure that applies."""
    from kgqa.load import generic, qald_json
    from kgqa.model import Prediction, Run

    path = ROOT / SHAPES[shape]
    ds = load_dataset(path)
    units = ds.by_language()
    run = Run("self", [Prediction(it.id, sparql=it.sparql, answer=it.answer) for it in units])
    measures = QUERY_MEASURES + ANSWER_MEASURES
    for name, write in (("run.jsonl", generic.write), ("run.json", qald_json.write)):
        out = tmp_path / name
        write(run, out)
        e = kgqa.evaluate(ds, out, profile="kgqa", measures=measures, allow_gold_copy=True)
        assert len(e.questions) == sum(1 for it in units if it.answer is not None or it.sparql), (shape, name, e.skipped)
        scored = set()
        for m in measures:
            values = [q.scores.get(m) for q in e.questions if q.scores.get(m) is not None]
            assert all(v == 1.0 for v in values), (shape, name, m, values)
            scored |= {m} if values else set()
        assert ("QueryEM" in scored) == any(it.sparql for it in units), (shape, scored)
        assert ("F1" in scored) == any(it.answer is not None for it in units), (shape, scored)


def test_graphquestions_as_its_own_res_run_scores_the_maximum(tmp_path):
    from kgqa.load import load_dataset as load

    path = ROOT / "graphquestions" / "graphquestions-sample.json"
    recs = json.loads(path.read_text(encoding="utf-8"))
    res = tmp_path / "self.res"
    res.write_text("# qid\ttime\tanswers\tpredictions\tstructure\tfunction\tanswer_cardinality\tcommonness\n" + "".join(
        f"{r['qid']}\t0.1\t{json.dumps(r['answer'])}\t{json.dumps(r['answer'])}\t{r['num_node']},{r['num_edge']}\t"
        f"{r['function']}\t{len(r['answer'])}\t{r['commonness']}\n" for r in recs), encoding="utf-8")
    e = kgqa.evaluate(load(path), res, profile="graphquestions", allow_gold_copy=True)
    assert len(e.questions) == len(recs) and all(v == 1.0 for v in e.aggregate.values()), e.aggregate
