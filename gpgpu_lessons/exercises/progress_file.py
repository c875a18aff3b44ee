"""Which exercises this student has solved: a small JSON file beside the notebooks.

The file is `.progress.json` in the notebooks' folder (the working directory of a notebook,
or `notebooks/` below the working directory), or wherever `GPGPU_LESSONS_PROGRESS` points.
It never lives in the package.
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path

VARIABLE = "GPGPU_LESSONS_PROGRESS"
FILENAME = ".progress.json"


def path() -> Path:
    """Where progress is kept for this working directory."""
    chosen = os.environ.get(VARIABLE, "").strip()
    if chosen:
        return Path(chosen)
    here = Path.cwd()
    if not any(here.glob("[0-9][0-9]_*.ipynb")) and (here / "notebooks").is_dir():
        here = here / "notebooks"
    return here / FILENAME


def load() -> dict:
    """{exercise id: {"solved": ISO date}} read from the file (empty when there is none)."""
    file = path()
    try:
        data = json.loads(file.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record(exercise_id: str) -> None:
    """Mark an exercise solved (keeps the first date); a file that cannot be written is skipped."""
    data = load()
    if exercise_id in data:
        return
    data[exercise_id] = {"solved": datetime.date.today().isoformat()}
    try:
        path().write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass
