"""Kernels registered as a lesson registers them, each with a known PTX property."""
