"""The otter-grader plugin: grade each exercise from the submission's source, not its kernel.

Named in the exported assignment's config (`plugins:`), so it runs in the autograder's own
process on Gradescope and in `otter run`. `before_execution` grades the submitted notebook with
`judge` and returns a copy whose code cells are empty: the notebook otter then executes holds
nothing of the student's, so no patch, exit or crash of theirs can reach a score. `after_grading`
puts one result per exercise in otter's results, each the grader's words.
"""

from __future__ import annotations

import copy
from pathlib import Path

from otter.plugins import AbstractOtterPlugin
from otter.test_files.abstract_test import TestCase, TestCaseResult, TestFile

from . import SETTINGS, Settings, question_name


class Verdict(TestFile):
    """One exercise's result as otter shows it: the score and the grader's words, nothing else."""

    def __init__(self, name: str, passed: bool, text: str, points: float):
        case = TestCase(name, None, False, points, None, None)
        super().__init__(name, "", [case])
        self.test_case_results = [TestCaseResult(case, text, passed)]
        self.text = text

    def summary(self, public_only: bool = False) -> str:
        return self.text

    @classmethod
    def from_file(cls, path):
        raise NotImplementedError("a verdict is made by the judge, not read from a file")

    @classmethod
    def from_metadata(cls, s, path):
        raise NotImplementedError("a verdict is made by the judge, not read from a notebook")

    def run(self, global_environment):
        raise NotImplementedError("a verdict is made by the judge, not run")


class Judge(AbstractOtterPlugin):
    """Grades the submission from its cells before otter runs it; otter's results follow."""

    def settings(self) -> Settings:
        folder = Path(self.submission_path).parent  # otter copies the autograder's files here
        return Settings.read(folder / self.plugin_config.get("settings", SETTINGS))

    def before_execution(self, submission):
        settings = self.settings()
        self.points = settings.points
        self.verdicts = settings.grade(submission)
        emptied = copy.deepcopy(submission)
        for cell in emptied.cells:
            if cell.cell_type == "code":
                cell.source, cell.outputs = "", []
        return emptied

    def after_grading(self, results):
        results.results = {
            question_name(v.id): Verdict(question_name(v.id), v.passed, v.text, self.points)
            for v in self.verdicts
        }
