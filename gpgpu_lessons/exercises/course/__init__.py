"""The course graders' hooks: each grades a submission from its source with `judge`.

- `otter.Judge`, an otter-grader plugin (Gradescope): before otter runs the submission, it grades
  every exercise from the notebook's cells, then hands otter a notebook with no code of the
  student's to run; after otter's grading it replaces each question's result by the verdict.
- `nbgrader.Judge`, an nbgrader preprocessor (JupyterHub) that takes the place of nbgrader's
  Execute: it writes each test cell's output from the verdict, and runs nothing of the student's.

Both read the assignment's settings (`Settings`): the lesson, the public seed and the hidden cases
that the instructor's export writes beside the autograder, never into a student's files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

SETTINGS = "gpgpu-settings.json"  # beside the autograder's hidden cases


@dataclass
class Settings:
    """What the autograder needs to grade one lesson: seeds and the hidden cases' file."""

    lesson: str
    seed: int
    hidden: str | None = None  # a file name, beside the settings
    hidden_seed: int | None = None
    points: float = 1

    @classmethod
    def read(cls, path) -> Settings:
        """The settings in a JSON file; `hidden` becomes a path beside it."""
        path = Path(path)
        settings = cls(**json.loads(path.read_text(encoding="utf-8")))
        if settings.hidden:
            settings.hidden = str(path.parent / settings.hidden)
        return settings

    def grade(self, notebook):
        """Every exercise of the lesson graded from the notebook (judge.Verdict each)."""
        from .. import judge

        return judge.grade_notebook(
            notebook,
            self.lesson,
            seed=self.seed,
            hidden=self.hidden,
            hidden_seed=self.hidden_seed,
        )


def question_name(exercise_id: str) -> str:
    """`q05_1` for exercise 05.1: the question's name in both graders."""
    return "q" + exercise_id.replace(".", "_")
