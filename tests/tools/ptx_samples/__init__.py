"""Test-only packages for gpgpu_tools.ptx: kernels of known PTX (clean), or that must fail."""
