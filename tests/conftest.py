"""Shared fixtures: seeded random data (never zeros) and a poison value for outputs."""

import numpy as np
import pytest

import gpgpu_lessons  # noqa: F401  (chooses GPU or simulator before numba is imported)


@pytest.fixture
def rng():
    """A seeded generator, so a failure can be reproduced."""
    return np.random.default_rng(20261122)
