"""Run the collection on a GPU machine without network: wheels here, execution there, results back.

1. Here, online:    python -m gpgpu_tools.gpurun wheels --dest .whl  (make gpu-wheels)
2. On the GPU:      python3 -m gpgpu_tools.gpurun execute --wheels .whl --out OUT  (make gpu-run)
   installs the wheels into a temporary target, runs the tests on the GPU, collects profiler
   counters, executes every notebook in place, records GPU results, packs OUT/gpu-run.tar.gz.
3. Here again:      python -m gpgpu_tools.gpurun unpack OUT/gpu-run.tar.gz  (make gpu-unpack)
   puts the executed notebooks into notebooks/ and the results into gpgpu_lessons/recorded/.

The GPU machine is expected to have Python 3.12 with numba, numba-cuda, matplotlib and pillow
(a CUDA image with PyTorch/CuPy has them); what it lacks comes as wheels.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GPU_PYTHON = "3.12"
PLATFORMS = [
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
]
# numpy 2.5 breaks numba-cuda 0.30 on a GPU (the image ships 2.5); the rest executes notebooks.
GPU_WHEELS = [
    "numpy>=2,<2.5",
    "nbclient>=0.10",
    "nbformat>=5.10",
    "ipykernel>=6.29",
    "nbval>=0.11,<0.12",
    "hypothesis>=6.100,<7",
    "pytest-xdist>=3.6,<4",
]
ARCHIVE = "gpu-run.tar.gz"
SITE = Path("/tmp/gpgpu-lessons-site")


def wheels(dest: Path) -> None:
    """Download the cp312 manylinux wheels (and their dependencies) the GPU machine lacks."""
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.whl"):
        old.unlink()
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--only-binary=:all:",
        "--dest",
        str(dest),
        "--python-version",
        GPU_PYTHON,
        "--implementation",
        "cp",
        "--abi",
        "cp312",
        "--abi",
        "abi3",
        "--abi",
        "none",
    ]
    for platform in PLATFORMS + ["any"]:
        command += ["--platform", platform]
    subprocess.run(command + GPU_WHEELS, check=True)
    total = sum(p.stat().st_size for p in dest.glob("*.whl"))
    print(f"{len(list(dest.glob('*.whl')))} wheels, {total / 2**20:.1f} MiB in {dest}")


def _install(wheel_dir: Path) -> dict:
    """Install the carried wheels into a temporary target; return the environment that sees them."""
    found = sorted(wheel_dir.glob("*.whl"))
    if not found:
        sys.exit(f"no wheels in {wheel_dir}: run 'make gpu-wheels' on a machine with network first")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--no-deps",
            "--no-compile",
            "--no-cache-dir",
            "--upgrade",
            "--target",
            str(SITE),
        ]
        + [str(p) for p in found],
        check=True,
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(SITE), str(ROOT), str(ROOT / "tools")]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env["NUMBA_ENABLE_CUDASIM"] = (
        "0"  # a GPU run must fail loudly rather than fall back to the simulator
    )
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _step(name: str, command: list[str], env: dict, log: Path, summary: list, timeout: int) -> int:
    """Run one step, log its output, and note its status and duration."""
    start = time.perf_counter()
    with log.open("w") as out:
        try:
            code = subprocess.run(
                command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, timeout=timeout
            ).returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    seconds = time.perf_counter() - start
    summary.append({"step": name, "status": code, "seconds": round(seconds, 1), "log": log.name})
    print(
        f"{name:40s} {'ok' if code == 0 else 'FAILED (' + str(code) + ')':14s} {seconds:7.1f} s",
        flush=True,
    )
    return code


def _pack(work: Path, out: Path, summary: list) -> None:
    """Write the summary, the archive and one combined log into OUT (again after every step)."""
    (work / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / ARCHIVE, "w:gz") as archive:
        archive.add(work, arcname="gpu-run")
    shutil.copy(work / "summary.json", out / "summary.json")
    with (out / "run.log").open("w") as combined:  # all logs in one file, for a quick look
        for log in sorted(work.glob("*.log")):
            combined.write(f"===== {log.name}\n{log.read_text()}\n")


def execute(wheel_dir: Path, out: Path, only: list[str], skip_tests: bool, timeout: int) -> int:
    """On the GPU machine: tests, profiler counters, every notebook; pack it all into one archive.

    The archive is rewritten after each step, so a run cut short still brings back what it did.
    """
    env = _install(wheel_dir)
    work = Path("/tmp/gpgpu-lessons-run")
    shutil.rmtree(work, ignore_errors=True)
    (work / "notebooks").mkdir(parents=True, exist_ok=True)
    (work / "recorded").mkdir(exist_ok=True)
    env["GPGPU_LESSONS_RECORD"] = str(work / "recorded")
    python = sys.executable
    steps = [("device", [python, "-m", "gpgpu_lessons"], "device.log")]
    if not skip_tests:
        steps.append(
            (
                "tests on the GPU",
                [
                    python,
                    "-m",
                    "pytest",
                    "tests",
                    "-q",
                    "-o",
                    "addopts=",
                    "-p",
                    "no:cacheprovider",
                    "-n",
                    "6",
                    "--dist",
                    "loadfile",
                ],
                "tests.log",
            )
        )
    notebooks = [
        notebook
        for notebook in sorted((ROOT / "notebooks").glob("*.ipynb"))
        if not only or any(notebook.name.startswith(prefix) for prefix in only)
    ]
    profiling = "gpgpu_lessons.l03_bank_conflicts.profiling"  # lesson 03's counters: with it
    if (ROOT / (profiling.replace(".", "/") + ".py")).exists():
        if any(notebook.name.startswith("03_") for notebook in notebooks):
            steps.append(("profiler counters (ncu)", [python, "-m", profiling], "profiling.log"))
    for notebook in notebooks:
        page = str(work / "notebooks" / notebook.name)
        run = [python, "-m", "gpgpu_tools.gpurun", "notebook", str(notebook), page]
        steps.append((f"notebook {notebook.name}", run, f"{notebook.stem}.log"))
    summary: list = []
    for name, command, log in steps:
        _step(name, command, env, work / log, summary, timeout)
        _pack(work, out, summary)
    print(f"packed {out / ARCHIVE}")
    return 0 if all(step["status"] == 0 for step in summary) else 1


def execute_notebook(source: Path, target: Path) -> None:
    """Execute one notebook (cwd = notebooks/), save it with its outputs even if a cell fails."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(source, as_version=4)
    client = NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(source.parent)}}
    )
    try:
        client.execute()
        nb.metadata.get("gpgpu_lessons", {}).pop("draft", None)  # a GPU run's outputs now
        if not nb.metadata.get("gpgpu_lessons", True):
            del nb.metadata["gpgpu_lessons"]
    finally:
        nbformat.write(nb, target)
    print(f"executed {source.name}")


def _merge_results(target: Path, fresh: dict) -> None:
    """Add a run's experiments to a GPU's results file; experiments the run did not redo stay."""
    if target.exists():
        kept = json.loads(target.read_text())
        fresh["experiments"] = {**kept["experiments"], **fresh["experiments"]}
    target.write_text(json.dumps(fresh, indent=1, ensure_ascii=False) + "\n")


def unpack(archive: Path) -> None:
    """Put a GPU run's executed notebooks and recorded results into this checkout."""
    with tarfile.open(archive) as tar:
        members = {Path(m.name).relative_to("gpu-run"): m for m in tar.getmembers() if m.isfile()}
        summary = json.loads(tar.extractfile(members[Path("summary.json")]).read())
        for relative, member in members.items():
            if relative.parent.name == "notebooks" and relative.suffix == ".ipynb":
                target = ROOT / "notebooks" / relative.name
            elif relative.parent.name == "recorded" and relative.suffix == ".json":
                target = ROOT / "gpgpu_lessons" / "recorded" / relative.name
                _merge_results(target, json.loads(tar.extractfile(member).read()))
                print(f"updated {target.relative_to(ROOT)}")
                continue
            else:
                continue
            target.write_bytes(tar.extractfile(member).read())
            print(f"updated {target.relative_to(ROOT)}")
    for step in summary:
        print(f"{step['step']:40s} {step['status']!s:10s} {step['seconds']:7.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_tools.gpurun",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    get = commands.add_parser("wheels", help="download the wheels the GPU machine lacks")
    get.add_argument("--dest", type=Path, default=ROOT / ".whl")
    run = commands.add_parser(
        "execute", help="on the GPU machine: tests, counters, notebooks, archive"
    )
    run.add_argument("--wheels", type=Path, default=ROOT / ".whl")
    run.add_argument("--out", type=Path, required=True)
    run.add_argument("--only", nargs="*", default=[], help="notebook name prefixes, e.g. 00 03")
    run.add_argument("--skip-tests", action="store_true")
    run.add_argument("--timeout", type=int, default=420, help="seconds per step")
    one = commands.add_parser("notebook", help="execute one notebook (used by execute)")
    one.add_argument("source", type=Path)
    one.add_argument("target", type=Path)
    back = commands.add_parser("unpack", help="take a GPU run's archive into the checkout")
    back.add_argument("archive", type=Path)
    args = parser.parse_args(argv)
    if args.command == "wheels":
        wheels(args.dest)
    elif args.command == "execute":
        return execute(args.wheels, args.out, args.only, args.skip_tests, args.timeout)
    elif args.command == "notebook":
        execute_notebook(args.source, args.target)
    else:
        unpack(args.archive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
