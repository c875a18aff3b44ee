"""The nbgrader preprocessor: grade each exercise from the submission's source, not its kernel.

The exported `nbgrader_config.py` puts `Judge` in the place of nbgrader's Execute in
`nbgrader autograde`: nothing of the student's notebook runs. It grades the notebook with
`judge`, then writes each exercise's test cell output: the grader's words as printed text when
the exercise is solved, or as the cell's error when it is not (nbgrader gives a test cell with an
error no points). The settings come from the course's `autograder/` folder, which the export
writes and students never receive.
"""

from __future__ import annotations

from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import new_output
from traitlets import Bool, Unicode

from . import SETTINGS, Settings, question_name


class Judge(Preprocessor):
    """Writes every test cell's output from the judge's verdict (it replaces Execute)."""

    enabled = Bool(True)  # nbconvert's preprocessors are off unless told: a grade must run
    folder = Unicode("", help="the folder of each lesson's settings and hidden cases").tag(
        config=True
    )

    def preprocess(self, nb, resources):
        name = resources.get("nbgrader", {}).get("notebook") or "lesson"
        settings = Settings.read(Path(self.folder) / name / SETTINGS)
        verdicts = {question_name(v.id): v for v in settings.grade(nb)}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            cell.outputs = []
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if not meta.get("grade") or meta.get("solution"):
                continue
            verdict = verdicts.get(meta.get("grade_id", "").removesuffix("_test"))
            if verdict is None:  # a test cell the judge did not grade earns nothing
                text = f"✗ not graded: the test cell {meta.get('grade_id')!r} is not an exercise's"
                cell.outputs = [_error(text)]
            elif verdict.passed:
                cell.outputs = [new_output("stream", name="stdout", text=verdict.text + "\n")]
            else:
                cell.outputs = [_error(verdict.text)]
        return nb, resources


def _error(text: str):
    """A test cell's output that nbgrader scores 0, showing the grader's words and no more."""
    lines = text.splitlines()
    return new_output("error", ename="Not yet", evalue=lines[0], traceback=lines)
