"""On a GPU, every launch of a student's kernel is rehearsed on the simulator first.

An index out of bounds does not raise on a GPU: it reads garbage, overwrites another array, or,
past the memory the process owns, loses the CUDA context, after which every GPU call of the
notebook fails until its kernel restarts. So before the grader launches a kernel on a GPU, it
runs the same launch (grid, block, arrays) through the kernel tracer on the simulator: every
block of the small cases, and for the large ones (a million elements, on a GPU only, and the
timing shape) the first and last block of the grid, and its other corners and a few blocks
between while a second allows. A kernel that the rehearsal sees go out of bounds,
reach a barrier with part of its block (a GPU may hang there), get stuck in a warp call or raise
is reported as in the simulator and never launched; one the tracer cannot run is not launched
either. What a rehearsal of some blocks could miss, the guard zones around every array on the
GPU catch (`running.Guarded`).
"""

from __future__ import annotations

import itertools
import linecache
import time
from dataclasses import dataclass, field

import numpy as np

from . import checks, running, tracing

ALL_BLOCKS_UP_TO = 16_384  # threads: a launch this small is rehearsed whole (every case on CPU)
BETWEEN = 4  # blocks besides the corners in the rehearsal of a larger launch
BUDGET_S = 1.0  # after the first and last block, more blocks only within this time


@dataclass
class Rehearsal:
    """What the simulator saw: the tracer's facts, and the problems that forbid a GPU launch."""

    observation: tracing.Observation | None = None
    complete: bool = True  # every block ran (store counts are then exact)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (kind, sentence)

    @property
    def safe(self) -> bool:
        return not self.problems


def _three(shape) -> tuple[int, int, int]:
    shape = tuple(int(v) for v in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    return (shape + (1, 1, 1))[:3]


def _point(point) -> tuple[int, int, int]:
    """threadIdx or blockIdx as (x, y, z), as the simulator's messages show them."""
    point = tuple(int(v) for v in (point if isinstance(point, (tuple, list)) else (point,)))
    return (point + (0, 0, 0))[:3]


def sample(grid) -> tuple[list, list] | None:
    """The blocks a rehearsal of this grid runs: None (all of them) for a small grid; else
    (the first and the last block, which a rehearsal always runs; the other corners and BETWEEN
    blocks spread over the grid, which it runs while its time allows)."""
    grid = _three(grid)
    total = int(np.prod(grid))
    if total <= BETWEEN + 2 ** sum(g > 1 for g in grid):
        return None
    first, last = (0, 0, 0), tuple(g - 1 for g in grid)
    corners = set(itertools.product(*[sorted({0, g - 1}) for g in grid])) - {first, last}
    spread = np.linspace(0, total - 1, BETWEEN + 2).round().astype(int)[1:-1]
    between = {tuple(int(v) for v in p)[::-1] for p in zip(*np.unravel_index(spread, grid[::-1]))}
    return [last, first], sorted(corners) + sorted(between - corners - {first, last})


def _index_sentence(hazard: tracing.Hazard) -> str:
    """NumPy's words for the first index outside the shape, or the tracer's detail."""
    index, shape = tuple(hazard.index), tuple(hazard.shape)
    if len(index) == len(shape):
        for axis, (i, size) in enumerate(zip(index, shape)):
            if isinstance(i, (int, np.integer)) and not -size <= i < size:
                return (
                    f"index {i} is out of bounds for axis {axis} with size {size}, in "
                    f"`{hazard.array}`"
                )
    return hazard.detail


def out_of_bounds_sentence(hazard: tracing.Hazard, kernel) -> str:
    """The simulator's sentence for an index out of bounds, from the rehearsal's hazard."""
    line = hazard.lines[0] if hazard.lines else None
    filename = hazard.file or kernel.py_func.__code__.co_filename
    text = linecache.getline(filename, line).strip() if line else ""
    thread = _point(hazard.threads[0] if hazard.threads else ())
    return (
        f"Out of bounds: thread {thread} of block {_point(hazard.block)} ran "
        f"{running.where(line, text)} with an index outside the array "
        f"({_index_sentence(hazard)}). On a GPU nothing stops it: it reads garbage or "
        "overwrites other data, or takes the GPU down for the whole notebook, so the grader "
        "found it on the simulator and did not launch it. Check the index against the "
        "array's shape before using it."
    )


def rehearse(exercise, kernel, case) -> Rehearsal:
    """Run the case's launch on the simulator (the tracer) and say whether a GPU may run it."""
    threads = int(np.prod(_three(case.grid))) * int(np.prod(_three(case.block)))
    chosen = None if threads <= ALL_BLOCKS_UP_TO else sample(case.grid)
    result = Rehearsal(complete=chosen is None)
    started = time.perf_counter()
    for step, blocks in enumerate([None] if chosen is None else chosen):
        if step and (not blocks or time.perf_counter() - started > BUDGET_S):
            break
        observation = _run(exercise, kernel, case, blocks, result)
        if observation is None or not result.safe:
            return result
        if result.observation is None:
            result.observation = observation
        else:
            result.observation.hazards.extend(observation.hazards)
    return result


def _run(exercise, kernel, case, blocks, result: Rehearsal) -> tracing.Observation | None:
    """Trace the launch (those blocks); add what forbids a GPU launch to result.problems."""
    args = {name: running.start_values(case, name) for name in exercise.params}
    outputs = {
        name: args[name]
        for name in case.expected
        if blocks is None
        and isinstance(args.get(name), np.ndarray)
        and running.writes_once(case, name)
    }
    try:
        with running.quiet():
            observation = tracing.observe(
                kernel,
                case.grid,
                case.block,
                [args[name] for name in exercise.params],
                blocks=blocks,
                count_stores=outputs,
            )
    except tracing.Unavailable as error:
        result.problems.append(
            (
                "not rehearsed",
                "The grader runs every kernel on the simulator before it launches it on the GPU "
                "(an index out of bounds there can take the GPU down for the whole notebook), and "
                f"the simulator cannot run yours: {error}. Your kernel was not launched.",
            )
        )
        return None
    except Exception as error:
        crash = running.explain(error, kernel)
        result.problems.append((crash.kind, f"{crash.text} (on {case.label})"))
        return None
    outside = [h for h in observation.hazards if h.kind == "out of bounds"]
    if outside:
        result.problems.append(("out of bounds", out_of_bounds_sentence(outside[0], kernel)))
    elif any(h.kind == "barrier" for h in observation.hazards):
        result.problems.extend(checks.hazards(observation, kernel))
    return observation
