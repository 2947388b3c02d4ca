"""kgqa.model.gcpause: the collector is paused in the body, restored afterwards, and what the
body made ends in the oldest generation (not walked again by young collections)."""

import gc
import os
import subprocess
import sys

from conftest import REPO
from kgqa.model.gcpause import during, paused


class _Box:
    pass


def test_paused_restores_and_ages_objects():
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        boxes = [_Box() for _ in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    # tracked, none frozen (the count is 0) and in neither young generation: in the oldest one
    # (listing the oldest generation itself walks every object of the test process: a second)
    young = {id(o) for g in (0, 1) for o in gc.get_objects(generation=g)}
    assert all(gc.is_tracked(b) and id(b) not in young for b in boxes)


def test_cycles_made_while_paused_are_still_collected():
    """In a fresh interpreter: the full collection this needs walks every object of its process,
    seconds in a test process that has imported the whole suite's libraries."""
    code = """
import gc, weakref
from kgqa.model.gcpause import paused

class Box:
    pass

with paused():
    a = Box()
    a.self = a
    ref = weakref.ref(a)
    del a
alive = ref() is not None  # a cycle: only the collector frees it
gc.collect()
print(alive, ref() is None)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True"]


def test_a_callers_frozen_objects_stay_frozen(monkeypatch):
    unfrozen = []
    real_unfreeze = gc.unfreeze
    monkeypatch.setattr(gc, "unfreeze", lambda: unfrozen.append(1) or real_unfreeze())
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with paused():
            _ = [_Box() for _ in range(10)]
        # unfreezing would release them all (the count falls to 0); frozen objects that die
        # meanwhile (other threads of the test process) lower it by a few
        assert not unfrozen and gc.get_freeze_count() > frozen // 2 > 0
    finally:
        real_unfreeze()


def test_nested_pauses_and_disabled_collector():
    gc.disable()
    try:
        with paused():
            with paused():
                pass
        assert not gc.isenabled()
    finally:
        gc.enable()

    @during
    def f():
        return gc.isenabled()

    assert f() is False and gc.isenabled()
