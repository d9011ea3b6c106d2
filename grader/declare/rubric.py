"""Rubrics: course staff's overrides of the checks' declared points, visibility and on/off.

A rubric is a small TOML file, one table per check it changes::

    [checks.loss_matches_reference]
    points = 12              # a finite number >= 0
    visibility = "hidden"    # visible | hidden | after_due_date | after_published
    enabled = true           # false: the check is not run and not counted

Checks a rubric does not name keep their declaration. The exercise ships its default rubric
(``Exercise.rubric``, the one a plain grade uses); ``Rubric()`` is no override at all. Every
mistake in a file is an error naming the key and the value, raised before anything is graded.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.declare.checks import VISIBILITIES, Check
from grader.errors import GraderError
from grader.exercise import Exercise, load

_KEYS = ("points", "visibility", "enabled")


class RubricError(GraderError, ValueError):
    """A rubric file that cannot be used: unreadable, not TOML, or naming a bad key or value."""


@dataclass(frozen=True)
class Override:
    """What a rubric changes for one check; None keeps the declaration."""

    points: float | None = None
    visibility: str | None = None
    enabled: bool = True


@dataclass(frozen=True)
class Rubric:
    """Overrides by check id, and where they come from (for messages and the report)."""

    overrides: Mapping[str, Override] = field(default_factory=dict)
    source: str = "declarations"

    def apply(self, checks: Sequence[Check], known: Iterable[str] = ()) -> tuple[Check, ...]:
        """The checks as this rubric grades them: points and visibility replaced, disabled
        checks left out. A check id the rubric names but neither ``checks`` nor ``known`` has
        is an error, so a typo never silently leaves a check at its declared points."""
        unknown = sorted(set(self.overrides) - {c.id for c in checks} - set(known))
        if unknown:
            raise RubricError(
                f"{self.source}: unknown check id(s) {', '.join(map(repr, unknown))} "
                "(python -m grader --list shows the ids)"
            )
        applied = []
        for c in checks:
            override = self.overrides.get(c.id)
            if override is None:
                applied.append(c)
            elif override.enabled:
                applied.append(
                    dataclasses.replace(
                        c,
                        points=c.points if override.points is None else override.points,
                        visibility=override.visibility or c.visibility,
                    )
                )
        return tuple(applied)


def parse(text: str, source: str) -> Rubric:
    """A rubric from TOML text; ``source`` names it in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RubricError(f"{source}: not valid TOML: {error}") from None
    extra = sorted(set(data) - {"checks"})
    if extra:
        raise RubricError(f"{source}: unknown top-level key(s) {extra}; expected only [checks.<id>] tables")
    tables = data.get("checks", {})
    if not isinstance(tables, dict):
        raise RubricError(f"{source}: checks={tables!r} is invalid; expected tables [checks.<id>]")
    overrides = {}
    for check_id, table in tables.items():
        if not isinstance(table, dict):
            raise RubricError(f"{source}: checks.{check_id}={table!r} is invalid; expected a table")
        overrides[check_id] = _override(table, f"{source}: checks.{check_id}")
    return Rubric(overrides, source)


def _override(table: dict[str, Any], where: str) -> Override:
    extra = sorted(set(table) - set(_KEYS))
    if extra:
        raise RubricError(f"{where}: unknown key(s) {extra}; expected some of {list(_KEYS)}")
    points = table.get("points")
    if points is not None and not (
        isinstance(points, (int, float))
        and not isinstance(points, bool)
        and math.isfinite(points)
        and points >= 0
    ):
        raise RubricError(f"{where}.points={points!r} is invalid; expected a finite number >= 0")
    visibility = table.get("visibility")
    if visibility is not None and visibility not in VISIBILITIES:
        raise RubricError(f"{where}.visibility={visibility!r} is invalid; expected one of {VISIBILITIES}")
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise RubricError(f"{where}.enabled={enabled!r} is invalid; expected true or false")
    return Override(None if points is None else float(points), visibility, enabled)


def load_rubric(path: str | Path) -> Rubric:
    """The rubric in the TOML file at ``path``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RubricError(f"cannot read the rubric {path}: {error}") from None
    return parse(text, str(path))


def default_rubric(exercise: Exercise | None = None) -> Rubric:
    """The exercise's default rubric (default: the configured exercise's), which a plain grade
    uses."""
    exercise = exercise or load()
    path = exercise.path(exercise.rubric)
    return parse(path.read_text(encoding="utf-8"), exercise.rubric)
