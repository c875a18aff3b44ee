"""Refuse, in one line, a Python the collection cannot install on (run by make before pip).

numba-cuda 0.30, the GPU target every lesson needs, supports Python 3.10 to 3.14 and no later
version; pip would otherwise fail somewhere inside a dependency's build.
"""

import sys

OLDEST, NEWEST = (3, 10), (3, 14)  # keep in step with requires-python in pyproject.toml

if not OLDEST <= sys.version_info[:2] <= NEWEST:
    found = ".".join(map(str, sys.version_info[:3]))
    sys.exit(
        f"Python {found} is not supported: use Python {OLDEST[0]}.{OLDEST[1]} to "
        f"{NEWEST[0]}.{NEWEST[1]} (numba-cuda 0.30 ends at 3.14), e.g. make PYTHON=python3.12"
    )
