"""On a GPU: a passing kernel's bandwidth against the device copy and the reference solution.

The student's kernel is rehearsed on the simulator at the timing shape first (`rehearsal`), and
timed on guarded arrays. Outputs that start at zero (counters, sums) are cleared before each
timed launch, in the timing of both kernels: a kernel that reserves slots with an atomic counter
(05.6) would otherwise write past the end of its output from the second launch on.
"""

from __future__ import annotations

import numpy as np

from .. import launch, runtime, timing
from ..device import fill
from . import rehearsal, running


def time_kernel(kernel, case, params, name) -> timing.Timing:
    """Time kernel on the case's guarded device arrays (zero-started outputs cleared first)."""
    args, guarded = running.device_args(case, params)
    steps = [fill.zero_step(guarded[output].array) for output in case.zeros]
    steps.append(launch.Step(kernel, case.grid, case.block, tuple(args)))
    measured = timing.benchmark(
        launch.Launch(tuple(steps)), name=name, bytes_moved=case.bytes_moved
    )
    running.check_guards(guarded.values())
    return measured


def compare(exercise, fn, rng) -> tuple[str, list[tuple[str, str]]]:
    """(one sentence: GB/s of fn, of the reference solution and of the device copy, same run;
    the problems that make a correct kernel fail at the timing shape: out of bounds there)."""
    case = exercise.performance(rng)
    rehearsed = rehearsal.rehearse(exercise, fn, case)
    if not rehearsed.safe:
        return "", [
            (kind, f"At the timing shape: {sentence}") for kind, sentence in rehearsed.problems
        ]
    try:
        mine = time_kernel(fn, case, exercise.params, "yours")
    except running.GuardDamaged as error:
        crash = running.explain(error, fn)
        return "", [(crash.kind, f"{crash.text} (on {case.label}, the timing shape)")]
    except Exception as error:  # timing is a bonus: never let it fail a correct kernel
        return f"(Could not time it on the GPU: {type(error).__name__}: {error}.)", []
    try:
        known = reference_solution(exercise.id)
        reference = None
        if known is not None:
            reference = time_kernel(known, case, exercise.params, "reference")
        ceiling = timing.copy_ceiling()
    except Exception as error:  # timing is a bonus: never let it fail a correct kernel
        return f"(Could not time it on the GPU: {type(error).__name__}: {error}.)", []
    gpu = runtime.device_info().name
    reset = (
        f" (each launch after clearing {', '.join(f'`{z}`' for z in case.zeros)})"
        if case.zeros
        else ""
    )
    sentence = (
        f"On the {gpu}, {case.label}{reset}: {mine.gbs:,.0f} GB/s, "
        f"{mine.gbs / ceiling.gbs:.0%} of the device copy ({ceiling.gbs:,.0f} GB/s)"
    )
    if reference is not None:
        sentence += (
            f"; the reference solution reaches {reference.gbs:,.0f} GB/s "
            f"({mine.median_ms / reference.median_ms:.2f}x its time)"
        )
    return sentence + ".", []


def reference_solution(exercise_id):
    """The reference kernel where the instructor's package is installed, else None."""
    try:
        from gpgpu_instructor import solutions
    except ImportError:
        return None
    return solutions.reference(exercise_id)


def reference_line(exercise, seed: int = 7) -> str:
    """One line for instructors: the reference solution's GB/s at the timing shape against the
    device copy (the same measurement a passing student's kernel gets)."""
    case = exercise.performance(np.random.default_rng(seed))
    measured = time_kernel(reference_solution(exercise.id), case, exercise.params, "reference")
    ceiling = timing.copy_ceiling()
    return (
        f"{exercise.id} {exercise.title}, {case.label}: {measured.gbs:,.0f} GB/s, "
        f"{measured.median_ms:.3f} ms, {measured.gbs / ceiling.gbs:.0%} of the device copy "
        f"({ceiling.gbs:,.0f} GB/s)"
    )
