"""Lesson 03's counts, traced from its kernels: wavefronts and sectors per request, the lanes
of a column read, seed 003's example, the pictures; Nsight Compute's counters beside them, and
seed 000's table beside this run's."""

from types import SimpleNamespace

import numpy as np
import pytest

from gpgpu_lessons import results
from gpgpu_lessons.l03_bank_conflicts import banks, figures, profiling
from gpgpu_lessons.timing import SIMULATED, Timing
from gpgpu_lessons.trace import trace_kernel

SHARED_LD, SHARED_ST = "shared ld wavefronts / instr", "shared st wavefronts / instr"
GLOBAL_LD, GLOBAL_ST = "global ld sectors / request", "global st sectors / request"


@pytest.mark.parametrize(
    "name, expected",
    [
        ("copy 32x8", {GLOBAL_LD: 4, GLOBAL_ST: 4}),
        ("naive 32x8", {GLOBAL_LD: 4, GLOBAL_ST: 32}),  # a column of out: a sector per lane
        ("tiled 32x8", {SHARED_LD: 32, SHARED_ST: 1, GLOBAL_LD: 4, GLOBAL_ST: 4}),
        ("padded 32x8", {SHARED_LD: 1, SHARED_ST: 1, GLOBAL_LD: 4, GLOBAL_ST: 4}),
        # two 4-byte neighbours of a tile column per thread: lanes 2 rows apart meet (2-way)
        ("wide 32x16, 64x64 tile, 8 B", {SHARED_LD: 2, SHARED_ST: 2, GLOBAL_LD: 8, GLOBAL_ST: 8}),
        ("naive 16x16 (seed)", {GLOBAL_LD: 4, GLOBAL_ST: 16}),
        ("tiled 16x16 (seed)", {SHARED_LD: 8, SHARED_ST: 1, GLOBAL_LD: 4, GLOBAL_ST: 4}),
        # a warp spans two tile columns: lane 31 reads slot 15 * 17 + 1 = 256, bank 0, as lane 0
        ("padded 16x16 (seed)", {SHARED_LD: 2, SHARED_ST: 2, GLOBAL_LD: 4, GLOBAL_ST: 4}),
        # 8-byte elements: 16 lanes a wavefront, so 2 wavefronts is conflict-free
        ("fast.transpose, float64 (32 x 33 tile)", {SHARED_LD: 2, SHARED_ST: 2, GLOBAL_ST: 8}),
    ],
)
def test_counts_per_request_traced_from_the_kernels(name, expected):
    counts = banks.per_request(banks.trace(name))
    assert {k: counts[k][0] for k in expected} == expected
    if SHARED_LD not in expected:
        assert SHARED_LD not in counts  # no shared memory at all
    assert all(hazard.kind != "RAW" for hazard in banks.trace(name).hazards)


def test_conflict_ways_of_the_shared_lines():
    assert banks.ways(banks.trace("tiled 32x8")) == 32
    assert banks.ways(banks.trace("padded 32x8")) == 1
    assert banks.ways(banks.trace("padded 16x16 (seed)"), "store") == 2
    assert banks.ways(banks.trace("fast.transpose, float64 (32 x 33 tile)")) == 1
    with pytest.raises(ValueError, match="0 shared-memory load lines"):
        banks.shared_line(banks.trace("naive 32x8"))
    with pytest.raises(KeyError, match="not one of the lesson's launches"):
        banks.trace("transpose_tiled")


def test_the_costliest_line_of_each_kernel():
    assert banks.costliest(banks.trace("copy 32x8")) == (GLOBAL_LD, 4.0, 4.0)
    assert banks.costliest(banks.trace("naive 32x8")) == (GLOBAL_ST, 32.0, 4.0)
    assert banks.costliest(banks.trace("tiled 32x8")) == (SHARED_LD, 32.0, 1.0)
    assert banks.costliest(banks.trace("padded 32x8"))[0] == SHARED_LD  # all ideal: shared first


def test_the_lanes_of_a_column_read():
    tiled = banks.column_read(banks.trace("tiled 32x8"))
    assert tiled[:3] == [(0, (0, 0), 0, 0), (1, (1, 0), 32, 0), (2, (2, 0), 64, 0)]
    assert {bank for *_, bank in tiled} == {0} and len(tiled) == 32
    padded = banks.column_read(banks.trace("padded 32x8"))
    assert padded[:3] == [(0, (0, 0), 0, 0), (1, (1, 0), 33, 1), (2, (2, 0), 66, 2)]
    assert sorted(bank for *_, bank in padded) == list(range(32))
    seed = banks.column_read(banks.trace("padded 16x16 (seed)"))
    assert seed[16][1] == (0, 1) and seed[15][1] == (15, 0)  # lanes 16-31: the next column


def test_slot_banks_follow_the_tile_shape():
    padded = banks.slot_banks(banks.trace("padded 32x8"))
    assert padded.shape == (32, 33)
    rows, cols = np.indices(padded.shape)
    np.testing.assert_array_equal(padded, (rows * 33 + cols) % 32)
    wide = banks.slot_banks(banks.trace("fast.transpose, float64 (32 x 33 tile)"))
    assert wide[0, :3].tolist() == [0, 2, 4]  # 8-byte slots: two banks each


def test_seed_003_4x4_tiles_on_an_8x8_matrix():
    """Seed 003 works the 4x4 tile (size + 1 = 5 slots a row) through by hand: its tables,
    from the trace of banks.SEED_003 (the notebook's cell reads them the same way)."""
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    out = np.zeros_like(a)
    traced = trace_kernel(banks.SEED_003, (2, 2), (4, 4), a, out)
    np.testing.assert_array_equal(out, a.T)
    load = banks.shared_line(traced, "load").line
    store = next(r.line for r in traced.lines if (r.space, r.op) == ("global", "store"))

    def first_8(line, space, op, block, width):
        lanes = traced.lanes(line, space=space, op=op, block=block)[:8]
        return [width * r + c for _, _, (r, c), *_ in lanes]

    blocks = [(0, 0), (0, 1), (1, 1)]
    assert all(
        first_8(load, "shared", "load", b, 5) == [0, 5, 10, 15, 1, 6, 11, 16] for b in blocks
    )
    assert [first_8(store, "global", "store", b, 8) for b in blocks] == [  # index_out
        [0, 1, 2, 3, 8, 9, 10, 11],
        [4, 5, 6, 7, 12, 13, 14, 15],
        [36, 37, 38, 39, 44, 45, 46, 47],
    ]


def test_launch_step_is_the_wrappers_own_launch():
    step = banks.launch_step(banks.KERNELS["padded 32x8"][0])
    assert step.kernel.__name__ == "transpose_padded"
    assert tuple(step.block) == (32, 8) and tuple(step.grid)[:2] == (2, 2)


def test_bank_picture_draws_the_traced_tiles():
    fig = figures.bank_picture()
    titles = [ax.get_title() for ax in fig.axes]
    assert "32-way" in titles[0] and "1-way" in titles[1] and "2-way" in titles[2]
    assert fig.get_size_inches()[0] == 12


def test_traced_and_measured_puts_the_tracer_beside_the_gpu(monkeypatch):
    def timing(name, ms):
        return Timing(name, [ms], bytes_moved=2**29)

    measured = {"naive 32x8": timing("naive 32x8", 1.0), "tiled 32x8": timing("tiled 32x8", 0.3)}
    ceiling = timing("device-to-device copy", 0.14)
    recorded = results.Shown(
        {
            "title": "recorded title",
            "size": "8192 x 8192 float32",
            "ceiling": ceiling.as_dict(),
            "timings": [t.as_dict() for t in measured.values()],
        },
        "recorded on GPU, 2026-01-01",
        live=False,
    )
    monkeypatch.setattr(results, "experiment", lambda key, data: recorded)
    fig = figures.traced_and_measured(measured, title="t", size="s", ceiling=ceiling)
    left, right = fig.axes
    assert "recorded title · 8192 x 8192 float32" in left.get_title(loc="left")
    assert [t.get_text() for t in left.get_yticklabels()] == ["tiled 32x8", "naive 32x8"]
    texts = [t.get_text() for t in left.texts]
    assert any("shared ld wavefronts: 32, ideal 1" in t for t in texts)
    assert any("global st sectors: 32, ideal 4" in t for t in texts)
    assert any("GB/s" in t.get_text() for t in right.texts)
    monkeypatch.setattr(
        results, "experiment", lambda key, data: results.Shown(data, "simulator", live=True)
    )
    simulated = {n: Timing(n, [1.0], 2**20, clock=SIMULATED) for n in measured}
    fig = figures.traced_and_measured(simulated, title="t", size="s", ceiling=ceiling)
    assert "recorded yet" in fig.axes[1].texts[0].get_text()


def test_block_order_picture_draws():
    fig = figures.block_order_picture(tiles=4, groups=(1, 2), first=6)
    assert len(fig.axes) == 4 and "group 2" in fig.axes[2].get_title()


def csv_line(*fields) -> str:
    return ",".join(f'"{field}"' for field in fields)


HEADER = csv_line(
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "Section Name",
    "Metric Name",
    "Metric Unit",
    "Metric Value",
)


def sample_row(kernel_id, name, metric, unit, value) -> str:
    """One metric of one kernel, as ncu --csv prints it (launch details made up)."""
    return csv_line(
        kernel_id,
        "123",
        "python3.12",
        "127.0.0.1",
        name,
        "1",
        "7",
        "(32, 8, 1)",
        "(128, 128, 1)",
        "0",
        "9.0",
        "Command line profiler metrics",
        metric,
        unit,
        value,
    )


# A FORMAT SAMPLE, not a measurement: the layout of `ncu --csv --print-units base` output, with
# made-up numbers, ncu's own messages and the program's output mixed in.
NCU_FORMAT_SAMPLE = (
    "\n".join(
        [
            "==PROF== Connected to process 123 (/usr/bin/python3.12)",
            "gpgpu_lessons: running on the GPU (NVIDIA H200): made-up line.",
            '==PROF== Profiling "copy_or_transpose_direct": 0%....50%....100% - 3 passes',
            HEADER,
            sample_row(
                0, "copy_or_transpose_direct", "gpu__time_duration.sum", "nsecond", "12,345"
            ),
            sample_row(
                0,
                "copy_or_transpose_direct",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                "sector",
                "1,600",
            ),
            sample_row(
                0,
                "copy_or_transpose_direct",
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                "",
                "50",
            ),
            sample_row(
                1,
                "transpose_through_shared",
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                "",
                "n/a",
            ),
        ]
    )
    + "\n"
)


def test_parse_ncu_csv_format_sample():
    kernels = profiling.parse_csv(NCU_FORMAT_SAMPLE)
    assert [k["id"] for k in kernels] == [0, 1]
    assert kernels[0]["name"] == "copy_or_transpose_direct"
    assert kernels[0]["metrics"]["gpu__time_duration.sum"] == 12345
    assert kernels[0]["metrics"]["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == 1600
    assert kernels[1]["metrics"]["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] is None
    with pytest.raises(ValueError, match="no ncu CSV table"):
        profiling.parse_csv("==PROF== nothing profiled\n")


def test_kernel_names_are_checked_against_ncus():
    names = [profiling.kernel_name(profiling.wrapper_of(name)) for _, name, _ in profiling.LAUNCHES]
    assert names[:4] == ["copy", "transpose_naive", "transpose_tiled", "transpose_padded"]
    assert names[4] == "transpose_wide" and len(set(names)) == len(names)
    shown = "transpose_padded[v1,cw51cXTLSUwv1sDUaKthqaNgoKmjgEhasCBDCg1bcEDrKAB](Array<float, 2>)"
    assert profiling._base_name(shown) == "transpose_padded"
    assert (
        profiling._base_name("_direct_kernel::copy_or_transpose_direct[v6,cw51](Array)")
        == "copy_or_transpose_direct"
    )
    kernels = [{"id": i, "name": f"{n}[v1](Array)", "metrics": {}} for i, n in enumerate(names)]
    assert len(profiling.table(kernels, names)["rows"]) == len(names)
    swapped = [kernels[1], kernels[0], *kernels[2:]]
    with pytest.raises(ValueError, match="LAUNCHES expects 'copy'"):
        profiling.table(swapped, names)


def test_counter_table_records_the_measured_counters():
    kernels = [
        {
            "id": i,
            "name": "k",
            "metrics": {
                "gpu__time_duration.sum": 1000.0,
                "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 32.0,
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 1.0,
            },
        }
        for i in range(len(profiling.LAUNCHES))
    ]
    data = profiling.table(kernels)
    assert data["kind"] == "table" and len(data["rows"]) == len(profiling.LAUNCHES)
    assert data["title"] and data["size"] == "4096 x 4096 float32; the seed's kernels 1080 x 1920"
    naive = data["rows"][1]
    assert naive[:3] == ["naive 32x8", "4096 x 4096", 1.0]
    assert naive[data["columns"].index(GLOBAL_ST)] == 32.0
    assert naive[data["columns"].index(SHARED_LD)] is None  # not measured
    with pytest.raises(ValueError, match="expected"):
        profiling.table(kernels[:2])


def test_the_notebook_table_puts_the_tracer_beside_ncu():
    predicted = profiling.predictions()
    assert [label for label, *_ in profiling.LAUNCHES] == list(predicted)
    assert predicted["tiled 32x8"][SHARED_LD] == 32 and predicted["naive 32x8"][GLOBAL_ST] == 32
    header, rows = profiling.summary(None, predicted)  # nothing recorded: the tracer's alone
    assert header == [
        "kernel",
        f"{SHARED_LD} (ncu)",
        "tracer",
        f"{SHARED_ST} (ncu)",
        "tracer",
        f"{GLOBAL_ST} (ncu)",
        "tracer",
    ]
    assert rows[2] == ["tiled 32x8", None, 32.0, None, 1.0, None, 4.0]
    assert rows[0] == ["copy 32x8", None, None, None, None, None, 4.0]


def test_the_recorded_h200_counters_agree_with_the_tracer():
    """ncu on an H200 (shipped record) against the traces: within 6 %.

    Nsight Compute counts a few percent more wavefronts than the bank rule gives (padded 32x8's
    loads: 1.054 per request; the seed's tiled stores: 1.051); the tracer counts the rule alone.
    """
    shipped = results.recorded(profiling.KEY, results.RECORDED_DIR)
    if not shipped:
        pytest.skip("no recorded Nsight Compute counters shipped")
    header, rows = profiling.summary(shipped[0].data, profiling.predictions())
    compared = 0
    for row in rows:
        for ncu, traced in zip(row[1::2], row[2::2]):
            if ncu is not None:
                assert traced is not None and abs(ncu - traced) <= 0.06 * traced, row
                compared += 1
    assert compared >= 15


def test_kernel_times_come_from_the_record(monkeypatch):
    record = {"columns": profiling.COLUMNS, "rows": [["seed naive 16x16", "1080 x 1920", 16.9]]}
    found = results.Recorded("GPU", "2026-01-01", record)
    monkeypatch.setattr(profiling, "measured", lambda: found)
    assert profiling.kernel_times("GPU") == {"seed naive 16x16": 0.0169}
    assert profiling.kernel_times("another GPU") == {}  # its times are not this GPU's
    monkeypatch.setattr(profiling, "measured", lambda: None)
    assert profiling.kernel_times("GPU") == {}


def test_seed_000_table_puts_the_seeds_rows_before_this_runs(monkeypatch):
    record = {"columns": profiling.COLUMNS, "rows": [["seed padded 16x16", "1080 x 1920", 12.5]]}
    monkeypatch.setattr(profiling, "measured", lambda: results.Recorded("GPU", "2026", record))
    monkeypatch.setattr(profiling.runtime, "device_info", lambda: SimpleNamespace(name="GPU"))
    ms = {"naive 16x16 (seed)": 0.04, "tiled 16x16 (seed)": 0.025, "padded 16x16 (seed)": 0.02}
    header, rows = profiling.seed_000_table([Timing(n, [t], 2**20) for n, t in ms.items()])
    assert header[2:] == ["per launch", "vs naive", "ncu kernel time"]
    assert rows[0] == ["GTX 670", "naive (legacy)", "257 µs", "+0%", ""]
    assert rows[4] == ["GTX 580", "shared, low conflict", "147 µs", "+55%", ""]
    assert rows[6:] == [
        ["GPU", "naive (legacy)", "40 µs", "+0%", ""],
        ["GPU", "shared, low conflict", "20 µs", "+100%", "12.5 µs"],
        ["GPU", "shared, high conflict", "25 µs", "+60%", ""],
    ]
    with pytest.raises(ValueError, match="needs timings of"):
        profiling.seed_000_table([])


def test_profiling_without_gpu_or_ncu_says_why_and_succeeds(capsys, monkeypatch):
    monkeypatch.setattr(profiling.shutil, "which", lambda name: None)
    assert profiling.main([]) == 0
    assert "not collecting counters" in capsys.readouterr().out


def test_collect_runs_ncu_on_the_launching_child(monkeypatch):
    """ncu itself is faked: it writes a FORMAT SAMPLE (made-up numbers), one kernel per launch."""
    names = [profiling.kernel_name(profiling.wrapper_of(name)) for _, name, _ in profiling.LAUNCHES]
    rows = [
        f'"{i}","1","python","h","{name}[v1](Array<float, 2>)","1","7","(32, 8, 1)","(1, 1, 1)",'
        f'"0","9.0","s","gpu__time_duration.sum","nsecond","{1000 + i}"'
        for i, name in enumerate(names)
    ]
    seen = {}

    def fake_run(command, **kwargs):
        seen["command"] = command
        log = command[command.index("--log-file") + 1]
        with open(log, "w") as f:
            f.write("\n".join(["==PROF== made up", HEADER, *rows]) + "\n")
        return profiling.subprocess.CompletedProcess(command, 0, stdout="", stderr="")

    monkeypatch.setattr(profiling.subprocess, "run", fake_run)
    data = profiling.collect()
    assert seen["command"][:3] == ["ncu", "--clock-control", "none"]
    assert seen["command"][-3:] == ["-m", profiling.MODULE, "--launch"]
    assert [row[2] for row in data["rows"]] == [
        (1000 + i) / 1e3 for i in range(len(profiling.LAUNCHES))
    ]
