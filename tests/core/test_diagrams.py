"""The core's explanatory pictures: images side by side, and where two images differ."""

from __future__ import annotations

import numpy as np
import pytest

from gpgpu_lessons import diagrams


def test_show_images_shows_each_image_and_where_two_differ():
    a = np.arange(12, dtype=np.uint8).reshape(3, 4)
    b = a.copy()
    b[a > 5] += 1
    fig = diagrams.show_images({"a": a, "rgb": np.stack([a] * 3, axis=2)})
    assert [ax.get_title() for ax in fig.axes] == ["a", "rgb"]
    np.testing.assert_array_equal(fig.axes[0].images[0].get_array(), a)
    fig = diagrams.show_images({"right": a, "raced": b}, differences=True)
    assert [ax.get_title() for ax in fig.axes] == ["right", "raced", "where they differ (black)"]
    np.testing.assert_array_equal(fig.axes[2].images[0].get_array(), np.where(a > 5, 0, 255))
    with pytest.raises(ValueError, match="compares two images, got 3"):
        diagrams.show_images({"a": a, "b": b, "c": a}, differences=True)


def test_where_different_is_black_where_any_channel_differs():
    a = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    b = a.copy()
    b[1, 2, 1] += 1
    expected = np.full((2, 4), 255, np.uint8)
    expected[1, 2] = 0
    np.testing.assert_array_equal(diagrams.where_different(a, b), expected)
