"""Shared fixtures: one zygote for the whole session, graded reports cached per file, and the
rule that keeps ``-m "not e2e"`` fast.

Paths and helpers that tests import are in ``helpers.py``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from grader.api import grade
from grader.report.model import Report
from grader.sandbox.zygote import Zygote

# Fixtures that start the sandbox's processes: only end-to-end tests may use them.
PROCESS_FIXTURES = ("zygote", "graded")


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


@pytest.fixture(autouse=True)
def unit_tests_start_no_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test not marked ``e2e`` fails if it uses the zygote or starts a process itself (a
    grade's workers, a subprocess).

    That is what makes ``-m "not e2e"`` the fast selection, and keeps it so as tests are added:
    the marker is checked, not trusted. (A wider-scoped fixture of its own that starts one is set
    up before this check: give such fixtures to e2e tests only.)
    """
    if request.node.get_closest_marker("e2e"):
        return
    name = request.node.nodeid
    used = [f for f in PROCESS_FIXTURES if f in request.fixturenames]
    if used:
        pytest.fail(f"{name} uses {', '.join(used)}, which start processes: mark it e2e", pytrace=False)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"{name} starts a process: mark it e2e (see pyproject.toml)")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    monkeypatch.setattr(os, "fork", refuse)
