"""Rubrics: staff's points, visibility and on/off per check, validated before any grading."""

from __future__ import annotations

import pytest
from helpers import BIASED, EXAMPLE, FAST, SOLUTION, run

from grader.api import UsageError, builtin_checks, grade, rubric_checks
from grader.declare import rubric


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[checks.no_such_check]\npoints = 1", "'no_such_check'"),
        ('[checks.stats_keys]\nvisibility = "secret"', "checks.stats_keys.visibility='secret'"),
        ("[checks.stats_keys]\npoints = -1", "checks.stats_keys.points=-1"),
        ("[checks.stats_keys]\npoints = nan", "checks.stats_keys.points=nan"),
        ('[checks.stats_keys]\npoints = "3"', "checks.stats_keys.points='3'"),
        ('[checks.stats_keys]\nenabled = "no"', "checks.stats_keys.enabled='no'"),
        ("[checks.stats_keys]\nweight = 2", "['weight']"),
        ("[grading]\nseed = 1", "['grading']"),
        ("[checks.stats_keys\npoints = 1", "not valid TOML"),
    ],
)
def test_a_bad_rubric_is_refused_naming_the_key_and_value(tmp_path, text, names):
    path = tmp_path / "rubric.toml"
    path.write_text(text)
    with pytest.raises(UsageError) as refused:
        rubric_checks(path)
    assert names in str(refused.value) and str(path) in str(refused.value)


def test_overrides_replace_points_and_visibility_and_drop_disabled_checks():
    staff = rubric.parse(
        '[checks.stats_keys]\npoints = 7.5\nvisibility = "after_published"\n'
        "[checks.loss_frozen_inputs]\nenabled = false\n",
        "staff.toml",
    )
    declared = {c.id: c for c in builtin_checks()}
    applied = {c.id: c for c in staff.apply(builtin_checks())}
    assert (applied["stats_keys"].points, applied["stats_keys"].visibility) == (7.5, "after_published")
    assert "loss_frozen_inputs" not in applied
    assert applied["loss_zero_valid_tokens"] == declared["loss_zero_valid_tokens"]
    assert len(applied) == len(declared) - 1


def test_a_rubric_sets_instructor_checks_and_may_name_built_in_checks_not_graded():
    from grader.declare.extensions import load

    (extra,) = load([EXAMPLE])
    staff = rubric.parse(
        f'[checks.stats_keys]\npoints = 1\n[checks.{extra.id}]\nvisibility = "hidden"\n', "staff.toml"
    )
    (applied,) = rubric_checks(staff, [extra]).checks
    assert applied.visibility == "hidden" and applied.id == extra.id
    typo = rubric.parse("[checks.stats_kyes]\npoints = 1\n", "typo.toml")
    with pytest.raises(UsageError, match=r"typo.toml: unknown check id.*'stats_kyes'"):
        rubric_checks(typo, [extra])


def test_the_default_rubric_hides_the_reference_comparisons_and_keeps_100_points():
    checks = rubric_checks().checks
    hidden = {c.id for c in checks if c.visibility == "hidden"}
    assert hidden == {"advantages_match_reference", "loss_matches_reference", "stats_match_reference"}
    assert sum(c.points for c in checks) == 100
    assert rubric_checks(rubric.Rubric()).checks == builtin_checks()


@pytest.mark.e2e
def test_a_grade_follows_the_rubric(tmp_path, zygote):
    path = tmp_path / "rubric.toml"
    path.write_text("[checks.loss_equal_token_weights]\npoints = 20\n[checks.stats_keys]\nenabled = false\n")
    only = ["loss_equal_token_weights", "advantages_scale_linear"]
    report = grade(BIASED, rubric=path, only=only, max_examples=10, zygote=zygote)
    scores = {c.id: (c.score, c.max_score) for c in report.checks}
    assert scores == {"advantages_scale_linear": (4.0, 4.0), "loss_equal_token_weights": (0.0, 20.0)}
    assert report.grader["rubric"] == str(path)
    with pytest.raises(UsageError, match="stats_keys"):
        grade(BIASED, rubric=path, only=["stats_keys"], zygote=zygote)


@pytest.mark.e2e
def test_solved_means_every_check_the_rubric_grades_passed(tmp_path, zygote):
    kept = ("advantages_scale_linear", "advantages_shift_invariant")
    path = tmp_path / "rubric.toml"
    dropped = [c.id for c in builtin_checks() if c.id not in kept]
    path.write_text("".join(f"[checks.{name}]\nenabled = false\n" for name in dropped))
    report = grade(SOLUTION, rubric=path, max_examples=5, zygote=zygote)
    assert [c.id for c in report.checks] == list(kept) and report.solved and report.notes
    partial = grade(SOLUTION, only=list(kept), max_examples=5, zygote=zygote)
    assert partial.score == partial.max_score and not partial.solved and partial.notes is None


@pytest.mark.e2e
def test_cli_rubric_errors_exit_2_with_the_message(tmp_path):
    path = tmp_path / "rubric.toml"
    path.write_text("[checks.stats_keys]\npoints = -2\n")
    listed = run("--list", "--rubric", path)
    assert listed.returncode == 2 and "checks.stats_keys.points=-2" in listed.stderr
    graded = run(BIASED, "--rubric", path, *FAST)
    assert graded.returncode == 2 and "checks.stats_keys.points=-2" in graded.stderr
