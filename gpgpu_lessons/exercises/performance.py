"""On a GPU: a passing kernel's bandwidth against the device copy and the reference solution."""
from __future__ import annotations

from .. import launch, runtime, timing
from . import running


def _time(kernel, case, params, name) -> timing.Timing:
    args = tuple(running.device_args(case, params))
    step = launch.Step(kernel, case.grid, case.block, args)
    return timing.benchmark(step.run, name=name, bytes_moved=case.bytes_moved)


def compare(exercise, fn, rng) -> str:
    """One sentence: GB/s of fn, of the reference solution and of the device copy, same run."""
    from . import solutions

    try:
        case = exercise.performance(rng)
        mine = _time(fn, case, exercise.params, "yours")
        reference = _time(solutions.reference(exercise.id), case, exercise.params, "reference")
        ceiling = timing.copy_ceiling()
    except Exception as error:  # timing is a bonus: never let it fail a correct kernel
        return f"(Could not time it on the GPU: {type(error).__name__}: {error}.)"
    gpu = runtime.device_info().name
    return (f"On the {gpu}, {case.label}: {mine.gbs:,.0f} GB/s, {mine.gbs / ceiling.gbs:.0%} of "
            f"the device copy ({ceiling.gbs:,.0f} GB/s); the reference solution reaches "
            f"{reference.gbs:,.0f} GB/s ({mine.median_ms / reference.median_ms:.2f}x its time).")
