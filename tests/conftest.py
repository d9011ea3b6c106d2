"""Shared fixtures: one zygote for the whole session, and graded reports cached per file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from grader.api import builtin_checks, grade
from grader.report import Report
from grader.sandbox import Zygote

ROOT = Path(__file__).resolve().parent.parent
SUBMISSIONS = Path(__file__).resolve().parent / "submissions"
SOLUTION = ROOT / "reference" / "solution.py"
TEMPLATE = ROOT / "student_template" / "drgrpo.py"
MISTAKES = ROOT / "reference" / "mistakes"
# How many checks the exercise's rubric has.
CHECK_COUNT = len(builtin_checks())


def fixtures(kind: str) -> list[Path]:
    return sorted((SUBMISSIONS / kind).glob("*.py"))


@pytest.fixture(scope="session")
def zygote() -> Iterator[Zygote]:
    process = Zygote()
    yield process
    process.close()


@pytest.fixture(scope="session")
def graded(zygote: Zygote) -> Callable[..., Report]:
    """``graded(path, **options)``: the report, graded once per session for each file and options."""
    cache: dict[tuple, Report] = {}

    def grade_once(path: Path | str, **options: object) -> Report:
        key = (str(path), tuple(sorted(options.items())))
        if key not in cache:
            cache[key] = grade(path, zygote=zygote, **options)
        return cache[key]

    return grade_once
