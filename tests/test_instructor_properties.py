"""Instructors' own checks (``--properties``): loaded, validated, graded and reported like the
built-in ones, with usage errors that name the file and say what is wrong."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from helpers import CHECK_COUNT, EXAMPLE, EXAMPLE_ID, MISTAKES, ROOT, SOLUTION, TEMPLATE, run, validate

import grader.authoring
import properties.authoring as kit
from grader.api import UsageError, builtin_checks
from grader.declare.extensions import all_checks, load
from grader.report.formats import render

STRIDED = MISTAKES / "strided_groups.py"  # groups every B-th reward: shuffling inside a group shows it

HEADER = "from hypothesis import strategies as st\nfrom grader.authoring import LOSS, check\n\n"


def write(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(HEADER + body)
    return path


def declared(check_id: str, points: object = 1, **extra: str) -> str:
    arguments = "".join(f", {key}={value}" for key, value in extra.items())
    return (
        f'@check(target=LOSS, points={points}, inputs={{"x": st.integers()}}, id="{check_id}"{arguments})\n'
        "def body(student, x):\n"
        '    """A sentence for the student."""\n'
    )


def test_the_example_is_loaded_with_its_metadata():
    (found,) = load([EXAMPLE])
    assert found.id == EXAMPLE_ID
    assert (found.target, found.points, found.visibility) == ("drgrpo_advantages", 2.0, "visible")
    assert found.title == "Shuffling the responses inside a group shuffles their advantages the same way."
    assert found.source.endswith("advantages_permutation.py:16")
    checks = all_checks([EXAMPLE, EXAMPLE / "advantages_permutation.py"])  # the same file once
    assert [c.id for c in checks] == [c.id for c in builtin_checks()] + [EXAMPLE_ID]


def test_a_folder_loads_its_files_in_order_and_helpers_are_importable(tmp_path):
    (tmp_path / "_shared.py").write_text("POINTS = 3\n")
    write(tmp_path, "b_checks.py", "from _shared import POINTS\n" + declared("second_check", "POINTS"))
    write(tmp_path, "a_checks.py", declared("first_check"))
    checks = load([tmp_path])
    assert [(c.id, c.points) for c in checks] == [("first_check", 1.0), ("second_check", 3.0)]


def test_what_a_file_prints_while_it_loads_goes_to_stderr(tmp_path, capsys):
    load([write(tmp_path, "chatty.py", 'print("loading my checks")\n' + declared("chatty_check"))])
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "loading my checks\n")


@pytest.mark.parametrize(
    ("name", "body", "says"),
    [
        (
            "negative_points.py",
            declared("some_check", -1),
            r"negative_points.py: check\(\): points=-1 is invalid; expected a finite number >= 0 \(line 4\)$",
        ),
        (
            "secret_visibility.py",
            declared("some_check", 1, visibility='"secret"'),
            r"check\(\): visibility='secret' is invalid; expected one of \('visible', 'hidden', "
            r"'after_due_date', 'after_published'\) \(line 4\)$",
        ),
        (
            "wrong_target.py",
            declared("some_check").replace("target=LOSS", 'target="loss"'),
            r"check\(\): target='loss' is invalid; expected one of \('drgrpo_advantages', 'drgrpo_loss'\)",
        ),
        (
            "long_timeout.py",
            declared("some_check", 1, timeout_s="7200"),
            r"check\(\): timeout_s=7200 is invalid; expected a number of seconds in \(0, 3600\]",
        ),
        (
            "bad_id.py",
            declared("Some Check"),
            r"check\(\): id='Some Check' is invalid; expected snake_case, 3 to 64 characters",
        ),
        (
            "no_docstring.py",
            declared("some_check").replace('    """A sentence for the student."""\n', "    pass\n"),
            r"check 'some_check': the docstring \(the sentence a student reads\) is missing \(line 4\)$",
        ),
        (
            "undrawn_value.py",
            declared("some_check").replace("(student, x)", "(student, y)"),
            r"check 'some_check': \['y'\] are not among the inputs",
        ),
        (
            "name_error.py",
            "\nundefined_name + 1\n",
            r"name_error.py: importing it raised NameError: name 'undefined_name' is not defined \(line 5\)$",
        ),
        ("syntax_error.py", "def broken(:\n", r"importing it raised SyntaxError: .* \(line 4\)$"),
        ("no_check.py", "X = 1\n", r"no_check.py: defines no check \(declare one with @check\(...\)\)$"),
    ],
)
def test_a_broken_file_is_a_usage_error_that_says_what_and_where(tmp_path, name, body, says):
    path = write(tmp_path, name, body)
    with pytest.raises(UsageError, match=says) as raised:
        all_checks([path])
    assert str(raised.value).startswith(f"--properties {path}: ")


def test_an_id_taken_by_a_builtin_check_names_both_places(tmp_path):
    path = write(tmp_path, "clash.py", declared("loss_matches_reference"))
    with pytest.raises(UsageError, match="duplicate check id 'loss_matches_reference'") as raised:
        all_checks([path])
    assert raised.match(r"defined at properties/loss.py:\d+ and at .*clash.py:4$")


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda tmp: tmp / "missing.py", "no such file or folder"),
        (lambda tmp: tmp, "the folder holds no .py file"),
        (lambda tmp: (tmp / "notes.txt", (tmp / "notes.txt").write_text("x"))[0], "not a Python file"),
    ],
)
def test_a_path_that_holds_no_properties_is_a_usage_error(tmp_path, make, says):
    with pytest.raises(UsageError, match=says):
        load([make(tmp_path)])


def test_the_builtin_checks_are_written_with_the_public_api():
    """The built-in checks import what they use from the exercise's authoring kit, as an
    instructor does; ``grader.authoring`` gives the same names."""
    for name in ("advantages", "loss", "stats"):
        tree = ast.parse((ROOT / "properties" / f"{name}.py").read_text())
        sources = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert "properties.authoring" in sources, name
        assert not sources & {
            "grader.declare.checks",
            "grader.compare.expect",
            "properties.common",
            "properties.strategies",
        }
    assert all(hasattr(grader.authoring, name) for name in grader.authoring.__all__)
    assert all(getattr(grader.authoring, name) is getattr(kit, name) for name in kit.__all__)


@pytest.mark.e2e
def test_the_example_is_graded_like_a_builtin_check_in_every_format(graded):
    checks = all_checks([EXAMPLE])
    only = (EXAMPLE_ID,)
    right = graded(SOLUTION, checks=checks, only=only)
    wrong = graded(STRIDED, checks=checks, only=only)
    template = graded(TEMPLATE, checks=checks, only=only)
    assert [(c.id, c.status, c.score) for c in right.checks] == [(EXAMPLE_ID, "passed", 2.0)]
    assert right.checks[0].examples >= 100
    (failed,) = wrong.checks
    assert (failed.status, failed.score, failed.max_score) == ("failed", 0.0, 2.0)
    assert "shuffled within each group" in failed.message
    inputs = failed.counterexample["inputs"]
    assert inputs["batch"]["group_size"] >= 2 and set(inputs) == {"batch", "seed"}
    assert template.checks[0].status == "error"

    report = json.loads(render("json", wrong))
    validate(report)
    assert report["checks"][0]["id"] == EXAMPLE_ID and report["max_score"] == 2
    assert "FAIL    advantages_permutation_equivariant (0/2)" in render("text", wrong)
    assert "advantages_permutation_equivariant" in render("text", right)


@pytest.mark.e2e
def test_cli_grades_with_the_properties_and_lists_them():
    done = run(STRIDED, "--properties", EXAMPLE, "--max-examples", 20)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    validate(report)
    results = {c["id"]: c for c in report["checks"]}
    assert len(results) == CHECK_COUNT + 1 and report["max_score"] == 102
    assert results[EXAMPLE_ID]["status"] == "failed"
    assert results["advantages_match_reference"]["status"] == "failed"
    assert results["loss_matches_reference"]["status"] == "passed"

    listed = run("--list", "--properties", EXAMPLE)
    assert listed.returncode == 0
    assert EXAMPLE_ID in listed.stdout and f"{CHECK_COUNT + 1} checks, 102 points" in listed.stdout


@pytest.mark.e2e
def test_cli_broken_properties_exit_2_with_a_valid_report(tmp_path):
    path = write(tmp_path, "negative_points.py", declared("some_check", -1))
    done = run(SOLUTION, "--properties", path)
    assert done.returncode == 2
    says = "check(): points=-1 is invalid; expected a finite number >= 0 (line 4)"
    assert says in done.stderr
    report = json.loads(done.stdout)
    validate(report)
    assert says in report["internal_error"] and report["checks"] == []
    listed = run("--list", "--properties", path)
    assert listed.returncode == 2 and says in listed.stderr
