"""Test-only packages for gpgpu_lessons.ptx: kernels whose PTX is known (clean) or must fail (broken)."""
