"""Lesson {{N}}: every kernel against NumPy on random data and awkward sizes; bad input named."""

import numpy as np
import pytest

from gpgpu_lessons.l{{N}}_{{NAME}} import textbook


@pytest.mark.parametrize("n", [1, 31, 257, 1031])  # none a multiple of the block
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scale_matches_numpy(rng, n, dtype):
    a = rng.standard_normal(n).astype(dtype)
    np.testing.assert_allclose(textbook.scale(a), textbook.FACTOR * a, rtol=1e-6)


def test_scale_names_a_bad_input():
    with pytest.raises(ValueError, match="a must"):
        textbook.scale(np.ones((3, 3), np.float32))
