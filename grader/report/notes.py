"""The exercise notes (``Exercise.notes``) a report unlocks once the exercise is solved, as the
exercise page does.

Before that they stay locked: they explain the answer, and a student who reads them first
learns less from the checks.
"""

from __future__ import annotations

from collections.abc import Iterable

from grader.report.model import CheckResult

LOCKED = "The exercise notes unlock when every required check passes."


def solved(results: Iterable[CheckResult], required: Iterable[str]) -> bool:
    """Every required check was run and passed."""
    passed = {r.id for r in results if r.status == "passed"}
    return set(required) <= passed
