"""The grader refuses a shared or local array shape a GPU cannot compile (an expression or a
variable inside the call), in the simulator too, with the line and the fix; a module constant,
however it is computed, is fine."""

import inspect

from exercise_fixtures import *  # noqa: F403 (the fixtures)
from numba import cuda, float32
from wrong_answers import smooth_halo_expression

from gpgpu_lessons import exercises
from gpgpu_lessons.exercises import shapes

B = 64
WIDE = B + 2  # computed at module level: a constant for Numba


def _line(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.py_func)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_an_expression_shape_is_refused_with_its_line_and_the_fix(progress_file):
    answer = exercises.grade("02.2", smooth_halo_expression, seed=1)
    line = _line(smooth_halo_expression, "cuda.shared.array(B + 2")
    assert not answer.passed and answer.kinds == {"shape"}
    assert answer.findings == [
        f"line {line}: `cuda.shared.array(B + 2, float32)`: a shared array's size must be a "
        "constant Numba knows when it compiles: an integer or a module-level name. Write "
        "`SIZE = B + 2` at the top of the cell and `cuda.shared.array(SIZE, float32)` (the "
        "simulator accepts the expression, a GPU does not)."
    ]
    assert not progress_file.exists()


@cuda.jit
def wide_constant(a):
    tile = cuda.shared.array((WIDE, B), float32)
    tile[0, 0] = a[0]


@cuda.jit(device=True)
def scratch_sum(a):
    scratch = cuda.local.array(2 * B, float32)  # wrong on purpose: expression shape
    scratch[0] = a[0]
    return scratch[0]


@cuda.jit
def calls_scratch_sum(a):
    a[0] = scratch_sum(a)


@cuda.jit
def sized_by_a_parameter(a, n):
    tile = cuda.shared.array(n, float32)
    tile[0] = a[0]


@cuda.jit
def sized_by_the_block(a):
    tile = cuda.shared.array((cuda.blockDim.x, B), float32)  # wrong on purpose: expression shape
    tile[0, 0] = a[0]


def test_a_module_constant_made_by_an_expression_is_fine():
    assert shapes.refused(wide_constant) is None


def test_a_device_function_the_kernel_calls_is_read_too():
    found = shapes.refused(calls_scratch_sum)
    assert found.startswith(f"line {_line(scratch_sum, 'local.array')}: `cuda.local.array(2 * B")
    assert "a local array's size" in found and "`cuda.local.array(SIZE, float32)`" in found


def test_a_variable_or_the_block_size_is_refused_with_a_number_as_the_fix():
    found = shapes.refused(sized_by_a_parameter)
    assert "`n` is a variable of the kernel" in found and "`SIZE = 64`" in found
    found = shapes.refused(sized_by_the_block)
    assert "`cuda.blockDim.x` is known only when the kernel runs" in found
    assert "`cuda.shared.array((SIZE, B), float32)`" in found
