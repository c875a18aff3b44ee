"""The fake `cuda` module a traced kernel sees: the simulator's, recording memory and barriers."""

from __future__ import annotations

import sys
import threading

import numpy as np

from .arrays import (
    ATOMIC,
    BARRIER,
    CONSTANT,
    LOCAL,
    SHARED,
    SYNCWARP,
    Recorded,
    Tracer,
    UnsupportedError,
    _negative,
    instruction_at,
    pointer,
)

_current_thread = threading.current_thread
_getframe = sys._getframe


def fake_module_class():
    """The simulator's FakeCUDAModule, subclassed so that arrays and barriers are recorded."""
    from numba.cuda.np import numpy_support
    from numba.cuda.simulator import kernelapi

    def as_dtype(dtype):
        return (
            numpy_support.as_dtype(dtype)
            if isinstance(dtype, kernelapi.types.Type)
            else np.dtype(dtype)
        )

    def site_name(frame) -> str:
        """The variable a `name = cuda.shared.array(...)` line assigns, else 'line N'."""
        import linecache

        text = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
        target = text.split("=", 1)[0].strip() if "=" in text else ""
        return target if target.isidentifier() else f"line {frame.f_lineno}"

    class Shared:
        """cuda.shared.array: one array per call site for the launch, recorded."""

        def __init__(self, tracer: Tracer, dynamic: int):
            self._tracer = tracer
            self._sites: dict = {}
            self._dynamic = np.zeros(dynamic, dtype=np.byte)

        def array(self, shape, dtype, alignment=None):
            frame = _getframe(1)
            key = (frame.f_code, instruction_at(frame.f_code, frame.f_lasti))

            def allocate():
                kind = as_dtype(dtype)
                if shape == 0:  # dynamic shared memory: every such array aliases one buffer
                    count = self._dynamic.size // kind.itemsize
                    ary = np.frombuffer(self._dynamic.data, dtype=kind, count=count)
                else:
                    ary = np.empty(shape, kind)
                return self._tracer.wrap(ary, site_name(frame), SHARED)

            return self._tracer.once(self._sites, key, allocate)

    class Local:
        """cuda.local.array: a new array per call, one view per call site (addresses modelled)."""

        def __init__(self, tracer: Tracer):
            self._tracer = tracer
            self._sites: dict = {}

        def array(self, shape, dtype, alignment=None):
            frame = _getframe(1)
            ary = np.empty(shape, as_dtype(dtype))
            key = (frame.f_code, instruction_at(frame.f_code, frame.f_lasti))
            view = self._tracer.once(
                self._sites, key, lambda: self._tracer.view(ary, site_name(frame), LOCAL)
            )
            return Recorded(ary, view, self._tracer)

    class Const:
        """cuda.const.array_like: the host array, recorded as constant memory."""

        def __init__(self, tracer: Tracer):
            self._tracer = tracer
            self._arrays: dict = {}

        def array_like(self, ary):
            if isinstance(ary, Recorded):
                return ary
            ary = np.asarray(ary)
            key = (pointer(ary), ary.shape, ary.strides, ary.dtype.str)
            frame = _getframe(1)
            return self._tracer.once(
                self._arrays, key, lambda: self._tracer.wrap(ary, site_name(frame), CONSTANT)
            )

    class Atomics:
        """cuda.atomic.*: one 'atomic' record, then the simulator's locked operation."""

        def __init__(self, tracer: Tracer):
            self._tracer = tracer
            self._plain = kernelapi.FakeCUDAAtomic()

        def __getattr__(self, name):
            operation = getattr(self._plain, name)
            tracer = self._tracer

            def atomic(array, *args):
                frame = _getframe(1)
                if not isinstance(array, Recorded):
                    return operation(array, *args)
                view = tracer.views[array._view]
                if view.space == CONSTANT:
                    raise UnsupportedError(
                        f"atomic {name} on constant array '{view.name}': "
                        "constant memory is read-only"
                    )
                idx = (0,) * array.ndim if name == "compare_and_swap" else args[0]
                try:
                    array._ary[idx]
                except IndexError:
                    return tracer.out_of_bounds(array, idx, ATOMIC, frame)
                if _negative(idx):
                    tracer.negative_index(array, idx, ATOMIC, frame)
                tracer.records.append(
                    (
                        _current_thread().thread_id,
                        array._view,
                        ATOMIC,
                        idx,
                        frame.f_code,
                        frame.f_lasti,
                        frame.f_lineno,
                        None,
                    )
                )
                return operation(array._ary, *args)

            return atomic

    class TracingModule(kernelapi.FakeCUDAModule):
        """The fake `cuda` module of the simulator, recording shared/local/const/atomic/barriers."""

        def __init__(self, tracer: Tracer, grid, block, dynamic_shared):
            super().__init__(grid, block, dynamic_shared)
            self._tracer = tracer
            self._shared = Shared(tracer, dynamic_shared)
            self._local = Local(tracer)
            self._const = Const(tracer)
            self._atomic = Atomics(tracer)

        def syncthreads(self):
            self._tracer.event(BARRIER)
            super().syncthreads()

        def syncthreads_count(self, val):
            self._tracer.event(BARRIER)
            return super().syncthreads_count(val)

        def syncthreads_and(self, val):
            self._tracer.event(BARRIER)
            return super().syncthreads_and(val)

        def syncthreads_or(self, val):
            self._tracer.event(BARRIER)
            return super().syncthreads_or(val)

        def syncwarp(self, mask=0xFFFFFFFF):
            self._tracer.event(SYNCWARP, int(mask))
            return super().syncwarp(mask)

        @property
        def cg(self):
            raise UnsupportedError("cooperative groups (cuda.cg) are not supported by the tracer")

    return TracingModule


# ----------------------------------------------------------------------------------------------
