"""Which grader this is: the staff's, with the reference solution and the catalogue of
mistakes, or the student release (``python -m grader release``), which holds neither.

The checks are the same in both. Those that compare with the reference's numbers import
``reference.solution`` and call it; in the student release, importing this module puts a
stand-in there whose functions compute nothing and raise ``ReferenceWithheld``, so that such a
check is reported as graded on submission (``grader.runner``) instead of failing. Modules that
import the reference import this module first.
"""

from __future__ import annotations

import importlib.util
import sys
import types

from grader.errors import ReferenceWithheld

SOLUTION = "reference.solution"
CATALOGUE = "reference.mistakes"


def _present(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def _withheld(*args: object, **kwargs: object) -> None:
    raise ReferenceWithheld


def _stand_in() -> types.ModuleType:
    module = types.ModuleType(
        SOLUTION, "Stands in for the reference solution, which this release does not hold."
    )
    module.drgrpo_advantages = _withheld  # type: ignore[attr-defined]
    module.drgrpo_loss = _withheld  # type: ignore[attr-defined]
    return module


STUDENT_RELEASE = SOLUTION not in sys.modules and not _present(SOLUTION)
# Diagnosis names a mistake from the catalogue: staff only (each mistake is a line from the answer).
HAS_CATALOGUE = _present(CATALOGUE)

if STUDENT_RELEASE:
    import reference

    reference.solution = sys.modules[SOLUTION] = _stand_in()  # type: ignore[attr-defined]
