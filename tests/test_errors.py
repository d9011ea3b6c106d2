"""The grader's exceptions: one root for the errors about using it, still ``ValueError``s."""

from __future__ import annotations

import pytest

from grader import api, errors
from grader.declare.checks import DeclarationError
from grader.declare.rubric import RubricError
from grader.sandbox.wire import WireError


@pytest.mark.parametrize("error", [errors.UsageError, DeclarationError, RubricError, WireError])
def test_usage_errors_share_one_root_and_stay_value_errors(error: type[Exception]) -> None:
    assert issubclass(error, errors.GraderError)
    assert issubclass(error, ValueError)  # callers' ``except ValueError`` still catches them


@pytest.mark.parametrize(
    "outcome", [errors.SubmissionBroken, errors.SubmissionTimedOut, errors.ReferenceWithheld]
)
def test_submission_outcomes_are_the_other_family(outcome: type[BaseException]) -> None:
    assert not issubclass(outcome, Exception)  # Hypothesis lets them through at once
    assert not issubclass(errors.CheckFailed, errors.GraderError)


def test_the_engine_raises_the_usage_error_the_command_line_catches() -> None:
    assert api.UsageError is errors.UsageError
    with pytest.raises(errors.UsageError, match="unknown check id"):
        api.select(api.builtin_checks(), ["no_such_check"])
