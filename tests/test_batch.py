"""``python -m grader batch``: one report per submission, scores.csv and the summary; each result
equal to grading the file alone; a crashed or hung grading process stops nothing else."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from helpers import CHECK_COUNT, MISTAKES, ROOT, SUBMISSIONS, run, validate

from grader import batch

MIXED = {
    "alice/drgrpo.py": SUBMISSIONS / "correct" / "einsum_index_add.py",
    "bob/drgrpo.py": MISTAKES / "per_response_mean.py",
    "carol.py": MISTAKES / "std_scaling_kept.py",
    "dave.py": SUBMISSIONS / "broken" / "syntax_error.py",
    "erin.py": SUBMISSIONS / "broken" / "raises_in_loss.py",
    "frank.py": SUBMISSIONS / "hostile" / "segfault.py",
}
FAST = 10


def outcome(report: dict) -> tuple:
    return report["score"], [(c["id"], c["status"], c["score"]) for c in report["checks"]]


@pytest.mark.e2e
def test_batch_reports_each_submission_as_if_graded_alone(tmp_path, graded):
    folder = tmp_path / "submissions"
    for name, source in MIXED.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, folder / name)
    out = tmp_path / "out"
    command = ["batch", folder, "-o", out, "--jobs", 3, "--max-examples", FAST]
    done = subprocess.run(
        [sys.executable, "-m", "grader", *map(str, command)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr  # no progress bar when stderr is not a terminal

    rows = list(csv.DictReader((out / "scores.csv").open()))
    assert [row["submission"] for row in rows] == sorted(MIXED)
    for row in rows:
        report = json.loads((out / "reports" / f"{row['submission']}.json").read_text())
        validate(report)
        alone = graded(MIXED[row["submission"]], max_examples=FAST).to_dict()
        assert outcome(report) == outcome(alone), row["submission"]
        assert float(row["score"]) == report["score"] and float(row["max_score"]) == report["max_score"]
        assert {c["id"]: c["score"] for c in report["checks"]} == {
            check: float(value)
            for check, value in row.items()
            if check in {c["id"] for c in report["checks"]}
        }
    assert rows[3]["problem"].startswith("not loaded: SyntaxError")  # dave.py
    # The summary: every check's pass rate, the most failed first.
    table = done.stdout.splitlines()
    assert table[0].startswith("check") and len(table) == 1 + CHECK_COUNT + 1
    rates = [int(line.split()[2].rstrip("%")) for line in table[1:-1]]
    assert rates == sorted(rates) and rates[0] < 100


@pytest.mark.e2e
def test_one_crashed_or_hung_grading_process_stops_nothing_else(tmp_path, monkeypatch):
    for name in ("crash.py", "hang.py", "ok.py"):
        (tmp_path / name).write_text("x = 1\n")

    def grade(submission, settings, recording, link):
        if submission.name == "crash.py":
            os.kill(os.getpid(), signal.SIGKILL)
        if submission.name == "hang.py":
            time.sleep(600)
        return json.dumps({"score": 7.0, "checks": [], "internal_error": None}).encode()

    monkeypatch.setattr(batch, "_grade", grade)
    submissions = batch.find_submissions([tmp_path])
    with batch.Pool(batch.Settings(max_examples=1), jobs=3) as pool:
        pool.budget_s = 3.0
        results = pool.run(submissions)
    by_name = {r.submission.name: r.report for r in results}
    assert [r.submission.name for r in results] == ["crash.py", "hang.py", "ok.py"]
    assert by_name["ok.py"]["score"] == 7.0
    assert "ended without a report (was killed by signal SIGKILL" in by_name["crash.py"]["internal_error"]
    assert "took more than 3 s and was killed" in by_name["hang.py"]["internal_error"]
    validate(by_name["crash.py"])


def test_inputs_are_checked_before_any_grading(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.py").write_text("")
    (tmp_path / "b" / "x.py").write_text("")
    for inputs, says in (
        ([tmp_path / "a" / "x.py", tmp_path / "b" / "x.py"], "share the name 'x.py'"),
        ([tmp_path / "missing"], "no such file or directory"),
        ([tmp_path / "a" / "x.py", tmp_path / "empty"], "no such file"),
    ):
        try:
            batch.find_submissions(inputs)
        except ValueError as error:
            assert says in str(error)
        else:
            raise AssertionError(f"{inputs} was accepted")


@pytest.mark.e2e
def test_a_function_that_hung_is_a_timeout_in_later_shared_runs_of_a_batch(tmp_path):
    """The batch draws the shared runs' inputs beforehand; a check of a later shared run whose
    function already hung is a timeout of the submission, not an internal error."""
    folder = tmp_path / "submissions"
    folder.mkdir()
    shutil.copyfile(SUBMISSIONS / "hostile" / "infinite_loop.py", folder / "loop.py")
    out = tmp_path / "out"
    done = run("batch", folder, "-o", out, "--max-examples", FAST)
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "reports" / "loop.py.json").read_text())
    validate(report)
    assert report["internal_error"] is None
    loss = [c for c in report["checks"] if c["target"] == "drgrpo_loss"]
    assert loss and all(c["status"] == "timeout" and c["error_source"] == "submission" for c in loss)
    assert all(c["status"] == "passed" for c in report["checks"] if c["target"] == "drgrpo_advantages")


@pytest.mark.e2e
def test_batch_grades_with_an_instructors_properties_too(tmp_path):
    folder = tmp_path / "submissions"
    folder.mkdir()
    shutil.copyfile(MISTAKES / "strided_groups.py", folder / "strided.py")
    out = tmp_path / "out"
    properties = ROOT / "tests" / "instructor_properties"
    done = run("batch", folder, "-o", out, "--max-examples", FAST, "--properties", properties)
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "reports" / "strided.py.json").read_text())
    validate(report)
    results = {c["id"]: c for c in report["checks"]}
    assert len(results) == CHECK_COUNT + 1
    assert results["advantages_permutation_equivariant"]["status"] == "failed"
    with open(out / "scores.csv", newline="") as scores:
        assert "advantages_permutation_equivariant" in next(csv.reader(scores))
