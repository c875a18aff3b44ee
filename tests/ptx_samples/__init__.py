"""Test-only packages for gpgpu_lessons.ptx: kernels of known PTX (clean), or that must fail."""
