"""Kernels the compile loop must reject, each failure naming its kernel."""
