"""trace_launch: the tracer on a wrapper's prepared call, one of its kernels."""

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons import launch
from gpgpu_lessons.trace import trace_launch

N = 37  # not a multiple of the block


@cuda.jit
def copy_stride_2(a, out):
    """out[i] = a[i], neighbouring threads 2 elements apart."""
    i = cuda.grid(1)
    if 2 * i < a.size:
        out[2 * i] = a[2 * i]


def test_it_traces_the_step_it_is_asked_for():
    a = np.random.default_rng(0).random(N, dtype=np.float32) + 1
    out = np.zeros_like(a)
    prepared = launch.Launch(
        (launch.Step(copy_stride_2, 1, 32, (a, out)),), out=None, to_host=False
    )
    trace = trace_launch(prepared)
    (row,) = [r for r in trace.lines if r.space == "global" and r.op == "load"]
    # 19 lanes (2i < 37) 8 bytes apart span 148 bytes: 5 sectors; their 76 bytes packed: 3
    assert (row.lanes, row.sectors, row.ideal_sectors) == (19, 5, 3)
    np.testing.assert_array_equal(out[::2], a[::2])


def test_a_step_the_launch_lacks_is_refused():
    a = np.ones(4, dtype=np.float32) + 1
    prepared = launch.Launch((launch.Step(copy_stride_2, 1, 32, (a, a)),), out=None, to_host=False)
    with pytest.raises(ValueError, match="1 kernel"):
        trace_launch(prepared, step=1)
