"""notebook.check: NaN where the reference has NaN, dtype tolerances, errors that say where."""

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


def test_durations_and_counts_read_like_people_write_them():
    assert notebook.duration(13_830) == "13.8 s"
    assert notebook.duration(1.74) == "1.74 ms"
    assert notebook.duration(0.0521) == "52.1 µs"
    assert notebook.duration(0.00083) == "830 ns"
    assert notebook.count(100) == "100" and notebook.count(10_000) == "10,000"
    assert notebook.count(2**28) == "2^28" and notebook.count(1000) == "1,000"


def test_show_table_shows_the_recorded_table_in_the_simulator(tmp_path, monkeypatch, capsys):
    import json

    from gpgpu_lessons import results, runtime

    monkeypatch.setenv(results.RECORD_ENV, str(tmp_path))
    (tmp_path / "nvidia-h200.json").write_text(
        json.dumps(
            {
                "format": 1,
                "gpu": "NVIDIA H200",
                "date": "2026-11-22",
                "device": {},
                "software": {},
                "experiments": {
                    "05_atomics_vs_reduction/demo": {
                        "kind": "table",
                        "title": "Sum",
                        "size": "2^28 float32",
                        "columns": ["variant", "ms"],
                        "rows": [["fast", 0.24]],
                    }
                },
            }
        )
    )
    shown = results.experiment(
        "05_atomics_vs_reduction/demo",
        {
            "kind": "table",
            "title": "Sum",
            "size": "256 float32",
            "columns": ["variant", "ms"],
            "rows": [["fast", 9.0]],
        },
    )
    if runtime.MODE == runtime.SIMULATOR:
        assert not shown.live and shown.title == "Sum · 2^28 float32"
        assert shown.label == "recorded on NVIDIA H200, 2026-11-22" and shown.data["rows"] == [
            ["fast", 0.24]
        ]
    else:
        assert shown.live and shown.title == "Sum · 256 float32"
