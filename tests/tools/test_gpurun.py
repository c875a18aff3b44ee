"""The GPU-run tooling: what it downloads agrees with pyproject, and unpack puts files in place."""

import io
import json
import tarfile

import pytest
from gpgpu_tools import gpurun
from test_packaging import parse, pyproject_requirements


def test_gpu_wheels_use_the_project_numpy_pin():
    wanted = dict(parse(r) for r in gpurun.GPU_WHEELS)
    assert wanted["numpy"] == pyproject_requirements()["numpy"]
    assert wanted["nbval"] == pyproject_requirements()["nbval"]


def test_unpack_takes_notebooks_and_results(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    (root / "gpgpu_lessons" / "recorded").mkdir(parents=True)
    monkeypatch.setattr(gpurun, "ROOT", root)
    archive = tmp_path / "run.tar.gz"
    (root / "gpgpu_lessons" / "recorded" / "nvidia-h200.json").write_text(
        json.dumps(
            {
                "format": 1,
                "gpu": "NVIDIA H200",
                "date": "2026-11-01",
                "experiments": {"00_a/old": 1, "00_a/redone": 1},
            }
        )
    )
    fresh = {
        "format": 1,
        "gpu": "NVIDIA H200",
        "date": "2026-11-22",
        "experiments": {"00_a/redone": 2},
    }
    files = {
        "gpu-run/notebooks/00_x.ipynb": b"{}",
        "gpu-run/recorded/nvidia-h200.json": json.dumps(fresh).encode(),
        "gpu-run/tests.log": b"log",
        "gpu-run/summary.json": json.dumps(
            [{"step": "tests", "status": 0, "seconds": 1.0}]
        ).encode(),
    }
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    gpurun.unpack(archive)
    assert (root / "notebooks" / "00_x.ipynb").read_bytes() == b"{}"
    merged = json.loads((root / "gpgpu_lessons" / "recorded" / "nvidia-h200.json").read_text())
    assert merged["date"] == "2026-11-22"
    assert merged["experiments"] == {"00_a/old": 1, "00_a/redone": 2}
    assert not (root / "tests.log").exists()


def test_execute_without_wheels_says_what_to_do(tmp_path):
    with pytest.raises(SystemExit, match="make gpu-wheels"):
        gpurun.execute(tmp_path, tmp_path / "out", [], True, 10)
