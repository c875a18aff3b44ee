"""`python -m gpgpu_lessons`: the active mode, the device, and the recorded GPU runs."""

import sys

from . import results, runtime

if sys.argv[1:]:
    raise SystemExit(
        f"usage: python -m gpgpu_lessons (no arguments; the benchmark is "
        f"python -m gpgpu_tools.bench); got {' '.join(sys.argv[1:])}"
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
