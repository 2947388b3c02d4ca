"""Generic JSONL / CSV datasets, JSONL runs, the JSONL writer, and format detection over all
fixtures of the LC-QuAD / SimpleDBpediaQA / GraphQuestions / NSpM / generic loaders."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from kgqa.load import formats, load_dataset, load_run
from kgqa.load.generic import load_csv_dataset, load_jsonl_dataset, load_jsonl_run, parse_answer, write
from kgqa.model import BNode, BooleanAnswer, Dataset, InputError, IRI, Item, Literal, Prediction, Run, Status, TableAnswer
from kgqa.model.terms import XSD
from conftest import examples

FIXTURES = Path(__file__).parents[1] / "fixtures"
GEN = FIXTURES / "generic"
R = "http://dbpedia.org/resource/"


# --------------------------------------------------------------------------- JSONL dataset


def test_jsonl_dataset_items():
    ds = load_dataset(GEN / "dataset.jsonl")
    assert ds.format == "jsonl"
    assert ds.ids == ["1", "2", "3", "4", "5", "6"]
    assert ds.problems == []
    one = ds["1"]
    assert one.questions == {"en": "Who wrote Hamlet?"}
    assert one.answer == TableAnswer(("answer",), ((IRI(R + "William_Shakespeare"),),))
    assert one.answer_type == "resource"
    assert one.metadata == {"source": "handwritten"}
    two = ds["2"]
    assert two.questions == {"en": "How many moons does Mars have?", "de": "Wie viele Monde hat der Mars?"}
    assert two.sparql.startswith("SELECT (COUNT(?m) AS ?c)")  # from "query"
    assert two.answer.column("answer") == [Literal("2", XSD + "integer")]
    three = ds["3"]
    assert three.questions == {"en": "Is Berlin the capital of Germany?", "de": "Ist Berlin die Hauptstadt Deutschlands?"}
    assert three.answer == BooleanAnswer(True)
    four = ds["4"]
    assert four.answer == TableAnswer(("uri",), ((IRI(R + "Rhine"),),))
    assert four.groups == {"template": "t1"}
    assert four.metadata == {"difficulty": "easy"}
    assert ds["5"].answer.column("answer") == [Literal("1954-07-17", XSD + "date"), Literal("Merkel", None, "de")]
    six = ds["6"]
    assert (six.sparql, six.answer, six.answer_type) == (None, None, None)


def test_jsonl_dataset_problems(tmp_path):
    lines = [
        '{"id": "a", "question": "ok?", "answers": ["x"]}',
        '{"id": "b", "question": "broken',
        '[1, 2]',
        '{"question": "no id"}',
        '{"id": "c"}',
        '{"id": "d", "question": "q", "answers": 5}',
        '{"id": "e", "question": "q", "answers": {"head": {}, "boolean": "maybe"}}',
        '{"id": "f", "question": "q", "sparql": 7}',
        '{"id": "a", "question": "again"}',
        '{"id": true, "question": "q"}',
    ]
    p = tmp_path / "d.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ds = load_jsonl_dataset([p])
    assert ds.ids == ["a"]
    assert [(x.record, x.message) for x in ds.problems] == [
        ("line 2", "not valid JSON at column 25: Unterminated string starting at; skipped"),
        ("line 3", "expected a JSON object, got list; skipped"),
        ("line 4", "no 'id'; skipped"),
        ("line 5", "no question text ('question', 'questions' or 'question_<lang>'); skipped"),
        ("line 6", "expected an answer as a list of terms, a SPARQL results object or a boolean, got int 5; skipped"),
        ("line 7", "boolean answer must be true or false, got 'maybe'; skipped"),
        ("line 8", "'sparql' must be a string, got int; skipped"),
        ("line 9", "duplicate id 'a' (first at line 1); skipped"),  # in file order (read line by line)
        ("line 10", "expected an id (a string or an integer), got True; skipped"),
    ]
    assert all(x.file == str(p) for x in ds.problems)


def test_jsonl_not_utf8(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_bytes(b'{"id": "1", "question": "caf\xe9"}\n')
    with pytest.raises(InputError, match="not valid UTF-8: byte 0xe9"):
        load_jsonl_dataset([p])


# --------------------------------------------------------------------------- CSV dataset


def test_csv_dataset_items():
    ds = load_dataset(GEN / "dataset.csv")
    assert ds.format == "csv"
    assert ds.ids == ["1", "2", "3", "4", "5"]
    assert ds.problems == []
    assert ds["1"].questions == {"en": "Who wrote Hamlet?", "de": "Wer schrieb Hamlet?"}
    assert ds["1"].metadata == {"difficulty": "easy"}
    two = ds["2"]
    assert two.questions == {"en": "Which countries border Germany, and which of them are landlocked?"}
    assert two.answer.column("answer") == [IRI(R + "Austria"), IRI(R + "Switzerland")]
    assert two.metadata == {}
    assert ds["3"].answer == BooleanAnswer(True)
    assert ds["4"].answer.column("answer") == [Literal("2", XSD + "integer")]
    assert ds["4"].sparql is None
    assert ds["5"].answer is None and ds["5"].answer_type is None


def test_csv_problems(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text(
        "id,question,answers\n"
        "1,Who?,http://x/a|http://x/b\n"
        "2,Short row\n"
        "3,Bad JSON,\"[1, \"\n"
        ",No id,\n"
        "5,,\n"
        "1,Dup,\n",
        encoding="utf-8",
    )
    ds = load_csv_dataset([p], answer_separator="|")
    assert ds.ids == ["1"]
    assert ds["1"].answer.column("answer") == [IRI("http://x/a"), IRI("http://x/b")]
    assert [(x.record, x.message) for x in ds.problems] == [
        ("line 3", "2 cells for 3 header columns; skipped"),
        ("line 4", "answers cell looks like JSON but is not valid JSON (column 4: Expecting value); skipped"),
        ("line 5", "expected an id (a non-empty string or an integer), got ''; skipped"),
        ("line 6", "no question text ('question', 'questions' or 'question_<lang>'); skipped"),
        ("line 7", "duplicate id '1' (first at line 2); skipped"),
    ]


def test_csv_header_required(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("identifier,text\n1,Who?\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"CSV header must name an 'id' and a 'question'"):
        load_csv_dataset([p])
    e = tmp_path / "e.csv"
    e.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="empty CSV file"):
        load_csv_dataset([e])


# --------------------------------------------------------------------------- JSONL run


def test_jsonl_run():
    run = load_run(GEN / "run.jsonl")
    assert run.format == "jsonl"
    assert [p.id for p in run] == ["1", "2", "3", "4", "5", "6"]
    assert run.problems == []
    p1 = run.get("1")
    assert p1.answer == TableAnswer(("uri",), ((IRI(R + "William_Shakespeare"),),))
    assert p1.elapsed == 0.42 and p1.status is Status.OK
    p2 = run.get("2")
    assert p2.answer.column("answer") == [Literal("2")]
    assert p2.metadata == {"system": "baseline-1"}
    assert run.get("3").answer == BooleanAnswer(False)
    p4 = run.get("4")
    assert p4.answer.column("answer") == [IRI(R + "Rhine"), IRI(R + "Sieg")]
    assert p4.ranked == [IRI(R + "Rhine"), IRI(R + "Sieg")]
    p5 = run.get("5")
    assert p5.status is Status.EXEC_ERROR and p5.message == "endpoint returned HTTP 503"
    assert p5.outcome().label == "exec_error"
    p6 = run.get("6")
    assert p6.answer is None and p6.sparql.startswith("SELECT ?m")
    assert p6.outcome().status is Status.MISSING


def test_jsonl_run_problems(tmp_path):
    lines = [
        '{"id": "1", "answer": ["a"]}',
        '{"id": "2", "error": 500}',
        '{"id": "3", "status": "crashed"}',
        '{"id": "4", "answer": ["a"], "elapsed": -1}',
        '{"id": "5", "ranked": "a"}',
        '{"id": "1", "answer": ["b"]}',
        '{"id": "1", "answer": ["c"]}',
        '{"id": "6", "status": "timeout", "message": "30 s"}',
    ]
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(lines), encoding="utf-8")
    run = load_jsonl_run([p])
    assert [x.id for x in run] == ["1", "4", "6"]
    assert run.get("1").answer.column("answer") == [Literal("a")]  # the first of the duplicates
    assert run.get("4").elapsed is None
    assert run.get("6").status is Status.TIMEOUT and run.get("6").message == "30 s"
    assert [(x.record, x.message, x.severity) for x in run.problems] == [
        ("line 2", "'error' must be a string (the system's error message), got 500; skipped", "error"),
        ("line 3", "unknown status 'crashed' (expected one of: ok, parse_error, exec_error, timeout, refused, missing, http_error, malformed_response); skipped", "error"),
        ("line 4", "'elapsed' must be a non-negative number of seconds, got -1; ignored", "warning"),
        ("line 5", "'ranked' must be a list of terms, got str; skipped", "error"),
        ("line 6", "duplicate id '1' (first at line 1); skipped", "error"),
        ("line 7", "duplicate id '1' (first at line 1); skipped", "error"),
    ]


def test_parse_answer_forms():
    assert parse_answer(None) is None
    assert parse_answer(True) == BooleanAnswer(True)
    assert parse_answer(["http://x/a", "b", 3, 2.5]).column("answer") == [
        IRI("http://x/a"), Literal("b"), Literal("3", XSD + "integer"), Literal("2.5", XSD + "decimal")]
    with pytest.raises(ValueError, match=r"answer element 2: expected a term object or a string"):
        parse_answer(["a", None])


# --------------------------------------------------------------------------- writer round trip

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_key = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)
_iri = st.builds(lambda s: IRI("http://example.org/" + s), _text)
_literal = st.one_of(
    st.builds(Literal, _text),
    st.builds(lambda v, d: Literal(v, d), _text, st.sampled_from([XSD + "integer", XSD + "date", XSD + "boolean", "http://x/dt"])),
    st.builds(lambda v, lang: Literal(v, None, lang), _text, st.sampled_from(["en", "de", "pt-BR"])),
)
_term = st.one_of(_iri, _literal, st.builds(BNode, _text.filter(bool)))


@st.composite
def _table(draw):
    variables = tuple(draw(st.lists(_key, unique=True, max_size=3)))
    rows = draw(st.lists(st.tuples(*[st.one_of(st.none(), _term) for _ in variables]), max_size=4))
    return TableAnswer(variables, tuple(rows))


_answer = st.one_of(st.none(), st.builds(BooleanAnswer, st.booleans()), _table())
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), _text),
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(_key, c, max_size=3)),
    max_leaves=6,
)
_id = _text.map(str.strip).filter(bool)
_lang = st.sampled_from(["en", "de", "fr", "pt-BR"])

_item = st.builds(
    Item,
    id=_id,
    questions=st.dictionaries(_lang, _text, min_size=1, max_size=3),
    sparql=st.one_of(st.none(), _text),
    answer=_answer,
    answer_type=st.one_of(st.none(), _text),
    keywords=st.dictionaries(_lang, st.lists(_text, max_size=3), max_size=2),
    groups=st.dictionaries(_key, _text, max_size=2),
    metadata=st.dictionaries(_key, _json, max_size=3),
    lang_ids=st.dictionaries(_lang, _text, max_size=2),
)

_prediction = st.builds(
    Prediction,
    id=_id,
    sparql=st.one_of(st.none(), _text),
    answer=_answer,
    ranked=st.one_of(st.none(), st.lists(_term, max_size=3)),
    elapsed=st.one_of(st.none(), st.floats(min_value=0, allow_nan=False, allow_infinity=False)),
    status=st.sampled_from(list(Status)),
    message=_text,
    metadata=st.dictionaries(_key, _json, max_size=3),
)


def _unique_ids(objs):
    seen, out = set(), []
    for o in objs:
        if o.id not in seen:
            seen.add(o.id)
            out.append(o)
    return out


@pytest.mark.parametrize("kind", ["dataset", "run"])
@examples(150)
def test_jsonl_round_trip(kind, examples):
    """Datasets and runs written as JSONL read back equal, whatever their items."""
    records, of, load, held = {"dataset": (_item, Dataset, load_jsonl_dataset, "items"),
                               "run": (_prediction, Run, load_jsonl_run, "predictions")}[kind]

    @settings(max_examples=examples, deadline=None)
    @given(st.lists(records, max_size=5).map(_unique_ids))
    def check(xs):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "out.jsonl"
            formats.get(kind, "jsonl").write(of("x", xs), path)
            back = load([path])
        assert back.problems == []
        assert getattr(back, held) == xs

    check()


def test_written_file_shape(tmp_path):
    it = Item("q1", {"en": "Who?"}, "SELECT ?x {}", TableAnswer(("x",), ((Literal("5", XSD + "integer"),), (None,))),
              "number", groups={"template": "t"})
    path = tmp_path / "d.jsonl"
    write(Dataset("d", [it]), path)
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "id": "q1", "questions": {"en": "Who?"}, "sparql": "SELECT ?x {}",
        "answers": {"head": {"vars": ["x"]}, "results": {"bindings": [
            {"x": {"type": "literal", "value": "5", "datatype": XSD + "integer"}}, {}]}},
        "answer_type": "number", "groups": {"template": "t"},
    }
    with pytest.raises(TypeError, match="not JSON serializable"):
        write(Dataset("d", [Item("q", {"en": "x"}, metadata={"p": Path("/")})]), tmp_path / "e.jsonl")
    assert not (tmp_path / "e.jsonl").exists()


# --------------------------------------------------------------------------- detection

DATASET_FIXTURES = {
    "lcquad/lcquad1-test.json": "lcquad",
    "lcquad/lcquad2-sample.json": "lcquad2",
    "simpledbpediaqa/valid.json": "simpledbpediaqa",
    "simpledbpediaqa/impavidity-test.json": "simpledbpediaqa",
    "graphquestions/graphquestions-sample.json": "graphquestions",
    "nspm/data.en": "nspm",
    "nspm/data.sparql": "nspm",
    "generic/dataset.jsonl": "jsonl",
    "generic/dataset.csv": "csv",
}
RUN_FIXTURES = {
    "graphquestions/sempre.res": "graphquestions-res",
    "generic/run.jsonl": "jsonl",
}
MINE = {"lcquad", "lcquad2", "simpledbpediaqa", "graphquestions", "nspm", "jsonl", "csv", "graphquestions-res"}


@pytest.mark.parametrize("rel,expected", sorted(DATASET_FIXTURES.items()))
def test_detect_dataset_fixture(rel, expected):
    path = FIXTURES / rel
    assert formats.detect([path], "dataset").name == expected
    s = formats.sample(path)
    others = {f.name: f.sniff(s) for f in formats.formats("dataset") if f.name in MINE and f.name != expected}
    assert all(v == 0.0 for v in others.values()), others


@pytest.mark.parametrize("rel,expected", sorted(RUN_FIXTURES.items()))
def test_detect_run_fixture(rel, expected):
    path = FIXTURES / rel
    assert formats.detect([path], "run").name == expected
    s = formats.sample(path)
    others = {f.name: f.sniff(s) for f in formats.formats("run") if f.name in MINE and f.name != expected}
    assert all(v == 0.0 for v in others.values()), others


def test_my_sniffers_ignore_real_benchmark_files(shared_data):
    """None of these sniffers claims a real benchmark file of the shared data, except the one of
    the file's own format (the registry says which: LC-QuAD 1.0 is ``lcquad``'s), which claims it."""
    from kgqa.load import registry

    own = {f.path: e.format for e in registry.entries() for f in e.files if not f.package}
    files = [p for p in shared_data.rglob("*") if p.is_file() and p.suffix in (".json", ".yml", ".yaml", ".xml", ".csv", ".tsv")]
    assert files
    for p in files:
        s = formats.sample(p)
        mine = own.get(p.relative_to(shared_data).as_posix())
        claims = {f"{f.kind}:{f.name}": f.sniff(s) for f in formats.formats("dataset") if f.name in MINE}
        claims.update({f"run:{f.name}": f.sniff(s) for f in formats.formats("run") if f.name in MINE})
        if mine in MINE:
            assert claims.pop(f"dataset:{mine}") > 0.5, (p, mine)
            assert formats.detect([p], "dataset").name == mine
        assert all(v == 0.0 for v in claims.values()), (p, claims)


@pytest.mark.parametrize("data", [b'{"id": "1"}\n{"id": "caf\xe9"}\n', b'\xef\xbb\xbf{"id": "\xff"}\r\n',
                                  b'ok\r\nok\n\x80', b'\xef\xbb\xbfa\nb\r\nc'])
def test_line_reader_reads_and_refuses_as_the_whole_file_reader(tmp_path, data):
    """The streamed reader gives the lines text_lines gives, and the same error (offset, line,
    column) for a byte that is not UTF-8."""
    from kgqa.load.generic import iter_text_lines, text_lines

    p = tmp_path / "d.jsonl"
    p.write_bytes(data)
    try:
        whole = text_lines(p)
    except InputError as e:
        with pytest.raises(InputError) as got:
            list(iter_text_lines(p))
        assert str(got.value) == str(e)
    else:
        assert list(iter_text_lines(p)) == whole


def test_a_run_given_as_the_dataset_or_a_dataset_as_the_run_is_said_to_be_swapped(tmp_path):
    run = tmp_path / "run.jsonl"
    run.write_text('{"id": "q1", "query": "SELECT ?x WHERE { ?x ?p ?o }"}\n', encoding="utf-8")
    ds = tmp_path / "questions.yml"
    ds.write_text("dataset:\n  id: t\nquestions:\n  - id: q1\n    question: {en: Which one}\n    query:\n"
                  "      sparql: 'SELECT ?x WHERE { ?x ?p ?o }'\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"reads as a dataset file \(text2sparql\): were the dataset and the run "
                                         r"given in swapped order\?"):
        load_run(ds)
    assert load_dataset(ds).items[0].id == "q1"  # the same file is a dataset
    notjson = tmp_path / "notes.txt"
    notjson.write_text("just words\n", encoding="utf-8")
    with pytest.raises(InputError) as err:  # neither kind: no swap hint
        load_run(notjson)
    assert "cannot tell which run format" in str(err.value) and "swapped" not in str(err.value)
