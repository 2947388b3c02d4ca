"""A system's input is part of its score (issue 34.2): every baseline records the form of the
questions it was trained on and answered (raw, tagged with the gold query's KB elements), the
score's signature says it, and a served model answers exactly as ``kgqa baseline predict`` on the
same LC-QuAD 1.0 URI split, or serving it is refused with the reason."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from typer.testing import CliRunner

import kgqa
import kgqa.cli as cli
from kgqa.baselines import create, load_system
from kgqa.baselines.inputs import item_input, text_mentions
from kgqa.execute.live import AskSettings, ask
from kgqa.load import formats
from kgqa.model import Dataset, InputError, Item, Run
from kgqa.model.run import input_summary
from kgqa.service.model_source import ModelSource

from systemprocs import adapter

HAVE_TORCH = importlib.util.find_spec("torch") is not None
TINY = dict(layers=1, d_model=32, heads=2, ff=64, dropout=0.0, epochs=2, batch=16, lr=3e-3)

# one worker runs the module: the annotated LC-QuAD URI split is made once, not once per worker
pytestmark = pytest.mark.xdist_group("baseline-inputs")


def _cli(*args, code: int = 0):
    cli._register()
    r = CliRunner().invoke(cli.app, [str(a) for a in args], terminal_width=200)
    assert r.exit_code == code, r.output
    return r


def _raw(ds: Dataset) -> Dataset:
    """The same items with the question text that was tagged (metadata.raw_question)."""
    return Dataset(ds.name + "-raw", [replace(it, questions={"en": it.metadata["raw_question"]},
                                              metadata={k: v for k, v in it.metadata.items()
                                                        if k not in ("annotation", "mentions")})
                                      for it in ds.items])


@pytest.fixture(scope="module")
def uri_split(shared_data, tmp_path_factory):
    """LC-QuAD 1.0 train items tagged by kgqa annotate and split by kgqa split --by uri; raw copies beside."""
    tmp = tmp_path_factory.mktemp("lcquad-inputs")
    records = json.loads((shared_data / "lcquad-1.0" / "train-data.json").read_text())[:200]
    (tmp / "lcquad.json").write_text(json.dumps(records))
    _cli("annotate", tmp / "lcquad.json", "--mode", "tagged", "--unannotated", "drop", "-o", tmp / "tagged.jsonl")
    _cli("split", tmp / "tagged.jsonl", "--by", "uri", "--ratios", "0.8,0.2", "--seed", "1", "-o", tmp / "uri")
    out = {}
    for part in ("train", "test"):
        tagged = kgqa.load_dataset(str(tmp / "uri" / f"{part}.jsonl"))
        formats.get("dataset", "jsonl").write(_raw(tagged), tmp / f"{part}-raw.jsonl")
        out[part, "tagged"], out[part, "raw"] = tmp / "uri" / f"{part}.jsonl", tmp / f"{part}-raw.jsonl"
    return out


# --------------------------------------------------------------------------- the forms


def test_text_mentions_read_back_the_elements_kgqa_annotate_writes():
    assert [m["element"] for m in text_mentions('what is the dbo:birthPlace of dbr:Stanley_Kubrick and '
                                                '<http://x.org/a(b)> "Foo"@en ?')] == \
        ["dbo:birthPlace", "dbr:Stanley_Kubrick", "<http://x.org/a(b)>", '"Foo"@en']
    # tag-end: the elements in query order, ordered by where their mention is in the question
    tag_end = text_mentions("what is the office of richard coke ? <sep> dbr:Richard_Coke richard coke <sep> dbp:office office")
    assert sorted(tag_end, key=lambda m: m["start"]) == [{"element": "dbp:office", "start": 12},
                                                         {"element": "dbr:Richard_Coke", "start": 22}]
    assert text_mentions("who wrote it ?") == []
    # an element the question quotes (LC-QuAD 4440) is the element, not a literal
    assert text_mentions('Which dbo:Country dbp:nationalMotto is "dbr:Truth_prevails"?')[2] == \
        {"element": "dbr:Truth_prevails", "start": 40}


@given(st.lists(st.sampled_from(["raw", "tagged", "tag-end", ""]), max_size=30))
def test_input_summary_names_one_form_or_the_mix_with_its_counts(kinds):
    s = input_summary(kinds)
    present = sorted({k for k in kinds if k})
    if not present:
        assert s == ""
    elif len(present) == 1:
        assert s == present[0]
    else:
        assert s == "mixed(" + ",".join(f"{k}={kinds.count(k)}" for k in present) + ")"


def test_item_input_is_tagged_only_with_the_annotation_and_its_mentions():
    assert item_input(Item("1", {"en": "q"}, metadata={"annotation": "tagged", "mentions": [{"element": "dbr:X"}]})) == "tagged"
    assert item_input(Item("1", {"en": "q"}, metadata={"annotation": "tagged", "mentions": []})) == "raw"
    assert item_input(Item("1", {"en": "q"}, metadata={"annotation": "raw"})) == "raw"
    assert item_input(Item("1", {"en": "q"})) == "raw"


def test_manifest_run_and_signature_say_the_input(uri_split, tmp_path):
    train, test = (kgqa.load_dataset(str(uri_split["train", "tagged"])), kgqa.load_dataset(str(uri_split["test", "tagged"])))
    system = create("retrieval").fit(train)
    system.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "manifest.json").read_text())["input"] == "tagged"
    run = system.predict(test)
    assert {p.metadata["input"] for p in run.predictions} == {"tagged"}
    assert kgqa.evaluate(test, run, measures=["BLEU"]).signature["input"] == "tagged"
    # through the file kgqa baseline predict writes, and on raw questions
    r = _cli("baseline", "predict", tmp_path / "m", uri_split["test", "raw"], "-o", tmp_path / "raw.jsonl")
    said = " ".join(r.output.split())
    assert "input: raw questions (the system was trained on tagged)" in said and "warning" in said, said
    e = kgqa.evaluate(str(uri_split["test", "raw"]), str(tmp_path / "raw.jsonl"), measures=["BLEU"])
    assert e.signature["input"] == "raw"
    # some questions tagged, some raw: the mix with its counts
    mixed = Dataset("mixed", kgqa.load_dataset(str(uri_split["test", "raw"])).items[:3] + test.items[3:10])
    e = kgqa.evaluate(mixed, system.predict(mixed), measures=["BLEU"])
    assert e.signature["input"] == "mixed(raw=3,tagged=7)"
    # a run kgqa did not make says nothing of its input
    plain = Run("x", [replace(p, metadata={}) for p in run.predictions])
    assert "input" not in kgqa.evaluate(test, plain, measures=["BLEU"]).signature.parts


# --------------------------------------------------------------------------- serving


def test_serving_a_model_with_another_input_than_its_training_is_refused(uri_split, tmp_path, capsys):
    create("retrieval").fit(kgqa.load_dataset(str(uri_split["train", "tagged"]))).save(tmp_path / "tagged")
    create("retrieval").fit(kgqa.load_dataset(str(uri_split["train", "raw"]))).save(tmp_path / "raw")
    with pytest.raises(InputError, match="trained on questions tagged with the KB elements of their gold query.*"
                                         "--input tagged"):
        ModelSource(tmp_path / "tagged")
    with pytest.raises(SystemExit) as e:  # the command's exit: a set-up mistake, the reason on stderr
        cli.main(["system", "serve", "--model", str(tmp_path / "tagged"), "--port", "0"])
    assert e.value.code == 2
    assert "no gold query to tag it with" in " ".join(capsys.readouterr().err.split())
    with pytest.raises(InputError, match="trained on raw questions.*--input tagged is another form.*--input raw"):
        ModelSource(tmp_path / "raw", input="tagged")
    assert ModelSource(tmp_path / "tagged", input="tagged").form == "tagged"
    assert ModelSource(tmp_path / "raw").form == "raw"
    # a folder saved before kgqa recorded the input
    manifest = json.loads((tmp_path / "raw" / "manifest.json").read_text())
    del manifest["input"]
    (tmp_path / "raw" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="does not record which input"):
        ModelSource(tmp_path / "raw")


def _served_equals_predicted(model: Path, test: Path, form: str, n: int | None) -> int:
    ds = kgqa.load_dataset(str(test))
    ds = Dataset(ds.name, ds.items[:n] if n else ds.items)
    local = load_system(model).predict(ds)
    args = ["--model", str(model)] + (["--input", form] if form != "raw" else [])
    with adapter(*args) as srv:
        served = ask(ds, srv.url + "text2sparql", "text2sparql", AskSettings(concurrency=1, progress=False)).run
    got = {p.id: " ".join((p.sparql or "").split()) for p in served.predictions}
    want = {p.id: " ".join((p.sparql or "").split()) for p in local.predictions}
    assert got == want
    return len(want)


@pytest.mark.parametrize("form", ["tagged", pytest.param("raw", marks=pytest.mark.slow)])
def test_served_retrieval_answers_as_baseline_predict_on_a_uri_split_subset(uri_split, tmp_path, form):
    model = tmp_path / "m"
    _cli("baseline", "train", "retrieval", uri_split["train", form], "-o", model)
    assert _served_equals_predicted(model, uri_split["test", form], form, 12) == 12


@pytest.mark.slow  # trains a (tiny) seq2seq model and serves it
@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
@pytest.mark.parametrize("form", ["tagged", "raw"])
def test_served_seq2seq_answers_as_baseline_predict_on_the_uri_split(uri_split, tmp_path, form):
    import torch

    torch.set_num_threads(1)
    train = kgqa.load_dataset(str(uri_split["train", form]))
    create("seq2seq", copy=True, seed=0, **TINY).fit(train).save(tmp_path / "m")
    n = len(kgqa.load_dataset(str(uri_split["test", form])).items)
    assert _served_equals_predicted(tmp_path / "m", uri_split["test", form], form, None) == n


@pytest.fixture(scope="module")
def full_uri_split(shared_data, tmp_path_factory):
    """All 4,000 LC-QuAD 1.0 train items, tagged and split by URI as docs/baselines.md does."""
    tmp = tmp_path_factory.mktemp("lcquad-full")
    _cli("annotate", shared_data / "lcquad-1.0" / "train-data.json", "--mode", "tagged", "--unannotated", "drop",
         "-o", tmp / "tagged.jsonl")
    _cli("split", tmp / "tagged.jsonl", "--by", "uri", "--seed", "0", "-o", tmp / "uri")
    return tmp / "uri"


@pytest.mark.slow  # the whole LC-QuAD 1.0 URI split through a served model
def test_served_retrieval_answers_as_baseline_predict_on_the_full_uri_split(full_uri_split, tmp_path):
    _cli("baseline", "train", "retrieval", full_uri_split / "train.jsonl", "-o", tmp_path / "m")
    n = _served_equals_predicted(tmp_path / "m", full_uri_split / "test.jsonl", "tagged", None)
    assert n == len(kgqa.load_dataset(str(full_uri_split / "test.jsonl")).items) > 300
