"""What Numba's dispatcher costs per launch: one kernel launched six ways, host time per call.

Measured, not guessed: for the first step of a prepared Launch, microseconds per call back to
back (`timing.per_call_us`) of

- ``bare``: ``kernel[grid, block](*args)``, what every wrapper does;
- ``configured once``: ``c = kernel[grid, block]`` kept, then ``c(*args)`` (GPU only: in the
  simulator ``kernel[grid, block]`` returns the kernel itself, mutated);
- ``specialized``: ``kernel.specialize(*args)[grid, block](*args)``, the dispatcher that skips
  typing the arguments;
- ``compiled launch``: the compiled kernel's own ``launch(args, grid, block, stream, 0)``,
  skipping the dispatcher (argument types, launch-config bookkeeping);
- ``marshalled once``: ``cuda.core.launch`` with the kernel arguments Numba marshalled once
  and a LaunchConfig built once: what is left when Python does nothing per call;
- and the pieces: ``kernel[grid, block]`` alone, typing the arguments, marshalling them,
  building the LaunchConfig.

Each alternative runs behind a try: Numba's internals move between releases, and a failure
reads "failed: ..." in the table instead of stopping the run.
"""

from __future__ import annotations

from numba import cuda

from gpgpu_lessons import runtime, timing

CALLS = 200


def _marshalled(compiled, args) -> list:
    """The kernel arguments as Numba's launch passes them (arrays: size, pointer, shape...)."""
    kernelargs, keep = [], []
    for ty, value in zip(compiled.argument_types, args):
        compiled._prepare_args(ty, value, 0, keep, kernelargs)
    return kernelargs


def _launch_config(grid, block):
    from cuda.core import LaunchConfig
    from numba.cuda._compat import CUDA_CORE_GE_1_0

    flag = "is_cooperative" if CUDA_CORE_GE_1_0 else "cooperative_launch"
    return LaunchConfig(grid=grid, block=block, shmem_size=0, **{flag: False})


def alternatives(step) -> dict[str, object]:
    """{way: microseconds per call, or 'failed: why'} for one launch.Step."""
    kernel, grid, block, args = step.kernel, step.grid, step.block, step.args
    ways = {"bare": lambda: kernel[grid, block](*args)}
    found: dict[str, object] = {}
    if runtime.MODE == runtime.GPU:
        try:
            configured = kernel[grid, block]
            argtypes = tuple(kernel.typeof_pyval(a) for a in args)
            compiled = kernel.overloads[argtypes]
            griddim, blockdim, stream = configured.griddim, configured.blockdim, configured.stream
            ways["configured once"] = lambda: configured(*args)
            specialized = kernel.specialize(*args)
            ways["specialized"] = lambda: specialized[grid, block](*args)
            ways["compiled launch"] = lambda: compiled.launch(args, griddim, blockdim, stream, 0)
            ways["kernel[grid, block] alone"] = lambda: kernel[grid, block]
            ways["typing the arguments"] = lambda: [kernel.typeof_pyval(a) for a in args]
            ways["marshalling the arguments"] = lambda: _marshalled(compiled, args)
            ways["building a LaunchConfig"] = lambda: _launch_config(griddim, blockdim)
            from cuda.core import launch as core_launch

            kernelargs, config = _marshalled(compiled, args), _launch_config(griddim, blockdim)
            function = compiled._codelibrary.get_cufunc().kernel
            ways["marshalled once"] = lambda: core_launch(stream, config, function, *kernelargs)
        except Exception as problem:  # what was set up before the failure is still timed
            found["setup"] = f"failed: {type(problem).__name__}: {problem}"[:200]
    calls, repeat = runtime.pick(gpu=(CALLS, 5), simulator=(2, 1))  # simulator: runs, untimed
    for name, call in ways.items():
        try:
            found[name] = round(timing.per_call_us(call, calls=calls, repeat=repeat), 2)
        except Exception as problem:
            found[name] = f"failed: {type(problem).__name__}: {problem}"[:200]
    cuda.synchronize()
    return found


def empty_kernel_step():
    """A launch of lesson 00's empty kernel: one block of 32 threads, no arguments."""
    from gpgpu_lessons.l00_timing_gpu_code import textbook

    return textbook.launch_empty.prepare().steps[0]


def table(rows: dict[str, dict[str, object]]) -> str:
    """One line per launch measured, one column per way."""
    ways = list(dict.fromkeys(way for found in rows.values() for way in found))
    lines = ["Numba's launch, us per call back to back (host clock, no synchronize):"]
    for way in ways:
        cells = []
        for found in rows.values():
            value = found.get(way)
            cells.append(f"{value:10.1f}" if isinstance(value, float) else f"{'-':>10}")
        lines.append(f"  {way:28}" + "".join(cells))
    lines.insert(1, f"  {'':28}" + "".join(f"{name[:9]:>10}" for name in rows))
    failures = [
        f"  {name}, {way}: {value}"
        for name, found in rows.items()
        for way, value in found.items()
        if isinstance(value, str)
    ]
    return "\n".join(lines + failures)
