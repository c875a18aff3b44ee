"""The bench's results as data, and the recorded runs shipped with the package.

A run is saved as JSON (``--out DIR``: ``DIR/bench-<gpu>.json``); ``--record`` also writes it
to ``gpgpu_lessons/recorded/bench/<gpu>.json`` (``<gpu>`` is ``results.slug`` of the device
name, e.g. ``nvidia-h200``), where every later run, and the simulator, compares with it. Format::

    {
      "format": 1,                       # this bench format (FORMAT)
      "gpu": "NVIDIA H200",              # the device name the driver reports
      "date": "2026-11-23",              # the day of the run
      "sizes": "full",                   # the sweep: "full", "small" or "tiny" (shapes.py)
      "families": ["transpose", ...],    # the families the run covered, in order
      "seconds": 212.5,                  # wall time of the whole run
      "device": {...},                   # runtime.DeviceInfo.as_dict()
      "software": {"numba": "0.68.0", "numba-cuda": "0.30.4", "numpy": "2.4.1", "cupy": "13.6.0"},
      "ceiling": {...},                  # the same-run device-to-device copy: Timing.as_dict()
      "results": [                       # one per kernel and shape
        {"family": "transpose", "kernel": "transpose",
         "wrapper": "gpgpu_lessons.l03_bank_conflicts.fast.transpose",
         "shape": [4097, 4099], "dtype": "float32", "label": "primes",
         "ok": true, "check": "a sample of 2,118,401 of 16,793,603 elements",
         "fast": {...},                  # Timing.as_dict() of the fast wrapper's Launch; null if
                                         # the run failed or in the simulator
         "cupy": {...} or null,          # Timing.as_dict() of CuPy's counterpart
         "cupy_name": "cupy.ascontiguousarray(a.T)",
         "error": null,                  # the exception's text if the kernel raised
         "called": {...} or null,        # the wrapper called back to back, as users call it
         "cupy_called": {...} or null}   # CuPy's call the same way (host clock + synchronize)
      ],
      "host_costs": [                    # microseconds per call, host clock, no synchronize
        {"family": "sum", "elements": 65536, "wrapper_us": 41.0, "bare_us": 12.1,
         "cupy_us": 9.8, "launches": 1,  # wrapper: fast.sum_grid_stride(a, out=total);
         "kernel": "sum", "size": "small", "prepare_us": ..., "launch_us": ...,
         "number_us": ..., "bare_copy_us": ..., "cupy_number_us": ...}
      ],                                 # bare: kernel[grid, block](...) of the same steps
      "summary": {...}                   # derived (worst shape per family, crossovers): for
    }                                    # people reading the file; recomputed when loaded

Every Timing holds bytes_moved, so GB/s and the ratios are derived, never stored twice.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gpgpu_lessons import results
from gpgpu_lessons.timing import Timing

FORMAT = 1
RECORDED_DIR = results.RECORDED_DIR / "bench"


TIMINGS = ("fast", "cupy", "called", "cupy_called")  # the Timing fields of a Result


@dataclass
class Result:
    """One kernel on one shape: the check, and the times of the fast wrapper and of CuPy."""

    family: str
    kernel: str
    wrapper: str
    shape: tuple[int, ...]
    dtype: str
    label: str
    ok: bool
    check: str
    fast: Timing | None = None
    cupy: Timing | None = None
    cupy_name: str | None = None
    error: str | None = None
    called: Timing | None = None  # the wrapper called back to back (host clock + synchronize)
    cupy_called: Timing | None = None  # CuPy's call back to back, the same way

    def as_dict(self) -> dict:
        content = asdict(self)
        content["shape"] = list(self.shape)
        for name in TIMINGS:
            timing = getattr(self, name)
            content[name] = None if timing is None else timing.as_dict()
        return content

    @classmethod
    def from_dict(cls, content: dict) -> Result:
        content = dict(content)
        content["shape"] = tuple(content["shape"])
        for name in TIMINGS:
            if content.get(name) is not None:
                content[name] = Timing.from_dict(content[name])
        return cls(**content)


@dataclass
class HostCost:
    """Microseconds of host time per call: the fast wrapper, a bare launch of its kernels, CuPy.

    Device arrays in and out, calls back to back without synchronising. For a reduction,
    `number_us` is the wrapper returning a Python number, `bare_copy_us` a bare launch followed
    by the 4-byte copy of its result to the host, `cupy_number_us` float(CuPy's call).
    """

    family: str
    elements: int
    wrapper_us: float
    bare_us: float
    cupy_us: float | None = None
    launches: int = 1  # kernels the wrapper launches per call
    kernel: str = ""
    size: str = ""  # small, middle or large
    prepare_us: float | None = None  # wrapper.prepare(...) alone: checks, views, grids
    launch_us: float | None = None  # the prepared Launch called
    number_us: float | None = None
    bare_copy_us: float | None = None
    cupy_number_us: float | None = None

    @property
    def ratio(self) -> float:
        """The wrapper's host cost over the bare launch's (the issue's target: at most 1.25)."""
        return self.wrapper_us / self.bare_us

    @property
    def number_ratio(self) -> float | None:
        """A reduction's Python number over a bare launch and a 4-byte copy (target: 1.25)."""
        if self.number_us is None or not self.bare_copy_us:
            return None
        return self.number_us / self.bare_copy_us


@dataclass
class Bench:
    """One run of the bench."""

    gpu: str
    date: str
    sizes: str
    families: list[str]
    seconds: float
    device: dict = field(default_factory=dict)
    software: dict = field(default_factory=dict)
    ceiling: Timing | None = None
    results: list[Result] = field(default_factory=list)
    host_costs: list[HostCost] = field(default_factory=list)

    def as_dict(self, summary: dict | None = None) -> dict:
        content = {
            "format": FORMAT,
            "gpu": self.gpu,
            "date": self.date,
            "sizes": self.sizes,
            "families": list(self.families),
            "seconds": self.seconds,
            "device": self.device,
            "software": self.software,
            "ceiling": None if self.ceiling is None else self.ceiling.as_dict(),
            "results": [r.as_dict() for r in self.results],
            "host_costs": [asdict(h) for h in self.host_costs],
        }
        if summary is not None:
            content["summary"] = summary
        return content

    @classmethod
    def from_dict(cls, content: dict) -> Bench:
        if content.get("format") != FORMAT:
            raise ValueError(
                f"a bench record of format {content.get('format')!r}; this package reads {FORMAT}"
            )
        ceiling = content.get("ceiling")
        return cls(
            gpu=content["gpu"],
            date=content["date"],
            sizes=content["sizes"],
            families=list(content["families"]),
            seconds=content["seconds"],
            device=dict(content.get("device", {})),
            software=dict(content.get("software", {})),
            ceiling=None if ceiling is None else Timing.from_dict(ceiling),
            results=[Result.from_dict(r) for r in content["results"]],
            host_costs=[HostCost(**h) for h in content.get("host_costs", [])],
        )


def save(bench: Bench, path: Path, summary: dict | None = None) -> Path:
    """Write a run as JSON (with a summary for readers, if given); return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(bench.as_dict(summary), indent=1) + "\n")
    return path


def load(path: Path) -> Bench:
    """Read a run saved by `save`."""
    return Bench.from_dict(json.loads(Path(path).read_text()))


def recorded_path(gpu: str, folder: Path | None = None) -> Path:
    """Where --record writes a GPU's run: recorded/bench/<gpu slug>.json."""
    return Path(folder or RECORDED_DIR) / f"{results.slug(gpu)}.json"


def recorded(folder: Path | None = None) -> list[Bench]:
    """Every recorded run shipped with the package (or in `folder`), sorted by file name."""
    return [load(path) for path in sorted(Path(folder or RECORDED_DIR).glob("*.json"))]
