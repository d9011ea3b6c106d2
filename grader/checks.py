"""Declaring checks: one decorator, one frozen record per check, collection from modules.

A check is a Hypothesis test that takes the ``Student`` as its first argument::

    @check(target="drgrpo_advantages", points=4)
    @given(batch=reward_batches())
    def advantages_shift_invariant(student, batch):
        \"\"\"Adding the same number to every reward leaves the advantages unchanged.\"\"\"
        ...

The id is the function's name; the docstring's first line is the sentence a student reads.
Arguments are validated here, when the check is defined, not when it first runs.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from grader.errors import CheckFailed, SubmissionRaised

TARGETS = ("drgrpo_advantages", "drgrpo_loss")
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
_ID = re.compile(r"[a-z][a-z0-9_]{2,63}")


@dataclass(frozen=True)
class Check:
    """A registered property: its metadata and its Hypothesis test."""

    id: str
    title: str
    description: str
    target: str
    points: float
    visibility: str
    timeout_s: float
    max_examples: int | None
    test: Callable[..., None]


def _require(condition: bool, argument: str, value: Any, expected: str) -> None:
    if not condition:
        raise ValueError(f"check(): {argument}={value!r} is invalid; expected {expected}")


def check(
    *,
    target: str,
    points: float,
    visibility: str = "visible",
    timeout_s: float = 60.0,
    max_examples: int | None = None,
    id: str | None = None,
) -> Callable[[Callable[..., None]], Check]:
    """Declare a check. Put it above ``@given``; the result is a :class:`Check`."""
    _require(target in TARGETS, "target", target, f"one of {TARGETS}")
    _require(
        isinstance(points, (int, float))
        and not isinstance(points, bool)
        and math.isfinite(points)
        and points >= 0,
        "points",
        points,
        "a finite number >= 0",
    )
    _require(visibility in VISIBILITIES, "visibility", visibility, f"one of {VISIBILITIES}")
    _require(
        isinstance(timeout_s, (int, float)) and 0 < timeout_s <= 3600,
        "timeout_s",
        timeout_s,
        "a number of seconds in (0, 3600]",
    )
    _require(
        max_examples is None or (isinstance(max_examples, int) and max_examples >= 1),
        "max_examples",
        max_examples,
        "None or an integer >= 1",
    )
    _require(id is None or bool(_ID.fullmatch(id)), "id", id, "snake_case, 3 to 64 characters")

    def decorate(test: Callable[..., None]) -> Check:
        name = id or getattr(test, "__name__", "")
        _require(bool(_ID.fullmatch(name)), "id", name, "snake_case, 3 to 64 characters")
        hypothesis = getattr(test, "hypothesis", None)
        if hypothesis is None:
            raise TypeError(f"check {name!r}: put @check above @given, on a Hypothesis test")
        doc = inspect.getdoc(test)
        if not doc:
            raise ValueError(f"check {name!r}: the docstring (the sentence a student reads) is missing")
        title, _, description = doc.partition("\n\n")
        hypothesis.inner_test = _recording(hypothesis.inner_test)
        return Check(
            id=name,
            title=" ".join(title.split()),
            description=description.strip(),
            target=target,
            points=float(points),
            visibility=visibility,
            timeout_s=float(timeout_s),
            max_examples=max_examples,
            test=test,
        )

    return decorate


def _recording(inner: Callable[..., None]) -> Callable[..., None]:
    """Count examples, and attach the drawn inputs to a failure (the last one is the minimal)."""

    @functools.wraps(inner)
    def run_example(student: Any, *args: Any, **drawn: Any) -> None:
        student.examples += 1
        try:
            inner(student, *args, **drawn)
        except (CheckFailed, SubmissionRaised) as signal:
            signal.inputs = drawn
            raise

    return run_example


def collect(module_names: Iterable[str]) -> tuple[Check, ...]:
    """Every ``Check`` defined in the modules, in definition order; duplicate ids are an error."""
    found: dict[str, Check] = {}
    for module_name in module_names:
        module = importlib.import_module(module_name)
        for value in vars(module).values():
            if isinstance(value, Check):
                if value.id in found and found[value.id] is not value:
                    raise ValueError(f"duplicate check id {value.id!r} (in {module_name})")
                found[value.id] = value
    return tuple(found.values())
