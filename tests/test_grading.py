"""End to end over fixture submissions: the grade of each, asserted on its report."""

from __future__ import annotations

import json

import pytest
from helpers import BIASED, CORRECT_EXAMPLE, SOLUTION, TEMPLATE, fixtures

from grader.api import builtin_checks
from reference.mistakes import Mistake, catalogue

CHECKS = {c.id: c for c in builtin_checks()}
CORRECT = fixtures("correct")
MISTAKES = catalogue()


def by_id(report):
    return {c.id: c for c in report.checks}


@pytest.mark.e2e
def test_reference_gets_full_marks(graded):
    report = graded(SOLUTION)
    assert report.internal_error is None
    assert [c.id for c in report.checks if c.status != "passed"] == []
    assert report.score == report.max_score == 100
    assert all(c.examples >= 100 for c in report.checks)


@pytest.mark.e2e
def test_untouched_template_gets_zero_saying_not_implemented(graded):
    report = graded(TEMPLATE)
    assert report.score == 0
    for result in report.checks:
        assert result.status == "error", result.id
        assert result.error_source == "submission"
        assert "not implemented yet" in result.message


@pytest.mark.e2e
@pytest.mark.parametrize("path", CORRECT, ids=[p.stem for p in CORRECT])
def test_correct_variants_get_full_marks(graded, path):
    report = graded(path)
    failing = {c.id: c.message for c in report.checks if c.status != "passed"}
    assert failing == {}
    assert report.score == report.max_score


def test_there_are_enough_fixtures():
    assert len(CORRECT) >= 4
    assert len(MISTAKES) >= 20


@pytest.mark.e2e
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_each_mistake_loses_points_where_it_should(graded, mistake: Mistake):
    assert mistake.caught_by, "the mistake must name the checks that catch it"
    assert mistake.target in ("drgrpo_advantages", "drgrpo_loss")
    assert mistake.name and mistake.explanation
    report = graded(mistake.path)
    results = by_id(report)
    assert report.internal_error is None
    assert not [c.id for c in report.checks if c.error_source == "grader"]
    for check_id in mistake.caught_by:
        assert check_id in CHECKS, f"unknown check id {check_id}"
        result = results[check_id]
        assert result.score < result.max_score, f"{check_id} did not catch it"
        assert result.status in ("failed", "error")
        assert result.message
    for result in report.checks:
        if result.target != mistake.target:
            assert result.status == "passed", f"{result.id}: {result.message}"
    assert report.score < report.max_score


@pytest.mark.e2e
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_failures_carry_a_readable_counterexample(graded, mistake: Mistake):
    for result in graded(mistake.path).checks:
        if result.status != "failed":
            continue
        assert result.counterexample is not None, result.id
        assert result.counterexample["inputs"], result.id
        # Shrunk: small enough to read.
        assert len(json.dumps(result.counterexample)) < 6000, result.id


@pytest.mark.e2e
def test_bundled_examples(graded):
    correct = graded(CORRECT_EXAMPLE)
    assert correct.score == correct.max_score
    biased = by_id(graded(BIASED))
    assert biased["loss_equal_token_weights"].status == "failed"
    assert biased["advantages_match_reference"].status == "passed"


# Mistakes that only inputs in the corners show (very unlikely tokens, reference scores several
# nats away, ratios between clip_eps and the default 0.2): caught whatever the seed.
CORNERS = ("ratio_of_exponentials", "k3_clamped", "clipfrac_fixed_range")
CORNER_MISTAKES = [m for m in MISTAKES if m.id in CORNERS]


@pytest.mark.e2e
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("mistake", CORNER_MISTAKES, ids=[m.id for m in CORNER_MISTAKES])
def test_corner_mistakes_lose_points_under_every_seed(graded, mistake: Mistake, seed: int):
    results = by_id(graded(mistake.path, seed=seed, only=mistake.caught_by))
    assert all(results[check_id].score < results[check_id].max_score for check_id in mistake.caught_by)


LOSS_MISTAKES = [m for m in MISTAKES if m.target == "drgrpo_loss"]


@pytest.mark.e2e
@pytest.mark.parametrize("mistake", LOSS_MISTAKES, ids=[m.id for m in LOSS_MISTAKES])
def test_every_loss_mistake_fails_a_check_the_student_sees_in_full(graded, mistake: Mistake):
    failed = [c for c in graded(mistake.path).checks if c.status != "passed"]
    assert [c.id for c in failed if c.visibility == "visible"], [c.id for c in failed]


@pytest.mark.e2e
def test_no_failure_reads_expected_nan_got_nan(graded):
    for mistake in MISTAKES:
        for result in graded(mistake.path).checks:
            assert "expected nan, got nan" not in result.message, (mistake.id, result.id)


# A wrong value in the advantages is the value checks' business, not the structure check's.
VALUE_ONLY = (
    "batch_mean",
    "constant_baseline",
    "std_scaling_kept",
    "leave_one_out_baseline",
    "group_std_eps",
)


@pytest.mark.e2e
@pytest.mark.parametrize("mistake_id", VALUE_ONLY)
def test_the_structure_check_does_not_judge_values(graded, mistake_id: str):
    mistake = next(m for m in MISTAKES if m.id == mistake_id)
    results = by_id(graded(mistake.path))
    assert results["advantages_shape_dtype_device"].status == "passed"
    assert results["advantages_match_reference"].status == "failed"


# The hint a failing input supports, not one fixed per check.
HINTS = [
    ("sign_error", "loss_equal_token_weights", "the loss is minus the objective"),
    ("per_response_mean", "loss_equal_token_weights", "every valid token has the same weight"),
    ("clipped_branch_detached", "loss_equal_token_weights", "the loss's value is right but its gradient"),
    ("k3_logp_detached", "loss_kl_term", "the loss's value is right but its gradient"),
    ("kl_sign_flipped", "loss_kl_term", "each valid token adds beta * k3"),
    ("min_of_ratios", "loss_clipped_surrogate", "take min(ratio * A, clamp"),
    ("multiply_by_mask", "loss_padding_isolated", "inf * 0 is nan"),
    ("clipfrac_one_side", "stats_token_averages", "whatever the advantage's sign"),
    ("stats_row_mean", "stats_token_averages", "not response by response"),
]


@pytest.mark.e2e
@pytest.mark.parametrize(("mistake_id", "check_id", "hint"), HINTS, ids=[f"{m}-{c}" for m, c, _ in HINTS])
def test_the_hint_fits_the_failure(graded, mistake_id: str, check_id: str, hint: str):
    mistake = next(m for m in MISTAKES if m.id == mistake_id)
    result = by_id(graded(mistake.path))[check_id]
    assert result.status == "failed"
    assert hint in (result.hint or ""), result.hint
