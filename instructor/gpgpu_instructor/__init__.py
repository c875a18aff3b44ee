"""The instructor's part of the collection: reference solutions, hidden cases, course export.

Not in the wheel a student installs: `solutions` (the reference kernels), `hidden` (the grading
cases that only the autograder holds) and `export` (otter-grader and nbgrader assignments, which
carry the hidden cases into the autograder). `python -m gpgpu_instructor --help` lists the
commands; docs/grading.md says how to grade a class.
"""
