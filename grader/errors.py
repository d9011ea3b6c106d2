"""The grader's exceptions, in two families.

The errors the grader raises to whoever uses it derive from ``GraderError``: ``UsageError`` (the
grader called wrongly; defined here, so that the command line reports it without importing the
engine), ``grader.declare.checks.DeclarationError`` (a check declared wrongly),
``grader.declare.rubric.RubricError`` (a bad rubric) and ``grader.sandbox.wire.WireError`` (a
malformed message).
Each is a ``ValueError`` too, so a caller's ``except ValueError`` still catches them.

The other family is how a check ends other than passing, one exception each, raised inside a
check and turned into its result, never seen by a caller. ``CheckFailed`` and
``SubmissionRaised`` are ordinary exceptions: Hypothesis shrinks them to the smallest input that
shows them. ``SubmissionBroken``, ``SubmissionTimedOut`` and ``ReferenceWithheld`` derive from
``BaseException`` on purpose: Hypothesis lets those through at once, so a missing function, a
crashed worker or a hang ends the check without hundreds of futile retries.
"""

from __future__ import annotations

from typing import Any


def not_implemented_message(function: str) -> str:
    """The message of every check of a function that still raises the template's
    ``NotImplementedError`` (the report recognises such checks by it)."""
    return f"{function} is not implemented yet (it raises NotImplementedError)"


def corrupted_reply_message(error: Exception) -> str:
    """What a student reads when their worker's reply was malformed: whatever was forged or
    broken, it is the submission's error, never the grader's."""
    return f"the process running your code sent a corrupted reply ({error})"


class GraderError(Exception):
    """The root of the errors the grader raises to its callers (never a check's outcome)."""


class UsageError(GraderError, ValueError):
    """The grader was called wrongly (a missing file, an unknown check id, a bad rubric)."""


class _CarriesInputs:
    """Mixin: the drawn inputs of the example that raised, and the calls it made to the student
    (packed request, raw reply), attached by the check's wrapper."""

    inputs: dict[str, Any] | None = None
    calls: list[tuple[bytes, dict[str, Any]]] | None = None


class CheckFailed(_CarriesInputs, AssertionError):
    """The submission returned a wrong result."""

    def __init__(
        self,
        message: str,
        *,
        expected: Any = None,
        actual: Any = None,
        difference: dict[str, Any] | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.expected = expected
        self.actual = actual
        self.difference = difference
        self.hint = hint


class SubmissionRaised(_CarriesInputs, Exception):
    """The student's function raised an exception where it should have returned."""

    def __init__(self, function: str, error: dict[str, Any]) -> None:
        super().__init__(f"{function} raised {error.get('type')}: {error.get('message')}")
        self.function = function
        self.error = error


class SubmissionBroken(BaseException):
    """The submission cannot be run at all for this check (not loaded, missing, crashed)."""

    def __init__(self, message: str, traceback: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.traceback = traceback


class SubmissionTimedOut(BaseException):
    """A call into the submission exceeded its time limit."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CpuBudgetSpent(SubmissionTimedOut):
    """A call into the submission used more CPU time than its budget: it spins, whatever the
    machine's load (a wall-clock limit alone lets a spinner take a core for all of it)."""


class ReferenceWithheld(BaseException):
    """The check needs the reference solution, which the student release does not hold: it is
    graded on submission. A ``BaseException``, so that Hypothesis stops the check at once."""
