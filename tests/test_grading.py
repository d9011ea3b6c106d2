"""End to end over fixture submissions: the grade of each, asserted on its report."""

from __future__ import annotations

import json

import pytest
from conftest import SOLUTION, TEMPLATE, Fixture, fixtures

from grader.api import builtin_checks

CHECKS = {c.id: c for c in builtin_checks()}
CORRECT = fixtures("correct")
WRONG = fixtures("wrong")


def by_id(report):
    return {c.id: c for c in report.checks}


def test_reference_gets_full_marks(graded):
    report = graded(SOLUTION)
    assert report.internal_error is None
    assert [c.id for c in report.checks if c.status != "passed"] == []
    assert report.score == report.max_score == 100
    assert all(c.examples >= 100 for c in report.checks)


def test_untouched_template_gets_zero_saying_not_implemented(graded):
    report = graded(TEMPLATE)
    assert report.score == 0
    for result in report.checks:
        assert result.status == "error", result.id
        assert result.error_source == "submission"
        assert "not implemented yet" in result.message


@pytest.mark.parametrize("fixture", CORRECT, ids=[f.path.stem for f in CORRECT])
def test_correct_variants_get_full_marks(graded, fixture: Fixture):
    report = graded(fixture.path)
    failing = {c.id: c.message for c in report.checks if c.status != "passed"}
    assert failing == {}
    assert report.score == report.max_score


def test_there_are_enough_fixtures():
    assert len(CORRECT) >= 4
    assert len(WRONG) >= 20


@pytest.mark.parametrize("fixture", WRONG, ids=[f.path.stem for f in WRONG])
def test_each_mistake_loses_points_where_it_should(graded, fixture: Fixture):
    assert fixture.expect_fail, "the fixture must name the checks that catch it"
    assert fixture.mistake_in in ("drgrpo_advantages", "drgrpo_loss")
    report = graded(fixture.path)
    results = by_id(report)
    assert report.internal_error is None
    assert not [c.id for c in report.checks if c.error_source == "grader"]
    for check_id in fixture.expect_fail:
        assert check_id in CHECKS, f"unknown check id {check_id}"
        result = results[check_id]
        assert result.score < result.max_score, f"{check_id} did not catch it"
        assert result.status in ("failed", "error")
        assert result.message
    for result in report.checks:
        if result.target != fixture.mistake_in:
            assert result.status == "passed", f"{result.id}: {result.message}"
    assert report.score < report.max_score


@pytest.mark.parametrize("fixture", WRONG, ids=[f.path.stem for f in WRONG])
def test_failures_carry_a_readable_counterexample(graded, fixture: Fixture):
    for result in graded(fixture.path).checks:
        if result.status != "failed":
            continue
        assert result.counterexample is not None, result.id
        assert result.counterexample["inputs"], result.id
        # Shrunk: small enough to read.
        assert len(json.dumps(result.counterexample)) < 6000, result.id


def test_bundled_examples(graded):
    from conftest import ROOT

    correct = graded(ROOT / "examples" / "drgrpo_correct.py")
    assert correct.score == correct.max_score
    biased = by_id(graded(ROOT / "examples" / "drgrpo_length_biased.py"))
    assert biased["loss_equal_token_weights"].status == "failed"
    assert biased["advantages_match_reference"].status == "passed"
