"""The student package as a wheel, for the otter autograder's image to install.

Built from the installed package's own files (an editable install or not: no source tree, no
build tool and no network needed), with the installed distribution's metadata, so the
autograder grades with exactly the gpgpu-lessons the instructor exported with.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import zipfile
from pathlib import Path

AUTOGRADER = "/autograder/source/files"  # where Gradescope's image has the zip's files
WHEEL = (
    "Wheel-Version: 1.0\nGenerator: gpgpu-instructor\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
)


def _files(root: Path):
    """The package's files: no caches, no hidden files (a student's progress file, say)."""
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if not path.is_file() or path.suffix == ".pyc":
            continue
        if any(part == "__pycache__" or part.startswith(".") for part in relative.parts):
            continue
        yield path, relative.as_posix()


def build(folder) -> Path:
    """Write gpgpu_lessons-VERSION-py3-none-any.whl into folder and return its path."""
    import gpgpu_lessons

    version = gpgpu_lessons.__version__
    info = f"gpgpu_lessons-{version}.dist-info"
    path = Path(folder) / f"gpgpu_lessons-{version}-py3-none-any.whl"
    installed = importlib.metadata.distribution("gpgpu-lessons")
    metadata = installed.read_text("METADATA") or installed.read_text("PKG-INFO")
    records = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:

        def add(name: str, data: bytes) -> None:
            wheel.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            records.append(f"{name},sha256={digest.decode()},{len(data)}")

        for file, relative in _files(Path(gpgpu_lessons.__file__).parent):
            add(f"gpgpu_lessons/{relative}", file.read_bytes())
        add(f"{info}/METADATA", metadata.encode())
        add(f"{info}/WHEEL", WHEEL.encode())
        records.append(f"{info}/RECORD,,")
        wheel.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    return path


def requirement(name: str, where: str = AUTOGRADER) -> str:
    """The requirements.txt line that installs the wheel in the autograder, with the CUDA
    compiler wheels (`cu12`), so that every submission is also compiled for a GPU."""
    return f"gpgpu-lessons[cu12] @ file://{where}/{name}"
