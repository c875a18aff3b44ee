"""Hardware evidence for lesson 03: Nsight Compute counters of the transpose kernels.

``python -m gpgpu_lessons.l03_bank_conflicts.profiling`` (on a GPU machine with ``ncu`` on PATH)
runs ::

    ncu --clock-control none --csv --metrics <METRICS> python -m <this module> --launch

The child (``--launch``) launches each kernel of LAUNCHES exactly once; the parent parses the
CSV, checks that ncu names the kernels LAUNCHES expects and records the measured counters as
``03_bank_conflicts/ncu_counters`` (GPGPU_LESSONS_RECORD must name a folder). Without a GPU or
without ncu it says why and exits 0. `show` puts the recorded counters beside the kernel
tracer's counts of the same kernels (`banks`), which any machine computes; `seed_000_table`
puts seed 000's kernel times beside this run's (and ncu's, when recorded on this GPU);
`beside_cuda_c` shows the yardstick: the transposes beside the same kernels in CUDA C (Harris's
transpose.cu), timed by `python -m gpgpu_tools.perf_run` and recorded in recorded/yardstick/.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .. import results, runtime
from ..formats import format_ms
from ..specialise import python_function
from . import banks, fast

MODULE = "gpgpu_lessons.l03_bank_conflicts.profiling"
KEY = "03_bank_conflicts/ncu_counters"
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"
WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"
INSTRUCTIONS = "smsp__inst_executed_op_shared_{op}.sum"
SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"
REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"
# (column, ncu metric, the metric it is divided by or None); the per-request columns are named
# as banks.RATIOS names the tracer's counts
COUNTERS = [
    (column.format(op=op), metric.format(op=op), per and per.format(op=op))
    for column, metric, per in (
        ("shared {op} wavefronts / instr", WAVEFRONTS, INSTRUCTIONS),
        ("global {op} sectors / request", SECTORS, REQUESTS),
        ("shared {op} bank conflicts", CONFLICTS, None),
    )
    for op in ("ld", "st")
]
METRICS = ("gpu__time_duration.sum",) + tuple(
    metric for _, *metrics in COUNTERS for metric in metrics if metric
)
SIDE = 4096
FULL_HD = (1080, 1920)
# (what the record calls it, its name in banks.KERNELS (wrapper and dtype), the matrix shape),
# in launch order
LAUNCHES = (
    ("copy 32x8", "copy 32x8", (SIDE, SIDE)),
    ("naive 32x8", "naive 32x8", (SIDE, SIDE)),
    ("tiled 32x8", "tiled 32x8", (SIDE, SIDE)),
    ("padded 32x8", "padded 32x8", (SIDE, SIDE)),
    ("wide 32x16 (64x64 tile)", f"wide {fast.WIDE_NAME}", (SIDE, SIDE)),
    ("seed naive 16x16", "naive 16x16 (seed)", FULL_HD),
    ("seed tiled 16x16", "tiled 16x16 (seed)", FULL_HD),
    ("seed padded 16x16", "padded 16x16 (seed)", FULL_HD),
)
COLUMNS = ["kernel", "shape", "time (us)"] + [column for column, *_ in COUNTERS]
TITLE = "Nsight Compute's counters of the transposes"
SIZE = f"{SIDE} x {SIDE} float32; the seed's kernels {FULL_HD[0]} x {FULL_HD[1]}"


def launch_all() -> None:
    """Launch every kernel of LAUNCHES once on random float32 input (the child ncu profiles)."""
    import numpy as np
    from numba import cuda

    rng = np.random.default_rng(0)
    for _, name, shape in LAUNCHES:
        wrapper_of(name)(cuda.to_device(rng.random(shape, dtype=np.float32)))
        cuda.synchronize()


def wrapper_of(name: str):
    """The wrapper that launches banks.KERNELS[name]."""
    return banks.KERNELS[name][0]


def kernel_name(wrapper) -> str:
    """The name of the kernel `wrapper` launches on a float32 matrix (ncu shows it before '[')."""
    import numpy as np

    step = wrapper.prepare(np.ones((2, 2), dtype=np.float32)).steps[0]
    return python_function(step.kernel).__name__


def _base_name(ncu_name: str) -> str:
    """'transpose_padded' of ncu's 'transpose_padded[v1,cw51...](Array<float, 2, ...>)'."""
    return ncu_name.split("[", 1)[0].split("(", 1)[0].rsplit("::", 1)[-1]


def _number(text: str) -> float | None:
    """A metric value as ncu prints it ('1,234,567', '12.5', 'n/a')."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def parse_csv(text: str) -> list[dict]:
    """Kernels in launch order, each {"id", "name", "metrics": {name: value}}, from ncu --csv.

    Lines that are not part of the table (ncu's '==PROF==' messages, the program's own
    output) are skipped: the table starts at the header line whose first field is "ID".
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError('no ncu CSV table found (no header line starting with "ID")')
    kernels: dict[str, dict] = {}
    for row in csv.DictReader(line for line in lines[start:] if line.startswith('"')):
        if row.get("ID") is None or row.get("Metric Name") is None:
            continue
        entry = kernels.setdefault(
            row["ID"], {"id": int(row["ID"]), "name": row.get("Kernel Name", ""), "metrics": {}}
        )
        entry["metrics"][row["Metric Name"]] = _number(row.get("Metric Value", ""))
    return sorted(kernels.values(), key=lambda k: k["id"])


def _ratio(a, b):
    return None if a is None or not b else a / b


def table(kernels: list[dict], names: list[str] | None = None) -> dict:
    """The measured counters of LAUNCHES as a recorded 'table' (with ncu's raw metrics).

    `names`: the kernel names LAUNCHES launches, checked against ncu's (None: not checked).
    """
    if len(kernels) != len(LAUNCHES):
        raise ValueError(
            f"ncu reported {len(kernels)} kernels, expected {len(LAUNCHES)} (one per launch)"
        )
    rows = []
    for (label, _, shape), kernel, name in zip(LAUNCHES, kernels, names or [None] * len(kernels)):
        if name is not None and _base_name(kernel["name"]) != name:
            raise ValueError(
                f"ncu's kernel {kernel['id']} is {kernel['name']!r}, but LAUNCHES expects "
                f"{name!r} ({label}) there"
            )
        m = kernel["metrics"]
        time_ns = m.get("gpu__time_duration.sum")
        row = [label, f"{shape[0]} x {shape[1]}", None if time_ns is None else time_ns / 1e3]
        for _, metric, per in COUNTERS:
            row.append(m.get(metric) if per is None else _ratio(m.get(metric), m.get(per)))
        rows.append(row)
    return {
        "kind": "table",
        "title": TITLE,
        "size": SIZE,
        "columns": COLUMNS,
        "rows": rows,
        "raw": [{"label": launch[0], **kernel} for launch, kernel in zip(LAUNCHES, kernels)],
        "command": "ncu --clock-control none --csv --print-units base --metrics "
        + ",".join(METRICS),
    }


SHOWN = (
    "shared ld wavefronts / instr",
    "shared st wavefronts / instr",
    "global st sectors / request",
)  # the notebook's columns, each beside the tracer's count


def predictions() -> dict[str, dict[str, float]]:
    """{kernel: {SHOWN column: the tracer's count per request}} for every kernel of LAUNCHES."""
    found = {}
    for label, name, _ in LAUNCHES:
        counts = banks.per_request(banks.trace(name))
        found[label] = {column: counts[column][0] for column in SHOWN if column in counts}
    return found


def summary(data: dict | None, predicted: dict[str, dict[str, float]]) -> tuple[list, list]:
    """(header, rows): each SHOWN counter of a recorded table (or none) beside the tracer's.

    Reads the measured columns by name, so tables recorded before the tracer existed (with a
    "predicted" column from the old hand-made model after each) show the same way.
    """
    header = ["kernel"] + [label for name in SHOWN for label in (f"{name} (ncu)", "tracer")]
    measured = {}
    if data is not None:
        columns = data["columns"]
        measured = {r[0]: {c: r[columns.index(c)] for c in SHOWN} for r in data["rows"]}
    rows = []
    for label, *_ in LAUNCHES:
        row = [label]
        for name in SHOWN:
            value = measured.get(label, {}).get(name)
            row += [None if value is None else float(value), predicted[label].get(name)]
        rows.append(row)
    return header, rows


def measured() -> results.Recorded | None:
    """The counters this GPU run recorded, else the first shipped record, else None."""
    found = results.recorded(KEY)
    return found[0] if found else None


def kernel_times(gpu: str) -> dict[str, float]:
    """{kernel label: ncu's kernel time in ms} recorded on `gpu` ({} when none was recorded)."""
    found = measured()
    if found is None or found.gpu != gpu:
        return {}
    time = found.data["columns"].index("time (us)")
    return {r[0]: r[time] / 1e3 for r in found.data["rows"] if r[time] is not None}


# Seed 000's table: full HD, 32-bit values, kernel times in ms (CUDA 4.1), by GPU and kernel
SEED_000_MS = [
    ["GTX 670", "naive (legacy)", 0.257],
    ["GTX 670", "shared, low conflict", 0.216],
    ["GTX 670", "shared, high conflict", 0.236],
    ["GTX 580", "naive (legacy)", 0.228],
    ["GTX 580", "shared, low conflict", 0.147],
    ["GTX 580", "shared, high conflict", 0.183],
]
# our kernel (textbook.VARIANTS) -> (the seed's name for it, its label in LAUNCHES)
SEED_000_NAMES = {
    "naive 16x16 (seed)": ("naive (legacy)", "seed naive 16x16"),
    "padded 16x16 (seed)": ("shared, low conflict", "seed padded 16x16"),
    "tiled 16x16 (seed)": ("shared, high conflict", "seed tiled 16x16"),
}


def seed_000_table(timings: list) -> tuple[list, list]:
    """(header, rows): seed 000's rows, then this run's Timings of SEED_000_NAMES at full HD:
    time per launch, speed against the naive kernel, and ncu's kernel time if recorded here."""
    header = ["device", "kernel (16x16 threads)", "per launch", "vs naive", "ncu kernel time"]
    rows = []
    for i, (gpu, kernel, seed_ms) in enumerate(SEED_000_MS):
        faster = SEED_000_MS[3 * (i // 3)][2] / seed_ms - 1  # each GPU's first row: naive
        rows.append([gpu, kernel, format_ms(seed_ms), f"{100 * faster:+.0f}%", ""])
    device = runtime.device_info().name
    ms, ncu = {t.name: t.median_ms for t in timings}, kernel_times(device)
    missing = set(SEED_000_NAMES) - set(ms)
    if missing:
        raise ValueError(f"seed 000's table needs timings of {sorted(missing)}")
    for name, (kernel, counted) in SEED_000_NAMES.items():
        faster = ms["naive 16x16 (seed)"] / ms[name] - 1
        kernel_ms = ncu.get(counted)
        rows.append(
            [
                device,
                kernel,
                format_ms(ms[name]),
                f"{100 * faster:+.0f}%",
                "" if kernel_ms is None else format_ms(kernel_ms),
            ]
        )
    return header, rows


def show() -> None:
    """Display the recorded counters beside the tracer's counts of the same kernels."""
    from IPython.display import Markdown, display

    from .. import notebook

    found = measured()
    data = found.data if found else None
    title = f"{(data or {}).get('title', TITLE)} · {(data or {}).get('size', SIZE)}"
    where = (
        found.label
        if found
        else "no recorded counters yet: on a GPU machine with ncu, run "
        f"`python -m {MODULE}` with {results.RECORD_ENV} set"
    )
    display(Markdown(f"**{title}** ({where}); tracer: the kernels' first tile, traced here"))
    notebook.table(*summary(data, predictions()))


YARDSTICK = results.RECORDED_DIR / "yardstick"
CUDA_C_COLUMNS = ["kernel", "Numba (ms)", "CUDA C (ms)", "Numba / C"]


def yardstick_records(folder: Path = YARDSTICK) -> list[dict]:
    """The yardstick records of this GPU, or of every recorded GPU where it has none."""
    paths = sorted(folder.glob("*.json"))
    here = [p for p in paths if p.stem == results.slug(runtime.device_info().name)]
    return [json.loads(path.read_text()) for path in here or paths]


def cuda_c_rows(record: dict) -> list[list]:
    """One yardstick record's rows: each Numba kernel, its C twin's time and the ratio."""
    return [
        [row["kernel"], row["numba_ms"], row["c_ms"], f"{row['numba_over_c']:.2f}x"]
        for row in record["table"]
    ]


def beside_cuda_c(folder: Path = YARDSTICK) -> None:
    """Display the yardstick recorded on this GPU (every recorded GPU where it has none)."""
    from IPython.display import Markdown, display

    from .. import notebook

    for record in yardstick_records(folder):
        side, dtype = record["side"], record["dtype"]
        display(
            Markdown(
                f"**Beside CUDA C, {side} x {side} {dtype}** (recorded on the {record['gpu']}, "
                f"{record['date']}: `python -m gpgpu_tools.perf_run`)"
            )
        )
        notebook.table(CUDA_C_COLUMNS, cuda_c_rows(record))


def ptx_rows(record: dict) -> list[list]:
    """Per spelling of the padded kernel: its PTX instructions, wraparounds, the second row's."""
    return [
        [
            name,
            kernel["instructions"],
            kernel["wraparounds"],
            " · ".join(line.split()[0] for line in kernel["second_row"]),
        ]
        for name, kernel in record["ptx"]["kernels"].items()
    ]


def index_ptx(folder: Path = YARDSTICK) -> None:
    """Display what unsigned indices change in the padded transpose's PTX (recorded)."""
    from IPython.display import Markdown, display

    from .. import notebook

    record = next((r for r in yardstick_records(folder) if "ptx" in r), None)
    if record is None:
        display(Markdown("No PTX recorded: `python -m gpgpu_tools.cuda_c.index_ptx --into FILE`"))
        return
    ptx = record["ptx"]
    display(
        Markdown(
            f"**The padded transpose in PTX, sm_{ptx['cc'].replace('.', '')}** (numba-cuda "
            f"{ptx['numba_cuda']}: `python -m gpgpu_tools.cuda_c.index_ptx`)"
        )
    )
    columns = ["spelling", "instructions", "wraparounds", "the tile's second row, load to store"]
    notebook.table(columns, ptx_rows(record))


def why_not() -> str | None:
    """Why counters cannot be collected here, or None when they can."""
    if runtime.MODE != runtime.GPU:
        return f"no GPU ({runtime.REASON}): Nsight Compute counters need a real GPU"
    if shutil.which("ncu") is None:
        return "ncu (Nsight Compute's command line) is not on PATH"
    return None


def collect() -> dict:
    """Run the child under ncu and return the table of counters."""
    with tempfile.TemporaryDirectory() as folder:
        log = os.path.join(folder, "ncu.csv")
        command = [
            "ncu",
            "--clock-control",
            "none",
            "--csv",
            "--print-units",
            "base",
            "--log-file",
            log,
            "--metrics",
            ",".join(METRICS),
            sys.executable,
            "-m",
            MODULE,
            "--launch",
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        text = Path(log).read_text() if os.path.exists(log) else ""
    if '"ID"' not in text:  # the table went to stdout after all
        text += "\n" + done.stdout
    if done.returncode != 0 or '"ID"' not in text:
        raise RuntimeError(
            f"ncu failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n"
            f"{done.stderr[-2000:]}\n{text[-2000:]}"
        )
    return table(parse_csv(text), [kernel_name(wrapper_of(name)) for _, name, _ in LAUNCHES])


def main(argv: list[str]) -> int:
    if argv == ["--launch"]:
        launch_all()
        return 0
    reason = why_not()
    if reason:
        print(f"{MODULE}: not collecting counters: {reason}.")
        return 0
    try:
        data = collect()
    except RuntimeError as error:
        print(f"{MODULE}: {error}")
        return 1
    where = results.record(KEY, data)
    for row in data["rows"]:
        print(
            " | ".join(
                "" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v) for v in row
            )
        )
    print(
        f"recorded as {KEY} in {where}"
        if where
        else f"not recorded: set {results.RECORD_ENV} to a folder to keep the counters"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
