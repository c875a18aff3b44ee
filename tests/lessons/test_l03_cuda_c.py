"""Lesson 03's table beside CUDA C shows each recorded yardstick run as it was recorded."""

from __future__ import annotations

import json

from gpgpu_lessons.l03_bank_conflicts import profiling


def test_every_recorded_yardstick_row_is_shown_as_recorded():
    paths = sorted(profiling.YARDSTICK.glob("*.json"))
    assert paths, "no yardstick recorded: run python -m gpgpu_tools.perf_run on a GPU"
    for path in paths:
        record = json.loads(path.read_text())
        rows = profiling.cuda_c_rows(record)
        assert [r[0] for r in rows] == [r["kernel"] for r in record["table"]]
        for shown, recorded in zip(rows, record["table"]):
            assert shown[1:3] == [recorded["numba_ms"], recorded["c_ms"]]
            assert shown[3] == f"{recorded['numba_over_c']:.2f}x"
            assert abs(recorded["numba_over_c"] - recorded["numba_ms"] / recorded["c_ms"]) < 0.01


def test_the_table_shows_where_it_was_recorded(monkeypatch):
    import IPython.display

    from gpgpu_lessons import notebook

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda md: shown.append(md.data))
    monkeypatch.setattr(notebook, "display", lambda md: shown.append(md.data))
    profiling.beside_cuda_c()
    shown = "\n".join(shown)
    assert "Beside CUDA C" in shown and "gpgpu_tools.perf_run" in shown
    assert "padded, unsigned indices" in shown
