"""A second exercise, GRPO's token objective (``tests/exercises/grpo_token/``), graded end to end
by the engine that grades Dr. GRPO, through ``--exercise`` and ``grade(exercise=...)``: nothing
in ``grader/`` names it, so these tests hold the seam of issue #12 open.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from helpers import ROOT, run, validate

from tests.exercises.grpo_token.exercise import EXERCISE

SPEC = "tests.exercises.grpo_token.exercise:EXERCISE"
FOLDER = ROOT / "tests" / "exercises" / "grpo_token"
REFERENCE = FOLDER / "reference.py"
TEMPLATE = FOLDER / "template.py"
CORRECT = (REFERENCE, FOLDER / "submissions" / "correct.py")
MISTAKES = tuple(sorted((FOLDER / "mistakes").glob("[a-z]*.py")))
CHECK_IDS = (
    "token_objective_matches_reference",
    "token_objective_on_policy",
    "token_objective_ignores_padding",
)


def caught_by(path: Path) -> tuple[str, ...]:
    """The checks a wrong submission declares it must lose (its ``CAUGHT_BY``)."""
    return importlib.import_module(f"tests.exercises.grpo_token.mistakes.{path.stem}").CAUGHT_BY


def graded(path: Path) -> dict:
    """The JSON report of ``python -m grader --exercise SPEC path``, checked against the schema."""
    process = run("--exercise", SPEC, path)
    report = json.loads(process.stdout)
    validate(report)
    assert process.returncode == (0 if report["score"] == report["max_score"] else 1), process.stderr
    return report


def not_passed(report: dict) -> dict[str, str]:
    return {c["id"]: c["message"] for c in report["checks"] if c["status"] != "passed"}


def test_the_exercise_declares_three_checks_on_its_one_function():
    checks = EXERCISE.checks()
    assert tuple(c.id for c in checks) == CHECK_IDS
    assert {c.target for c in checks} == set(EXERCISE.functions) == {"grpo_token_objective"}
    assert all(EXERCISE.path(p).is_file() for p in (EXERCISE.template, EXERCISE.rubric))


def test_every_check_has_a_wrong_submission_that_it_must_catch():
    declared = [check for path in MISTAKES for check in caught_by(path)]
    assert set(declared) == set(CHECK_IDS)


@pytest.mark.e2e
@pytest.mark.parametrize("path", CORRECT, ids=[p.stem for p in CORRECT])
def test_correct_files_get_full_marks_through_the_cli(path):
    report = graded(path)
    assert not_passed(report) == {}
    assert [c["id"] for c in report["checks"]] == list(CHECK_IDS)
    assert report["score"] == report["max_score"] == 10
    assert report["solved"] and report["notes"] == EXERCISE.notes
    assert all(c["examples"] >= 100 for c in report["checks"])


@pytest.mark.e2e
@pytest.mark.parametrize("path", MISTAKES, ids=[p.stem for p in MISTAKES])
def test_each_mistake_loses_exactly_its_checks_through_the_cli(path):
    report = graded(path)
    failing = not_passed(report)
    assert set(failing) == set(caught_by(path)), failing
    assert all(
        c["status"] == "failed" and c["error_source"] is None for c in report["checks"] if c["id"] in failing
    )
    assert report["internal_error"] is None and not report["solved"]


@pytest.mark.e2e
def test_the_template_gets_zero_saying_not_implemented():
    report = graded(TEMPLATE)
    assert report["score"] == 0
    for check in report["checks"]:
        assert check["status"] == "error" and check["error_source"] == "submission", check["id"]
        assert "not implemented yet" in check["message"]
