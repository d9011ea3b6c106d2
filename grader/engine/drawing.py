"""How a check's inputs are drawn: the grading settings profile, a seed per check, and the
Hypothesis test that feeds a run (``grader.engine.runner``) or records one ahead of a batch
(``grader.engine.recording``)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity

from grader.declare.checks import Inputs


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


def hypothesis_test(
    inputs: Inputs, body: Callable[..., None], seed: int, max_examples: int
) -> Callable[[Any], None]:
    """A fresh Hypothesis test of ``body(student, **drawn)`` over ``inputs``."""

    def example(student: Any, **drawn: Any) -> None:
        student.begin_example()
        body(student, drawn)

    given = hypothesis.given(**inputs.strategies)(example)
    return hypothesis.seed(seed)(grading_settings(max_examples)(given))
