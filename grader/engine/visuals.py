"""The exercise's pictures for the HTML report, computed with the student's own functions.

The exercise says what they are (``Exercise.pictures``); here they get a worker of their own
and a time budget: their calls stop at the grade's deadline or after ``limits.plots_timeout_s``,
whichever comes first, so that a submission slow only on these inputs cannot hold the grade.
"""

from __future__ import annotations

import time
from typing import Any

from grader.engine.student import Student
from grader.exercise import Exercise, resolve
from grader.sandbox.protections import Limits
from grader.sandbox.zygote import ZygoteLink


def collect(
    exercise: Exercise, zygote: ZygoteLink, path: str, limits: Limits, deadline: float | None = None
) -> dict[str, Any] | None:
    """The pictures' data (``Report.visuals``) for the submission at ``path``; None when the
    exercise has no pictures."""
    if exercise.pictures is None:
        return None
    student = Student(zygote, path, limits, exercise)
    budget = time.monotonic() + limits.plots_timeout_s
    student.total_deadline = budget if deadline is None else min(deadline, budget)
    try:
        return resolve(exercise.pictures.collect)(student)
    finally:
        student.close()
