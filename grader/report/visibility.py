"""What students may see of a check: the rubric's visibility applied to one ``CheckResult``.

Course staff hide a check when its details would give the answer away (the default rubric
hides the checks that compare with the reference's numbers). A hidden check still counts, and
students still see its title, status and points, but nothing that depends on the input that
broke it: no message (it quotes expected values), no hint, no counterexample, no traceback, no
reproduction snippet. A diagnosis stays: it names the student's own mistake and what to change,
and quotes no number.

Gradescope shows ``after_due_date`` and ``after_published`` checks only when that time comes,
so its format keeps their details (``gated=True``); every other student-facing format cannot
wait, and treats them like ``hidden``. The JSON report is the staff's full record: it keeps
everything, with each check's ``visibility`` beside it.
"""

from __future__ import annotations

import dataclasses

from grader.errors import not_implemented_message
from grader.report.model import CheckResult

# The fields a hidden check keeps; every other field (today's, and any added later, such as a
# reproduction snippet) goes back to its default, so nothing new leaks by default.
SHOWN = frozenset(
    {"id", "title", "description", "target", "status", "score", "max_score", "visibility"}
    | {"error_source", "examples", "duration_s", "diagnosis", "graded_on_submission"}
)
WITHHELD = "details withheld: this check's counterexample would give the answer away"


def not_implemented(result: CheckResult) -> bool:
    """The check could not run because its function still raises the template's
    ``NotImplementedError``: saying so gives nothing away, hidden check or not."""
    return result.status == "error" and result.message == not_implemented_message(result.target)


def details_shown(result: CheckResult, *, gated: bool = False) -> bool:
    """Whether students may see this check's details now. ``gated``: the platform itself holds
    back ``after_due_date`` and ``after_published`` checks until their time."""
    if result.visibility == "visible" or result.status == "passed" or result.graded_on_submission:
        return True  # a check graded on submission has no details yet: its message says so
    return gated and result.visibility in ("after_due_date", "after_published")


def for_students(result: CheckResult, *, gated: bool = False) -> CheckResult:
    """``result`` as students may see it: itself, or its redacted form (see the module's doc)."""
    if details_shown(result, gated=gated):
        return result
    kept: dict[str, object] = {}
    for field in dataclasses.fields(result):
        if field.name in SHOWN:
            kept[field.name] = getattr(result, field.name)
        elif field.default is not dataclasses.MISSING:
            kept[field.name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            kept[field.name] = field.default_factory()
    if not_implemented(result):
        kept["message"] = f"{result.target} is not implemented yet: this check runs once it is"
    else:
        kept["message"] = f"{result.status} ({WITHHELD})"
    return CheckResult(**kept)
