"""A broken submission still gets a full, valid report that says what broke, in plain words."""

from __future__ import annotations

import pytest
from helpers import CHECK_COUNT, SUBMISSIONS

pytestmark = pytest.mark.e2e

BROKEN = SUBMISSIONS / "broken"


def statuses(report, target=None):
    return {c.status for c in report.checks if target in (None, c.target)}


def test_syntax_error_is_reported_on_every_check(graded):
    report = graded(BROKEN / "syntax_error.py")
    assert report.load_error["type"] == "SyntaxError"
    assert report.score == 0 and len(report.checks) == CHECK_COUNT
    for result in report.checks:
        assert result.status == "error" and result.error_source == "submission"
        assert "could not be loaded" in result.message and "SyntaxError" in result.message
        assert result.examples == 0  # no futile retries


def test_import_error_names_the_missing_module(graded):
    report = graded(BROKEN / "import_error.py")
    assert report.load_error["type"] == "ModuleNotFoundError"
    assert "torch_grpo_helpers" in report.checks[0].message


def test_exception_at_import_shows_the_students_traceback(graded):
    report = graded(BROKEN / "raises_at_import.py")
    assert statuses(report) == {"error"}
    assert "work in progress" in report.checks[0].message
    assert "raises_at_import.py" in report.checks[0].traceback


def test_missing_function_fails_only_its_own_checks(graded):
    report = graded(BROKEN / "missing_loss.py")
    assert statuses(report, "drgrpo_advantages") == {"passed"}
    for result in report.checks:
        if result.target == "drgrpo_loss":
            assert result.status == "error"
            assert result.message == "your file does not define drgrpo_loss"


def test_wrong_signature_is_explained(graded):
    report = graded(BROKEN / "wrong_signature.py")
    assert all(c.score == 0 for c in report.checks if c.target == "drgrpo_advantages")
    loss = {c.id: c for c in report.checks}["loss_matches_reference"]
    assert loss.status == "error"
    assert "unexpected keyword argument" in loss.message
    assert "signature" in loss.message
    assert loss.counterexample["inputs"]["batch"]["explicit"] is True


def test_exception_in_the_function_gives_a_minimal_input_and_traceback(graded):
    report = graded(BROKEN / "raises_in_loss.py")
    assert statuses(report, "drgrpo_advantages") == {"passed"}
    result = {c.id: c for c in report.checks}["loss_matches_reference"]
    assert result.status == "error"
    assert "IndexError" in result.message
    assert "raises_in_loss.py" in result.traceback and "one past the last" in result.traceback
    logp = result.counterexample["inputs"]["batch"]["logp"]
    assert logp["shape"] == [1, 1]  # shrunk


def test_exits_and_prints_cannot_end_the_grade(graded):
    report = graded(BROKEN / "prints_and_exits.py")
    assert report.internal_error is None
    assert len(report.checks) == CHECK_COUNT and report.score == 0
    by_target = {c.target: c for c in report.checks}
    assert "SystemExit" in by_target["drgrpo_advantages"].message
    assert "exited with code 0" in by_target["drgrpo_loss"].message
    assert '{"score": 100' in report.submission_output
