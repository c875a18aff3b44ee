"""ruff, configured in pyproject.toml: the linter on the package, the tests and the notebooks' code
cells (ruff reads .ipynb itself, IPython magics included), the formatter on the package and the
tests (notebook cells are laid out by hand to fit a slide). Without ruff these tests skip, except
in CI (CI=true), where they fail: the test extra installs it.

To fix what they report: `.venv/bin/ruff format gpgpu_lessons tests` and
`.venv/bin/ruff check --fix gpgpu_lessons tests notebooks`, then the rest by hand.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def ruff(*args: str) -> subprocess.CompletedProcess:
    """Run this environment's ruff in the repository root (no cache left behind)."""
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if not found:
        if os.environ.get("CI"):
            pytest.fail("ruff is missing in CI: the test extra installs it")
        pytest.skip('ruff is not installed (pip install -e ".[test]")')
    return subprocess.run(
        [found, *args, "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_check_package_tests_and_notebooks():
    done = ruff(
        "check", "--output-format", "concise", "gpgpu_lessons", "tools", "tests", "notebooks"
    )
    assert done.returncode == 0, done.stdout[-10_000:] + done.stderr


def test_ruff_format_package_and_tests():
    done = ruff("format", "--check", "gpgpu_lessons", "tools", "tests")
    assert done.returncode == 0, done.stdout[-10_000:] + done.stderr


def test_ruff_reads_the_notebooks_code_cells(tmp_path):
    """A notebook's code cells are linted, its magics skipped: a real finding is reported."""
    import nbformat

    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# A title"),
            nbformat.v4.new_code_cell("%matplotlib inline\nx = 1\nprint(x == None)"),
            nbformat.v4.new_code_cell("print(undefined_name)"),
        ]
    )
    path = tmp_path / "sample.ipynb"
    nbformat.write(notebook, path)
    done = ruff(
        "check", "--output-format", "concise", "--config", str(ROOT / "pyproject.toml"), str(path)
    )
    assert "cell 2:3:12: E711" in done.stdout and "cell 3:1:7: F821" in done.stdout, done.stdout
