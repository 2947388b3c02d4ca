"""QALD JSON / eQALD datasets and runs, and the QALD JSON writer."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import examples

from kgqa.load import formats, load_dataset, load_run
from kgqa.load import qald_json
from kgqa.model import BooleanAnswer, Dataset, InputError, Item, TableAnswer
from kgqa.model.terms import IRI, XSD, BNode, Literal

FIX = Path(__file__).parents[1] / "fixtures" / "qald"


def _digest(p: Path) -> tuple[float, str]:
    return p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- real files


@pytest.mark.parametrize(
    "rel,name,count",
    [
        ("qald-9/qald-9-train-multilingual.json", "qald-9-train", 408),
        ("qald-9/qald-9-test-multilingual.json", "qald-9-test", 150),
        ("qald-10/qald_10.json", "qald-10", 394),
    ],
)
def test_real_counts_by_path_and_name(shared_data, rel, name, count):
    path = shared_data / rel
    before = _digest(path)
    by_path = load_dataset(path)
    by_name = load_dataset(name)
    assert by_path.format == "qald-json" and by_name.format == "qald-json"
    assert len(by_path) == count and len(by_name) == count
    assert by_path.ids == by_name.ids
    assert [p for p in by_path.problems if p.severity == "error"] == []
    assert by_name.name == name
    assert _digest(path) == before  # loading never modifies the input


def test_qald9_test_spot_checks(shared_data):
    ds = load_dataset(shared_data / "qald-9/qald-9-test-multilingual.json")
    it = ds["99"]
    assert it.questions["en"] == "What is the time zone of Salt Lake City?"
    assert it.questions["de"] == "In welcher Zeitzone liegt Salt Lake City?"
    assert it.keywords["en"] == ["Salt Lake City", "time zone"]
    assert it.answer_type == "resource"
    assert it.metadata == {"aggregation": False, "onlydbo": True, "hybrid": False}
    assert it.answer == TableAnswer(("uri",), ((IRI("http://dbpedia.org/resource/Mountain_Time_Zone"),),))
    assert "timeZone" in it.sparql
    assert len(it.questions) == 12 and it.questions["pt_BR"] == "Qual o fuso horário da cidade de Salt Lake?"
    date = ds["173"]
    assert date.answer_type == "date"
    assert date.answer.rows == ((Literal("1995-01-01"),),)
    booleans = [it for it in ds if it.answer_type == "boolean"]
    assert len(booleans) == 4 and all(isinstance(it.answer, BooleanAnswer) for it in booleans)
    assert ds["73"].answer.rows == ((Literal("8"),),)


def test_qald10_int_ids_and_typed_literals(shared_data):
    ds = load_dataset(shared_data / "qald-10/qald_10.json")
    assert ds.ids[:3] == ["0", "1", "2"]
    assert ds["0"].questions["zh"] == "黎曼几何是以谁命名的？"
    assert ds["0"].answer.rows == ((IRI("http://www.wikidata.org/entity/Q42299"),),)
    typed = [c for it in ds if isinstance(it.answer, TableAnswer) for r in it.answer.rows for c in r
             if isinstance(c, Literal) and c.datatype == XSD + "integer"]
    assert len(typed) == 99
    assert sum(isinstance(it.answer, BooleanAnswer) for it in ds) == 61


def test_writer_round_trips_qald9_test(shared_data, tmp_path):
    ds = load_dataset(shared_data / "qald-9/qald-9-test-multilingual.json")
    out = tmp_path / "q9.json"
    qald_json.write(ds, out)
    again = load_dataset(out)
    assert again.format == "qald-json"
    assert again.items == ds.items
    assert again.name == ds.name


# --------------------------------------------------------------------------- fixtures


def test_extended_qald():
    ds = load_dataset(FIX / "eqald_sample.json")
    assert ds.format == "qald-json"
    it = ds["7"]
    assert it.answer_type == "number"
    assert it.sparql.startswith("SELECT COUNT")
    assert it.answer == TableAnswer(("c",), ((Literal("512", XSD + "integer"),),))
    assert it.metadata == {"aggregation": True, "onlydbo": True, "hybrid": False, "confidence": 0.8}
    assert it.keywords["en"] == ["Hal Roach", "produce", "film"]
    assert ds["8"].answer == BooleanAnswer(True) and ds["8"].answer_type == "boolean"
    assert ds.problems == []


def test_run_absent_vs_empty_answers():
    run = load_run(FIX / "run_sample.json")
    assert run.format == "qald-json" and run.name == "my-system"
    assert [p.id for p in run] == ["99", "98", "173", "100", "101"]
    assert run.get("99").answer is None and "timeZone" in run.get("99").sparql
    assert run.get("98").answer == TableAnswer(("uri",), ())  # explicit empty bindings: empty answer
    assert run.get("173").answer.rows == ((Literal("1995-01-01"),),)
    assert run.get("100").answer is None and run.get("100").sparql is None  # no answers key: no answer
    assert run.get("101").answer == BooleanAnswer(False)


def test_truncated_json_names_line_and_column():
    with pytest.raises(InputError) as e:
        load_dataset(FIX / "truncated.json")
    msg = str(e.value)
    assert "truncated.json" in msg and "malformed JSON at line" in msg and "column" in msg


def test_latin1_bytes_name_the_offset():
    data = (FIX / "latin1.json").read_bytes()
    offset = data.index(b"\xfc")  # the Latin-1 u-umlaut of Zuerich
    with pytest.raises(InputError) as e:
        load_dataset(FIX / "latin1.json")
    assert f"byte 0xfc at offset {offset}" in str(e.value)
    assert "not valid UTF-8" in str(e.value)


def test_duplicate_ids_keep_first():
    ds = load_dataset(FIX / "duplicate_ids.json")
    assert ds.ids == ["1", "2"]
    assert ds["1"].questions["en"] == "Who created Wikipedia?"
    [p] = ds.problems
    assert p.severity == "error" and p.record == "question id 1" and "duplicate id '1'" in p.message
    assert p.file.endswith("duplicate_ids.json")


def test_bad_binding_type_and_other_record_problems():
    ds = load_dataset(FIX / "bad_binding.json")
    assert ds.ids == ["1", "3", "4"]
    msgs = {(p.record, p.severity): p.message for p in ds.problems}
    assert "unknown binding type 'resource'" in msgs[("question id 2", "error")]
    assert "answer type is boolean but the answer is a table" in msgs[("question id 3", "warning")]
    assert ("questions[4]", "error") in msgs and "no 'id'" in msgs[("questions[4]", "error")]
    four = [p.message for p in ds.problems if p.record == "question id 4"]
    assert any("unknown answer type 'count'" in m for m in four)
    assert any("neither a query nor answers" in m for m in four)


def test_not_qald_shape(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"items": []}', encoding="utf-8")
    with pytest.raises(InputError, match="expected an object with a 'questions' list"):
        load_dataset(p, format="qald-json")


def test_sniffer_confidence():
    s = formats.sample(FIX / "eqald_sample.json")
    assert qald_json.sniff(s) == 0.9
    assert qald_json.sniff(formats.Sample(Path("x.json"), '[{"uid": 1}]', 10)) == 0.0
    long_answers_first = '{"questions": [{"id": "1", "answers": [{"head": {"vars": ["x"]}, "results": {"bindings": ['
    assert qald_json.sniff(formats.Sample(Path("r.json"), long_answers_first, 10_000_000)) == 0.3


def test_split_keywords():
    assert qald_json.split_keywords("Salt Lake City,  time zone") == ["Salt Lake City", "time zone"]
    assert qald_json.split_keywords(" , a,,b ") == ["a", "b"]
    assert qald_json.split_keywords(None) == []


# --------------------------------------------------------------------------- writer property test

_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
_word = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Cc"), blacklist_characters=","), min_size=1, max_size=8)
_lang = st.sampled_from(["en", "de", "ru", "pt_BR", "hi_IN"])
_iri = st.builds(IRI, st.from_regex(r"http://example\.org/[A-Za-z0-9_%]{1,8}", fullmatch=True))
_lit = st.one_of(
    st.builds(Literal, _text),
    st.builds(Literal, _text, st.sampled_from([XSD + "integer", XSD + "date", "http://example.org/dt"])),
    st.builds(lambda v, l: Literal(v, None, l), _text, st.sampled_from(["en", "de-CH"])),
)
_term = st.one_of(_iri, _lit, st.builds(BNode, st.from_regex(r"b[0-9]{1,3}", fullmatch=True)))


@st.composite
def _answers(draw):
    if draw(st.booleans()) and draw(st.booleans()):
        return BooleanAnswer(draw(st.booleans()))
    variables = tuple(draw(st.lists(st.sampled_from(["uri", "x", "c", "date"]), min_size=0, max_size=3, unique=True)))
    if not variables:
        return TableAnswer((), ())
    rows = draw(st.lists(st.tuples(*[st.one_of(st.none(), _term) for _ in variables]), max_size=4))
    return TableAnswer(variables, tuple(rows))


@st.composite
def _items(draw, idx):
    langs = draw(st.lists(_lang, min_size=1, max_size=3, unique=True))
    questions = {lang: draw(_text) for lang in langs}
    keywords = {lang: draw(st.lists(_word, min_size=1, max_size=3)) for lang in langs if draw(st.booleans())}
    keywords = {k: [w.strip() for w in v if w.strip()] for k, v in keywords.items()}
    keywords = {k: v for k, v in keywords.items() if v}
    meta = draw(st.dictionaries(st.sampled_from(["aggregation", "onlydbo", "hybrid", "source", "tags"]),
                                st.one_of(st.booleans(), _text, st.integers(-5, 5), st.lists(_text, max_size=2)),
                                max_size=3))
    return Item(
        id=str(idx),
        questions=questions,
        sparql=draw(st.one_of(st.none(), _text.filter(lambda s: s.strip()))),
        answer=draw(st.one_of(st.none(), _answers())),
        answer_type=draw(st.one_of(st.none(), st.sampled_from(["resource", "number", "date", "boolean", "string"]))),
        keywords=keywords,
        groups=draw(st.dictionaries(st.sampled_from(["template", "split"]), _text, max_size=2)),
        metadata=meta,
        lang_ids=draw(st.one_of(st.just({}), st.just({lang: f"{idx}-{lang}" for lang in langs}))),
    )


@st.composite
def _datasets(draw):
    n = draw(st.integers(0, 5))
    return Dataset("prop", [draw(_items(i)) for i in range(n)])


@examples(60, quick=8)  # each example writes and reads a file
def test_writer_round_trip_property(tmp_path, examples):
    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(ds=_datasets())
    def check(ds):
        _check_writer_round_trip_property(tmp_path, ds)

    check()


def _check_writer_round_trip_property(tmp_path, ds):
    out = tmp_path / "rt.json"
    qald_json.write(ds, out)
    json.loads(out.read_text(encoding="utf-8"))  # valid JSON
    again = qald_json.load_qald_json_dataset([out])
    assert [p for p in again.problems if p.severity == "error"] == []
    assert again.items == ds.items


def test_run_writer_round_trip(tmp_path):
    run = load_run(FIX / "run_sample.json")
    out = tmp_path / "run.json"
    qald_json.write(run, out)
    again = load_run(out)
    assert [(p.id, p.sparql, p.answer) for p in again] == [(p.id, p.sparql, p.answer) for p in run]
