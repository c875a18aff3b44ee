"""What a traced kernel refers to, swapped for the trace: device functions, global arrays."""

from __future__ import annotations

import types

import numpy as np

from .. import specialise
from .arrays import CONSTANT, Tracer, UnsupportedError


def python_function(kernel) -> types.FunctionType:
    """The Python function of a @cuda.jit kernel (simulator or GPU), or a clear TypeError."""
    if isinstance(kernel, types.FunctionType):
        raise TypeError(
            f"{kernel.__name__} is a plain Python function: decorate it with @cuda.jit "
            "to make it a kernel, then trace it"
        )
    if hasattr(kernel, "dispatcher") and hasattr(kernel, "griddim"):  # kernel[grid, block]
        raise TypeError(
            "pass the kernel itself and its launch shape: trace_kernel(kernel, "
            "griddim, blockdim, *args), not kernel[griddim, blockdim]"
        )
    try:
        fn = specialise.python_function(kernel)
    except AttributeError:  # neither a Numba kernel nor the simulator's
        fn = None
    if not isinstance(fn, types.FunctionType):
        raise TypeError(
            f"trace_kernel needs a @cuda.jit kernel, got {type(kernel).__name__} "
            f"{getattr(kernel, '__name__', '')}".rstrip()
            + ": decorate a Python function with @cuda.jit and pass it"
        )
    if "cuda" not in type(kernel).__module__:
        raise TypeError(
            f"{fn.__name__} is a Numba CPU function (@njit / @jit), not a CUDA kernel: "
            "decorate it with @cuda.jit instead, then trace it"
        )
    if _is_device_function(kernel):
        raise TypeError(
            f"{fn.__name__} is a device function (device=True): trace the kernel that calls it"
        )
    return fn


def _is_device_function(obj) -> bool:
    if getattr(obj, "_device", False):
        return True
    options = getattr(obj, "targetoptions", None)
    return bool(options and options.get("device"))


def _is_dispatcher(obj) -> bool:
    return isinstance(getattr(obj, "py_func", None), types.FunctionType) and (
        hasattr(obj, "targetoptions") or hasattr(obj, "_device")
    )


def _names(code: types.CodeType):
    """Every global or attribute name a code object (and the code nested in it) uses."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _names(const)


_SKIP_MODULES = ("numba", "numpy", "math", "cmath", "builtins", "operator")


class Substitutions:
    """Swap what a kernel's code refers to, for the trace: ndarray globals (frozen as constant
    memory by Numba) become recorded constant arrays; on a GPU, device functions become
    simulated ones. Undone on exit."""

    def __init__(self, tracer: Tracer, fn: types.FunctionType):
        self._tracer = tracer
        self._undo: list = []
        self._seen: set = set()
        self._constants: dict = {}
        self._fn = fn

    def __enter__(self):
        try:
            self._visit_function(self._fn)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        for target, key, old in reversed(self._undo):
            if isinstance(target, types.CellType):
                target.cell_contents = old
            else:
                target[key] = old
        self._undo.clear()

    def _set(self, target, key, new):
        if isinstance(target, types.CellType):
            self._undo.append((target, None, target.cell_contents))
            target.cell_contents = new
        else:
            self._undo.append((target, key, target[key]))
            target[key] = new

    def _visit_function(self, fn: types.FunctionType):
        if fn in self._seen:
            return
        self._seen.add(fn)
        names = set(_names(fn.__code__))
        namespace = fn.__globals__
        for name in names & namespace.keys():
            self._replace(namespace, name, namespace[name], names)
        for cell in fn.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            self._replace(cell, None, value, names)

    def _replace(self, target, key, value, names):
        new = self._convert(value, key, names)
        if new is not value:
            self._set(target, key, new)

    def _convert(self, value, name, names):
        """The object the traced kernel should see instead of `value` (often `value` itself)."""
        from numba.cuda.simulator.kernel import FakeCUDAKernel

        if isinstance(value, np.ndarray) and value.ndim > 0:
            key = id(value)
            if key not in self._constants:
                self._constants[key] = self._tracer.wrap(value, name or "constant", CONSTANT)
            return self._constants[key]
        if isinstance(value, FakeCUDAKernel):
            if not value._device:
                raise UnsupportedError(
                    f"kernel {value.__name__} launches kernel "
                    "(dynamic parallelism is not supported)"
                )
            self._visit_function(value.fn)
            return value
        if _is_dispatcher(value):
            if not _is_device_function(value):
                raise UnsupportedError("a kernel that refers to another kernel is not supported")
            self._visit_function(value.py_func)
            return FakeCUDAKernel(value.py_func, device=True)
        if isinstance(value, types.FunctionType) and not value.__module__.startswith(_SKIP_MODULES):
            self._visit_function(value)
        elif (
            isinstance(value, types.ModuleType)
            and value not in self._seen
            and not value.__name__.startswith(_SKIP_MODULES)
        ):
            self._seen.add(value)
            for attr in names & vars(value).keys():
                self._replace(vars(value), attr, vars(value)[attr], names)
        return value


# ----------------------------------------------------------------------------------------------
