"""``gc_paused``: the collector is off inside, and its state is restored after."""

from __future__ import annotations

import gc

import pytest

import accordkit as ak
from accordkit._internal.gc import gc_paused


def test_paused_inside_restored_after_even_on_error():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():                       # nested: still off, and not turned on early
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_load_and_score_leave_the_collector_as_they_found_it(sample_dir):
    ds = ak.load(str(sample_dir / "goalshift"))
    ak.score(ds)
    assert gc.isenabled()
