"""Reference systems (issue 28): kgqa.baselines on CPU with tiny configurations."""

from __future__ import annotations

import ast
import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kgqa
import kgqa.cli as cli
from kgqa.model import Dataset, InputError, Item
from kgqa.baselines import create, load_system
from kgqa.baselines.tokens import detokenize, query_tokens

from conftest import REPO, run_cli
from systemprocs import adapter, env

DEMO_KG = REPO / "kgqa" / "demo" / "data" / "kg.ttl"

# found, not imported: importing torch costs each test process over a second at collection
HAVE_TORCH = importlib.util.find_spec("torch") is not None  # without kgqa[baselines]: False
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed (pip install 'kgqa[baselines]'): "
                                                        "the seq2seq baseline's tests skip")
TINY = dict(layers=1, d_model=32, heads=2, ff=64, dropout=0.0, epochs=3, batch=16, lr=3e-3)
PREDS = ["birthPlace", "spouse", "author", "director"]


def toy(n: int, entities: list[str], seed: int) -> Dataset:
    """Tagged questions 'what is the dbo:P of dbr:E ?' -> one triple; entity tokens vary."""
    rnd = random.Random(seed)
    items = []
    for i in range(n):
        e, p = rnd.choice(entities), rnd.choice(PREDS)
        items.append(Item(str(i), {"en": f"what is the dbo:{p} of dbr:{e} ?"},
                          f"SELECT ?x WHERE {{ dbr:{e} dbo:{p} ?x }}",
                          metadata={"mentions": [{"element": f"dbo:{p}"}, {"element": f"dbr:{e}"}]}))
    return Dataset("toy", items)


TRAIN = toy(200, [f"Train_{k}" for k in range(40)], 1)
UNSEEN = toy(30, [f"Unseen_{k}" for k in range(30)], 2)


def exact(run, ds: Dataset) -> int:
    return sum(1 for p, it in zip(run.predictions, ds.items)
               if p.sparql and query_tokens(p.sparql) == query_tokens(it.sparql))


# --------------------------------------------------------------------------- seq2seq


@pytest.mark.slow  # trains a seq2seq model
@needs_torch
def test_copy_mechanism_copies_unseen_kb_tokens_that_the_plain_model_cannot():
    import torch

    torch.set_num_threads(1)
    with_copy = create("seq2seq", copy=True, seed=0, **TINY).fit(TRAIN)
    plain = create("seq2seq", copy=False, seed=0, **TINY).fit(TRAIN)
    gate_off = create("seq2seq", copy=True, copy_gate=False, seed=0, **TINY).fit(TRAIN)
    assert exact(with_copy.predict(UNSEEN), UNSEEN) >= 27  # of 30: every entity is new to it
    assert exact(plain.predict(UNSEEN), UNSEEN) == 0  # it can only write entities it has seen
    # the same model with its copy gate fixed at 0 cannot copy either: the test above rests on the gate
    assert exact(gate_off.predict(UNSEEN), UNSEEN) == 0


def tag_end(ds: Dataset) -> Dataset:
    """The toy questions in tag-end form: 'what is the P of E ? <sep> dbo:P P <sep> dbr:E E'."""
    items = []
    for it in ds.items:
        p, e = (m["element"] for m in it.metadata["mentions"])
        raw = f"what is the {p[4:]} of {e[4:]} ?"
        q = f"{raw} <sep> {p} {p[4:]} <sep> {e} {e[4:]}"
        mentions = [{"element": p, "text": p[4:]}, {"element": e, "text": e[4:]}]
        items.append(Item(it.id, {"en": q}, it.sparql, metadata={"annotation": "tag-end", "mentions": mentions}))
    return Dataset("toy-tag-end", items)


@pytest.mark.slow  # trains a seq2seq model (README: model training)
@needs_torch
def test_tag_end_separators_are_words_not_kb_elements_to_copy():
    """Tag-end's <sep> is an ordinary source word of the copy model (only the KB elements are
    masked for copying): before, it was masked as a KB element and took a share of the copy
    distribution."""
    import torch

    torch.set_num_threads(1)
    model = create("seq2seq", copy=True, seed=0, **{**TINY, "epochs": 1}).fit(tag_end(Dataset("t", TRAIN.items[:20])))
    assert "<sep>" in model.src_vocab
    assert not [t for t in model.src_vocab if t.startswith(("dbr:", "dbo:"))]


@pytest.mark.slow  # trains a seq2seq model
@needs_torch
def test_copy_mechanism_copies_unseen_kb_tokens_from_tag_end_questions():
    import torch

    torch.set_num_threads(1)
    train, unseen = tag_end(TRAIN), tag_end(UNSEEN)
    with_copy = create("seq2seq", copy=True, seed=0, **{**TINY, "epochs": 6}).fit(train)
    run = with_copy.predict(unseen)
    assert exact(run, unseen) >= 27  # of 30: every entity is new to it
    assert not [p.sparql for p in run.predictions if p.sparql and "<sep>" in p.sparql]


@pytest.mark.slow  # trains a seq2seq model
@needs_torch
def test_seq2seq_save_load_round_trip_and_seed_determinism(tmp_path):
    import torch

    torch.set_num_threads(1)
    a = create("seq2seq", copy=True, seed=3, **{**TINY, "epochs": 1}).fit(TRAIN)
    b = create("seq2seq", copy=True, seed=3, **{**TINY, "epochs": 1}).fit(TRAIN)
    c = create("seq2seq", copy=True, seed=4, **{**TINY, "epochs": 1}).fit(TRAIN)
    sa, sb, sc = a.net.state_dict(), b.net.state_dict(), c.net.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)  # same seed: the same weights, bit for bit
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)
    a.save(tmp_path / "m")
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["kind"] == "seq2seq" and manifest["seed"] == 3 and manifest["config"]["copy"] is True
    assert manifest["train"]["items"] == 200 and manifest["train"]["checksum"].startswith("sha256:")
    assert manifest["kgqa_version"] == kgqa.__version__
    again = load_system(tmp_path / "m")
    first = [p.sparql for p in a.predict(UNSEEN).predictions]
    assert [p.sparql for p in again.predict(UNSEEN).predictions] == first


# three seq2seq trainings (README: model training); quick: test_seq2seq_refuses_an_unknown_token_kind and
# test_baseline_training.py::test_the_budget_stops_before_an_epoch_it_cannot_hold (a tiny training)
@pytest.mark.slow
@needs_torch
@pytest.mark.xdist_group("torch")
@pytest.mark.parametrize("copy", [True, False])
def test_seq2seq_bpe_tokens_round_trip_and_seed_determinism(tmp_path, copy):
    import torch

    torch.set_num_threads(1)
    cfg = {**TINY, "epochs": 1, "tokens": "bpe", "bpe_merges": 40, "copy": copy}
    a = create("seq2seq", seed=5, **cfg).fit(TRAIN)
    b = create("seq2seq", seed=5, **cfg).fit(TRAIN)
    c = create("seq2seq", seed=6, **cfg).fit(TRAIN)
    assert a.bpe.merges == b.bpe.merges and 0 < len(a.bpe.merges) <= 40  # the toy has few distinct words
    kb_pieces = [t for t in a.src_vocab + a.tgt_vocab if t.startswith(("dbr:", "dbo:"))]
    if copy:  # the KB tokens the copy mechanism copies stay whole, masked: in no vocabulary
        assert kb_pieces == []
    else:  # split like any word: a rare 'dbr:Train_12' is pieces, the first ending in the continuation mark
        entities = [t for t in kb_pieces if t.startswith("dbr:")]
        assert entities and all(t.endswith("\x1f") for t in entities)
    sa, sb, sc = a.net.state_dict(), b.net.state_dict(), c.net.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)  # same seed: the same weights, bit for bit
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)
    first = [p.sparql for p in a.predict(UNSEEN).predictions]
    assert [p.sparql for p in b.predict(UNSEEN).predictions] == first
    a.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "manifest.json").read_text())["config"]["tokens"] == "bpe"
    assert json.loads((tmp_path / "m" / "state.json").read_text())["bpe"] == [list(m) for m in a.bpe.merges]
    again = load_system(tmp_path / "m")
    assert [p.sparql for p in again.predict(UNSEEN).predictions] == first
    # pieces are joined back into words: every predicted query is made of whole tokens
    assert all("\x1f" not in (q or "") for q in first)


# slow: the seq2seq module imports PyTorch (~4 CPU-s); no quick test imports it (the README's
# command leaves model training to the slow run)
@pytest.mark.slow
@pytest.mark.xdist_group("torch")
def test_seq2seq_refuses_an_unknown_token_kind():
    pytest.importorskip("torch")
    with pytest.raises(InputError, match="expected word or bpe, got 'chars'"):
        create("seq2seq", tokens="chars")


def test_nothing_but_the_seq2seq_module_imports_torch():
    for path in sorted((REPO / "kgqa").rglob("*.py")):
        if path == REPO / "kgqa" / "baselines" / "seq2seq.py":
            continue
        text = path.read_text(encoding="utf-8")
        if "torch" not in text:  # cannot import it: no need to parse it (parsing all of kgqa costs ~3 s)
            continue
        for node in ast.walk(ast.parse(text)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] == "torch" for n in names), path
    code = ("import sys, kgqa, kgqa.baselines, kgqa.baselines.retrieval, kgqa.baselines.simple, kgqa.service.model_source\n"
            "from kgqa.cli import command; command()\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env(), check=True)
    assert out.stdout.strip() == "False"


def test_train_seq2seq_without_torch_says_how_to_install(tmp_path, capsys, monkeypatch):
    data = tmp_path / "toy.jsonl"
    data.write_text("".join(json.dumps({"id": it.id, "question": it.questions["en"], "sparql": it.sparql}) + "\n"
                            for it in TRAIN.items[:5]))
    monkeypatch.setitem(sys.modules, "torch", None)  # as if PyTorch were not installed: importing it fails
    monkeypatch.delitem(sys.modules, "kgqa.baselines.seq2seq", raising=False)  # imported again, without torch
    code, _, err = run_cli(capsys, "baseline", "train", "seq2seq", str(data), "-o", str(tmp_path / "m"))
    assert code == 2
    said = " ".join(err.split())
    assert "needs PyTorch, kgqa's optional extra 'baselines': pip install torch" in said, said
    assert not (tmp_path / "m").exists()


# --------------------------------------------------------------------------- retrieval


def test_retrieval_regrounds_the_nearest_template_with_the_test_annotation(tmp_path):
    system = create("retrieval").fit(TRAIN)
    run = system.predict(UNSEEN)
    assert exact(run, UNSEEN) == 30  # every slot of kind P and E refilled from the test question
    system.save(tmp_path / "r")
    assert [p.sparql for p in load_system(tmp_path / "r").predict(UNSEEN).predictions] == \
        [p.sparql for p in run.predictions]
    assert run.predictions[0].sparql == detokenize(query_tokens(UNSEEN.items[0].sparql))


def test_predict_refuses_a_dataset_of_another_kg(shared_data):
    system = create("retrieval").fit(TRAIN)
    ck25 = kgqa.load_dataset("ck25")
    with pytest.raises(InputError) as e:
        system.predict(ck25)
    msg = str(e.value)
    assert "another KG" in msg and "http://dbpedia.org/resource/" in msg and "ld.company.org" in msg


def _cli(*args):
    cli._register()
    r = CliRunner().invoke(cli.app, [str(a) for a in args], terminal_width=200)
    assert r.exit_code == 0, r.output
    return r


@pytest.fixture(scope="module")
def lcquad_uri_split(shared_data, tmp_path_factory):
    """600 LC-QuAD 1.0 items, tagged by kgqa annotate, split with unseen URIs in test."""
    tmp = tmp_path_factory.mktemp("lcquad")
    records = json.loads((shared_data / "lcquad-1.0" / "train-data.json").read_text())[:600]
    (tmp / "lcquad.json").write_text(json.dumps(records))
    _cli("annotate", tmp / "lcquad.json", "--mode", "tagged", "-o", tmp / "tagged.jsonl")
    _cli("split", tmp / "tagged.jsonl", "--by", "uri", "--ratios", "0.8,0.2", "--seed", "1", "-o", tmp / "uri")
    return tmp / "uri"


@pytest.mark.slow  # real LC-QuAD data; the generated-CK25 end-to-end test runs in the README's command
def test_retrieval_end_to_end_on_lcquad_unknown_uri_split(lcquad_uri_split, tmp_path):
    split = lcquad_uri_split
    train, test = sorted(split.glob("train*"))[0], sorted(split.glob("test*"))[0]
    _cli("baseline", "train", "retrieval", train, "-o", tmp_path / "model")
    _cli("baseline", "predict", tmp_path / "model", test, "-o", tmp_path / "run.jsonl")
    e = kgqa.evaluate(str(test), str(tmp_path / "run.jsonl"), measures=["QueryEM(norm=whitespace)", "BLEU", "F1_Tri"])
    agg = e.aggregate
    # every test item has a URI no training item has: only re-grounding from the annotation gets it right
    assert agg["QueryEM(norm=whitespace)"] > 0.5 and agg["F1_Tri"] > 0.7, agg
    rows = [json.loads(x) for x in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert len(rows) == len(kgqa.load_dataset(str(test)).items)


@pytest.fixture(scope="module")
def ck25_generated(shared_data, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ck25gen")
    kg = shared_data / "ck25" / "graphs" / "prod-inst.ttl"
    _cli("generate", "--kg", kg, "-o", tmp / "gen.jsonl", "-n", "80", "--edges", "1", "--functions", "none", "--seed", "2")
    ds = kgqa.load_dataset(str(tmp / "gen.jsonl"))
    return ds, kg, tmp


def _end_to_end(ds: Dataset, kg: Path, kind: str) -> None:
    """Train ``kind`` on two thirds of ``ds`` (generated from ``kg``), predict the rest, execute."""
    # every third item to test: the generator writes a template's groundings one after another
    train = Dataset("train", [it for i, it in enumerate(ds.items) if i % 3])
    test = Dataset("test", [it for i, it in enumerate(ds.items) if not i % 3])
    system = create(kind).fit(train, kg=kg)
    run = system.predict(test, kg=str(kg))
    e = kgqa.evaluate(test, run, kg=str(kg), measures=["F1_Ans", "Exec"])
    # queries run on the KG, with answers; the simple system is built for these one-edge questions
    assert e.aggregate["Exec"] > 0.8, (kind, e.aggregate)
    assert e.aggregate["F1_Ans"] > (0.4 if kind == "simple" else 0.1), (kind, e.aggregate)
    assert sum(p.answer is not None for p in run.predictions) >= 0.8 * len(test.items)


def test_simple_end_to_end_on_a_benchmark_generated_from_the_demo_kg(tmp_path):
    # the quick test of the simple system (1.5 CPU-s; on CK25 below, 14, in the slow run)
    _cli("generate", "--kg", DEMO_KG, "-o", tmp_path / "gen.jsonl", "-n", "80", "--edges", "1", "--functions", "none",
         "--seed", "2")
    ds = kgqa.load_dataset(str(tmp_path / "gen.jsonl"))
    assert len(ds.items) == 80
    _end_to_end(ds, DEMO_KG, "simple")


# simple: test_simple_end_to_end_on_a_benchmark_generated_from_the_demo_kg keeps it quick; retrieval:
# test_retrieval_regrounds_the_nearest_template_with_the_test_annotation does
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["simple", "retrieval"])
def test_retrieval_and_simple_end_to_end_on_a_generated_ck25_benchmark(ck25_generated, kind):
    ds, kg, _ = ck25_generated
    _end_to_end(ds, kg, kind)


@pytest.mark.slow  # model servers as processes, asked through both contracts
def test_served_model_answers_through_both_contracts(ck25_generated, tmp_path):
    from kgqa.execute.live import AskSettings, ask

    ds, kg, tmp = ck25_generated
    _cli("baseline", "train", "simple", tmp / "gen.jsonl", "--kg", kg, "-o", tmp_path / "model")
    sample = Dataset("sample", ds.items[:5])
    local = load_system(tmp_path / "model").predict(sample, kg=str(kg))
    with adapter("--model", str(tmp_path / "model"), "--kg", str(kg)) as srv:
        asked = {protocol: ask(sample, srv.url + protocol, protocol, AskSettings(concurrency=1, progress=False)).run
                 for protocol in ("gerbil", "text2sparql")}
    for protocol, run in asked.items():
        assert [" ".join((p.sparql or "").split()) for p in run.predictions] == \
            [" ".join(p.sparql.split()) for p in local.predictions], protocol
    # GERBIL answers: the adapter executed the served queries on --kg
    assert [p.answer for p in asked["gerbil"].predictions] == [p.answer for p in local.predictions]
    assert sum(p.answer is not None for p in local.predictions) >= 3
