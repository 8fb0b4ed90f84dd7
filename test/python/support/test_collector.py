"""`fewer_collections`: its thresholds inside, the caller's restored after."""

import gc

import pytest

from hyperoffload.support.collector import THRESHOLDS, fewer_collections


def test_thresholds_inside_and_the_callers_restored_after():
    before = gc.get_threshold()
    try:
        gc.set_threshold(123, 4, 5)
        with fewer_collections():
            assert gc.get_threshold() == THRESHOLDS
            with fewer_collections():
                assert gc.get_threshold() == THRESHOLDS
            assert gc.get_threshold() == THRESHOLDS
        assert gc.get_threshold() == (123, 4, 5)
    finally:
        gc.set_threshold(*before)


def test_restored_when_the_work_raises():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("planning failed")
    assert gc.get_threshold() == before
