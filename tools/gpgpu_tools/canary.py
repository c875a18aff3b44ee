"""`make canary`: would the collection still work with the newest numpy, numba and numba-cuda?

Builds a throwaway virtual environment with the newest releases of the three pinned packages
(numba-cuda with its CUDA compiler wheels), the package and its test extra, compiles every
registered kernel to PTX there (gpgpu_tools.ptx) and runs the tests on the simulator; then
says, for each pin, whether it admits the newest release, could be relaxed to admit it, or must
stay because something broke (naming the kernels or tests). When several pins are exceeded and
something breaks, each package is then tried alone to find the culprit.

Not part of CI: it needs the network and judges new releases, not this repository. Run it when
numpy, numba or numba-cuda publish a release, before relaxing a pin in pyproject.toml and
environment.yml.

    python -m gpgpu_tools.canary                    # the newest releases
    python -m gpgpu_tools.canary numpy==2.5.0rc1    # a chosen version (--pre for candidates)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpgpu_lessons import runtime

from . import ptx

ROOT = Path(__file__).resolve().parents[2]
WATCHED = ("numpy", "numba", "numba-cuda")
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$")
# What the simulator tests skip in the throwaway environment: the PTX loop runs on its own,
# and lint, slides (a browser) and packaging judge the repository, not the releases.
PYTEST_SUMMARY = re.compile(r"^=*\s*(\d+ (?:passed|failed|errors?|skipped|deselected).*?)=*$", re.M)
SKIPPED_TESTS = ("test_ptx.py", "test_lint.py", "test_slides.py", "test_packaging.py")


def project_requirements() -> tuple[list[str], list[str]]:
    """(dependencies, test extra) of pyproject.toml, as requirement strings."""
    text = (ROOT / "pyproject.toml").read_text()

    def block(name: str) -> list[str]:
        found = re.search(rf"^{name} = \[(.*?)^\]", text, re.M | re.S)
        return re.findall(r'"([^"]+)"', found.group(1)) if found else []

    return block("dependencies"), block("test")


def name_of(requirement: str) -> str:
    """'numba-cuda[cu12]>=0.30,<0.31' -> 'numba-cuda'."""
    return REQUIREMENT.match(requirement).group(1).lower().replace("_", "-")


def pins() -> dict[str, str]:
    """The version ranges pyproject.toml allows the watched packages: {'numpy': '>=2,<2.5', ...}."""
    dependencies, _ = project_requirements()
    return {
        name_of(r): REQUIREMENT.match(r).group(3).replace(" ", "")
        for r in dependencies
        if name_of(r) in WATCHED
    }


def admits(spec: str, version: str) -> bool:
    """Whether a range such as '>=2,<2.5' admits a version such as '2.5.0'."""
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(spec).contains(version, prereleases=True)


def run(command: list[str], log: Path, **kwargs) -> subprocess.CompletedProcess:
    """Run a command, appending its output to the log."""
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)
    with log.open("a") as out:
        out.write(f"$ {' '.join(command)}\n{done.stdout}{done.stderr}\n")
    return done


def build(folder: Path, chosen: dict[str, str], log: Path, pre: bool) -> tuple[Path, dict]:
    """A virtual environment in folder: the package, its pins except `chosen` ({name: spec})."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = folder / "bin" / "python"
    dependencies, test = project_requirements()
    keep = [r for r in dependencies + test if name_of(r) not in chosen]
    wanted = [f"numba-cuda[cu12]{chosen.get('numba-cuda', '')}"] + [
        f"{name}{spec}" for name, spec in chosen.items() if name != "numba-cuda"
    ]
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    for step in (
        [*pip, "--upgrade", "pip"],
        [*pip, *(["--pre"] if pre else []), *keep, *wanted],
        [*pip, "--no-deps", "-e", str(ROOT), "-e", str(ROOT / "tools")],
    ):
        done = run(step, log)
        if done.returncode:
            raise RuntimeError(f"pip failed: {' '.join(step[4:])[:300]}\n{done.stderr[-3000:]}")
    versions = run(
        [
            str(python),
            "-c",
            "import json, importlib.metadata as m; print(json.dumps("
            f"{{n: m.version(n) for n in {list(WATCHED)!r}}}))",
        ],
        log,
    )
    return python, json.loads(versions.stdout)


def trial(label: str, chosen: dict[str, str], args, log: Path) -> dict:
    """Build one environment, compile the registry to PTX, run the simulator tests."""
    print(f"canary: {label}: building a throwaway environment ...", flush=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gpgpu-canary-") as folder:
        try:
            python, versions = build(Path(folder) / "venv", chosen, log, args.pre)
        except RuntimeError as error:
            return {"label": label, "versions": {}, "broke": [str(error)], "seconds": 0}
        print(
            f"canary: {label}: {', '.join(f'{n} {v}' for n, v in versions.items())}; "
            "compiling every kernel to PTX ...",
            flush=True,
        )
        report = ptx.run(command=[str(python), "-m", "gpgpu_tools.ptx"], timeout=3600)
        with log.open("a") as out:
            out.write(report["output"])
        # A kernel missing from SIGNATURES is this repository's problem, not a release's.
        broke = [f"PTX: {line}" for line in ptx.failures(report) if "SIGNATURES" not in line]
        last = (report["output"].strip().splitlines() or ["no PTX report"])[-1]
        print(f"canary: {label}: {last}", flush=True)
        print(f"canary: {label}: running the simulator tests ...", flush=True)
        ignored = [f"--ignore=tests/{name}" for name in SKIPPED_TESTS]
        env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
        env.pop(runtime.COMPILE_ONLY_VARIABLE, None)
        tests = run(
            [
                str(python),
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-n",
                str(args.workers),
                *ignored,
                *args.pytest_args,
            ],
            log,
            cwd=ROOT,
            env=env,
        )
        failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", tests.stdout, re.M)
        if tests.returncode not in (0, 5):  # 5: nothing collected (a narrowed selection)
            broke += [f"test: {name}" for name in failed] or [
                f"tests: pytest exited with {tests.returncode}: {tests.stdout[-1500:]}"
            ]
        summary = PYTEST_SUMMARY.findall(tests.stdout)
        summary = summary[-1] if summary else f"pytest exited with {tests.returncode}"
        print(f"canary: {label}: tests: {summary}", flush=True)
    return {
        "label": label,
        "versions": versions,
        "broke": broke,
        "seconds": round(time.perf_counter() - start),
    }


def verdicts(current: dict[str, str], newest: dict, broke_by: dict[str, list[str]]) -> list[str]:
    """One line per watched package: admitted, could be relaxed, or keep the pin (what broke)."""
    lines = []
    for name in WATCHED:
        version, spec = newest.get(name), current[name]
        if version is None:
            lines.append(f"{name}: not installed (see the log)")
        elif admits(spec, version):
            lines.append(f"{name} {version}: the pin {spec} admits it; nothing to relax")
        elif not broke_by.get(name):
            lines.append(
                f"{name} {version}: works; the pin {spec} could be relaxed to admit it "
                "(pyproject.toml and environment.yml)"
            )
        else:
            lines.append(f"{name} {version}: keep the pin {spec}; with it:")
            lines += [f"    {line}" for line in broke_by[name][:20]]
            if len(broke_by[name]) > 20:
                lines.append(f"    ... and {len(broke_by[name]) - 20} more (see the log)")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_tools.canary", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "versions", nargs="*", help="versions to try instead of the newest, e.g. numpy==2.5.0"
    )
    parser.add_argument("--pre", action="store_true", help="allow pre-releases")
    parser.add_argument("--workers", default="auto", help="pytest-xdist workers (default: auto)")
    parser.add_argument(
        "--log",
        default="build/canary.log",
        help="where pip's and the tests' output go (default: %(default)s)",
    )
    parser.add_argument(
        "--pytest-args",
        nargs=argparse.REMAINDER,
        default=["tests"],
        help="what pytest runs (default: tests); must come last",
    )
    args = parser.parse_args(argv)
    current = pins()
    chosen = {name: "" for name in WATCHED}  # unpinned: the newest release
    for requirement in args.versions:
        name = name_of(requirement)
        if name not in WATCHED:
            parser.error(f"{name}: the canary watches {', '.join(WATCHED)}")
        chosen[name] = REQUIREMENT.match(requirement).group(3)
    log = ROOT / args.log
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    first = trial("newest together", chosen, args, log)
    newest = first["versions"]
    exceeded = [n for n in WATCHED if n in newest and not admits(current[n], newest[n])]
    broke_by = {name: first["broke"] for name in exceeded}
    if first["broke"] and len(exceeded) > 1:  # whose release broke it?
        for name in exceeded:
            alone = trial(f"{name} {newest[name]} alone", {name: f"=={newest[name]}"}, args, log)
            broke_by[name] = alone["broke"]
    print(
        f"\ncanary: pins {', '.join(f'{n}{s}' for n, s in current.items())}; "
        f"{first['seconds']} s for the first environment; log: {log.relative_to(ROOT)}"
    )
    for line in verdicts(current, newest, broke_by):
        print(line)
    if first["broke"] and not exceeded:
        print("the pinned versions themselves failed:")
        print("\n".join(f"    {line}" for line in first["broke"][:20]))
    return 1 if first["broke"] else 0


if __name__ == "__main__":
    sys.exit(main())
