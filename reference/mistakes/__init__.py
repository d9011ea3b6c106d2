"""Dr. GRPO's catalogue of classic mistakes: one complete, wrong submission per module, each
saying its mistake (docstring, ``NAME``, ``TARGET``, ``CAUGHT_BY``, ``FIX``, ``IDEA``) as
``grader.declare.mistakes`` describes.

Like the reference solution, these files are near-answers: the grader keeps them out of the
workers' reach (``Exercise.secret_modules``: ``grader.engine.student.confinement``).
"""

from __future__ import annotations

from grader.declare.mistakes import Mistake, scan

__all__ = ["Mistake", "catalogue"]


def catalogue() -> tuple[Mistake, ...]:
    """Every catalogued mistake, ordered by id (read once per process)."""
    return scan(__name__)
