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


def displayed(monkeypatch, show) -> str:
    """The Markdown `show()` displays, one display a line."""
    import IPython.display

    from gpgpu_lessons import notebook

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda md: shown.append(md.data))
    monkeypatch.setattr(notebook, "display", lambda md: shown.append(md.data))
    show()
    return "\n".join(shown)


def test_the_table_shows_where_it_was_recorded(monkeypatch):
    shown = displayed(monkeypatch, profiling.beside_cuda_c)
    assert "Beside CUDA C" in shown and "gpgpu_tools.perf_run" in shown
    records = profiling.yardstick_records()  # this GPU's, or every recorded GPU's
    assert records and all(f"| {r['kernel']} |" in shown for rec in records for r in rec["table"])


def test_the_ptx_table_shows_the_recorded_spellings(monkeypatch):
    shown = displayed(monkeypatch, profiling.index_ptx)
    assert "The padded transpose in PTX" in shown and "gpgpu_tools.cuda_c.index_ptx" in shown
    assert "min.u64 · mul.lo.s64" in shown


def test_unsigned_indices_drop_every_wraparound_in_every_record():
    """What the Trick 3 slide says: the unsigned spelling has no wraparound and fewer lines."""
    for path in sorted(profiling.YARDSTICK.glob("*.json")):
        kernels = json.loads(path.read_text())["ptx"]["kernels"]
        signed, unsigned = kernels["padded"], kernels["padded, unsigned indices"]
        assert signed["wraparounds"] > 0 and unsigned["wraparounds"] == 0, path.name
        assert unsigned["instructions"] < signed["instructions"], path.name
        assert len(unsigned["second_row"]) < len(signed["second_row"]), path.name
