"""The issue-25 GPU run (python -m gpgpu_tools.perf_run) in the simulator; its tables' numbers."""

import json

import pytest
from gpgpu_tools import perf_run
from gpgpu_tools.bench import dispatch, report
from gpgpu_tools.bench.record import Bench, HostCost, Result
from gpgpu_tools.cuda_c import yardstick

from gpgpu_lessons import runtime
from gpgpu_lessons.timing import HOST_SYNC, Timing

simulator_only = pytest.mark.skipif(not runtime.is_simulator(), reason="the simulator's mode")


@simulator_only
def test_the_run_checks_every_kernel_and_writes_its_records(tmp_path, capsys):
    assert perf_run.main(["--out", str(tmp_path), "--skip", "bench"]) == 0
    printed = capsys.readouterr().out
    assert "Numba's launch, us per call" in printed and "0 failed" in printed
    (perf,) = tmp_path.glob("perf-*.json")
    ways = json.loads(perf.read_text())["dispatch_us_per_call"]
    assert set(ways) == {"empty kernel", *perf_run.FAMILIES}
    assert all(isinstance(found["bare"], float) for found in ways.values())
    (stick,) = tmp_path.glob("yardstick-*.json")
    checked = json.loads(stick.read_text())["numba_checked"]
    assert set(checked) == set(yardstick.TWINS) and all(checked.values())
    assert set(checked) == {  # lesson 03's kernels once each, and the other spellings
        "copy (lesson 01)",
        "tile copy",
        "naive",
        "tiled",
        "padded",
        "padded, whole-row loads",
        "padded, full tiles unchecked",
        "padded, unsigned indices",
    }


def test_the_yardstick_table_divides_numba_by_its_c_twin():
    record = {
        "numba_ms": {"padded": [2.0, 2.0, 3.0], "padded, whole-row loads": [1.25]},
        "c": {"ms": {"cudaMemcpy": [1.0], "padded": [1.25, 1.0, 1.25]}},
    }
    rows = {row["kernel"]: row for row in yardstick.table_rows(record)}
    assert rows["padded"]["numba_over_c"] == 1.6 and rows["padded"]["c_x_memcpy"] == 0.8
    assert rows["padded, whole-row loads"]["numba_over_c"] == 1.0
    assert rows["padded"]["numba_x_memcpy"] == 0.5


def test_the_dispatch_table_shows_every_way_and_each_failure():
    text = dispatch.table(
        {"copy": {"bare": 21.0, "compiled launch": 9.5}, "sum": {"bare": 28.0, "x": "failed: E"}}
    )
    lines = text.splitlines()
    assert lines[2].split() == ["bare", "21.0", "28.0"]
    assert lines[3].split() == ["compiled", "launch", "9.5", "-"]
    assert "  sum, x: failed: E" in lines


def _timing(ms: float) -> Timing:
    return Timing("t", [ms], 10**6, HOST_SYNC)


def test_the_worst_shape_as_users_call_it_and_the_host_table():
    shape = (1000,)
    bench = Bench("GPU", "2026-01-01", "small", ["copy"], 1.0, ceiling=_timing(0.25))
    for label, called, cupy in (("fast", 0.5, 0.5), ("slow", 2.0, 1.0)):
        result = Result("copy", "copy", "w", shape, "float32", label, True, "ok")
        result.fast, result.called, result.cupy_called = (
            _timing(0.3),
            _timing(called),
            _timing(cupy),
        )
        bench.results.append(result)
    worst = report.worst_called(bench)["copy"]
    assert worst.label == "slow" and report.called_of_cupy(worst) == 0.5
    assert report.called_of_copy(bench, worst) == 0.125
    bench.host_costs = [
        HostCost("sum", 4096, 30.0, 20.0, 10.0, 1, "sum", "small", 100.0, 21.0, 45.0, 30.0, 25.0)
    ]
    (line,) = [x for x in report.host_table(bench).splitlines() if x.startswith("  sum")]
    assert line.split()[-4:] == ["30.0", "1.50", "25.0", "BELOW"]  # 45 / 30 > 1.25
    assert line.split()[3:8] == ["30.0", "100.0", "21.0", "20.0", "1.50"]
    assert "Worst shape of each family as users call it" in report.worst_table(bench)
