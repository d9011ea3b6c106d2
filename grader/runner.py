"""Running one check against a submission, and turning how it ended into a ``CheckResult``."""

from __future__ import annotations

import hashlib
import time
import traceback
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity
from hypothesis.errors import Flaky, FlakyFailure

from grader import display
from grader.checks import Check
from grader.errors import CheckFailed, SubmissionBroken, SubmissionRaised, SubmissionTimedOut
from grader.report import CheckResult
from grader.student import Student


def grading_settings(max_examples: int) -> hypothesis.settings:
    """The grading profile: reproducible (no database, seeded per check), no deadline, quiet.

    Health checks are off because they time the machine, and a grade must not depend on how
    busy the machine was.
    """
    return hypothesis.settings(
        max_examples=max_examples,
        database=None,
        deadline=None,
        derandomize=False,
        print_blob=False,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
    )


def check_seed(seed: int, check_id: str) -> int:
    """A seed of the check's own, stable across runs, Python versions and machines."""
    digest = hashlib.sha256(f"{seed}:{check_id}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def _configured(test: Any, profile: hypothesis.settings, seed: int) -> Any:
    """What ``@settings(profile)`` and ``@seed(seed)`` do, but repeatable for every run.

    The decorators refuse to be applied twice, yet a check runs once per grade with the grade's
    own budget and seed; Hypothesis reads both attributes when the test is called.
    """
    test._hypothesis_internal_use_settings = profile
    test._hypothesis_internal_use_seed = seed
    return test


def run_check(check: Check, student: Student, *, seed: int, max_examples: int) -> CheckResult:
    started = time.monotonic()
    student.examples = 0
    student.deadline = started + check.timeout_s
    test = _configured(
        check.test, grading_settings(check.max_examples or max_examples), check_seed(seed, check.id)
    )
    try:
        student.require(check.target)
        test(student)
        outcome: dict[str, Any] = {"status": "passed", "message": "passed"}
    except CheckFailed as failure:
        outcome = {
            "status": "failed",
            "message": failure.message,
            "hint": failure.hint,
            "counterexample": _counterexample(failure, failure.expected, failure.actual, failure.difference),
        }
    except SubmissionRaised as raised:
        outcome = {
            "status": "error",
            "error_source": "submission",
            "message": _raised_message(raised),
            "traceback": raised.error.get("traceback"),
            "counterexample": _counterexample(raised),
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
    except (Flaky, FlakyFailure):
        outcome = {
            "status": "failed",
            "message": "your function gave different results for the same input "
            "(it depends on randomness or on state kept between calls)",
            "hint": "make the functions pure: the same inputs must give the same outputs",
        }
    except Exception as error:
        outcome = {
            "status": "error",
            "error_source": "grader",
            "message": f"internal grader error (not your fault): {type(error).__name__}: {error}",
            "traceback": traceback.format_exc()[-4000:],
        }
    passed = outcome["status"] == "passed"
    return CheckResult(
        id=check.id,
        title=check.title,
        description=check.description,
        target=check.target,
        score=check.points if passed else 0.0,
        max_score=check.points,
        visibility=check.visibility,
        examples=student.examples,
        duration_s=round(time.monotonic() - started, 4),
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
