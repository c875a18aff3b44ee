"""pyproject.toml, environment.yml, README and CI must agree with each other."""

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib comes with Python 3.11+")

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$")


def parse(requirement: str) -> tuple[str, str]:
    """'numba-cuda[cu12]>=0.30,<0.31' -> ('numba-cuda', '>=0.30,<0.31')."""
    name, _, spec = NAME.match(requirement.strip()).groups()
    return name.lower().replace("_", "-"), spec.replace(" ", "")


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in ("lab", "test", "course"):
        reqs += project["optional-dependencies"][extra]
    return dict(parse(r) for r in reqs)


def conda_requirements() -> dict[str, str]:
    lines = re.findall(
        r"^  - ([^\s#][^#\n]*?)\s*$",
        (ROOT / "environment.yml").read_text().split("dependencies:")[1],
        re.M,
    )
    conda_only = ("pip", "python", "cuda-nvcc", "cuda-nvrtc")  # the cu12 wheels' conda names
    return dict(parse(line) for line in lines if not line.startswith(conda_only))


def test_environment_yml_matches_pyproject():
    assert conda_requirements() == pyproject_requirements()


def test_numpy_is_capped_below_2_5():
    assert pyproject_requirements()["numpy"] == ">=2,<2.5"


def test_gpu_extras_pin_the_same_numba_cuda():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    core = pyproject_requirements()["numba-cuda"]
    assert parse(extras["cu12"][0]) == ("numba-cuda", core) == parse(extras["cu13"][0])


def ci_commands() -> list[str]:
    ci = (ROOT / ".ci" / "run").read_text()
    return [line for line in ci.splitlines() if line and not line.startswith(("#", "set ", "cd "))]


def test_ci_runs_the_readme_test_command():
    """CI runs `make test` last, and nothing that the README does not show (word for word)."""
    readme = (ROOT / "README.md").read_text()
    commands = ci_commands()
    assert commands[-1].split()[:2] == ["make", "test"]
    for command in commands:
        assert command in readme, f"README.md does not show the command .ci/run runs: {command}"


def test_ci_installs_the_cuda_compiler_and_make_passes_it_on():
    """CI compiles every kernel to PTX: `make test CUDA=cu12` installs the cu12 extra (NVVM)."""
    assert "CUDA=cu12" in ci_commands()[-1].split()
    makefile = (ROOT / "Makefile").read_text()
    extras_line = next(line for line in makefile.splitlines() if line.startswith("EXTRAS"))
    assert "lab,test" in extras_line and "$(CUDA)" in extras_line
    assert "STAMP  := $(VENV)/.installed-$(subst $(COMMA),-,$(EXTRAS))" in makefile
    assert 'install --quiet -e ".[$(subst -,$(COMMA),$*)]"' in makefile  # the stamp's extras
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert parse(extras["cu12"][0])[0] == "numba-cuda" and "[cu12]" in extras["cu12"][0]


def test_ruff_line_length_is_the_slides_code_width():
    from gpgpu_tools import slides

    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]
    assert ruff["line-length"] == slides.MAX_CODE_COLUMNS == 100
    assert "ruff" in pyproject_requirements()


def test_the_canary_watches_the_pins_of_pyproject():
    from gpgpu_tools import canary

    pins = canary.pins()
    assert set(pins) == set(canary.WATCHED)
    assert all(pins[name] == pyproject_requirements()[name] for name in canary.WATCHED)
    assert not canary.admits(pins["numpy"], "2.5.0")  # numpy 2.5 breaks numba-cuda 0.30


def test_contributing_lists_every_make_target():
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    targets = re.findall(r"^([a-z][a-z-]+):", (ROOT / "Makefile").read_text(), re.M)
    for target in targets:
        if target not in ("help", "clean"):
            assert f"make {target}" in contributing, f"CONTRIBUTING.md lacks 'make {target}'"


def test_ci_checks_a_students_install_too():
    """`make test` once failed on a fresh clone without the CUDA wheels: CI runs both."""
    commands = ci_commands()
    assert commands.index("make test-without-cuda") < len(commands) - 1


def layout_block() -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text()
    return text.split("## Layout", 1)[1].split("```", 2)[1]


def test_the_layout_of_contributing_names_every_module_and_nothing_else():
    layout = layout_block()
    for package, folder in (
        ("gpgpu_lessons", ROOT / "gpgpu_lessons"),
        ("gpgpu_tools", ROOT / "tools" / "gpgpu_tools"),
        ("gpgpu_instructor", ROOT / "instructor" / "gpgpu_instructor"),
    ):
        entries = {p.name for p in folder.iterdir() if not p.name.startswith(("_", "."))}
        entries = {
            e
            for e in entries
            if e.endswith(".py")
            or (folder / e / "__init__.py").exists()
            or e == "recorded"
            or e == "cuda_c"
        }
        lessons = {e for e in entries if re.fullmatch(r"l\d\d_\w+", e)}  # "l00_... ... l05_..."
        missing = [e for e in sorted(entries - lessons) if e.removesuffix(".py") not in layout]
        assert not missing, f"CONTRIBUTING.md's layout does not name {package}: {missing}"
    named = re.findall(r"\b([a-z_]+\.py)\b", layout)
    exists = {p.name for p in ROOT.rglob("*.py") if ".venv" not in p.parts}
    assert not [n for n in named if n not in exists], "the layout names files that do not exist"


def test_one_version_and_a_changelog_entry_for_it():
    import gpgpu_lessons

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"]["attr"] == (
        "gpgpu_lessons.__version__"
    )
    assert f"## {gpgpu_lessons.__version__}" in (ROOT / "CHANGELOG.md").read_text()


def test_the_licence_is_the_one_pyproject_declares():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def test_the_canary_verdict_for_each_pin():
    from gpgpu_tools import canary

    pins = {"numpy": ">=2,<2.5", "numba": ">=0.68,<0.69", "numba-cuda": ">=0.30,<0.31"}
    newest = {"numpy": "2.5.0", "numba": "0.69.0", "numba-cuda": "0.30.4"}
    broke = {"numpy": ["PTX: gpgpu_lessons.l01_coalescing.fast.copy_vectors ...: row_stack"]}
    numpy, detail, numba, numba_cuda = canary.verdicts(pins, newest, broke)
    assert numpy.startswith("numpy 2.5.0: keep the pin >=2,<2.5")
    assert "copy_vectors" in detail
    assert "could be relaxed" in numba
    assert "admits it; nothing to relax" in numba_cuda


def test_make_test_hands_out_the_slowest_files_first():
    """The order of tests/conftest.py's SLOWEST_FIRST holds only with xdist's reordering off
    (make test and make quick)."""
    from conftest import SLOWEST_FIRST

    makefile = (ROOT / "Makefile").read_text().replace("\\\n", " ")  # continued lines joined
    commands = [line.split() for line in makefile.splitlines() if "-m pytest" in line]
    handing_out = [command for command in commands if "--dist" in command]
    assert len(handing_out) == 2, handing_out  # make test, make quick
    for command in handing_out:
        assert {"--dist", "loadfile", "--no-loadscope-reorder"} <= set(command), command
    missing = [path for path in SLOWEST_FIRST if not (ROOT / path).is_file()]
    assert not missing, (
        f"tests/conftest.py's SLOWEST_FIRST names files that do not exist: {missing}"
    )


def test_make_says_which_python_before_pip_fails():
    import subprocess
    import sys

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.10,<3.15"
    assert "tools/python_check.py" in (ROOT / "Makefile").read_text()
    check = (ROOT / "tools" / "python_check.py").read_text()
    assert "OLDEST, NEWEST = (3, 10), (3, 14)" in check
    ok = subprocess.run([sys.executable, str(ROOT / "tools" / "python_check.py")])
    assert ok.returncode == 0
    newer = check.replace("sys.version_info[:2]", "(3, 15)").replace(
        "sys.version_info[:3]", "(3, 15, 0)"
    )
    refused = subprocess.run([sys.executable, "-c", newer], capture_output=True, text=True)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "Python 3.15.0 is not supported: use Python 3.10 to 3.14 (numba-cuda 0.30 ends at 3.14), "
        "e.g. make PYTHON=python3.12"
    )
