"""Hardware evidence for lesson 03: Nsight Compute counters of the transpose kernels.

``python -m gpgpu_lessons.l03_bank_conflicts.profiling`` (on a GPU machine with ``ncu`` on PATH)
runs ::

    ncu --clock-control none --csv --metrics <METRICS> python -m <this module> --launch

The child (``--launch``) launches each kernel of LAUNCHES exactly once; the parent parses the
CSV, checks that ncu names the kernels LAUNCHES expects, puts each kernel's counters beside the
predictions of ``banks`` and records
the table as ``03_bank_conflicts/ncu_counters`` (GPGPU_LESSONS_RECORD must name a folder).
Without a GPU or without ncu it says why and exits 0.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .. import results, runtime
from . import banks, fast, textbook

MODULE = "gpgpu_lessons.l03_bank_conflicts.profiling"
KEY = "03_bank_conflicts/ncu_counters"
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"
WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"
INSTRUCTIONS = "smsp__inst_executed_op_shared_{op}.sum"
SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"
REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"
# (column, ncu metric, the metric it is divided by or None, the banks.predict key beside it)
COUNTERS = [
    (column.format(op=op), metric.format(op=op), per and per.format(op=op), key.format(op=op))
    for column, metric, per, key in (
        ("shared {op} bank conflicts", CONFLICTS, None, "shared_{op}_bank_conflicts"),
        (
            "shared {op} wavefronts / instr",
            WAVEFRONTS,
            INSTRUCTIONS,
            "shared_{op}_wavefronts_per_request",
        ),
        ("global {op} sectors / request", SECTORS, REQUESTS, "global_{op}_sectors_per_request"),
    )
    for op in ("ld", "st")
]
METRICS = ("gpu__time_duration.sum",) + tuple(
    metric for _, *metrics, _ in COUNTERS for metric in metrics if metric
)
SIDE = 4096
FULL_HD = (1080, 1920)
SEED = textbook.SEED_TILE
# (what to call it, the kernel and launch shape for banks.predict, the matrix shape, the wrapper
# that launches it), in launch order
LAUNCHES = (
    ("copy 32x8", banks.Variant("copy"), (SIDE, SIDE), textbook.tile_copy),
    ("naive 32x8", banks.Variant("naive"), (SIDE, SIDE), textbook.naive),
    ("tiled 32x8", banks.Variant("shared", pad=0), (SIDE, SIDE), textbook.tiled),
    ("padded 32x8", banks.Variant("shared", pad=1), (SIDE, SIDE), textbook.padded),
    (banks.WIDE.label, banks.WIDE, (SIDE, SIDE), fast.wide),
    ("seed naive 16x16", banks.Variant("naive", SEED, SEED), FULL_HD, textbook.seed_naive),
    ("seed tiled 16x16", banks.Variant("shared", SEED, SEED, 0), FULL_HD, textbook.seed_tiled),
    ("seed padded 16x16", banks.Variant("shared", SEED, SEED, 1), FULL_HD, textbook.seed_padded),
)
COLUMNS = ["kernel", "shape", "time (us)"] + [
    column for name, *_ in COUNTERS for column in (name, "predicted")
]


def launch_all() -> None:
    """Launch every kernel of LAUNCHES once on random float32 input (the child ncu profiles)."""
    import numpy as np
    from numba import cuda

    rng = np.random.default_rng(0)
    for _, _, shape, wrapper in LAUNCHES:
        wrapper(cuda.to_device(rng.random(shape, dtype=np.float32)))
        cuda.synchronize()


def kernel_name(wrapper) -> str:
    """The name of the kernel `wrapper` launches on a float32 matrix (ncu shows it before '[')."""
    import numpy as np

    return wrapper.prepare(np.ones((2, 2), dtype=np.float32)).steps[0].kernel.py_func.__name__


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
    """The measured counters of LAUNCHES beside banks.predict, as a recorded 'table'.

    `names`: the kernel names LAUNCHES launches, checked against ncu's (None: not checked).
    """
    if len(kernels) != len(LAUNCHES):
        raise ValueError(
            f"ncu reported {len(kernels)} kernels, expected {len(LAUNCHES)} (one per launch)"
        )
    rows = []
    for (label, variant, shape, _), kernel, name in zip(
        LAUNCHES, kernels, names or [None] * len(kernels)
    ):
        if name is not None and _base_name(kernel["name"]) != name:
            raise ValueError(
                f"ncu's kernel {kernel['id']} is {kernel['name']!r}, but LAUNCHES expects "
                f"{name!r} ({label}) there"
            )
        m, p = kernel["metrics"], banks.predict(variant, shape)
        time_ns = m.get("gpu__time_duration.sum")
        row = [label, f"{shape[0]}x{shape[1]}", None if time_ns is None else time_ns / 1e3]
        for _, metric, per, key in COUNTERS:
            measured = m.get(metric) if per is None else _ratio(m.get(metric), m.get(per))
            row += [measured, p[key]]
        rows.append(row)
    return {
        "kind": "table",
        "columns": COLUMNS,
        "rows": rows,
        "raw": [{"label": launch[0], **kernel} for launch, kernel in zip(LAUNCHES, kernels)],
        "command": "ncu --clock-control none --csv --print-units base --metrics "
        + ",".join(METRICS),
    }


SHOWN = (
    "shared ld bank conflicts",
    "shared st bank conflicts",
    "shared ld wavefronts / instr",
    "global st sectors / request",
)  # the notebook's columns, each beside its prediction


def summary(data: dict) -> tuple[list, list]:
    """(header, rows) of a recorded table, kept to the kernel and SHOWN (each with "predicted")."""
    columns = data["columns"]
    keep = [0] + [i for name in SHOWN for i in (columns.index(name), columns.index(name) + 1)]
    rows = [[float(r[i]) if isinstance(r[i], int) else r[i] for i in keep] for r in data["rows"]]
    return [columns[i] for i in keep], rows


def predictions() -> tuple[list, list]:
    """(header, rows) of the SHOWN numbers that gpgpu_lessons.banks predicts for LAUNCHES."""
    keys = (
        "shared_ld_bank_conflicts",
        "shared_st_bank_conflicts",
        "shared_ld_wavefronts_per_request",
        "global_st_sectors_per_request",
    )
    rows = [
        [label, *(float(banks.predict(variant, shape)[k]) for k in keys)]
        for label, variant, shape, _ in LAUNCHES
    ]
    return ["kernel", *SHOWN], rows


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
    return table(parse_csv(text), [kernel_name(wrapper) for *_, wrapper in LAUNCHES])


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
