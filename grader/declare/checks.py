"""Declaring checks: one decorator, one frozen record per check, collection from modules.

A check is a function of the ``Student`` and of values drawn by Hypothesis::

    REWARDS = Inputs("rewards", batch=reward_batches(), shift=st.sampled_from((1.0, -3.0)))

    @check(target="advantages", points=4, inputs=REWARDS)
    def advantages_shift_invariant(student, batch, shift):
        \"\"\"Adding the same number to every reward leaves the advantages unchanged.\"\"\"
        ...

The id is the function's name; the docstring's first paragraph is the sentence a student
reads. The target is the student's function the check is about, one of the exercise's
(``Exercise.functions``, checked when the exercise collects it). The function takes the drawn
values it names (here ``batch`` and ``shift``). Checks that
name the same ``Inputs`` share one Hypothesis run, each seeing every example (see
``grader.engine.runner``). Arguments are validated here, when the check is defined.
"""

from __future__ import annotations

import importlib
import inspect
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis.strategies import SearchStrategy

from grader.errors import GraderError
from grader.exercise import Exercise, ExerciseError

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
_ID = re.compile(r"[a-z][a-z0-9_]{2,63}")
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_TITLE_CHARS = 300


class DeclarationError(GraderError, ValueError):
    """A check or its inputs are declared wrongly; the message names the argument and value."""


class Inputs:
    """Named Hypothesis strategies that checks draw their values from.

    The name seeds the draws (with the grade's seed), so a check's inputs do not depend on
    which other checks run. Compared by identity: define each one once, at module level.
    """

    def __init__(self, name: str, **strategies: SearchStrategy) -> None:
        _require(bool(_ID.fullmatch(name)), "Inputs name", name, "snake_case, 3 to 64 characters")
        for key, strategy in strategies.items():
            _require(isinstance(strategy, SearchStrategy), key, strategy, "a Hypothesis strategy")
        _require(bool(strategies), "strategies", strategies, "at least one strategy")
        self.name = name
        self.strategies: Mapping[str, SearchStrategy] = dict(strategies)

    def __repr__(self) -> str:
        return f"Inputs({self.name!r}, {', '.join(self.strategies)})"


@dataclass(frozen=True)
class Check:
    """A registered property: its metadata, its inputs and its body."""

    id: str
    title: str
    description: str
    target: str
    points: float
    visibility: str
    timeout_s: float
    max_examples: int | None
    inputs: Inputs
    parameters: tuple[str, ...]
    body: Callable[..., None]
    source: str = ""  # where it is defined, "path:line", for messages to the check's author

    def run_body(self, student: Any, drawn: Mapping[str, Any]) -> None:
        self.body(student, **self.drawn_for_me(drawn))

    def drawn_for_me(self, drawn: Mapping[str, Any]) -> dict[str, Any]:
        return {name: drawn[name] for name in self.parameters}


def _require(condition: bool, argument: str, value: Any, expected: str) -> None:
    if not condition:
        raise DeclarationError(f"check(): {argument}={value!r} is invalid; expected {expected}")


def _source(body: Callable[..., Any]) -> str:
    """``path:line`` of the function, the path relative to the current directory when inside it."""
    code = getattr(body, "__code__", None)
    if code is None:
        return repr(body)
    path = os.path.abspath(code.co_filename)
    here = os.getcwd()
    if os.path.commonpath([path, here]) == here:
        path = os.path.relpath(path, here)
    return f"{path}:{code.co_firstlineno}"


def check(
    *,
    target: str,
    points: float,
    inputs: Inputs | Mapping[str, SearchStrategy],
    visibility: str = "visible",
    timeout_s: float = 60.0,
    max_examples: int | None = None,
    id: str | None = None,
) -> Callable[[Callable[..., None]], Check]:
    """Declare a check on ``target``, worth ``points``, drawing from ``inputs``.

    ``inputs`` is a shared :class:`Inputs` or a mapping of strategies of the check's own.
    """
    _require(isinstance(target, str) and target.isidentifier(), "target", target, "a function's name")
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
        isinstance(timeout_s, (int, float)) and not isinstance(timeout_s, bool) and 0 < timeout_s <= 3600,
        "timeout_s",
        timeout_s,
        "a number of seconds in (0, 3600]",
    )
    _require(
        max_examples is None or (type(max_examples) is int and max_examples >= 1),
        "max_examples",
        max_examples,
        "None or an integer >= 1",
    )
    _require(id is None or bool(_ID.fullmatch(id)), "id", id, "snake_case, 3 to 64 characters")
    _require(isinstance(inputs, (Inputs, Mapping)), "inputs", inputs, "an Inputs or a mapping of strategies")

    def decorate(body: Callable[..., None]) -> Check:
        _require(inspect.isfunction(body), "the decorated object", body, "a function (student, **drawn)")
        name = id or body.__name__
        _require(bool(_ID.fullmatch(name)), "id", name, "snake_case, 3 to 64 characters")
        shared = inputs if isinstance(inputs, Inputs) else Inputs(name, **inputs)
        signature = inspect.signature(body).parameters.values()
        if not signature or any(p.kind not in _NAMED for p in signature):
            raise DeclarationError(
                f"check {name!r}: the function must take the student first, then drawn values by "
                f"name (no *args or **kwargs); it takes ({', '.join(map(str, signature))})"
            )
        parameters = tuple(p.name for p in signature)[1:]
        unknown = [p for p in parameters if p not in shared.strategies]
        if unknown:
            raise DeclarationError(f"check {name!r}: {unknown} are not among the inputs {shared!r}")
        doc = inspect.getdoc(body)
        if not doc:
            raise DeclarationError(f"check {name!r}: the docstring (the sentence a student reads) is missing")
        title, _, description = doc.partition("\n\n")
        if len(" ".join(title.split())) > _TITLE_CHARS:
            raise DeclarationError(
                f"check {name!r}: the docstring's first paragraph (the sentence a student reads) has "
                f"{len(title)} characters; keep it under {_TITLE_CHARS} and put details after a blank line"
            )
        return Check(
            id=name,
            title=" ".join(title.split()),
            description=description.strip(),
            target=target,
            points=float(points),
            visibility=visibility,
            timeout_s=float(timeout_s),
            max_examples=max_examples,
            inputs=shared,
            parameters=parameters,
            body=body,
            source=_source(body),
        )

    return decorate


def by_inputs(checks: Iterable[Check]) -> list[list[Check]]:
    """The checks grouped by the ``Inputs`` they draw from, in order of first appearance: each
    group runs as one shared Hypothesis run, in one shard."""
    groups: dict[int, list[Check]] = {}
    for c in checks:
        groups.setdefault(id(c.inputs), []).append(c)
    return list(groups.values())


def defined_in(module: Any) -> list[Check]:
    """The checks a module defines, in definition order (not those it imports)."""
    return [
        value
        for value in vars(module).values()
        if isinstance(value, Check) and value.body.__module__ == module.__name__
    ]


def unique(checks: Iterable[Check]) -> tuple[Check, ...]:
    """The checks, in order; two checks with one id are an error that names where both are."""
    found: dict[str, Check] = {}
    for c in checks:
        first = found.setdefault(c.id, c)
        if first is not c:
            raise DeclarationError(
                f"duplicate check id {c.id!r}: defined at {first.source} and at {c.source}"
            )
    return tuple(found.values())


def collect(module_names: Iterable[str]) -> tuple[Check, ...]:
    """Every ``Check`` defined in the modules, in definition order; duplicate ids are an error."""
    return unique(c for name in module_names for c in defined_in(importlib.import_module(name)))


def exercise_checks(exercise: Exercise) -> tuple[Check, ...]:
    """The exercise's own checks, in module and definition order, each on one of its functions.
    The solution's stand-in goes in first in the student release: the modules import it."""
    exercise.withhold_solution()
    found = collect(exercise.check_modules)
    unknown = sorted({c.target for c in found} - set(exercise.functions))
    if unknown:
        raise ExerciseError(f"exercise {exercise.name!r}: checks target unknown functions {unknown}")
    return found
