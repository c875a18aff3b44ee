"""Recorded results of real GPU runs, shipped with the package (one JSON file per GPU).

File format (``gpgpu_lessons/recorded/<gpu-name-slug>.json``)::

    {
      "format": 2,
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

Each variant is keyed by a stable id, its label ("name") being display data only: a variants
timing carries ``"id"``, a sweep maps each series label to its id in ``"ids"``. The id is the one
the figure gave (``benchmark(..., id="copy-16b")``, ``timing.identified("copy-16b")``, or ``"id"``
in a stored timing), else the label's slug, frozen in the record when it is written. A figure
that asks for an id its record lacks (a label renamed without keeping its id) is refused with an
error naming both, instead of drawing nothing. Format 1 files (no ids) are read with their
labels' slugs as ids.

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

FORMAT = 2
READABLE = (1, 2)  # format 1: the same without ids (the labels' slugs stand in)
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


def _with_id(stored: dict) -> dict:
    """A stored timing with its id at the top: the given one, else its label's slug."""
    if isinstance(stored, Timing):
        stored = stored.as_dict()
    extra = dict(stored.get("extra") or {})
    given = stored.get("id") or extra.pop("id", None)
    rest = {k: v for k, v in stored.items() if k != "id"}
    return {"id": given or slug(stored["name"]), **rest, "extra": extra}


def with_ids(data: dict) -> dict:
    """Experiment data with every variant's id filled in (variants: per timing; sweeps: "ids")."""
    if data.get("kind") == "variants":
        data = {**data, "timings": [_with_id(t) for t in data.get("timings", [])]}
    elif data.get("kind") == "sweep":
        given = data.get("ids") or {}
        data = {**data, "ids": {name: given.get(name) or slug(name) for name in data["series"]}}
    found = ids(data)
    twice = sorted({i for i in found if found.count(i) > 1})
    if twice:
        raise ValueError(
            f"two variants share the id(s) {twice}; give each its own label or id "
            "(benchmark(..., id=...) or timing.identified(id))"
        )
    return data


def ids(data: dict) -> list[str]:
    """The ids of an experiment's variants (variants) or series (sweep), in order; [] for tables."""
    if data.get("kind") == "variants":
        return [t["id"] for t in data.get("timings", [])]
    if data.get("kind") == "sweep":
        return list(data["ids"].values())
    return []


def record(key: str, data: dict) -> Path | None:
    """Add one experiment to this GPU's results file, if recording is on; return the file."""
    check_key(key)
    if data.get("kind") not in KINDS:
        raise ValueError(
            f"experiment data needs 'kind' set to one of {KINDS}, got {data.get('kind')!r}"
        )
    data = with_ids(data)
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
    content["format"] = FORMAT
    content["date"] = datetime.date.today().isoformat()
    content["software"] = {
        name: metadata.version(name) for name in ("numba", "numba-cuda", "numpy")
    }
    content["experiments"][key] = data
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n")
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
            if content.get("format") not in READABLE:
                raise ValueError(
                    f"{path} has format {content.get('format')!r}; "
                    f"this package reads formats {READABLE}"
                )
            if key in content["experiments"] and content["gpu"] not in seen:
                seen.add(content["gpu"])
                data = with_ids(content["experiments"][key])
                found.append(Recorded(content["gpu"], content["date"], data))
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

    def by_id(self) -> dict[str, Timing]:
        """{id: Timing} of a variants experiment: look variants up by id, never by label."""
        return dict(zip(ids(self.data), self.timings()))


SIMULATOR_LABEL = "simulator: host times of a Python emulation, not GPU performance"


def experiment(key: str | None, data: dict) -> Shown:
    """Record `data` (a GPU run that records) and return what the lesson shows.

    The one place that chooses "this machine's run or the recorded one": on a GPU, this run's
    data; in the simulator, the first recorded GPU run of `key` when there is one (its own title
    and sizes travel with it), else this run's data labelled as the simulator's. A recorded run
    that lacks a variant this figure asks for (by id) is refused: see `check_ids`.
    """
    data = with_ids(data) if data.get("kind") in KINDS else data
    if key is not None:
        record(key, data)
        if runtime.MODE == runtime.SIMULATOR:
            shipped = recorded(key)
            if shipped:
                check_ids(key, data, shipped[0])
                return Shown(shipped[0].data, shipped[0].label, live=False)
    info = runtime.device_info()
    return Shown(data, SIMULATOR_LABEL if info.simulator else info.name, live=True)


def check_ids(key: str, asked: dict, shipped: Recorded) -> None:
    """Refuse a record that lacks a variant (id) the figure asks for, or holds another kind.

    The record may hold more (a CuPy variant this machine cannot run); it may not hold less, or
    the figure would silently draw nothing for the missing variants.
    """
    kind = shipped.data.get("kind")
    if kind != asked.get("kind"):
        raise ValueError(
            f"{key}: the figure draws a {asked.get('kind')!r}, {shipped.label} holds a {kind!r}; "
            "record the experiment again on a GPU (python -m gpgpu_tools.gpurun)"
        )
    have = ids(shipped.data)
    missing = [i for i in ids(asked) if i not in have]
    if missing:
        raise ValueError(
            f"{key}: {shipped.label} has no variant with id {', '.join(map(repr, missing))} "
            f"(it holds {', '.join(map(repr, have))}); a label renamed? keep its recorded id "
            "with benchmark(..., id=...) or timing.identified(id), or record the experiment "
            "again on a GPU (python -m gpgpu_tools.gpurun)"
        )
