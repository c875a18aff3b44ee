"""Choose a real GPU or Numba's CUDA simulator before Numba's CUDA target starts; describe it.

Numba reads ``NUMBA_ENABLE_CUDASIM`` when ``numba.cuda`` is first imported, so this module decides
before that: after a plain ``import numba`` it can still switch (it sets the variable and asks
Numba to read its configuration again); once ``numba.cuda`` is imported for a GPU on a machine
without one, nothing can switch it, and the mode line says to restart Python and import
``gpgpu_lessons`` first.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import asdict, dataclass

GPU = "gpu"
SIMULATOR = "simulator"
COMPILE_ONLY = "compile-only"  # Numba's real CUDA target without a GPU: PTX, no launches
COMPILE_ONLY_VARIABLE = "GPGPU_LESSONS_COMPILE_ONLY"


class GPUUnavailableError(RuntimeError):
    """A real GPU was asked for (NUMBA_ENABLE_CUDASIM=0) but none can be used."""


def _driver_library_name() -> str:
    """The file name of the CUDA driver library on this platform."""
    return "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"


def probe_cuda_driver() -> tuple[bool, str]:
    """Ask the CUDA driver, through ctypes, whether a GPU can be used; return (ok, reason)."""
    name = _driver_library_name()
    try:
        driver = ctypes.CDLL(name)
    except OSError:
        return False, f"no CUDA driver ({name} not found)"
    status = driver.cuInit(0)
    if status != 0:
        return False, f"the CUDA driver did not start (cuInit returned error {status})"
    count = ctypes.c_int(0)
    status = driver.cuDeviceGetCount(ctypes.byref(count))
    if status != 0 or count.value == 0:
        return False, "the CUDA driver found no GPU"
    plural = "s" if count.value > 1 else ""
    return True, f"the CUDA driver found {count.value} GPU{plural}"


def _choose_mode() -> tuple[str, str]:
    """Decide GPU or simulator once; tell a Numba imported already what was decided."""
    if "numba.cuda" in sys.modules:
        return _mode_numba_cuda_chose()
    mode, reason = _choose_before_numba_cuda()
    config = sys.modules.get("numba.core.config")
    if config is not None:  # `import numba` came first: it read the environment, so read it again
        config.reload_config()
    return mode, reason


def _mode_numba_cuda_chose() -> tuple[str, str]:
    """numba.cuda, imported before gpgpu_lessons, fixed its target: follow it if it can work."""
    from numba.cuda.core import config

    if config.ENABLE_CUDASIM:
        return SIMULATOR, "numba was imported before gpgpu_lessons, with NUMBA_ENABLE_CUDASIM=1"
    if os.environ.get(COMPILE_ONLY_VARIABLE, "").strip() == "1":
        return COMPILE_ONLY, f"{COMPILE_ONLY_VARIABLE}=1 is set: kernels compile to PTX, none runs"
    found, reason = probe_cuda_driver()
    if found:
        return GPU, f"{reason} (numba was imported before gpgpu_lessons, for the GPU)"
    _STUCK.append(reason)
    return COMPILE_ONLY, reason


def _choose_before_numba_cuda() -> tuple[str, str]:
    """Decide GPU or simulator from the environment and a driver probe; set the environment."""
    if os.environ.get(COMPILE_ONLY_VARIABLE, "").strip() == "1":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
        return COMPILE_ONLY, f"{COMPILE_ONLY_VARIABLE}=1 is set: kernels compile to PTX, none runs"
    requested = os.environ.get("NUMBA_ENABLE_CUDASIM", "").strip()
    if requested not in ("", "0", "1"):
        raise ValueError(
            f"NUMBA_ENABLE_CUDASIM={requested!r} is not understood: set it to 1 (simulator), "
            "0 (real GPU), or unset it to let gpgpu_lessons choose."
        )
    if requested == "1":
        return SIMULATOR, "NUMBA_ENABLE_CUDASIM=1 is set"
    found, reason = probe_cuda_driver()
    if requested == "0":
        if not found:
            raise GPUUnavailableError(
                f"NUMBA_ENABLE_CUDASIM=0 asks for a real GPU, but {reason}. Install the NVIDIA "
                "driver and numba-cuda's CUDA libraries (README: 'Running on an NVIDIA GPU'), "
                "or unset NUMBA_ENABLE_CUDASIM to run on Numba's CUDA simulator."
            )
        return GPU, reason + " (NUMBA_ENABLE_CUDASIM=0 is set)"
    if not found:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        return SIMULATOR, reason
    return GPU, reason


_STUCK: list[str] = []  # why no GPU works, when numba.cuda came first and chose the GPU anyway

# Lessons launch 1-thread and 1-block kernels on purpose; Numba's warning would clutter slides.
os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
try:
    MODE, REASON = _choose_mode()
except (GPUUnavailableError, ValueError) as problem:  # one clear line, not a traceback
    raise SystemExit(f"gpgpu_lessons: {problem}") from None


_SIMULATING: list[bool] = []  # numba.config's answer, kept: Numba reads it once, at import


def is_simulator() -> bool:
    """True when kernels run on Numba's CUDA simulator (numba.config, the source of truth, says)."""
    if not _SIMULATING:  # asked on every launch: ask Numba once
        from numba import config

        _SIMULATING.append(bool(config.ENABLE_CUDASIM))
    return _SIMULATING[0]


def mode_line() -> str:
    """One line that says which mode is active and why."""
    if _STUCK:
        return (
            f"gpgpu_lessons: numba.cuda was imported before gpgpu_lessons and chose a GPU, but "
            f"{_STUCK[0]}: no kernel can run. Restart the kernel (or Python) and run "
            "`import gpgpu_lessons` before anything imports numba.cuda, to use the simulator."
        )
    if MODE == COMPILE_ONLY:
        return f"gpgpu_lessons: compile-only mode ({REASON})."
    if MODE == GPU:
        return f"gpgpu_lessons: running on the GPU ({device_info().name}): {REASON}."
    return (
        f"gpgpu_lessons: running on Numba's CUDA simulator: {REASON}. "
        "Sizes are tiny and times are host times of a Python emulation, not GPU performance."
    )


@dataclass(frozen=True)
class DeviceInfo:
    """What a lesson needs to know about the device it runs on."""

    name: str
    simulator: bool
    compute_capability: tuple[int, int] | None = None
    sm_count: int | None = None
    memory_bytes: int | None = None
    l2_bytes: int | None = None
    memory_clock_khz: int | None = None
    bus_width_bits: int | None = None

    @property
    def theoretical_bandwidth_gbs(self) -> float | None:
        """Peak DRAM bandwidth in GB/s: 2 transfers per clock (DDR) x bus width."""
        if not self.memory_clock_khz or not self.bus_width_bits:
            return None
        return 2 * self.memory_clock_khz * 1e3 * self.bus_width_bits / 8 / 1e9

    def as_dict(self) -> dict:
        """A JSON-ready dictionary, the derived bandwidth included."""
        return {**asdict(self), "theoretical_bandwidth_gbs": self.theoretical_bandwidth_gbs}

    def __str__(self) -> str:
        if self.simulator:
            return f"{self.name}: kernels run as Python threads on the CPU"
        cc = ".".join(map(str, self.compute_capability))
        lines = [
            f"{self.name} (compute capability {cc})",
            f"  streaming multiprocessors: {self.sm_count}",
            f"  memory: {self.memory_bytes / 2**30:.1f} GiB",
            f"  L2 cache: {self.l2_bytes / 2**20:.0f} MiB",
        ]
        if self.theoretical_bandwidth_gbs:
            lines.append(
                f"  theoretical memory bandwidth: {self.theoretical_bandwidth_gbs:.0f} GB/s"
            )
        return "\n".join(lines)


_device_info: DeviceInfo | None = None


def device_info() -> DeviceInfo:
    """Describe the current device (or the simulator, clearly labelled as such)."""
    global _device_info
    if _device_info is None:
        _device_info = _read_device_info()
    return _device_info


def _read_device_info() -> DeviceInfo:
    """Read the device attributes through Numba."""
    if MODE == SIMULATOR:
        return DeviceInfo(name="Numba CUDA simulator (no GPU)", simulator=True)
    if MODE == COMPILE_ONLY:
        return DeviceInfo(
            name="no GPU (compile-only mode)",
            simulator=False,
            compute_capability=_compile_only_target,
        )
    from numba import cuda

    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
    _, total = cuda.current_context().get_memory_info()
    return DeviceInfo(
        name=name,
        simulator=False,
        compute_capability=tuple(device.compute_capability),
        sm_count=device.MULTIPROCESSOR_COUNT,
        memory_bytes=int(total),
        l2_bytes=device.L2_CACHE_SIZE,
        memory_clock_khz=device.MEMORY_CLOCK_RATE,
        bus_width_bits=device.GLOBAL_MEMORY_BUS_WIDTH,
    )


_compile_only_target: tuple[int, int] | None = None


def compile_for(compute_capability: tuple[int, int]) -> None:
    """Compile-only mode: compile device functions for this compute capability, e.g. (9, 0).

    Numba asks the current device for its compute capability whenever it compiles a device
    function; without a GPU there is none, so this answers in its place (kernels take theirs
    from the cc argument of compile_ptx). Call it before the first compilation.
    """
    global _compile_only_target, _device_info
    if MODE != COMPILE_ONLY:
        raise RuntimeError(
            f"compile_for needs compile-only mode ({COMPILE_ONLY_VARIABLE}=1); "
            f"this process runs in {MODE} mode"
        )
    from types import SimpleNamespace

    from numba.cuda import compiler, dispatcher

    _compile_only_target = (int(compute_capability[0]), int(compute_capability[1]))
    _device_info = None
    stand_in = SimpleNamespace(
        compute_capability=_compile_only_target, name="no GPU (compile-only mode)"
    )
    dispatcher.get_current_device = compiler.get_current_device = lambda: stand_in


def pick(*, gpu, simulator):
    """Return the value for the active mode: a problem size, a repeat count, a list of sizes."""
    return simulator if MODE == SIMULATOR else gpu


# Sizes shared by several lessons. On a GPU they are well above the 50-60 MB L2 of an
# H100/H200 so that memory (HBM), not the cache, is measured; in the simulator they are tiny.
PRESETS = {
    "vector_elements": pick(gpu=2**28, simulator=2**12),
    "image_side": pick(gpu=8192, simulator=40),
    "repeat": pick(gpu=10, simulator=1),
}
