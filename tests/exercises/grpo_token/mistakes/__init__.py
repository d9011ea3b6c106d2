"""The catalogue of the GRPO token objective exercise: one wrong submission per module.

Each module says its mistake as Dr. GRPO's catalogue does (docstring, ``NAME``, ``TARGET``,
``CAUGHT_BY``, ``FIX``): the tests and the audit hold it to ``CAUGHT_BY``, and the grader names
it when a failing check's calls get its answers (``Exercise.catalogue``).
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
    fix: str

    @property
    def idea(self) -> str:
        return self.id

    def module(self) -> ModuleType:
        """The mistake's functions, to run in the trusted process (never in a worker)."""
        return importlib.import_module(f"{__name__}.{self.id}")


@functools.cache
def catalogue() -> tuple[Mistake, ...]:
    """Every mistake of the folder, ordered by id."""
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
                fix=" ".join(module.FIX.split()),
            )
        )
    return tuple(found)
