"""Re-tune the fast kernels on a GPU: `python -m gpgpu_tools.tune FAMILY|--all [--quick]`.

Each lesson's fast module describes what can be tuned in a `TUNING` dict (or a tuple of them,
or further dicts named `<WHAT>_TUNING`)::

    TUNING = {"family": "transpose",                 # the name given on the command line
              "space": {"tile": [32, 64], ...},      # each parameter and the values to try
              "chosen": {"tile": 64, ...},           # the module constants now in use
              "case": build,                         # build(**params) -> (Launch, bytes moved)
              "ceiling": "read"}                     # optional: read-only kernels (default copy)

The tool times every combination of the space with CUDA events (`timing.benchmark`) on the
GPU preset size, beside the same run's device-to-device copy (or device read), prints them
fastest first, and writes the table to gpgpu_lessons/recorded/tuning/<family>-<gpu>.json: the
record the fast modules' constants cite (with the space it searched; tests/tools/test_tune.py
requires one per family, searched over the module's space of today). Combinations a kernel
refuses (a ValueError from its checks) are listed as skipped. `--all` tunes every family in one
run (146 combinations at this writing; `--list` counts them). In the simulator it only lists the
space (`--list`): tuning measures a GPU.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import sys
import time
from pathlib import Path

from gpgpu_lessons import results, runtime, timing

from .lessons import lesson_modules

TUNING_DIR = results.RECORDED_DIR / "tuning"


def families() -> dict[str, dict]:
    """Every TUNING description of the lessons' fast modules, by family name."""
    found = {}
    for module in lesson_modules("fast"):
        tunings = getattr(module, "TUNING", ())
        tunings = [tunings] if isinstance(tunings, dict) else list(tunings)  # one or several
        tunings += [v for k, v in vars(module).items() if k.endswith("_TUNING")]
        for tuning in tunings:
            found[tuning["family"]] = {**tuning, "module": module.__name__}
    return found


def combinations(space: dict) -> list[dict]:
    """Every assignment of the space's values to its parameters, in order."""
    names = list(space)
    return [dict(zip(names, values)) for values in itertools.product(*(space[n] for n in names))]


def run(family: str, *, quick: bool = False) -> dict:
    """Time every combination of a family's space on this GPU; return the table as a dict."""
    known = families()
    if family not in known:
        raise SystemExit(f"unknown family {family!r}; choose one of {', '.join(sorted(known))}")
    tuning = known[family]
    ceiling = timing.read_ceiling() if tuning.get("ceiling") == "read" else timing.copy_ceiling()
    rows = []
    for params in combinations(tuning["space"]):
        try:
            prepared, nbytes = tuning["case"](**params)
        except ValueError as refused:
            rows.append({"params": params, "skipped": str(refused)})
            continue
        measured = timing.benchmark(
            prepared, name=str(params), bytes_moved=nbytes, repeat=3 if quick else None
        )
        rows.append(
            {
                "params": params,
                "median_ms": measured.median_ms,
                "gbs": measured.gbs,
                "of_ceiling": measured.gbs / ceiling.gbs,
            }
        )
    timed = sorted((r for r in rows if "gbs" in r), key=lambda r: -r["gbs"])
    return {
        "family": family,
        "module": tuning["module"],
        "gpu": runtime.device_info().name,
        "date": datetime.date.today().isoformat(),
        "ceiling": ceiling.name,
        "ceiling_gbs": ceiling.gbs,
        "space": tuning["space"],
        "chosen": tuning.get("chosen"),
        "best": timed[0]["params"] if timed else None,
        "results": timed + [r for r in rows if "skipped" in r],
    }


def save(table: dict) -> Path:
    """Write a tuning table beside the recorded results; return its path."""
    TUNING_DIR.mkdir(parents=True, exist_ok=True)
    path = TUNING_DIR / f"{table['family']}-{results.slug(table['gpu'])}.json"
    path.write_text(json.dumps(table, indent=1) + "\n")
    return path


def recorded(family: str) -> list[dict]:
    """The committed tuning tables of a family, one per GPU (sorted by file name)."""
    return [json.loads(p.read_text()) for p in sorted(TUNING_DIR.glob(f"{family}-*.json"))]


def _report(table: dict) -> None:
    for row in table["results"]:
        text = (
            row.get("skipped")
            or f"{row['median_ms']:.4f} ms  {row['gbs']:7.0f} GB/s  "
            f"{row['of_ceiling']:.2f}x ceiling"
        )
        print(f"{row['params']}: {text}")
    print(
        f"{table['family']}: best {table['best']}; now chosen: {table['chosen']}; "
        f"written to {save(table)}"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_tools.tune", description=__doc__.split("\n")[0]
    )
    parser.add_argument("family", nargs="?", help="what to tune (omit to list the families)")
    parser.add_argument("--all", action="store_true", help="tune every family, one after another")
    parser.add_argument("--list", action="store_true", help="list the space, time nothing")
    parser.add_argument("--quick", action="store_true", help="3 samples per combination")
    args = parser.parse_args(argv)
    known = families()
    if args.all and args.family:
        parser.error("give a FAMILY or --all, not both")
    if (args.family is None and not args.all) or args.list:
        total = 0
        for name, tuning in sorted(known.items()):
            if args.family in (None, name):
                count = len(combinations(tuning["space"]))
                total += count
                print(
                    f"{name} ({tuning['module']}): {count} combinations of "
                    + ", ".join(f"{k} in {v}" for k, v in tuning["space"].items())
                )
        print(f"{total} combinations in all")
        return 0
    if runtime.is_simulator():
        print(
            "tuning measures a GPU; this machine runs the simulator (use --list to see the space)",
            file=sys.stderr,
        )
        return 2
    start = time.perf_counter()
    for family in sorted(known) if args.all else [args.family]:
        began = time.perf_counter()
        _report(run(family, quick=args.quick))
        print(f"{family}: {time.perf_counter() - began:.0f} s", flush=True)
    print(f"tuned in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
