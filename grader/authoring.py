"""Writing a check: the engine's half of what a properties file needs.

An exercise's checks (Dr. GRPO's are ``properties/``) and an instructor's own (loaded with
``python -m grader SUB.py --properties FILE_OR_FOLDER``) are written with this API and with the
exercise's own helpers (``Exercise.authoring``: strategies, calls, the reference), which this
module also gives by name, so that one import does::

    from grader.authoring import ADVANTAGES, RewardBatch, advantages_of, check, expect, reward_batches

Here, by use (``docs/instructors.md`` walks through a whole example):

- **Declaring**: ``check`` (the decorator: ``target``, ``points``, ``inputs``, ``visibility``,
  ``timeout_s``, ``max_examples``, ``id``; validated when the check is defined, its target when
  the exercise collects it), ``Inputs`` (named strategies that checks share, one Hypothesis run
  for all of them) and ``VISIBILITIES`` (the values ``visibility`` accepts).
- **Calling the student** (always in the sandboxed worker; what comes back is plain data, an
  ``Outcome``): ``student.call(name, *args, backward=(...), return_args=True, **kwargs)``.
- **Comparing**: ``expect`` (``close`` with the dtype's tolerance and the first mismatching
  index, ``exact``, ``tensor``, ``numbers``, ``fail``). A failure is a ``CheckFailed``; an
  exception in the student's code reaches the check as ``SubmissionRaised`` (catch it only when
  raising is the point, as for ``ValueError``). ``values.summary(value)`` says in words what a
  returned value is, and ``display.value`` / ``display.array`` give the JSON form a failure's
  ``expected`` and ``actual`` take.
"""

from __future__ import annotations

import importlib
from typing import Any

from grader.compare import display, expect, values
from grader.declare.checks import VISIBILITIES, Check, Inputs, check
from grader.engine.student import Outcome, Student
from grader.errors import CheckFailed, SubmissionRaised
from grader.exercise import load

__all__ = [
    "VISIBILITIES",
    "Check",
    "CheckFailed",
    "Inputs",
    "Outcome",
    "Student",
    "SubmissionRaised",
    "check",
    "display",
    "expect",
    "values",
]


def __getattr__(name: str) -> Any:
    """The exercise's own helpers (``Exercise.authoring``), by name."""
    kit = load().authoring
    if kit is not None and not name.startswith("__"):
        module = importlib.import_module(kit)
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module 'grader.authoring' has no attribute {name!r}")
