"""Run the sweep: check every kernel against NumPy, then time it beside the copy and CuPy.

For each case of the sweep (shapes.py) and each kernel of its family (families.py): random
inputs made on the device, the output poisoned, one checked run of the fast wrapper's Launch
compared with NumPy (data.py says where), then on a GPU two clocks: `timing.benchmark` of the
same Launch and of CuPy's counterpart (CUDA events: the GPU's time), and the wrapper and CuPy
called as a user calls them, back to back (host clock + synchronize: what a user gets; a
reduction returns a Python number), each timing taken again once if its samples are unsteady
(`steady`). The host-cost table times one call of every family's
wrapper at three sizes beside its prepare(), its Launch, a bare ``kernel[grid, block](...)``
of the same steps, and CuPy. In the simulator nothing is timed: the sweep is tiny and every
kernel is checked on its edges.
"""

from __future__ import annotations

import datetime
import math
import time
import zlib
from importlib import metadata

import numpy as np
from numba import cuda

from gpgpu_lessons import optional, runtime, timing

from . import data, shapes
from .families import FAMILIES, Family, Kernel
from .progress import Progress
from .record import Bench, HostCost, Result

RTOL = 1e-5  # a float32 sum or dot of positive numbers, against the float64 one
HOST_CHECK = 2**26  # reductions up to this length are checked on the host; beyond, with CuPy
CHUNK = 2**24  # elements per float64 partial sum of a reference
CALLS = 200  # calls per sample of a host cost (fewer than the launch queue holds)
UNSTEADY = 1.3  # samples whose slowest is this much above the fastest are taken again (steady)


def steady(launch, **options):
    """timing.benchmark(launch, **options), taken again once if its samples are unsteady: the
    steadier of the two.

    A disturbance on a shared machine (seen on a lent H100: a few samples at 2-6x, decaying)
    would otherwise decide a shape's ratio to CuPy; every timing of the bench, ours and CuPy's,
    goes through here, and a retaken one says so in its `extra`.
    """
    first = timing.benchmark(launch, **options)
    if max(first.samples_ms) <= UNSTEADY * min(first.samples_ms):
        return first
    second = timing.benchmark(launch, **options)
    chosen = min((first, second), key=lambda t: max(t.samples_ms) / min(t.samples_ms))
    chosen.extra["retaken"] = True
    return chosen


def cupy_module():
    """CuPy, where it is installed and works with this GPU; None otherwise (or in the simulator)."""
    cupy, _ = optional.cupy()
    if cupy is None:
        return None
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # built for another CUDA: the bench runs without it
        return None
    return cupy


def software(cp) -> dict:
    """Versions of what the numbers depend on."""
    found = {name: metadata.version(name) for name in ("numba", "numba-cuda", "numpy")}
    found["cupy"] = None if cp is None else cp.__version__
    return found


# ---- checks ------------------------------------------------------------------------------------


def _first_wrong(have, want, where, wrong) -> str:
    k = int(np.flatnonzero(wrong)[0])
    index = tuple(int(axis[k]) for axis in where)
    return f"first at {index if len(index) > 1 else index[0]}: {have[k]} instead of {want[k]}"


def check_elementwise(kernel: Kernel, inputs, out, seed: int) -> tuple[bool, str]:
    """Compare the output with the kernel's reference at data.positions (all of a small one)."""
    host = [a.copy_to_host() for a in inputs]
    got = out.copy_to_host()
    where = data.positions(got.shape[:2], seed)
    have, want = got[where], kernel.expected(host, where)
    if kernel.tolerance is None:
        wrong = have != want
    else:
        wrong = ~(np.abs(have.astype(np.float64) - want) <= kernel.tolerance(host))
    wrong = wrong.reshape(len(where[0]), -1).any(axis=1)
    checked = len(where[0]) * (got.size // max(1, int(np.prod(got.shape[:2]))))
    text = data.described(min(checked, got.size), got.size)
    if wrong.any():
        first = _first_wrong(have, want, where, wrong)
        return False, f"{int(wrong.sum()):,} wrong of {text}; {first}"
    return True, text


def float64_total(arrays, xp=np) -> float:
    """The sum (one array) or dot (two) in float64, CHUNK elements at a time (NumPy or CuPy)."""
    total = 0.0
    for start in range(0, arrays[0].size, CHUNK):
        parts = [a[start : start + CHUNK].astype(xp.float64) for a in arrays]
        total += float((parts[0] if len(parts) == 1 else parts[0] * parts[1]).sum())
    return total


def check_reduction(inputs, out, cp) -> tuple[bool, str]:
    """Compare a float32 sum or dot with the float64 one (NumPy; CuPy for long vectors)."""
    got = float(out.copy_to_host()[0])
    n = inputs[0].size
    if n <= HOST_CHECK or cp is None:
        want, how = float64_total([a.copy_to_host() for a in inputs]), "NumPy"
    else:
        want, how = float64_total([cp.asarray(a) for a in inputs], cp), "CuPy"
    ok = abs(got - want) <= RTOL * abs(want)  # positive inputs: |total| bounds the error
    relation = "within" if ok else "NOT within"
    return ok, f"{got:.9g} {relation} {RTOL:g} of {how}'s float64 {want:.9g} ({n:,} elements)"


# ---- timing ------------------------------------------------------------------------------------


HOST_SIZES = {"small": 2**12, "middle": 2**18, "large": 2**22}  # elements of the host-cost table
TINY_HOST_SIZES = {"small": 3, "middle": 67, "large": 1001}  # the simulator's: runs, means nothing


def host_shape(family: Family, elements: int) -> tuple[int, ...]:
    """A shape of `elements` elements for the host-cost table: square for 2-D families."""
    if family.sweep in ("vectors", "sums"):
        return (elements,)
    side = math.isqrt(elements)
    return (side, side)


def bare_launch(steps):
    """kernel[grid, block](*args) of every step: what a wrapper costs at the least."""

    def bare():
        for step in steps:
            step.kernel[step.grid, step.block](*step.args)

    return bare


def user_call(kernel: Kernel, inputs, out, reduction: bool):
    """The wrapper as a user calls it: device arrays in and out (a reduction: a number back)."""
    if reduction:
        return lambda: kernel.wrapper(*inputs, **kernel.options)
    return lambda: kernel.wrapper(*inputs, out=out, **kernel.options)


def cupy_call(kernel: Kernel, family: Family, cp, inputs):
    """CuPy's call as a user makes it (a reduction: float(...)), or None without CuPy."""
    if cp is None:
        return None
    counterpart = kernel.cupy(cp, *(cp.asarray(a) for a in inputs))
    if counterpart is None or not family.reduction:
        return counterpart
    return lambda: float(counterpart())


def host_cost(family: Family, kernel: Kernel, inputs, out, cp, size: str = "") -> HostCost:
    """Host time per call of the fast wrapper, its prepare() and Launch, a bare launch, CuPy.

    In the simulator every call runs twice (a warm-up and one sample): checked, not timed.
    """
    prepared = kernel.prepare(inputs, out)
    bare = bare_launch(prepared.steps)
    calls, repeat = runtime.pick(gpu=(CALLS, 5), simulator=(1, 1))
    per_call = lambda call: timing.per_call_us(call, calls=calls, repeat=repeat)  # noqa: E731
    counterpart = None if cp is None else kernel.cupy(cp, *(cp.asarray(a) for a in inputs))
    cost = HostCost(
        family.name,
        int(inputs[0].size),
        per_call(lambda: kernel.wrapper(*inputs, out=out, **kernel.options)),
        per_call(bare),
        None if counterpart is None else per_call(counterpart),
        len(prepared.steps),
        kernel.name,
        size,
        per_call(lambda: kernel.prepare(inputs, out)),
        per_call(prepared),
    )
    if family.reduction:
        cost.number_us = per_call(user_call(kernel, inputs, out, True))
        cost.bare_copy_us = per_call(lambda: (bare(), out.copy_to_host()))
        number = cupy_call(kernel, family, cp, inputs)
        cost.cupy_number_us = None if number is None else per_call(number)
    return cost


def host_costs_of(names, cp, progress: Progress) -> list[HostCost]:
    """The host-cost table: every family's kernels at the small, middle and large sizes
    (in the simulator, tiny ones)."""
    found = []
    sizes = runtime.pick(gpu=HOST_SIZES, simulator=TINY_HOST_SIZES)
    for name in names:
        family = FAMILIES[name]
        for size, elements in sizes.items():
            progress.step(f"host cost of {name}, {size}")
            shape = host_shape(family, elements)
            inputs = family.make(shape, 1)
            out = cuda.device_array(*family.output(shape))
            for kernel in family.kernels:
                found.append(host_cost(family, kernel, inputs, out, cp, size))
    return found


def _error(problem: Exception) -> str:
    return f"{type(problem).__name__}: {problem}".splitlines()[0][:300]


def run_case(family: Family, case: shapes.Case, cp, progress: Progress) -> list[Result]:
    """Check (and on a GPU time) every kernel of a family on one shape."""
    seed = zlib.crc32(f"{case.family} {case.shape}".encode())
    out_shape, out_dtype = family.output(case.shape)
    nbytes = family.bytes_moved(case.shape)
    found, made = [], None
    try:
        inputs = family.make(case.shape, seed)
        out = cuda.device_array(out_shape, dtype=out_dtype)
    except Exception as problem:  # out of memory, say: every kernel of the case reports it
        inputs = out = None
        made = _error(problem)
    for kernel in family.kernels:
        progress.step(f"{kernel.name} {case.shape_text}")
        result = Result(
            family.name,
            kernel.name,
            kernel.wrapper_name,
            case.shape,
            np.dtype(family.dtype).name,
            case.label,
            False,
            "not run",
            cupy_name=kernel.cupy_name,
        )
        found.append(result)
        if inputs is None:
            result.error = made
            continue
        try:
            prepared = kernel.prepare(inputs, out)
            data.poison(out)
            prepared()
            if family.reduction:
                result.ok, result.check = check_reduction(inputs, out, cp)
            else:
                result.ok, result.check = check_elementwise(kernel, inputs, out, seed)
            if runtime.MODE == runtime.GPU:
                result.fast = steady(prepared, name=kernel.name, bytes_moved=nbytes)
                result.called = steady(
                    user_call(kernel, inputs, out, family.reduction),
                    name=f"{kernel.name}, called",
                    bytes_moved=nbytes,
                    method=timing.HOST_SYNC,
                )
        except Exception as problem:
            result.ok, result.error = False, _error(problem)
            continue
        if cp is not None:
            try:
                counterpart = kernel.cupy(cp, *(cp.asarray(a) for a in inputs))
                if counterpart is not None:
                    result.cupy = steady(counterpart, name=kernel.cupy_name, bytes_moved=nbytes)
                    result.cupy_called = steady(
                        cupy_call(kernel, family, cp, inputs),
                        name=f"{kernel.cupy_name}, called",
                        bytes_moved=nbytes,
                        method=timing.HOST_SYNC,
                    )
            except Exception as problem:  # CuPy's failure is not the kernel's
                progress.note(f"  CuPy failed on {case.shape_text}: {_error(problem)}")
            finally:
                cp.get_default_memory_pool().free_all_blocks()
    return found


def sweep_sizes(sizes: str) -> str:
    """The sweep this machine runs: `sizes` on a GPU, always 'tiny' in the simulator."""
    return "tiny" if runtime.is_simulator() else sizes


def plan(names, sizes: str) -> list[tuple[Family, shapes.Case]]:
    """Every (family, case) the run covers, in order."""
    info = runtime.device_info()
    free = None
    if runtime.MODE == runtime.GPU:
        free = cuda.current_context().get_memory_info()[0]
        free = int(free) if math.isfinite(free) else None  # the simulator's is infinite
    return [
        (FAMILIES[name], case)
        for name in names
        for case in shapes.sweep(FAMILIES[name], sizes, l2_bytes=info.l2_bytes, free_bytes=free)
    ]


def run(names, sizes: str = "full", *, stream=None, host: bool = True) -> Bench:
    """Run the bench over the families `names` and return its results; prints only progress."""
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown families {unknown}; choose from {', '.join(FAMILIES)}")
    started = time.perf_counter()
    sizes = sweep_sizes(sizes)
    gpu = runtime.MODE == runtime.GPU
    cp = cupy_module()
    cases = plan(names, sizes)
    costs = list(names) if gpu and host else []
    steps = sum(len(family.kernels) for family, _ in cases) + len(costs) * len(HOST_SIZES) + gpu
    progress = Progress(steps, stream)
    info = runtime.device_info()
    scale = shapes.L2_FACTOR.get(sizes)
    progress.note(
        f"The {sizes} sweep on {info.name}: {len(cases)} shapes of {', '.join(names)}"
        + (f"; images, matrices and copies hold >= {scale}x the L2 cache" if scale else "")
    )
    ceiling = None
    if gpu:
        progress.step("device-to-device copy (the ceiling)")
        ceiling = timing.copy_ceiling()
    found = []
    for family, case in cases:
        found += run_case(family, case, cp, progress)
    host_costs = host_costs_of(costs, cp, progress)
    progress.done()
    return Bench(
        gpu=info.name,
        date=datetime.date.today().isoformat(),
        sizes=sizes,
        families=list(names),
        seconds=round(time.perf_counter() - started, 1),
        device=info.as_dict(),
        software=software(cp),
        ceiling=ceiling,
        results=found,
        host_costs=host_costs,
    )
