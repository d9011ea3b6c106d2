"""The catalogue of classic mistakes: one complete, wrong submission per module.

Each module is a file a student could hand in, right in every way but one, and says what that
one way is: its docstring explains the wrong idea in the exercise's terms, ``NAME`` names it,
``FIX`` says what to change, ``TARGET`` is the graded function it gets wrong, and ``CAUGHT_BY``
lists the checks that must catch it. ``IDEA`` (optional, the id by default) groups mistakes
that are one wrong idea written two ways. The tests grade every module and hold it to
``CAUGHT_BY``; when a check fails, the grader names the mistake whose answers the submission
gives (``grader.feedback.diagnosis``).

Like the reference solution, these files are near-answers: the grader keeps them out of the
workers' reach (``Exercise.secret_modules``: ``grader.engine.student.confinement``).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

FOLDER = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Mistake:
    """One catalogued mistake, and the submission file that makes it."""

    id: str
    name: str
    explanation: str
    target: str
    caught_by: tuple[str, ...]
    path: Path
    fix: str = ""
    idea: str = ""

    def module(self) -> ModuleType:
        """The mistake's functions, to run in the trusted process (never in a worker)."""
        return importlib.import_module(f"{__name__}.{self.id}")


@functools.cache
def catalogue() -> tuple[Mistake, ...]:
    """Every catalogued mistake, ordered by id (read once per process)."""
    found = []
    for path in sorted(FOLDER.glob("[a-z]*.py")):
        module = importlib.import_module(f"{__name__}.{path.stem}")
        found.append(
            Mistake(
                id=path.stem,
                name=module.NAME,
                explanation=" ".join((module.__doc__ or "").split()),
                target=module.TARGET,
                caught_by=tuple(module.CAUGHT_BY),
                path=path,
                fix=" ".join(getattr(module, "FIX", "").split()),
                idea=getattr(module, "IDEA", path.stem),
            )
        )
    return tuple(found)
