"""Arrows point down only: lessons use the core, no lesson imports another, the core imports no
lesson, and nothing in the student package imports the maintainer tools (gpgpu_tools)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "gpgpu_lessons"


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, as absolute dotted names (relative imports resolved)."""
    here = list(path.relative_to(ROOT).with_suffix("").parts)
    if here[-1] == "__init__":
        here = here[:-1]
    else:
        here = here[:-1]  # the package the module lives in
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def area(module: str) -> str | None:
    """'lNN' for a lesson package, 'tools' for gpgpu_tools, 'core' for the rest of the package."""
    parts = module.split(".")
    if parts[0] == "gpgpu_tools":
        return "tools"
    if parts[0] != "gpgpu_lessons":
        return None
    if len(parts) > 1 and parts[1][:1] == "l" and parts[1][1:3].isdigit():
        return parts[1][:3]
    return "core"


def test_arrows_point_down_only():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        mine = area(".".join(path.relative_to(ROOT).with_suffix("").parts))
        for module in sorted(imported_modules(path)):
            theirs = area(module)
            if theirs is None or theirs == mine:
                continue
            if theirs == "tools":
                wrong.append(f"{path.relative_to(ROOT)} imports the tools ({module})")
            elif theirs != "core" and mine == "core":
                wrong.append(f"{path.relative_to(ROOT)} (core) imports a lesson ({module})")
            elif theirs != "core" and mine not in ("core",):
                wrong.append(f"{path.relative_to(ROOT)} imports another lesson ({module})")
    assert not wrong, "\n".join(wrong)
