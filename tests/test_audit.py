"""``python -m grader audit``: the catch matrix and what it flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CHECK_COUNT, EXAMPLE, EXAMPLE_ID, ROOT, run
from hypothesis import strategies as st

from grader import audit as audit_module
from grader.api import builtin_checks
from grader.audit import Audit, audit, render_json, render_text
from grader.declare.checks import check
from grader.declare.extensions import load
from grader.report.model import CheckResult, Report
from properties.exercise import EXERCISE
from reference.mistakes import Mistake, catalogue

# --- the judgement, on made-up reports -------------------------------------------------------


def _declare(check_id: str):
    def body(student, x):
        """A sentence."""

    return check(target="drgrpo_loss", points=2, inputs={"x": st.integers()}, id=check_id)(body)


SOUND, LOOSE, WRONG = _declare("sound_check"), _declare("loose_check"), _declare("wrong_check")


def _mistake(mistake_id: str, *caught_by: str) -> Mistake:
    return Mistake(mistake_id, mistake_id.replace("_", " "), "", "drgrpo_loss", caught_by, Path(mistake_id))


def _grader(statuses: dict[str, dict[str, str]]):
    """A grade function whose report on each subject has the given statuses (named by the
    subject's file stem: solution, drgrpo for the template, or the mistake's id)."""

    def grade(path: Path) -> Report:
        results = tuple(
            CheckResult(
                id=check_id,
                title="",
                description="",
                target="drgrpo_loss",
                status=status,
                score=0.0,
                max_score=2.0,
                visibility="visible",
                message=f"{check_id} {status} on {path.stem}",
                error_source="grader" if status == "error" and path.stem == "broke" else None,
            )
            for check_id, status in statuses[path.stem].items()
        )
        return Report(str(path), results, {})

    return grade


def _kinds(result: Audit) -> list[tuple[str, str, str | None, str | None]]:
    return [(f.severity, f.kind, f.check, f.mistake) for f in result.findings]


def test_a_sound_rubric_has_no_findings():
    statuses = {
        "solution": {"sound_check": "passed"},
        "drgrpo": {"sound_check": "error"},
        "one": {"sound_check": "failed"},
        "two": {"sound_check": "timeout"},
    }
    result = audit(
        [SOUND], grade=_grader(statuses), mistakes=[_mistake("one", "sound_check"), _mistake("two")]
    )
    assert result.findings == ()
    assert result.ok(strict=True)
    assert result.caught_by("one") == ("sound_check",) and result.caught_by("two") == ("sound_check",)
    (row,) = result.checks
    assert (row.reference, row.template, row.catches, row.only) == (
        "passed",
        "error",
        ("one", "two"),
        ("one", "two"),
    )


def test_every_problem_is_flagged_with_its_severity():
    statuses = {
        "solution": {"sound_check": "passed", "loose_check": "passed", "wrong_check": "failed"},
        "drgrpo": {"sound_check": "error", "loose_check": "passed", "wrong_check": "error"},
        "caught": {"sound_check": "failed", "loose_check": "passed", "wrong_check": "failed"},
        "missed": {"sound_check": "passed", "loose_check": "passed", "wrong_check": "passed"},
        "broke": {"sound_check": "error", "loose_check": "passed", "wrong_check": "passed"},
    }
    mistakes = [_mistake("caught", "sound_check", "loose_check"), _mistake("missed"), _mistake("broke")]
    result = audit([SOUND, LOOSE, WRONG], grade=_grader(statuses), mistakes=mistakes)
    assert _kinds(result) == [
        ("error", "check_broke", "sound_check", "broke"),
        ("error", "reference_fails", "wrong_check", None),
        ("error", "uncaught", None, "missed"),
        ("error", "uncaught", None, "broke"),  # the grader's own error is not a catch
        ("warning", "template_passes", "loose_check", None),
        ("warning", "declared_not_caught", None, "caught"),
        ("warning", "catches_nothing", "loose_check", None),
    ]
    assert (
        result.findings[1].message
        == "wrong_check does not pass on the reference (failed): wrong_check failed on solution"
    )
    assert not result.ok()
    rows = {row.id: row for row in result.checks}
    assert rows["sound_check"].catches == ("caught",) and rows["sound_check"].only == ()
    assert rows["wrong_check"].catches == ("caught",)

    text = render_text(result)
    assert "audit: FAILED (4 errors, 3 warnings)" in text
    assert "  error    no check catches missed (missed)" in text
    assert "missed  drgrpo_loss: NONE" in text
    data = json.loads(render_json(result))
    assert data["ok"] is False
    assert data["matrix"]["caught"] == {
        "sound_check": "failed",
        "loose_check": "passed",
        "wrong_check": "failed",
    }
    assert data["mistakes"][0] == {
        "id": "caught",
        "name": "caught",
        "target": "drgrpo_loss",
        "caught_by": ["sound_check", "wrong_check"],
        "declared": ["sound_check", "loose_check"],
    }


def test_a_grade_that_failed_as_a_whole_is_one_error():
    sound = _grader({"solution": {"sound_check": "passed"}, "m": {"sound_check": "failed"}})

    def grade(path: Path) -> Report:
        return Report(str(path), (), {}, internal_error="boom") if path.stem == "drgrpo" else sound(path)

    result = audit([SOUND], grade=grade, mistakes=[_mistake("m")])
    assert _kinds(result) == [("error", "grade_failed", None, "template")]
    assert result.findings[0].message == "grading template failed: boom"
    assert result.checks[0].template == "missing"
    assert "sound_check       2  pass  none  x" in render_text(result)


def test_warnings_alone_pass_unless_strict():
    statuses = {
        "solution": {"loose_check": "passed"},
        "drgrpo": {"loose_check": "passed"},
        "m": {"loose_check": "failed"},
    }
    result = audit([LOOSE], grade=_grader(statuses), mistakes=[_mistake("m")])
    assert _kinds(result) == [("warning", "template_passes", "loose_check", None)]
    assert result.ok() and not result.ok(strict=True)


# --- the shipped rubric and the example property, on the session's grades -------------------


@pytest.mark.e2e
def test_the_shipped_rubric_passes_its_audit(graded):
    """Reuses the reports of test_grading (same files, default options): almost free."""
    mistakes = catalogue()
    result = audit(builtin_checks(), grade=graded, mistakes=mistakes)
    assert [f.message for f in result.findings] == []
    assert all(row.reference == "passed" and row.template == "error" for row in result.checks)
    for mistake in mistakes:  # each mistake is caught at least by the checks it declares
        assert set(mistake.caught_by) <= set(result.caught_by(mistake.id)), mistake.id
    text = render_text(result)
    assert "audit: OK (0 errors, 0 warnings)" in text
    assert all(c.id in text for c in builtin_checks()) and all(m.id in text for m in mistakes)
    data = json.loads(render_json(result))
    assert data["ok"] is True and len(data["matrix"]) == len(mistakes)
    assert all(len(row) == CHECK_COUNT for row in data["matrix"].values())


@pytest.mark.e2e
def test_audit_shows_what_the_example_property_catches(graded):
    """The example check joins the shipped ones: graded alone on each file, with fewer examples,
    and merged into the cached reports of the built-in checks."""
    extra = load([EXAMPLE])

    def grade(path: Path) -> Report:
        base, more = graded(path), graded(path, checks=extra, max_examples=30)
        return Report(base.submission, base.checks + more.checks, base.grader)

    result = audit(builtin_checks() + extra, grade=grade)
    row = next(row for row in result.checks if row.id == EXAMPLE_ID)
    assert (row.reference, row.template) == ("passed", "error")
    # It allows the rounding of the dtype the student computed in: float32_advantages passes it.
    assert row.catches == ("strided_groups",)
    assert row.only == ()  # strided groups are caught by built-in checks too
    assert result.ok(strict=True)


# --- the command ---------------------------------------------------------------------------


@pytest.mark.e2e
def test_cli_audit_json_with_properties_on_a_subset():
    done = run(
        "audit",
        "--properties",
        EXAMPLE,
        "--only",
        f"advantages_match_reference,loss_matches_reference,{EXAMPLE_ID}",
        "--mistakes",
        "strided_groups,sign_error",
        "--max-examples",
        10,
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] is True and data["findings"] == []
    assert data["matrix"] == {
        "sign_error": {
            "advantages_match_reference": "passed",
            "loss_matches_reference": "failed",
            EXAMPLE_ID: "passed",
        },
        "strided_groups": {
            "advantages_match_reference": "failed",
            "loss_matches_reference": "passed",
            EXAMPLE_ID: "failed",
        },
    }
    assert "audit: grading [4/4] strided_groups" in done.stderr


@pytest.mark.e2e
def test_cli_audit_fails_on_an_uncaught_mistake():
    done = run(
        "audit", "--only", "advantages_match_reference", "--mistakes", "sign_error", "--max-examples", 10
    )
    assert done.returncode == 1
    assert "  error    no check catches sign_error (loss sign flipped)" in done.stdout
    assert "  warning  advantages_match_reference catches no catalogued mistake" in done.stdout
    assert "audit: FAILED (1 error, 1 warning)" in done.stdout


@pytest.mark.e2e
def test_cli_audit_unknown_mistake_is_a_usage_error():
    done = run("audit", "--mistakes", "sign_error,no_such_mistake")
    assert done.returncode == 2
    assert "unknown mistake id(s): no_such_mistake (see reference.mistakes)" in done.stderr


def test_audit_grades_the_shipped_solution_and_template():
    assert audit_module._source(EXERCISE.solution) == ROOT / "reference" / "solution.py"
    assert EXERCISE.path(EXERCISE.template) == ROOT / "student_template" / "drgrpo.py"
