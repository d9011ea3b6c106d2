"""A catalogue of classic mistakes: a package of complete, wrong submissions, one per module.

Each module is a file a student could hand in, right in every way but one, and says what that
one way is: its docstring explains the wrong idea in the exercise's terms, ``NAME`` names it,
``FIX`` says what to change, ``TARGET`` is the graded function it gets wrong, and ``CAUGHT_BY``
lists the checks that must catch it. ``IDEA`` (optional, the id by default) groups mistakes
that are one wrong idea written two ways. An exercise names its catalogue package
(``Exercise.catalogue``), whose ``catalogue()`` is ``scan(__name__)``; the audit holds every
mistake to ``CAUGHT_BY``, and diagnosis names the one whose answers a failing submission gives
(``grader.feedback.diagnosis``).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType


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
    package: str = ""  # the catalogue's package, which holds the module ``id``

    def module(self) -> ModuleType:
        """The mistake's functions, to run in the trusted process (never in a worker)."""
        return importlib.import_module(f"{self.package}.{self.id}")


@functools.cache
def scan(package: str) -> tuple[Mistake, ...]:
    """Every mistake of the catalogue ``package``, ordered by id (read once per process)."""
    folder = Path(importlib.import_module(package).__file__ or "").resolve().parent
    found = []
    for path in sorted(folder.glob("[a-z]*.py")):
        module = importlib.import_module(f"{package}.{path.stem}")
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
                package=package,
            )
        )
    return tuple(found)
