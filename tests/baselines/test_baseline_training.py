"""Training a person can watch (issue 40.3): a line per epoch, a time budget, a checkpoint per
epoch that a killed run resumes from (same weights as an uninterrupted run), the best epoch by
validation loss, and items the annotator cannot tag kept in their raw form and answered."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys

import pytest
from typer.testing import CliRunner

import kgqa
import kgqa.cli as cli
from kgqa.baselines import create, load_system, train
from kgqa.model import Dataset

from systemprocs import env
from test_baselines import TRAIN, UNSEEN

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
TINY = dict(layers=1, d_model=32, heads=2, ff=64, dropout=0.0, batch=16, lr=3e-3, seed=0)
VALID = Dataset("valid", UNSEEN.items[:10])


def _weights(system):
    return {k: v.clone() for k, v in system.net.state_dict().items()}


def _same(a, b) -> bool:
    import torch

    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow  # three seq2seq trainings
def test_a_resumed_run_ends_with_the_weights_of_an_uninterrupted_one(tmp_path, capsys):
    import torch

    torch.set_num_threads(1)
    whole = create("seq2seq", epochs=3, **TINY).fit(TRAIN, VALID)
    part = create("seq2seq", epochs=1, **TINY)
    part.workdir = tmp_path
    part.fit(TRAIN, VALID)  # as if killed after epoch 1: its checkpoint stays
    assert (tmp_path / "checkpoint.pt").exists()
    rest = create("seq2seq", epochs=3, **TINY)
    rest.workdir = tmp_path
    rest.fit(TRAIN, VALID)
    assert "resuming after epoch 1" in capsys.readouterr().err
    assert [r["epoch"] for r in rest.history] == [1, 2, 3]
    assert _same(_weights(rest), _weights(whole))
    assert rest.history == whole.history and rest.best_epoch == whole.best_epoch
    best = min(whole.history, key=lambda r: r["valid_loss"])["epoch"]
    assert whole.best_epoch == best
    rest.save(tmp_path)  # saved: nothing left to resume
    assert not (tmp_path / "checkpoint.pt").exists()
    assert json.loads((tmp_path / "manifest.json").read_text())["training"] == {
        "epochs_run": 3, "best_epoch": best, "stopped": None, "budget_minutes": None}


@pytest.mark.slow  # two seq2seq trainings (README: model training)
@pytest.mark.xdist_group("torch")
def test_a_checkpoint_of_other_options_is_not_resumed(tmp_path, capsys):
    import torch

    torch.set_num_threads(1)
    a = create("seq2seq", epochs=1, **TINY)
    a.workdir = tmp_path
    a.fit(TRAIN)
    b = create("seq2seq", epochs=1, **{**TINY, "d_model": 16})
    b.workdir = tmp_path
    b.fit(TRAIN)
    assert "of other training data or options; starting afresh" in capsys.readouterr().err


# slow: model training (PyTorch's import alone is ~4 CPU-s); tests/baselines/test_training.py keeps the
# budget's rule (and the line per epoch) quick, without a model
@pytest.mark.slow
@pytest.mark.xdist_group("torch")
def test_the_budget_stops_before_an_epoch_it_cannot_hold(tmp_path, capsys):
    import torch

    torch.set_num_threads(1)
    system = train("seq2seq", TRAIN, output=tmp_path / "m", minutes=1e-9, progress=True, epochs=5, **TINY)
    t = json.loads((tmp_path / "m" / "manifest.json").read_text())["training"]
    assert t["epochs_run"] == 1 and t["stopped"].startswith("budget") and t["budget_minutes"] == 1e-9
    assert len(system.history) == 1
    err = capsys.readouterr().err  # no terminal here: one line per epoch
    assert "epoch 1/5: train loss" in err and "left" in err


@pytest.mark.slow  # a training process killed with SIGKILL, then the same command again
def test_kill_9_then_the_same_command_resumes(tmp_path):
    data = tmp_path / "toy.jsonl"
    data.write_text("".join(json.dumps({"id": it.id, "question": it.questions["en"], "sparql": it.sparql,
                                        "metadata": it.metadata}) + "\n" for it in TRAIN.items))
    args = [sys.executable, "-c", "from kgqa.cli import main; main()", "baseline", "train", "seq2seq", str(data),
            "--epochs", "4", "--set", "layers=1", "--set", "d_model=32", "--set", "heads=2", "--set", "ff=64",
            "--set", "dropout=0.0", "--set", "batch=16", "--set", "lr=0.003"]
    e = {**env(), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(args + ["-o", str(tmp_path / "killed")], stderr=subprocess.PIPE, text=True, env=e)
    for line in proc.stderr:  # the line of epoch 2 is written once its checkpoint is
        if "epoch 2/4" in line:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    assert proc.returncode == -signal.SIGKILL and (tmp_path / "killed" / "checkpoint.pt").exists()
    again = subprocess.run(args + ["-o", str(tmp_path / "killed")], capture_output=True, text=True, env=e)
    assert again.returncode == 0 and "resuming after epoch 2" in again.stderr, again.stderr
    subprocess.run(args + ["-o", str(tmp_path / "whole")], capture_output=True, text=True, env=e, check=True)
    a, b = load_system(tmp_path / "killed"), load_system(tmp_path / "whole")
    assert _same(_weights(a), _weights(b))
    assert [p.sparql for p in a.predict(UNSEEN).predictions] == [p.sparql for p in b.predict(UNSEEN).predictions]


@pytest.mark.slow  # annotates, splits and trains a seq2seq model on LC-QuAD 1.0 items
def test_items_the_annotator_cannot_tag_are_answered_in_their_raw_form(shared_data, tmp_path):
    import torch

    torch.set_num_threads(1)
    cli._register()
    records = json.loads((shared_data / "lcquad-1.0" / "train-data.json").read_text())[:200]
    (tmp_path / "lc.json").write_text(json.dumps(records))
    for args in (["annotate", tmp_path / "lc.json", "--mode", "tagged", "-o", tmp_path / "tagged.jsonl"],
                 ["split", tmp_path / "tagged.jsonl", "--by", "uri", "--ratios", "0.8,0.2", "--seed", "1",
                  "-o", tmp_path / "uri"]):
        r = CliRunner().invoke(cli.app, [str(a) for a in args], terminal_width=200)
        assert r.exit_code == 0, r.output
    every = kgqa.load_dataset(str(tmp_path / "tagged.jsonl"))
    assert len(every) == 200  # none dropped
    test = kgqa.load_dataset(str(tmp_path / "uri" / "test.jsonl"))
    raw = [it for it in test.items if it.metadata["annotation"] == "raw"]
    assert raw and all(it.metadata["not_annotated"] for it in raw)
    system = create("seq2seq", epochs=1, **TINY).fit(kgqa.load_dataset(str(tmp_path / "uri" / "train.jsonl")))
    run = system.predict(test)
    assert all(p.sparql for p in run.predictions) and len(run.predictions) == len(test.items)
    e = kgqa.evaluate(test, run, measures=["BLEU"])
    assert e.signature["input"] == f"mixed(raw={len(raw)},tagged={len(test.items) - len(raw)})"
    assert e.signature["n"] == str(len(test.items))
