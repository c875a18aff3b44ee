"""Every kernel of the package compiled to PTX for the GPUs students have, on a machine without one.

A module that defines kernels ends with its registry of launch signatures:

    SIGNATURES = {transpose_padded: ["void(float32[:, ::1], float32[:, ::1])"], ...}

``python -m gpgpu_tools.ptx`` imports every such module in compile-only mode (Numba's real
CUDA target without a driver, see runtime.compile_for), compiles each (kernel, signature) with
NVVM for every architecture of ARCHITECTURES (or those --arch names; --every-arch-for names
kernels compiled for all four even so), assembles the PTX with ptxas (registers, spills, shared
memory) for PTXAS_ARCHITECTURES, and prints a report. A failed compilation, a
module-level kernel missing from its module's SIGNATURES, or more static shared memory than a
block may declare names the kernel and makes the exit status 1. tests/test_ptx.py runs it
through run().

The small functions on PTX text below (wide_accesses, const_arrays, local_bytes,
static_shared_bytes) are the checks of what the lessons claim: 16-byte loads and stores, a
.const table or none, everything in registers.

NVVM and ptxas come with the CUDA compiler wheels: pip install -e ".[cu12]".
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.util
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gpgpu_lessons import runtime
from gpgpu_lessons.launch import STATIC_SHARED_MEMORY_BYTES
from gpgpu_lessons.ptxfacts import (
    access_bytes,
    summary,
)
from gpgpu_lessons.specialise import python_function

ARCHITECTURES = {"sm_75": (7, 5), "sm_86": (8, 6), "sm_89": (8, 9), "sm_90": (9, 0)}
"""The GPUs students have: T4 (free notebook services), RTX 30, RTX 40 and L4, H100 and H200."""

PTXAS_ARCHITECTURES = ("sm_75", "sm_90")
"""Where ptxas assembles every PTX by default: the oldest and the newest architecture. What both
accept, those between accept too, and their register counts and spills bracket the others'."""

PACKAGE = "gpgpu_lessons"


def _global_accesses(facts: dict, kind: str) -> list[str]:
    """The global loads ('ld') or stores ('st') of a PTX's facts, widest first."""
    ops = [op for op in facts["instructions"] if op.startswith(f"{kind}.global")]
    return sorted(ops, key=lambda op: (-access_bytes(op), op))


def _wide(facts: dict, kinds: tuple[str, ...], nbytes: int) -> str | None:
    missing = [
        kind
        for kind in kinds
        if not any(access_bytes(op) == nbytes for op in _global_accesses(facts, kind))
    ]
    if not missing:
        return None
    seen = ", ".join(op for kind in kinds for op in _global_accesses(facts, kind)) or "none"
    names = {"ld": "load", "st": "store"}
    return (
        f"no {nbytes}-byte global {' or '.join(names[k] for k in missing)} "
        f"(global accesses: {seen})"
    )


def _const_table(facts: dict) -> str | None:
    if facts["const_arrays"] and any(op.startswith("ld.const") for op in facts["instructions"]):
        return None
    return f"no .const array read with ld.const (.const arrays: {facts['const_arrays'] or 'none'})"


def _no_const_table(facts: dict) -> str | None:
    loads = sum(n for op, n in facts["instructions"].items() if op.startswith("ld.const"))
    if not facts["const_arrays"] and not loads:
        return None
    return f"reads constant memory: .const arrays {facts['const_arrays']}, {loads} ld.const"


def _weights_in_instructions(facts: dict) -> str | None:
    problem = _no_const_table(facts)
    if problem is None and facts["immediate_fmas"]:
        return None
    return problem or "no multiply-add with an immediate weight"


def _in_registers(facts: dict) -> str | None:
    local_ops = sorted(op for op in facts["instructions"] if ".local" in op)
    spills = facts.get("ptxas", {})
    spilled = spills.get("spill_store_bytes", 0) + spills.get("spill_load_bytes", 0)
    if not facts["local_bytes"] and not local_ops and not spilled:
        return None
    return (
        f"uses local memory: {facts['local_bytes']} bytes declared .local "
        f"({', '.join(local_ops) or 'no ld/st.local'}), {spilled} bytes spilled by ptxas"
    )


CLAIMS = {
    "16-byte loads": lambda facts: _wide(facts, ("ld",), 16),
    "16-byte loads and stores": lambda facts: _wide(facts, ("ld", "st"), 16),
    "8-byte loads and stores": lambda facts: _wide(facts, ("ld", "st"), 8),
    "a .const table": _const_table,
    "no .const table": _no_const_table,
    "weights in the instructions": _weights_in_instructions,
    "in registers": _in_registers,
}
"""What a lesson may claim about a kernel's PTX, each a check of summary() facts (with ptxas's);
besides these, 'N loads before the first store' (N global loads in flight, e.g. '4 loads ...')."""
_LOADS_FIRST = re.compile(r"(\d+) loads before the first store")


def _loads_first(facts: dict, wanted: int) -> str | None:
    found = facts["loads_before_first_store"]
    if found >= wanted:
        return None
    return f"{found} global loads before the first global store, not {wanted}"


def claim_problem(facts: dict, claim: str) -> str | None:
    """None when one PTX's facts show the claim (a key of CLAIMS); else what they show instead."""
    if match := _LOADS_FIRST.fullmatch(claim):
        return _loads_first(facts, int(match.group(1)))
    if claim not in CLAIMS:
        raise ValueError(f"unknown claim {claim!r}; known: {', '.join(CLAIMS)}")
    return CLAIMS[claim](facts)


# ---- ptxas: the assembler the driver would run -----------------------------------------------


class CompileError(RuntimeError):
    """NVVM or ptxas rejected a kernel."""


SMOKE_TEST = """
from numba import cuda
def smoke(a):
    a[0] = 1.0
cuda.compile_ptx(smoke, "void(float32[::1])", cc=(7, 5))
"""


@functools.cache
def missing_compiler() -> str | None:
    """Why kernels cannot be compiled to PTX here, or None when they can.

    Compiles a one-line kernel with stock Numba in a fresh process (this one may already be
    committed to the simulator): any missing piece (NVVM, NVRTC, the CUDA headers) shows up.
    """
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run(
        [sys.executable, "-c", SMOKE_TEST], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode == 0:
        return None
    last = (done.stderr.strip().splitlines() or ["no error message"])[-1]
    return (
        f"the CUDA compiler does not work here ({last[:200]}): "
        'pip install -e ".[cu12]" installs it (no GPU needed)'
    )


def find_ptxas() -> str | None:
    """The ptxas of the CUDA compiler wheels (or of a CUDA toolkit on PATH); None without one."""
    try:
        from cuda.pathfinder import find_nvidia_binary_utility

        found = find_nvidia_binary_utility("ptxas")
    except Exception:  # no cuda-pathfinder, or a version without binary lookup
        found = None
    return found or shutil.which("ptxas")


_PTXAS_NUMBERS = {
    "registers": re.compile(r"Used (\d+) registers"),
    "stack_bytes": re.compile(r"(\d+) bytes stack frame"),
    "spill_store_bytes": re.compile(r"(\d+) bytes spill stores"),
    "spill_load_bytes": re.compile(r"(\d+) bytes spill loads"),
    "shared_bytes": re.compile(r"(\d+) bytes smem"),
}


def assemble(ptx: str, arch: str, ptxas: str, folder: str) -> dict:
    """ptxas -v on one PTX: registers, stack frame, spill bytes and shared memory per kernel."""
    path = os.path.join(folder, f"kernel_{arch}.ptx")
    Path(path).write_text(ptx)
    done = subprocess.run(
        [ptxas, f"-arch={arch}", "-v", path, "-o", os.devnull],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "error" in line] or [done.stderr]
        raise CompileError("ptxas: " + " ".join(line.strip() for line in errors))
    return {
        key: max((int(n) for n in pattern.findall(done.stderr)), default=0)
        for key, pattern in _PTXAS_NUMBERS.items()
    }


# ---- the registry ----------------------------------------------------------------------------


@dataclass
class Entry:
    """One registered kernel and the signatures it is launched with."""

    module: str
    name: str
    kernel: object
    signatures: list


def is_kernel(obj) -> bool:
    """True for a CUDA kernel's dispatcher (not a device function), real target or simulator."""
    if runtime.is_simulator():
        from numba.cuda.simulator.kernel import FakeCUDAKernel

        return isinstance(obj, FakeCUDAKernel) and not obj._device
    from numba.cuda.dispatcher import CUDADispatcher

    return isinstance(obj, CUDADispatcher) and not obj.targetoptions.get("device", False)


def kernel_modules(package: str = PACKAGE) -> list[str]:
    """The modules of a package that may hold kernels: their source mentions jit or SIGNATURES."""
    root = importlib.import_module(package)
    names = [package]
    if hasattr(root, "__path__"):
        names += [m.name for m in pkgutil.walk_packages(root.__path__, package + ".")]
    found = []
    for name in names:
        if name.rsplit(".", 1)[-1] == "__main__":
            continue
        origin = importlib.util.find_spec(name).origin
        if origin and origin.endswith(".py"):
            source = Path(origin).read_text(encoding="utf-8")
            if "jit" in source or "SIGNATURES" in source:
                found.append(name)
    return found


def registry(packages=(PACKAGE,)) -> tuple[list[Entry], list[str]]:
    """(entries, problems): every registered kernel, and each problem of the registry in a line.

    Problems: a module that does not import, a module-level kernel missing from its module's
    SIGNATURES, an entry that is not a kernel or has no signature, two kernels with one name.
    """
    entries: list[Entry] = []
    problems: list[str] = []
    for package in packages:
        try:
            names = kernel_modules(package)
        except Exception as error:
            problems.append(
                f"{package}: does not import in {runtime.MODE} mode: "
                f"{type(error).__name__}: {error}"
            )
            continue
        for name in names:
            try:
                module = importlib.import_module(name)
            except Exception as error:
                problems.append(
                    f"{name}: does not import in {runtime.MODE} mode: "
                    f"{type(error).__name__}: {error}"
                )
                continue
            table = getattr(module, "SIGNATURES", {})
            if not isinstance(table, dict):
                problems.append(
                    f"{name}.SIGNATURES: a dict {{kernel: [signature, ...]}}, "
                    f"not {type(table).__name__}"
                )
                continue
            registered = {id(kernel) for kernel in table}
            for attribute, value in vars(module).items():
                if (
                    is_kernel(value)
                    and python_function(value).__module__ == name
                    and id(value) not in registered
                ):
                    problems.append(
                        f"{name}.{attribute}: a CUDA kernel missing from "
                        f"{name}.SIGNATURES (list the signatures it is launched with)"
                    )
            for kernel, signatures in table.items():
                label = f"{name}.SIGNATURES[{getattr(kernel, '__name__', kernel)!r}]"
                if not is_kernel(kernel):
                    problems.append(f"{label}: not a CUDA kernel (device functions need no entry)")
                elif isinstance(signatures, str) or not signatures:
                    problems.append(f"{label}: give a list of signature strings")
                else:
                    kernel_name = python_function(kernel).__name__
                    entries.append(Entry(name, kernel_name, kernel, list(signatures)))
    names = Counter((e.module, e.name) for e in {id(e.kernel): e for e in entries}.values())
    problems += [
        f"{module}.{kernel}: {count} different kernels share this name (profilers show "
        "one name for all; set __name__ in the factory)"
        for (module, kernel), count in names.items()
        if count > 1
    ]
    return entries, problems


# ---- compiling -------------------------------------------------------------------------------


def compile_to_ptx(kernel, signature, archs, seconds: Counter | None = None) -> dict[str, str]:
    """{arch: PTX} of one kernel for one signature, with the kernel's own jit options.

    Numba types and lowers the kernel once, for the oldest architecture of archs (its lowering
    depends on the compute capability only below 6.0), and NVVM runs once per architecture.
    seconds, if given, adds the CPU time of each step: 'numba' (typing, lowering) and 'nvvm'.
    """
    from numba.cuda import compiler

    seconds = Counter() if seconds is None else seconds
    options = kernel.targetoptions
    ccs = {arch: ARCHITECTURES[arch] for arch in archs}
    step, start = "numba", time.process_time()
    try:
        library, _ = compiler._compile_pyfunc_with_fixup(
            python_function(kernel),
            signature,
            device=False,
            abi="numba",
            abi_info=None,
            cc=min(ccs.values()),
            debug=options.get("debug"),
            lineinfo=options.get("lineinfo", False),
            fastmath=options.get("fastmath", False),
            opt=options.get("opt"),
            forceinline=False,
            launch_bounds=options.get("launch_bounds"),
            lto=False,
        )
        lowered = time.process_time()
        seconds[step] += lowered - start
        step, start = "nvvm", lowered
        return {arch: "\n".join(library.get_asm_strs(cc=cc)) for arch, cc in ccs.items()}
    finally:
        seconds[step] += time.process_time() - start


def _first_lines(error: Exception, count: int = 12) -> str:
    """An exception as 'Type: message', cut to its first lines."""
    lines = [line.rstrip() for line in str(error).strip().splitlines() if line.strip()]
    text = "\n".join(lines[:count]) + ("\n..." if len(lines) > count else "")
    return f"{type(error).__name__}: {text}"


def named(entry: Entry, names) -> bool:
    """True when one of names is the entry's 'module.kernel' or a package or module above it."""
    full = f"{entry.module}.{entry.name}"
    return any(full == name or full.startswith(name + ".") for name in names)


def compile_entries(
    entries: list[Entry],
    archs,
    ptxas: str | None,
    ptxas_archs=(),
    ptx_dir=None,
    every_arch_for=(),
):
    """Compile each (kernel, signature) for each architecture; one result dict per configuration.

    ptxas (its path, or None) assembles the PTX of the architectures in ptxas_archs; the kernels
    every_arch_for names (see named) are compiled for every architecture of ARCHITECTURES.
    """
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for entry in entries:
            entry_archs = tuple(ARCHITECTURES) if named(entry, every_arch_for) else archs
            for signature in entry.signatures:
                seconds = Counter()
                result = {
                    "module": entry.module,
                    "kernel": entry.name,
                    "signature": str(signature),
                    "error": None,
                    "ptx": {},
                }
                try:
                    ptxes = compile_to_ptx(entry.kernel, signature, entry_archs, seconds)
                except Exception as error:
                    result["error"] = _first_lines(error)
                    ptxes = {}
                start = _children_cpu()
                for arch, ptx in ptxes.items():
                    assembler = ptxas if arch in ptxas_archs else None
                    result["ptx"][arch] = _check(ptx, arch, assembler, folder)
                    if ptx_dir:
                        _write_ptx(ptx_dir, result, arch, ptx)
                seconds["ptxas"] += _children_cpu() - start
                if result["error"] is None:
                    result["error"] = _per_architecture(result["ptx"])
                result["cpu_seconds"] = {step: round(t, 3) for step, t in seconds.items()}
                results.append(result)
    return results


def _children_cpu() -> float:
    """CPU seconds the finished child processes (ptxas) used so far."""
    times = os.times()
    return times.children_user + times.children_system


def _check(ptx: str, arch: str, ptxas: str | None, folder: str) -> dict:
    """The facts of one PTX, ptxas's numbers, and an 'error' when it cannot run on that GPU."""
    facts = summary(ptx)
    if facts["shared_bytes"] > STATIC_SHARED_MEMORY_BYTES:
        facts["error"] = (
            f"{facts['shared_bytes']} bytes of static shared memory, more than "
            f"the {STATIC_SHARED_MEMORY_BYTES} (48 KiB) a block may declare"
        )
    elif ptxas:
        try:
            facts["ptxas"] = assemble(ptx, arch, ptxas, folder)
        except CompileError as error:
            facts["error"] = str(error)
    return facts


def _per_architecture(facts: dict) -> str | None:
    """The errors of the architectures, each message once: 'sm_75 sm_86: ...; sm_90: ...'."""
    archs_of: dict[str, list[str]] = {}
    for arch, found in facts.items():
        if found.get("error"):
            archs_of.setdefault(found["error"], []).append(arch)
    return "; ".join(f"{' '.join(archs)}: {error}" for error, archs in archs_of.items()) or None


def _write_ptx(folder: str, result: dict, arch: str, ptx: str) -> None:
    """Keep one PTX as FOLDER/module.kernel/signature.arch.ptx for a reader."""
    signature = re.sub(r"[^\w]+", "_", result["signature"]).strip("_")
    path = Path(folder) / f"{result['module']}.{result['kernel']}" / f"{signature}.{arch}.ptx"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ptx)


def versions() -> dict:
    """The versions the PTX was compiled with."""
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": sys.version.split()[0]}
    for name in ("numpy", "numba", "numba-cuda", "llvmlite", "cuda-bindings"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def compile_registry(
    packages=(PACKAGE,),
    archs=tuple(ARCHITECTURES),
    *,
    ptxas_archs=PTXAS_ARCHITECTURES,
    ptx_dir=None,
    every_arch_for=(),
) -> dict:
    """The whole loop, in this (compile-only) process: the report run() returns."""
    start = time.perf_counter()
    compiled = [a for a in ARCHITECTURES if a in archs or every_arch_for]
    runtime.compile_for(min(ARCHITECTURES[arch] for arch in compiled))
    entries, problems = registry(packages)
    sampled = [e for e in entries if named(e, every_arch_for)]
    problems += [
        f"--every-arch-for {name}: names no registered kernel"
        for name in every_arch_for
        if not any(named(e, [name]) for e in entries)
    ]
    ptxas = find_ptxas() if ptxas_archs else None
    results = compile_entries(entries, archs, ptxas, ptxas_archs, ptx_dir, every_arch_for)
    return {
        "packages": list(packages),
        "archs": list(archs),
        "every_arch_for": list(every_arch_for),
        "every_arch_kernels": len({id(e.kernel) for e in sampled}),
        "every_arch_configurations": sum(len(e.signatures) for e in sampled),
        "versions": versions(),
        "ptxas": ptxas,
        "ptxas_archs": [arch for arch in compiled if ptxas and arch in ptxas_archs],
        "kernels": len({id(e.kernel) for e in entries}),
        "configurations": len(results),
        "problems": problems,
        "results": results,
        "seconds": round(time.perf_counter() - start, 2),
        "cpu_seconds": round(time.process_time() + _children_cpu(), 2),
        "step_cpu_seconds": {
            step: round(sum(r["cpu_seconds"].get(step, 0) for r in results), 2)
            for step in ("numba", "nvvm", "ptxas")
        },
    }


def failures(report: dict) -> list[str]:
    """Every problem of a report, one line each naming its kernel or module; [] when none."""
    found = list(report.get("problems", []))
    found += [
        f"{r['module']}.{r['kernel']} {r['signature']}: {r['error']}"
        for r in report.get("results", [])
        if r["error"]
    ]
    return found


def describe(report: dict, verbose: bool = False) -> str:
    """The report as text: failures (verbose: every configuration), then one summary line."""
    lines = []
    for r in report["results"]:
        if r["error"] or verbose:
            facts = [f for f in r["ptx"].values() if "ptxas" in f]
            regs = sorted({f["ptxas"]["registers"] for f in facts})
            shared = max((f["shared_bytes"] for f in facts), default=0)
            detail = f"registers {regs[0]}-{regs[-1]}, shared {shared} B" if regs else ""
            state = "FAIL" if r["error"] else "ok  "
            lines.append(
                f"{state} {r['module']}.{r['kernel']} {r['signature']}  "
                f"{sum(r['cpu_seconds'].values()):.2f} s  {detail}".rstrip()
            )
            if r["error"]:
                lines += [f"     {line}" for line in r["error"].splitlines()]
    lines += [f"PROBLEM {p}" for p in report["problems"]]
    v = report["versions"]
    failed = sum(1 for r in report["results"] if r["error"])
    steps = ", ".join(f"{step} {t:.1f}" for step, t in report["step_cpu_seconds"].items())
    lines.append(
        f"PTX: {report['kernels']} kernels, {_architectures(report)} in "
        f"{report['seconds']:.1f} s, {report['cpu_seconds']:.1f} s of CPU ({steps}); "
        f"{failed} failed, "
        f"{len(report['problems'])} registry problems "
        f"(numba {v['numba']}, numba-cuda {v['numba-cuda']}, numpy {v['numpy']}"
        f"; ptxas for {' '.join(report['ptxas_archs']) or 'none'})"
    )
    return "\n".join(lines)


def _architectures(report: dict) -> str:
    """'249 configurations x 1 architectures (sm_75), 40 of them (21 kernels) x 4 (...)'."""
    archs = report["archs"]
    text = f"{report['configurations']} configurations x {len(archs)} architectures "
    text += f"({' '.join(archs)})"
    if report.get("every_arch_kernels") and len(archs) < len(ARCHITECTURES):
        text += (
            f", {report['every_arch_configurations']} of them ({report['every_arch_kernels']} "
            f"kernels) x {len(ARCHITECTURES)} ({' '.join(ARCHITECTURES)})"
        )
    return text


# ---- running it from anywhere ----------------------------------------------------------------


def run(
    packages=(PACKAGE,),
    archs=tuple(ARCHITECTURES),
    *,
    command=None,
    pythonpath=(),
    timeout: float = 1800,
    every_arch_for=(),
    extra_args=(),
) -> dict:
    """Run the loop in a compile-only subprocess; its report, with 'output' and 'returncode'.

    command: how to start `python -m gpgpu_tools.ptx` (another environment's python, say);
    pythonpath: folders to put before the package (where test-only packages live);
    every_arch_for: kernels ('module.kernel', or a module) compiled for every architecture;
    timeout: wall seconds (generous: the whole package takes about two minutes of CPU).
    """
    command = list(command or [sys.executable, "-m", "gpgpu_tools.ptx"])
    env = {**os.environ, runtime.COMPILE_ONLY_VARIABLE: "1", "GPGPU_LESSONS_QUIET": "1"}
    env["PYTHONPATH"] = os.pathsep.join([*map(str, pythonpath), env.get("PYTHONPATH", "")]).strip(
        os.pathsep
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.json"
        done = subprocess.run(
            [
                *command,
                *("--json", str(path), "--arch", ",".join(archs)),
                *(("--every-arch-for", ",".join(every_arch_for)) if every_arch_for else ()),
                *extra_args,
                *packages,
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
        report = (
            json.loads(path.read_text())
            if path.exists()
            else {
                "problems": [
                    f"the compile loop stopped before its report (exit status "
                    f"{done.returncode}): {done.stderr.strip()[-2000:]}"
                ],
                "results": [],
            }
        )
    report["output"] = done.stdout + done.stderr
    report["returncode"] = done.returncode
    return report


def main(argv=None) -> int:
    """python -m gpgpu_tools.ptx [PACKAGE ...] [--arch sm_75,sm_90] [--every-arch-for NAMES]
    [--json FILE] [-v]."""
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_tools.ptx", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "packages", nargs="*", default=[PACKAGE], help="packages to scan (default: %(default)s)"
    )
    parser.add_argument(
        "--arch", default=",".join(ARCHITECTURES), help="architectures (default: %(default)s)"
    )
    parser.add_argument(
        "--every-arch-for",
        default="",
        help="kernels (module.kernel, or a module or package: all of its kernels) compiled for "
        "every architecture whatever --arch says, comma-separated",
    )
    parser.add_argument("--json", help="write the whole report to this file")
    parser.add_argument("--ptx-dir", help="keep every PTX in this folder")
    parser.add_argument(
        "--ptxas-arch",
        default=",".join(PTXAS_ARCHITECTURES),
        help="architectures ptxas assembles: a list, 'all' or 'none' (default: %(default)s)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="a line for every configuration"
    )
    args = parser.parse_args(argv)
    archs = [a.strip() for a in args.arch.split(",") if a.strip()]
    ptxas_archs = {"all": ",".join(ARCHITECTURES), "none": ""}.get(args.ptxas_arch, args.ptxas_arch)
    ptxas_archs = [a.strip() for a in ptxas_archs.split(",") if a.strip()]
    unknown = [a for a in archs + ptxas_archs if a not in ARCHITECTURES]
    if unknown:
        parser.error(f"unknown architecture(s) {unknown}; known: {', '.join(ARCHITECTURES)}")
    if runtime.MODE != runtime.COMPILE_ONLY:  # numba is imported already: start afresh
        env = {**os.environ, runtime.COMPILE_ONLY_VARIABLE: "1", "GPGPU_LESSONS_QUIET": "1"}
        argv = sys.argv[1:] if argv is None else list(argv)
        return subprocess.call([sys.executable, "-m", "gpgpu_tools.ptx", *argv], env=env)
    every_arch_for = [n.strip() for n in args.every_arch_for.split(",") if n.strip()]
    report = compile_registry(
        args.packages,
        archs,
        ptxas_archs=ptxas_archs,
        ptx_dir=args.ptx_dir,
        every_arch_for=every_arch_for,
    )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    print(describe(report, verbose=args.verbose))
    return 1 if failures(report) else 0


if __name__ == "__main__":
    sys.exit(main())
