"""Pausing Python's cyclic garbage collector while millions of small objects are built.

Loading a dataset and scoring a run allocate many container objects (terms, answers, sets,
per-question scores) and free almost none of them until the end; each time the allocation
count passes a threshold, the collector walks every live container, so a run of n questions
costs O(n^2 / threshold) in collections (60% of the time of an answers-only evaluation of
100,000 questions). Those objects form no reference cycles, so kgqa pauses the collector for
the duration of a pipeline call and restores its state afterwards (a collection then happens at
the next threshold as usual). Nested pauses are fine.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
import functools


@contextmanager
def paused() -> Iterator[None]:
    """Run the body with the cyclic collector disabled; re-enable it afterwards if it was on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            _age()
            gc.enable()


def _age() -> None:
    """Move every object the collector tracks into its oldest generation, without walking them:
    ``gc.freeze()`` moves them to the permanent generation and ``gc.unfreeze()`` puts that back
    into the oldest one. Left in the youngest generation, the objects made while paused would
    be walked by the first collection after it (and again as they age): a tenth of a second
    per million objects. In the oldest generation they are collected as usual at the next full
    collection. Skipped when the caller froze objects of its own (unfreezing would release them)."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def during(fn):
    """Decorator: call ``fn`` with the collector paused (see :func:`paused`)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with paused():
            return fn(*args, **kwargs)

    return wrapper
