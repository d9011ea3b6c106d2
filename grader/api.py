"""``grade()``: one submission in, one ``Report`` out. The CLI and the platform adapters call it."""

from __future__ import annotations

import functools
import os
import platform
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hypothesis
import torch

import grader
from grader.declare.checks import Check, exercise_checks
from grader.declare.rubric import Rubric, RubricError, default_rubric, load_rubric
from grader.engine import parallel
from grader.engine.drawing import grading_settings
from grader.engine.recording import Recording
from grader.engine.runner import run_checks
from grader.engine.student import Student
from grader.engine.visuals import collect as collect_visuals
from grader.errors import UsageError
from grader.exercise import Exercise, load
from grader.feedback.explain import explain
from grader.report import notes
from grader.report.model import Report
from grader.sandbox.protections import Limits, protections
from grader.sandbox.zygote import Zygote, ZygoteLink, cut_output


def builtin_checks(exercise: Exercise | None = None) -> tuple[Check, ...]:
    """The exercise's own checks (default: ``grader.exercise.load()``'s)."""
    return exercise_checks(exercise or load())


@dataclass(frozen=True)
class RubricApplied:
    """The checks as a rubric grades them, and which rubric that was."""

    checks: tuple[Check, ...]
    source: str


def rubric_checks(
    rubric: Rubric | str | Path | None = None,
    checks: Sequence[Check] | None = None,
    exercise: Exercise | None = None,
) -> RubricApplied:
    """The one place where a rubric is applied, before any grading: to ``checks`` (default: the
    exercise's own; ``grader.declare.extensions.all_checks`` adds an instructor's, which a rubric can
    then set too). ``rubric`` None is the exercise's default rubric."""
    exercise = exercise or load()
    try:
        if rubric is None:
            rubric = default_rubric(exercise)
        elif not isinstance(rubric, Rubric):
            rubric = load_rubric(rubric)
        builtin = builtin_checks(exercise)
        known = [c.id for c in builtin]  # a rubric may name a built-in check not graded here
        return RubricApplied(rubric.apply(builtin if checks is None else checks, known), rubric.source)
    except RubricError as error:
        raise UsageError(str(error)) from None


def select(checks: Sequence[Check], only: Sequence[str] | None) -> tuple[Check, ...]:
    """The checks named in ``only`` (all when None), in registry order."""
    if not only:
        return tuple(checks)
    known = {c.id for c in checks}
    unknown = [name for name in only if name not in known]
    if unknown:
        raise UsageError(f"unknown check id(s): {', '.join(unknown)} (see --list)")
    return tuple(c for c in checks if c.id in set(only))


def grade(
    submission: str | Path,
    *,
    seed: int = 0,
    max_examples: int = 100,
    only: Sequence[str] | None = None,
    limits: Limits | None = None,
    zygote: Zygote | None = None,
    jobs: int = 2,
    checks: Sequence[Check] | None = None,
    visuals: bool = False,
    rubric: Rubric | str | Path | None = None,
    recording: Recording | None = None,
    exercise: Exercise | None = None,
) -> Report:
    """Grade one submission file. Never raises for anything the submission does.

    ``checks`` are the checks to run (default: the built-in ones; ``grader.declare.extensions.all_checks``
    adds an instructor's), as ``rubric`` sets them (a ``Rubric``, the path of a rubric file, or
    None for the packaged default; ``Rubric()`` grades by the declarations alone), of which
    ``only`` selects some. ``visuals``: also compute the plots' data with the student's functions
    (``Report.visuals``, for the HTML report). ``recording``: inputs drawn beforehand for a batch
    (``grader.engine.recording``); it changes no result, only skips drawing them again. ``exercise``:
    what is graded (default: ``grader.exercise.load()``, Dr. GRPO unless configured otherwise).

    Raises ``UsageError`` for a missing file, an unknown check id or a bad rubric. Any failure of
    the grader itself still returns a valid report, with ``internal_error`` set.
    """
    started = time.monotonic()
    path = Path(submission)
    if not path.is_file():
        raise UsageError(f"no such submission file: {submission}")
    if max_examples < 1:
        raise UsageError(f"--max-examples must be at least 1, got {max_examples}")
    limits = limits or Limits()
    exercise = exercise or load()
    chosen = rubric_checks(rubric, checks, exercise)
    checks = select(chosen.checks, only)
    meta = _metadata(seed, max_examples, limits)
    meta["rubric"] = chosen.source
    own_zygote = zygote is None
    deadline = started + limits.total_timeout_s  # the checks' and the plots'
    try:
        zygote = zygote or Zygote()
        run = functools.partial(
            _run_shard,
            path=os.path.abspath(path),
            limits=limits,
            seed=seed,
            max_examples=max_examples,
            deadline=deadline,
            recording=recording,
            exercise=exercise,
        )
        ran = parallel.run_sharded(checks, run, zygote, jobs, exercise.costs)
        meta["sandbox"] = protections(limits, isolated=ran.isolated, minimal_root=ran.minimal_root)
        output = cut_output(ran.output, limits.output_bytes)  # the shards' outputs together
        # Required: every check the rubric grades (instructor ones too); --only never solves it.
        done = notes.solved(ran.results, [c.id for c in chosen.checks])
        pictures = (
            collect_visuals(exercise, zygote, os.path.abspath(path), limits, deadline) if visuals else None
        )
        meta["total_time_s"] = round(time.monotonic() - started, 3)
        return Report(
            str(submission),
            tuple(ran.results),
            meta,
            output,
            ran.load_error,
            solved=done,
            notes=(exercise.notes or None) if done else None,
            visuals=pictures,
        )
    except Exception as error:
        meta["total_time_s"] = round(time.monotonic() - started, 3)
        message = f"{type(error).__name__}: {error}\n{traceback.format_exc()[-4000:]}"
        return Report(str(submission), (), meta, internal_error=message)
    finally:
        if own_zygote and zygote is not None:
            zygote.close()


def unusable(submission: str, message: str, *, seed: int, max_examples: int) -> Report:
    """A valid report for a grade that could not even start."""
    meta = _metadata(seed, max_examples, Limits())
    meta["total_time_s"] = 0.0
    return Report(str(submission), (), meta, internal_error=message)


def _run_shard(
    checks: Sequence[Check],
    link: ZygoteLink,
    *,
    path: str,
    limits: Limits,
    seed: int,
    max_examples: int,
    deadline: float,
    recording: Recording | None = None,
    exercise: Exercise,
) -> parallel.ShardResult:
    """Run some checks against one worker of the submission."""
    student = Student(link, path, limits, exercise)
    try:
        results = run_checks(
            checks,
            student,
            seed=seed,
            max_examples=max_examples,
            deadline=deadline,
            recording=recording,
            explain=explain,
        )
    finally:
        output = student.close()
    loaded = student.loaded
    load_error = None if loaded.ok else loaded.error
    return parallel.ShardResult(results, output, load_error, loaded.isolated, loaded.minimal_root)


def _metadata(seed: int, max_examples: int, limits: Limits) -> dict[str, Any]:
    profile = grading_settings(max_examples)
    return {
        "name": "drgrpo-grader",
        "version": grader.__version__,
        "seed": seed,
        "hypothesis": {
            "version": hypothesis.__version__,
            "max_examples": max_examples,
            # Hypothesis' own derandomize is off: each check is seeded with
            # sha256(f"{seed}:{check id}") instead (grader.engine.runner.check_seed), which is what
            # makes a grade reproducible.
            "derandomized": profile.derandomize,
            "seeding": "per check, from sha256(seed:check_id)",
            "database": profile.database,
            "deadline": profile.deadline,
            "phases": [phase.name for phase in profile.phases],
        },
        "sandbox": protections(limits),
        "python": platform.python_version(),
        "torch": torch.__version__,
    }
