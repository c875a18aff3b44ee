"""The tracer's edges: 8-/16-byte shared accesses by half-/quarter-warps, negative indices,
CUDA's grid and block limits without materialising the grid, non-CUDA callables and bad
options refused in one line, and what the early-return barrier message says."""

import inspect
import tracemalloc

import numpy as np
import pytest
from gpgpu_tools import trace_cases as cases
from numba import cuda, float64, njit

from gpgpu_lessons.trace import model, trace_kernel
from gpgpu_lessons.trace.record import GridPoints, select_blocks


def line_of(kernel, text):
    lines, first = inspect.getsourcelines(kernel.py_func)
    return first + next(k for k, line in enumerate(lines) if text in line and '"""' not in line)


# ---- half-warp and quarter-warp wavefronts ----------------------------------------------------


def _shared_loads(case):
    grid, block, args = case.make(np.random.default_rng(0))
    found = trace_kernel(case.kernel, grid, block, *args)
    (row,) = [r for r in found.lines if r.space == "shared" and r.op == "load"]
    return row


@pytest.mark.parametrize(
    "kernel, per_request, ideal",
    [
        (cases.verify_f64_half_warp_conflict, 4, 2),  # 2-way in each half-warp: Nsight 4 (H100)
        (cases.verify_f64_halves_same, 2, 2),  # both halves read the same 16 doubles: Nsight 2
        (cases.verify_f64_broadcast, 1, 1),  # one double to every lane: Nsight 1 (H200)
        (cases.verify_f64_stride1, 2, 2),
        (cases.verify_f64_stride16, 32, 2),
        (cases.verify_f32x4_quarters_same, 4, 4),  # a pass per quarter-warp
    ],
)
def test_wide_shared_accesses_are_served_by_half_and_quarter_warps(kernel, per_request, ideal):
    (case,) = [c for c in cases.COUNTS if c.kernel is kernel]
    row = _shared_loads(case)
    assert row.wavefronts == per_request * row.requests
    assert row.ideal_wavefronts == ideal * row.requests


def test_the_scalar_rule_groups_lanes_the_same_way():
    half_conflict = [8 * (i % 8 + 16 * (i // 8 % 2) + 8 * (i // 16)) for i in range(32)]
    assert model.wavefronts(half_conflict, 8) == 4
    assert model.wavefronts([8 * (i % 16) for i in range(32)], 8) == 2
    assert model.wavefronts([16 * (i % 8) for i in range(32)], 16) == 4
    assert model.wavefronts([64] * 32, 8) == 1
    assert model.wavefronts([4 * i for i in range(32)], 4) == 1
    assert model.lane_group(4) == 32 and model.lane_group(8) == 16 and model.lane_group(16) == 8


# ---- negative indices -------------------------------------------------------------------------


@cuda.jit
def difference_backwards(a, out):
    """out[i] = a[i] - a[i - 1]: at i = 0, a[-1]."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] - a[i - 1]


@cuda.jit
def shift_left_2d(a, out):
    """out[y, x] = a[y, x - 2]: negative column for x < 2."""
    x, y = cuda.grid(2)
    if y < out.shape[0] and x < out.shape[1]:
        out[y, x] = a[y, x - 2]


def test_a_negative_index_is_flagged_with_thread_and_line():
    a = np.random.default_rng(0).random(40, dtype=np.float32)
    found = trace_kernel(difference_backwards, 2, 32, a, np.zeros(40, np.float32))
    (hazard,) = [h for h in found.hazards if h.kind == "negative index"]
    assert hazard.lines == (line_of(difference_backwards, "a[i - 1]"),)
    assert hazard.threads == ((0,),) and hazard.block == (0,) and hazard.index == (-1,)
    assert "a[-1] wraps to the last element" in hazard.message
    assert "thread (0,) of block (0,)" in hazard.message


def test_a_negative_index_in_two_dimensions_names_the_element_it_reaches():
    a = np.random.default_rng(1).random((4, 8), dtype=np.float32)
    found = trace_kernel(shift_left_2d, 1, (8, 4), a, np.zeros((4, 8), np.float32))
    hazards = [h for h in found.hazards if h.kind == "negative index"]
    assert hazards and "a[0, -2] wraps to a[0, 6]" in hazards[0].message


# ---- grid and block limits --------------------------------------------------------------------


@cuda.jit
def touch(out):
    """out[0] = 1."""
    if cuda.grid(1) == 0:
        out[0] = 1


def test_cuda_grid_and_block_limits_are_refused():
    out = np.zeros(1, np.int32)
    with pytest.raises(ValueError, match="CUDA allows at most 65,535 on y"):
        trace_kernel(touch, (1, 70000), 1, out)
    with pytest.raises(ValueError, match="CUDA allows at most 65,535 on z"):
        trace_kernel(touch, (1, 1, 65536), 1, out)
    with pytest.raises(ValueError, match="CUDA allows at most 2,147,483,647 on x"):
        trace_kernel(touch, 2**31, 1, out)
    with pytest.raises(ValueError, match="CUDA allows at most 1,024 on x"):
        trace_kernel(touch, 1, 1025, out)
    with pytest.raises(ValueError, match="1056 threads per block; a GPU allows at most 1024"):
        trace_kernel(touch, 1, (32, 33), out)
    with pytest.raises(ValueError, match="CUDA allows at most 64 on z"):
        trace_kernel(touch, 1, (1, 1, 65), out)


def test_a_huge_grid_is_not_materialised():
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="pass blocks=8"):
            trace_kernel(touch, 2**31 - 1, 1, np.zeros(1, np.int32))
        found = trace_kernel(touch, 2**31 - 1, 1, np.zeros(1, np.int32), blocks=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50e6
    assert len(found.blocks) == 2
    points = select_blocks((2**31 - 1, 1, 1), None)
    assert isinstance(points, GridPoints) and len(points) == 2**31 - 1
    assert points[-1] == (2**31 - 2, 0, 0)
    assert list(GridPoints((2, 3, 2))) == list(np.ndindex(2, 3, 2))


# ---- non-CUDA callables and bad options -------------------------------------------------------


@njit
def on_the_cpu(a):
    a[0] = 1


def plain(a):
    a[0] = 1


@pytest.mark.parametrize(
    "kernel, message",
    [
        (
            on_the_cpu,
            "on_the_cpu is a Numba CPU function (@njit / @jit), not a CUDA kernel: "
            "decorate it with @cuda.jit",
        ),
        (plain, "plain is a plain Python function: decorate it with @cuda.jit"),
        (print, "decorate a Python function with @cuda.jit"),
    ],
)
def test_non_cuda_callables_are_refused(kernel, message):
    with pytest.raises(TypeError) as error:
        trace_kernel(kernel, 1, 1, np.zeros(1))
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"blockdim": True}, "blockdim=True is not a launch shape: give an int or a tuple"),
        ({"griddim": 1.5}, "griddim=1.5 is not a launch shape"),
        ({"griddim": (1, 2, 3, 4)}, "griddim=(1, 2, 3, 4) is not a launch shape"),
        ({"blockdim": 0}, "every dimension must be positive"),
        ({"blocks": "x"}, "blocks='x': give how many blocks to trace"),
        ({"blocks": 1.5}, "blocks=1.5: give how many blocks to trace"),
        ({"blocks": True}, "blocks=True: give how many blocks to trace"),
        ({"blocks": ["a"]}, "blocks: 'a' is not a block index"),
        ({"dynamic_shared": -1}, "dynamic_shared=-1: the bytes of dynamic shared memory"),
        ({"dynamic_shared": 1.5}, "dynamic_shared=1.5: give the bytes"),
    ],
)
def test_bad_options_are_refused_in_one_line(options, message):
    launch = {"griddim": 2, "blockdim": 32, **options}
    griddim, blockdim = launch.pop("griddim"), launch.pop("blockdim")
    with pytest.raises((TypeError, ValueError)) as error:
        trace_kernel(touch, griddim, blockdim, np.zeros(1, np.int32), **launch)
    assert message in str(error.value) and "\n" not in str(error.value)


# ---- an early return before syncthreads -------------------------------------------------------

N = 48


@cuda.jit
def early_return(a, out):
    """Threads past the end return before the barrier."""
    s = cuda.shared.array(64, float64)
    t = cuda.threadIdx.x
    if t >= N:
        return
    s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[N - 1 - t]


def test_the_early_return_message_says_what_the_hardware_does():
    a = np.random.default_rng(2).random(N)
    found = trace_kernel(early_return, 1, 64, a, np.zeros(N))
    (hazard,) = [h for h in found.hazards if h.kind == "barrier"]
    assert hazard.lines == (line_of(early_return, "cuda.syncthreads()"),)
    text = hazard.message
    assert "threads that have exited no longer count at a barrier" in text
    assert "synccheck and racecheck report nothing" in text
    assert "undefined behaviour" in text and "CUDA programming guide" in text
    assert "hangs" not in text
