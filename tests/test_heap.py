"""learners.heap: inside kept_heap() a freed large block is reused without new page faults; outside, glibc's
defaults (a fresh mmap, faulted page by page) are back."""

import resource

import numpy as np
import pytest

from structrank.learners import heap

pytestmark = pytest.mark.skipif(heap._FUNCTIONS is None, reason="kept_heap works on glibc's allocator only "
                                                                 "(this platform's libc has no mallopt)")

BLOCK = 256 * 2 ** 20  # far above glibc's mmap threshold, as a fine-tuning step's activations are


def faults_of_second_allocation() -> int:
    """Minor page faults of writing a large block again after writing and freeing one of the same size."""
    first = np.ones(BLOCK // 8)
    del first
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    second = np.ones(BLOCK // 8)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    del second
    return faults


def test_a_freed_block_is_reused_inside_and_returned_outside():
    outside = faults_of_second_allocation()
    with heap.kept_heap():
        faults_of_second_allocation()  # the heap grows to the block's size once
        inside = faults_of_second_allocation()
    after = faults_of_second_allocation()
    assert outside >= 64, "glibc's default should map the block anew and fault it in"
    assert inside * 4 < outside, (inside, outside)
    assert after * 2 > outside, "glibc's defaults are back after the block"


def test_nested_blocks_restore_the_defaults_once_the_outer_one_ends():
    assert not heap.keeping()
    with heap.kept_heap():
        with heap.kept_heap():
            assert heap.keeping()
        assert heap.keeping()
    assert not heap.keeping()


def test_an_error_inside_still_restores_the_defaults():
    with pytest.raises(RuntimeError), heap.kept_heap():
        raise RuntimeError("a fit fails")
    assert not heap.keeping()
    assert faults_of_second_allocation() >= 64
