"""Recorded results of real GPU runs, shipped with the package (one JSON file per GPU).

File format (``gpgpu_lessons/recorded/<gpu-name-slug>.json``)::

    {
      "format": 1,
      "gpu": "NVIDIA H200",               # device name as the driver reports it
      "date": "2026-11-22",               # day of the run that wrote the file
      "device": {...},                    # runtime.DeviceInfo.as_dict()
      "software": {"numba": "...", "numba-cuda": "...", "numpy": "..."},
      "experiments": {
        "00_timing/copy_vs_size": {...}   # key "lesson/experiment" -> the data a plot drew
      }
    }

The experiment data is what ``plotting`` draws: ``{"kind": "variants", "timings": [...],
"ceiling": ...}`` or ``{"kind": "sweep", "x": [...], "xlabel": ..., "series": {...}, ...}``,
with every timing stored as ``timing.Timing.as_dict()``; or any other measured table,
``{"kind": "table", "columns": [...], "rows": [[...], ...]}`` (profiler counters, for instance).

Recording is off unless the environment variable GPGPU_LESSONS_RECORD names a folder and the
lesson runs on a real GPU (the GPU run sets it: ``python -m gpgpu_tools.gpurun``).
"""

from __future__ import annotations

import datetime
import json
import os
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from . import runtime
from .timing import Timing

FORMAT = 1
RECORDED_DIR = Path(__file__).with_name("recorded")
RECORD_ENV = "GPGPU_LESSONS_RECORD"
_KEY = re.compile(r"^[0-9]{2}_[a-z0-9_]+/[a-z0-9_]+$")


@dataclass(frozen=True)
class Recorded:
    """One experiment as recorded on one GPU."""

    gpu: str
    date: str
    data: dict

    @property
    def label(self) -> str:
        return f"recorded on {self.gpu}, {self.date}"


def check_key(key: str) -> str:
    """Validate an experiment key such as '01_coalescing/stride_sweep'."""
    if not isinstance(key, str) or not _KEY.match(key):
        raise ValueError(
            f"experiment key must look like '01_coalescing/stride_sweep' "
            f"(lesson folder, slash, experiment name in lower case), got {key!r}"
        )
    return key


def slug(gpu_name: str) -> str:
    """File-name form of a GPU name: 'NVIDIA H200' -> 'nvidia-h200'."""
    return re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-")


def record(key: str, data: dict) -> Path | None:
    """Add one experiment to this GPU's results file, if recording is on; return the file."""
    check_key(key)
    if data.get("kind") not in KINDS:
        raise ValueError(
            f"experiment data needs 'kind' set to one of {KINDS}, got {data.get('kind')!r}"
        )
    folder = os.environ.get(RECORD_ENV)
    if not folder or runtime.MODE != runtime.GPU:
        return None
    info = runtime.device_info()
    path = Path(folder) / f"{slug(info.name)}.json"
    content = (
        json.loads(path.read_text())
        if path.exists()
        else {"format": FORMAT, "gpu": info.name, "device": info.as_dict(), "experiments": {}}
    )
    content["date"] = datetime.date.today().isoformat()
    content["software"] = {
        name: metadata.version(name) for name in ("numba", "numba-cuda", "numpy")
    }
    content["experiments"][key] = data
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=1) + "\n")
    return path


KINDS = ("variants", "sweep", "table")


def recorded(key: str, folder: Path | None = None) -> list[Recorded]:
    """Every GPU result for this experiment, one per GPU file, sorted by file name.

    Without `folder`, a run that is recording (GPGPU_LESSONS_RECORD) is read first, so a lesson
    can show what this very run measured, then the results shipped with the package.
    """
    check_key(key)
    folders = (
        [Path(folder)]
        if folder is not None
        else [Path(p) for p in (os.environ.get(RECORD_ENV), RECORDED_DIR) if p]
    )
    found, seen = [], set()
    for directory in folders:
        for path in sorted(directory.glob("*.json")):
            content = json.loads(path.read_text())
            if content.get("format") != FORMAT:
                raise ValueError(
                    f"{path} has format {content.get('format')!r}; "
                    f"this package reads format {FORMAT}"
                )
            if key in content["experiments"] and content["gpu"] not in seen:
                seen.add(content["gpu"])
                found.append(Recorded(content["gpu"], content["date"], content["experiments"][key]))
    return found


def recorded_gpus(folder: Path | None = None) -> list[tuple[str, str]]:
    """(GPU name, date) of every recorded run shipped in `folder` (the package's by default)."""
    paths = sorted((folder or RECORDED_DIR).glob("*.json"))
    return [
        (content["gpu"], content["date"]) for content in (json.loads(p.read_text()) for p in paths)
    ]


@dataclass(frozen=True)
class Shown:
    """What a lesson shows for one experiment: its data, where it comes from, whether it is live."""

    data: dict
    label: str  # the GPU's name (this run), "recorded on GPU, date", or the simulator note
    live: bool  # True: measured by this very run

    @property
    def title(self) -> str:
        """'title · size' as recorded with the data."""
        size = self.data.get("size")
        return f"{self.data.get('title', '')}{f' · {size}' if size else ''}"

    def timings(self, series: str | None = None) -> list[Timing]:
        """The Timing objects of a variants experiment (or of one series of a sweep)."""
        stored = self.data["timings"] if series is None else self.data["series"][series]
        return [t if isinstance(t, Timing) else Timing.from_dict(t) for t in stored]


SIMULATOR_LABEL = "simulator: host times of a Python emulation, not GPU performance"


def experiment(key: str | None, data: dict) -> Shown:
    """Record `data` (a GPU run that records) and return what the lesson shows.

    The one place that chooses "this machine's run or the recorded one": on a GPU, this run's
    data; in the simulator, the first recorded GPU run of `key` when there is one (its own title
    and sizes travel with it), else this run's data labelled as the simulator's.
    """
    if key is not None:
        record(key, data)
        if runtime.MODE == runtime.SIMULATOR:
            shipped = recorded(key)
            if shipped:
                return Shown(shipped[0].data, shipped[0].label, live=False)
    info = runtime.device_info()
    return Shown(data, SIMULATOR_LABEL if info.simulator else info.name, live=True)


def gpu_timings(key: str, live):
    """(label, timings) of GPU numbers: this run's on a GPU, the shipped ones in the simulator.

    `live` is what the lesson just measured (a list of Timing, or {series name: [Timing]}); in the
    simulator the first shipped GPU result for `key` comes back in the same shape, or (None, None).
    """
    if runtime.MODE == runtime.GPU:
        return runtime.device_info().name, live
    shipped = recorded(key)
    if not shipped:
        return None, None
    data = shipped[0].data
    if data["kind"] == "variants":
        return shipped[0].label, [Timing.from_dict(t) for t in data["timings"]]
    if data["kind"] == "sweep":
        return shipped[0].label, {
            name: [Timing.from_dict(t) for t in ts] for name, ts in data["series"].items()
        }
    raise ValueError(f"{key} holds a {data['kind']!r}, not timings")
