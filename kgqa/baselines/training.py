"""Training a person can watch: progress, a time budget, checkpoints to resume from, the best epoch.

:class:`Watch` is what a kind's epoch loop reports to:

- **progress**: on a terminal, a rich bar over every batch of every epoch with the epoch, the
  running training loss, the last validation loss and the time left (rich's estimate from the
  batches done); without a terminal (a log, a pipe), one line per epoch on stderr
  (``epoch 3/40: train loss 1.234, valid loss 1.456 (best), 12.3 s``);
- **budget** (``minutes``): before each epoch, training stops when the time spent plus the mean
  epoch time so far would pass the budget (the first epoch always runs); the history says
  ``stopped: budget``;
- **checkpoints** (``folder``): after every epoch the kind's whole training state (weights,
  optimiser, random generators, history, best state) is written to ``folder/checkpoint.pt``
  atomically (a temporary file renamed over it), so a process killed at any moment (kill -9)
  leaves the last finished epoch; the same command run again resumes from it when the
  checkpoint's fingerprint (training data checksum and every option but ``epochs`` and the
  budget) is the same, else starts afresh and says why. The checkpoint is removed once the
  trained system is saved.
"""

from __future__ import annotations

import math
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

CHECKPOINT = "checkpoint.pt"


class Watch:
    def __init__(self, epochs: int, batches: int, *, minutes: float | None = None, folder: Path | None = None,
                 show: bool = True, label: str = "training", say: Any = None, dump: Any = None, read: Any = None):
        """``dump(state, path)`` / ``read(path) -> state`` write and read a checkpoint (the kind's
        own serialiser, e.g. ``torch.save`` / ``torch.load``)."""
        self.epochs, self.batches, self.minutes = epochs, batches, minutes
        self.folder = Path(folder) if folder is not None else None
        self.show, self.label = show, label
        self.say = say or (lambda m: print(m, file=sys.stderr, flush=True))
        self.start = time.monotonic()
        self.spent_before = 0.0  # seconds of the epochs a resumed run did before
        self.epoch_times: list[float] = []
        self._dump, self._read = dump, read
        self._bar: Any = None
        self._task: Any = None

    # ------------------------------------------------------------------ budget

    def elapsed(self) -> float:
        return self.spent_before + time.monotonic() - self.start

    def may_start_epoch(self) -> bool:
        """False when the budget cannot hold one more epoch (the first always runs)."""
        if self.minutes is None or not self.epoch_times:
            return True
        mean = sum(self.epoch_times) / len(self.epoch_times)
        return self.elapsed() + mean <= self.minutes * 60

    # ------------------------------------------------------------------ progress

    @contextmanager
    def bars(self, first_epoch: int = 0) -> Iterator["Watch"]:
        console = Console(stderr=True)
        if not self.show or not console.is_terminal:
            yield self
            return

        with Progress(TextColumn("[bold]{task.description}[/]"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[status]}"), TimeElapsedColumn(), TextColumn("left"),
                      TimeRemainingColumn(), console=console, transient=False) as progress:
            self._bar = progress
            self._task = progress.add_task(self.label, total=self.epochs * self.batches,
                                           completed=first_epoch * self.batches, status="")
            try:
                yield self
            finally:
                self._bar = None

    def batch(self, epoch: int, loss: float, valid: float | None) -> None:
        if self._bar is not None:
            status = f"epoch {epoch + 1}/{self.epochs} loss {loss:.3f}" + (f" valid {valid:.3f}" if valid is not None else "")
            self._bar.update(self._task, advance=1, status=status)

    def epoch_done(self, row: dict[str, Any], seconds: float, best: bool) -> None:
        """Say an epoch is done (its time is already in :attr:`epoch_times`)."""
        if self._bar is None and self.show:
            v = f", valid loss {row['valid_loss']:.4f}{' (best)' if best else ''}" if "valid_loss" in row else ""
            left = ""
            if self.epoch_times:
                mean = sum(self.epoch_times) / len(self.epoch_times)
                rest = (self.epochs - row["epoch"]) * mean
                if self.minutes is not None:
                    rest = min(rest, max(0.0, self.minutes * 60 - self.elapsed()))
                left = f", about {_clock(rest)} left"
            self.say(f"{self.label}: epoch {row['epoch']}/{self.epochs}: train loss {row['train_loss']:.4f}{v}, "
                     f"{seconds:.1f} s{left}")

    # ------------------------------------------------------------------ checkpoints

    def save(self, state: dict[str, Any]) -> None:
        if self.folder is None or self._dump is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / (CHECKPOINT + ".tmp")
        self._dump({**state, "seconds": self.elapsed(), "epoch_times": self.epoch_times}, tmp)
        os.replace(tmp, self.folder / CHECKPOINT)

    def load(self, fingerprint: str) -> dict[str, Any] | None:
        """The checkpoint to resume from, or None (none there, or one of other data / options)."""
        if self.folder is None or self._read is None or not (self.folder / CHECKPOINT).exists():
            return None
        try:
            state = self._read(self.folder / CHECKPOINT)
        except Exception as e:  # noqa: BLE001 - a damaged checkpoint is started afresh, said
            self.say(f"{self.label}: cannot read {self.folder / CHECKPOINT} ({type(e).__name__}: {e}); starting afresh")
            return None
        if state.get("fingerprint") != fingerprint:
            self.say(f"{self.label}: {self.folder / CHECKPOINT} is of other training data or options; starting afresh")
            return None
        self.spent_before = float(state.get("seconds", 0.0))
        self.epoch_times = list(state.get("epoch_times", []))
        self.say(f"{self.label}: resuming after epoch {state['epoch']} from {self.folder / CHECKPOINT}")
        return state

    def clear(self) -> None:
        if self.folder is not None:
            for name in (CHECKPOINT, CHECKPOINT + ".tmp"):
                (self.folder / name).unlink(missing_ok=True)


def _clock(seconds: float) -> str:
    seconds = int(math.ceil(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"
