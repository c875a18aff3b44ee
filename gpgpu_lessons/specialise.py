"""One kernel, other constants: compile a module-level kernel again with other values of its
module constants, under its own name (so profilers and sanitizers tell the instances apart).

A fast kernel shown on a slide reads its tuned sizes as module constants (``TILE``, ``VEC``...);
the tuning tool and the wrappers that take other sizes get copies of the same source through
``specialise``, instead of a factory that would hide the constants from the slide.
"""

from __future__ import annotations

import types

from numba import cuda


def python_function(kernel):
    """The Python function behind a Numba kernel or device function (GPU or simulator)."""
    return getattr(kernel, "py_func", None) or kernel.fn


def _copy(function, namespace: dict, name: str | None = None):
    """`function` reading its globals from `namespace`, under `name` (or its own)."""
    copy = types.FunctionType(
        function.__code__,
        namespace,
        name or function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    copy.__qualname__ = name or function.__qualname__
    copy.__doc__ = function.__doc__
    return copy


def specialise(
    kernel,
    name: str,
    *,
    device_functions=(),
    fastmath: bool = False,
    inline_device_functions: bool = False,
    **constants,
):
    """`kernel` compiled with other values of the module constants it reads, named `name`.

    The device functions listed read the constants too: they are compiled again with them, and
    a constant whose value is one of them (``read_taps=global_taps``, a module name bound to a
    device function) is bound to that new copy. A constant the kernel's module does not define is
    refused (a misspelt name would change nothing).
    """
    function = python_function(kernel)
    unknown = sorted(set(constants) - set(function.__globals__))
    if unknown:
        raise ValueError(f"{function.__name__}'s module has no constants {unknown}")
    namespace = {**function.__globals__, **constants}
    options = {"inline": "always"} if inline_device_functions else {}
    copies = {}
    for device in device_functions:
        helper = python_function(device)
        copies[id(device)] = namespace[helper.__name__] = cuda.jit(
            device=True, fastmath=fastmath, **options
        )(_copy(helper, namespace))
    for constant, value in constants.items():
        if id(value) in copies:
            namespace[constant] = copies[id(value)]
    return cuda.jit(fastmath=fastmath)(_copy(function, namespace, name))
