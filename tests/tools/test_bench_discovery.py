"""The bench's families are discovered: what the lessons' bench.py files declare, nothing else.

The discovered families are read back against the declarations found on disk; the bench names no
lesson itself; a bad declaration is named; and a lesson made by `make new-lesson` (in a copy of
the repository) is found and checked by the bench without an edit to the tools.
"""

import importlib
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from gpgpu_tools.bench import families
from gpgpu_tools.bench.families import FAMILIES
from test_new_lesson import copy_of_the_repository

ROOT = Path(__file__).resolve().parents[2]
BENCH_TOOL = ROOT / "tools" / "gpgpu_tools" / "bench"


def declared_on_disk() -> dict[str, dict]:
    """{family: (declaring module, its entry)} of every gpgpu_lessons/lNN_*/bench.py."""
    found = {}
    for path in sorted((ROOT / "gpgpu_lessons").glob("l[0-9][0-9]_*/bench.py")):
        module = importlib.import_module(f"gpgpu_lessons.{path.parent.name}.bench")
        for entry in module.BENCH:
            found[entry["family"]] = (module.__name__, entry)
    return found


def test_the_families_are_those_the_lessons_declare_in_their_order():
    declared = declared_on_disk()
    assert set(FAMILIES) == set(declared) and len(declared) >= 7
    orders = [declared[name][1].get("order", float("inf")) for name in FAMILIES]
    assert orders == sorted(orders)
    for name, family in FAMILIES.items():
        module, entry = declared[name]
        assert [k.wrapper for k in family.kernels] == [k["wrapper"] for k in entry["kernels"]]
        lesson = module.rsplit(".", 1)[0]
        assert all(k.wrapper.__module__.startswith(lesson) for k in family.kernels), name


def test_the_bench_imports_no_lesson_but_through_the_declarations():
    for path in BENCH_TOOL.glob("*.py"):
        if path.name == "dispatch.py":  # it times lesson 00's empty kernel: a launch, no family
            continue
        source = path.read_text()
        assert "from gpgpu_lessons.l" not in source and "import gpgpu_lessons.l" not in source, path


def entry(**changed) -> dict:
    kernel = {"name": "k", "wrapper": None, "cupy_name": "c", "cupy": None}
    base = {"family": "f", "description": "d", "dtype": np.float32, "sweep": "vectors"}
    return {**base, "kernels": (kernel,), **changed}


@pytest.mark.parametrize(
    "changed, message",
    [
        ({"sweep": "cubes"}, "sweep 'cubes'; choose one of vectors, matrices"),
        ({"targets": 1}, "unexpected keyword argument 'targets'"),
        ({"kernels": ({"name": "k"},)}, "missing 3 required positional arguments"),
    ],
)
def test_a_bad_declaration_is_named(changed, message):
    with pytest.raises(ValueError, match="^gpgpu_lessons.l09_x.bench.BENCH: ") as refused:
        families.family(entry(**changed), "gpgpu_lessons.l09_x.bench")
    assert message in str(refused.value)


def test_two_lessons_declaring_one_family_are_named(monkeypatch):
    one = types.SimpleNamespace(__name__="gpgpu_lessons.l08_a.bench", BENCH=(entry(),))
    two = types.SimpleNamespace(__name__="gpgpu_lessons.l09_b.bench", BENCH=(entry(order=1),))
    monkeypatch.setattr(families, "lesson_modules", lambda name: [one, two])
    with pytest.raises(ValueError, match="l09_b.bench and gpgpu_lessons.l08_a.bench both declare"):
        families.discover()


def test_a_new_lesson_is_benched_without_an_edit_to_the_tools(tmp_path):
    root = copy_of_the_repository(tmp_path / "repo")
    env = {
        **os.environ,
        "PYTHONPATH": f"{root}{os.pathsep}{root / 'tools'}",
        "NUMBA_ENABLE_CUDASIM": "1",
        "GPGPU_LESSONS_QUIET": "1",
    }
    run = lambda *args: subprocess.run(  # noqa: E731
        [sys.executable, "-m", *args], cwd=root, env=env, capture_output=True, text=True
    )
    made = run("gpgpu_tools.new_lesson", "06", "warp_votes", "--root", str(root))
    assert made.returncode == 0, made.stdout + made.stderr
    assert "wrote gpgpu_lessons/l06_warp_votes/bench.py" in made.stdout
    benched = run("gpgpu_tools.bench", "--families", "warp_votes")
    assert benched.returncode == 0, benched.stdout[-3000:] + benched.stderr[-3000:]
    assert "warp_votes: float32 vectors, lesson 06 (l06_warp_votes.textbook.scale)" in (
        benched.stdout
    )
    assert "  scale            67                   bulk and edge" in benched.stdout
    assert "4 checks, 0 failed" in benched.stdout
    listed = subprocess.run(
        [sys.executable, "-c", "from gpgpu_tools.bench import families; print(*families.FAMILIES)"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert listed.stdout.split() == [*FAMILIES, "warp_votes"]  # after those with an order
