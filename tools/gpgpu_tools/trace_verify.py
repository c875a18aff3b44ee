"""Check the tracer against the GPU's own tools, on the small kernels of `cases`.

    python -m gpgpu_tools.trace_verify counts            # the tracer's counts (any machine)
    python -m gpgpu_tools.trace_verify ncu               # GPU: Nsight Compute vs the tracer
    python -m gpgpu_tools.trace_verify races             # GPU: compute-sanitizer vs the tracer
    python -m gpgpu_tools.trace_verify launch [--races] [NAME ...]   # what the tools wrap

`ncu` runs ``ncu --clock-control none --csv --page raw --metrics <METRICS> python -m
gpgpu_tools.trace_verify launch`` (one launch per case, in order) and prints, per case and
metric, the tracer's count, Nsight Compute's and whether they agree within 5 %. `races` runs
``compute-sanitizer --tool racecheck --racecheck-report hazard`` (and ``--tool synccheck``) on
each race case alone and prints the hazard kinds and lines each side reports. ``--json FILE``
writes the rows for the record. Constant-memory serialisation and atomic contention have no
direct Nsight Compute counter here: their tracer numbers are printed for reading beside timings.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import shutil
import subprocess
import sys

import numpy as np

from . import trace_cases as cases

#: (space, op) -> (requests metric(s), cost metric(s)); a tuple of names is summed
METRICS = {
    ("global", "load"): (
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    ),
    ("global", "store"): (
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    ),
    ("global", "atomic"): (
        (
            "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
            "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
        ),
        (
            "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
        ),
    ),
    ("local", "load"): (
        "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    ),
    ("local", "store"): (
        "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    ),
    ("shared", "load"): (
        "smsp__inst_executed_op_shared_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    ),
    ("shared", "store"): (
        "smsp__inst_executed_op_shared_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    ),
    ("shared", "atomic"): (
        "smsp__inst_executed_op_shared_atom.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    ),
}
TOLERANCE = 0.05


def _names(metric) -> tuple:
    return metric if isinstance(metric, tuple) else (metric,)


def every_metric() -> list[str]:
    """All Nsight Compute metric names the comparison reads."""
    return sorted({name for pair in METRICS.values() for m in pair for name in _names(m)})


def _launch_args(case):
    rng = np.random.default_rng(0)
    return case.make(rng)


def tracer_counts(case) -> dict:
    """{(space, op): {"requests", "cost", "ideal", "unit", ...}} of one case, from the tracer."""
    from gpgpu_lessons.trace.tracer import trace_kernel

    grid, block, args = _launch_args(case)
    trace = trace_kernel(case.kernel, grid, block, *args)
    found: dict = {}
    for row in trace.lines:
        entry = found.setdefault(
            (row.space, row.op),
            dict.fromkeys(
                (
                    "requests",
                    "sectors",
                    "ideal_sectors",
                    "wavefronts",
                    "ideal_wavefronts",
                    "addresses",
                    "contention",
                ),
                0,
            ),
        )
        for key in entry:
            entry[key] += getattr(row, key)
    for (space, _), entry in found.items():
        if space == "constant":
            entry.update(unit="addresses", cost=entry["addresses"], ideal=entry["requests"])
            continue
        unit = "wavefronts" if space == "shared" else "sectors"
        entry.update(unit=unit, cost=entry[unit], ideal=entry[f"ideal_{unit}"])
    return {"counts": found, "hazards": [(h.kind, h.lines) for h in trace.hazards]}


def counts(json_path=None) -> list[dict]:
    """Print the tracer's counts for every COUNTS case (with the metric each compares with)."""
    rows = []
    print(f"{'case':28} {'space':8} {'op':6} {'requests':>9} {'cost':>9} {'ideal':>9}  per request")
    for case in cases.COUNTS:
        found = tracer_counts(case)["counts"]
        for (space, op), entry in sorted(found.items()):
            per = entry["cost"] / entry["requests"] if entry["requests"] else 0.0
            extra = (
                f", {entry['contention'] / entry['requests']:.1f} lanes on one address"
                if op == "atomic"
                else ""
            )
            print(
                f"{case.name:28} {space:8} {op:6} {entry['requests']:>9} {entry['cost']:>9} "
                f"{entry['ideal']:>9}  {per:.1f} {entry['unit']}{extra}"
            )
            rows.append({"case": case.name, "space": space, "op": op, **entry})
        print(f"{'':28} expected: {case.expect}")
    _save(json_path, rows)
    return rows


def launch(names=(), races: bool = False) -> None:
    """Launch the chosen cases once each on the GPU, in order (for ncu / compute-sanitizer)."""
    from numba import cuda

    chosen = [c for c in (cases.RACES if races else cases.COUNTS) if not names or c.name in names]
    if names and len(chosen) != len(set(names)):
        raise SystemExit(f"unknown case among {names}")
    for case in chosen:
        grid, block, args = _launch_args(case)
        device = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        case.kernel[grid, block](*device)
        cuda.synchronize()
        print(f"launched {case.name}", flush=True)


def parse_ncu_csv(text: str) -> list[dict]:
    """The kernel rows of `ncu --csv --page raw` output, in launch order (units row skipped)."""
    lines = text.splitlines()
    start = next((k for k, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))
    return [r for r in rows if r.get("ID", "").strip().isdigit()]


def _number(text) -> float:
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return float("nan")


def _ncu_value(row: dict, metric) -> float:
    return sum(_number(row.get(name, "nan")) for name in _names(metric))


def ncu(json_path=None) -> list[dict]:
    """Run every COUNTS case under Nsight Compute and compare its counters with the tracer's."""
    if not shutil.which("ncu"):
        raise SystemExit("ncu (Nsight Compute) is not on PATH")
    command = [
        "ncu",
        "--clock-control",
        "none",
        "--csv",
        "--page",
        "raw",
        "--metrics",
        ",".join(every_metric()),
        sys.executable,
        "-m",
        "gpgpu_tools.trace_verify",
        "launch",
    ]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    measured = parse_ncu_csv(run.stdout)
    if len(measured) != len(cases.COUNTS):
        print(run.stdout[-4000:], run.stderr[-4000:], sep="\n")
        raise SystemExit(f"ncu profiled {len(measured)} kernels, expected {len(cases.COUNTS)}")
    _device_line()
    rows = []
    print(f"{'case':28} {'metric':56} {'tracer':>9} {'ncu':>9}  agree")
    for case, row in zip(cases.COUNTS, measured):
        name = row.get("Kernel Name", "")
        if not re.search(rf"{case.kernel.__name__}(?![A-Za-z0-9_])", name):
            print(f"warning: case {case.name} matched ncu kernel {name[:60]!r}")
        found = tracer_counts(case)["counts"]
        for (space, op), (requests, cost) in METRICS.items():
            entry = found.get((space, op), {"requests": 0, "cost": 0})
            for metric, ours in ((requests, entry["requests"]), (cost, entry["cost"])):
                theirs = _ncu_value(row, metric)
                if ours == 0 and theirs == 0:
                    continue
                agree = ours == theirs or (ours and abs(theirs / ours - 1) <= TOLERANCE)
                label = " + ".join(_names(metric))
                print(
                    f"{case.name:28} {label[:56]:56} {ours:>9} {theirs:>9.0f}  "
                    f"{'yes' if agree else 'NO'}"
                )
                rows.append(
                    {
                        "case": case.name,
                        "space": space,
                        "op": op,
                        "metric": label,
                        "tracer": ours,
                        "ncu": theirs,
                        "agree": bool(agree),
                    }
                )
    _save(json_path, rows)
    return rows


_HAZARD = re.compile(
    r"Potential (RAW|WAR|WAW) hazard|Race reported between (\w+) access "
    r"at .*? and (\w+) access"
)
_LINE = re.compile(r"cases\.py:(\d+)")


def _sanitize(tool: str, case) -> str:
    command = ["compute-sanitizer", "--tool", tool]
    if tool == "racecheck":
        command += ["--racecheck-report", "hazard"]
    command += [sys.executable, "-m", "gpgpu_tools.trace_verify", "launch", "--races", case.name]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    return run.stdout + run.stderr


def races(json_path=None) -> list[dict]:
    """Run every RACES case under racecheck and synccheck and compare with the tracer."""
    if not shutil.which("compute-sanitizer"):
        raise SystemExit("compute-sanitizer is not on PATH")
    _device_line()
    rows = []
    for case in cases.RACES:
        report = _sanitize("racecheck", case)
        kinds = sorted(
            {m.group(1) or f"{m.group(2)}/{m.group(3)}" for m in _HAZARD.finditer(report)}
        )
        lines = sorted({int(n) for n in _LINE.findall(report)})
        sync = _sanitize("synccheck", case)
        barrier = bool(re.search(r"Barrier error|[Dd]ivergent thread", sync))
        ours = tracer_counts(case)["hazards"]
        our_kinds = sorted({kind for kind, _ in ours})
        our_lines = sorted({n for _, found in ours for n in found})
        print(
            f"{case.name:30} tracer: {our_kinds or 'clean'} lines {our_lines}   racecheck: "
            f"{kinds or 'clean'} lines {lines}   synccheck: "
            f"{'barrier error' if barrier else 'clean'}   (expected: {case.expect})"
        )
        rows.append(
            {
                "case": case.name,
                "tracer": our_kinds,
                "tracer_lines": our_lines,
                "racecheck": kinds,
                "racecheck_lines": lines,
                "synccheck": barrier,
                "expected": case.expect,
            }
        )
    _save(json_path, rows)
    return rows


def _device_line() -> None:
    """Say which GPU measured."""
    from gpgpu_lessons import runtime

    print(f"GPU: {runtime.device_info().name}")


def _save(path, rows) -> None:
    if path:
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")


def main(argv=None) -> None:
    """Command line: counts | ncu | races | launch."""
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_tools.trace_verify", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("command", choices=("counts", "ncu", "races", "launch"))
    parser.add_argument("names", nargs="*", help="launch: the cases to launch (default: all)")
    parser.add_argument("--races", action="store_true", help="launch: the race cases")
    parser.add_argument("--json", help="write the rows to this file")
    options = parser.parse_intermixed_args(argv)
    if options.command == "launch":
        launch(options.names, options.races)
    else:
        {"counts": counts, "ncu": ncu, "races": races}[options.command](options.json)


if __name__ == "__main__":
    main()
