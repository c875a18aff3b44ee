"""`python -m gpgpu_lessons`: say which mode is active, describe the device and the recorded GPUs.

`python -m gpgpu_lessons bench [--help]` runs the benchmark of the fast kernels (bench/).
"""

import sys

from . import results, runtime

if sys.argv[1:2] == ["bench"]:
    from .bench.__main__ import main

    raise SystemExit(main(sys.argv[2:]))
if sys.argv[1:]:
    raise SystemExit(
        f"usage: python -m gpgpu_lessons [bench [--help]]; got {' '.join(sys.argv[1:])}"
    )
print(runtime.device_info())
if runtime.is_simulator():
    print("  sizes are tiny and times are host times of the emulation, not GPU performance;")
    print("  the lessons' plots show these recorded GPU runs instead:")
    for gpu, date in results.recorded_gpus():
        print(f"    {gpu} ({date})")
    print(
        "  on a machine with an NVIDIA GPU: pip install -e '.[cu12]' (driver >= 525) "
        "or '.[cu13]' (driver >= 580)"
    )
