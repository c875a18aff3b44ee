"""The photograph loader: modes, sizes, and errors."""

import numpy as np
import pytest

from gpgpu_lessons import images


@pytest.mark.parametrize("name", sorted(images.PHOTOS))
def test_photographs_load_in_both_modes(name):
    gray = images.load(name)
    rgb = images.load(name, mode="rgb")
    assert gray.dtype == np.uint8 and gray.shape == (512, 512)
    assert rgb.shape == (512, 512, 3)
    assert gray.std() > 20  # a real picture, not a flat field


def test_resizing_to_odd_shapes():
    assert images.load(shape=(37, 101)).shape == (37, 101)
    assert images.load(mode="rgb", shape=(3, 5)).shape == (3, 5, 3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"name": "lena"}, "unknown photograph"),
        ({"mode": "cmyk"}, "mode must be"),
        ({"shape": (0, 4)}, "shape must be"),
        ({"shape": (4,)}, "shape must be"),
    ],
)
def test_bad_requests_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        images.load(**kwargs)
