"""The catalogue of the GRPO token objective exercise: one wrong submission per module.

Each module says its mistake as Dr. GRPO's catalogue does (docstring, ``NAME``, ``TARGET``,
``CAUGHT_BY``, ``FIX``): the tests and the audit hold it to ``CAUGHT_BY``, and the grader names
it when a failing check's calls get its answers (``Exercise.catalogue``).
"""

from __future__ import annotations

from grader.declare.mistakes import Mistake, scan

__all__ = ["Mistake", "catalogue"]


def catalogue() -> tuple[Mistake, ...]:
    """Every catalogued mistake, ordered by id (read once per process)."""
    return scan(__name__)
