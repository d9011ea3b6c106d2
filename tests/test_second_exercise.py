"""A second exercise, GRPO's token objective (``tests/exercises/grpo_token/``), graded end to end
by the engine that grades Dr. GRPO, through ``--exercise``, ``GRADER_EXERCISE`` and
``grade(exercise=...)``: nothing in ``grader/`` names it, so these tests hold the seam of issue
#12 open.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from helpers import ROOT, run, validate

from grader.api import grade
from grader.declare.checks import exercise_checks
from grader.engine.student import request
from grader.feedback.snippet import snippet
from tests.exercises.grpo_token.exercise import EXERCISE
from tests.exercises.grpo_token.mistakes import Mistake, catalogue

SPEC = "tests.exercises.grpo_token.exercise:EXERCISE"
FOLDER = ROOT / "tests" / "exercises" / "grpo_token"
REFERENCE = FOLDER / "reference.py"
TEMPLATE = FOLDER / "template.py"
CORRECT = (REFERENCE, FOLDER / "submissions" / "correct.py")
MISTAKES = catalogue()
PADDING_MISTAKE = next(m for m in MISTAKES if m.id == "mask_multiplied")
CHECK_IDS = (
    "token_objective_matches_reference",
    "token_objective_on_policy",
    "token_objective_ignores_padding",
)


def graded(path: Path) -> dict:
    """The JSON report of ``python -m grader --exercise SPEC path``, checked against the schema,
    with the exit code its score implies."""
    process = run("--exercise", SPEC, path)
    report = json.loads(process.stdout)
    validate(report)
    assert process.returncode == (0 if report["score"] == report["max_score"] else 1), process.stderr
    return report


def not_passed(report: dict) -> dict[str, str]:
    return {c["id"]: c["message"] for c in report["checks"] if c["status"] != "passed"}


def test_the_exercise_declares_three_checks_on_its_one_function():
    checks = exercise_checks(EXERCISE)
    assert tuple(c.id for c in checks) == CHECK_IDS
    assert {c.target for c in checks} == set(EXERCISE.functions) == {"grpo_token_objective"}
    assert all(EXERCISE.path(p).is_file() for p in (EXERCISE.template, EXERCISE.rubric))


def test_every_check_has_a_wrong_submission_that_it_must_catch():
    assert {check for mistake in MISTAKES for check in mistake.caught_by} == set(CHECK_IDS)
    assert all(m.target in EXERCISE.functions and m.name and m.explanation and m.fix for m in MISTAKES)


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
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_each_mistake_loses_exactly_its_checks_and_is_named(mistake: Mistake):
    report = graded(mistake.path)
    failing = {c["id"]: c for c in report["checks"] if c["status"] != "passed"}
    assert set(failing) == set(mistake.caught_by), not_passed(report)
    for check in failing.values():
        assert check["status"] == "failed" and check["error_source"] is None and check["message"]
        assert check["diagnosis"]["id"] == mistake.id, check["id"]
    assert report["internal_error"] is None and not report["solved"]


@pytest.mark.e2e
def test_the_template_gets_zero_saying_not_implemented():
    report = graded(TEMPLATE)
    assert report["score"] == 0
    for check in report["checks"]:
        assert check["status"] == "error" and check["error_source"] == "submission", check["id"]
        assert "not implemented yet" in check["message"]


@pytest.mark.e2e
def test_grade_takes_the_exercise(zygote):
    right = grade(CORRECT[1], zygote=zygote, exercise=EXERCISE)
    assert [c.id for c in right.checks] == list(CHECK_IDS)
    assert right.score == right.max_score == 10 and right.notes == EXERCISE.notes
    wrong = grade(PADDING_MISTAKE.path, zygote=zygote, exercise=EXERCISE)
    assert [c.id for c in wrong.checks if c.status != "passed"] == list(PADDING_MISTAKE.caught_by)


@pytest.mark.e2e
def test_the_environment_variable_names_the_exercise_too(monkeypatch):
    monkeypatch.setenv("GRADER_EXERCISE", SPEC)  # seen by the subprocess only: load() caches
    process = run("--list")
    assert process.returncode == 0, process.stderr
    assert [line.split()[0] for line in process.stdout.splitlines()[1:4]] == list(CHECK_IDS)
    assert "3 checks, 10 points" in process.stdout


@pytest.mark.e2e
def test_the_audit_finds_every_check_right_and_useful():
    process = run("audit", "--exercise", SPEC, "--format", "json")
    audit = json.loads(process.stdout)
    assert process.returncode == 0 and audit["ok"] and audit["findings"] == [], audit["findings"]
    assert {row["id"]: (row["reference"], row["template"]) for row in audit["checks"]} == dict.fromkeys(
        CHECK_IDS, ("passed", "error")
    )
    assert {m["id"]: set(m["caught_by"]) for m in audit["mistakes"]} == {
        m.id: set(m.caught_by) for m in MISTAKES
    }


@pytest.mark.e2e
def test_the_replay_command_a_student_reads_replays_the_failing_calls():
    """The text report's command names the exercise, and replays the failing example's calls."""
    text = run("--exercise", SPEC, PADDING_MISTAKE.path, "--format", "text").stdout
    (command,) = [line.strip() for line in text.splitlines() if "--reproduce" in line]
    assert command.startswith("python -m grader ") and SPEC in command, command
    done = run(*shlex.split(command.removeprefix("python -m grader ")))
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("FAILED token_objective_ignores_padding: with ")
    assert "SUBMISSION = " in done.stdout
    assert "call 1 of 2: grpo_token_objective" in done.stdout.split("as the grader saw them:")[1]


@pytest.mark.e2e
def test_a_replay_snippet_differentiates_a_tensor_output_as_the_grader_does():
    """The worker differentiates the sum of a non-scalar output: so does the snippet."""
    logp = torch.tensor([[-0.5, -1.0]], dtype=torch.float64, requires_grad=True)
    data = request(
        "grpo_token_objective",
        logp,
        logp.detach(),
        torch.ones(1),
        torch.ones(1, 2, dtype=torch.bool),
        backward=(),
    )
    code = snippet("some_check", str(CORRECT[1]), [(data, {})], "the message", EXERCISE.functions)
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert ran.returncode == 0, ran.stderr
    assert "backward pass raised" not in ran.stdout and "logp.grad:" in ran.stdout, ran.stdout
