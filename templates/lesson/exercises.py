"""Exercises of lesson {{N}} ({{TITLE}})."""

from __future__ import annotations

from . import checks, data
from .registry import Case, Exercise

TITLE = "{{TITLE}}"

BLOCK = 128


def _scale_cases(rng, gpu):
    cases = []
    for n in [1, 300] + ([1_000_003] if gpu else []):  # the last block is never full
        x = data.signed(rng, n)
        cases.append(
            Case(
                f"n = {n}",
                {"x": x, "out": data.empty(n)},
                {"out": 2 * x},
                data.blocks(n, BLOCK),
                BLOCK,
                bytes_moved=8 * n,
            )
        )
    return cases


SCALE = Exercise(
    id="{{N}}.1",
    name="double",
    title="double every element, one per thread",
    statement="""\
Complete `double`: `out = 2 * x` for a float32 vector of `n` elements, one element per thread.

The grader launches `double[blocks, 128](x, out)` with `blocks = ceil(n / 128)`, on random data,
for `n = 1` and `n = 300`: the last block has threads past the end of the arrays.""",
    skeleton='''\
from numba import cuda


@cuda.jit
def double(x, out):
    """out[i] = 2 * x[i], one element per thread."""
    i = cuda.grid(1)
    # TODO: compute out[i], only for the threads that have an element
''',
    params=("x", "out"),
    hints=(
        "`i = cuda.grid(1)` is this thread's element. Threads with `i >= n` must do nothing.",
        "Compare `i` with the size of the output before touching either array; the last block "
        "has threads past the end.",
    ),
    cases=_scale_cases,
    trace_case=1,
    checks=(checks.Coalesced("load"), checks.Coalesced("store")),
    next="Next: the lesson's other exercises, once you have written them.",
)

EXERCISES = [SCALE]
