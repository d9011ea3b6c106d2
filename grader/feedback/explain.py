"""What a failed check adds to its result: the diagnosis and the reproduction snippet.

Both are computed from the failing example's calls (``CheckFailed.calls``), in the trusted
process, with the student's worker still live for the diagnosis probes. Passing checks pay
nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from grader.declare.checks import Check
from grader.engine.student import Student
from grader.feedback.snippet import snippet


def explain(
    check: Check, student: Student, calls: list[tuple[bytes, dict[str, Any]]] | None, message: str
) -> dict[str, Any]:
    """``diagnosis`` and ``reproduce`` for a check that failed with ``message`` on an example
    with ``calls``."""
    if not calls:
        return {}
    found = None
    if student.exercise.has_catalogue():
        from grader.feedback import diagnosis  # staff only: the student release does not ship it

        found = diagnosis.diagnose(check.target, student, calls)
    return {
        "diagnosis": None if found is None else dataclasses.asdict(found),
        "reproduce": snippet(check.id, student.path, calls, message, student.exercise.functions),
    }
