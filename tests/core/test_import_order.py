"""`import gpgpu_lessons` after numba, numba.cuda, numpy or matplotlib, on a machine without a GPU:
the simulator where Numba can still switch to it, one line saying what to restart where it cannot,
and never a traceback. Each order runs in a fresh interpreter with no CUDA driver."""

import os
import subprocess
import sys

import pytest

from gpgpu_lessons import runtime

pytestmark = pytest.mark.skipif(
    runtime.probe_cuda_driver()[0], reason="this machine has a CUDA driver: no order can fail"
)

# A kernel written as a student writes one (its own `from numba import cuda`), checked against
# NumPy on random data of an awkward size; it prints what numba.config says about the simulator.
KERNEL = """
import numpy as np
from numba import config, cuda

@cuda.jit
def scale(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 3 * x[i] + 1

x = np.random.default_rng(7).random(37)
out = np.empty_like(x)
scale[2, 32](x, out)
print("kernel", np.allclose(out, 3 * x + 1), "simulator", bool(config.ENABLE_CUDASIM))
"""

SWITCHES = {  # the orders in which Numba has not yet chosen its CUDA target
    "package first": "import gpgpu_lessons",
    "numba first": "import numba; import gpgpu_lessons",
    "numpy and matplotlib first": "import numpy, matplotlib; import gpgpu_lessons",
}


def run(code: str, **extra) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter, with none of the variables that choose the mode."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NUMBA_ENABLE_CUDASIM", runtime.COMPILE_ONLY_VARIABLE, "GPGPU_LESSONS_QUIET")
    }
    return subprocess.run(
        [sys.executable, "-c", code], env={**env, **extra}, capture_output=True, text=True
    )


def package_lines(done) -> list[str]:
    return [line for line in done.stdout.splitlines() if line.startswith("gpgpu_lessons:")]


@pytest.mark.parametrize("code", SWITCHES.values(), ids=SWITCHES.keys())
def test_the_simulator_is_chosen_in_one_line_and_a_kernel_runs(code):
    done = run(code + "\n" + KERNEL)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    (line,) = package_lines(done)
    assert "running on Numba's CUDA simulator" in line and "no CUDA driver" in line
    assert done.stdout.splitlines()[-1] == "kernel True simulator True"


def test_numba_cuda_first_without_a_gpu_says_to_restart_in_one_line():
    done = run("from numba import cuda; import gpgpu_lessons; print(gpgpu_lessons.runtime.MODE)")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr and done.stderr == ""
    line, mode = done.stdout.splitlines()
    assert line.startswith("gpgpu_lessons: numba.cuda was imported before gpgpu_lessons")
    assert "no CUDA driver" in line and "no kernel can run" in line
    assert "Restart the kernel" in line and "`import gpgpu_lessons` before" in line
    assert mode == runtime.COMPILE_ONLY  # Numba's GPU target without a GPU: nothing launches


def test_numba_cuda_first_in_the_simulator_keeps_it_and_a_kernel_runs():
    done = run("from numba import cuda; import gpgpu_lessons\n" + KERNEL, NUMBA_ENABLE_CUDASIM="1")
    assert done.returncode == 0, done.stderr
    (line,) = package_lines(done)
    assert "simulator" in line and "numba was imported before gpgpu_lessons" in line
    assert done.stdout.splitlines()[-1] == "kernel True simulator True"


def test_numba_first_then_a_gpu_demanded_without_one_is_one_line():
    done = run("import numba; import gpgpu_lessons", NUMBA_ENABLE_CUDASIM="0")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "asks for a real GPU" in done.stderr
