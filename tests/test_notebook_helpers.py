"""notebook.check: NaN where the reference has NaN, tolerances that fit the dtype, errors that say where."""
import numpy as np
import pytest

from gpgpu_lessons import notebook


def test_nan_in_the_same_places_matches(capsys):
    expected = np.array([1.0, np.nan, 3.0], dtype=np.float32)
    notebook.check("kernel", expected.copy(), expected)
    assert capsys.readouterr().out == "kernel matches NumPy: True\n"


def test_nan_where_the_reference_has_a_number_fails():
    with pytest.raises(AssertionError, match="1 of 3 elements differ; the first at index \\(1,\\)"):
        notebook.check("kernel", np.array([1.0, np.nan, 3.0]), np.array([1.0, 2.0, 3.0]))


def test_integers_are_compared_exactly():
    with pytest.raises(AssertionError, match="got 4, expected 3"):
        notebook.check("histogram", np.array([1, 4]), np.array([1, 3]))


def test_float32_rounding_passes_and_a_real_error_does_not():
    expected = np.linspace(0, 1, 100, dtype=np.float32)
    notebook.check("sum", expected * np.float32(1 + 2e-7), expected)
    with pytest.raises(AssertionError):
        notebook.check("sum", expected + np.float32(1e-3), expected)


def test_tolerances_fit_the_dtype():
    assert notebook.default_tolerance(np.uint8) == (0.0, 0.0)
    rtol32, _ = notebook.default_tolerance(np.float32)
    rtol64, atol64 = notebook.default_tolerance(np.float64)
    assert rtol32 > rtol64 >= 1e-6 and atol64 < 1e-12


def test_shape_mismatch_is_named():
    with pytest.raises(AssertionError, match=r"shape \(2,\) != \(3,\)"):
        notebook.check("copy", np.zeros(2), np.zeros(3))
