"""specialise: the same kernel source with other module constants, under its own name."""

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons.specialise import python_function, specialise

SCALE = 2
BIAS = 0


@cuda.jit(device=True)
def biased(x):
    """x + BIAS."""
    return x + BIAS


@cuda.jit
def scale_and_bias(a, out):
    """out[i] = SCALE * a[i] + BIAS."""
    i = cuda.grid(1)
    if i < a.size:
        out[i] = biased(SCALE * a[i])


def run(kernel, a):
    out = cuda.device_array_like(a)
    kernel[1, 32](cuda.to_device(a), out)
    return out.copy_to_host()


def test_other_constants_under_another_name(rng):
    a = rng.random(20).astype(np.float32)
    tripled = specialise(
        scale_and_bias, "scale_and_bias_3", device_functions=(biased,), SCALE=3, BIAS=1
    )
    assert python_function(tripled).__name__ == "scale_and_bias_3"
    np.testing.assert_allclose(run(tripled, a), 3 * a + 1, rtol=1e-6)
    np.testing.assert_allclose(
        run(scale_and_bias, a), 2 * a, rtol=1e-6
    )  # the original is unchanged


def test_a_misspelt_constant_is_refused():
    with pytest.raises(ValueError, match=r"no constants \['SCAEL'\]"):
        specialise(scale_and_bias, "x", SCAEL=3)
