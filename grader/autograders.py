"""Entry points for course platforms' autograder containers: find the submission, grade it,
and always leave a valid results file, whatever happens.

    python -m grader.autograders gradescope [--rubric FILE]    # /autograder layout
    python -m grader.autograders prairielearn [--rubric FILE]  # /grade layout

Gradescope puts the student's files in ``/autograder/submission`` and reads
``/autograder/results/results.json``; PrairieLearn's external grader puts them in
``/grade/student`` and reads ``/grade/results/results.json``. The roots can be moved with
``AUTOGRADER_ROOT`` and ``GRADE_ROOT`` (the tests run both layouts in a temporary directory).

The submission is the one ``.py`` file found (at any depth); with several, the one named as
the exercise's template (``Exercise.submission_name``, ``drgrpo.py`` for Dr. GRPO). No file, or
several with none of them so named, is the student's mistake: Gradescope gets 0 points and the
reason, PrairieLearn ``gradable: false``, so that no attempt is lost. The results file is
written whole or not at all (a temporary file renamed), and a failure of the grader itself
still writes one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.exercise import load
from grader.options import EXIT_GRADER, EXIT_PASSED, add_rubric


@dataclass(frozen=True)
class Layout:
    """Where a platform puts the submission and expects the results."""

    submission_dir: Path
    results_file: Path


def gradescope_layout() -> Layout:
    root = Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    return Layout(root / "submission", root / "results" / "results.json")


def prairielearn_layout() -> Layout:
    root = Path(os.environ.get("GRADE_ROOT", "/grade"))
    return Layout(root / "student", root / "results" / "results.json")


class NoSubmission(Exception):
    """The student submitted no gradable file; the message says what to do."""


def find_submission(folder: Path, expected: str | None = None) -> Path:
    """The one Python file in ``folder`` (see the module's doc); ``expected`` is the name to
    prefer among several (default: the exercise's, ``Exercise.submission_name``)."""
    expected = expected or load().submission_name
    found = sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts) if folder.is_dir() else []
    if len(found) == 1:
        return found[0]
    named = [p for p in found if p.name == expected]
    if len(named) == 1:
        return named[0]
    if not found:
        raise NoSubmission(f"no .py file was submitted: submit your {expected}")
    names = ", ".join(p.relative_to(folder).as_posix() for p in found)
    raise NoSubmission(f"several .py files were submitted ({names}): submit only your {expected}")


def write_atomically(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n")
    os.replace(partial, path)


def gradescope_problem(message: str) -> dict[str, Any]:
    """Gradescope results for a grade that did not happen: 0 points and the reason."""
    return {
        "score": 0.0,
        "output": message,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
    }


def prairielearn_problem(message: str, *, students_fault: bool) -> dict[str, Any]:
    """PrairieLearn results for a grade that did not happen: not gradable, no attempt used."""
    reason = message if students_fault else f"not graded: {message}"
    return {"gradable": False, "format_errors": [reason], "message": reason}


LAYOUTS: dict[str, Callable[[], Layout]] = {
    "gradescope": gradescope_layout,
    "prairielearn": prairielearn_layout,
}


def problem_results(platform: str, message: str, *, students_fault: bool) -> dict[str, Any]:
    if platform == "gradescope":
        return gradescope_problem(message)
    return prairielearn_problem(message, students_fault=students_fault)


def run(platform: str, rubric: Path | None = None) -> int:
    """Grade the platform's submission into its results file; 0 unless the grader broke."""
    layout = LAYOUTS[platform]()
    try:
        # The zygote first: it imports torch on the other core while this process does.
        from grader.sandbox.zygote import Zygote

        zygote = Zygote()
        try:
            try:
                submission = find_submission(layout.submission_dir)
            except NoSubmission as missing:
                write_atomically(
                    layout.results_file, problem_results(platform, str(missing), students_fault=True)
                )
                return EXIT_PASSED
            from grader.api import grade
            from grader.report import platforms
            from grader.report.render import sandbox_warning, summary_line

            report = grade(submission, zygote=zygote, rubric=rubric)
            render = platforms.gradescope if platform == "gradescope" else platforms.prairielearn
            write_atomically(layout.results_file, render(report))
            print(summary_line(report))  # the platform's log, for staff
            if warning := sandbox_warning(report):
                print(warning, file=sys.stderr)  # the log too: staff only, never in the results
            return EXIT_GRADER if report.internal_error else EXIT_PASSED
        finally:
            zygote.close()
    except BaseException:
        print(traceback.format_exc(), file=sys.stderr)  # staff read the log; students the reason
        message = "the grader failed on this submission (this is not your fault); course staff can see why"
        write_atomically(layout.results_file, problem_results(platform, message, students_fault=False))
        return EXIT_GRADER


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader.autograders", description=__doc__.splitlines()[0])
    parser.add_argument("platform", choices=sorted(LAYOUTS))
    add_rubric(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(args.platform, args.rubric)


if __name__ == "__main__":
    sys.exit(main())
