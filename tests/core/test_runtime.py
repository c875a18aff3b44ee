"""GPU-or-simulator selection, the device description and the size presets."""

import os
import subprocess
import sys

import pytest

from gpgpu_lessons import runtime


def run_import(env_value, *, before="", code="import gpgpu_lessons"):
    """Import the package in a fresh interpreter with NUMBA_ENABLE_CUDASIM set (or unset)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    if env_value is not None:
        env["NUMBA_ENABLE_CUDASIM"] = env_value
    return subprocess.run(
        [sys.executable, "-c", before + code], env=env, capture_output=True, text=True
    )


def test_explicit_simulator_is_honoured():
    done = run_import(
        "1", code="import gpgpu_lessons; from gpgpu_lessons import runtime; print(runtime.MODE)"
    )
    assert done.returncode == 0, done.stderr
    first, mode = done.stdout.strip().splitlines()
    assert "simulator" in first and "NUMBA_ENABLE_CUDASIM=1 is set" in first
    assert mode == "simulator"


def test_exactly_one_line_is_printed():
    done = run_import("1")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.strip().splitlines()) == 1


@pytest.mark.skipif(runtime.probe_cuda_driver()[0], reason="this machine has a usable GPU")
def test_without_gpu_falls_back_to_simulator_and_says_why():
    done = run_import(
        None, code="import gpgpu_lessons; from numba import config; print(config.ENABLE_CUDASIM)"
    )
    assert done.returncode == 0, done.stderr
    line, flag = done.stdout.strip().splitlines()
    assert "simulator" in line and (
        "no CUDA driver" in line or "found no GPU" in line or "did not start" in line
    )
    assert flag == "1"


@pytest.mark.skipif(runtime.probe_cuda_driver()[0], reason="this machine has a usable GPU")
def test_gpu_demanded_without_gpu_says_what_to_do():
    done = run_import("0")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "asks for a real GPU" in done.stderr and "unset NUMBA_ENABLE_CUDASIM" in done.stderr


def test_unknown_setting_is_rejected():
    done = run_import("yes")
    assert done.returncode != 0 and "NUMBA_ENABLE_CUDASIM='yes' is not understood" in done.stderr
    assert "Traceback" not in done.stderr


def test_numba_imported_first_keeps_its_choice():
    done = run_import("1", before="import numba.cuda; ")
    assert done.returncode == 0, done.stderr
    assert "numba was imported before gpgpu_lessons" in done.stdout


def test_simulator_mode_agrees_with_numba_config():
    from numba import config

    assert (
        runtime.is_simulator() == bool(config.ENABLE_CUDASIM) == (runtime.MODE == runtime.SIMULATOR)
    )


def test_device_info_describes_the_mode():
    info = runtime.device_info()
    if runtime.MODE == runtime.SIMULATOR:
        assert info.simulator and "simulator" in info.name.lower() and "simulator" in str(info)
        assert info.theoretical_bandwidth_gbs is None
    else:
        assert info.sm_count > 0 and info.l2_bytes > 0 and info.memory_bytes > 0
        assert info.theoretical_bandwidth_gbs > 100


def test_theoretical_bandwidth_formula():
    h200 = runtime.DeviceInfo(
        "NVIDIA H200", False, (9, 0), 132, 141 * 2**30, 60 * 2**20, 3_201_000, 6016
    )
    assert h200.theoretical_bandwidth_gbs == pytest.approx(4814, rel=1e-3)
    assert h200.as_dict()["theoretical_bandwidth_gbs"] == h200.theoretical_bandwidth_gbs
    assert "4814 GB/s" in str(h200) and "132" in str(h200)


def test_pick_follows_the_mode():
    expected = "sim" if runtime.MODE == runtime.SIMULATOR else "gpu"
    assert runtime.pick(gpu="gpu", simulator="sim") == expected
    if runtime.MODE == runtime.SIMULATOR:
        assert runtime.PRESETS["vector_elements"] <= 2**14
    else:
        assert runtime.PRESETS["vector_elements"] * 4 > 4 * runtime.device_info().l2_bytes


def test_command_line_describes_the_device():
    done = subprocess.run([sys.executable, "-m", "gpgpu_lessons"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert runtime.device_info().name in done.stdout
    if runtime.is_simulator():
        assert "NVIDIA H200" in done.stdout and "[cu12]" in done.stdout


def test_quiet_imports_print_nothing():
    env = {**os.environ, "GPGPU_LESSONS_QUIET": "1", "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run(
        [sys.executable, "-c", "import gpgpu_lessons"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout == ""
