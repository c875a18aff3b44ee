"""Fixtures of the exercises' tests, imported by each file (a conftest.py here would shadow
tests/conftest.py, which tests/tools imports): progress goes to a temporary file; `gpu_path`
runs the grader's GPU path in the simulator."""

import pytest

from gpgpu_lessons.exercises import grader, performance, running

__all__ = ["gpu_path", "progress_file"]


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    """Progress goes to a temporary file, never beside the repository's notebooks."""
    path = tmp_path / "progress.json"
    monkeypatch.setenv("GPGPU_LESSONS_PROGRESS", str(path))
    return path


@pytest.fixture
def gpu_path(monkeypatch):
    """The grader's GPU path (a rehearsal on the simulator before each launch, guarded arrays,
    store counts from the rehearsal), timing left out. In the simulator its 'GPU' launches run on
    the simulator, where an index out of bounds raises: every launch that raised is recorded, and
    none may, since the rehearsal must stop such a kernel before its launch."""
    monkeypatch.setattr(grader, "on_gpu", lambda: True)
    monkeypatch.setattr(performance, "compare", lambda exercise, fn, rng: ("(not timed)", []))
    raised = []
    run = running.run

    def recorded(kernel, case, params, **options):
        try:
            return run(kernel, case, params, **options)
        except Exception as error:
            raised.append(f"{kernel.__name__} on {case.label}: {type(error).__name__}: {error}")
            raise

    monkeypatch.setattr(running, "run", recorded)
    return raised
