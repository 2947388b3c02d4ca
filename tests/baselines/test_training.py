"""The training watch (kgqa.baselines.training) without a model: the budget's rule and the line
per epoch. test_baseline_training.py checks the same through seq2seq training (slow: PyTorch)."""

from __future__ import annotations

import time

from kgqa.baselines.training import Watch


def test_the_budget_stops_before_an_epoch_it_cannot_hold():
    said: list[str] = []
    w = Watch(5, 3, minutes=1.0, show=True, say=said.append)
    assert w.may_start_epoch()  # the first epoch always runs, whatever the budget
    w.start = time.monotonic() - 50  # 50 s spent
    w.epoch_times.append(5.0)  # 50 s + a mean epoch of 5 s fits in the minute
    assert w.may_start_epoch()
    w.epoch_done({"epoch": 1, "train_loss": 1.5}, 5.0, False)
    w.epoch_times.append(17.0)  # mean 11 s: 61 s would pass the minute
    assert not w.may_start_epoch()
    # no terminal: one line per epoch, with the time left cut to what the budget leaves
    assert said[0].startswith("training: epoch 1/5: train loss 1.5000, 5.0 s, about ")
    assert said[0].endswith(" s left") and int(said[0].split("about ")[1].split()[0]) <= 10


def test_a_tiny_budget_runs_one_epoch_and_no_budget_runs_all():
    tiny = Watch(5, 1, minutes=1e-9, show=False)
    assert tiny.may_start_epoch()
    tiny.epoch_times.append(0.001)
    assert not tiny.may_start_epoch()
    free = Watch(5, 1, minutes=None, show=False)
    free.start = time.monotonic() - 1e6
    free.epoch_times += [1e3] * 4
    assert free.may_start_epoch()
