"""pyproject.toml, environment.yml, README and CI must agree with each other."""
import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib comes with Python 3.11+")

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$")


def parse(requirement: str) -> tuple[str, str]:
    """'numba-cuda[cu12]>=0.30,<0.31' -> ('numba-cuda', '>=0.30,<0.31')."""
    name, _, spec = NAME.match(requirement.strip()).groups()
    return name.lower().replace("_", "-"), spec.replace(" ", "")


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in ("lab", "test"):
        reqs += project["optional-dependencies"][extra]
    return dict(parse(r) for r in reqs)


def conda_requirements() -> dict[str, str]:
    lines = re.findall(r"^  - ([^\s#][^#\n]*?)\s*$", (ROOT / "environment.yml").read_text().split("dependencies:")[1], re.M)
    return dict(parse(line) for line in lines if not line.startswith(("pip", "python")))


def test_environment_yml_matches_pyproject():
    assert conda_requirements() == pyproject_requirements()


def test_numpy_is_capped_below_2_5():
    assert pyproject_requirements()["numpy"] == ">=2,<2.5"


def test_gpu_extras_pin_the_same_numba_cuda():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    core = pyproject_requirements()["numba-cuda"]
    assert parse(extras["cu12"][0]) == ("numba-cuda", core) == parse(extras["cu13"][0])


def test_ci_runs_the_readme_test_command():
    """CI runs `make test` last, and nothing that the README does not show (word for word)."""
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    commands = [line for line in ci.splitlines() if line and not line.startswith(("#", "set ", "cd "))]
    assert commands[-1] == "make test"
    for command in commands:
        assert command in readme, f"README.md does not show the command .ci/run runs: {command}"


def test_readme_lists_every_make_target():
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"^([a-z][a-z-]+):", (ROOT / "Makefile").read_text(), re.M)
    for target in targets:
        if target not in ("help", "clean"):
            assert f"make {target}" in readme, f"README.md does not mention 'make {target}'"
