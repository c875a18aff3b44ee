"""Textbook kernels beside the same algorithms in CUDA C, in one run on one GPU.

`python -m gpgpu_tools.cuda_c.yardstick --out DIR` builds yardstick.cu with nvcc (-O3, for
this GPU), runs it (CUDA events, cudaMemcpy device-to-device beside the kernels), then times
in the same process lesson 01's copy and lesson 03's tile copy, naive, tiled and padded
transposes on the same 8192 x 8192 float32 matrix (32 x 8 threads), and the other spelling of
spellings.py, with what unsigned indices change in the PTX (index_ptx). Writes
DIR/yardstick-<gpu>.json (the lead copies it to gpgpu_lessons/recorded/yardstick/<gpu>.json)
and prints a table: each Numba kernel's time over
its C twin's. In the simulator: the kernels are checked against NumPy on a small matrix, and
nothing is timed or built.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from numba import cuda

from gpgpu_lessons import launch, results, runtime, timing
from gpgpu_lessons.l01_coalescing import textbook as coalescing
from gpgpu_lessons.l03_bank_conflicts import textbook as transposes

from . import index_ptx, spellings

SOURCE = Path(__file__).with_name("yardstick.cu")
SIDE = 8192  # the lessons' matrix: 256 MiB of float32, well past any L2
TWINS = {  # Numba kernel -> its C twin in yardstick.cu
    "copy (lesson 01)": "copy",
    "tile copy": "tile_copy",
    "naive": "naive",
    "tiled": "tiled",
    "padded": "padded",
    "padded, whole-row loads": "padded",
    "padded, full tiles unchecked": "padded",
    "padded, unsigned indices": "padded",
}


def build(folder: Path) -> tuple[Path | None, str]:
    """(executable, how): nvcc -O3 for this GPU, or (None, why not)."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        return None, "nvcc not found"
    executable = folder / "yardstick"
    command = [nvcc, "-O3", "-arch=native", "-std=c++17", str(SOURCE), "-o", str(executable)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        return None, f"nvcc failed: {done.stderr.strip()[-500:]}"
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    return executable, " ".join(command[:4]) + f" ({version.strip().splitlines()[-1]})"


def run_c(executable: Path, side: int, repeat: int) -> dict:
    """The C kernels' milliseconds per launch: {name: [samples]} and the run's settings."""
    done = subprocess.run(
        [str(executable), str(side), str(repeat), "10"], capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"yardstick failed ({done.returncode}): {done.stderr or done.stdout}")
    return json.loads(done.stdout)


def numba_launches(side: int) -> dict:
    """{name: (launch, output, expected)}: each Numba kernel on one random side x side matrix."""
    a = np.random.default_rng(0).random((side, side), dtype=np.float32)
    d_a = cuda.to_device(a)
    d_out = cuda.device_array_like(d_a)
    flat, d_flat_out = d_a.reshape(a.size), d_out.reshape(a.size)
    found = {
        "copy (lesson 01)": (coalescing.copy.prepare(flat, out=d_flat_out), a),
        "tile copy": (transposes.tile_copy.prepare(d_a, out=d_out), a),
        "naive": (transposes.naive.prepare(d_a, out=d_out), a.T),
        "tiled": (transposes.tiled.prepare(d_a, out=d_out), a.T),
        "padded": (transposes.padded.prepare(d_a, out=d_out), a.T),
    }
    grid = launch.grid_2d(a.shape, (spellings.TILE, spellings.TILE))
    for name, kernel in spellings.SPELLINGS.items():
        step = launch.Step(kernel, grid, (spellings.TILE, spellings.ROWS), (d_a, d_out))
        found[name] = (launch.Launch((step,), d_out), a.T)
    return {name: (prepared, d_out, expected) for name, (prepared, expected) in found.items()}


def check(prepared, d_out, expected) -> bool:
    """Run once on a poisoned output and compare with NumPy."""
    d_out.copy_to_device(np.full(d_out.shape, np.nan, np.float32))
    prepared()
    return bool(np.array_equal(d_out.copy_to_host().reshape(expected.shape), expected))


def measure(side: int = SIDE, repeat: int = 20) -> dict:
    """Build and run the C yardstick, time the Numba kernels on the same matrix, in one run."""
    info = runtime.device_info()
    record = {
        "gpu": info.name,
        "date": datetime.date.today().isoformat(),
        "side": side,
        "dtype": "float32",
        "threads": [spellings.TILE, spellings.ROWS],
        "units": "ms per launch (median of the samples); ratio = Numba's time / C's",
    }
    gpu = runtime.MODE == runtime.GPU
    checked = {}
    numba_ms = {}
    for name, (prepared, d_out, expected) in numba_launches(side).items():
        checked[name] = check(prepared, d_out, expected)
        if gpu:
            numba_ms[name] = timing.benchmark(prepared, name=name, repeat=repeat).samples_ms
    record["numba_checked"] = checked
    if not gpu:
        record["c"] = "not run: the simulator times nothing and builds no CUDA C"
        return record
    record["numba_ms"] = numba_ms
    record["ptx"] = index_ptx.compiled(info.compute_capability)
    record["numba_device_copy_ms"] = timing.copy_ceiling(side * side * 4).samples_ms
    with tempfile.TemporaryDirectory() as folder:
        executable, how = build(Path(folder))
        record["nvcc"] = how
        if executable is not None:
            record["c"] = run_c(executable, side, repeat)
    record["table"] = table_rows(record)
    return record


def table_rows(record: dict) -> list[dict]:
    """One row per Numba kernel: its median, its C twin's, the ratio, both x cudaMemcpy."""
    c = record.get("c")
    c_ms = c.get("ms", {}) if isinstance(c, dict) else {}
    memcpy = statistics.median(c_ms["cudaMemcpy"]) if "cudaMemcpy" in c_ms else None
    rows = []
    for name, samples in record.get("numba_ms", {}).items():
        ours = statistics.median(samples)
        twin = TWINS[name]
        theirs = statistics.median(c_ms[twin]) if twin in c_ms else None
        rows.append(
            {
                "kernel": name,
                "numba_ms": round(ours, 5),
                "c_kernel": twin,
                "c_ms": None if theirs is None else round(theirs, 5),
                "numba_over_c": None if theirs is None else round(ours / theirs, 3),
                "numba_x_memcpy": None if memcpy is None else round(memcpy / ours, 3),
                "c_x_memcpy": None
                if memcpy is None or theirs is None
                else round(memcpy / theirs, 3),
            }
        )
    return rows


def text(record: dict) -> str:
    """The table a person reads."""
    lines = [f"Textbook kernels beside CUDA C, {record['gpu']}, {record['side']}^2 float32:"]
    if not record.get("table"):
        checked = ", ".join(
            f"{k}: {'ok' if v else 'WRONG'}" for k, v in record["numba_checked"].items()
        )
        return "\n".join(lines + [f"  checked against NumPy: {checked}", f"  C: {record['c']}"])
    lines.append(
        f"  {'Numba kernel':26} {'ms':>8} {'C twin':10} {'C ms':>8} {'Numba/C':>8} "
        f"{'x memcpy':>8} {'C x memcpy':>10}"
    )
    for row in record["table"]:
        lines.append(
            f"  {row['kernel']:26} {row['numba_ms']:8.4f} {row['c_kernel']:10} "
            f"{_cell(row['c_ms'], '.4f', 8)} {_cell(row['numba_over_c'], '.2f', 8)} "
            f"{_cell(row['numba_x_memcpy'], '.2f', 8)} {_cell(row['c_x_memcpy'], '.2f', 10)}"
            + ("" if record["numba_checked"][row["kernel"]] else "  WRONG")
        )
    return "\n".join(lines)


def _cell(value, fmt: str, width: int) -> str:
    return f"{'-' if value is None else format(value, fmt):>{width}}"


def save(record: dict, folder: Path) -> Path:
    path = Path(folder) / f"yardstick-{results.slug(record['gpu'])}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpgpu_tools.cuda_c.yardstick")
    parser.add_argument("--out", type=Path, default=Path("yardstick-results"))
    parser.add_argument("--side", type=int, default=None, help="matrix side (multiple of 32)")
    args = parser.parse_args(argv)
    side = args.side or runtime.pick(gpu=SIDE, simulator=64)
    record = measure(side)
    print(text(record))
    print(f"Written: {save(record, args.out)}")
    return 0 if all(record["numba_checked"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
