"""``python -m grader`` as staff and students run it: stdout, stderr, files and exit codes."""

from __future__ import annotations

import json

import pytest
from helpers import CHECK_COUNT, FAST, MISTAKES, SOLUTION, SUBMISSIONS, run, validate

pytestmark = pytest.mark.e2e

WRONG = MISTAKES / "per_response_mean.py"


def without_timings(report: dict) -> dict:
    report = json.loads(json.dumps(report))
    report["grader"].pop("total_time_s")
    for check in report["checks"]:
        check.pop("duration_s")
    return report


def test_list_shows_every_check():
    done = run("--list")
    assert done.returncode == 0
    assert "loss_fixed_denominator" in done.stdout and f"{CHECK_COUNT} checks, 100 points" in done.stdout


def test_correct_submission_exits_0_with_one_json_report():
    done = run(SOLUTION, *FAST)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    validate(report)
    assert report["score"] == report["max_score"] == 100
    assert "100/100 points" in done.stderr.strip().splitlines()[-1]


def test_wrong_submission_exits_1_and_the_same_seed_gives_the_same_report(tmp_path):
    only = "--only", "loss_matches_reference,loss_equal_token_weights,advantages_match_reference"
    first = run(WRONG, *only, "--seed", 3, ci=False)
    # Neither the directory nor CI variables (Hypothesis has a profile for CI) matter.
    second = run(WRONG, *only, "--seed", 3, cwd=tmp_path, ci=True)
    assert first.returncode == second.returncode == 1
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert sorted(c["id"] for c in a["checks"]) == sorted(only[1].split(","))
    assert without_timings(a) == without_timings(b)
    assert a["grader"]["seed"] == 3


def test_output_file_and_text_format(tmp_path):
    target = tmp_path / "report.txt"
    done = run(WRONG, "--format", "text", "-o", target, "--only", "loss_equal_token_weights")
    assert done.returncode == 1
    assert done.stdout == ""
    text = target.read_text()
    assert "FAIL    loss_equal_token_weights (0/7)" in text
    assert "smallest input that shows it:" in text


def test_forged_output_never_reaches_stdout():
    done = run(SUBMISSIONS / "broken" / "prints_and_exits.py", *FAST)
    assert done.returncode == 1
    report = json.loads(done.stdout)  # exactly one JSON document, the grader's
    assert report["score"] == 0
    assert '{"score": 100' in report["submission_output"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["no/such/file.py"], "no such submission file"),
        ([SOLUTION, "--only", "no_such_check"], "unknown check id"),
        ([SOLUTION, "--exercise", "no_such_module:EXERCISE"], "no_such_module:EXERCISE: cannot import"),
        ([SOLUTION, "--exercise", "grader.exercise:DEFAULT"], "is a str, not an Exercise"),
    ],
)
def test_usage_errors_exit_2_with_a_valid_report(args, says):
    done = run(*args)
    assert done.returncode == 2
    assert says in done.stderr and "internal error" not in done.stderr
    report = json.loads(done.stdout)
    validate(report)
    assert says in report["internal_error"]


def test_argument_errors_exit_2():
    assert run().returncode == 2
    assert run(SOLUTION, "--max-examples", "0").returncode == 2
    assert run(SOLUTION, "--format", "yaml").returncode == 2


def test_a_weaker_sandbox_is_one_warning_line_on_stderr(tmp_path):
    done = run(WRONG, *FAST, "-o", tmp_path / "report.json")
    missing = json.loads((tmp_path / "report.json").read_text())["grader"]["sandbox"]["not_available"]
    warnings = [line for line in done.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == (1 if missing else 0), done.stderr
    assert all(missing[0] in line for line in warnings)
