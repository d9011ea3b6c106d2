"""The report: plain frozen data, built by the grader and read by the renderers.

Its JSON form is described by ``grader/report.schema.json`` (``SCHEMA_VERSION``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

SCHEMA_VERSION = "1.2"
# ``internal_error`` of a grade that could not start because of how the grader was called (a
# missing file, an unknown check id): the caller's mistake, not the grader's.
USAGE_ERROR = "usage error: "
Status = Literal["passed", "failed", "error", "timeout", "skipped"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "error", "timeout", "skipped")


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome.

    ``error_source`` separates "your code broke" (``submission``) from "the grader broke"
    (``grader``); it is None unless the status is ``error`` or ``timeout``.
    """

    id: str
    title: str
    description: str
    target: str
    status: Status
    score: float
    max_score: float
    visibility: str
    message: str
    hint: str | None = None
    counterexample: dict[str, Any] | None = None
    traceback: str | None = None
    error_source: Literal["submission", "grader"] | None = None
    examples: int = 0
    duration_s: float = 0.0
    # The catalogued mistake the failure shows (id, name, explanation, fix), when exactly one fits.
    diagnosis: dict[str, str] | None = None
    # A self-contained Python snippet that replays the failing example's calls.
    reproduce: str | None = None
    # Skipped because it needs the reference solution, which the student release does not hold:
    # graded on submission, not failed (see grader.exercise.withhold).
    graded_on_submission: bool = False


@dataclass(frozen=True)
class Report:
    """A whole grade. ``internal_error`` is set when the grader itself failed."""

    submission: str
    checks: tuple[CheckResult, ...]
    grader: dict[str, Any]
    submission_output: str = ""
    load_error: dict[str, Any] | None = None
    internal_error: str | None = None
    # Every required check passed: the exercise is solved and its notes are unlocked.
    solved: bool = False
    notes: str | None = None
    # Plot data computed with the student's functions, for the HTML report (None otherwise).
    visuals: dict[str, Any] | None = None
    schema_version: str = SCHEMA_VERSION
    score: float = field(init=False)
    max_score: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "score", round(sum(c.score for c in self.checks), 6))
        object.__setattr__(self, "max_score", round(sum(c.max_score for c in self.checks), 6))

    @property
    def usage_error(self) -> bool:
        """The grade could not start because of how the grader was called."""
        return (self.internal_error or "").startswith(USAGE_ERROR)

    @property
    def all_passed(self) -> bool:
        """Every check passed, or waits to be graded on submission (the student release)."""
        return self.internal_error is None and all(
            c.status == "passed" or c.graded_on_submission for c in self.checks
        )

    @property
    def on_submission_points(self) -> float:
        """The points of the checks that only the grade on submission can award."""
        return round(sum(c.max_score for c in self.checks if c.graded_on_submission), 6)

    def counts(self) -> dict[str, int]:
        return {status: sum(c.status == status for c in self.checks) for status in STATUSES}

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["checks"] = [dataclasses.asdict(c) for c in self.checks]
        data["summary"] = self.counts()
        order = ("schema_version", "submission", "score", "max_score", "summary", "checks")
        return {key: data[key] for key in order} | {k: v for k, v in data.items() if k not in order}
