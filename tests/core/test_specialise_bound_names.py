"""specialise: a module name bound to a device function (`read_taps = constant_taps`) follows it."""

import numpy as np
from numba import cuda

from gpgpu_lessons.specialise import specialise

SCALE = np.float32(2)


@cuda.jit(device=True)
def times_scale(x):
    """x * SCALE."""
    return x * SCALE


@cuda.jit(device=True)
def plus_scale(x):
    """x + SCALE."""
    return x + SCALE


apply = times_scale  # what `scaled` calls


@cuda.jit
def scaled(a):
    """a[i] = apply(a[i])."""
    i = cuda.grid(1)
    if i < a.size:
        a[i] = apply(a[i])


def run(kernel, a):
    d_a = cuda.to_device(a)
    kernel[1, a.size](d_a)
    return d_a.copy_to_host()


def test_a_constant_bound_to_a_listed_device_function_gets_its_recompiled_copy():
    a = np.random.default_rng(0).random(5, dtype=np.float32) + 1
    other = specialise(
        scaled, "scaled_plus_3", device_functions=(plus_scale,), apply=plus_scale, SCALE=3.0
    )
    np.testing.assert_allclose(run(other, a), a + 3, rtol=1e-6)  # plus_scale read SCALE = 3
    np.testing.assert_allclose(run(scaled, a), a * 2, rtol=1e-6)  # the module's kernel unchanged


def test_a_bound_name_not_passed_keeps_the_module_function_and_its_constants():
    """`apply` is not passed: it stays the module's times_scale, compiled with SCALE = 2."""
    a = np.random.default_rng(1).random(3, dtype=np.float32) + 1
    other = specialise(scaled, "scaled_by_5", device_functions=(times_scale,), SCALE=5.0)
    np.testing.assert_allclose(run(other, a), a * 2, rtol=1e-6)
    bound = specialise(
        scaled, "scaled_by_5_bound", device_functions=(times_scale,), apply=times_scale, SCALE=5.0
    )
    np.testing.assert_allclose(run(bound, a), a * 5, rtol=1e-6)
