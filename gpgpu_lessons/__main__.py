"""`python -m gpgpu_lessons`: say which mode is active and describe the device."""
from . import runtime

print(runtime.device_info())
