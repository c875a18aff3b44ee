"""The bench measures what users get (issue 25, item 3).

Per shape, the prepared launch's GPU time and the wrapper called back to back, each beside
CuPy's call; the worst shape of each family on both measures, with the issue's targets; the
host-cost table at small, middle and large sizes for every family (run here in the simulator on
tiny sizes: the rows and their fields, not the times, are what a test can check).
"""

import io

import pytest
from gpgpu_tools.bench import report, run
from gpgpu_tools.bench.families import FAMILIES
from gpgpu_tools.bench.progress import Progress
from gpgpu_tools.bench.record import Bench, HostCost, Result

from gpgpu_lessons import runtime
from gpgpu_lessons.timing import EVENTS, HOST_SYNC, Timing

simulator_only = pytest.mark.skipif(not runtime.is_simulator(), reason="the simulator's mode")


def timed(ms: float, nbytes: int, method=EVENTS) -> Timing:
    return Timing("t", [ms], nbytes, method)


def result(shape, label, fast_ms, cupy_ms, called_ms, cupy_called_ms) -> Result:
    """A float32 copy on `shape`, its two measures and CuPy's (bytes moved: read and write)."""
    nbytes = 8 * shape[0]
    found = Result("copy", "copy", "w", shape, "float32", label, True, "ok", cupy_name="c")
    found.fast, found.cupy = timed(fast_ms, nbytes), timed(cupy_ms, nbytes)
    found.called = timed(called_ms, nbytes, HOST_SYNC)
    found.cupy_called = timed(cupy_called_ms, nbytes, HOST_SYNC)
    return found


def bench() -> Bench:
    """Copies: fast launches everywhere, but the small call loses to CuPy's, the large one wins."""
    ceiling = timed(1.0, 8 * 2**25)
    return Bench(
        "GPU",
        "2026-11-27",
        "small",
        ["copy"],
        1.0,
        ceiling=ceiling,
        results=[
            result((2**20,), "small", 0.05, 0.04, 0.05, 0.02),  # 4 MB: under the call's target
            result((2**25,), "large", 1.0, 2.0, 1.25, 1.5),  # 134 MB, ahead of CuPy's call
            result((2**23,), "middle", 0.25, 0.5, 0.5, 0.4),  # 33.6 MB, behind CuPy's call
        ],
    )


def test_every_shape_shows_both_measures_beside_cupys_call():
    rows = {line.split()[2]: line.split() for line in report.table(bench()).splitlines()[2:]}
    header = report.table(bench()).splitlines()[1]
    assert "called ms" in header and "CuPy call" in header
    middle = rows["middle"]  # copy, 2^23, middle, MB, ms, GB/s, x copy, CuPy GB/s, x CuPy, ...
    assert middle[4] == "0.2500" and middle[8] == "2.00"  # the launch, twice CuPy's speed
    assert middle[9:13] == ["0.5000", "0.50", "0.4000", "0.80"]  # the call: 0.8x CuPy's call
    assert middle[13:] == ["ok", "BELOW"]
    assert rows["large"][13:] == ["ok", "ok"]
    assert rows["small"][13:] == ["BELOW"]  # 0.62x copy; 4 MB: the call has no target


def test_the_worst_shape_is_reported_on_both_measures_with_its_target():
    text = report.worst_table(bench())
    launch, called = text.split("as users call it")
    assert "  copy       2^20 " in launch  # the launch's worst: 0.62x copy
    assert ">= 1x CuPy's call from 16 MB" in called
    (line,) = [x for x in called.splitlines() if x.startswith("  copy")]
    assert line.split()[1] == "2^23"  # the call's worst: 0.5x copy
    assert line.endswith(" 0.50x copy  0.80x CuPy's call  BELOW")
    summary = report.summary(bench())["families"]["copy"]
    assert summary["worst shape"] == "2^20" and summary["worst shape as called"] == "2^23"
    assert summary["as called"] == {"of_copy": 0.5, "of_cupy": 0.8, "meets target": False}


def test_the_calls_target_applies_from_16_mb_and_a_failure_misses_it():
    small, large, middle = bench().results
    assert report.meets_called(small) is None
    assert report.meets_called(large) is True and report.meets_called(middle) is False
    middle.ok = False
    assert report.meets_called(middle) is False


def test_the_comparison_shows_the_host_cost_of_every_family_measured():
    measured = bench()
    measured.host_costs = [HostCost("copy", 4096, 30.0, 20.0, 10.0, 1, "copy", "small")]
    text = report.comparison(measured, [])
    assert "  copy host cost" in text and "1.50x bare" in text
    assert "(sum, dot: x CuPy from 2^25 elements)" in text


@simulator_only
def test_the_host_cost_table_runs_every_size_of_a_family_and_a_reduction():
    names = ["negative", "sum"]  # a 2-D family and one that returns a number: cheap to simulate
    costs = run.host_costs_of(names, None, Progress(6, io.StringIO(), live=False))
    assert [(c.family, c.size) for c in costs] == [
        (name, size) for name in names for size in run.TINY_HOST_SIZES
    ]
    for cost in costs:
        family = FAMILIES[cost.family]
        measured = [cost.wrapper_us, cost.bare_us, cost.prepare_us, cost.launch_us]
        assert all(isinstance(us, float) and us > 0 for us in measured), cost
        numbers = [cost.number_us, cost.bare_copy_us]
        assert all(isinstance(us, float) for us in numbers) == family.reduction, cost
        assert cost.cupy_us is None  # no CuPy in the simulator
    assert [c.elements for c in costs[:3]] == [1, 64, 961]  # squares of the tiny sizes
    assert [c.elements for c in costs[3:]] == list(run.TINY_HOST_SIZES.values())
    table = report.host_table(Bench("sim", "", "tiny", names, 0.0, host_costs=costs))
    rows = [line.split()[:2] for line in table.splitlines()[2:]]
    assert rows == [[c.kernel, c.size] for c in costs]


@pytest.mark.parametrize(
    "samples, calls, retaken",
    [
        ([[1.0, 1.1, 1.2]], 1, False),  # steady: one run
        ([[1.0, 3.0, 2.0], [1.0, 1.05, 1.1]], 2, True),  # a disturbance: taken again, the steadier
        ([[1.0, 1.1, 1.2, 1.25], [1.0, 3.0]], 1, False),
        ([[1.0, 2.0], [1.0, 4.0]], 2, True),  # both unsteady: the first, less so
    ],
)
def test_unsteady_samples_are_taken_again_once(monkeypatch, samples, calls, retaken):
    given = iter(samples)
    made = []

    def benchmark(launch, **options):
        made.append(options)
        return Timing("t", next(given), 8, HOST_SYNC, {})

    monkeypatch.setattr(run.timing, "benchmark", benchmark)
    got = run.steady(lambda: None, name="t", method=HOST_SYNC)
    assert len(made) == calls and all(o == {"name": "t", "method": HOST_SYNC} for o in made)
    assert got.extra.get("retaken", False) == retaken
    spreads = [max(s) / min(s) for s in samples[:calls]]
    assert max(got.samples_ms) / min(got.samples_ms) == min(spreads)
