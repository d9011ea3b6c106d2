"""Running one check against a submission, and turning how it ended into a ``CheckResult``."""

from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis.errors import Flaky, FlakyFailure

from grader.compare import display
from grader.declare.checks import Check, by_inputs
from grader.engine.drawing import check_seed, hypothesis_test
from grader.engine.recording import Recording, shared_budget
from grader.engine.student import Student
from grader.errors import (
    CheckFailed,
    ReferenceWithheld,
    SubmissionBroken,
    SubmissionRaised,
    SubmissionTimedOut,
)
from grader.report.model import CheckResult

SKIPPED = {
    "status": "skipped",
    "message": "not run: the time budget of the whole grade was used up by earlier checks",
}
ON_SUBMISSION = {
    "status": "skipped",
    "graded_on_submission": True,
    "message": "graded on submission: this check compares with the reference solution, which this "
    "release of the grader does not include",
}
# The calls of a failing example: (packed request, the student's reply) each.
Calls = list[tuple[bytes, dict[str, Any]]]
Explain = Callable[[Check, Student, Calls | None, str], dict[str, Any]]
STATELESS = "make the functions pure: the same inputs must always give the same outputs"


def no_explanation(check: Check, student: Student, calls: Calls | None, message: str) -> dict[str, Any]:
    return {}


def run_checks(
    checks: Sequence[Check],
    student: Student,
    *,
    seed: int,
    max_examples: int,
    deadline: float | None = None,
    recording: Recording | None = None,
    explain: Explain = no_explanation,
) -> list[CheckResult]:
    """Run the checks, those that draw from the same ``Inputs`` in one shared run.

    In a shared run every check sees every example, and the inputs are drawn, and the reference
    and the student's identical calls made, once per example instead of once per check. A check
    that fails, or raises anything, in the shared run is run again on its own with the same
    seed, which finds the same failing example and shrinks it.

    ``deadline`` (monotonic) bounds the whole run: checks not started by then are skipped.
    ``recording``: the shared runs' inputs drawn beforehand (``grader.engine.recording``), for a
    batch. ``explain``: what a failed check adds to its result (``grader.feedback.explain``:
    the diagnosis and the reproduction snippet), given the failing example's calls.
    """
    results: dict[str, CheckResult] = {}
    student.total_deadline = deadline
    for members in by_inputs(checks):
        if deadline is not None and time.monotonic() >= deadline:
            for c in members:
                results[c.id] = _result(c, SKIPPED, 0, 0.0)
            continue
        if len(members) == 1:
            results[members[0].id] = run_check(
                members[0], student, seed=seed, max_examples=max_examples, explain=explain
            )
            continue
        passed, examples, duration = _shared_run(members, student, seed, max_examples, recording)
        for c in members:
            if c.id in passed:
                results[c.id] = _result(c, {"status": "passed", "message": "passed"}, examples, duration)
            else:
                results[c.id] = run_check(
                    c, student, seed=seed, max_examples=max_examples, failed_together=True, explain=explain
                )
    return [results[c.id] for c in checks]


class _AllFailed(BaseException):
    """Every check of a shared run has failed: nothing is left to run."""


def _shared_run(
    members: list[Check], student: Student, seed: int, max_examples: int, recording: Recording | None = None
) -> tuple[set[str], int, float]:
    """The ids of the members that passed every example, how many examples, seconds each."""
    started = time.monotonic()
    failed: set[str] = set()
    for c in members:
        try:
            student.require(c.target)
        except (SubmissionBroken, SubmissionTimedOut):  # missing, or hung in an earlier check
            failed.add(c.id)

    def every_member(student: Student, drawn: dict[str, Any]) -> None:
        for c in members:
            if c.id in failed:
                continue
            try:
                c.run_body(student, drawn)
            except (Exception, SubmissionBroken, SubmissionTimedOut, ReferenceWithheld):
                failed.add(c.id)  # run again alone, which says how it ended
        if len(failed) == len(members):
            raise _AllFailed

    inputs = members[0].inputs
    student.examples = 0
    student.deadline = started + sum(c.timeout_s for c in members)
    budget = shared_budget(members, max_examples)
    test_seed = check_seed(seed, inputs.name)
    recorded = recording.examples(inputs.name, test_seed, budget) if recording else None
    with contextlib.suppress(_AllFailed):
        if recorded is None:
            hypothesis_test(inputs, every_member, test_seed, budget)(student)
        else:
            for drawn in recorded:  # what Hypothesis would draw: the same seed and budget
                student.begin_example()
                every_member(student, drawn)
    passed = {c.id for c in members} - failed
    duration = (time.monotonic() - started) / len(members)
    return passed, student.examples, duration


def run_check(
    check: Check,
    student: Student,
    *,
    seed: int,
    max_examples: int,
    failed_together: bool = False,
    explain: Explain = no_explanation,
) -> CheckResult:
    """Run one check on its own; Hypothesis shrinks any failure to a minimal example.

    ``failed_together``: the check failed in a shared run, so passing alone means the
    submission's results depend on the calls made before.
    """
    started = time.monotonic()
    student.examples = 0
    student.deadline = started + check.timeout_s

    def body(student: Student, drawn: dict[str, Any]) -> None:
        try:
            check.run_body(student, drawn)
        except (CheckFailed, SubmissionRaised) as signal:
            signal.inputs = check.drawn_for_me(drawn)
            signal.calls = student.example_calls()
            raise

    test = hypothesis_test(
        check.inputs, body, check_seed(seed, check.inputs.name), check.max_examples or max_examples
    )
    try:
        student.require(check.target)
        test(student)
        outcome: dict[str, Any] = {"status": "passed", "message": "passed"}
        if failed_together:
            outcome = {
                "status": "failed",
                "message": "it failed when run after other checks on the same inputs, but not on "
                "its own: your functions' results depend on the calls made before",
                "hint": STATELESS,
            }
    except CheckFailed as failure:
        outcome = {
            "status": "failed",
            "message": failure.message,
            **explain(check, student, failure.calls, failure.message),
            "hint": failure.hint,
            "counterexample": _counterexample(failure, failure.expected, failure.actual, failure.difference),
        }
    except SubmissionRaised as raised:
        message = _raised_message(raised)
        outcome = {
            "status": "error",
            "error_source": "submission",
            "message": message,
            "traceback": raised.error.get("traceback"),
            "counterexample": _counterexample(raised),
            **explain(check, student, raised.calls, message),
        }
    except SubmissionBroken as broken:
        outcome = {
            "status": "error",
            "error_source": "submission",
            "message": broken.message,
            "traceback": broken.traceback,
        }
    except SubmissionTimedOut as timed_out:
        outcome = {"status": "timeout", "error_source": "submission", "message": timed_out.message}
    except ReferenceWithheld:
        outcome = dict(ON_SUBMISSION)
    except (Flaky, FlakyFailure):
        outcome = {
            "status": "failed",
            "message": "your function gave different results for the same input "
            "(it depends on randomness or on state kept between calls)",
            "hint": STATELESS,
        }
    except Exception as error:
        outcome = {
            "status": "error",
            "error_source": "grader",
            "message": f"internal grader error (not your fault): {type(error).__name__}: {error}",
            "traceback": traceback.format_exc()[-4000:],
        }
    return _result(check, outcome, student.examples, time.monotonic() - started)


def _result(check: Check, outcome: dict[str, Any], examples: int, duration_s: float) -> CheckResult:
    passed = outcome["status"] == "passed"
    return CheckResult(
        id=check.id,
        title=check.title,
        description=check.description,
        target=check.target,
        score=check.points if passed else 0.0,
        max_score=check.points,
        visibility=check.visibility,
        examples=examples,
        duration_s=round(duration_s, 4),
        **outcome,
    )


def _counterexample(
    signal: CheckFailed | SubmissionRaised,
    expected: Any = None,
    actual: Any = None,
    difference: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    if signal.inputs is None:
        return None
    found: dict[str, Any] = {"inputs": display.inputs(signal.inputs)}
    if expected is not None:
        found["expected"] = expected
    if actual is not None:
        found["actual"] = actual
    if difference is not None:
        found["difference"] = difference
    return found


def _raised_message(raised: SubmissionRaised) -> str:
    error = raised.error
    message = f"{raised.function} raised {error.get('type')}: {error.get('message')}"
    own_frames = "File " in (error.get("traceback") or "")
    if error.get("type") == "TypeError" and not own_frames:
        message += " (the call did not match your function's signature: compare it with the template's)"
    return message
