"""Lesson {{N}}, {{TITLE}} (notebooks/{{N}}_{{NAME}}.ipynb).

- `textbook`: the kernels of the story, each a few lines, with their wrappers;
- `bench`: what `python -m gpgpu_tools.bench` times of the lesson (its fast kernels).
"""
