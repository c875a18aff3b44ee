"""Lesson 03's bank model against hand-worked cases, its pictures, and the ncu counters' parsing."""

import pytest

from gpgpu_lessons.l03_bank_conflicts import banks, fast, figures, profiling, textbook


def test_banks_are_4_bytes_wide_and_32_of_them():
    assert [banks.bank_of(b) for b in (0, 3, 4, 124, 128, 132)] == [0, 0, 1, 31, 0, 1]


def test_the_model_follows_the_kernels_tiles():
    assert banks.tile_slot(2, 3, 33) == 2 * 33 + 3  # (TILE, TILE + 1) stored row by row
    assert banks.Variant("shared").threads == (textbook.TILE, textbook.ROWS)
    assert banks.WIDE.threads == fast.WIDE_BLOCK and banks.WIDE.vec == fast.VEC


def test_wavefront_rules():
    assert banks.wavefronts([4 * i for i in range(32)]) == 1  # 32 banks, one word each
    assert banks.wavefronts([0] * 32) == 1  # one word: a broadcast
    assert banks.wavefronts([128 * i for i in range(32)]) == 32  # one bank, 32 words
    assert banks.wavefronts([8 * i for i in range(32)]) == 2  # stride 2: 2-way
    assert banks.wavefronts([8 * i for i in range(32)], size=8) == 2  # 8-byte: two half-warps
    assert banks.ideal_wavefronts(32, 8) == 2 and banks.ideal_wavefronts(16, 4) == 1


def test_seed_003_4x4_tiles_on_an_8x8_matrix():
    """Seed 003 works the 4x4 tile (size + 1 = 5 slots a row) through by hand: its tables."""
    variant = banks.Variant("shared", tile=4, rows=4, pad=1)
    first = banks.requests(variant, (8, 8), block=(0, 0))
    column = next(r for r in first if r.space == "shared" and r.op == "ld")
    assert list(column.elements) == [
        0,
        5,
        10,
        15,
        1,
        6,
        11,
        16,
        2,
        7,
        12,
        17,
        3,
        8,
        13,
        18,
    ]  # index_tile
    # index_out for (gx, gy) = (0, 0), (0, 1) and (1, 1): block x = gx, block y = gy
    for block, expected in (
        ((0, 0), [0, 1, 2, 3, 8, 9, 10, 11]),
        ((0, 1), [4, 5, 6, 7, 12, 13, 14, 15]),
        ((1, 1), [36, 37, 38, 39, 44, 45, 46, 47]),
    ):
        stores = [
            r
            for r in banks.requests(variant, (8, 8), block=block)
            if r.space == "global" and r.op == "st"
        ]
        assert list(stores[0].elements[:8]) == expected
    # the seed's picture of 4 banks: slots 0, 5, 10, 15 land in banks 0, 1, 2, 3
    assert [banks.bank_of(4 * s, banks=4) for s in (0, 5, 10, 15)] == [0, 1, 2, 3]
    unpadded = banks.column_read(tile=4, pad=0)
    assert [banks.bank_of(4 * s, banks=4) for s in unpadded.elements[:4]] == [0, 0, 0, 0]


@pytest.mark.parametrize(
    "tile, rows, pad, itemsize, cost, ways",
    [
        (32, 8, 0, 4, 32, 32),  # a tile column lives in one bank
        (32, 8, 1, 4, 1, 1),  # +1 moves each row one bank on
        (32, 8, 0, 8, 32, 16),  # 8-byte: 16 lanes a phase, all in banks 0 and 1
        (32, 8, 1, 8, 2, 1),  # 8-byte, padded: conflict free (2 wavefronts is the minimum)
        (16, 16, 0, 4, 8, 8),  # seed 000's 16x16: a warp spans two tile rows
        (16, 16, 1, 4, 2, 2),  # lane 15 of row 1 (slot 256) meets lane 0 of row 0 in bank 0
    ],
)
def test_column_read_conflicts(tile, rows, pad, itemsize, cost, ways):
    request = banks.column_read(tile, pad, itemsize, rows)
    assert len(request.elements) == 32
    assert request.cost == cost and banks.conflict_ways(request) == ways


def test_lane_table_and_global_sectors():
    assert banks.lane_table(32, 0, lanes=3) == [(0, 0, 0), (1, 32, 0), (2, 64, 0)]
    assert banks.lane_table(32, 1, lanes=3) == [(0, 0, 0), (1, 33, 1), (2, 66, 2)]
    assert banks.sectors([4 * i for i in range(32)]) == 4
    assert banks.sectors([4 * 4096 * i for i in range(32)]) == 32
    assert banks.sectors([8 * i for i in range(32)], size=8) == 8


def test_predictions_for_the_profiled_kernels():
    side = (4096, 4096)
    naive = banks.predict(banks.Variant("naive"), side)
    assert (
        naive["global_st_sectors_per_request"] == 32 and naive["global_ld_sectors_per_request"] == 4
    )
    tiled = banks.predict(banks.Variant("shared", pad=0), side)
    requests = (4096 // 32) ** 2 * 8 * 4  # blocks x warps x loop iterations
    assert tiled["shared_ld_requests"] == requests
    assert tiled["shared_ld_bank_conflicts"] == 31 * requests
    assert tiled["global_st_sectors_per_request"] == 4
    padded = banks.predict(banks.Variant("shared", pad=1), side)
    assert padded["shared_ld_bank_conflicts"] == padded["shared_st_bank_conflicts"] == 0
    wide = banks.predict(banks.WIDE, side)
    sectors = 32 * 4 * banks.WIDE.vec // 32  # 32 lanes x 4 vec bytes
    assert wide["global_st_sectors_per_request"] == wide["global_ld_sectors_per_request"] == sectors
    assert (
        wide["shared_ld_wavefronts_per_request"] == 2
    )  # lanes read rows vec tx + i: 2-way conflicts


def test_picture_draws():
    fig = figures.bank_picture()
    assert (
        len(fig.axes) == 2
        and "32-way" in fig.axes[0].get_title()
        and "1-way" in fig.axes[1].get_title()
    )


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
    names = [profiling.kernel_name(wrapper) for *_, wrapper in profiling.LAUNCHES]
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


def test_counter_table_puts_predictions_beside_measurements():
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
    naive = data["rows"][1]
    assert naive[0] == "naive 32x8" and naive[2] == 1.0
    assert naive[data["columns"].index("global st sectors / request")] == 32.0
    assert naive[data["columns"].index("global st sectors / request") + 1] == 32.0
    with pytest.raises(ValueError, match="expected"):
        profiling.table(kernels[:2])
    header, rows = profiling.summary(
        data
    )  # what the notebook shows: each number beside its prediction
    assert header[0] == "kernel" and header[1:3] == ["shared ld bank conflicts", "predicted"]
    assert (
        rows[1][0] == "naive 32x8"
        and rows[1][-2:] == [32.0, 32.0]
        and len(header) == 1 + 2 * len(profiling.SHOWN)
    )


def test_predictions_table_for_the_notebook_without_counters():
    header, rows = profiling.predictions()
    assert header == ["kernel", *profiling.SHOWN]
    assert [r[0] for r in rows] == [launch[0] for launch in profiling.LAUNCHES]
    tiled = rows[2]
    assert tiled[0] == "tiled 32x8" and tiled[3] == 32  # 32 wavefronts per column read


def test_block_order_picture_draws():
    fig = figures.block_order_picture(tiles=4, groups=(1, 2), first=6)
    assert len(fig.axes) == 4 and "group = 2" in fig.axes[2].get_title()


def test_profiling_without_gpu_or_ncu_says_why_and_succeeds(capsys, monkeypatch):
    monkeypatch.setattr(profiling.shutil, "which", lambda name: None)
    assert profiling.main([]) == 0
    assert "not collecting counters" in capsys.readouterr().out


def test_collect_runs_ncu_on_the_launching_child(monkeypatch):
    """ncu itself is faked: it writes a FORMAT SAMPLE (made-up numbers), one kernel per launch."""
    names = [profiling.kernel_name(wrapper) for *_, wrapper in profiling.LAUNCHES]
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


def test_the_model_agrees_with_the_tracer_on_the_textbook_kernels():
    """The hand-made model against what the kernel tracer records from the kernels themselves."""
    import numpy as np

    from gpgpu_lessons import trace_kernel

    a = np.random.default_rng(3).random((64, 64), dtype=np.float32)
    for kernel, variant in [
        (textbook.transpose_naive, banks.Variant("naive")),
        (textbook.transpose_tiled, banks.Variant("shared", pad=0)),
        (textbook.transpose_padded, banks.Variant("shared", pad=1)),
    ]:
        traced = trace_kernel(kernel, (2, 2), (32, 8), a, np.zeros_like(a), blocks=[0])
        predicted = banks.predict(variant, a.shape)
        for line in traced.lines:
            op = {"load": "ld", "store": "st"}[line.op]
            unit = "sectors" if line.space == "global" else "wavefronts"
            measured = getattr(line, unit) / line.requests
            assert measured == predicted[f"{line.space}_{op}_{unit}_per_request"], (kernel, line)
