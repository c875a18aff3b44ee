"""The bench (python -m gpgpu_tools.bench) and the bulk/edge split of every fast family.

The bench's simulator mode checks every kernel on its tiny sweep; the sweep a GPU runs holds
the awkward shapes the issue names, all above L2; the recorded format survives a round trip;
the reports rank worst first. Hypothesis draws many small shapes per fast family (edge-only
ones smaller than one tile or word, 1 x N, N x 1, H x W x 3) and compares with NumPy; the
simulator runs one Python thread per CUDA thread, so shapes stay tiny and examples few.
"""

import io
import json

import numpy as np
import pytest
from gpgpu_tools.bench import __main__ as bench_main
from gpgpu_tools.bench import data, record, report, run, shapes
from gpgpu_tools.bench.families import FAMILIES
from gpgpu_tools.bench.progress import Progress
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons import runtime
from gpgpu_lessons.l01_coalescing import fast as coalescing
from gpgpu_lessons.l02_shared_memory import fast as images
from gpgpu_lessons.l03_bank_conflicts import fast as transposes
from gpgpu_lessons.l04_constant_memory import fast as filters
from gpgpu_lessons.l04_constant_memory import reference as filter_reference
from gpgpu_lessons.l04_constant_memory.filters import GAUSSIAN_5
from gpgpu_lessons.l05_atomics_vs_reduction import fast as reductions
from gpgpu_lessons.timing import Timing

simulator_only = pytest.mark.skipif(not runtime.is_simulator(), reason="the simulator's mode")
# the simulator runs one Python thread per CUDA thread: fewer examples where blocks are large
RARE = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOME = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
H200_L2 = 60 * 2**20


# ---- the command -----------------------------------------------------------------------------


@simulator_only
def test_simulator_mode_checks_every_kernel_and_times_nothing(capsys):
    assert bench_main.main([]) == 0
    printed = capsys.readouterr().out
    for family in FAMILIES.values():
        for kernel in family.kernels:
            assert f"\n  {kernel.name:16} " in printed, kernel.name
    assert "FAILED" not in printed and "GB/s" not in printed.split("times nothing")[0]
    assert "The simulator times nothing" in printed
    assert ", 0 failed; the bench took" in printed


@simulator_only
def test_record_needs_a_gpu(capsys):
    assert bench_main.main(["--record", "--families", "copy"]) == 2
    assert "needs a GPU" in capsys.readouterr().err


def test_unknown_families_are_named():
    with pytest.raises(SystemExit):
        bench_main.parse(["--families", "transpose,fft"])
    assert bench_main.parse(["--families", "sum, dot"]).families == ["sum", "dot"]


def test_a_wrong_element_at_the_edge_of_a_large_output_is_caught(monkeypatch):
    monkeypatch.setattr(data, "FULL", 1000)  # 5,003 elements: checked at sampled positions
    monkeypatch.setattr(data, "SPREAD", 100)
    family, n = FAMILIES["copy"], 5003
    (d_a,) = family.make((n,), seed=1)
    a = d_a.copy_to_host()
    assert 0 < a.min() and a.max() < 1 and len(np.unique(a)) > 4900
    wrong = a.copy()
    wrong[-2] += 1  # the vector edge: the last elements
    ok, text = run.check_elementwise(family.kernels[0], (d_a,), cuda.to_device(wrong), 0)
    assert not ok and f"first at {n - 2}" in text and "a sample of" in text
    ok, text = run.check_elementwise(family.kernels[0], (d_a,), cuda.to_device(a), 0)
    assert ok and text.startswith("a sample of")


def test_poison_overwrites_every_byte_and_positions_cover_the_edges():
    d = data.random_array((5, 7), np.uint8, seed=3)
    before = d.copy_to_host()
    data.poison(d)
    assert (d.copy_to_host() != before).mean() > 0.9
    y, x = data.positions((3000, 700))
    assert {0, 2999} <= set(y) and {0, 699} <= set(x) and len(y) == len(x) > data.SPREAD
    assert data.positions((4, 5))[0].size == 20  # small outputs: everywhere


def test_a_reduction_is_checked_against_float64():
    d_a = data.random_array((1001,), np.float32, seed=2)
    total = cuda.to_device(np.array([d_a.copy_to_host().astype(np.float64).sum()], np.float32))
    assert run.check_reduction((d_a,), total, None)[0]
    total = cuda.to_device(total.copy_to_host() + 0.01)
    ok, text = run.check_reduction((d_a,), total, None)
    assert not ok and "NOT within" in text


def test_progress_writes_lines_to_a_log_and_redraws_a_terminal():
    log = io.StringIO()
    bar = Progress(3, log, live=False)
    bar.step("transpose 1 x 1")
    bar.step("copy 3")
    bar.done()
    lines = log.getvalue().splitlines()
    assert len(lines) == 3 and "1/3" in lines[0] and "copy 3" in lines[1] and "done in" in lines[2]
    terminal = io.StringIO()
    bar = Progress(2, terminal, live=True)
    bar.step("a")
    bar.step("b")
    bar.done()
    assert terminal.getvalue().count("\r") >= 2 and terminal.getvalue().endswith("\n")


# ---- the sweep -------------------------------------------------------------------------------


def test_the_gpu_sweep_holds_the_awkward_shapes_all_above_l2():
    for family in FAMILIES.values():
        cases = shapes.sweep(family, "full", l2_bytes=H200_L2, free_bytes=140 * 10**9)
        if family.reduction:
            lengths = [c.elements for c in cases]
            assert min(lengths) == 2**16 and max(lengths) == 2**30 and 10**6 in lengths
            continue
        itemsize = np.dtype(family.dtype).itemsize
        assert all(c.elements * itemsize >= 4 * H200_L2 for c in cases), family.name
        found = [c.shape for c in cases]
        if family.name == "copy":
            assert {n % 4 for (n,) in found} == {0, 1, 2, 3}  # 16-byte words and not
            continue
        two_d = [s for s in found if len(s) == 2]
        assert (1, two_d[-1][0]) in found and (two_d[-1][0], 1) in found  # 1 x N and N x 1
        assert any(shapes.is_prime(h) and shapes.is_prime(w) for h, w in two_d)
        assert any(w % 2 and h % 2 for h, w in two_d)
        assert any(w % 4 == 2 for _, w in two_d)
        if family.name in ("negative", "flips"):
            assert any(len(s) == 3 and s[2] == 3 and s[1] % 2 for s in found)
            assert any(w % 16 and w % 4 == 0 for _, w in two_d)


def test_the_sums_stop_where_memory_ends():
    cases = shapes.sweep(FAMILIES["dot"], "full", free_bytes=4 * 2 * 4 * 2**24)
    assert max(c.elements for c in cases) == 2**24


def test_the_tiny_sweep_has_edge_only_shapes_and_the_small_one_is_a_subset():
    for family in FAMILIES.values():
        tiny = shapes.sweep(family, "tiny")
        assert any(c.elements <= 35 for c in tiny), family.name
        full = {c.shape for c in shapes.sweep(family, "full", l2_bytes=H200_L2)}
        small = shapes.sweep(family, "small", l2_bytes=H200_L2)
        assert 0 < len(small) < len(full)


# ---- records and reports ---------------------------------------------------------------------


def timed(ms, nbytes):
    return Timing("t", [ms, ms * 1.02, ms * 0.98], nbytes, extra={"batch": 4})


def fake_bench(gpu="NVIDIA H200", slow=1.0) -> record.Bench:
    """A run as a GPU would record it: transposes, one failure, sums beside CuPy."""
    mb = 256 * 10**6
    results = [
        record.Result(
            "transpose",
            "transpose",
            "w",
            (8192, 8192),
            "float32",
            "lessons'",
            True,
            "ok",
            timed(0.14 * slow, mb),
            timed(0.5, mb),
            "cupy",
        ),
        record.Result(
            "transpose",
            "transpose",
            "w",
            (777, 80973),
            "float32",
            "thin",
            True,
            "ok",
            timed(0.25 * slow, mb),
            timed(0.5, mb),
            "cupy",
        ),
        record.Result(
            "flips",
            "flip vertical",
            "w",
            (9, 1),
            "uint8",
            "N x 1",
            False,
            "not run",
            error="ValueError: grid too large",
        ),
    ]
    for k, (fast_ms, cupy_ms) in enumerate([(0.01, 0.008), (0.02, 0.018), (0.1, 0.1), (1, 0.97)]):
        n = 2 ** (16 + 4 * k)
        results.append(
            record.Result(
                "sum",
                "sum",
                "w",
                (n,),
                "float32",
                "power of 2",
                True,
                "ok",
                timed(fast_ms, 4 * n),
                timed(cupy_ms, 4 * n),
                "cupy",
            )
        )
    return record.Bench(
        gpu=gpu,
        date="2026-11-23",
        sizes="full",
        families=["transpose", "flips", "sum"],
        seconds=201.5,
        device={"name": gpu},
        software={"cupy": "13.6.0"},
        ceiling=timed(0.12, mb),
        results=results,
        host_costs=[record.HostCost("sum", 65536, 40.0, 12.5, 9.0, 1)],
    )


def test_the_record_survives_a_round_trip_and_refuses_other_formats(tmp_path):
    bench = fake_bench()
    path = record.save(bench, record.recorded_path(bench.gpu, tmp_path), report.summary(bench))
    assert path.name == "nvidia-h200.json"
    content = json.loads(path.read_text())
    assert content["format"] == record.FORMAT and content["summary"]["failed"] == 1
    assert record.load(path) == bench
    assert record.recorded(tmp_path) == [bench]
    content["format"] = 99
    path.write_text(json.dumps(content))
    with pytest.raises(ValueError, match="format 99"):
        record.load(path)


@simulator_only
def test_the_simulator_shows_the_recorded_tables(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(record, "RECORDED_DIR", tmp_path)
    record.save(fake_bench(), record.recorded_path("NVIDIA H200", tmp_path))
    assert bench_main.main(["--families", "sum"]) == 0
    shown = capsys.readouterr().out.split("The simulator times nothing")[1]
    assert "NVIDIA H200, 2026-11-23, full sweep" in shown and "2^28" in shown
    assert "transpose" not in shown  # only the families asked for
    assert "sum crossover" in shown and "Host cost per call" in shown


def test_shipped_bench_records_load():
    for bench in record.recorded():
        assert bench.results and bench.ceiling is not None and bench.sizes == "full"


def test_reports_rank_worst_first_and_find_the_crossover(tmp_path):
    bench = fake_bench()
    worst = report.worst(bench)
    assert worst["transpose"].shape == (777, 80973) and not worst["flips"].ok
    assert report.crossover(bench, "sum") == 2**24  # 0.95x CuPy from here (0.97 at 2^28)
    assert report.meets(bench, bench.results[0]) is True  # 0.86x copy and 3.6x CuPy
    assert report.meets(bench, bench.results[1]) is False
    text = report.table(bench)
    assert text.index("777 x 80973") < text.index("8192 x 8192")
    assert "FAILED: ValueError" in text
    assert "3.20" in report.host_table(bench) and "BELOW" in report.host_table(bench)
    compared = report.comparison(bench, [fake_bench("NVIDIA H100", slow=1.3)])
    assert "this run" in compared and "NVIDIA H100 (2026-11-23, full)" in compared
    assert "0.48 / 0.67" in compared and "2^24" in compared
    report.plot(bench, tmp_path / "bench.png")
    assert (tmp_path / "bench.png").stat().st_size > 10_000


# ---- the bulk/edge split of every fast family, against NumPy ---------------------------------


def matrices(longest=70, shortest=36):
    """(rows, columns): any small shape, 1 x N, N x 1."""
    side, short = st.integers(1, longest), st.integers(1, shortest)
    return st.one_of(
        st.tuples(short, short), st.tuples(st.just(1), side), st.tuples(side, st.just(1))
    )


def random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.uint8:
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    return rng.random(shape, dtype=np.float32) + np.float32(0.5)


@FEW
@given(shape=matrices(40, 32))
@example(shape=(1, 1)).via("one element")
@example(shape=(33, 3)).via("a full tile row and an edge")
def test_transpose_of_any_shape(shape):
    a = random(shape, np.float32)
    assert np.array_equal(transposes.transpose(a), a.T)


@FEW
@given(h=st.integers(1, 12).map(lambda k: 2 * k), w=st.integers(1, 12).map(lambda k: 2 * k))
def test_wide_transpose_bulk_and_edge_tiles(h, w):
    a = random((h, w), np.float32)  # 8 x 8 tiles of 2-float runs: many tiles, partial ones
    assert np.array_equal(transposes.wide(a, block=(4, 2), vec=2), a.T)


def images_of_any_shape(longest=70):
    return st.tuples(matrices(longest), st.sampled_from([(), (3,)])).map(lambda s: s[0] + s[1])


@SOME
@given(shape=images_of_any_shape())
@example(shape=(1, 1, 3)).via("one RGB pixel")
@example(shape=(2, 35)).via("words and a byte edge")
def test_negative_of_any_image(shape):
    a = random(shape, np.uint8)
    assert np.array_equal(images.negative_fast(a), 255 - a)


@FEW
@given(shape=st.tuples(st.integers(1, 6), st.integers(1, 70), st.sampled_from([(), (3,)])))
@example(shape=(1, 1, ())).via("one pixel")
@example(shape=(3, 40, (3,))).via("RGB rows of whole words and more")
def test_flips_of_wide_images(shape):
    a = random(shape[:2] + shape[2], np.uint8)
    assert np.array_equal(images.flip_horizontal_fast(a), a[:, ::-1])
    assert np.array_equal(images.flip_vertical_fast(a), a[::-1])


@RARE
@given(h=st.integers(1, 16), channels=st.sampled_from([(), (3,)]))
def test_flips_of_tall_narrow_images(h, channels):
    a = random((h, 1) + channels, np.uint8)
    assert np.array_equal(images.flip_horizontal_fast(a), a[:, ::-1])
    assert np.array_equal(images.flip_vertical_fast(a), a[::-1])


@SOME
@given(n=st.integers(1, 300), dtype=st.sampled_from([np.float32, np.float64, np.int32]))
@example(n=1, dtype=np.float32).via("one element")
@example(n=3, dtype=np.float32).via("less than one 16-byte word")
def test_copy_of_any_length(n, dtype):
    a = (np.random.default_rng(n).random(n) * 1000 + 1).astype(dtype)
    assert np.array_equal(coalescing.copy(a, block=32), a)


@FEW
@given(shape=matrices(24, 20))
@example(shape=(1, 1)).via("one pixel")
def test_filter_bulk_and_border_tiles(shape):
    a = random(shape, np.float32)
    small = filters.Tile(8, 2, 4, 2)  # 8 x 16 outputs per block: many blocks, interior ones too
    got = filters.filter2d(a, GAUSSIAN_5, tile=small)
    want = filter_reference.reference(a, GAUSSIAN_5)
    assert np.abs(got - want).max() <= filter_reference.tolerance(a, GAUSSIAN_5)


@FEW
@given(n=st.integers(1, 1200))
@example(n=1).via("one element")
@example(n=3).via("less than one 4-float load")
def test_sum_bulk_and_edge(n):
    a = random(n, np.float32, seed=n)
    got = reductions.sum_grid_stride(a, block=32, items=2, blocks=2)  # a registered small launch
    assert abs(got - a.astype(np.float64).sum()) <= 1e-5 * a.sum() + 1e-6


@RARE
@given(n=st.integers(1, 1200))
def test_sum_and_dot_with_the_tuned_launch(n):
    x, y = random(n, np.float32, seed=n), random(n, np.float32, seed=n + 1)
    want = float(np.dot(x.astype(np.float64), y.astype(np.float64)))
    assert abs(coalescing.dot(x, y) - want) <= 1e-5 * want
    assert abs(reductions.sum_grid_stride(x) - x.astype(np.float64).sum()) <= 1e-5 * x.sum()
